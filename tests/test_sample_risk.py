"""fk, Fk, individual, global and household risk against sdcMicro 5.8.0, brute force and properties.

The fixtures in tests/data/ were exported from sdcMicro 5.8.0 by
bench/peers/risk_vs_sdcmicro.py --fixtures (R script bench/peers/risk_vs_sdcmicro.R).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import incrowd
from incrowd.privacy import sample_risk as sr

DATA = Path(__file__).parent / "data"
TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
ADULT_KEYS = ["age", "sex", "race", "marital_status", "education", "native_country"]
TOL = 1e-9


def _fixture(name: str) -> pd.DataFrame:
    # an empty key cell is R's NA; keys stay text, as read_table gives them
    return pd.read_csv(DATA / name, comment="#", dtype=str, keep_default_na=False)


def _globals(case: str) -> dict[str, float]:
    g = pd.read_csv(DATA / "sdcmicro_risk_globals.csv", comment="#")
    g = g[g["case"] == case]
    return dict(zip(g["measure"], g["value"].astype(float)))


def _close(ours, theirs, what):
    ours = np.asarray(ours, dtype=float)
    theirs = pd.Series(theirs).astype(float).to_numpy()
    worst = float(np.max(np.abs(ours - theirs)))
    assert worst <= TOL, f"{what}: differs from sdcMicro by {worst}"


@pytest.mark.parametrize("fixture, case", [("sdcmicro_testdata_risk.csv.gz", "testdata"),
                                           ("sdcmicro_testdata_na_risk.csv.gz", "testdata_na")])
def test_testdata_equals_sdcmicro(fixture, case):
    peer = _fixture(fixture)
    result = incrowd.risk(peer, TESTDATA_KEYS, weight="sampling_weight", household="ori_hid")
    rec, summary = result.records, result.summary()
    _close(rec["fk"], peer["fk"], "fk")
    _close(rec["Fk"], peer["Fk"], "Fk")
    _close(rec["individual_risk"], peer["risk"], "individual risk")
    _close(rec["household_risk"], peer["hier_risk"], "household risk")
    g = _globals(case)
    assert summary["global_risk"] == pytest.approx(g["global_risk"], abs=TOL, rel=TOL)
    assert summary["global_risk_percent"] == pytest.approx(g["global_risk_pct"], abs=TOL, rel=TOL)
    assert summary["expected_reidentifications"] == pytest.approx(g["global_risk_ER"], abs=TOL, rel=TOL)
    assert summary["household_risk"] == pytest.approx(g["hier_risk"], abs=TOL, rel=TOL)
    assert summary["household_expected_reidentifications"] == pytest.approx(g["hier_risk_ER"], abs=TOL, rel=TOL)


def test_testdata_missing_keys_are_present_in_the_fixture():
    # the comparison above exercises freqCalc's missing-value branch only if the fixture has them
    peer = _fixture("sdcmicro_testdata_na_risk.csv.gz")
    keys = peer[TESTDATA_KEYS]
    assert (keys == "").to_numpy().any()
    assert ((keys == "").all(axis=1)).sum() == 3  # rows whose keys are all missing


def test_unweighted_equals_sdcmicro():
    peer = _fixture("sdcmicro_testdata_risk.csv.gz")
    result = incrowd.risk(peer, TESTDATA_KEYS)
    _close(result.records["individual_risk"], peer["risk_unweighted"], "unweighted risk")
    g = _globals("testdata_unweighted")
    assert result.summary()["expected_reidentifications"] == pytest.approx(g["global_risk_ER"], abs=TOL)
    _close(result.records["Fk"], result.records["fk"], "Fk without weights")


def test_one_key_with_missing_values_equals_freqcalc():
    peer = _fixture("sdcmicro_testdata_na_risk.csv.gz")
    codes = sr.key_codes(peer, ["walls"])
    assert (codes < 0).any()
    fk, Fk = sr.frequencies(codes, peer["sampling_weight"].astype(float).to_numpy())
    _close(fk, peer["fk_walls"], "fk on one key")
    _close(Fk, peer["Fk_walls"], "Fk on one key")


def test_adult_subset_equals_sdcmicro():
    peer = _fixture("sdcmicro_adult_subset_risk.csv.gz")
    result = incrowd.risk(peer, ADULT_KEYS, weight="fnlwgt")
    _close(result.records["fk"], peer["fk"], "fk")
    _close(result.records["Fk"], peer["Fk"], "Fk")
    _close(result.records["individual_risk"], peer["risk"], "individual risk")
    g = _globals("adult_subset")
    assert result.summary()["expected_reidentifications"] == pytest.approx(g["global_risk_ER"], abs=TOL, rel=TOL)


# ---- brute force: freqCalc's matching, one pair of rows at a time ----------------------------

def _brute_frequencies(codes: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, p = codes.shape
    fk, Fk = np.zeros(n), np.zeros(n)
    for i in range(n):
        if (codes[i] < 0).all():
            fk[i], Fk[i] = n, w.sum()
            continue
        for j in range(n):
            if p > 1 and not (codes[i] < 0).any() and (codes[j] < 0).all():
                continue
            both = (codes[i] >= 0) & (codes[j] >= 0)
            if (codes[i][both] == codes[j][both]).all():
                fk[i] += 1
                Fk[i] += w[j]
    return fk, Fk


tables = st.integers(1, 4).flatmap(lambda p: st.lists(
    st.lists(st.integers(-1, 2), min_size=p, max_size=p), min_size=1, max_size=25))


@settings(max_examples=60, deadline=None)
@given(tables, st.data())
def test_frequencies_equal_brute_force_with_missing_values(rows, data):
    codes = np.array(rows, dtype=np.int64)
    w = np.array(data.draw(st.lists(st.floats(1, 50), min_size=len(rows), max_size=len(rows))))
    fk, Fk = sr.frequencies(codes, w)
    bfk, bFk = _brute_frequencies(codes, w)
    np.testing.assert_array_equal(fk, bfk)
    np.testing.assert_allclose(Fk, bFk, rtol=1e-12)
    # properties: every row counts itself; Fk is at least fk times the smallest weight
    assert (fk >= 1).all()
    assert (Fk >= fk * w.min() * (1 - 1e-12)).all()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=3, max_size=3), min_size=1, max_size=40))
def test_frequencies_without_missing_values_partition_the_rows(rows):
    codes = np.array(rows, dtype=np.int64)
    fk, _ = sr.frequencies(codes)
    classes = {tuple(r) for r in rows}
    # each class of size s contributes s rows of fk = s: sum(1/fk) is the number of classes
    assert np.sum(1 / fk) == pytest.approx(len(classes))
    for r, f in zip(rows, fk):
        assert f == sum(1 for other in rows if other == r)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=30), st.floats(1.0, 1e6))
def test_individual_risk_in_unit_interval_and_decreasing_in_fk(fks, weight):
    fk = np.array(fks, dtype=float)
    rk = sr.individual_risk(fk, fk * weight)
    assert ((rk >= 0) & (rk <= 1)).all()
    # one weight for all: pk is the same, and a larger class is never riskier
    ladder = np.arange(1.0, 31.0)
    risk = sr.individual_risk(ladder, ladder * weight)
    assert (np.diff(risk) <= 1e-15).all()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.floats(0, 1)), min_size=1, max_size=30))
def test_household_risk_bounds(members):
    hid = np.array([m[0] for m in members])
    rk = np.array([m[1] for m in members])
    hh = sr.household_risk(rk, hid)
    for h in np.unique(hid):
        mine = hid == h
        expected = 1 - np.prod(1 - rk[mine])
        np.testing.assert_allclose(hh[mine], expected, atol=1e-12)
        assert (hh[mine] >= rk[mine].max() - 1e-12).all()
    assert ((hh >= 0) & (hh <= 1)).all()


def test_special_cases_of_indivrisk():
    # the three formulas and fk = Fk, worked out by hand from sdcMicro's indivRisk
    pk = 0.25
    fk = np.array([1.0, 2.0, 4.0, 3.0])
    Fk = np.array([4.0, 8.0, 16.0, 3.0])
    odds = pk / (1 - pk)
    expected = [odds * np.log(4), odds - odds**2 * np.log(4), pk / (4 - 0.75), 1 / 3]
    np.testing.assert_allclose(sr.individual_risk(fk, Fk), expected, rtol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-15, 0.5), st.sampled_from([1.0, 2.0]))
def test_weights_near_one_give_the_limit_not_cancellation(q, fk):
    # sdcMicro's closed forms cancel as pk -> 1 (fk = 2 at q = 2e-16 gives 1.5); the risk must
    # stay in [0, 1], fall with fk and agree with the closed form wherever that one still holds
    Fk = fk / (1.0 - q)
    risk = sr.individual_risk(np.array([fk]), np.array([Fk]))[0]
    assert 0 <= risk <= 1
    p = fk / Fk  # pk as indivRisk computes it
    odds, log_inv = p / (1 - p), np.log(1 / p)
    closed = odds * log_inv if fk == 1 else odds - odds**2 * log_inv
    if 1 - p >= 1e-3:
        assert risk == closed
    else:
        assert abs(risk - closed) <= 1e-15 / q**2 + 1e-12
    assert abs(risk - 1 / fk) <= q  # the limit at pk = 1 is 1 / fk
