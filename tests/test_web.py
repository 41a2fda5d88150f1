"""The web app through FastAPI's TestClient: microaggregation round trip and the safety rules."""

from __future__ import annotations

import io
import time

import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
from fastapi.testclient import TestClient  # noqa: E402

from incrowd import microaggregate, verify_k_anonymity  # noqa: E402
from incrowd.datasets import load_census  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def app():
    application = create_app(max_upload_mb=1)
    yield application
    application.state.sessions.close()


def census_csv() -> bytes:
    return load_census().to_csv(index=False).encode()


def test_upload_microaggregate_download(app):
    client = TestClient(app)
    assert client.get("/").status_code == 200
    up = client.post("/api/datasets", files={"file": ("census.csv", census_csv(), "text/csv")})
    assert up.status_code == 200, up.text
    info = up.json()
    assert info["rows"] == 1080 and len(info["columns"]) == 13 and len(info["preview"]) == 10
    assert all(c["dtype"] == "numeric" for c in info["columns"])
    run = client.post("/api/microaggregate", json={"dataset": info["dataset"], "k": 5, "method": "mdav-star"})
    assert run.status_code == 200, run.text
    report = run.json()
    api = microaggregate(load_census(), 5, "mdav-star")
    assert report["information_loss"] == api.information_loss
    assert report["k_anonymous"] and report["min_group_size"] >= 5
    assert report["command"].startswith("incrowd microaggregate census.csv -o census_mdav-star_k5.csv --k 5")
    got = client.get(report["download"])
    assert got.status_code == 200
    published = pd.read_csv(io.BytesIO(got.content))
    assert published.shape == (1080, 13)
    assert verify_k_anonymity(published, None, 5).ok


def test_sample_and_parameters_reach_the_method(app):
    client = TestClient(app)
    ds = client.post("/api/datasets/sample/census").json()["dataset"]
    run = client.post("/api/microaggregate", json={"dataset": ds, "k": 4, "method": "v-mdav", "gamma": 0.5,
                                                   "quasi_identifiers": ["AGI", "FICA"]}).json()
    assert run["params"] == {"gamma": 0.5} and run["quasi_identifiers"] == ["AGI", "FICA"]
    assert "--gamma 0.5" in run["command"] and "--qi AGI,FICA" in run["command"]
    api = microaggregate(load_census(), 4, "v-mdav", quasi_identifiers=["AGI", "FICA"], gamma=0.5)
    assert run["information_loss"] == api.information_loss
    assert client.post("/api/datasets/sample/../../etc").status_code in (400, 404)


def test_oversize_upload_is_refused_clearly(app):
    client = TestClient(app)
    big = b"a,b\n" + b"123456,654321\n" * 100_000  # about 1.4 MB, limit 1 MB
    r = client.post("/api/datasets", files={"file": ("big.csv", big)})
    assert r.status_code == 413
    assert "larger than the upload limit of 1 MB" in r.json()["error"]
    session = next(iter(app.state.sessions._sessions.values()))
    assert list(session.folder.iterdir()) == []  # the partial file is gone


def test_path_like_filenames_stay_in_the_session_folder(app):
    client = TestClient(app)
    for name in ("../../evil.csv", "/etc/passwd.csv", "..\\..\\win.csv", "a/b/../c.csv"):
        r = client.post("/api/datasets", files={"file": (name, b"x,y\n1,2\n3,4\n")})
        assert r.status_code == 200, r.text
        assert "/" not in r.json()["name"] and "\\" not in r.json()["name"]
    session = next(iter(app.state.sessions._sessions.values()))
    files = list(session.folder.iterdir())
    assert len(files) == 4 and all(f.parent == session.folder for f in files)
    assert not any(f.name.startswith(".") or "evil" in f.name for f in files)
    r = client.post("/api/datasets", files={"file": ("notes.txt", b"hello")})
    assert r.status_code == 400 and "not CSV or Parquet" in r.json()["error"]


def test_sessions_do_not_see_each_other(app):
    first, second = TestClient(app), TestClient(app)
    ds = first.post("/api/datasets/sample/census").json()["dataset"]
    res = first.post("/api/microaggregate", json={"dataset": ds, "k": 3}).json()
    second.get("/")
    assert second.get(res["download"]).status_code == 404
    r = second.post("/api/microaggregate", json={"dataset": ds, "k": 3})
    assert r.status_code == 400 and "unknown dataset" in r.json()["error"]
    assert second.get(f"/api/datasets/{ds}").status_code == 400
    assert first.get(res["download"]).status_code == 200


def test_bad_parameters_give_the_cli_messages(app):
    client = TestClient(app)
    ds = client.post("/api/datasets/sample/census").json()["dataset"]
    cases = [({"k": 1}, "k must be an integer in [2, n_rows=1080]; got 1"),
             ({"k": 5, "method": "kmeans"}, "unknown method 'kmeans'"),
             ({"k": 5, "quasi_identifiers": ["nope"]}, "unknown quasi-identifier column 'nope'"),
             ({"k": 5, "method": "mdav", "gamma": 0.3}, "gamma")]
    for extra, message in cases:
        r = client.post("/api/microaggregate", json={"dataset": ds, **extra})
        assert r.status_code == 400 and message in r.json()["error"], (extra, r.json())
        assert "Traceback" not in r.text
    r = client.post("/api/microaggregate", json={"dataset": ds, "k": "five"})
    assert r.status_code == 400 and r.json()["error"].startswith("k:")


def test_idle_and_ended_sessions_lose_their_files():
    app = create_app(idle_seconds=0.2)
    try:
        client = TestClient(app)
        client.post("/api/datasets/sample/census")
        folder = next(iter(app.state.sessions._sessions.values())).folder
        assert folder.is_dir()
        time.sleep(0.3)
        TestClient(app).get("/api/samples")  # any request sweeps idle sessions
        assert not folder.exists() and len(app.state.sessions) == 0
        client2 = TestClient(app)
        client2.post("/api/datasets/sample/census")
        folder2 = next(iter(app.state.sessions._sessions.values())).folder
        assert client2.delete("/api/session").json() == {"ended": True}
        assert not folder2.exists()
    finally:
        app.state.sessions.close()


def test_openapi_names_the_endpoints(app):
    schema = TestClient(app).get("/openapi.json").json()
    assert {"/api/datasets", "/api/microaggregate", "/api/results/{result_id}"} <= set(schema["paths"])
    fields = schema["components"]["schemas"]["MicroaggregateRequest"]["properties"]
    assert {"k", "method", "quasi_identifiers", "identifiers"} <= set(fields)
