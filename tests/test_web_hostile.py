"""The web app against a hostile client: a cancelled publish job stops at its next step (between
lattice nodes, classes, merges), request fields are the CLI's integers in the CLI's ranges,
sessions are capped per client and in all, and hierarchy uploads are bounded and counted in the
memory budget."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from incrowd._runtime import _cancel
from incrowd.exceptions import BuildCancelled

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
from fastapi.testclient import TestClient  # noqa: E402

from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

WIDTHS = [2**j for j in range(1, 21)]


def _one_line_error(response, status: int, *needles: str) -> str:
    assert response.status_code == status, response.text
    message = response.json()["error"]
    assert "\n" not in message and "Traceback" not in message
    for needle in needles:
        assert needle in message, message
    return message


def _cancelled_token() -> _cancel.CancelToken:
    token = _cancel.CancelToken()
    token.cancel()
    return token


# --- a cancelled publish job stops at its next step ------------------------------------------

def test_delete_stops_a_publish_job_between_lattice_nodes(monkeypatch):
    """The search evaluates a node, the client cancels meanwhile: no further node is evaluated,
    the job ends "cancelled" and keeps nothing (a real server on 127.0.0.1)."""
    pytest.importorskip("uvicorn")
    httpx = pytest.importorskip("httpx")
    from loopback import serving, wait_until

    from incrowd.publishing import _gtm

    started, go = threading.Event(), threading.Event()
    calls = []
    original = _gtm._classes

    def classes(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            started.set()
            go.wait(60)  # bounds the test if the cancel never comes
        return original(*args, **kwargs)

    monkeypatch.setattr(_gtm, "_classes", classes)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"c0": rng.integers(0, 1000, 100), "c1": rng.integers(0, 1000, 100),
                          "x": rng.normal(size=100)})
    # k = every row: only the top node keeps them, so the search would read all 484 nodes
    spec = {"privacy": {"k": 100, "max_suppression": 0},
            "columns": {"x": "numeric", "c0": {"role": "categorical", "intervals": WIDTHS},
                        "c1": {"role": "categorical", "intervals": WIDTHS}}}
    application = create_app(workers=1)
    try:
        with serving(application) as base, httpx.Client(base_url=base, timeout=60) as client:
            up = client.post("/api/datasets", files={"file": ("wide.csv", frame.to_csv(index=False), "text/csv")})
            assert up.status_code == 200, up.text
            started_job = client.post("/api/publish/jobs", json={"dataset": up.json()["dataset"], "spec": spec})
            assert started_job.status_code == 202, started_job.text
            job = started_job.json()["job"]
            assert started.wait(60)
            assert client.get(f"/api/jobs/{job}").json()["status"] == "running"
            assert client.delete(f"/api/jobs/{job}").status_code == 200
            go.set()
            assert wait_until(lambda: client.get(f"/api/jobs/{job}").json()["status"] != "running", 60)
            assert client.get(f"/api/jobs/{job}").json()["status"] == "cancelled"
            assert len(calls) == 1  # the node being evaluated finished; no other was started
            pool = application.state.pool
            assert wait_until(lambda: pool.running == 0 and pool.admitted == 0, 30)
            session = next(iter(application.state.sessions._sessions.values()))
            assert session.results == {}
    finally:
        go.set()
        application.state.sessions.close()


def test_every_step_of_a_release_stops_under_a_cancelled_token():
    from incrowd.microaggregation.joint._joint import joint_labels
    from incrowd.privacy import DistinctL
    from incrowd.publishing._sensitive import SensitiveColumn, enforce_sensitive

    # ten groups of two rows, each holding one sensitive value: every group must merge for l = 2
    labels = np.repeat(np.arange(10), 2)
    codes = np.array([0, 0, 1, 1] * 5)
    column = SensitiveColumn("s", codes, 2, False, np.bincount(codes))
    points = np.arange(20, dtype=float)[:, None]
    merged, _ = enforce_sensitive(labels, points, [column], [DistinctL(2)])
    assert np.unique(merged).size < 10  # the merging has work to do
    with _cancel.cancellable(_cancelled_token()), pytest.raises(BuildCancelled):
        enforce_sensitive(labels, points, [column], [DistinctL(2)])
    numeric = np.random.default_rng(1).normal(size=(60, 2))
    joint_labels(numeric, [], 3, refine=True)
    with _cancel.cancellable(_cancelled_token()), pytest.raises(BuildCancelled):
        joint_labels(numeric, [], 3, refine=True)


# --- request fields: the CLI's integers in the CLI's ranges ----------------------------------

def test_fields_are_integers_in_the_clis_ranges():
    application = create_app()
    try:
        client = TestClient(application)
        ds = client.post("/api/datasets/sample/census").json()["dataset"]
        for route in ("/api/microaggregate", "/api/microaggregate/jobs"):
            _one_line_error(client.post(route, json={"dataset": ds, "k": "5"}), 400, "k:", "'5'")
            _one_line_error(client.post(route, json={"dataset": ds, "k": 5.0}), 400, "k:")
            _one_line_error(client.post(route, json={"dataset": ds, "k": 5, "seed": 2**70}), 400, "seed:",
                            "4294967295")
            _one_line_error(client.post(route, json={"dataset": ds, "k": 5, "seed": -1}), 400, "seed:")
            _one_line_error(client.post(route, json={"dataset": ds, "k": 5, "method": "ona", "runs": "3"}),
                            400, "runs:")
        assert client.post("/api/microaggregate", json={"dataset": ds, "k": 5, "seed": 2**32 - 1}).status_code == 200
        _one_line_error(client.post("/api/negotiate", json={"lattice": "x", "k": "5"}), 400, "k:")
        _one_line_error(client.post("/api/generalize", json={"lattice": "x", "levels": {"a": "1"}, "k": 2}), 400,
                        "levels.a:")
    finally:
        application.state.sessions.close()


# --- sessions: capped per client and in all --------------------------------------------------

def test_sessions_are_capped_per_client_and_in_all():
    application = create_app(max_sessions=4, max_sessions_per_client=2)
    try:
        def page(address: str):
            client = TestClient(application, client=(address, 50000))
            return client, client.get("/publish")

        first, r = page("10.0.0.1")
        assert r.status_code == 200 and first.cookies.get("incrowd_session")
        second, r = page("10.0.0.1")
        assert r.status_code == 200
        _, r = page("10.0.0.1")
        _one_line_error(r, 429, "--max-sessions-per-client 2")
        assert len(application.state.sessions) == 2
        # a session that ends makes room; one that keeps its cookie never needs another
        assert first.delete("/api/session").json() == {"ended": True}
        third, r = page("10.0.0.1")
        assert r.status_code == 200
        assert second.get("/publish").status_code == 200 and len(application.state.sessions) == 2
        for address in ("10.0.0.2", "10.0.0.3"):
            assert page(address)[1].status_code == 200
        _, r = page("10.0.0.4")
        _one_line_error(r, 429, "--max-sessions 4")
        assert len(application.state.sessions) == 4
        # an upload from a new client is refused the same way, and nothing is kept
        up = TestClient(application, client=("10.0.0.5", 1)).post(
            "/api/datasets", files={"file": ("a.csv", b"a,b\n1,2\n", "text/csv")})
        _one_line_error(up, 429, "--max-sessions 4")
        assert len(application.state.sessions) == 4
    finally:
        application.state.sessions.close()


def test_serve_offers_the_session_limits():
    from typer.testing import CliRunner

    from incrowd.cli import app

    out = CliRunner().invoke(app, ["serve", "--max-sessions", "0"])
    assert out.exit_code == 2 and "--max-sessions must be positive" in out.stderr
    out = CliRunner().invoke(app, ["serve", "--max-sessions-per-client", "-1"])
    assert out.exit_code == 2 and "--max-sessions-per-client must be positive" in out.stderr


# --- hierarchy uploads: bounded and in the memory budget -------------------------------------

def _hierarchy(lines: int) -> bytes:
    return "".join(f"v{i};g{i // 10};h{i // 100};*\n" for i in range(lines)).encode()


@pytest.mark.parametrize("route", ["/api/hierarchies", "/api/publish/hierarchies"])
def test_hierarchy_uploads_count_against_the_memory_budget(monkeypatch, route):
    import incrowd.web._negotiation as negotiation  # both routes parse an upload there

    application = create_app(memory_budget_mb=1)
    try:
        client = TestClient(application)
        parsed = []
        real = negotiation.read_hierarchy
        monkeypatch.setattr(negotiation, "read_hierarchy",
                            lambda *a, real=real, **k: (parsed.append(1), real(*a, **k))[1])
        # 20,000 values x 4 levels: 300 KB of text, several MB once parsed
        big = client.post(route, files=[("files", ("h_x.csv", _hierarchy(20_000), "text/csv"))])
        _one_line_error(big, 507, "'h_x.csv'", "--memory-budget-mb")
        assert parsed == []  # refused before parsing
        small = client.post(route, files=[("files", ("h_x.csv", _hierarchy(40), "text/csv"))])
        assert small.status_code == 200, small.text
        assert parsed == [1]
        held = application.state.sessions.memory_in_use()
        if route == "/api/hierarchies":  # kept in memory for the lattice: counted with the data sets
            assert held > 0
        else:  # kept as a file only
            assert held == 0
    finally:
        application.state.sessions.close()


def test_hierarchy_uploads_are_bounded_while_scanned():
    application = create_app(max_cells=100)
    try:
        client = TestClient(application)
        for route in ("/api/hierarchies", "/api/publish/hierarchies"):
            r = client.post(route, files=[("files", ("h_x.csv", _hierarchy(200), "text/csv"))])
            _one_line_error(r, 413, "--max-cells")
    finally:
        application.state.sessions.close()
