"""incrowd.perturbation: each method checked against its definition (brute force, properties
with hypothesis) and, where sdcMicro fixes the output, against sdcMicro's own output on testdata
(tests/data/sdcmicro_perturbation_testdata.csv.gz, peer figures written by
bench/perturbation_vs_sdcmicro.py); the steps' checks; per stratum; seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incrowd.exceptions import DataError, ParameterError
from incrowd.perturbation import METHODS, perturb
from incrowd.perturbation.pram import transition_matrix

PEER = __import__("pathlib").Path(__file__).parent / "data" / "sdcmicro_perturbation_testdata.csv.gz"
NUMERIC = ["income", "expend", "savings"]
needs_data = pytest.mark.skipif(not (data_dir() / "testdata.csv").is_file(), reason="benchmark data not found")


@pytest.fixture(scope="module")
def testdata() -> pd.DataFrame:
    return pd.read_csv(data_dir() / "testdata.csv")


@pytest.fixture(scope="module")
def peer() -> pd.DataFrame:
    return pd.read_csv(PEER, comment="#")


def test_every_method_is_one_file_behind_one_interface():
    assert set(METHODS) == {"microaggregation", "noise", "rank_swap", "shuffle", "top_code", "bottom_code",
                            "round", "pram", "record_swap"}
    for key, method in METHODS.items():
        assert method.__module__ == f"incrowd.perturbation.{key}"
        assert method.sdcmicro and method.summary


# --- equal to sdcMicro's output, cell by cell ----------------------------------------------------

@needs_data
def test_top_and_bottom_coding_and_rounding_equal_sdcmicro(testdata, peer):
    out = perturb(testdata, [
        {"columns": ["income"], "method": "top_code", "value": 90_000_000, "replacement": 90_000_000},
        {"columns": ["expend"], "method": "bottom_code", "value": 5_000_000, "replacement": 0},
        {"columns": ["savings"], "method": "round", "base": 100_000},
    ])
    assert np.array_equal(out.table["income"].to_numpy(float), peer["top_code"].to_numpy(float))
    assert np.array_equal(out.table["expend"].to_numpy(float), peer["bottom_code"].to_numpy(float))
    assert np.array_equal(out.table["savings"].to_numpy(float), peer["round"].to_numpy(float))
    assert out.steps[0].details["top_coded"] == int((testdata["income"] > 90_000_000).sum())
    assert out.steps[1].details["bottom_coded"] == int((testdata["expend"] < 5_000_000).sum())


@needs_data
def test_microaggregation_of_numvars_equals_sdcmicro(testdata, peer):
    out = perturb(testdata, [{"columns": NUMERIC, "method": "microaggregation", "k": 3}]).table
    for name in NUMERIC:
        np.testing.assert_allclose(out[name].to_numpy(float), peer[f"microaggregation_{name}"], rtol=1e-12)
    # every other column as given
    others = [c for c in testdata.columns if c not in NUMERIC]
    pd.testing.assert_frame_equal(out[others], testdata[others])


@needs_data
def test_microaggregation_median_and_per_variable_by_brute_force(testdata):
    X = testdata[NUMERIC].to_numpy(float)
    out = perturb(testdata, [{"columns": NUMERIC, "method": "microaggregation", "k": 3, "aggregate": "median"}]).table
    # the groups are the mean release's (same method, same rows): each value is its group's median
    means = perturb(testdata, [{"columns": NUMERIC, "method": "microaggregation", "k": 3}]).table
    groups = pd.factorize(pd.MultiIndex.from_frame(means[NUMERIC]))[0]
    for j, name in enumerate(NUMERIC):
        expected = pd.Series(X[:, j]).groupby(groups).transform("median").to_numpy()
        np.testing.assert_allclose(out[name].to_numpy(float), expected, rtol=1e-12)
    apart = perturb(testdata, [{"columns": NUMERIC, "method": "microaggregation", "k": 3, "jointly": False}]).table
    for name in NUMERIC:  # one variable on its own: at least k rows share each published value
        assert apart[name].value_counts().min() >= 3
        assert not np.array_equal(apart[name], means[name])


# --- noise: what its definition fixes --------------------------------------------------------------

@needs_data
@pytest.mark.parametrize("kind", ["additive", "correlated"])
def test_noise_adds_the_covariance_its_definition_gives_within_2_percent(testdata, kind):
    X = testdata[NUMERIC].to_numpy(float)
    amount = 50 if kind == "additive" else 20
    sd = X.std(axis=0, ddof=1)
    added = np.zeros((3, 3))
    for seed in range(100):
        out = perturb(testdata, [{"columns": NUMERIC, "method": "noise", "amount": amount, "kind": kind}],
                      random_state=seed).table[NUMERIC].to_numpy(float)
        added += np.cov((out - X).T) / 100
    delta = amount / 100
    if kind == "additive":  # independent normal noise of amount % of each column's sd
        expected = np.diag((delta * sd) ** 2)
    else:  # sdcMicro's correlated2: x (sqrt(1 - d^2) - 1) + d e, e of the column's sd
        shrink = np.sqrt(1 - delta ** 2) - 1
        expected = shrink ** 2 * np.cov(X.T) + np.diag((delta * sd) ** 2)
    np.testing.assert_allclose(np.diag(added), np.diag(expected), rtol=0.02)


@needs_data
def test_correlated_noise_keeps_each_columns_mean_and_variance(testdata):
    X = testdata[NUMERIC].to_numpy(float)
    means, variances = np.zeros(3), np.zeros(3)
    for seed in range(100):
        out = perturb(testdata, [{"columns": NUMERIC, "method": "noise", "amount": 30, "kind": "correlated"}],
                      random_state=seed).table[NUMERIC].to_numpy(float)
        means += out.mean(axis=0) / 100
        variances += out.var(axis=0, ddof=1) / 100
    np.testing.assert_allclose(means, X.mean(axis=0), rtol=0.01)
    np.testing.assert_allclose(variances, X.var(axis=0, ddof=1), rtol=0.02)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 300), block=st.integers(2, 40), seed=st.integers(0, 2**32 - 1))
def test_romm_keeps_the_cross_products_exactly(n, block, seed):
    X = np.random.default_rng(seed).normal(size=(n, 3)) * [1, 10, 100]
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    out = perturb(frame, [{"columns": ["a", "b", "c"], "method": "noise", "kind": "romm", "amount": 5,
                           "block": block}], random_state=seed).table.to_numpy()
    np.testing.assert_allclose(out.T @ out, X.T @ X, rtol=1e-9, atol=1e-9 * np.abs(X.T @ X).max())
    assert not np.allclose(out, X)


# --- rank swapping: every swap within the window --------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=400, unique=True),
       p=st.floats(0.5, 100), seed=st.integers(0, 2**32 - 1))
def test_rank_swap_swaps_only_within_the_window(values, p, seed):
    x = np.array(values)
    out = perturb(pd.DataFrame({"x": x}), [{"columns": ["x"], "method": "rank_swap", "p": p}],
                  random_state=seed)
    y = out.table["x"].to_numpy()
    assert np.array_equal(np.sort(y), np.sort(x))  # a permutation of the column's own values
    rank = {v: i for i, v in enumerate(np.sort(x))}
    distance = np.array([abs(rank[a] - rank[b]) for a, b in zip(x, y)])
    window = int(x.size * p / 100)
    assert (distance < max(window, 1)).all()
    # pairs: each moved value's partner holds its value
    moved = np.flatnonzero(x != y)
    assert moved.size == 2 * out.steps[0].details["swaps"]
    partner = {a: b for a, b in zip(x, y)}
    assert all(partner[partner[a]] == a for a in x[moved])


def test_rank_swap_keeps_missing_cells_and_codes_the_tails():
    x = np.array([np.nan, 5.0, 1.0, 3.0, 2.0, 4.0, 100.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    out = perturb(pd.DataFrame({"x": x}), [{"columns": ["x"], "method": "rank_swap", "p": 20,
                                            "top_percent": 10}]).table["x"].to_numpy()
    assert np.isnan(out[0])
    assert out[6] == 100.0  # the largest 10 % (one value): replaced by their mean, itself, and not swapped


# --- shuffling -------------------------------------------------------------------------------------

@needs_data
def test_shuffle_reorders_each_columns_own_values_and_keeps_the_rank_correlation(testdata):
    out = perturb(testdata, [{"columns": ["income", "expend"], "method": "shuffle", "by": ["age", "urbrur"]}],
                  random_state=3).table
    for name in ("income", "expend"):
        assert np.array_equal(np.sort(out[name]), np.sort(testdata[name]))
        assert not np.array_equal(out[name], testdata[name])
    # income and expend are made in testdata almost uncorrelated with the predictors: their rank
    # correlation stays near what it was
    before = testdata["income"].corr(testdata["age"], method="spearman")
    after = out["income"].corr(testdata["age"], method="spearman")
    assert abs(after - before) < 0.06


def test_shuffle_follows_a_strong_predictor():
    rng = np.random.default_rng(0)
    s = rng.normal(size=2000)
    frame = pd.DataFrame({"y": s * 3 + rng.normal(size=2000) * 0.5, "z": rng.normal(size=2000), "s": s})
    out = perturb(frame, [{"columns": ["y", "z"], "method": "shuffle", "by": ["s"]}], random_state=1).table
    before = frame["y"].corr(frame["s"], method="spearman")
    after = out["y"].corr(frame["s"], method="spearman")
    assert abs(after - before) < 0.03
    assert (out["y"] != frame["y"]).mean() > 0.9


# --- PRAM -----------------------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(counts=st.lists(st.integers(0, 500), min_size=2, max_size=8).filter(lambda c: sum(c) > 0),
       pd_=st.floats(0.05, 1.0), alpha=st.floats(0, 1), seed=st.integers(0, 2**32 - 1))
def test_pram_invariant_matrix_keeps_the_expected_frequencies(counts, pd_, alpha, seed):
    counts = np.array(counts, float)
    R = transition_matrix(counts, pd_, alpha, np.random.default_rng(seed))
    p = counts / counts.sum()
    np.testing.assert_allclose(R.sum(axis=1), 1.0, atol=1e-12)
    assert (R >= -1e-15).all()
    np.testing.assert_allclose(p @ R, p, atol=1e-12)  # invariance: p' R = p'
    P = transition_matrix(counts, pd_, None, np.random.default_rng(seed))
    assert (np.diag(P) >= pd_ - 1e-12).all()  # pd: the smallest diagonal


@needs_data
def test_pram_keeps_the_frequencies_on_average_and_reports_its_matrix(testdata):
    before = testdata["roof"].value_counts().sort_index()
    after = 0
    for seed in range(100):
        out = perturb(testdata, [{"columns": ["roof"], "method": "pram", "pd": 0.8}], random_state=seed)
        after = after + out.table["roof"].value_counts().reindex(before.index, fill_value=0) / 100
    big = before >= 500  # the frequent categories, where 100 draws pin the mean down
    np.testing.assert_allclose(after[big], before[big], rtol=0.01)
    details = out.steps[0].details["pram"]["roof"]
    transitions = np.array(details["transitions"])
    assert transitions.sum() == len(testdata)
    assert details["categories"] == sorted(before.index)
    assert out.steps[0].cells_changed == transitions.sum() - np.trace(transitions)


def test_pram_matrix_file_and_per_stratum(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(",a,b\na,0,1\nb,1,0\n", encoding="utf-8")
    frame = pd.DataFrame({"x": ["a", "b", "a", None], "g": [1, 1, 2, 2]})
    out = perturb(frame, [{"columns": ["x"], "method": "pram", "matrix": str(path)}], strata="g").table
    assert out["x"].tolist()[:3] == ["b", "a", "b"] and out["x"].isna().tolist()[3]
    bad = tmp_path / "bad.csv"
    bad.write_text(",a,b\na,0.5,0.4\nb,1,0\n", encoding="utf-8")
    with pytest.raises(DataError, match="sums to 0.9"):
        perturb(frame, [{"columns": ["x"], "method": "pram", "matrix": str(bad)}])


@pytest.mark.parametrize("text, message", [
    (",a,b\na,0,1\nb,1,0\nc,1,0\n", r"wide\.csv' is not square: 3 rows, 2 columns"),
    (",a,b\na,0,1\n", r"wide\.csv' is not square: 1 rows, 2 columns"),
    (",a,c\na,0,1\nc,1,0\n", r"column 'x' holds 'b', which the matrix file '.*wide\.csv' does not name"),
])
def test_a_matrix_file_that_does_not_fit_is_one_line_naming_the_file(tmp_path, text, message):
    path = tmp_path / "wide.csv"
    path.write_text(text, encoding="utf-8")
    frame = pd.DataFrame({"x": ["a", "b", "a"]})
    with pytest.raises(DataError, match=message) as raised:
        perturb(frame, [{"columns": ["x"], "method": "pram", "matrix": str(path)}])
    assert "\n" not in str(raised.value)


# --- targeted record swapping ----------------------------------------------------------------------

def _households(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 5, n)
    hid = np.repeat(np.arange(n), size)
    region = rng.integers(0, 3, n)
    district = region * 10 + rng.integers(0, 4, n)
    hsize = np.minimum(size, 3)
    return pd.DataFrame({"hid": hid, "region": region[hid], "district": district[hid], "hsize": hsize[hid],
                         "sex": rng.integers(1, 3, hid.size)})


@settings(max_examples=15, deadline=None)
@given(n=st.integers(40, 400), rate=st.floats(0, 0.5), seed=st.integers(0, 2**32 - 1))
def test_record_swap_holds_the_rate_and_the_similarity_profile(n, rate, seed):
    frame = _households(n, seed)
    step = {"columns": ["region", "district"], "method": "record_swap", "hierarchy": ["region", "district"],
            "similarity": ["hsize"], "rate": rate, "risk_threshold": 1.0, "household": "hid"}
    out = perturb(frame, [step], random_state=seed)
    table = out.table
    details = out.steps[0].details
    first = frame.groupby("hid").first()
    new = table.groupby("hid").first()
    # whole households: the geography is still one per household
    assert (table.groupby("hid")[["region", "district"]].nunique() == 1).all().all()
    moved = (new["district"] != first["district"]).to_numpy()
    assert moved.sum() == details["households_swapped"]
    # each swapped household took the geography of a household of its own profile
    for h in np.flatnonzero(moved):
        donors = first[(first["district"] == new["district"].iloc[h]) & (first["region"] == new["region"].iloc[h])]
        assert (donors["hsize"] == first["hsize"].iloc[h]).any()
    # the rate: 2 * round(rate * H / 2) households, unless a profile runs out of donors
    H = len(first)
    target = rate * H / 2
    assert details["households_swapped"] <= 2 * (int(np.floor(target)) + 1)
    if details["households_swapped"] < 2 * int(np.floor(target)):
        assert details["unmatched"] > 0 or details["risky_households"] == 0
    pd.testing.assert_series_equal(table["sex"], frame["sex"])


def test_record_swap_swaps_every_risky_household_first():
    frame = _households(300, 7)
    lonely = frame["hid"] == 0  # a household alone in its district with its risk variables
    frame.loc[lonely, "district"] = 99
    step = {"columns": ["district"], "method": "record_swap", "hierarchy": ["region", "district"],
            "rate": 0.0, "risk_threshold": 0.2, "household": "hid"}
    out = perturb(frame, [step], random_state=1)
    assert (out.table.loc[lonely, "district"] != 99).all()
    assert out.steps[0].details["risky_swapped"] == out.steps[0].details["risky_households"] >= 1


def test_record_swap_refuses_a_person_level_column():
    frame = _households(50, 1)
    step = {"columns": ["sex"], "method": "record_swap", "hierarchy": ["region"], "household": "hid"}
    with pytest.raises(DataError, match="'sex' differs within a household of 'hid'"):
        perturb(frame, [step])


# --- steps: checks, strata, seeds ------------------------------------------------------------------

@pytest.mark.parametrize("step, message", [
    ({"columns": ["x"], "method": "blur"}, r"step 1: method must be one of bottom_code, microaggregation"),
    ({"columns": ["x"], "method": "noise", "amount": -1}, r"step 1 \(noise\): amount must be a number > 0; got -1"),
    ({"columns": ["x"], "method": "noise", "kind": "pink"},
     r'kind must be "additive" \| "correlated" \| "romm"; got \'pink\''),
    ({"columns": ["x"], "method": "round", "bas": 5}, r"unknown key\(s\) 'bas' for method 'round'; its keys: base"),
    ({"columns": ["x"], "method": "top_code"}, r"method 'top_code' needs value"),
    ({"columns": ["x"], "method": "round", "random_state": 1}, r"round draws nothing"),
    ({"columns": "x", "method": "round"}, r"columns must be a list of column names"),
    ({"columns": ["x"], "method": "microaggregation", "method_name": 1}, r"unknown key"),
])
def test_a_bad_step_is_one_clear_error(step, message):
    with pytest.raises(ParameterError, match=message):
        perturb(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), [step])


def test_a_step_repeated_in_a_loop_is_checked_once_and_a_refused_value_stays_refused(monkeypatch):
    """A loop of table calls with the same top coding checks the step once; a value of another
    type, equal to one checked before (``True == 1``), or another value, is checked again."""
    from dataclasses import replace

    from incrowd.perturbation.top_code import TopCode

    checked = []
    param = TopCode.params["value"]
    monkeypatch.setitem(TopCode.params, "value", replace(param, check=lambda v: checked.append(v) or param.check(v)))
    frame = pd.DataFrame({"loop_x": [1.0, 7.0, 3.0]})
    for _ in range(3):
        out = perturb(frame, [{"columns": ["loop_x"], "method": "top_code", "value": 1}]).table
        assert out["loop_x"].tolist() == [1.0, 1.0, 1.0]
    assert checked == [1]
    with pytest.raises(ParameterError, match=r"value must be a number; got True"):
        perturb(frame, [{"columns": ["loop_x"], "method": "top_code", "value": True}])
    perturb(frame, [{"columns": ["loop_x"], "method": "top_code", "value": 2}])
    assert checked == [1, True, 2]


def test_text_in_a_numeric_step_names_the_column_and_row():
    frame = pd.DataFrame({"x": ["1", "2", "lots"]})
    with pytest.raises(DataError, match=r"column 'x' is not numeric: row 3 holds 'lots'"):
        perturb(frame, [{"columns": ["x"], "method": "round", "base": 1}])


def test_a_csv_column_read_as_text_keeps_its_spelling_where_unchanged():
    frame = pd.DataFrame({"x": ["10", "NA", "2.5", "300"], "y": ["a", "b", "c", "d"]})
    out = perturb(frame, [{"columns": ["x"], "method": "top_code", "value": 100}]).table
    assert out["x"].tolist() == ["10", "NA", "2.5", "100"]
    assert out["y"].tolist() == frame["y"].tolist()


def test_each_stratum_on_its_own_and_the_same_seed_the_same_release():
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"x": rng.normal(size=600), "region": np.repeat([1, 2, 3], 200)})
    step = [{"columns": ["x"], "method": "rank_swap", "p": 50}]
    out = perturb(frame, step, strata="region", random_state=4).table
    for _, part in frame.groupby("region"):
        assert np.array_equal(np.sort(out.loc[part.index, "x"]), np.sort(part["x"]))
    again = perturb(frame, step, strata="region", random_state=4).table
    pd.testing.assert_frame_equal(out, again)
    other = perturb(frame, step, strata="region", random_state=5).table
    assert not out["x"].equals(other["x"])
    fixed = perturb(frame, [{**step[0], "random_state": 9}], strata="region", random_state=1).table
    assert fixed.equals(perturb(frame, [{**step[0], "random_state": 9}], strata="region", random_state=2).table)
    with pytest.raises(ParameterError, match="'region': a column of the strata is not perturbed"):
        perturb(frame, [{"columns": ["region"], "method": "round"}], strata="region")


def test_a_missing_cell_keeps_its_bits():
    # a user-missing code of a statistical file rides in a NaN's payload: a perturbed column keeps it
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    tagged = np.frombuffer((np.array([np.nan]).view(np.uint64) | np.uint64(7)).tobytes(), dtype=np.float64)[0]
    x[2] = tagged
    frame = pd.DataFrame({"x": x})
    for step in ({"method": "noise"}, {"method": "round", "base": 2}, {"method": "rank_swap", "p": 50},
                 {"method": "microaggregation", "k": 2}):
        out = perturb(frame, [{"columns": ["x"], **step}]).table["x"].to_numpy()
        assert out[2:3].view(np.uint64)[0] == x[2:3].view(np.uint64)[0], step


def test_a_microaggregation_method_names_itself_as_the_steps_method():
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    out = perturb(frame, [{"columns": ["a", "b"], "method": "mdav-plus", "k": 4}])
    assert out.steps[0].method == "microaggregation"
    assert out.table.groupby(["a", "b"]).size().min() >= 4
    same = perturb(frame, [{"columns": ["a", "b"], "method": "microaggregation", "k": 4}]).table
    mdav = perturb(frame, [{"columns": ["a", "b"], "method": "mdav", "k": 4}]).table
    pd.testing.assert_frame_equal(same, mdav)  # "microaggregation" is MDAV, sdcMicro's


@needs_data
@pytest.mark.parametrize("strata", [None, "urbrur"])
def test_the_input_is_never_changed_and_the_release_is_a_table_of_its_own(testdata, strata):
    """The release shares no cell with the input: writing into either, in a perturbed column or
    one no step touched, leaves the other as it was."""
    frame = testdata.copy()
    before = frame.copy()
    steps = [{"columns": ["income"], "method": "top_code", "value": 90_000_000},
             {"columns": ["roof"], "method": "pram", "pd": 0.8}]
    result = perturb(frame, steps, strata=strata)
    pd.testing.assert_frame_equal(frame, before)
    release = result.table.copy()
    result.table.loc[0, ["age", "income", "roof"]] = [-1, -1, -1]
    result.table.iloc[1, result.table.columns.get_loc("walls")] = -1
    pd.testing.assert_frame_equal(frame, before)
    frame.loc[2, ["age", "income"]] = [-2, -2]
    assert result.table.loc[2, "age"] == release.loc[2, "age"]
    assert result.table.loc[2, "income"] == release.loc[2, "income"]


def test_a_step_that_groups_or_swaps_nothing_loads_no_compiled_kernels():
    """Top coding, rounding or noise in a fresh process: neither numba nor the microaggregation
    package is imported (they cost seconds at start-up); nor by a small rank swap (its plain twin
    runs); a large one loads numba when it swaps."""
    import subprocess
    import sys

    code = ("import sys, pandas as pd\nfrom incrowd import perturb\n"
            "d = pd.DataFrame({'x': [1.0, 2.0, 3.0, 4.0]})\n"
            "perturb(d, [{'columns': ['x'], 'method': 'top_code', 'value': 3},\n"
            "            {'columns': ['x'], 'method': 'round', 'base': 2},\n"
            "            {'columns': ['x'], 'method': 'noise', 'amount': 10}])\n"
            "print(sorted(m for m in ('numba', 'incrowd.microaggregation') if m in sys.modules))\n"
            "perturb(d, [{'columns': ['x'], 'method': 'rank_swap', 'p': 50}])\n"
            "print('numba' in sys.modules)\n"
            "big = pd.DataFrame({'x': [float(i % 97) for i in range(70_000)]})\n"
            "perturb(big, [{'columns': ['x'], 'method': 'rank_swap', 'p': 50}])\n"
            "print('numba' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:3] == ["[]", "False", "True"]


# --- one column given alone ----------------------------------------------------------------------

_ONE_COLUMN = [
    ("top_code", {"value": 5.0}), ("top_code", {"value": 5.0, "replacement": 0.0}),
    ("bottom_code", {"value": -5.0, "replacement": -7.5}), ("round", {"base": 2.5}), ("round", {"base": 1}),
    ("noise", {"amount": 30}), ("noise", {"amount": 10, "kind": "correlated"}), ("rank_swap", {"p": 20}),
    ("microaggregation", {"k": 3}), ("pram", {"pd": 0.8}),
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=st.lists(st.one_of(st.integers(-20, 20), st.floats(-1e3, 1e3), st.just(float("nan"))),
                      min_size=4, max_size=40),
       whole=st.booleans(), case=st.sampled_from(_ONE_COLUMN), seed=st.integers(0, 3),
       as_series=st.booleans())
def test_one_column_alone_gives_the_values_a_table_gives(cells, whole, case, seed, as_series):
    """``perturb_values`` on a 1-D array or a Series: the column ``perturb`` writes on a table,
    bit for bit (its type, its missing cells, its seed)."""
    from incrowd.perturbation import perturb_values

    method, params = case
    x = np.array([int(c) for c in cells if c == c], dtype=np.int64) if whole else np.array(cells, dtype=np.float64)
    if x.size < 4:
        return
    table = pd.DataFrame({"x": x, "other": np.arange(x.size)})
    expected = perturb(table, [{"columns": ["x"], "method": method, **params}], random_state=seed).table["x"]
    given_ = pd.Series(x, name="x", index=np.arange(x.size) * 2) if as_series else x
    before = x.copy()
    got = perturb_values(given_, method, random_state=seed, **params)
    assert np.array_equal(x.view(np.int64), before.view(np.int64))  # the input is not changed
    if as_series:
        assert isinstance(got, pd.Series) and got.name == "x" and got.index.equals(given_.index)
        got = got.to_numpy()
    assert isinstance(got, np.ndarray) and got.dtype == expected.dtype
    assert np.array_equal(got.view(np.int64) if got.dtype.kind == "f" else got,
                          expected.to_numpy().view(np.int64) if got.dtype.kind == "f" else expected.to_numpy())


@needs_data
def test_one_column_alone_equals_sdcmicro(testdata, peer):
    from incrowd.perturbation import perturb_values

    top = perturb_values(testdata["income"].to_numpy(), "top_code", value=90_000_000, replacement=90_000_000)
    assert np.array_equal(top, peer["top_code"].to_numpy(float))
    bottom = perturb_values(testdata["expend"], "bottom_code", value=5_000_000, replacement=0)
    assert np.array_equal(bottom.to_numpy(float), peer["bottom_code"].to_numpy(float))
    assert np.array_equal(perturb_values(testdata["savings"].to_numpy(), "round", base=100_000),
                          peer["round"].to_numpy(float))


@pytest.mark.parametrize("values, method, params, message", [
    (np.zeros((3, 2)), "round", {}, "one column (a Series or a 1-D array); got 2 dimensions"),
    (np.zeros(4), "shuffle", {"by": ["age"]}, "reads other columns ('age'): give perturb a table"),
    (np.zeros(4), "round", {"base": 0}, "base must be a number > 0; got 0"),
    (np.zeros(4), "cut", {}, "method must be one of"),
])
def test_one_column_alone_refuses_in_one_line(values, method, params, message):
    from incrowd.perturbation import perturb_values

    with pytest.raises(ParameterError, match=None) as error:
        perturb_values(values, method, **params)
    assert message in str(error.value) and "\n" not in str(error.value)
