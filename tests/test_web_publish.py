"""The web UI's Publish page through FastAPI's TestClient: the release of a mixed table with its
report and downloads, uploaded hierarchies, one-line errors, and the CLI line and TOML that
reproduce the release."""

from __future__ import annotations

import io
import shlex
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from incrowd.cli import app as cli_app  # noqa: E402
from incrowd.cli._publish import summary_lines  # noqa: E402
from incrowd.privacy import verify_k_anonymity, verify_l_diversity  # noqa: E402
from incrowd.publishing import load_spec  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REGION_FILE = "people_hierarchy_region.csv"
REGION = b"n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\n"
QIS = ["age", "hours", "sex", "region"]


@pytest.fixture
def app():
    application = create_app(max_upload_mb=1)
    yield application
    application.state.sessions.close()


def people(n: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": [f"r{i:03d}" for i in range(n)],
        "age": rng.integers(18, 80, n),
        "hours": rng.integers(10, 60, n),
        "sex": rng.choice(["m", "f"], n),
        "region": rng.choice(["n1", "n2", "s1", "s2"], n),
        "note": [f"free text {i}; kept as is" for i in range(n)],
        "disease": rng.choice(["flu", "cold", "asthma"], n),
    })


def upload(client: TestClient, frame: pd.DataFrame, name: str = "people.csv") -> str:
    r = client.post("/api/datasets", files={"file": (name, frame.to_csv(index=False).encode())})
    assert r.status_code == 200, r.text
    return r.json()["dataset"]


def mixed_spec(**privacy) -> dict:
    return {"privacy": {"k": 2, "max_suppression": "5%", **privacy},
            "columns": {"id": "identifier", "age": "numeric", "hours": "numeric", "sex": "categorical",
                        "region": "categorical", "note": "other", "disease": "other"},
            "missing": {"numeric": "error"}}


def test_the_publish_page_renders_with_every_choice(app):
    client = TestClient(app)
    page = client.get("/publish")
    assert page.status_code == 200
    text = page.text
    assert '<a href="/publish" class="active">Publish</a>' in text
    for choice in ("generalize-then-microaggregate", "joint", "mdav-star", "separate", 'id="hierarchy-files"',
                   'id="k"', 'id="l"', 'id="t"', 'id="max-suppression"', 'id="strategy"', 'id="method"',
                   'id="missing-numeric"'):
        assert choice in text, choice
    for role in ("identifier", "numeric", "categorical", "sensitive", "other"):
        assert f'"{role}"' in text
    assert 'href="/publish"' in client.get("/").text  # the other pages link to it


def test_a_mixed_table_is_published_k_anonymous_with_report_and_downloads(app):
    client = TestClient(app)
    frame = people()
    ds = upload(client, frame)
    guessed = client.get(f"/api/publish/example/{ds}").json()["spec"]["columns"]
    assert guessed["id"] == "identifier" and guessed["age"] == "numeric" and guessed["sex"] == "categorical"
    r = client.post("/api/publish", json={"dataset": ds, "spec": mixed_spec()})
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["k"] == 2 and report["numeric"] == ["age", "hours"] and report["categorical"] == ["sex", "region"]
    assert report["identifiers_dropped"] == ["id"]
    # the same figures as the CLI prints, and what was verified
    assert report["lines"] == [list(line) for line in summary_lines({**report, "input": "people.csv"})]
    assert report["verified"][0].startswith("k-anonymous over all quasi-identifiers (k=2)")
    got = client.get(report["download"])
    assert got.status_code == 200 and report["download_name"] == "people_release.csv"
    release = pd.read_csv(io.BytesIO(got.content), dtype={"note": str})
    assert list(release.columns) == ["age", "hours", "sex", "region", "note", "disease"]
    assert release.shape[0] == 60 - report["suppressed"] == report["rows_out"]
    assert verify_k_anonymity(release, QIS, 2).ok
    kept = frame[frame["note"].isin(release["note"])]  # the notes are distinct: they name the rows
    assert release[["note", "disease"]].values.tolist() == kept[["note", "disease"]].values.tolist()
    html = client.get(report["report_download"])
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "attachment" in html.headers["content-disposition"]
    # the full risk and utility report, the release's own summary in it
    assert "<h1>Disclosure risk and utility</h1>" in html.text and "<h2>The release</h2>" in html.text
    assert html.headers["content-disposition"].endswith('filename="people_report.html"')


def test_l_diversity_of_a_sensitive_column_is_kept_and_reported(app):
    client = TestClient(app)
    ds = upload(client, people(90, seed=1))
    spec = mixed_spec(l=2)
    spec["columns"]["disease"] = "sensitive"
    report = client.post("/api/publish", json={"dataset": ds, "spec": spec}).json()
    assert report["l"] == 2 and report["sensitive"] == ["disease"]
    assert any(line.startswith("disease: l-diverse (l=2)") for line in report["verified"])
    release = pd.read_csv(io.BytesIO(client.get(report["download"]).content))
    assert verify_k_anonymity(release, QIS, 2).ok
    assert verify_l_diversity(release, QIS, "disease", 2).ok


def skewed() -> pd.DataFrame:
    # n2 and s2 hold one row each: at level 0 their classes are too small, at level 1 (north,
    # south) every class is large enough
    frame = people(62, seed=2)
    frame["region"] = ["n1"] * 30 + ["n2"] + ["s1"] * 30 + ["s2"]
    return frame[["id", "age", "region", "note"]]


def region_spec(**privacy) -> dict:
    return {"privacy": {"k": 5, "max_suppression": 0, **privacy},
            "columns": {"id": "identifier", "age": "numeric",
                        "region": {"role": "categorical", "hierarchy": REGION_FILE}}}


def test_an_uploaded_hierarchy_is_used(app):
    client = TestClient(app)
    ds = upload(client, skewed())
    up = client.post("/api/publish/hierarchies", files=[("files", (REGION_FILE, REGION))])
    assert up.status_code == 200, up.text
    assert up.json()["hierarchies"] == [{"file": REGION_FILE, "attribute": "region", "levels": 3,
                                         "max_level": 2, "values": 4}]
    report = client.post("/api/publish", json={"dataset": ds, "spec": region_spec()}).json()
    assert report["levels"] == {"region": 1} and report["suppressed"] == 0
    release = pd.read_csv(io.BytesIO(client.get(report["download"]).content))
    assert set(release["region"]) == {"north", "south"}  # the file's level 1; a flat column has only "*"
    assert verify_k_anonymity(release, ["age", "region"], 5).ok
    assert report["hierarchy_files"] == [REGION_FILE]
    assert f'region = {{ role = "categorical", hierarchy = "{REGION_FILE}" }}' in report["spec_toml"]


def _one_line_error(r, *parts: str) -> str:
    assert r.status_code == 400, r.text
    message = r.json()["error"]
    assert "\n" not in message and "Traceback" not in message and "/tmp" not in message, message
    for part in parts:
        assert part in message, (part, message)
    return message


def test_errors_are_one_line_and_nothing_is_kept(app):
    client = TestClient(app)
    ds = upload(client, skewed())
    session = next(iter(app.state.sessions._sessions.values()))
    bad = client.post("/api/publish/hierarchies", files=[("files", ("region.csv", b"n1;north\nn1;south\n"))])
    _one_line_error(bad, "hierarchy file 'region.csv'", "two parents")
    assert client.get("/api/publish/hierarchies").json() == {"hierarchies": []}
    r = client.post("/api/publish", json={"dataset": ds, "spec": region_spec()})
    _one_line_error(r, f"hierarchy file {REGION_FILE!r} was not uploaded", "column 'region'")
    client.post("/api/publish/hierarchies", files=[("files", (REGION_FILE, b"n1;north;*\nn2;north;*\ns1;south;*\n"))])
    r = client.post("/api/publish", json={"dataset": ds, "spec": region_spec()})
    _one_line_error(r, "column 'region'", "'s2' is not in hierarchy file", REGION_FILE)
    client.post("/api/publish/hierarchies", files=[("files", (REGION_FILE, REGION))])
    r = client.post("/api/publish", json={"dataset": ds, "spec": {**region_spec(), "levels": {"region": 0}}})
    _one_line_error(r, "no generalization of the categorical quasi-identifiers keeps suppression within")
    spec = region_spec(l=5)
    spec["columns"]["note"] = "sensitive"
    spec["columns"]["region"] = "categorical"
    frame = skewed().assign(note=["a", "b"] * 31)
    ds2 = upload(client, frame, "two.csv")
    r = client.post("/api/publish", json={"dataset": ds2, "spec": spec})
    _one_line_error(r, "l=5 is larger than the number of distinct values of sensitive column 'note' (2)")
    r = client.post("/api/publish", json={"dataset": ds, "spec": {**region_spec(), "columns": {"agex": "numeric"}}})
    _one_line_error(r, "['agex']")
    r = client.post("/api/publish", json={"dataset": ds, "spec": region_spec(t=1.5)})
    _one_line_error(r, "t must be a number in (0, 1]")
    assert session.results == {}
    # a job fails with the same one line
    job = client.post("/api/publish/jobs", json={"dataset": ds, "spec": region_spec(t=1.5)}).json()["job"]
    status = _poll(client, job)
    assert status["status"] == "failed" and status["error"].startswith("the spec: t must be a number in (0, 1]")


def _poll(client: TestClient, job: str, seconds: float = 120.0) -> dict:
    deadline = time.monotonic() + seconds  # bounds the wait, not a timing claim
    while time.monotonic() < deadline:
        status = client.get(f"/api/jobs/{job}").json()
        if status["status"] in ("done", "failed", "cancelled"):
            return status
        time.sleep(0.05)
    raise AssertionError(f"job {job} did not finish")


def test_the_cli_line_and_toml_reproduce_the_release(app, tmp_path, monkeypatch):
    client = TestClient(app)
    frame = skewed()
    ds = upload(client, frame)
    client.post("/api/publish/hierarchies", files=[("files", (REGION_FILE, REGION))])
    spec = region_spec(max_suppression="2%")
    job = client.post("/api/publish/jobs", json={"dataset": ds, "spec": spec})
    assert job.status_code == 202, job.text
    status = _poll(client, job.json()["job"])
    assert status["status"] == "done", status
    report = status["result"]
    assert report["command"] == ("incrowd publish people.csv --spec release.toml -o people_release.csv "
                                 "--report people_report.html")
    assert load_spec(report["spec_toml"], base_dir=tmp_path) == load_spec(spec, base_dir=tmp_path)
    # the user's folder: the data, the TOML as shown, the hierarchy file by its uploaded name
    frame.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / report["spec_file"]).write_text(report["spec_toml"], encoding="utf-8")
    (tmp_path / REGION_FILE).write_bytes(REGION)
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli_app, [*shlex.split(report["command"])[1:], "--json"])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "people_release.csv").read_bytes() == client.get(report["download"]).content
    assert (tmp_path / "people_report.html").is_file()


@pytest.mark.parametrize("spec", [
    {"privacy": {"k": 3, "l": 2, "t": 0.25, "max_suppression": 0.01, "strategy": "joint", "method": "mdav-star",
                 "refine": False, "random_state": 7},
     "columns": {"odd \"name\"\\x": "numeric", "ünï cödé": {"role": "categorical", "hierarchy": "h ü.csv"},
                 "tab\tcol": {"role": "categorical", "intervals": [5.25, 10.5, 21]}, "s": "sensitive",
                 "dotted.name": {"role": "sensitive", "ordered": True}},
     "missing": {"numeric": "separate"}, "method_params": {"runs": 2}},
    {"privacy": {"k": 2, "max_suppression": "1%", "l": None}, "columns": {"a": "numeric", "b": "categorical"},
     "levels": {"b": 1}},
])
def test_spec_to_toml_loads_back_to_the_same_spec(spec, tmp_path):
    from incrowd.web._publish import spec_to_toml

    text = spec_to_toml(spec)
    assert load_spec(text, base_dir=tmp_path) == load_spec(
        {s: {k: v for k, v in t.items() if v is not None} for s, t in spec.items()}, base_dir=tmp_path)


def test_sessions_keep_their_releases_and_hierarchies(app):
    first, second = TestClient(app), TestClient(app)
    ds = upload(first, skewed())
    first.post("/api/publish/hierarchies", files=[("files", (REGION_FILE, REGION))])
    report = first.post("/api/publish", json={"dataset": ds, "spec": region_spec()}).json()
    second.get("/publish")
    assert second.get(report["download"]).status_code == 404
    assert second.get(report["report_download"]).status_code == 404
    assert second.get("/api/publish/hierarchies").json() == {"hierarchies": []}
    r = second.post("/api/publish", json={"dataset": ds, "spec": region_spec()})
    _one_line_error(r, "unknown dataset")


def test_a_publish_job_can_be_cancelled_and_keeps_nothing(app):
    client = TestClient(app)
    rng = np.random.default_rng(5)
    n = 2000
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "s": rng.choice(["x", "y"], n)})
    ds = upload(client, frame, "long.csv")
    # ONA with the most runs allowed: minutes of work, which only the cancel ends within the test
    spec = {"privacy": {"k": 3, "method": "ona"}, "columns": {"a": "numeric", "b": "numeric", "s": "categorical"},
            "method_params": {"runs": 10000}}
    job = client.post("/api/publish/jobs", json={"dataset": ds, "spec": spec}).json()["job"]
    deadline = time.monotonic() + 180  # bounds a cold numba cache compiling, not a timing claim
    while client.get(f"/api/jobs/{job}").json()["progress"] is None:
        assert time.monotonic() < deadline, "the job reported no progress"
        time.sleep(0.05)
    assert client.delete(f"/api/jobs/{job}").status_code == 200
    assert _poll(client, job)["status"] == "cancelled"
    session = next(iter(app.state.sessions._sessions.values()))
    assert session.results == {}


def test_openapi_names_the_publish_endpoints(app):
    schema = TestClient(app).get("/openapi.json").json()
    assert {"/api/publish", "/api/publish/jobs", "/api/publish/hierarchies",
            "/api/publish/example/{dataset_id}"} <= set(schema["paths"])
    assert set(schema["components"]["schemas"]["PublishRequest"]["properties"]) == {"dataset", "spec"}
