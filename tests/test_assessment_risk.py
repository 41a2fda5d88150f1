"""Disclosure-risk measures, each checked against a plain recomputation of its written
definition on small data, and on constructed cases with a known answer."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from incrowd.reporting._risk import attribute_disclosure, class_risk, drisk, drisk_rmd, record_linkage
from incrowd.exceptions import DataError, ParameterError


def _plain(obj):
    """True when obj is made of JSON types only (no numpy scalars)."""
    if isinstance(obj, dict):
        return all(isinstance(k, (str, int)) and _plain(v) for k, v in obj.items())
    if isinstance(obj, list):
        return all(_plain(v) for v in obj)
    return obj is None or type(obj) in (int, float, str, bool)


def _key(v):
    return "<NA>" if (v is None or (isinstance(v, float) and math.isnan(v))) else v


# ---------------------------------------------------------------------------------------------
# class_risk


def _qi_frame(seed=0, n=40):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n).astype(float)
    a[rng.random(n) < 0.15] = np.nan
    b = rng.choice(["x", "y"], n).astype(object)
    b[rng.random(n) < 0.1] = None
    return pd.DataFrame({"a": a, "b": b})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_class_risk_matches_plain_definition(seed):
    df = _qi_frame(seed)
    k, thr = 4, 0.2
    res = class_risk(df, k=k, threshold=thr)
    keys = [tuple(_key(v) for v in row) for row in df.itertuples(index=False)]
    size = {}
    for key in keys:
        size[key] = size.get(key, 0) + 1
    n = len(keys)
    risk = [1.0 / size[key] for key in keys]
    hist = {}
    for s in size.values():
        hist[s] = hist.get(s, 0) + 1
    assert res["class_size_histogram"] == hist
    assert res["n_classes"] == len(size)
    assert res["smallest_class"] == min(size.values())
    assert res["records_below_k"] == sum(1 for key in keys if size[key] < k)
    p = res["prosecutor"]
    assert p["highest"] == pytest.approx(max(risk), abs=1e-12)
    assert p["average"] == pytest.approx(sum(risk) / n, abs=1e-12)
    assert p["average"] == pytest.approx(len(size) / n, abs=1e-12)
    assert p["records_at_risk"] == pytest.approx(sum(r > thr for r in risk) / n, abs=1e-12)
    assert res["journalist"]["population_table"] is False
    assert res["journalist"]["highest"] == p["highest"]
    assert res["marketer"]["risk"] == pytest.approx(len(size) / n, abs=1e-12)
    assert _plain(res)
    json.dumps(res)


def test_class_risk_with_population_table():
    df = _qi_frame(3)
    keys = [tuple(_key(v) for v in row) for row in df.itertuples(index=False)]
    size = {}
    for key in keys:
        size[key] = size.get(key, 0) + 1
    popsize = {key: size[key] * (2 + i) for i, key in enumerate(size)}
    pop = np.array([popsize[key] for key in keys])
    res = class_risk(df, population_sizes=pop, threshold=0.1)
    n = len(keys)
    jr = [1.0 / popsize[key] for key in keys]
    j = res["journalist"]
    assert j["population_table"] is True
    assert j["highest"] == pytest.approx(max(jr), abs=1e-12)
    assert j["average"] == pytest.approx(sum(jr) / n, abs=1e-12)
    assert j["records_at_risk"] == pytest.approx(sum(r > 0.1 for r in jr) / n, abs=1e-12)
    marketer = sum(size[key] / popsize[key] for key in size) / n
    assert res["marketer"]["risk"] == pytest.approx(marketer, abs=1e-12)
    assert _plain(res)


def test_class_risk_one_class_gives_one_over_n():
    df = pd.DataFrame({"a": [5] * 7, "b": ["z"] * 7})
    res = class_risk(df, k=3)
    assert res["prosecutor"]["highest"] == pytest.approx(1 / 7, abs=1e-15)
    assert res["prosecutor"]["average"] == pytest.approx(1 / 7, abs=1e-15)
    assert res["class_size_histogram"] == {7: 1}
    assert res["records_below_k"] == 0
    assert res["prosecutor"]["records_at_risk"] == 0.0


def test_class_risk_k_none_counts_no_record_below_k():
    res = class_risk(pd.DataFrame({"a": [1, 2, 3]}))
    assert res["records_below_k"] == 0
    assert res["prosecutor"]["highest"] == 1.0
    assert res["prosecutor"]["records_at_risk"] == 1.0


def test_class_risk_rejects_bad_population_table():
    df = pd.DataFrame({"a": [1, 1, 2]})
    with pytest.raises(ParameterError, match="population_sizes"):
        class_risk(df, population_sizes=[5, 5])
    with pytest.raises(ParameterError, match="below the size"):
        class_risk(df, population_sizes=[1, 1, 4])
    with pytest.raises(ParameterError, match="equal within a class"):
        class_risk(df, population_sizes=[3, 4, 4])
    with pytest.raises(ParameterError, match="threshold"):
        class_risk(df, threshold=2)


# ---------------------------------------------------------------------------------------------
# dRisk (sdcMicro R/dRisk.R)


def _drisk_plain(x, xm, k):
    n, p = x.shape
    sds = []
    for j in range(p):
        col = [v for v in xm[:, j] if not math.isnan(v)]
        m = sum(col) / len(col)
        sds.append(math.sqrt(sum((v - m) ** 2 for v in col) / (len(col) - 1)))
    at_risk = 0
    for i in range(n):
        outside = 0
        for j in range(p):
            lo, hi = xm[i, j] - k * sds[j], xm[i, j] + k * sds[j]
            if x[i, j] < lo or x[i, j] > hi:  # NaN compares False: na.rm
                outside += 1
        at_risk += outside == 0
    return at_risk / n


@pytest.mark.parametrize("k", [0.05, 0.2, 1.0])
def test_drisk_matches_plain_definition(k):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(60, 3))
    xm = x + rng.normal(scale=0.1, size=x.shape)
    xm[5, 1] = np.nan
    x[7, 2] = np.nan
    assert drisk(x, xm, k=k) == pytest.approx(_drisk_plain(x, xm, k), abs=1e-12)


def test_drisk_identical_masked_copy_is_one():
    x = np.random.default_rng(0).normal(size=(30, 4))
    assert drisk(x, x.copy()) == 1.0


def test_drisk_interval_is_closed_and_uses_masked_sd():
    xm = np.array([[0.0], [2.0], [4.0]])  # sample sd 2 -> half width 0.1 at k=0.05
    x = np.array([[0.1], [2.1000001], [3.95]])
    assert drisk(x, xm) == pytest.approx(2 / 3, abs=1e-15)


def test_drisk_rejects_mismatched_or_text_input():
    with pytest.raises(DataError, match="same shape"):
        drisk(np.zeros((3, 2)), np.zeros((4, 2)))
    with pytest.raises(DataError, match="not numeric"):
        drisk(pd.DataFrame({"a": ["x", "y"]}), pd.DataFrame({"a": ["x", "y"]}))
    with pytest.raises(ParameterError, match="k must"):
        drisk(np.zeros((3, 1)), np.zeros((3, 1)), k=-1)


# ---------------------------------------------------------------------------------------------
# dRiskRMD (sdcMicro R/dRiskRMD.R)


def _drisk_rmd_plain(x, xm, k, k2, cov=None):
    def scale(a):
        return (a - a.mean(axis=0)) / a.std(axis=0, ddof=1)

    xs, xms = scale(x), scale(xm)
    n, p = xs.shape
    if cov is None:
        # robustbase covMcd's scatter (its factors are checked against robustbase in
        # test_drisk_rmd_sdcmicro.py): here only the risk definition around it is checked
        from incrowd.reporting._risk import _mcd_covariance

        cov = _mcd_covariance(xs, 0, None, 5000)
    inv = np.linalg.inv(cov)
    cent = xs.mean(axis=0)
    rmd = [0.05 * math.sqrt(float((xs[i] - cent) @ inv @ (xs[i] - cent))) for i in range(n)]
    w1 = [i for i in range(n) if any(xs[i, j] - k * rmd[i] < xms[i, j] < xs[i, j] + k * rmd[i] for j in range(p))]
    w2 = []
    for i in w1:
        dmin = min(math.sqrt(sum((xms[i, j] - xms[h, j]) ** 2 for j in range(p))) for h in range(n) if h != i)
        if dmin > k2:
            w2.append(i)
    return {
        "risk1": len(w1) / n,
        "risk2": len(w2) / n,
        "wrisk1": len(w1) * sum(rmd[i] for i in w1) / n,
        "wrisk2": len(w2) * sum(rmd[i] for i in w2) / n,
    }


@pytest.mark.parametrize("k,k2", [(0.7, 0.05), (0.01, 0.05), (2.0, 0.3)])
def test_drisk_rmd_matches_plain_definition(k, k2):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(80, 3)) @ np.array([[1, 0.5, 0], [0, 1, 0.3], [0, 0, 1]])
    xm = np.round(x, 1)
    xm[:4] = xm[4]  # duplicates: nearest other masked record at distance 0
    res = drisk_rmd(x, xm, k=k, k2=k2)
    exp = _drisk_rmd_plain(x, xm, k, k2)
    for key, v in exp.items():
        assert res[key] == pytest.approx(v, abs=1e-9), key
    assert _plain(res)


def test_drisk_rmd_with_a_given_scatter_matches_plain_definition():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(50, 3))
    xm = x + rng.normal(scale=0.05, size=x.shape)
    cov = np.array([[1.2, 0.3, 0.0], [0.3, 0.9, -0.2], [0.0, -0.2, 0.7]])
    res = drisk_rmd(x, xm, k=1.5, k2=0.2, covariance=cov)
    for key, v in _drisk_rmd_plain(x, xm, 1.5, 0.2, cov).items():
        assert res[key] == pytest.approx(v, abs=1e-9), key
    with pytest.raises(ParameterError, match="covariance"):
        drisk_rmd(x, xm, covariance=np.eye(2))


def test_drisk_rmd_rejects_constant_or_missing():
    x = np.random.default_rng(0).normal(size=(20, 2))
    xc = x.copy()
    xc[:, 1] = 3.0
    with pytest.raises(DataError, match="constant"):
        drisk_rmd(xc, xc)
    xn = x.copy()
    xn[4, 0] = np.nan
    with pytest.raises(DataError, match="row 4"):
        drisk_rmd(x, xn)


# ---------------------------------------------------------------------------------------------
# record linkage


def _distance_linkage_plain(x, xm, tol=1e-12):
    mean = x.mean(axis=0)
    sd = x.std(axis=0, ddof=1)
    sd = np.where(sd > 0, sd, 1.0)
    xs, xms = (x - mean) / sd, (xm - mean) / sd
    n = x.shape[0]
    total = 0.0
    for i in range(n):
        d = [math.sqrt(sum((xms[i, j] - xs[h, j]) ** 2 for j in range(x.shape[1]))) for h in range(n)]
        dmin = min(d)
        ties = [h for h in range(n) if d[h] <= dmin * (1 + tol)]
        total += (1 / len(ties)) if i in ties else 0.0
    return total / n


def _global_linkage_plain(x, xm):
    mean = x.mean(axis=0)
    sd = x.std(axis=0, ddof=1)
    xs, xms = (x - mean) / sd, (xm - mean) / sd
    n = x.shape[0]
    best, best_perm = math.inf, None
    for perm in itertools.permutations(range(n)):
        cost = sum(math.sqrt(float(((xms[i] - xs[perm[i]]) ** 2).sum())) for i in range(n))
        if cost < best:
            best, best_perm = cost, perm
    return sum(best_perm[i] == i for i in range(n)) / n


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_record_linkage_matches_plain_definition(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(7, 2))
    xm = x + rng.normal(scale=0.6, size=x.shape)
    res = record_linkage(x, xm)
    assert res["distance_based"] == pytest.approx(_distance_linkage_plain(x, xm), abs=1e-12)
    assert res["global"]["method"] == "exact"
    assert res["global"]["share"] == pytest.approx(_global_linkage_plain(x, xm), abs=1e-12)
    assert _plain(res)


def test_record_linkage_shares_ties():
    # integer grid: masked records equidistant from several originals
    x = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0], [5.0, 5.0], [5.0, 5.0]])
    xm = np.array([[1.0, 0.0], [2.0, 0.0], [1.0, 1.0], [2.0, 2.0], [5.0, 5.0], [5.0, 5.0]])
    res = record_linkage(x, xm, global_linkage=False)
    exp = _distance_linkage_plain(x, xm)
    assert res["distance_based"] == pytest.approx(exp, abs=1e-12)
    # row 0 ties 2 originals, row 2 ties 4, rows 4 and 5 tie each other
    assert exp == pytest.approx((0.5 + 1 + 0.25 + 1 + 0.5 + 0.5) / 6, abs=1e-12)


def test_record_linkage_release_equal_to_original_links_every_record():
    x = np.random.default_rng(9).normal(size=(50, 3))
    res = record_linkage(x, x.copy())
    assert res["distance_based"] == 1.0
    assert res["global"]["share"] == 1.0


def test_record_linkage_samples_above_the_assignment_limit():
    x = np.random.default_rng(2).normal(size=(40, 2))
    res = record_linkage(x, x.copy(), max_assignment=10, sample=8, repeats=5)
    g = res["global"]
    assert g["method"] == "sampled" and g["rows"] == 8 and g["repeats"] == 5
    assert g["share"] == 1.0 and g["ci95"] == [1.0, 1.0]
    xm = x + np.random.default_rng(3).normal(scale=1.0, size=x.shape)
    g = record_linkage(x, xm, max_assignment=10, sample=8, repeats=5)["global"]
    assert g["ci95"][0] <= g["share"] <= g["ci95"][1]
    assert g == record_linkage(x, xm, max_assignment=10, sample=8, repeats=5)["global"]


def _credit_plain(xs, xms, i, tol=1e-12):
    d = [math.sqrt(sum((xms[i, j] - xs[h, j]) ** 2 for j in range(xs.shape[1]))) for h in range(xs.shape[0])]
    ties = [h for h in range(len(d)) if d[h] <= min(d) * (1 + tol)]
    return (1 / len(ties)) if i in ties else 0.0


def test_record_linkage_samples_masked_records_above_the_exact_limit():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(60, 3))
    xm = x + rng.normal(scale=0.7, size=x.shape)
    res = record_linkage(x, xm, max_exact=10, distance_sample=20, random_state=3, global_linkage=False)
    assert res["distance_method"] == "sampled" and res["distance_rows"] == 20
    rows = np.sort(np.random.default_rng(3).choice(60, size=20, replace=False))
    mean, sd = x.mean(axis=0), x.std(axis=0, ddof=1)
    xs, xms = (x - mean) / sd, (xm - mean) / sd
    credit = [_credit_plain(xs, xms, int(i)) for i in rows]
    share = sum(credit) / 20
    assert res["distance_based"] == pytest.approx(share, abs=1e-12)
    half = 1.959963984540054 * float(np.std(credit, ddof=1)) / math.sqrt(20)
    assert res["distance_ci95"] == pytest.approx([max(0.0, share - half), min(1.0, share + half)], abs=1e-12)
    exact = record_linkage(x, xm, global_linkage=False)
    assert exact["distance_method"] == "exact"
    assert exact["distance_based"] == pytest.approx(_distance_linkage_plain(x, xm), abs=1e-12)


def test_record_linkage_rejects_bad_input():
    with pytest.raises(DataError, match="same shape"):
        record_linkage(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ParameterError, match="sample"):
        record_linkage(np.zeros((3, 2)), np.zeros((3, 2)), sample=1)


# ---------------------------------------------------------------------------------------------
# attribute disclosure


def _attr_plain(df, qis, s):
    groups = {}
    for _, row in df.iterrows():
        groups.setdefault(tuple(_key(row[q]) for q in qis), []).append(_key(row[s]))
    n = len(df)
    distinct, ent, single = [], [], 0
    for vals in groups.values():
        cnt = {}
        for v in vals:
            cnt[v] = cnt.get(v, 0) + 1
        f = len(vals)
        distinct.append(len(cnt))
        ent.append(math.exp(-sum(c / f * math.log(c / f) for c in cnt.values())))
        single += f if len(cnt) == 1 else 0
    return min(distinct), min(ent), single / n


def _emd_ordered_plain(df, qis, s, ref):
    values = sorted(set(ref))
    m = len(values)
    p = [sum(r == v for r in ref) / len(ref) for v in values]
    groups = {}
    for _, row in df.iterrows():
        groups.setdefault(tuple(_key(row[q]) for q in qis), []).append(row[s])
    worst = 0.0
    for vals in groups.values():
        q = [sum(x == v for x in vals) / len(vals) for v in values]
        cum, d = 0.0, 0.0
        for i in range(m):
            cum += q[i] - p[i]
            d += abs(cum)
        worst = max(worst, d / (m - 1))
    return worst


def test_attribute_disclosure_matches_plain_definition():
    rng = np.random.default_rng(6)
    n = 50
    df = pd.DataFrame({
        "a": rng.integers(0, 3, n),
        "b": rng.choice(["u", "v"], n),
        "num": rng.integers(0, 5, n),
        "cat": rng.choice(["p", "q", "r"], n),
    })
    df.loc[3, "cat"] = None
    original = df.copy()
    original.loc[[0, 1, 2], "num"] = [9, 9, 7]
    res = attribute_disclosure(df, ["a", "b"], ["num", "cat"], reference=original)
    for s in ["num", "cat"]:
        dl, el, single = _attr_plain(df, ["a", "b"], s)
        assert res[s]["distinct_l"] == dl
        assert res[s]["entropy_l"] == pytest.approx(el, abs=1e-9)
        assert res[s]["single_value_share"] == pytest.approx(single, abs=1e-12)
    assert res["num"]["t"] == pytest.approx(_emd_ordered_plain(df, ["a", "b"], "num", list(original["num"])), abs=1e-9)
    assert _plain(res)


def test_attribute_disclosure_one_value_per_class_gives_l_one():
    df = pd.DataFrame({"q": [1, 1, 2, 2, 3], "s": ["a", "a", "b", "b", "a"]})
    res = attribute_disclosure(df, ["q"], ["s"])["s"]
    assert res["distinct_l"] == 1
    assert res["entropy_l"] == pytest.approx(1.0, abs=1e-12)
    assert res["single_value_share"] == 1.0


def test_attribute_disclosure_unknown_column():
    with pytest.raises(DataError, match="nope"):
        attribute_disclosure(pd.DataFrame({"q": [1]}), ["q"], ["nope"])


def test_drisk_rmd_rejects_linearly_dependent_columns():
    x = np.random.default_rng(1).normal(size=(60, 2))
    x = np.column_stack([x, x[:, 0] + x[:, 1]])
    with pytest.raises(DataError, match="singular"):
        drisk_rmd(x, np.round(x, 1))


def test_drisk_rmd_large_path_is_robust_and_close_to_full_mcd():
    from incrowd.reporting._risk import _mcd_covariance

    rng = np.random.default_rng(7)
    clean = rng.normal(size=(900, 3)) @ np.array([[1.0, 0.6, 0.0], [0.0, 0.8, 0.2], [0.0, 0.0, 0.5]])
    x = np.vstack([clean, rng.normal(loc=8.0, size=(100, 3))])  # 10 % planted outliers
    sub = _mcd_covariance(x, 0, None, 200)
    full = _mcd_covariance(x, 0, None, 5000)  # the MCD on all rows, robustbase's corrections alike
    assert np.allclose(sub, full, rtol=0.15, atol=0.05)
    refined_on_sample = _mcd_covariance(x, 0, None, 200, refine_rows=500)
    assert np.allclose(refined_on_sample, full, rtol=0.2, atol=0.08)
    assert np.allclose(sub, np.cov(clean, rowvar=False), rtol=0.25, atol=0.1)
    res = drisk_rmd(x, np.round(x, 1), mcd_max_rows=200)
    assert 0.0 <= res["risk2"] <= res["risk1"] <= 1.0


@pytest.mark.parametrize("block_q,block_x", [(1, 1), (3, 4), (5, 2)])
def test_record_linkage_blocks_keep_ties_and_minimum(block_q, block_x):
    from incrowd.reporting._risk import _distance_linkage

    x = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0], [5.0, 5.0], [5.0, 5.0], [9.0, 1.0]])
    xm = np.array([[1.0, 0.0], [2.0, 0.0], [1.0, 1.0], [2.0, 2.0], [5.0, 5.0], [5.0, 5.0], [7.0, 3.0]])
    rows = np.arange(7)
    credit = _distance_linkage(x, xm, rows, 1e-12, block_q=block_q, block_x=block_x)
    expected = [_credit_plain(x, xm, i) for i in range(7)]
    assert credit.tolist() == pytest.approx(expected, abs=1e-15)
