"""Lattice size limits and cancellation: a lattice over --max-nodes nodes (default 200,000) or
estimated over --max-memory is refused with one clear error before any heavy work (API, CLI,
Dask, web); a build stops between nodes when cancelled, from the web too, and when the web
client goes away."""

from __future__ import annotations

import shutil
import socket
import threading
import time

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from loopback import serving, wait_until
from typer.testing import CliRunner

import incrowd.generalization._lattice as lattice_module
from incrowd.cli import app
from incrowd.exceptions import BuildCancelled, ParameterError
from incrowd.generalization import (
    DEFAULT_MAX_MEMORY,
    DEFAULT_MAX_NODES,
    Hierarchy,
    Lattice,
    estimate_bytes,
    node_count,
    parse_size,
)
from incrowd.generalization._hierarchy import hierarchy_from_rows

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ADULT14 = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
           "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country"]


def binary(n_attributes: int, n_rows: int = 64, seed: int = 0):
    """Data with ``n_attributes`` two-valued columns and their one-level hierarchies: a lattice
    of 2 ** n_attributes nodes."""
    rng = np.random.default_rng(seed)
    names = [f"b{i}" for i in range(n_attributes)]
    frame = pd.DataFrame({n: rng.choice(["x", "y"], n_rows) for n in names})
    hier = {n: hierarchy_from_rows(n, [["x", "*"], ["y", "*"]], f"hierarchy {n}") for n in names}
    return frame, names, hier


def forbid_work(monkeypatch):
    """Any encoding, grouping or node computation fails the test: a refusal must come first."""
    def work(*_args, **_kwargs):
        raise AssertionError("heavy work started before the size check")

    monkeypatch.setattr(Hierarchy, "encode", work)
    monkeypatch.setattr(lattice_module, "_group_bottom", work)
    monkeypatch.setattr(lattice_module, "_compute_nodes", work)
    monkeypatch.setattr(lattice_module, "_level_scores", work)


def adult14_folder(tmp_path):
    root = data_dir() / "adult_arx"
    if not (root / "full").is_dir() or not (data_dir() / "adult.csv.gz").is_file():
        pytest.skip("benchmark data not present")
    folder = tmp_path / "hier14"
    folder.mkdir()
    for a in ADULT14:
        source = root / "adult_hierarchy_age.csv" if a == "age" else root / "full" / f"adult_full_hierarchy_{a}.csv"
        shutil.copy(source, folder / f"{a}.csv")
    return folder


def test_node_limit_refuses_before_any_work(monkeypatch):
    frame, names, hier = binary(10)
    forbid_work(monkeypatch)
    monkeypatch.setattr(lattice_module, "count_bottom_classes", lambda *a: pytest.fail("counted classes"))
    with pytest.raises(ParameterError) as info:
        Lattice.build(frame, names, hierarchies=hier, max_nodes=1000)
    message = str(info.value)
    assert "1,024 nodes (limit 1,000)" in message and "--partial" in message and "--max-nodes" in message


def test_default_limit_refuses_a_lattice_over_200000_nodes(monkeypatch):
    assert DEFAULT_MAX_NODES == 200_000 and DEFAULT_MAX_MEMORY == 8 * 1024**3
    frame, names, hier = binary(18)
    assert node_count([hier[n].depth for n in names]) == 262_144
    forbid_work(monkeypatch)
    with pytest.raises(ParameterError, match=r"262,144 nodes \(limit 200,000\)"):
        Lattice.build(frame, names, hierarchies=hier)


def test_fourteen_adult_attributes_refused_without_building(monkeypatch, tmp_path):
    folder = adult14_folder(tmp_path)
    data = pd.read_csv(data_dir() / "adult.csv.gz", nrows=200)
    forbid_work(monkeypatch)
    with pytest.raises(ParameterError, match=r"17,496,000 nodes \(limit 200,000\)"):
        Lattice.build(data, ADULT14, hierarchies=str(folder))


def test_fourteen_adult_attributes_refused_by_cli_in_one_line_before_reading(monkeypatch, tmp_path):
    folder = adult14_folder(tmp_path)
    import incrowd.cli._generalization as cli_module

    monkeypatch.setattr(cli_module, "read_table", lambda *a, **k: pytest.fail("the data were read"))
    out_file = tmp_path / "adult.lattice"
    out = CliRunner().invoke(app, ["lattice", "build", str(data_dir() / "adult.csv.gz"), "--hierarchies",
                                   str(folder), "--qi", ",".join(ADULT14), "-o", str(out_file)])
    assert out.exit_code == 2, out.output
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: the lattice has 17,496,000 nodes (limit 200,000)")
    assert "--partial" in lines[0]
    assert not out_file.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["hier14"]


def test_partial_build_checks_its_own_share(monkeypatch):
    frame, names, hier = binary(10)
    lattice = Lattice.build(frame, names, hierarchies=hier, fraction=0.05, max_nodes=100)
    assert lattice.n_nodes == 1024 and 52 <= int(lattice.materialized.sum()) <= 53  # ceil(51.2), maybe + the top
    forbid_work(monkeypatch)
    with pytest.raises(ParameterError, match=r"compute 513 of 1,024 nodes \(limit 100\)"):
        Lattice.build(frame, names, hierarchies=hier, fraction=0.5, max_nodes=100)


def test_memory_estimate_refuses_before_nodes_are_computed(monkeypatch):
    frame, names, hier = binary(6, n_rows=400)
    depths = [2] * 6
    classes = int(frame.drop_duplicates().shape[0])
    need = estimate_bytes(depths, 1.0, classes, n_rows=400)
    # the estimate grows with the bottom classes, not only with the nodes
    assert estimate_bytes(depths, 1.0, 10 * classes, n_rows=400) > need > estimate_bytes(depths, 1.0, 1, n_rows=400)
    forbid_work(monkeypatch)
    with pytest.raises(ParameterError) as info:
        Lattice.build(frame, names, hierarchies=hier, max_memory=need - 1)
    assert "needs about" in str(info.value) and f"{classes:,} bottom classes" in str(info.value)
    assert "--max-memory" in str(info.value)
    with pytest.raises(ParameterError, match="needs about"):  # the partitioned path joins here
        Lattice.from_bottom(names, hier, np.zeros((classes, 6), np.int32), np.ones(classes, np.int64),
                            n_rows=400, max_memory="1K")


def test_sizes_parse():
    assert parse_size("8G") == 8 * 1024**3 and parse_size("512M") == 512 * 1024**2
    assert parse_size("1.5GiB") == 3 * 1024**3 // 2 and parse_size(4096) == 4096 and parse_size(None) is None
    for bad in ("8X", "-1G", "", "0", "G"):
        with pytest.raises(ParameterError, match="size such as 8G"):
            parse_size(bad)


def test_cli_refuses_in_one_line_and_writes_nothing(tmp_path):
    frame, names, _ = binary(10)
    frame.to_csv(tmp_path / "data.csv", index=False)
    hier = tmp_path / "hier"
    hier.mkdir()
    for n in names:
        (hier / f"{n}.csv").write_text("x;*\ny;*\n")
    base = ["lattice", "build", str(tmp_path / "data.csv"), "--hierarchies", str(hier), "--qi", ",".join(names),
            "-o", str(tmp_path / "L.duckdb")]
    for extra, expected in ((["--max-nodes", "1000"], "1,024 nodes (limit 1,000)"),
                            (["--max-memory", "64K"], "needs about"),
                            (["--max-memory", "lots"], "--max-memory must be a size such as 8G"),
                            (["--max-nodes", "2.5"], "--max-nodes must be a positive integer")):
        out = CliRunner().invoke(app, base + extra)
        assert out.exit_code == 2, out.output
        lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], out.stderr
        assert not (tmp_path / "L.duckdb").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "hier"]
    out = CliRunner().invoke(app, base + ["--max-nodes", "1024", "--max-memory", "1G", "--json"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "L.duckdb").is_file()


def test_dask_build_has_the_same_limits(monkeypatch):
    pytest.importorskip("distributed")
    from incrowd.generalization import build_lattice

    frame, names, hier = binary(10, n_rows=300)

    class NoClient:  # any use of the cluster would be work done before the check
        def __getattr__(self, name):
            raise AssertionError(f"the cluster was used ({name}) before the size check")

    with pytest.raises(ParameterError, match=r"1,024 nodes \(limit 1,000\)"):
        build_lattice([frame], names, client=NoClient(), hierarchies=hier, max_nodes=1000)
    with pytest.raises(ParameterError, match=r"262,144 nodes \(limit 200,000\)"):
        wide, wide_names, wide_hier = binary(18)
        build_lattice([wide], wide_names, client=NoClient(), hierarchies=wide_hier)

    from distributed import Client

    with Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        monkeypatch.setattr(lattice_module, "_compute_nodes", lambda *a, **k: pytest.fail("nodes computed"))
        with pytest.raises(ParameterError, match="needs about"):
            build_lattice([frame.iloc[:150], frame.iloc[150:]], names, client=client, hierarchies=hier,
                          max_memory="64K")


def test_cancelled_build_stops_between_nodes(monkeypatch):
    frame, names, hier = binary(8)
    computed = []
    original = lattice_module._histogram_parts

    def counting(*args):
        computed.append(1)
        return original(*args)

    monkeypatch.setattr(lattice_module, "_histogram_parts", counting)
    with pytest.raises(BuildCancelled):
        Lattice.build(frame, names, hierarchies=hier, cancel=lambda: len(computed) >= 5)
    assert len(computed) == 5  # the sixth node was never started
    computed.clear()
    stop = threading.Event()
    stop.set()
    with pytest.raises(BuildCancelled):
        Lattice.build(frame, names, hierarchies=hier, cancel=stop)
    assert computed == []
    lattice = Lattice.build(frame, names, hierarchies=hier, cancel=threading.Event())
    assert int(lattice.materialized.sum()) == 256 and len(computed) == 256


# -- the web build, on a real server on loopback ----------------------------------------------

CENSUS_QIS = ["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX"]
WIDTHS = [1000, 2000, 4000, 8000]  # 6 levels each: 1,296 nodes


@pytest.fixture
def server(monkeypatch):
    """The app on 127.0.0.1 (uvicorn in a thread) with a node computation slowed to 20 ms, so a
    build is long enough to be cancelled; yields (base URL, app, computed-node counter)."""
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    from incrowd.web import create_app

    computed = []
    original = lattice_module._histogram_parts

    def slow(*args):
        computed.append(1)
        time.sleep(0.02)
        return original(*args)

    monkeypatch.setattr(lattice_module, "_histogram_parts", slow)
    application = create_app(max_upload_mb=1)
    with serving(application) as base:
        yield base, application, computed


def _session(base):
    import httpx

    client = httpx.Client(base_url=base, timeout=30)
    dataset = client.post("/api/datasets/sample/census").json()["dataset"]
    request = {"dataset": dataset, "quasi_identifiers": CENSUS_QIS, "intervals": {q: WIDTHS for q in CENSUS_QIS}}
    return client, request


def _builds_running(application) -> int:
    store = application.state.sessions
    with store._lock:
        return sum(len(s.builds) for s in store._sessions.values())


def test_web_build_has_the_server_limit():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    application = create_app(max_upload_mb=1, max_nodes=1000)
    try:
        client = TestClient(application)
        dataset = client.post("/api/datasets/sample/census").json()["dataset"]
        got = client.post("/api/lattice/build", json={"dataset": dataset, "quasi_identifiers": CENSUS_QIS,
                                                      "intervals": {q: WIDTHS for q in CENSUS_QIS}})
        assert got.status_code == 400 and "1,296 nodes (limit 1,000)" in got.json()["error"], got.text
        small = client.post("/api/lattice/build", json={"dataset": dataset, "quasi_identifiers": CENSUS_QIS[:2],
                                                        "intervals": {q: WIDTHS for q in CENSUS_QIS[:2]}})
        assert small.status_code == 200 and small.json()["nodes"] == 36, small.text
    finally:
        application.state.sessions.close()


def test_web_build_can_be_cancelled(server):
    base, application, computed = server
    client, request = _session(base)
    answer = {}
    worker = threading.Thread(target=lambda: answer.update(r=client.post("/api/lattice/build", json=request)))
    worker.start()
    assert wait_until(lambda: len(computed) > 3)
    cancelled = client.post("/api/lattice/cancel")
    assert cancelled.json() == {"cancelled": 1}
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert answer["r"].status_code == 409 and "cancelled" in answer["r"].json()["error"]
    assert _builds_running(application) == 0 and len(computed) < 1296
    assert client.post("/api/lattice/cancel").json() == {"cancelled": 0}


def test_web_build_stops_when_the_client_goes_away(server):
    import json

    base, application, computed = server
    client, request = _session(base)
    body = json.dumps(request).encode()
    port = int(base.rsplit(":", 1)[1])
    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    conn.sendall(b"POST /api/lattice/build HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 + f"Cookie: {cookie}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    assert wait_until(lambda: len(computed) > 3)
    conn.close()
    assert wait_until(lambda: _builds_running(application) == 0)
    stopped_at = len(computed)
    time.sleep(0.3)
    assert len(computed) == stopped_at < 1296


def test_serve_checks_its_limits_in_one_line():
    pytest.importorskip("uvicorn")
    for args, expected in ((["--max-memory", "lots"], "--max-memory must be a size such as 8G"),
                           (["--max-nodes", "0"], "--max-nodes must be a positive integer")):
        out = CliRunner().invoke(app, ["serve", *args])
        assert out.exit_code == 2, out.output
        lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:") and expected in lines[0], out.stderr
