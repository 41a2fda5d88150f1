"""The Publish page's perturbation steps and benchmark estimates through FastAPI's TestClient:
the step editor built from the registry's declared parameters, the curator's household release
with its numerics microaggregated and a benchmark, and a bad step's one-line error."""

from __future__ import annotations

import json
import re
import shlex

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("multipart")
pyreadstat = pytest.importorskip("pyreadstat")
import _household as household  # noqa: E402
from benchdata import data_dir  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from incrowd.cli import app as cli_app  # noqa: E402
from incrowd.perturbation import METHODS  # noqa: E402
from incrowd.publishing import load_spec  # noqa: E402
from incrowd.web import create_app  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
NUMERICS = ["income", "expend", "savings"]


def curator_spec() -> dict:
    """The curator's keys at k = 3 (age and relat recoded by their hierarchy files), the numerics
    microaggregated on their own, and the weighted mean income by urbrur as a benchmark: the
    request the Publish page sends."""
    columns = {name: "other" for name in household.VARIABLE_LABELS}
    columns.update({key: "categorical" for key in household.KEYS})
    columns.update({"age": {"role": "categorical", "hierarchy": "age.csv"},
                    "relat": {"role": "categorical", "hierarchy": "relat.csv"},
                    household.WEIGHT: "weight", **{name: "perturb" for name in NUMERICS}})
    return {"privacy": {"k": 3, "max_suppression": "5%", "strategy": "generalize-then-microaggregate",
                        "method": "mdav", "random_state": 7},
            "columns": columns, "missing": {"numeric": "error"},
            "perturb": [{"columns": NUMERICS, "method": "microaggregation", "k": 3}],
            "benchmarks": {"estimates": ["income by urbrur"]}}


@pytest.fixture
def client(tmp_path):
    if not (data_dir() / "testdata.csv").exists():
        pytest.skip("benchmark data folder not found")
    application = create_app()
    with TestClient(application) as c:
        sav = household.write_household(data_dir(), tmp_path / "household.sav")
        r = c.post("/api/datasets", files={"file": ("household.sav", sav.read_bytes())})
        assert r.status_code == 200, r.text
        c.dataset, c.sav = r.json()["dataset"], sav
        folder = household.write_hierarchies(tmp_path / "hierarchies")
        up = c.post("/api/publish/hierarchies", files=[("files", (f.name, f.read_bytes()))
                                                        for f in (folder / "age.csv", folder / "relat.csv")])
        assert up.status_code == 200, up.text
        yield c
    application.state.sessions.close()


def test_the_publish_page_offers_every_perturbation_method_with_its_declared_parameters():
    text = TestClient(create_app()).get("/publish").text
    for id_ in ('id="perturb-steps"', 'id="add-step"', 'id="random-state"', 'id="benchmarks"'):
        assert id_ in text, id_
    offered = json.loads(re.search(r"const PERTURB_METHODS = Object\.fromEntries\((\[.*?\])\.map", text).group(1))
    assert [m["key"] for m in offered] == list(METHODS)
    for m in offered:
        # every key a step may give, and none that the step's own keys set (microaggregation's method)
        assert [p["name"] for p in m["params"]] == [n for n in METHODS[m["key"]].params if n != "method"]
    # each box read off the parameter's own check (a choice, a yes or no, column names, a number, text), or a
    # file the method declares (PRAM's matrix, uploaded)
    inputs = {m["key"]: {p["name"]: p["input"] for p in m["params"]} for m in offered}
    assert inputs["pram"] == {"pd": "number", "alpha": "number", "invariant": "boolean", "matrix": "file"}
    assert inputs["microaggregation"] == {"k": "number", "aggregate": "choice", "jointly": "boolean"}
    assert inputs["record_swap"]["hierarchy"] == "columns" and inputs["shuffle"] == {"by": "columns"}
    by = next(p for m in offered if m["key"] == "shuffle" for p in m["params"])
    assert by["required"] and by["default"] is None


def test_the_curators_household_release_with_perturbed_numerics_and_a_benchmark(client, tmp_path, monkeypatch):
    r = client.post("/api/publish", json={"dataset": client.dataset, "spec": curator_spec()})
    assert r.status_code == 200, r.text
    body = r.json()
    lines = dict(body["lines"])
    assert lines["perturb 1"].startswith("microaggregation of income, expend, savings: ")
    # the TOML shown beside the release reads back to the same spec, steps and benchmarks included
    toml = body["spec_toml"]
    assert "[[perturb]]" in toml and 'estimates = ["income by urbrur"]' in toml
    again = load_spec(toml, base_dir=tmp_path)
    assert [dict(s.given) for s in again.perturb] == curator_spec()["perturb"]
    assert again.benchmarks == ("income by urbrur",) and again.random_state == 7

    saved = tmp_path / body["download_name"]
    saved.write_bytes(client.get(body["download"]).content)
    written, meta = pyreadstat.read_sav(str(saved), user_missing=True, apply_value_formats=False)
    assert meta.variable_value_labels["sex"] == {1.0: "Male", 2.0: "Female"}
    assert meta.column_names_to_labels["income"] == "Income"
    # at least 3 rows share each published (income, expend, savings)
    counts = written.groupby(NUMERICS, dropna=False).size()
    assert counts.min() >= 3, counts.min()

    # the command and TOML shown beside the release make the same file from the user's folder
    for name in ("age.csv", "relat.csv"):
        (tmp_path / name).write_bytes((tmp_path / "hierarchies" / name).read_bytes())
    (tmp_path / body["spec_file"]).write_text(toml, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    command = shlex.split(body["command"])[1:]
    command[command.index("-o") + 1] = "by_the_cli.sav"
    done = CliRunner().invoke(cli_app, command)
    assert done.exit_code == 0, done.output
    by_the_cli, _ = pyreadstat.read_sav("by_the_cli.sav", user_missing=True, apply_value_formats=False)
    pd.testing.assert_frame_equal(by_the_cli, written)

    # the report's benchmark table: the weighted mean income by urbrur, on the uploaded file and
    # on the written one
    html = client.get(body["report_download"]).text
    table = re.search(r"<table id=benchmarks>.*?</table>", html, re.S)
    assert table is not None and "income by urbrur" in table.group(0)
    rows = client.get(body["report_json"]).json()["utility"]["benchmarks"]
    original, _ = pyreadstat.read_sav(str(client.sav), user_missing=True, apply_value_formats=False)
    for row in rows:
        code = row["group"]["urbrur"]
        for side, frame in (("original", original), ("release", written)):
            part = frame[frame["urbrur"].map("{:g}".format) == code]  # the report names a group by its code
            expected = np.average(part["income"], weights=part[household.WEIGHT])
            assert row[side] == pytest.approx(expected, rel=1e-9), (side, code)
    assert sorted(row["group"]["urbrur"] for row in rows) == ["1", "2"]


def test_a_bad_step_is_one_line_naming_the_step_and_the_key(client):
    spec = curator_spec()
    spec["columns"]["roof"] = "perturb"
    spec["perturb"].append({"columns": ["roof"], "method": "pram", "pd": 2})
    r = client.post("/api/publish", json={"dataset": client.dataset, "spec": spec})
    assert r.status_code == 400, r.text
    message = r.json()["error"]
    assert "\n" not in message and "step 2 (pram)" in message and "pd must be a number in (0, 1]; got 2" in message


def _matrix_csv(categories, P) -> bytes:
    """A transition matrix file: the categories in the first row and the first column."""
    lines = ["," + ",".join(map(str, categories))]
    lines += [f"{c}," + ",".join(f"{p:g}" for p in row) for c, row in zip(categories, P)]
    return ("\n".join(lines) + "\n").encode()


def test_a_pram_matrix_uploaded_on_the_publish_page_is_the_steps_matrix(client, tmp_path):
    # a cyclic permutation: every roof category becomes the next one, for certain
    roofs = [2, 4, 5, 6]
    cycle = np.roll(np.eye(len(roofs)), 1, axis=1)
    up = client.post("/api/publish/matrices", files={"file": ("roof_pram.csv", _matrix_csv(roofs, cycle))})
    assert up.status_code == 200, up.text
    assert {"file": "roof_pram.csv", "categories": ["2", "4", "5", "6"]} in up.json()["matrices"]
    assert client.get("/api/publish/matrices").json()["matrices"] == up.json()["matrices"]

    spec = curator_spec()
    spec["privacy"]["max_suppression"] = 0  # every row published, in order: each one's roof is known
    spec["columns"]["roof"] = "perturb"
    spec["perturb"].append({"columns": ["roof"], "method": "pram", "matrix": "roof_pram.csv"})
    r = client.post("/api/publish", json={"dataset": client.dataset, "spec": spec})
    assert r.status_code == 200, r.text
    body = r.json()
    # the TOML names the file as uploaded, and the command says to keep it beside the spec
    assert 'matrix = "roof_pram.csv"' in body["spec_toml"] and body["matrix_files"] == ["roof_pram.csv"]
    saved = tmp_path / body["download_name"]
    saved.write_bytes(client.get(body["download"]).content)
    written, meta = pyreadstat.read_sav(str(saved), user_missing=True, apply_value_formats=False)
    original, _ = pyreadstat.read_sav(str(client.sav), user_missing=True, apply_value_formats=False)
    after = dict(zip(roofs, np.roll(roofs, -1)))
    expected = original["roof"].map(lambda v: after.get(int(v), v))  # "Not stated" (9) is never changed
    assert written["roof"].tolist() == expected.tolist()
    assert meta.variable_value_labels["roof"][9.0] == household.NOT_STATED_LABEL


@pytest.mark.parametrize("categories, P, message", [
    ([2, 4, 5], [[1, 0], [0, 1], [0.5, 0.5]], r"roof_pram\.csv.* is not square: 3 rows, 2 columns"),
    ([2, 4], [[0.5, 0.4], [0, 1]], r"roof_pram\.csv.*: the row of '2' sums to 0\.9, not 1"),
    ([2, 4], [[1, "x"], [0, 1]], r"roof_pram\.csv.* holds a cell that is not a number"),
])
def test_a_bad_matrix_upload_is_one_line_naming_the_problem(client, categories, P, message):
    rows = [",".join(str(p) for p in row) for row in P]
    text = ("," + ",".join(map(str, categories[:len(P[0])])) + "\n"
            + "".join(f"{c},{row}\n" for c, row in zip(categories, rows))).encode()
    r = client.post("/api/publish/matrices", files={"file": ("roof_pram.csv", text)})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert "\n" not in error and re.search(message, error), error
    assert client.get("/api/publish/matrices").json()["matrices"] == []


def test_a_matrix_that_does_not_name_the_columns_categories_is_refused_in_one_line(client):
    up = client.post("/api/publish/matrices", files={"file": ("roof_pram.csv", _matrix_csv([2, 4, 5], np.eye(3)))})
    assert up.status_code == 200, up.text
    spec = curator_spec()
    spec["columns"]["roof"] = "perturb"
    spec["perturb"].append({"columns": ["roof"], "method": "pram", "matrix": "roof_pram.csv"})
    r = client.post("/api/publish", json={"dataset": client.dataset, "spec": spec})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert "\n" not in error and "step 2 (pram)" in error and "'6'" in error and "'roof_pram.csv'" in error
    assert "<server>" not in error and "/" not in error.split("roof_pram.csv")[0][-3:]
    spec["perturb"][-1]["matrix"] = "walls.csv"
    r = client.post("/api/publish", json={"dataset": client.dataset, "spec": spec})
    assert r.status_code == 400 and "matrix file 'walls.csv' was not uploaded in this session" in r.json()["error"]
