"""The report's verdict: every threshold rule (pass, review, fail), its driver and next step, the
thresholds from the spec's [report] table and from --verdict-threshold; --hierarchies and --spec
on ``incrowd report``; a column published unchanged has NCP 0 and 0 % changed."""

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
from incrowd.exceptions import ParameterError
from incrowd.generalization._hierarchy import hierarchy_from_rows
from incrowd.privacy import DistinctL, TCloseness
from incrowd.reporting._align import align
from incrowd.reporting._verdict import DEFAULTS, HIGHER_IS_BETTER, thresholds_from, verdict


def _line(rep, measure):
    found = [v for v in rep.verdict if v["measure"] == measure]
    assert found, [v["measure"] for v in rep.verdict]
    return found[0]


def _grid(n_per=6, odd=None):
    """Classes of ``n_per`` rows over (sex, region); ``odd`` rows of one extra class."""
    rows = [{"sex": s, "region": r, "job": "x", "income": "lo" if i % 2 else "hi"}
            for s in ("m", "f") for r in ("n", "s") for i in range(n_per)]
    for i in range(odd or 0):
        rows.append({"sex": "m", "region": "e", "job": "x", "income": "lo" if i % 2 else "hi"})
    return pd.DataFrame(rows)


# --- k and re-identification ------------------------------------------------------------------

def test_a_promised_k_broken_fails_with_the_quasi_identifier_that_singles_out():
    data = _grid(odd=2)  # region "e" holds a class of 2
    rep = incrowd.report(data, data, ["sex", "region"], k=3, figures=False)
    line = _line(rep, "k")
    assert (line["value"], line["threshold"], line["status"], line["promised"]) == (2, 3, "fail", True)
    assert "region" in line["driver"] and "2 records in classes below 3" in line["driver"]
    assert line["next_step"] == "suppress 2 cells of region"
    # with region's hierarchy the step is to generalize it
    h = hierarchy_from_rows("region", [["n", "ns", "*"], ["s", "ns", "*"], ["e", "e", "*"]], "(test)")
    rep = incrowd.report(data, data, ["sex", "region"], k=3, hierarchies={"region": h}, figures=False)
    assert _line(rep, "k")["next_step"] == "generalize region one level"


def test_k_kept_passes_and_carries_no_driver():
    data = _grid()
    line = _line(incrowd.report(data, data, ["sex", "region"], k=6, figures=False), "k")
    assert line["status"] == "pass" and line["driver"] is None and line["next_step"] is None


def test_k_without_a_promise_is_reviewed_below_five_and_fails_on_a_unique_record():
    data = _grid(n_per=6, odd=3)
    assert _line(incrowd.report(data, data, ["sex", "region"], figures=False), "k")["status"] == "review"
    data = _grid(n_per=6, odd=1)
    line = _line(incrowd.report(data, data, ["sex", "region"], figures=False), "k")
    assert (line["status"], line["threshold"], line["promised"]) == ("fail", 5, False)


def test_reidentification_risk_is_reviewed_above_its_threshold_and_fails_above_the_fail_one():
    assert _line(incrowd.report(_grid(), _grid(), ["sex", "region"], figures=False), "prosecutor_risk")["status"] == "pass"
    data = _grid(odd=4)  # highest 1/4
    line = _line(incrowd.report(data, data, ["sex", "region"], figures=False), "prosecutor_risk")
    assert (line["value"], line["status"]) == (0.25, "review") and "region" in line["driver"]
    data = _grid(odd=1)
    assert _line(incrowd.report(data, data, ["sex", "region"], figures=False), "prosecutor_risk")["status"] == "fail"


def test_marketer_risk_against_its_threshold():
    data = _grid(n_per=6)  # 4 classes of 6: 1/6 expected re-identifications
    line = _line(incrowd.report(data, data, ["sex", "region"], figures=False), "marketer_risk")
    assert line["value"] == pytest.approx(1 / 6) and line["status"] == "review"
    rep = incrowd.report(data, data, ["sex", "region"], thresholds={"marketer_risk": 0.2}, figures=False)
    assert _line(rep, "marketer_risk")["status"] == "pass"


# --- l, entropy l, t --------------------------------------------------------------------------

def test_l_fails_when_promised_and_is_reviewed_otherwise():
    data = _grid()
    data.loc[(data.sex == "m") & (data.region == "n"), "income"] = "hi"  # one class, one value
    line = _line(incrowd.report(data, data, ["sex", "region"], sensitive=["income"], models=[DistinctL(2)], figures=False),
                 "l (income)")
    assert (line["value"], line["status"]) == (1, "fail")
    assert "25 % of records" in line["driver"] and line["next_step"] == "l-diversity on income (l = 2)"
    line = _line(incrowd.report(data, data, ["sex", "region"], sensitive=["income"], figures=False), "l (income)")
    assert line["status"] == "review"


def test_entropy_l_is_reviewed_below_its_threshold():
    data = _grid()
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], figures=False)
    assert _line(rep, "entropy_l (income)")["status"] == "pass"  # exp(log 2) = 2
    data.loc[data.index[:5], "income"] = "hi"  # 5 of 6 in the first class
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], figures=False)
    line = _line(rep, "entropy_l (income)")
    assert line["value"] < 2 and line["status"] == "review" and "income" in line["next_step"]
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], thresholds={"entropy_l": 1.5},
                         figures=False)
    assert _line(rep, "entropy_l (income)")["status"] == "pass"


def test_t_fails_when_promised_and_names_the_records_in_far_classes():
    data = _grid()
    data.loc[(data.sex == "m") & (data.region == "n"), "income"] = "hi"
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], models=[TCloseness(0.2)], figures=False)
    line = _line(rep, "t (income)")
    # income is "hi" in 15 of 24 rows; the all-"hi" class: (|1 - 15/24| + |0 - 9/24|) / 2
    assert line["value"] == pytest.approx(0.375)
    assert line["status"] == "fail" and line["next_step"] == "t-closeness on income (t = 0.2)"
    assert line["driver"].startswith("income: 6 records")
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], figures=False)
    assert _line(rep, "t (income)")["status"] == "review"  # above the default 0.3 without a promise
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], thresholds={"t": 0.4}, figures=False)
    assert _line(rep, "t (income)")["status"] == "pass"


def test_promised_l_and_t_come_from_the_release_summary():
    data = _grid()
    data.loc[(data.sex == "m") & (data.region == "n"), "income"] = "hi"
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], figures=False,
                         release_summary={"l": 2, "t": 0.2})
    assert _line(rep, "l (income)")["status"] == "fail" and _line(rep, "t (income)")["status"] == "fail"


def test_l_and_t_without_a_promise_say_they_are_checked_against_a_threshold_not_a_promise():
    data = _grid()
    data.loc[(data.sex == "m") & (data.region == "n"), "income"] = "hi"
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], figures=False)
    for name, limit in (("l", "2"), ("t", "0.3")):
        line = _line(rep, f"{name} (income)")
        assert (line["status"], line["promised"]) == ("review", False)
        assert line["driver"].endswith(f"checked against a default threshold ({name} = {limit}), not a promise: "
                                       f"the release set no {name}")
        assert line["next_step"].startswith("if income needs protecting: ")
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], figures=False,
                         thresholds={"l": 3})
    assert "against the report's threshold (l = 3)" in _line(rep, "l (income)")["driver"]
    # a promise broken reads as one: no word of a default
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], models=[DistinctL(2), TCloseness(0.2)],
                         figures=False)
    assert not any("threshold" in _line(rep, m)["driver"] for m in ("l (income)", "t (income)"))


# --- numeric risks and the loss ---------------------------------------------------------------

def _numbers(n=60, seed=0, noise=0.0):
    rng = np.random.default_rng(seed)
    x = pd.DataFrame({"a": rng.normal(50, 10, n).round(1), "b": rng.normal(0, 1, n)})
    y = x + noise * rng.normal(size=x.shape) * x.std().to_numpy()
    return x, y


@pytest.mark.slow
def test_record_linkage_and_drisk_rules():
    x, y = _numbers()
    rep = incrowd.report(x, y, ["a", "b"], figures=False)  # the release is the original
    line = _line(rep, "record_linkage")
    assert (line["value"], line["status"]) == (1.0, "fail") and line["next_step"] == "raise k"
    assert _line(rep, "drisk")["status"] == "review" and "within 0.05 sd" in _line(rep, "drisk")["driver"]
    x, y = _numbers(noise=3.0)
    rep = incrowd.report(x, y, ["a", "b"], figures=False)
    assert _line(rep, "drisk")["status"] == "pass"
    value = _line(rep, "record_linkage")["value"]
    assert _line(rep, "record_linkage")["status"] == ("pass" if value <= 0.1 else "review" if value <= 0.5 else "fail")
    rep = incrowd.report(x, y, ["a", "b"], figures=False, thresholds={"record_linkage": 1.0})
    assert _line(rep, "record_linkage")["status"] == "pass"


def test_drisk_of_a_mostly_zero_column_names_the_zeros_not_k():
    # a capital-loss-like amount: 0 in 80 % of rows; the zeros stay zeros in any class of zeros
    rng = np.random.default_rng(3)
    x = pd.DataFrame({"loss": np.where(rng.random(100) < 0.8, 0.0, rng.normal(1500, 300, 100).round())})
    y = x.assign(loss=np.where(x["loss"] == 0, 0.0, x["loss"] + rng.normal(0, 900, 100)))
    line = _line(incrowd.report(x, y, ["loss"], figures=False), "drisk")
    assert line["status"] == "review"
    assert "loss is published within 0.05 sd" in line["driver"] and "of its values are 0" in line["driver"]
    assert "bottom-code loss" in line["next_step"] and line["next_step"] != "raise k"


def test_information_loss_names_the_column_that_carries_it():
    x, _ = _numbers()
    y = x.assign(b=x["b"].mean())  # b published as its mean: all of b's spread lost, none of a's
    line = _line(incrowd.report(x, y, ["a", "b"], figures=False), "information_loss")
    assert line["value"] == pytest.approx(0.5) and line["status"] == "review"
    assert line["driver"].startswith("b carries 100 % of the loss")
    y = x.assign(a=x["a"].mean(), b=x["b"].mean())
    line = _line(incrowd.report(x, y, ["a", "b"], figures=False), "information_loss")
    assert line["value"] == pytest.approx(1.0) and line["status"] == "fail"


def test_drisk_rmd_attacks_and_weighted_risks_are_judged_when_present():
    x, y = _numbers()
    a = align(x, y, ["a", "b"])
    risk = {"drisk_rmd": {"risk2": 0.02}, "attacks": {"linkability": {"risk": 0.3},
                                                      "singling_out": {"univariate": {"risk": 0.0}}},
            "sample_risk": {"highest_individual_risk": 0.6, "global_risk": 0.01}}
    lines = {v["measure"]: v for v in verdict(a, risk, {})}
    assert lines["drisk_rmd"]["status"] == "review"
    assert lines["attack: linkability"]["status"] == "review"
    assert lines["attack: singling out, univariate"]["status"] == "pass"
    assert lines["weighted_highest_risk"]["status"] == "fail"
    assert lines["weighted_global_risk"]["status"] == "pass"


# --- categorical loss and suppression ---------------------------------------------------------

def test_ncp_names_a_column_without_hierarchy_published_as_star():
    data = _grid()
    release = data.assign(region="*")
    rep = incrowd.report(data, release, ["sex", "region"], figures=False)
    line = _line(rep, "ncp")
    assert line["value"] == pytest.approx(0.5) and line["status"] == "review"
    assert line["driver"] == "region has NCP 1"
    assert line["next_step"] == "give region a hierarchy (it is published as '*' throughout)"
    release = data.assign(region="*", sex="*")
    assert _line(incrowd.report(data, release, ["sex", "region"], figures=False), "ncp")["status"] == "fail"


def test_suppressed_share_is_reviewed_with_the_rare_value_behind_it():
    data = _grid(odd=2)
    kept = np.flatnonzero(data.region.to_numpy() != "e")
    rep = incrowd.report(data, data.iloc[kept], ["sex", "region"], kept_rows=kept, figures=False)
    line = _line(rep, "suppressed_share")
    assert line["value"] == pytest.approx(2 / 26) and line["status"] == "review"
    assert "region holds a value rarer than k in 2" in line["driver"] and "e (2)" in line["driver"]
    assert line["next_step"] == "suppress 2 cells of region"


def test_suppressed_share_names_the_withheld_values_by_their_value_labels(tmp_path):
    import pyreadstat

    # region coded 1, 2, 3 (labelled) and 99 "Not stated" (user-missing): the rows of 3 and 99 are
    # too few and are withheld
    region = np.array([1.0] * 12 + [2.0] * 12 + [3.0] * 2 + [99.0] * 3)
    frame = pd.DataFrame({"sex": np.ones(region.size), "region": region})
    pyreadstat.write_sav(frame, str(tmp_path / "s.sav"), missing_ranges={"region": [99.0]},
                         variable_value_labels={"region": {1.0: "North", 2.0: "South", 3.0: "East",
                                                           99.0: "Not stated"}})
    data = incrowd.read_table(tmp_path / "s.sav")
    kept = np.flatnonzero(region < 3)
    rep = incrowd.report(data, data.iloc[kept], ["sex", "region"], kept_rows=kept, figures=False)
    line = _line(rep, "suppressed_share")
    assert line["status"] == "review"
    assert "region holds a value rarer than k in 5 of them (most withheld: Not stated (3), East (2))" in line["driver"]


def test_a_column_published_unchanged_has_ncp_0_and_0_percent_changed():
    data = _grid(odd=2)
    kept = np.flatnonzero(data.region.to_numpy() != "e")
    release = data.iloc[kept].assign(region="*")
    h = hierarchy_from_rows("sex", [["m", "*"], ["f", "*"]], "(test)")
    cat = incrowd.report(data, release, ["sex", "region"], kept_rows=kept, hierarchies={"sex": h},
                         figures=False).utility["categorical"]
    assert cat["changed_share"]["sex"] == 0.0 and cat["ncp"]["sex"] == 0.0 and cat["height"]["sex"] == 0.0
    assert cat["changed_share"]["region"] == 1.0 and cat["ncp"]["region"] == 1.0
    assert cat["suppressed_cells"] == {"sex": 0, "region": 24} and cat["suppressed_rows"] == 2
    assert cat["mean_ncp"] == 0.5 and cat["mean_ncp_columns"] == ["sex", "region"]
    # every withheld row costing 1 in each column, over all 26 rows
    assert cat["mean_ncp_all_rows"] == pytest.approx((2 / 26 + 1) / 2)
    assert cat["frequencies"]["region"][0] == {"value": "*", "original": 0, "release": 24}


def test_mean_ncp_says_which_columns_it_covers():
    data = _grid()
    release = data.assign(region=data.region.map({"n": "ns", "s": "ns"}))  # recoded, no hierarchy known
    rep = incrowd.report(data, release, ["sex", "region"], figures=False)
    cat = rep.utility["categorical"]
    assert cat["ncp"]["region"] is None and cat["mean_ncp_columns"] == ["sex"] and cat["ncp_undefined"] == ["region"]
    assert any("['region']" in a and "--hierarchies" in a for a in rep.assumptions)
    h = hierarchy_from_rows("region", [["n", "ns", "*"], ["s", "ns", "*"]], "(test)")
    cat = incrowd.report(data, release, ["sex", "region"], hierarchies={"region": h}, figures=False).utility["categorical"]
    assert cat["ncp"]["region"] == 1.0 and cat["mean_ncp_columns"] == ["sex", "region"]


# --- thresholds -------------------------------------------------------------------------------

def test_thresholds_refuse_unknown_names_and_bad_values():
    with pytest.raises(ParameterError, match="unknown threshold 'entropy'"):
        thresholds_from({"entropy": 1})
    with pytest.raises(ParameterError, match="t must be a number >= 0"):
        thresholds_from({"t": -1})
    with pytest.raises(ParameterError, match="unknown threshold"):
        incrowd.report(_grid(), _grid(), ["sex"], thresholds={"nope": 1}, figures=False)


def test_the_spec_report_table_sets_thresholds():
    spec = incrowd.publishing.load_spec({"privacy": {"k": 2}, "columns": {"sex": "categorical"},
                                         "report": {"entropy_l": 1.5, "t": 0.2}})
    assert spec.report_thresholds == {"entropy_l": 1.5, "t": 0.2}
    assert spec.to_dict()["report"] == {"entropy_l": 1.5, "t": 0.2}
    with pytest.raises(ParameterError, match=r"\[report\]: unknown threshold 'l_entropy'"):
        incrowd.publishing.load_spec({"privacy": {"k": 2}, "columns": {"sex": "categorical"},
                                      "report": {"l_entropy": 1.5}})
    result = incrowd.publish(_grid(), {"privacy": {"k": 2}, "columns": {"sex": "categorical", "region": "categorical",
                                                                        "income": "sensitive"},
                                       "report": {"entropy_l": 3}})
    rep = incrowd.report(_grid(), result.table, figures=False, **result.report_options())
    assert _line(rep, "entropy_l (income)")["threshold"] == 3.0


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(0, 5))
def test_every_status_follows_its_value_and_threshold(seed, n_per, odd):
    rng = np.random.default_rng(seed)
    data = _grid(n_per=n_per, odd=odd)
    data["income"] = rng.choice(["lo", "hi", "mid"], len(data))
    data["a"] = rng.normal(size=len(data))
    release = data.assign(a=data["a"].round(0))
    rep = incrowd.report(data, release, ["sex", "region", "a"], sensitive=["income"], figures=False)
    for line in rep.verdict:
        name = line["measure"].split(" (")[0]
        key = {"prosecutor_risk": "reidentification_risk"}.get(name, name)
        higher = key in HIGHER_IS_BETTER
        slack = 1e-9 * max(1.0, abs(line["threshold"]))
        within = (line["value"] >= line["threshold"] - slack) if higher else (line["value"] <= line["threshold"] + slack)
        assert (line["status"] == "pass") == within, line
        assert (line["driver"] is None) == (line["status"] == "pass")
        fail = DEFAULTS.get(f"{key}_fail")
        if line["status"] != "pass" and fail is not None and not line.get("promised"):
            beyond = line["value"] < fail if higher else line["value"] > fail
            assert (line["status"] == "fail") == beyond, line


# --- the command line -------------------------------------------------------------------------

def _files(tmp_path):
    data = _grid()
    data.insert(0, "id", [f"p{i}" for i in range(len(data))])
    release = data.drop(columns=["id"]).assign(region="ns")
    data.to_csv(tmp_path / "orig.csv", index=False)
    release.to_csv(tmp_path / "rel.csv", index=False)
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "region.csv").write_text("n;ns;*\ns;ns;*\n")
    (folder / "sex.csv").write_text("m;*\nf;*\n")
    return tmp_path / "orig.csv", tmp_path / "rel.csv", folder


@pytest.mark.slow
def test_cli_hierarchies_give_the_ncp_of_generalized_columns(tmp_path):
    orig, rel, folder = _files(tmp_path)
    runner = CliRunner()
    base = ["report", str(orig), str(rel), "--qi", "sex,region", "--id", "id", "--json"]
    without = json.loads(runner.invoke(app, base).stdout)["utility"]["categorical"]
    assert without["ncp"]["region"] is None and without["mean_ncp_columns"] == ["sex"]
    got = runner.invoke(app, [*base, "--hierarchies", str(folder)])
    assert got.exit_code == 0, got.output
    cat = json.loads(got.stdout)["utility"]["categorical"]
    assert cat["ncp"] == {"sex": 0.0, "region": 1.0} and cat["changed_share"] == {"sex": 0.0, "region": 1.0}
    assert cat["mean_ncp_columns"] == ["sex", "region"]
    bad = runner.invoke(app, [*base, "--hierarchies", str(tmp_path / "none")])
    assert bad.exit_code == 2 and "is not a folder" in bad.output


@pytest.mark.slow
def test_cli_spec_gives_roles_promises_and_thresholds(tmp_path):
    orig, rel, folder = _files(tmp_path)
    spec = tmp_path / "release.toml"
    spec.write_text('[privacy]\nk = 7\n\n[columns]\nid = "identifier"\n'
                    'sex = { role = "categorical", hierarchy = "h/sex.csv" }\n'
                    'region = { role = "categorical", hierarchy = "h/region.csv" }\nincome = "sensitive"\n\n'
                    '[report]\nentropy_l = 1.5\n')
    runner = CliRunner()
    got = runner.invoke(app, ["report", str(orig), str(rel), "--spec", str(spec), "--json"])
    assert got.exit_code == 0, got.output
    out = json.loads(got.stdout)
    assert list(out)[0] == "verdict"
    k = [v for v in out["verdict"] if v["measure"] == "k"][0]
    assert (k["threshold"], k["status"], k["promised"]) == (7, "pass", True)  # one class of 24
    assert [v for v in out["verdict"] if v["measure"] == "entropy_l (income)"][0]["threshold"] == 1.5
    assert out["utility"]["categorical"]["ncp"]["region"] == 1.0
    got = runner.invoke(app, ["report", str(orig), str(rel), "--spec", str(spec), "--json",
                              "--verdict-threshold", "entropy_l=2.5"])
    assert [v for v in json.loads(got.stdout)["verdict"] if v["measure"] == "entropy_l (income)"][0]["threshold"] == 2.5
    bad = runner.invoke(app, ["report", str(orig), str(rel), "--spec", str(spec), "--json",
                              "--verdict-threshold", "entropy_l"])
    assert bad.exit_code == 2 and "give NAME=NUMBER" in bad.output
    text = runner.invoke(app, ["report", str(orig), str(rel), "--spec", str(spec), "-o", str(tmp_path / "r.json")])
    assert text.exit_code == 0 and text.output.lstrip().startswith("k ")


def test_a_promised_t_survives_the_weighted_risk_and_the_weighted_lines_are_judged():
    data = _grid().assign(w=20.0)
    data.loc[(data.sex == "m") & (data.region == "n"), "income"] = "hi"
    rep = incrowd.report(data, data, ["sex", "region"], sensitive=["income"], models=[TCloseness(0.2)], weight="w", figures=False)
    line = _line(rep, "t (income)")
    assert (line["threshold"], line["status"], line["promised"]) == (0.2, "fail", True)
    weighted = _line(rep, "weighted_highest_risk")
    assert weighted["value"] == pytest.approx(rep.risk["sample_risk"]["highest_individual_risk"])
    assert weighted["threshold"] == DEFAULTS["reidentification_risk"]
