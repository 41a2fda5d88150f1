"""Microaggregation as cancellable background jobs: the job endpoints, the session rules, and the
cancel token the kernels check between runs (ONA) or parts (MONA)."""

from __future__ import annotations

import time

import numba
import numpy as np
import pandas as pd
import pytest

from incrowd._runtime import _cancel
from incrowd.exceptions import BuildCancelled
from incrowd.microaggregation.mondrian.mona import MONA
from incrowd.microaggregation.ona.ona import ONA

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
from fastapi.testclient import TestClient  # noqa: E402

from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# an ONA job of this many runs on 3,000 rows takes far longer than any check here; ONA runs
# one batch of runs per numba thread between checks, so there are many batches on any machine
_RUNS = max(400, 10 * numba.get_num_threads())
# each run's own result id is in these links
_IGNORED = {"result", "download", "scatter", "seconds", "compile_seconds", "timings", "dataset",
            "report", "report_job", "report_download", "report_json"}


def _without_times(answer: dict) -> dict:
    out = {k: v for k, v in answer.items() if k not in _IGNORED}
    if "verification" in out:  # reading the written file back takes its own time in each run
        out["verification"] = {k: v for k, v in out["verification"].items() if k != "seconds"}
    return out


class _CancelOnFirstProgress(_cancel.CancelToken):
    """A token that cancels itself when the kernel reports its first progress: the next check
    must stop the work."""

    def __init__(self):
        super().__init__()
        self.reports = []

    @property
    def progress(self):
        return self.reports[-1] if self.reports else None

    @progress.setter
    def progress(self, value):
        if value is not None:
            self.reports.append(value)
            self.cancel()


def _wait(condition, seconds=180.0):  # bounds a cold numba cache compiling, not a timing claim
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def _points(n=3000, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, 3))


# --- the kernels ------------------------------------------------------------------------------

def test_ona_under_a_cancelled_token_raises_between_runs():
    token = _CancelOnFirstProgress()
    with _cancel.cancellable(token), pytest.raises(BuildCancelled):
        ONA(5, runs=50, random_state=0).fit(_points(400))
    # it stopped after the runs in progress (one per thread), not after all of them
    assert token.reports and max(token.reports) < 1.0
    assert len(token.reports) <= max(1, numba.get_num_threads())


def test_mona_under_a_cancelled_token_raises_between_parts():
    token = _CancelOnFirstProgress()
    with _cancel.cancellable(token), pytest.raises(BuildCancelled):
        MONA(5, rho=0.5).fit(_points(2000))
    # it stopped after the parts in progress (one per thread), not after all of them
    assert token.reports and max(token.reports) < 1.0
    assert len(token.reports) <= max(1, numba.get_num_threads())


def test_a_token_does_not_change_the_result():
    X = _points(500)
    plain = ONA(5, runs=7, random_state=3).fit(X)
    token = _cancel.CancelToken()
    with _cancel.cancellable(token):
        under = ONA(5, runs=7, random_state=3).fit(X)
    assert token.progress == 1.0
    assert np.array_equal(plain.labels_, under.labels_) and plain.best_run_ == under.best_run_
    assert np.array_equal(plain.run_information_losses_, under.run_information_losses_)
    assert np.array_equal(plain.run_n_rounds_, under.run_n_rounds_)
    assert not _cancel.active()  # the token is gone with its block
    _cancel.check_cancelled()  # and outside it nothing is cancelled


# --- the endpoints ----------------------------------------------------------------------------

@pytest.fixture
def app():
    application = create_app(workers=1, queue=4)
    yield application
    application.state.sessions.close()


def _upload(client, frame: pd.DataFrame) -> str:
    up = client.post("/api/datasets", files={"file": ("points.csv", frame.to_csv(index=False).encode(), "text/csv")})
    assert up.status_code == 200, up.text
    return up.json()["dataset"]


def _long_job(client) -> str:
    ds = _upload(client, pd.DataFrame(_points(), columns=["a", "b", "c"]))
    started = client.post("/api/microaggregate/jobs", json={"dataset": ds, "k": 5, "method": "ona",
                                                             "runs": _RUNS, "seed": 1})
    assert started.status_code == 202, started.text
    return started.json()["job"]


def _status(client, job: str) -> dict:
    got = client.get(f"/api/jobs/{job}")
    assert got.status_code == 200, got.text
    return got.json()


def _running_with_progress(client, job: str) -> dict:
    seen = {}

    def check():
        seen.update(_status(client, job))
        return seen["status"] == "running" and (seen["progress"] or 0) > 0
    assert _wait(check), seen
    return seen


def test_delete_cancels_a_running_job_and_frees_the_worker(app):
    pool = app.state.pool
    with TestClient(app) as client:
        job = _long_job(client)
        before = _running_with_progress(client, job)
        gone = client.delete(f"/api/jobs/{job}")
        assert gone.status_code == 200 and gone.json()["job"] == job
        assert _wait(lambda: _status(client, job)["status"] == "cancelled")
        after = _status(client, job)
        # it stopped within a batch of runs of the cancel, far from the whole run
        assert before["progress"] <= after["progress"] < 0.5
        assert "result" not in after
        assert _wait(lambda: pool.running == 0 and pool.admitted == 0)
        # the freed worker takes the next job
        ds = client.post("/api/datasets/sample/census").json()["dataset"]
        nxt = client.post("/api/microaggregate/jobs", json={"dataset": ds, "k": 5, "method": "mdav"}).json()["job"]
        assert _wait(lambda: _status(client, nxt)["status"] in ("done", "failed"))
        assert _status(client, nxt)["status"] == "done", _status(client, nxt)
        assert _status(client, nxt)["progress"] is None  # MDAV is one call: no progress to tell


def test_a_finished_job_answers_what_the_synchronous_endpoint_does(app):
    with TestClient(app) as client:
        ds = client.post("/api/datasets/sample/census").json()["dataset"]
        req = {"dataset": ds, "k": 5, "method": "ona", "runs": 5, "seed": 7}
        sync = client.post("/api/microaggregate", json=req)
        assert sync.status_code == 200, sync.text
        job = client.post("/api/microaggregate/jobs", json=req).json()["job"]
        assert _wait(lambda: _status(client, job)["status"] in ("done", "failed"))
        done = _status(client, job)
        assert done["status"] == "done" and done["progress"] == 1.0, done
        result = done["result"]
        assert _without_times(result) == _without_times(sync.json())
        assert client.get(result["download"]).status_code == 200


def test_a_failing_job_reports_the_error_in_plain_words(app):
    with TestClient(app) as client:
        ds = client.post("/api/datasets/sample/census").json()["dataset"]
        job = client.post("/api/microaggregate/jobs", json={"dataset": ds, "k": 1}).json()["job"]
        assert _wait(lambda: _status(client, job)["status"] == "failed")
        assert _status(client, job)["error"] == "k must be an integer in [2, n_rows=1080]; got 1"


def test_another_session_can_neither_see_nor_cancel_a_job(app):
    with TestClient(app) as owner:
        job = _long_job(owner)
        stranger = TestClient(app)
        stranger.get("/")  # a session of its own, without waiting for the busy worker
        assert stranger.cookies.get("incrowd_session")
        for answer in (stranger.get(f"/api/jobs/{job}"), stranger.delete(f"/api/jobs/{job}")):
            assert answer.status_code == 404 and "no job" in answer.json()["error"]
        assert _status(owner, job)["status"] in ("queued", "running")
        owner.delete(f"/api/jobs/{job}")
        assert _wait(lambda: _status(owner, job)["status"] == "cancelled")


def _session_job(app, client, job: str):
    return app.state.sessions.get(client.cookies.get("incrowd_session")).jobs[job]


def test_ending_the_session_cancels_its_running_job(app):
    pool = app.state.pool
    with TestClient(app) as client:
        job_id = _long_job(client)
        _running_with_progress(client, job_id)
        job = _session_job(app, client, job_id)
        assert client.delete("/api/session").json() == {"ended": True}
        assert _wait(lambda: job.status == "cancelled")
        assert job.token.progress < 0.5
        assert _wait(lambda: pool.running == 0)
        assert client.get(f"/api/jobs/{job_id}").status_code == 404


def test_an_expired_session_cancels_its_running_job():
    application = create_app(workers=1, idle_seconds=1)
    try:
        with TestClient(application) as client:
            job_id = _long_job(client)
            job = _session_job(application, client, job_id)
            # no request meanwhile: the session's idle time runs while the job works
            assert _wait(lambda: (job.token.progress or 0) > 0)
            time.sleep(1.2)
            client.get("/api/samples")  # any request sweeps idle sessions
            assert _wait(lambda: job.status == "cancelled")
            assert job.token.progress < 0.5
    finally:
        application.state.sessions.close()


def test_a_queued_job_cancelled_never_runs(app):
    with TestClient(app) as client:
        ds = client.post("/api/datasets/sample/census").json()["dataset"]  # before the worker is taken
        first = _long_job(client)  # holds the only worker
        _running_with_progress(client, first)
        queued = client.post("/api/microaggregate/jobs", json={"dataset": ds, "k": 5}).json()["job"]
        assert _status(client, queued) == {"job": queued, "status": "queued", "progress": None}
        assert client.delete(f"/api/jobs/{queued}").json()["status"] == "cancelled"
        client.delete(f"/api/jobs/{first}")
        assert _wait(lambda: app.state.pool.admitted == 0)
        assert _status(client, queued)["status"] == "cancelled"


def test_unknown_dataset_is_refused_before_queueing(app):
    with TestClient(app) as client:
        client.post("/api/datasets/sample/census")
        got = client.post("/api/microaggregate/jobs", json={"dataset": "nope", "k": 5})
        assert got.status_code == 400 and "unknown dataset" in got.json()["error"]


# --- the synchronous endpoint, when its client leaves ---------------------------------------

def test_a_synchronous_run_stops_when_its_client_goes_away(monkeypatch):
    """A client that hangs up on ``POST /api/microaggregate`` must not leave its ONA runs on a
    worker: the endpoint watches the connection and cancels the kernel between run batches."""
    import json
    import socket

    from loopback import serving

    pytest.importorskip("uvicorn")
    httpx = pytest.importorskip("httpx")
    reports = []
    original = _cancel.report_progress
    monkeypatch.setattr(_cancel, "report_progress", lambda done, total: (reports.append(done), original(done, total)))
    application = create_app(max_upload_mb=5)
    try:
        with serving(application) as base:
            port = int(base.rsplit(":", 1)[1])
            client = httpx.Client(base_url=base, timeout=60)
            frame = pd.DataFrame(_points(), columns=["a", "b", "c"])
            upload = client.post("/api/datasets", files={"file": ("p.csv", frame.to_csv(index=False), "text/csv")})
            assert upload.status_code == 200, upload.text
            body = json.dumps({"dataset": upload.json()["dataset"], "k": 5, "method": "ona", "runs": _RUNS,
                               "quasi_identifiers": ["a", "b", "c"], "seed": 1}).encode()
            cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
            conn = socket.create_connection(("127.0.0.1", port), timeout=10)
            conn.sendall(f"POST /api/microaggregate HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                         f"Content-Type: application/json\r\nCookie: {cookie}\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            assert _wait(lambda: len(reports) > 0)
            conn.close()
            pool = application.state.pool
            assert _wait(lambda: pool.running == 0 and pool.admitted == 0)
            stopped_at = reports[-1]
            assert stopped_at < _RUNS  # it stopped between batches, long before the last run
            time.sleep(0.5)
            assert reports[-1] == stopped_at
    finally:
        application.state.sessions.close()


def test_ona_star_rounds_stop_when_the_flag_is_set():
    from incrowd.microaggregation.ona._ona_kernel import ona_star_labels

    X = _points(600)
    plain = ona_star_labels(X, 5, 100)
    unset = ona_star_labels(X, 5, 100, -1, -1.0, np.zeros(1, np.uint8))
    stopped = ona_star_labels(X, 5, 100, -1, -1.0, np.ones(1, np.uint8))
    assert plain[1] > 1 and np.array_equal(plain[0], unset[0]) and plain[1] == unset[1]
    assert stopped[1] == 0 and not stopped[2]  # no round ran, yet the partition is valid
    assert np.bincount(stopped[0]).min() >= 5


def test_ona_star_under_a_cancelled_token_raises():
    from incrowd.microaggregation.ona.ona import ONAStar

    token = _cancel.CancelToken()
    token.cancel()
    with _cancel.cancellable(token), pytest.raises(BuildCancelled):
        ONAStar(5).fit(_points(600))
    ONAStar(5).fit(_points(600))  # outside the block nothing is cancelled
