"""incrowd.risk, its result, the ``incrowd risk`` command and the report's weighted risk."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import incrowd
from incrowd.cli import app
from incrowd.exceptions import DataError, ParameterError
from incrowd.reporting import RiskResult
from incrowd.privacy import sample_risk as sr


@pytest.fixture
def survey() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 300
    return pd.DataFrame({
        "region": rng.integers(1, 4, n),
        "sex": rng.choice(["m", "f"], n),
        "age": rng.integers(1, 8, n),
        "w": rng.uniform(1, 200, n).round(2),
        "hh": np.repeat(np.arange(100), 3),
    })


QIS = ["region", "sex", "age"]


def test_records_and_summary(survey):
    result = incrowd.risk(survey, QIS, weight="w", household="hh", threshold=0.05)
    assert isinstance(result, RiskResult)
    rec = result.records
    assert list(rec.columns[:3]) == ["fk", "Fk", "individual_risk"]
    assert "household_risk" in rec.columns
    sizes = survey.groupby(QIS)["w"].transform("size").to_numpy()
    weights = survey.groupby(QIS)["w"].transform("sum").to_numpy()
    np.testing.assert_array_equal(rec["fk"].to_numpy(), sizes)
    np.testing.assert_allclose(rec["Fk"].to_numpy(), weights, rtol=1e-12)
    s = result.summary()
    rk = rec["individual_risk"].to_numpy()
    assert s["global_risk"] == pytest.approx(rk.mean())
    assert s["expected_reidentifications"] == pytest.approx(rk.sum())
    assert s["global_risk_percent"] == pytest.approx(100 * rk.mean())
    assert s["sample_uniques"] == int((sizes == 1).sum())
    assert s["records_above_threshold"] == int((rk > 0.05).sum())
    assert s["k_violations"] == {k: int((sizes < k).sum()) for k in (2, 3, 5)}
    assert s["household_expected_reidentifications"] == pytest.approx(rec["household_risk"].sum())
    assert s["sampling_fraction"] == pytest.approx(len(survey) / survey["w"].sum())


def test_records_keep_the_input_order_and_index(survey):
    shuffled = survey.sample(frac=1, random_state=1)
    a = incrowd.risk(survey, QIS, weight="w").records
    b = incrowd.risk(shuffled, QIS, weight="w").records
    assert list(b.index) == list(shuffled.index)
    pd.testing.assert_frame_equal(a.loc[shuffled.index], b)


def test_suda2_columns_come_from_suda2(survey):
    pytest.importorskip("incrowd.reporting._suda2")
    from incrowd.reporting._suda2 import suda2

    rec = incrowd.risk(survey, QIS).records
    score, dis = suda2(survey[QIS])
    np.testing.assert_allclose(rec["suda_score"].to_numpy(), score)
    np.testing.assert_allclose(rec["suda_dis_score"].to_numpy(), dis)


def test_population_uniqueness_from_the_class_sizes_and_the_sampling_fraction(survey):
    pytest.importorskip("incrowd.privacy._uniqueness")
    from incrowd.privacy._uniqueness import population_uniqueness

    survey.loc[3, "age"] = np.nan  # a missing value is a class value of its own here
    sizes = survey.groupby(QIS, dropna=False).size().to_numpy()
    by_weight = incrowd.risk(survey, QIS, weight="w").summary()["population_uniqueness"]
    assert by_weight == population_uniqueness(sizes, len(survey) / survey["w"].sum())
    by_population = incrowd.risk(survey, QIS, weight="w", population=10**6).summary()
    assert by_population["sampling_fraction"] == pytest.approx(len(survey) / 10**6)
    assert by_population["population_uniqueness"] == population_uniqueness(sizes, len(survey) / 10**6)
    assert "population_uniqueness" not in incrowd.risk(survey, QIS).summary()


def test_without_weight_the_sample_is_the_population(survey):
    result = incrowd.risk(survey, QIS)
    rec = result.records
    np.testing.assert_allclose(rec["individual_risk"], 1 / rec["fk"])
    np.testing.assert_array_equal(rec["Fk"], rec["fk"])
    assert "sampling_fraction" not in result.summary()


def test_population_without_weight_is_a_simple_random_sample(survey):
    result = incrowd.risk(survey, QIS, population=30_000)
    rec = result.records
    np.testing.assert_allclose(rec["Fk"], rec["fk"] * 100)
    expected = sr.individual_risk(rec["fk"].to_numpy(float), rec["fk"].to_numpy(float) * 100)
    np.testing.assert_allclose(rec["individual_risk"], expected)
    assert result.summary()["sampling_fraction"] == pytest.approx(0.01)


def test_missing_values_as_text_and_as_nan_are_one_missing_value():
    as_nan = pd.DataFrame({"a": [1.0, np.nan, 1.0, 2.0], "b": ["x", "y", None, "y"]})
    as_text = pd.DataFrame({"a": ["1", "NA", "1.0", "2"], "b": ["x", "y", "", "y"]})
    a = incrowd.risk(as_nan, ["a", "b"]).records
    b = incrowd.risk(as_text, ["a", "b"]).records
    np.testing.assert_array_equal(a["fk"], b["fk"])
    # a missing value matches any value: (NA, y) matches (2, y) and (1, NA); (1, NA) matches (1, x)
    assert a["fk"].tolist() == [2, 3, 3, 2]


@pytest.mark.parametrize("kwargs, error, words", [
    ({"quasi_identifiers": ["region", "nope"]}, DataError, "'nope'"),
    ({"quasi_identifiers": []}, ParameterError, "quasi_identifiers"),
    ({"quasi_identifiers": ["sex", "sex"]}, ParameterError, "twice"),
    ({"weight": "nope"}, DataError, "weight column 'nope'"),
    ({"weight": "sex"}, ParameterError, "also a quasi-identifier"),
    ({"household": "nope"}, DataError, "household column 'nope'"),
    ({"threshold": 0}, ParameterError, "threshold"),
    ({"threshold": 1.5}, ParameterError, "threshold"),
    ({"population": 10}, ParameterError, "population"),
])
def test_bad_parameters_are_named(survey, kwargs, error, words):
    args = {"quasi_identifiers": QIS, **kwargs}
    with pytest.raises(error, match=words):
        incrowd.risk(survey, args.pop("quasi_identifiers"), **args)


@pytest.mark.parametrize("value, shown", [(0.0, "0.0"), (np.nan, "the weight is missing"), (-2.0, "-2.0")])
def test_bad_weights_name_the_row(survey, value, shown):
    survey.loc[7, "w"] = value
    with pytest.raises(DataError, match=f"weight column 'w', row 8: {shown}"):
        incrowd.risk(survey, QIS, weight="w")


@pytest.mark.parametrize("value, shown", [(0.5, "0.5"), (0.999, "0.999"), (5e-324, "5e-324")])
def test_weights_below_one_are_refused_naming_the_row(survey, value, shown):
    # a weight counts the people a respondent stands for: below 1 it made risks above 1
    survey.loc[7, "w"] = value
    with pytest.raises(DataError, match=f"weight column 'w', row 8: {shown} is below 1") as exc:
        incrowd.risk(survey, QIS, weight="w")
    assert "\n" not in str(exc.value)
    survey.loc[7, "w"] = 1.0  # a weight of exactly 1 is the respondent alone
    assert incrowd.risk(survey, QIS, weight="w").summary()["highest_individual_risk"] <= 1.0


def test_weights_whose_total_overflows_are_one_line_naming_the_column(survey):
    survey["w"] = 1e308
    with pytest.raises(DataError, match="weight column 'w'") as exc:
        incrowd.risk(survey, QIS, weight="w")
    assert "sampling_fraction" not in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("kwargs", [{"population": 1e19}, {"population": 1e300}, {"population": 1.7976931348623157e308},
                                    {"weight": "w"}])
@pytest.mark.filterwarnings("error")  # an overflow warning would reach the user's terminal
def test_a_vanishing_sampling_fraction_withholds_estimates_rather_than_failing(survey, kwargs):
    # weights near 1e16 (or a population of 1e17) leave a sampling fraction near 1e-16; the keys
    # leave sample uniques and pairs, so that every model is fitted
    survey["w"] = survey["w"] * 1e14
    survey["block"] = survey["hh"] // 10
    s = incrowd.risk(survey, [*QIS, "block"], **kwargs).summary()
    u = s["population_uniqueness"]
    for model in ("pitman", "zayatz", "snb", "dankar"):
        assert u[model] is None or 0.0 <= u[model] <= 1.0, (model, u[model])
    assert 0.0 <= s["global_risk"] <= 1.0


def test_missing_household_id_names_the_row(survey):
    survey["hh"] = survey["hh"].astype(object)
    survey.loc[4, "hh"] = "NA"
    with pytest.raises(DataError, match="household column 'hh', row 5"):
        incrowd.risk(survey, QIS, household="hh")


def test_json_and_html(survey, tmp_path):
    result = incrowd.risk(survey, QIS, weight="w", household="hh")
    doc = json.loads(result.to_json(records=True))
    assert doc["summary"]["k_violations"] == {str(k): v for k, v in result.summary()["k_violations"].items()}
    assert len(doc["records"]) == len(survey)
    assert doc["riskiest"][0]["individual_risk"] == pytest.approx(result.records["individual_risk"].max())
    result.write(tmp_path / "r.html")
    result.write(tmp_path / "r.json")
    page = (tmp_path / "r.html").read_text()
    assert "Re-identification risk" in page and "expected reidentifications" in page
    assert "<script" not in page and "http" not in page.split("</style>")[1].split("<h2>Definitions")[0]
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["global_risk"] == pytest.approx(
        result.summary()["global_risk"])


def test_exported_at_top_level():
    assert incrowd.risk is incrowd.reporting.risk
    assert "risk" in incrowd.__all__ and "RiskResult" in incrowd.__all__


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["a", "b", "NA"]), st.floats(1, 1000)),
                min_size=1, max_size=40))
def test_risk_properties(rows):
    frame = pd.DataFrame(rows, columns=["x", "y", "w"])
    result = incrowd.risk(frame, ["x", "y"], weight="w")
    rec, s = result.records, result.summary()
    rk = rec["individual_risk"].to_numpy()
    assert ((rk >= 0) & (rk <= 1 + 1e-12)).all()
    assert (rec["Fk"].to_numpy() >= rec["fk"].to_numpy() * frame["w"].min() * (1 - 1e-12)).all()
    assert s["k_violations"][2] <= s["k_violations"][3] <= s["k_violations"][5] <= len(frame)
    assert s["sample_uniques"] == s["k_violations"][2]


# ---- the command ---------------------------------------------------------------------------

@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_cli_json_equals_the_api(survey, tmp_path, runner):
    path = tmp_path / "s.csv"
    survey.to_csv(path, index=False)
    out = runner.invoke(app, ["risk", str(path), "--qi", "region,sex,age", "--weight", "w", "--household", "hh",
                              "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    api = incrowd.risk(survey, QIS, weight="w", household="hh").summary()
    assert doc["summary"]["expected_reidentifications"] == pytest.approx(api["expected_reidentifications"], rel=1e-12)
    assert doc["summary"]["household_risk"] == pytest.approx(api["household_risk"], rel=1e-12)


def test_cli_reads_statistical_files_and_writes_html(survey, tmp_path, runner):
    path = tmp_path / "s.sav"
    incrowd.write_table(survey.assign(sex=survey["sex"].map({"m": 1, "f": 2})), path)
    page = tmp_path / "risk.html"
    out = runner.invoke(app, ["risk", str(path), "--qi", "region,sex,age", "--weight", "w", "-o", str(page)])
    assert out.exit_code == 0, out.output
    assert "expected re-identifications" in out.stdout
    assert page.read_text().startswith("<!doctype html>")


def test_riskiest_rows_show_a_user_missing_code_by_its_label_not_as_null(tmp_path, runner):
    import pyreadstat

    # the single row of code 99 ("Not stated", user-missing) is the riskiest: a value of its own
    frame = pd.DataFrame({"edu": [1.0] * 4 + [2.0] * 4 + [99.0], "grp": [1.0] * 8 + [99.0]})
    pyreadstat.write_sav(frame, str(tmp_path / "s.sav"), missing_ranges={"edu": [99.0], "grp": [99.0]},
                         variable_value_labels={"edu": {1.0: "Primary", 2.0: "Tertiary", 99.0: "Not stated"}})
    out = runner.invoke(app, ["risk", str(tmp_path / "s.sav"), "--qi", "edu,grp", "--json"])
    assert out.exit_code == 0, out.output
    top = json.loads(out.stdout)["riskiest"][0]
    assert (top["row"], top["fk"], top["edu"], top["grp"]) == (9, 1, "Not stated", "99")
    assert json.loads(out.stdout)["riskiest"][1]["edu"] == 1.0  # a value keeps its code


@pytest.mark.parametrize("args, words", [
    (["--qi", "region,nope"], "'nope'"),
    ([], "--qi is required"),
    (["--qi", "region", "--weight", "sex"], "weight column 'sex', row 1"),
    (["--qi", "region", "-o", "r.txt"], ".html, .json, .csv or .parquet"),
    (["--qi", "region", "--threshold", "2"], "--threshold"),
])
def test_cli_errors_are_one_line_and_write_nothing(survey, tmp_path, runner, args, words, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "s.csv"
    survey.to_csv(path, index=False)
    before = set(tmp_path.iterdir())
    out = runner.invoke(app, ["risk", str(path), *args, "-o", "r.html"] if "-o" not in args
                        else ["risk", str(path), *args])
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], out.stderr
    assert set(tmp_path.iterdir()) == before


@pytest.mark.parametrize("args, words", [
    (["--weight", "w"], "weight column 'w', row 3: 0.25 is below 1"),
    (["--population", "1e19"], None),
    (["--population", "1e300"], None),
])
def test_cli_weights_and_population_at_the_edges(survey, tmp_path, runner, args, words):
    import warnings

    survey.loc[2, "w"] = 0.25
    survey["block"] = survey["hh"] // 10  # sample uniques and pairs: every model is fitted
    path = tmp_path / "s.csv"
    survey.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning would reach the user's terminal
        out = runner.invoke(app, ["risk", str(path), "--qi", "region,sex,age,block", *args])
    if words is None:
        assert out.exit_code == 0, out.output
        line = next(t for t in out.stdout.splitlines() if t.strip().startswith("population uniques"))
        assert len(line) < 200, line  # counts near 1e300 in short form, not 300 digits
        return
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], out.stderr


def _coded_survey(path):
    """A .sav whose weight holds the user-missing code -9 'Refused' in row 3 and whose household
    id holds the user-missing code -8 in row 5."""
    import pyreadstat

    frame = pd.DataFrame({"a": [1.0, 1, 2, 2, 1, 2], "b": [1.0, 2, 1, 2, 1, 2], "w": [10.0, 10, -9, 10, 10, 10],
                          "hh": [1.0, 1, 2, 2, -8, 3]})
    pyreadstat.write_sav(frame, str(path), missing_ranges={"w": [-9.0], "hh": [-8.0]},
                         variable_value_labels={"w": {-9.0: "Refused"}})
    return path


@pytest.mark.parametrize("args, words", [
    (["--weight", "w"], "weight column 'w', row 3: -9 (user-missing, 'Refused')"),
    (["--household", "hh"], "household column 'hh', row 5: -8 (user-missing)"),
])
def test_cli_messages_show_a_user_missing_code_as_the_file_holds_it(tmp_path, runner, args, words):
    path = _coded_survey(tmp_path / "s.sav")
    out = runner.invoke(app, ["risk", str(path), "--qi", "a,b", *args])
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], out.stderr
    assert "nan" not in lines[0].lower(), lines[0]


@pytest.mark.parametrize("kwargs, words", [
    ({"threshold": np.float64(2.0)}, "got 2.0"),
    ({"population": np.float64(5.0)}, "got 5.0"),
    ({"weight": "w", "cell": np.nan}, "row 8: the weight is missing"),
    ({"weight": "w", "cell": np.float64(-2.5)}, "row 8: -2.5 is not a positive number"),
])
def test_messages_never_show_a_numpy_repr(survey, kwargs, words):
    if "cell" in kwargs:
        survey.loc[7, "w"] = kwargs.pop("cell")
    with pytest.raises((DataError, ParameterError)) as exc:
        incrowd.risk(survey, QIS, **kwargs)
    assert words in str(exc.value) and "np." not in str(exc.value), str(exc.value)


# ---- the report, when a weight is known ----------------------------------------------------
# the keys as categories, so that the report skips its (slower) numeric measures

def _categorical(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(region="r" + frame["region"].astype(str), age="a" + frame["age"].astype(str))


def test_report_gains_the_weighted_risk(survey):
    release = survey.copy()
    release["age"] = np.where(release["age"] > 4, 5, release["age"])
    survey, release = _categorical(survey), _categorical(release)
    rep = incrowd.report(survey, release, QIS, weight="w", figures=False)
    expected = incrowd.risk(release, QIS, weight="w").summary()
    got = rep.risk["sample_risk"]
    assert got["weight"] == "w"
    for key in ("global_risk", "expected_reidentifications", "highest_individual_risk", "records_above_threshold"):
        assert got[key] == pytest.approx(expected[key])
    assert "sample_risk" not in incrowd.report(survey, release, QIS, figures=False).risk


def test_report_weight_with_suppressed_rows_uses_each_kept_rows_weight(survey):
    survey = _categorical(survey)
    kept = np.arange(0, len(survey), 2)
    release = survey.iloc[kept].reset_index(drop=True)
    rep = incrowd.report(survey, release, QIS, kept_rows=kept, weight="w", figures=False)
    expected = incrowd.risk(release, QIS, weight="w").summary()
    assert rep.risk["sample_risk"]["expected_reidentifications"] == pytest.approx(expected["expected_reidentifications"])


def test_report_command_weight(survey, tmp_path, runner):
    survey = _categorical(survey)
    survey.to_csv(tmp_path / "o.csv", index=False)
    survey.to_csv(tmp_path / "r.csv", index=False)
    out = runner.invoke(app, ["report", str(tmp_path / "o.csv"), str(tmp_path / "r.csv"), "--qi", "region,sex,age",
                              "--weight", "w", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["risk"]["sample_risk"]["global_risk"] == pytest.approx(
        incrowd.risk(survey, QIS, weight="w").summary()["global_risk"])
