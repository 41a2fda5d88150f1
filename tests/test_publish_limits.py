"""Limits of ``publish``: the lattice of the generalize-then-microaggregate strategy is held to
the lattice build's --max-nodes / --max-memory (CLI, Python, web), refused in one line before
any node is evaluated (the node count before the data are read); and a release that would
suppress every row is never the answer."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import incrowd
import incrowd.cli._publish_file as cli_publish
from incrowd.cli import app
from incrowd.exceptions import ParameterError
from incrowd.generalization import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES
from incrowd.publishing import _gtm

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ADULT14 = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
           "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country"]
WIDTHS = [2**j for j in range(1, 21)]  # 20 nested interval widths: 22 levels per column


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _forbid_nodes(monkeypatch):
    """Evaluating any node fails the test: a refusal must come first."""
    def evaluate(*_args, **_kwargs):
        raise AssertionError("a lattice node was evaluated before the size check")

    monkeypatch.setattr(_gtm, "_classes", evaluate)


# --- item: a node that suppresses every row is never the answer -----------------------------

def _two_classes(tmp_path):
    """20 rows, two values of 'sex' (10 each): with k = 11 the bottom node suppresses every
    row, which a limit of 100 % allows."""
    frame = pd.DataFrame({"sex": ["m", "f"] * 10, "age": np.arange(20.0)})
    data = tmp_path / "two.csv"
    frame.to_csv(data, index=False)
    return frame, data


def test_full_suppression_allowed_still_publishes_rows(tmp_path):
    frame, data = _two_classes(tmp_path)
    spec = tmp_path / "spec.toml"
    spec.write_text('[privacy]\nallow_full_suppression = true\nk = 11\nmax_suppression = "100%"\n[columns]\n'
                    'age = "numeric"\nsex = "categorical"\n')
    out = tmp_path / "release.csv"
    got = CliRunner().invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out), "--json"])
    assert got.exit_code == 0, got.output
    release = pd.read_csv(out)
    assert release.shape[0] == 20 and set(release["sex"]) == {"*"}
    result = incrowd.publish(frame, {"privacy": {"k": 11, "max_suppression": 1.0, "allow_full_suppression": True},
                                     "columns": {"age": "numeric", "sex": "categorical"}})
    assert result.suppressed == 0 and result.summary()["levels"] == {"sex": 1}


def test_a_release_with_no_row_left_is_refused_in_one_line(tmp_path):
    frame, data = _two_classes(tmp_path)
    spec = tmp_path / "spec.toml"
    spec.write_text('[privacy]\nallow_full_suppression = true\nk = 11\nmax_suppression = "100%"\n[columns]\nage = "numeric"\n'
                    'sex = "categorical"\n[levels]\nsex = 0\n')
    out = tmp_path / "release.csv"
    got = CliRunner().invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out)])
    assert got.exit_code == 2, got.output
    lines = _lines(got.stderr)
    assert len(lines) == 1 and "suppresses all 20 rows" in lines[0] and "nothing would be published" in lines[0]
    assert not out.exists()
    # the joint strategy: every missing pattern has fewer than k rows, so every row would go
    gaps = pd.DataFrame({"a": [1.0, 2.0, np.nan, np.nan, 5.0, 6.0], "b": [1.0, 2.0, 3.0, 4.0, np.nan, np.nan],
                         "s": list("xyxyxy")})
    with pytest.raises(ParameterError, match="suppress all 6 rows"):
        incrowd.publish(gaps, {"privacy": {"k": 3, "max_suppression": "100%", "strategy": "joint"},
                               "columns": {"a": "numeric", "b": "numeric", "s": "categorical"},
                               "missing": {"numeric": "separate"}})


def test_the_negotiation_never_answers_a_node_that_suppresses_every_row(tmp_path):
    from incrowd.generalization import Lattice, negotiate
    from incrowd.generalization._hierarchy import hierarchy_from_rows

    frame, _ = _two_classes(tmp_path)
    hierarchy = hierarchy_from_rows("sex", [["m", "*"], ["f", "*"]], "hierarchy sex")
    lattice = Lattice.build(frame, ["sex"], hierarchies={"sex": hierarchy})
    answer = negotiate(lattice, k=11, max_suppression="100%", metric="height")
    assert answer.exact is not None and answer.exact.levels == {"sex": 1} and answer.exact.suppressed == 0
    answer = negotiate(lattice, k=11, max_levels={"sex": 0}, max_suppression="100%", metric="height")
    assert answer.exact is None


# --- item: the lattice limits apply to publish ----------------------------------------------

def _intervals_case(tmp_path, n_columns=6):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"c{i}": rng.integers(0, 1000, 100) for i in range(n_columns)})
    frame["x"] = rng.normal(size=100)
    data = tmp_path / "wide.csv"
    frame.to_csv(data, index=False)
    lines = ["[privacy]", "k = 3", 'max_suppression = "5%"', "allow_full_suppression = true", "[columns]", 'x = "numeric"']
    lines += [f'c{i} = {{ role = "categorical", intervals = {WIDTHS} }}' for i in range(n_columns)]
    spec = tmp_path / "wide.toml"
    spec.write_text("\n".join(lines) + "\n")
    return frame, data, spec


def test_interval_lattice_is_refused_by_the_cli_before_reading(monkeypatch, tmp_path):
    _, data, spec = _intervals_case(tmp_path)
    monkeypatch.setattr(cli_publish, "read_table", lambda *a, **k: pytest.fail("the data were read"))
    out = tmp_path / "release.csv"
    got = CliRunner().invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out)])
    assert got.exit_code == 2, got.output
    lines = _lines(got.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: the lattice has 113,379,904 nodes (limit 200,000)")
    assert "--max-nodes" in lines[0] and "[levels]" in lines[0] and "--partial" not in lines[0]
    assert not out.exists()


def test_cli_limits_are_options_of_publish(monkeypatch, tmp_path):
    _, data, spec = _intervals_case(tmp_path, n_columns=2)  # 22 x 22 = 484 nodes
    out = tmp_path / "release.csv"
    runner = CliRunner()
    got = runner.invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out), "--max-nodes", "483"])
    assert got.exit_code == 2 and "484 nodes (limit 483)" in got.stderr and not out.exists()
    got = runner.invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out), "--max-memory", "1K"])
    assert got.exit_code == 2 and "needs about" in got.stderr and "--max-memory" in got.stderr
    assert not out.exists()
    got = runner.invoke(app, ["publish", str(data), "--spec", str(spec), "-o", str(out), "--max-nodes", "484",
                              "--max-memory", "none"])
    assert got.exit_code == 0, got.output
    assert out.exists()


def test_python_limits_refuse_before_any_node(monkeypatch, tmp_path):
    frame, data, spec = _intervals_case(tmp_path, n_columns=2)
    _forbid_nodes(monkeypatch)
    with pytest.raises(ParameterError, match=r"484 nodes \(limit 100\).*max_nodes="):
        incrowd.publish(frame, spec, max_nodes=100)
    with pytest.raises(ParameterError, match=r"needs about .*max_memory="):
        incrowd.publish(frame, spec, max_memory="1K")
    # given a file, the node count is refused before the file is read
    monkeypatch.setattr(incrowd.io._tables, "read_table", lambda *a, **k: pytest.fail("the data were read"))
    with pytest.raises(ParameterError, match=r"484 nodes \(limit 100\)"):
        incrowd.publish(data, spec, max_nodes=100)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ParameterError, match="max_nodes must be a positive integer"):
            incrowd.publish(frame, spec, max_nodes=bad)


def test_python_defaults_are_the_lattice_builds(tmp_path):
    import inspect

    params = inspect.signature(incrowd.publish).parameters
    assert params["max_nodes"].default == DEFAULT_MAX_NODES and params["max_memory"].default == DEFAULT_MAX_MEMORY
    assert params["max_nodes"].kind is inspect.Parameter.KEYWORD_ONLY
    frame, _, spec = _intervals_case(tmp_path)
    with pytest.raises(ParameterError, match=r"113,379,904 nodes \(limit 200,000\)"):
        incrowd.publish(frame, spec)


def test_a_fixed_level_shrinks_the_lattice(tmp_path):
    frame, _, spec = _intervals_case(tmp_path, n_columns=2)
    fixed = spec.read_text() + "[levels]\nc0 = 21\n"
    spec.write_text(fixed)
    result = incrowd.publish(frame, spec, max_nodes=22)  # c1's 22 levels; c0 fixed at its top
    assert result.summary()["levels"]["c0"] == 21


def test_fourteen_adult_attributes_are_refused_in_one_line(monkeypatch, tmp_path):
    root = data_dir() / "adult_arx"
    if not (root / "full").is_dir() or not (data_dir() / "adult.csv.gz").is_file():
        pytest.skip("benchmark data not present")
    lines = ["[privacy]", "k = 5", "allow_full_suppression = true", "[columns]"]
    for a in ADULT14:
        source = root / "adult_hierarchy_age.csv" if a == "age" else root / "full" / f"adult_full_hierarchy_{a}.csv"
        lines.append(f'"{a}" = {{ role = "categorical", hierarchy = "{source}" }}')
    spec = tmp_path / "adult.toml"
    spec.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(cli_publish, "read_table", lambda *a, **k: pytest.fail("the data were read"))
    out = tmp_path / "release.csv"
    got = CliRunner().invoke(app, ["publish", str(data_dir() / "adult.csv.gz"), "--spec", str(spec), "-o", str(out)])
    assert got.exit_code == 2, got.output
    lines = _lines(got.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: the lattice has 17,496,000 nodes (limit 200,000)")
    assert not out.exists()


def test_web_publish_is_held_to_the_servers_limits(tmp_path):
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    frame, _, _ = _intervals_case(tmp_path, n_columns=2)
    spec = {"privacy": {"k": 3, "max_suppression": "5%", "allow_full_suppression": True},
            "columns": {"x": "numeric", "c0": {"role": "categorical", "intervals": WIDTHS},
                        "c1": {"role": "categorical", "intervals": WIDTHS}}}
    application = create_app(max_nodes=100)
    try:
        client = TestClient(application)
        up = client.post("/api/datasets", files={"file": ("wide.csv", frame.to_csv(index=False).encode())})
        assert up.status_code == 200, up.text
        ds = up.json()["dataset"]
        got = client.post("/api/publish", json={"dataset": ds, "spec": spec})
        assert got.status_code == 400
        message = got.json()["error"]
        assert "484 nodes (limit 100)" in message and "--max-nodes" in message and "\n" not in message
        session = next(iter(application.state.sessions._sessions.values()))
        assert session.results == {}
    finally:
        application.state.sessions.close()
    application = create_app(max_nodes=None, max_memory=None)
    try:
        client = TestClient(application)
        ds = client.post("/api/datasets", files={"file": ("wide.csv", frame.to_csv(index=False).encode())}).json()
        got = client.post("/api/publish", json={"dataset": ds["dataset"], "spec": spec})
        assert got.status_code == 200, got.text
    finally:
        application.state.sessions.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=0, max_size=4))
def test_nodes_come_one_at_a_time_in_the_lattice_order(bounds):
    """The generator gives the order the search always used: height, then lexicographic."""
    ranges = [(min(a, b), max(a, b)) for a, b in bounds]
    every = sorted(itertools.product(*[range(lo, hi + 1) for lo, hi in ranges]), key=sum)
    got = []
    for height in range(sum(lo for lo, _ in ranges), sum(hi for _, hi in ranges) + 1):
        got += list(_gtm._of_height(ranges, height))
    assert got == every
    assert list(_gtm._of_height(ranges, sum(hi for _, hi in ranges) + 1)) == []
