"""The disclosure-risk and utility report under every release of the web UI, through FastAPI's
TestClient: headline figures and assumptions in the answer, the same figures as
``incrowd.report`` on the same tables, a self-contained HTML download and a JSON one, for a
microaggregation (as the page runs it: a job, then the report's job), a generalization and a
publish (whose report keeps the release's summary)."""

from __future__ import annotations

import io
import json
import re
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
from fastapi.testclient import TestClient  # noqa: E402

import incrowd  # noqa: E402
from incrowd.reporting._report import summary_points  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")
SVG_NAMESPACE = "http://www.w3.org/2000/svg"
REGION = b"n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\n"


@pytest.fixture
def app():
    application = create_app(max_upload_mb=1)
    yield application
    application.state.sessions.close()


def numbers(n: int = 120, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": [f"p{i}" for i in range(n)], "age": rng.integers(18, 90, n),
                         "income": rng.normal(3000, 800, n).round(2), "hours": rng.integers(5, 60, n)})


def people(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": [f"r{i:03d}" for i in range(n)], "age": rng.integers(18, 80, n),
                         "hours": rng.integers(10, 60, n), "sex": rng.choice(["m", "f"], n),
                         "region": rng.choice(["n1", "n2", "s1", "s2"], n),
                         "disease": rng.choice(["flu", "cold", "asthma"], n)})


def upload(client: TestClient, frame: pd.DataFrame, name: str) -> str:
    r = client.post("/api/datasets", files={"file": (name, frame.to_csv(index=False).encode())})
    assert r.status_code == 200, r.text
    return r.json()["dataset"]


def finished(client: TestClient, job: str) -> dict:
    deadline = time.monotonic() + 120  # bounds a cold kernel cache, not a timing claim
    while True:
        s = client.get(f"/api/jobs/{job}").json()
        if s["status"] not in ("queued", "running"):
            return s
        assert time.monotonic() < deadline, s
        time.sleep(0.05)


def assert_self_contained(text: str) -> None:
    assert text.lstrip().lower().startswith("<!doctype html")
    assert "<svg" in text
    assert "<script src" not in text.lower()
    links = re.findall(r"https?://[^\s\"'<>)]*", text)
    assert links and set(links) == {SVG_NAMESPACE}, set(links)


def assert_downloads(client: TestClient, made: dict, stem: str) -> dict:
    html = client.get(made["report_download"])
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert html.headers["content-disposition"] == f'attachment; filename="{stem}_report.html"'
    assert_self_contained(html.text)
    got = client.get(made["report_json"])
    assert got.status_code == 200 and got.headers["content-disposition"].startswith("attachment")
    body = json.loads(got.content)
    assert isinstance(body["risk"], dict) and isinstance(body["utility"], dict)
    assert body["assumptions"] == made["assumptions"]
    return body


def test_a_microaggregation_job_is_followed_by_its_report(app):
    client = TestClient(app)
    frame = numbers()
    ds = upload(client, frame, "people.csv")
    job = client.post("/api/microaggregate/jobs", json={"dataset": ds, "k": 4, "identifiers": ["id"]}).json()["job"]
    done = finished(client, job)
    assert done["status"] == "done", done
    r = done["result"]
    assert r["report_name"] == "people_mdav_k4_report.html"
    report_job = client.post(r["report_job"])
    assert report_job.status_code == 202
    made = finished(client, report_job.json()["job"])
    assert made["status"] == "done", made
    m = made["result"]
    # the figures incrowd.report gives on the same tables
    release = pd.read_csv(io.BytesIO(client.get(r["download"]).content))
    expected = incrowd.report(frame, release, quasi_identifiers=["age", "income", "hours"], identifiers=["id"],
                              k=4, figures=False)
    assert set(m["points"]) == set(summary_points(expected.risk, expected.utility))
    for name, value in summary_points(expected.risk, expected.utility).items():
        assert m["points"][name] == pytest.approx(value, abs=1e-9), name
    assert m["points"]["information loss, all rows (SSE/SST)"] == pytest.approx(r["information_loss"], abs=1e-12)
    assert m["points"]["highest re-identification risk"] <= 1 / 4
    assert m["verdict"] == expected.verdict and m["verdict"][0]["measure"] == "k"
    assert m["assumptions"] and m["about"]["k"] == 4
    body = assert_downloads(client, m, "people_mdav_k4")
    assert body["release"]["k"] == 4 and body["about"]["rows_release"] == 120
    # asked again (the blocking endpoint), the report is the one already made
    assert client.post(r["report"]).json() == m


def test_a_publish_offers_the_full_report_with_the_release_summary(app):
    client = TestClient(app)
    ds = upload(client, people(), "people.csv")
    client.post("/api/publish/hierarchies", files=[("files", ("people_hierarchy_region.csv", REGION))])
    spec = {"privacy": {"k": 3, "max_suppression": "5%"},
            "columns": {"id": "identifier", "age": "numeric", "hours": "numeric", "sex": "categorical",
                        "region": {"role": "categorical", "hierarchy": "people_hierarchy_region.csv"},
                        "disease": "sensitive"}}
    r = client.post("/api/publish", json={"dataset": ds, "spec": spec})
    assert r.status_code == 200, r.text
    r = r.json()
    assert r["report_name"] == "people_report.html" and r["command"].endswith("--report people_report.html")
    m = client.post(r["report"])
    assert m.status_code == 200, m.text
    m = m.json()
    points = m["points"]
    assert 0 < points["highest re-identification risk"] <= 1 / 3
    assert 0 <= points["information loss, all rows (SSE/SST)"] < 1
    body = assert_downloads(client, m, "people")
    assert body["release"]["k"] == 3 and body["release"]["sensitive"] == ["disease"]
    assert body["about"]["sensitive"] == ["disease"] and "attribute_disclosure" in body["risk"]
    assert body["about"]["categorical"] == ["sex", "region"] and "categorical" in body["utility"]
    html = client.get(r["report_download"]).text
    assert "<h2>The release</h2>" in html


def test_a_generalized_node_comes_with_its_report(app):
    client = TestClient(app)
    ds = upload(client, people(200), "people.csv")
    client.post("/api/hierarchies", files=[("files", ("people_hierarchy_region.csv", REGION))])
    built = client.post("/api/lattice/build", json={"dataset": ds, "quasi_identifiers": ["age", "region"],
                                                    "intervals": {"age": [5, 10, 20]}})
    assert built.status_code == 200, built.text
    g = client.post("/api/generalize", json={"lattice": built.json()["lattice"], "levels": {"age": 2, "region": 1},
                                             "k": 5, "identifiers": ["id"]})
    assert g.status_code == 200, g.text
    g = g.json()
    made = finished(client, client.post(g["report_job"]).json()["job"])
    assert made["status"] == "done", made
    m = made["result"]
    assert m["points"]["highest re-identification risk"] <= 1 / 5
    assert m["about"]["suppressed"] == g["suppressed"] and m["about"]["categorical"] == ["age", "region"]
    assert_downloads(client, m, g["download_name"][: -len(".csv")])


def test_another_session_cannot_see_or_make_a_report(app):
    first, second = TestClient(app), TestClient(app)
    ds = upload(first, numbers(40), "people.csv")
    r = first.post("/api/microaggregate", json={"dataset": ds, "k": 4, "identifiers": ["id"]}).json()
    second.get("/")
    for method, url in (("post", r["report"]), ("post", r["report_job"]), ("get", r["report_download"]),
                        ("get", r["report_json"])):
        got = getattr(second, method)(url)
        assert got.status_code == 404 and "no release" in got.json()["error"], url
    assert first.post("/api/results/nope/report").status_code == 404


def test_the_pages_show_the_report_under_each_result(app):
    client = TestClient(app)
    for page in ("/", "/negotiate", "/publish"):
        text = client.get(page).text
        assert "Download the risk and utility report (HTML)" in text and "showRiskReport(" in text, page
        assert "Download the report ${" not in text  # publish's old release-summary-only link is gone
