"""The web's Risk step and SUDA2: the server keeps answering while a risk job searches 20 keys,
a DELETE stops that job inside the search, and SUDA2 can be left out or bounded there as on the
command line. The server is a real one on loopback; the waits bound a broken server, they are
not timing claims (bench/bench_risk_serve.py measures the latencies)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from loopback import serving, wait_until  # noqa: E402

from incrowd.reporting import _suda2  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KEYS = [f"k{j}" for j in range(20)]


def _twenty_keys(rows: int = 2000) -> bytes:
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.integers(0, 3, (rows, len(KEYS))), columns=KEYS).to_csv(index=False).encode()


def test_the_server_answers_while_a_20_key_risk_job_runs_and_delete_cancels_it(monkeypatch):
    # without a budget, SUDA2 on 20 keys of 2,000 rows would search for hours
    monkeypatch.setattr(_suda2, "WORK_BUDGET", 0)
    application = create_app(max_upload_mb=5, workers=1, queue=1)
    with serving(application) as base, httpx.Client(base_url=base, timeout=20) as client:
        ds = client.post("/api/datasets", files={"file": ("keys.csv", _twenty_keys(), "text/csv")}).json()["dataset"]
        started = client.post("/api/risk/jobs", json={"dataset": ds, "quasi_identifiers": KEYS})
        assert started.status_code == 202, started.text
        job = f"/api/jobs/{started.json()['job']}"
        # fk, Fk and the individual risks are done (a quarter); SUDA2 is searching
        assert wait_until(lambda: client.get(job).json()["progress"] == 0.25, seconds=120)
        with httpx.Client(base_url=base, timeout=20) as other:
            page = other.get("/")
            samples = other.get("/api/samples")
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert samples.status_code == 200
        assert client.get(job).json()["status"] == "running"  # answered while the search went on
        cancelled = client.delete(job)
        assert cancelled.status_code == 200
        assert wait_until(lambda: client.get(job).json()["status"] == "cancelled", seconds=30)
        assert wait_until(lambda: application.state.pool.running == 0, seconds=30)  # its worker is free
        assert client.get("/").status_code == 200


def test_the_risk_step_leaves_suda_out_or_bounds_it_as_the_command_line_does():
    application = create_app(max_upload_mb=5)
    csv = _twenty_keys(300)
    with serving(application) as base, httpx.Client(base_url=base, timeout=60) as client:
        ds = client.post("/api/datasets", files={"file": ("keys.csv", csv, "text/csv")}).json()["dataset"]
        keys = KEYS[:5]
        full = client.post("/api/risk", json={"dataset": ds, "quasi_identifiers": keys}).json()
        left_out = client.post("/api/risk", json={"dataset": ds, "quasi_identifiers": keys, "suda": False}).json()
        bounded = client.post("/api/risk", json={"dataset": ds, "quasi_identifiers": keys, "suda_max_size": 1}).json()
        refused = client.post("/api/risk", json={"dataset": ds, "quasi_identifiers": keys, "suda_max_size": 0})
        # 20 keys: over the default budget, skipped with one line; the other measures stand
        skipped = client.post("/api/risk", json={"dataset": ds, "quasi_identifiers": KEYS}).json()
    assert "highest_suda_dis_score" in full["summary"]
    assert "highest_suda_dis_score" not in left_out["summary"] and left_out["about"]["suda"] is False
    assert {k: v for k, v in full["summary"].items() if "suda" not in k} == left_out["summary"]
    assert left_out["command"].endswith("--no-suda") and ["SUDA2", "left out"] in left_out["lines"]
    assert bounded["command"].endswith("--suda-max-size 1") and bounded["about"]["suda_max_size"] == 1
    assert bounded["summary"]["suda_records_with_msu"] <= full["summary"]["suda_records_with_msu"]
    assert refused.status_code == 400 and "suda_max_size" in refused.json()["error"]
    message = skipped["summary"]["suda_skipped"]
    assert "\n" not in message and "--no-suda" in message and "20 of 20 keys" in message
    assert skipped["summary"]["sample_uniques"] == 300


def test_stopping_the_server_stops_a_running_suda2_search(monkeypatch):
    # what SIGTERM leads to: the server's shutdown ends every session, which cancels its jobs
    monkeypatch.setattr(_suda2, "WORK_BUDGET", 0)
    application = create_app(max_upload_mb=5, workers=1, queue=1)
    with serving(application) as base, httpx.Client(base_url=base, timeout=20) as client:
        ds = client.post("/api/datasets", files={"file": ("keys.csv", _twenty_keys(), "text/csv")}).json()["dataset"]
        job_id = client.post("/api/risk/jobs", json={"dataset": ds, "quasi_identifiers": KEYS}).json()["job"]
        assert wait_until(lambda: client.get(f"/api/jobs/{job_id}").json()["progress"] == 0.25, seconds=120)
        session = next(iter(application.state.sessions._sessions.values()))
        job = session.jobs[job_id]
    # the server has stopped (serving joins it); the search stopped with it
    assert wait_until(lambda: job.status == "cancelled", seconds=30), job.status
    assert wait_until(lambda: application.state.pool.running == 0, seconds=30)
