"""Benchmark estimates: weighted means by group on the original and the release, their relative
change and the overlap of their confidence intervals, against the definitions written out."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.exceptions import DataError, ParameterError
from incrowd.publishing import BenchmarkEstimate as Estimate
from incrowd.reporting._benchmarks import benchmark_estimates, interval_overlap, weighted_mean


def _by_definition(y, w, confidence=0.95):
    pairs = [(a, b) for a, b in zip(y, w) if not (math.isnan(a) or math.isnan(b))]
    n = len(pairs)
    total = sum(b for _, b in pairs)
    mean = sum(a * b for a, b in pairs) / total
    var = n / (n - 1) * sum((b * (a - mean)) ** 2 for a, b in pairs) / total**2
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return mean, mean - z * math.sqrt(var), mean + z * math.sqrt(var)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e3, 1e3), st.floats(0.1, 50)), min_size=2, max_size=30),
       st.sampled_from([0.9, 0.95, 0.99]))
def test_weighted_mean_and_interval_follow_the_linearization_formula(rows, confidence):
    y = np.array([r[0] for r in rows])
    w = np.array([r[1] for r in rows])
    got = weighted_mean(y, w, confidence)
    mean, low, high = _by_definition(y, w, confidence)
    assert got.mean == pytest.approx(mean, rel=1e-9, abs=1e-9)
    assert got.low == pytest.approx(low, rel=1e-9, abs=1e-9)
    assert got.high == pytest.approx(high, rel=1e-9, abs=1e-9)
    assert got.n == len(rows)


def test_without_weights_the_interval_is_the_usual_one_of_a_mean():
    y = np.array([3.0, 5.0, 10.0, 2.0, 7.5])
    got = weighted_mean(y, np.ones(5))
    se = y.std(ddof=1) / math.sqrt(5)
    assert got.mean == pytest.approx(y.mean())
    assert got.high - got.mean == pytest.approx(1.959963984540054 * se)


@settings(max_examples=60, deadline=None)
@given(st.floats(-100, 100), st.floats(0.01, 50), st.floats(-100, 100), st.floats(0.01, 50))
def test_overlap_is_karrs_measure(a_low, a_width, b_low, b_width):
    from incrowd.reporting._benchmarks import Interval

    a = Interval(a_low + a_width / 2, a_low, a_low + a_width, 10)
    b = Interval(b_low + b_width / 2, b_low, b_low + b_width, 10)
    # brute force: the overlapping length by sampling the line finely enough
    overlap = max(0.0, min(a.high, b.high) - max(a.low, b.low))
    expected = 0.5 * (overlap / a_width + overlap / b_width)
    assert interval_overlap(a, b) == pytest.approx(expected)
    assert interval_overlap(a, b) == pytest.approx(interval_overlap(b, a))
    assert 0.0 <= interval_overlap(a, b) <= 1.0
    assert interval_overlap(a, a) == pytest.approx(1.0)


def _survey(seed=0, n=200):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"income": rng.gamma(2.0, 500.0, n), "region": rng.choice(["north", "south", "east"], n),
                         "sex": rng.choice([1, 2], n), "w": rng.uniform(1, 40, n)})


def test_an_unchanged_release_has_no_change_and_full_overlap_in_every_group():
    frame = _survey()
    rows = benchmark_estimates(frame, frame.copy(), ["income by region", "income"], weight="w")
    assert [r["group"] for r in rows] == [{"region": g} for g in sorted(set(frame["region"]))] + [{}]
    for r in rows:
        assert r["relative_change"] == 0.0
        assert r["ci_overlap"] is True and r["ci_overlap_measure"] == pytest.approx(1.0)


def test_each_group_equals_its_weighted_mean_by_definition_and_change_is_relative():
    frame = _survey(1)
    release = frame.copy()
    release["income"] = release["income"] * 1.1
    rows = benchmark_estimates(frame, release, ["income by region, sex"], weight="w")
    for r in rows:
        part = frame[(frame["region"] == r["group"]["region"]) & (frame["sex"].astype(str) == r["group"]["sex"])]
        mean, low, high = _by_definition(part["income"].tolist(), part["w"].tolist())
        assert r["original"] == pytest.approx(mean)
        assert r["original_ci"] == pytest.approx([low, high])
        assert r["release"] == pytest.approx(mean * 1.1)
        assert r["relative_change"] == pytest.approx(0.1)
    assert len(rows) == frame.groupby(["region", "sex"]).ngroups


def test_a_shifted_release_can_lose_its_overlap():
    frame = _survey(2, n=2000)
    release = frame.copy()
    release["income"] = release["income"] + 10_000
    (row,) = benchmark_estimates(frame, release, ["income"], weight="w")
    assert row["ci_overlap"] is False and row["ci_overlap_measure"] == 0.0


def test_blanked_groups_of_the_release_are_counted_apart():
    frame = _survey(3)
    release = frame.copy()
    release.loc[:9, "region"] = np.nan
    rows = benchmark_estimates(frame, release, ["income by region"], weight="w")
    assert rows[-1]["group"] == {"region": "suppressed"} and rows[-1]["release_rows"] == 10
    assert sum(r["release_rows"] for r in rows) == frame.shape[0]


def test_release_weights_stand_in_for_a_dropped_weight_column():
    frame = _survey(4)
    release = frame.drop(columns="w")
    with_w = benchmark_estimates(frame, release, ["income by sex"], weight="w",
                                 release_weights=frame["w"].to_numpy())
    assert all(r["relative_change"] == 0.0 for r in with_w)


@pytest.mark.parametrize("text", ["", " by region", "income by ", "income by region,"])
def test_a_malformed_estimate_is_one_clear_error(text):
    with pytest.raises(ParameterError, match="VARIABLE by GROUP"):
        Estimate.parse(text)


def test_unknown_or_non_numeric_columns_are_named():
    frame = _survey()
    with pytest.raises(DataError, match="'wages' is not in the original"):
        benchmark_estimates(frame, frame, ["wages"])
    with pytest.raises(DataError, match="'region' is not numeric"):
        benchmark_estimates(frame, frame, ["region by sex"])
    with pytest.raises(DataError, match="group 'town'"):
        benchmark_estimates(frame, frame, ["income by town"])


def test_the_household_release_reports_weighted_mean_income_by_urbrur(tmp_path):
    """The curator's release with income microaggregated, then `incrowd report --spec`: the spec's
    [benchmarks] estimate in the JSON and on the page, equal to the weighted means by definition."""
    import json

    pyreadstat = pytest.importorskip("pyreadstat")
    from _household import WEIGHT
    from benchdata import data_dir
    from test_publish_perturb import release, spec_text
    from typer.testing import CliRunner

    from incrowd.cli import app

    if not (data_dir() / "testdata.csv").is_file():
        pytest.skip("benchmark data not found")
    text = spec_text() + '\n[benchmarks]\nestimates = ["income by urbrur", "expend"]\n'
    done, out = release(tmp_path, text)
    assert done.exit_code == 0, done.output
    for page in ("r.json", "r.html"):
        made = CliRunner().invoke(app, ["report", str(tmp_path / "household.sav"), str(out), "--spec",
                                        str(tmp_path / "release.sav.toml"), "-o", str(tmp_path / page)])
        assert made.exit_code == 0, made.output
    rows = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["utility"]["benchmarks"]
    source, _ = pyreadstat.read_sav(str(tmp_path / "household.sav"))
    published, _ = pyreadstat.read_sav(str(out))
    by_urbrur = [r for r in rows if r["estimate"] == "income by urbrur" and r["group"]["urbrur"] != "suppressed"]
    blanked = [r for r in rows if r["estimate"] == "income by urbrur" and r["group"]["urbrur"] == "suppressed"]
    assert [r["release_rows"] for r in blanked] == ([int(published["urbrur"].isna().sum())]
                                                   if published["urbrur"].isna().any() else [])
    assert {r["group"]["urbrur"] for r in by_urbrur} == {str(int(v)) for v in source["urbrur"].dropna().unique()}
    for r in by_urbrur:
        part = source[source["urbrur"].astype(int).astype(str) == r["group"]["urbrur"]]
        mean, _, _ = _by_definition(part["income"].tolist(), part[WEIGHT].tolist())
        assert r["original"] == pytest.approx(mean)
        after = published[published["urbrur"].astype("Int64").astype(str) == r["group"]["urbrur"]]
        assert r["release"] == pytest.approx(_by_definition(after["income"].tolist(), after[WEIGHT].tolist())[0])
    assert [r["group"] for r in rows if r["estimate"] == "expend"] == [{}]
    assert "id=benchmarks" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_labelled_file_names_its_groups_by_value_label_and_keeps_the_code(tmp_path):
    """The curator's labelled household file: "Urban" rather than "urbrur = 1" on the page, the code
    kept in the JSON's group with the label beside it; an unlabelled grouping keeps its code alone."""
    from _household import VALUE_LABELS, WEIGHT, write_household
    from benchdata import data_dir

    from incrowd import read_table, report

    if not (data_dir() / "testdata.csv").is_file():
        pytest.skip("benchmark data not found")
    original = read_table(write_household(data_dir(), tmp_path / "household.sav"))
    release = original.copy()
    release["income"] = release["income"] * 1.01
    rows = benchmark_estimates(original, release, ["income by urbrur, sex", "income by age"], weight=WEIGHT)
    by_both = [r for r in rows if r["estimate"] == "income by urbrur, sex"]
    assert len(by_both) == 4
    for r in by_both:
        assert r["label"] == {c: VALUE_LABELS[c][int(r["group"][c])] for c in ("urbrur", "sex")}
    assert all("label" not in r for r in rows if r["estimate"] == "income by age")  # age has no value labels
    page = report(original, release, ["urbrur", "sex"], benchmarks=["income by urbrur"], weight=WEIGHT, perturb=["income"],
                  figures=False).to_html()
    table = page[page.index("id=benchmarks"):]
    assert "<td>Urban (1)</td>" in table and "<td>Rural (2)</td>" in table and "urbrur = 1" not in table
