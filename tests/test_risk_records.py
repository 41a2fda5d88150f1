"""``incrowd risk -o records.csv|.parquet``: every row's measures, and the risk page's value labels,
on the curator's labelled household survey (sdcMicro's testdata as a .sav, ``tests/_household.py``)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import _household as household
import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from typer.testing import CliRunner

import incrowd
from incrowd.cli import app
from incrowd.exceptions import ParameterError

DATA = data_dir()
needs_data = pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")
#: sdcMicro's keys of testdata, without age: rows with a user-missing 9 are among the riskiest
KEYS = ["urbrur", "roof", "walls", "water", "relat", "sex"]
COLUMNS = ["row", "fk", "Fk", "individual_risk", "suda_score", "suda_dis_score", "household_risk"]


@pytest.fixture(scope="module")
def survey_sav(tmp_path_factory) -> Path:
    return household.write_household(DATA, tmp_path_factory.mktemp("household") / "household.sav")


def _risk_args(path: Path) -> list[str]:
    return ["risk", str(path), "--qi", ",".join(KEYS), "--weight", household.WEIGHT,
            "--household", household.HOUSEHOLD_ID]


@needs_data
@pytest.mark.parametrize("name", ["records.csv", "records.parquet"])
def test_every_rows_measures_are_written_in_the_inputs_order(survey_sav, tmp_path, name):
    out = tmp_path / name
    got = CliRunner().invoke(app, [*_risk_args(survey_sav), "-o", str(out)])
    assert got.exit_code == 0, got.output
    assert "written" in got.stdout and name in got.stdout
    back = pd.read_csv(out) if name.endswith(".csv") else pd.read_parquet(out)
    expected = incrowd.risk(survey_sav, KEYS, weight=household.WEIGHT, household=household.HOUSEHOLD_ID).records
    assert list(back.columns) == COLUMNS
    assert len(back) == len(expected) == 4580  # every row, not the 20 riskiest
    np.testing.assert_array_equal(back["row"].to_numpy(), np.arange(1, len(expected) + 1))
    for column in COLUMNS[1:]:
        np.testing.assert_allclose(back[column].to_numpy(dtype=float), expected[column].to_numpy(dtype=float),
                                   rtol=1e-15, atol=0, equal_nan=True, err_msg=column)


def test_records_keep_the_order_of_a_shuffled_input_and_the_api_writes_them(tmp_path):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"a": rng.integers(0, 4, 200), "b": rng.choice(["x", "y"], 200),
                          "w": rng.uniform(1, 50, 200)}).sample(frac=1, random_state=2)
    result = incrowd.risk(frame, ["a", "b"], weight="w")
    result.write(tmp_path / "r.csv")
    back = pd.read_csv(tmp_path / "r.csv")
    assert list(back.columns) == ["row", "fk", "Fk", "individual_risk", "suda_score", "suda_dis_score"]
    np.testing.assert_allclose(back["individual_risk"], result.records["individual_risk"].to_numpy(), rtol=1e-15)
    np.testing.assert_array_equal(back["fk"], frame.groupby(["a", "b"])["w"].transform("size").to_numpy())


def test_records_never_overwrite_the_input(tmp_path):
    frame = pd.DataFrame({"a": [1, 1, 2, 2, 3], "w": [2.0, 3, 4, 5, 6]})
    path = tmp_path / "s.csv"
    frame.to_csv(path, index=False)
    before = path.read_bytes()
    got = CliRunner().invoke(app, ["risk", str(path), "--qi", "a", "--weight", "w", "-o", str(path)])
    assert got.exit_code == 2
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and "is the input" in lines[0] and "s.csv" in lines[0], got.stderr
    assert path.read_bytes() == before
    # the API knows the file it read: writing over it needs no inputs= to be refused
    with pytest.raises(incrowd.exceptions.DataError, match="is the input"):
        incrowd.risk(path, ["a"], weight="w").write(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["r.txt", "r.sav", "-"])
def test_an_output_of_another_kind_is_one_line(tmp_path, name, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"a": [1, 1, 2], "w": [2.0, 3, 4]}).to_csv(tmp_path / "s.csv", index=False)
    got = CliRunner().invoke(app, ["risk", "s.csv", "--qi", "a", "-o", name])
    assert got.exit_code == 2
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and ".html, .json, .csv or .parquet" in lines[0], got.stderr
    assert "DuckDB" not in lines[0]
    with pytest.raises(ParameterError, match=".html, .json, .csv or .parquet"):
        incrowd.risk(pd.read_csv(tmp_path / "s.csv"), ["a"]).write(tmp_path / "r.txt")


def _riskiest_table(page: str) -> list[dict[str, str]]:
    section = page.split("<h2>The riskiest records</h2>")[1].split("<h2>")[0]
    header = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", section)]
    rows = re.findall(r"<tr>((?:<td[^>]*>.*?</td>)+)</tr>", section)
    return [dict(zip(header, [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)])) for r in rows]


@needs_data
def test_the_page_shows_codes_by_their_value_labels_as_the_web_does(survey_sav, tmp_path):
    page = tmp_path / "risk.html"
    got = CliRunner().invoke(app, [*_risk_args(survey_sav), "-o", str(page)])
    assert got.exit_code == 0, got.output
    rows = _riskiest_table(page.read_text(encoding="utf-8"))
    assert len(rows) == 20
    for key in KEYS:
        labels = set(household.VALUE_LABELS[key].values())
        assert {r[key] for r in rows} <= labels, (key, {r[key] for r in rows})
    # a user-missing 9 is a value of its own, shown by its label, never as missing
    assert any(household.NOT_STATED_LABEL in (r["walls"], r["relat"], r["water"], r["roof"]) for r in rows)
    # the JSON keeps the codes (what a program reads back), the user-missing one spelled
    doc = incrowd.risk(survey_sav, KEYS, weight=household.WEIGHT).to_dict()
    assert {r["sex"] for r in doc["riskiest"]} <= {1.0, 2.0}


def test_a_release_whose_pass_through_weight_is_below_one_is_written_and_its_report_withholds_the_weighted_risk(
        tmp_path):
    # weights scaled to average 1 (a common export) pass through a release without risk targets;
    # the report's weighted risk, undefined on them, is withheld with its reason, not the release
    rng = np.random.default_rng(0)
    n = 300
    pd.DataFrame({"age": rng.integers(20, 60, n), "sex": rng.choice(["m", "f"], n),
                  "w": rng.uniform(0.2, 3, n).round(3)}).to_csv(tmp_path / "p.csv", index=False)
    (tmp_path / "p.toml").write_text('[privacy]\nk = 3\nmax_suppression = "10%"\nallow_full_suppression = true\n'
                                     '[columns]\nage = {role = "categorical", intervals = [5, 10, 20]}\n'
                                     'sex = "categorical"\nw = "weight"\n')
    out, report = tmp_path / "out.csv", tmp_path / "r.json"
    got = CliRunner().invoke(app, ["publish", str(tmp_path / "p.csv"), "--spec", str(tmp_path / "p.toml"),
                                   "-o", str(out), "--report", str(report)])
    assert got.exit_code == 0, got.output
    assert out.exists()
    import json

    doc = json.loads(report.read_text())
    withheld = doc["risk"]["sample_risk"]["withheld"]
    assert "weight column 'w', row" in withheld and "is below 1" in withheld, withheld
    assert not any(line["measure"].startswith("weighted") for line in doc["verdict"])
    assert any("sample_risk withheld" in text for text in doc["assumptions"])
