"""The web Publish page takes what the CLI takes: labelled SPSS, Stata and SAS uploads (bounded
from their header, read by incrowd.io), roles and hierarchies proposed as ``--example-spec``
proposes them, the release downloaded in the uploaded format with its labels, and the Risk
step measuring the file as ``incrowd risk`` does (TestClient; the browser path is in
``tests/test_web_e2e.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
pyreadstat = pytest.importorskip("pyreadstat")
from fastapi.testclient import TestClient  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import _household as household  # noqa: E402
import _survey_files as survey  # noqa: E402
from benchdata import data_dir  # noqa: E402
from loopback import free_port, wait_until  # noqa: E402

import incrowd  # noqa: E402
from incrowd._runtime import CancelToken, cancellable  # noqa: E402
from incrowd.exceptions import BuildCancelled  # noqa: E402
from incrowd.generalization import read_hierarchy  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
DATA = data_dir()
needs_data = pytest.mark.skipif(not (DATA / "adult.csv.gz").exists() or not (DATA / "adult_arx").is_dir(),
                                reason="benchmark data folder not found")
QIS = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]
PASS_THROUGH = ["education_num", "capital_gain", "capital_loss", "hours_per_week", "relationship", "income"]


@pytest.fixture
def app():
    application = create_app()
    yield application
    application.state.sessions.close()


def upload(client: TestClient, path: Path, name: str | None = None):
    return client.post("/api/datasets", files={"file": (name or path.name, path.read_bytes())})


def upload_hierarchies(client: TestClient, files) -> dict:
    got = client.post("/api/publish/hierarchies", files=[("files", (Path(f).name, Path(f).read_bytes())) for f in files])
    assert got.status_code == 200, got.text
    return got.json()


def read_back(path: Path):
    reader = pyreadstat.read_sav if path.suffix == ".sav" else pyreadstat.read_dta
    return reader(str(path), user_missing=True, apply_value_formats=False)


def class_sizes(frame: pd.DataFrame, qis: list[str]) -> pd.Series:
    keys = frame[qis].astype(object).where(frame[qis].notna(), "<missing>").astype(str)
    return keys.groupby(qis).size()


def small_labelled_sav(path: Path, n: int = 60, seed: int = 0) -> Path:
    """A labelled survey file of ``n`` rows: an id, coded ``sex`` and ``marital_status`` with value
    labels (99 "Not stated" user-missing), a numeric age, a weight."""
    rng = np.random.default_rng(seed)
    marital = rng.choice([1.0, 2.0, 3.0, 99.0], n, p=[0.4, 0.35, 0.2, 0.05])
    frame = pd.DataFrame({"respid": np.arange(1.0, n + 1), "age": rng.integers(18, 80, n).astype(float),
                          "sex": rng.choice([1.0, 2.0], n), "marital_status": marital,
                          "wgt": rng.uniform(50, 500, n).round(1)})
    pyreadstat.write_sav(frame, str(path), column_labels=["Respondent id", "Age", "Sex", "Marital status", "Weight"],
                         variable_value_labels={"sex": {1.0: "Male", 2.0: "Female"},
                                                "marital_status": {1.0: "Married", 2.0: "Never married",
                                                                   3.0: "Divorced", 99.0: "Not stated"}},
                         missing_ranges={"marital_status": [99.0]},
                         variable_measure={"respid": "scale", "age": "scale", "sex": "nominal",
                                           "marital_status": "nominal", "wgt": "scale"})
    return path


# --------------------------------------------------------------------------------------------
# the curator's path through the server


@needs_data
@pytest.mark.slow
def spec_steps(proposal: dict) -> list[list[str]]:
    return [step["columns"] for step in proposal["spec"].get("perturb", [])]


@pytest.mark.parametrize("suffix", [".sav", ".dta"])
def test_a_labelled_survey_file_goes_from_upload_to_a_labelled_release_of_its_format(app, tmp_path, suffix):
    source = tmp_path / f"adult{suffix}"
    (survey.write_sav if suffix == ".sav" else survey.write_dta)(source, DATA, n=3000)
    hierarchies = survey.write_hierarchies(tmp_path / "hierarchies", DATA)
    client = TestClient(app)
    got = upload(client, source)
    assert got.status_code == 200, got.text
    described = got.json()
    ds = described["dataset"]
    by_name = {c["name"]: c for c in described["columns"]}
    assert by_name["marital_status"]["label"] == "Marital status" and by_name["sex"]["value_labels"] == 2
    upload_hierarchies(client, hierarchies.values())
    proposal = client.get(f"/api/publish/example/{ds}").json()
    columns = proposal["spec"]["columns"]
    role = {name: entry if isinstance(entry, str) else entry["role"] for name, entry in columns.items()}
    # as --example-spec proposes them: from the file's metadata, hierarchies by normalized name
    assert role["respid"] == "identifier" and role["fnlwgt"] == "weight" and role["age"] == "numeric"
    for name in ("workclass", "education", "marital_status", "occupation", "race", "sex", "native_country",
                 "relationship"):
        assert role[name] == "categorical", name
    for name, file in hierarchies.items():
        if role[name] == "categorical":
            assert columns[name]["hierarchy"] == file.name, name
    assert columns["marital_status"]["hierarchy"] == "adult_hierarchy_marital-status.csv"
    code = "99" if suffix == ".sav" else ".a"
    assert f'user-missing {code} "Not stated"' in proposal["notes"]["workclass"]
    # the amounts (capital gain and loss: a heavy right tail) proposed perturbed, by one step
    assert spec_steps(proposal) == [[c for c in role if role[c] == "perturb"]] and role["capital_gain"] == "perturb"
    spec = proposal["spec"]
    for name in PASS_THROUGH:
        spec["columns"][name] = "other"
    # passed through here instead: no step changes them
    spec["perturb"] = [s for s in spec.get("perturb", []) if not set(s["columns"]) & set(PASS_THROUGH)]
    spec["privacy"].update(k=5, max_suppression="2%", allow_full_suppression=True)
    got = client.post("/api/publish", json={"dataset": ds, "spec": spec})
    assert got.status_code == 200, got.text
    release = got.json()
    assert release["download_name"] == f"adult_release{suffix}"
    assert f"-o adult_release{suffix}" in release["command"]
    written_path = tmp_path / release["download_name"]
    written_path.write_bytes(client.get(release["download"]).content)
    written, meta = read_back(written_path)
    before, meta_before = read_back(source)
    assert "respid" not in written.columns and written.shape[0] == release["rows_out"]
    # k over all quasi-identifiers on the file as downloaded
    assert class_sizes(written, QIS).min() >= 5
    # labels: variable labels kept; unchanged columns keep their value labels
    for name in written.columns:
        assert meta.column_names_to_labels[name] == meta_before.column_names_to_labels[name], name
    for name in PASS_THROUGH:
        assert meta.variable_value_labels.get(name) == meta_before.variable_value_labels.get(name), name
    # generalized columns: labelled numerics whose labels are the hierarchy's groups
    generalized = {name: level for name, level in release["levels"].items() if level > 0}
    assert generalized
    for name, level in generalized.items():
        assert pd.api.types.is_numeric_dtype(written[name]) or suffix == ".dta", name
        labels = meta.variable_value_labels[name]
        hierarchy = read_hierarchy(hierarchies[name])
        shown = {labels.get(v, v) for v in written[name] if not (isinstance(v, float) and np.isnan(v))}
        assert shown <= set(hierarchy.labels[level].tolist()), (name, shown)
        if suffix == ".sav":
            assert meta.variable_measure[name] == meta_before.variable_measure[name]


def test_a_hierarchy_file_is_proposed_for_its_column_by_normalized_name(app, tmp_path):
    source = small_labelled_sav(tmp_path / "people.sav")
    for name in ("adult_hierarchy_marital-status.csv", "marital-status.csv"):
        client = TestClient(app)  # a session of its own
        ds = upload(client, source).json()["dataset"]
        (tmp_path / name).write_text("Married;couple;*\nNever married;single;*\nDivorced;single;*\n"
                                     "Not stated;Not stated;*\n")
        before = client.get(f"/api/publish/example/{ds}").json()
        assert before["hierarchies"] == {} and before["spec"]["columns"]["marital_status"] == "categorical"
        listed = upload_hierarchies(client, [tmp_path / name])
        assert [h["file"] for h in listed["hierarchies"]] == [name]
        proposal = client.get(f"/api/publish/example/{ds}").json()
        assert proposal["hierarchies"] == {"marital_status": name}
        assert proposal["spec"]["columns"]["marital_status"] == {"role": "categorical", "hierarchy": name}
        assert proposal["spec"]["columns"]["respid"] == "identifier" and proposal["spec"]["columns"]["wgt"] == "weight"
        assert 'user-missing 99 "Not stated"' in proposal["notes"]["marital_status"]
    # both in one session: the file named as the column wins, as beside the data for the CLI
    upload_hierarchies(client, [tmp_path / "adult_hierarchy_marital-status.csv"])
    assert client.get(f"/api/publish/example/{ds}").json()["hierarchies"] == {"marital_status": "marital-status.csv"}


def test_a_small_labelled_sav_publishes_to_a_labelled_sav(app, tmp_path):
    client = TestClient(app)
    source = small_labelled_sav(tmp_path / "people.sav", n=80)
    ds = upload(client, source).json()["dataset"]
    hierarchy = tmp_path / "marital-status.csv"
    hierarchy.write_text("Married;couple;*\nNever married;single;*\nDivorced;single;*\nNot stated;Not stated;*\n")
    upload_hierarchies(client, [hierarchy])
    spec = client.get(f"/api/publish/example/{ds}").json()["spec"]
    spec["privacy"].update(k=3, max_suppression="10%")
    got = client.post("/api/publish", json={"dataset": ds, "spec": spec})
    assert got.status_code == 200, got.text
    release = got.json()
    assert release["download_name"] == "people_release.sav"
    assert client.get(release["download"]).headers["content-type"].startswith("application/x-spss-sav")
    out = tmp_path / "out.sav"
    out.write_bytes(client.get(release["download"]).content)
    written, meta = read_back(out)
    assert class_sizes(written, ["age", "sex", "marital_status"]).min() >= 3
    assert meta.variable_value_labels["sex"] == {1.0: "Male", 2.0: "Female"}
    if release["levels"]["marital_status"] > 0:
        assert pd.api.types.is_numeric_dtype(written["marital_status"])
        assert set(meta.variable_value_labels["marital_status"].values()) >= {"couple", "single"}


@pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")
def test_the_microaggregation_page_gives_a_sav_back_as_a_sav_with_its_labels(app, tmp_path):
    client = TestClient(app)
    source = household.write_household(DATA, tmp_path / "household.sav")
    ds = upload(client, source).json()["dataset"]
    qis = ["expend", "income", "savings"]
    got = client.post("/api/microaggregate", json={"dataset": ds, "k": 3, "method": "mdav",
                                                   "quasi_identifiers": qis})
    assert got.status_code == 200, got.text
    result = got.json()
    assert result["download_name"] == "household_mdav_k3.sav"
    assert result["verification"]["verified_on"] == "written file"
    answer = client.get(result["download"])
    assert answer.headers["content-type"].startswith("application/x-spss-sav")
    out = tmp_path / "out.sav"
    out.write_bytes(answer.content)
    written, meta = read_back(out)  # read as a user reads it: pyreadstat, user-missing codes kept
    _, before = read_back(source)
    assert class_sizes(written, qis).min() >= 3
    for column, labels in household.VALUE_LABELS.items():
        assert meta.variable_value_labels[column] == {float(c): v for c, v in labels.items()}, column
    assert meta.missing_ranges == before.missing_ranges
    assert meta.column_names_to_labels == before.column_names_to_labels
    assert meta.variable_measure["urbrur"] == "nominal" and meta.variable_measure["expend"] == "scale"
    original = household.household_frame(DATA)
    untouched = [c for c in original.columns if c not in qis]
    pd.testing.assert_frame_equal(written[untouched].astype(float), original[untouched].astype(float))


def test_the_preview_shows_user_missing_codes_as_the_file_holds_them(app, tmp_path):
    source = small_labelled_sav(tmp_path / "people.sav", n=200, seed=1)  # 99 among the first rows
    raw, _ = pyreadstat.read_sav(str(source), user_missing=True, apply_value_formats=False)
    described = upload(TestClient(app), source).json()
    shown = [row[3] for row in described["preview"]]
    assert 99 in raw["marital_status"].head(len(shown)).tolist()
    assert shown == [int(v) if v == 99 else v for v in raw["marital_status"].head(len(shown))]


@pytest.mark.parametrize("suffix", [".sas7bdat", ".xpt", ".zsav"])
def test_every_format_the_cli_reads_is_accepted_and_released_in_a_format_incrowd_writes(app, tmp_path, suffix):
    from incrowd.web._publish import release_format

    assert release_format(f"a{suffix}")[0] == {".sas7bdat": ".xpt", ".xpt": ".xpt", ".zsav": ".zsav"}[suffix]
    if suffix == ".sas7bdat":
        return  # pyreadstat does not write sas7bdat: its reading is read_table's (tests/test_statfiles.py)
    frame = pd.DataFrame({"age": np.arange(20.0, 50.0), "sex": np.tile([1.0, 2.0], 15)})
    path = tmp_path / f"small{suffix}"
    if suffix == ".xpt":
        pyreadstat.write_xport(frame, str(path))
    else:
        pyreadstat.write_sav(frame, str(path), compress=True)
    client = TestClient(app)
    got = upload(client, path)
    assert got.status_code == 200, got.text
    spec = {"privacy": {"k": 3, "max_suppression": 0}, "columns": {"age": "numeric", "sex": "categorical"}}
    release = client.post("/api/publish", json={"dataset": got.json()["dataset"], "spec": spec}).json()
    assert release["download_name"] == f"small_release{suffix}"
    out = tmp_path / release["download_name"]
    out.write_bytes(client.get(release["download"]).content)
    assert incrowd.verify_k_anonymity(incrowd.read_table(out), ["age", "sex"], 3).ok


def test_the_picker_accepts_what_the_server_takes(app):
    from incrowd.web._sessions import STATFILE_SUFFIXES

    text = TestClient(app).get("/publish").text
    accept = text.split('id="file" name="file" accept="')[1].split('"')[0].split(",")
    for suffix in (".csv", ".gz", ".parquet", *STATFILE_SUFFIXES):
        assert suffix in accept, suffix
    assert 'id="risk-section"' in text and 'id="run-risk"' in text


# --------------------------------------------------------------------------------------------
# the Risk step


def _risk_request(ds: str, **more) -> dict:
    return {"dataset": ds, "quasi_identifiers": ["age", "sex", "marital_status"], "weight": "wgt", **more}


def test_the_risk_step_gives_incrowd_risks_figures(app, tmp_path):
    source = small_labelled_sav(tmp_path / "people.sav", n=120)
    client = TestClient(app)
    ds = upload(client, source).json()["dataset"]
    got = client.post("/api/risk", json=_risk_request(ds, threshold=0.1))
    assert got.status_code == 200, got.text
    answer = got.json()
    expected = incrowd.risk(incrowd.read_table(source), ["age", "sex", "marital_status"], weight="wgt", threshold=0.1)
    summary = expected.summary()
    for key in ("global_risk", "expected_reidentifications", "sample_uniques", "records_above_threshold"):
        assert answer["summary"][key] == pytest.approx(summary[key], rel=1e-12, abs=0), key
    assert answer["summary"]["k_violations"] == {str(k): v for k, v in summary["k_violations"].items()}
    # every figure, population uniqueness included, as incrowd.risk gives it (JSON keeps floats exactly)
    assert answer["summary"] == json.loads(expected.to_json())["summary"]
    assert "population_uniqueness" in answer["summary"]
    # the riskiest records, with their codes spelled by their labels
    top = expected.to_dict()["riskiest"]
    assert [r["row"] for r in answer["riskiest"]] == [r["row"] for r in top]
    assert [r["individual_risk"] for r in answer["riskiest"]] == pytest.approx([r["individual_risk"] for r in top])
    assert {r["sex"] for r in answer["riskiest"]} <= {"Male", "Female"}
    assert answer["command"] == ("incrowd risk people.sav --qi age,sex,marital_status --weight wgt "
                                 "--threshold 0.1")
    labels = [label for label, _ in answer["lines"]]
    assert labels[:3] == ["rows", "global risk", "expected re-identifications"]
    assert "population uniques" in labels
    # the SUDA2 weights of the IHSN's implementation, as incrowd risk --suda-scores ihsn gives them
    ihsn = client.post("/api/risk", json=_risk_request(ds, suda_scores="ihsn")).json()
    expected = incrowd.risk(incrowd.read_table(source), ["age", "sex", "marital_status"], weight="wgt",
                            suda_original_scores=False)
    assert ihsn["summary"] == json.loads(expected.to_json())["summary"]
    assert ihsn["about"]["suda_scores"] == "ihsn" and ihsn["command"].endswith("--suda-scores ihsn")
    assert [r["suda_score"] for r in ihsn["riskiest"]] == pytest.approx(
        [r["suda_score"] for r in expected.to_dict()["riskiest"]])


def test_the_risk_job_reports_its_result_and_stops_when_cancelled(app, tmp_path, monkeypatch):
    from incrowd.reporting import _risk_api
    from incrowd.web._risk import RiskRequest, risk_in

    source = small_labelled_sav(tmp_path / "people.sav", n=120)
    client = TestClient(app)
    ds = upload(client, source).json()["dataset"]
    job = client.post("/api/risk/jobs", json=_risk_request(ds))
    assert job.status_code == 202
    job_id = job.json()["job"]
    assert wait_until(lambda: client.get(f"/api/jobs/{job_id}").json()["status"] in ("done", "failed"))
    done = client.get(f"/api/jobs/{job_id}").json()
    assert done["status"] == "done" and done["progress"] == 1.0
    assert done["result"]["summary"]["sample_uniques"] == client.post("/api/risk", json=_risk_request(ds)).json()[
        "summary"]["sample_uniques"]
    # cancelled while SUDA2 runs: the next measure is not started
    token = CancelToken()
    reached = []
    original = _risk_api._suda2

    def suda_then_cancel(*args):
        token.cancel()
        return original(*args)

    def household(*args):
        reached.append("household")
        raise AssertionError("the household risk ran after a cancel")

    monkeypatch.setattr(_risk_api, "_suda2", suda_then_cancel)
    monkeypatch.setattr(_risk_api.sample, "household_risk", household)
    session = next(iter(app.state.sessions._sessions.values()))
    with pytest.raises(BuildCancelled), cancellable(token):
        risk_in(session, session.datasets[ds], RiskRequest(**_risk_request(ds), household="respid"))
    assert reached == [] and token.progress == 0.25


def test_risk_step_errors_are_one_json_line(app, tmp_path):
    client = TestClient(app, raise_server_exceptions=False)
    ds = upload(client, small_labelled_sav(tmp_path / "people.sav")).json()["dataset"]
    for body, needle in ((_risk_request(ds, quasi_identifiers=["nope"]), "'nope'"),
                         (_risk_request(ds, quasi_identifiers=["age", "wgt"]), "'wgt'"),
                         (_risk_request(ds, threshold=2), "threshold"),
                         (_risk_request(ds, suda_scores="dis"), "suda_scores"),
                         (_risk_request("unknown"), "unknown dataset")):
        got = client.post("/api/risk", json=body)
        assert 400 <= got.status_code < 500 and got.headers["content-type"] == "application/json", got.text
        message = got.json()["error"]
        assert needle in message and "\n" not in message and "Traceback" not in message, message
        assert str(tmp_path) not in message and "/tmp" not in message


def test_risk_step_refuses_weights_below_one_and_withholds_what_a_tiny_fraction_leaves_undefined(app, tmp_path):
    client = TestClient(app, raise_server_exceptions=False)
    source = small_labelled_sav(tmp_path / "people.sav", n=120)
    ds = upload(client, source).json()["dataset"]
    # a population of 1e17 made the SNB model divide by zero (a 500)
    got = client.post("/api/risk", json=_risk_request(ds, population=1e17))
    assert got.status_code == 200, got.text
    estimates = got.json()["summary"]["population_uniqueness"]
    assert all(estimates[m] is None or 0 <= estimates[m] <= 1 for m in ("pitman", "zayatz", "snb", "dankar"))
    # a weight below 1 made risks above 1
    frame = incrowd.read_table(source)
    frame.loc[4, "wgt"] = 0.5
    (tmp_path / "light.csv").write_text(frame.to_csv(index=False))
    light = upload(client, tmp_path / "light.csv").json()["dataset"]
    got = client.post("/api/risk", json=_risk_request(light))
    assert 400 <= got.status_code < 500, got.text
    message = got.json()["error"]
    assert "weight column 'wgt', row 5: 0.5 is below 1" in message and "\n" not in message, message


# --------------------------------------------------------------------------------------------
# hostile and oversized statistical files


def _session_files(app) -> list[Path]:
    return [f for s in app.state.sessions._sessions.values() for f in s.folder.iterdir()]


@pytest.mark.parametrize("name, content", [
    ("bad.sav", b"$FL2@(#) not really SPSS" + bytes(200)),
    ("bad.dta", b"<stata_dta><header>garbage"),
    ("bad.xpt", b"HEADER RECORD*******LIBRARY HEADER RECORD!!!!!!!" + b"x" * 32),
    ("bad.sas7bdat", bytes(1024)),
])
def test_a_damaged_statistical_file_is_one_json_4xx_line_and_nothing_is_kept(app, name, content):
    client = TestClient(app, raise_server_exceptions=False)
    got = client.post("/api/datasets", files={"file": (name, content)})
    assert 400 <= got.status_code < 500 and got.headers["content-type"] == "application/json", got.text
    message = got.json()["error"]
    assert "\n" not in message and "Traceback" not in message and name in message, message
    assert "cannot read" in message and "damaged" in message, message
    assert "<server>" not in message and "/tmp" not in message
    assert _session_files(app) == []


def test_a_statistical_file_over_the_limits_is_refused_from_its_header(tmp_path, monkeypatch):
    from incrowd.web import _app as web_app

    path = small_labelled_sav(tmp_path / "wide.sav", n=60)  # 60 rows x 5 columns
    application = create_app(max_cells=200)

    def never(*_args, **_kwargs):
        raise AssertionError("the rows were decoded before the limits were checked")

    monkeypatch.setattr(web_app, "read_user_table", never)
    try:
        got = upload(TestClient(application, raise_server_exceptions=False), path)
        assert got.status_code == 413, got.text
        assert "60 rows x 5 columns" in got.json()["error"] and "--max-cells" in got.json()["error"]
        assert _session_files(application) == []
    finally:
        application.state.sessions.close()


def test_statfile_shape_reads_the_header_alone(tmp_path):
    from incrowd.io import statfile_shape

    assert statfile_shape(small_labelled_sav(tmp_path / "a.sav", n=37)) == (37, 5)
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]})
    pyreadstat.write_dta(frame, str(tmp_path / "a.dta"))
    assert statfile_shape(tmp_path / "a.dta") == (2, 2)
    with pytest.raises(incrowd.exceptions.DataError, match="cannot read SPSS file"):
        (tmp_path / "bad.sav").write_bytes(b"$FL2" + bytes(100))
        statfile_shape(tmp_path / "bad.sav")


# --------------------------------------------------------------------------------------------
# incrowd serve


def test_serve_help_names_every_page():
    from typer.testing import CliRunner

    from incrowd.cli import app as cli_app

    text = " ".join(CliRunner().invoke(cli_app, ["serve", "--help"], env={"COLUMNS": "200"}).output.split())
    for page in ("Microaggregation (/", "negotiation (/negotiate", "Publish (/publish", "Risk step", "report",
                 "SPSS", "Stata", "SAS"):
        assert page in text, page


@pytest.mark.slow
def test_serve_prints_its_url_when_its_output_is_a_file(tmp_path):
    port = free_port()
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        proc = subprocess.Popen([str(Path(sys.executable).with_name("incrowd")), "serve", "--port", str(port)],
                                stdout=stdout, stderr=stderr, env={**os.environ, "NO_COLOR": "1"})
        try:
            assert wait_until(lambda: f"http://127.0.0.1:{port}/" in err.read_text(), seconds=60, step=0.1), \
                err.read_text()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert f"incrowd is serving on http://127.0.0.1:{port}/" in err.read_text()
