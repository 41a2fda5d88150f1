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
    # each box read off the parameter's own check: a choice, a yes or no, column names, a number, text
    inputs = {m["key"]: {p["name"]: p["input"] for p in m["params"]} for m in offered}
    assert inputs["pram"] == {"pd": "number", "alpha": "number", "invariant": "boolean", "matrix": "text"}
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
