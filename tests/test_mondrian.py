"""Mondrian, Mondrian V, Mondrian V2D: kernel = plain reference, invariants, hand-computed
fixtures, and paper 000 Table 6 (Adult, Credit Card)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import reference as ref
from benchdata import data_dir
from conftest import benchmark_matrix
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.values import standardize
from incrowd.exceptions import ParameterError
from incrowd.microaggregation import information_loss
from incrowd.microaggregation._kernels import heap_sort_range
from incrowd.microaggregation.mondrian import _mondrian_plain as mondrian_plain
from incrowd.microaggregation.mondrian._mondrian_kernel import (
    RULE_RANGE,
    RULE_V2D,
    RULE_VARIANCE,
    mondrian_labels,
    mondrian_subtree_labels,
    select_kth,
)
from incrowd.microaggregation.mondrian.mondrian import Mondrian, MondrianV, MondrianV2D

RULES = {"range": RULE_RANGE, "variance": RULE_VARIANCE, "v2d": RULE_V2D}
ESTIMATORS = {"range": Mondrian, "variance": MondrianV, "v2d": MondrianV2D}

# Constant columns are legitimate in the invented data; their warning is tested in test_api.py.
pytestmark = pytest.mark.filterwarnings("ignore::incrowd.DataWarning")


def kernel(Z, k, rule, diagonals="sum", split_2k=False):
    return mondrian_labels(np.ascontiguousarray(Z), k, RULES[rule], diagonals == "unit", split_2k)


def check_partition(labels, n, k, split_2k):
    """Every row in exactly one group, ids dense, k <= size <= 2k (2k - 1 with split_2k)."""
    assert labels.shape == (n,)
    sizes = np.bincount(labels)
    assert labels.min() == 0 and np.all(sizes > 0) and sizes.sum() == n
    assert sizes.min() >= k
    upper = 2 * k - 1 if split_2k else 2 * k
    if n > upper:  # otherwise the whole data set is the one group
        assert sizes.max() <= upper
    else:
        assert sizes.tolist() == [n]


# ---------------------------------------------------------------------------------------------
# Hand-computed fixtures


def test_one_dimension_k2():
    # Root (9 >= 2k = 4 rows): the 4 smallest go left {1,2,3,4} and, having 2k rows, are cut
    # into {1,2} and {3,4}; the right part {5,...,9} into {5,6} and {7,8,9}. Ids depth-first,
    # low side first.
    x = np.array([5, 1, 4, 2, 3, 9, 7, 8, 6], dtype=float)
    expected = np.array([2, 0, 1, 0, 1, 3, 3, 3, 2])
    for cls in (Mondrian, MondrianV, MondrianV2D):
        np.testing.assert_array_equal(cls(k=2).fit(x).labels_, expected)
    # split_2k=False (Table 6's rule): the part {1,2,3,4} of exactly 2k rows stays whole.
    np.testing.assert_array_equal(
        MondrianV(k=2, split_2k=False).fit(x).labels_, [1, 0, 0, 0, 0, 2, 2, 2, 1]
    )


# Rows r0..r8. The root (9 rows) is cut on x (range 114 vs 50; sum of squares ~35000 vs 3889)
# after the 4 rows near x = -100; the right part r3, r6, r1, r7, r4 (x = 10..14, stable order by
# x) is cut on y (range 50 vs 4; 3000 vs 10) at position 2: y = 0 for r3, r6, r1, so the tie is
# broken by the parent's order (x): r3, r6 go left. Row order would have sent r1, r3 left.
TIE_X = np.array(
    [[-100, 0], [12, 0], [-99, 0], [10, 0], [14, 50], [-98, 0], [11, 0], [13, 50], [-97, 0]],
    dtype=float,
)
TIE_EXPECTED = np.array([0, 2, 0, 1, 2, 0, 1, 2, 0])


@pytest.mark.parametrize("rule", ["range", "variance"])
def test_ties_at_the_median_follow_the_parents_order(rule):
    np.testing.assert_array_equal(kernel(TIE_X, 2, rule), TIE_EXPECTED)
    np.testing.assert_array_equal(ref.mondrian(TIE_X, 2, rule), TIE_EXPECTED)


# Five rows, k = 2, one cut. Sums of squared deviations (all means are integers, so exact):
# x = 8,9,0,7,6 -> 50; y = 4,7,3,2,4 -> 14; x+y = 12,16,3,9,10 -> 90; x-y = 4,2,-3,5,2 -> 38.
# "sum" takes x+y (90) and cuts after r2 (3), r3 (9); "unit" halves the diagonals (45, 19),
# takes x (50) and cuts after r2 (0), r4 (6).
V2D_X = np.array([[8, 4], [9, 7], [0, 3], [7, 2], [6, 4]], dtype=float)


def test_v2d_diagonal_scores_by_hand():
    np.testing.assert_array_equal(kernel(V2D_X, 2, "v2d", "sum"), [1, 1, 0, 0, 1])
    np.testing.assert_array_equal(kernel(V2D_X, 2, "v2d", "unit"), [1, 1, 0, 1, 0])
    np.testing.assert_array_equal(kernel(V2D_X, 2, "variance"), [1, 1, 0, 1, 0])
    np.testing.assert_array_equal(ref.mondrian(V2D_X, 2, "v2d", "sum"), [1, 1, 0, 0, 1])
    np.testing.assert_array_equal(ref.mondrian(V2D_X, 2, "v2d", "unit"), [1, 1, 0, 1, 0])


def test_small_data_is_one_group():
    X = np.arange(8, dtype=float).reshape(4, 2)
    np.testing.assert_array_equal(Mondrian(k=2, split_2k=False).fit(X).labels_, [0, 0, 0, 0])
    np.testing.assert_array_equal(Mondrian(k=2).fit(X).labels_, [0, 0, 1, 1])
    np.testing.assert_array_equal(Mondrian(k=3).fit(X).labels_, [0, 0, 0, 0])


# ---------------------------------------------------------------------------------------------
# Kernel = reference


@st.composite
def tie_heavy_data(draw):
    """Small integer grids: duplicate rows, equal projections, equal direction scores."""
    n = draw(st.integers(2, 60))
    m = draw(st.integers(1, 4))
    k = draw(st.integers(2, max(2, n // 2)))
    levels = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    X = np.random.default_rng(seed).integers(0, levels, (n, m)).astype(np.float64)
    return standardize(X)[0], min(k, n)


@settings(max_examples=200, deadline=None)
@given(
    tie_heavy_data(),
    st.sampled_from(["range", "variance", "v2d"]),
    st.sampled_from(["sum", "unit"]),
    st.booleans(),
)
def test_kernel_equals_reference_on_tie_heavy_data(data, rule, diagonals, split_2k):
    Z, k = data
    got = kernel(Z, k, rule, diagonals, split_2k)
    np.testing.assert_array_equal(got, ref.mondrian(Z, k, rule, diagonals, split_2k))
    check_partition(got, Z.shape[0], k, split_2k)


@pytest.mark.parametrize("rule", ["range", "variance", "v2d"])
@pytest.mark.parametrize("n,m,k", [(3000, 15, 10), (2001, 3, 3), (999, 1, 4)])
def test_kernel_equals_reference_on_gaussian_data(rule, n, m, k):
    Z = np.random.default_rng(n).standard_normal((n, m))
    got = kernel(Z, k, rule)
    np.testing.assert_array_equal(got, ref.mondrian(Z, k, rule))
    # Continuous data: no ties; sizes in [k, 2k], and in [k, 2k - 1] with split_2k.
    check_partition(got, n, k, False)
    check_partition(kernel(Z, k, rule, split_2k=True), n, k, True)


@pytest.mark.parametrize("rule", ["range", "variance", "v2d"])
@pytest.mark.parametrize("k", [2, 7])
def test_kernel_equals_reference_on_adult(rule, k):
    Z = benchmark_matrix("adult")  # 48,842 rows, 9,953 distinct: ties everywhere
    np.testing.assert_array_equal(kernel(Z, k, rule), ref.mondrian(Z, k, rule))


@pytest.mark.parametrize("rule,rows,k", [("range", None, 3), ("variance", None, 3), ("v2d", 4000, 5)])
def test_kernel_equals_reference_on_credit_card(rule, rows, k):
    Z = credit_card() if rows is None else standardize(credit_card()[:rows])[0]
    np.testing.assert_array_equal(kernel(Z, k, rule), ref.mondrian(Z, k, rule))


@pytest.mark.parametrize("name", ["census", "eia", "cloud1"])
def test_kernel_equals_reference_on_small_benchmarks(name):
    Z = benchmark_matrix(name)
    for rule in RULES:
        np.testing.assert_array_equal(kernel(Z, 3, rule, "unit"), ref.mondrian(Z, 3, rule, "unit"))


@settings(max_examples=200, deadline=None)
@given(
    tie_heavy_data(),
    st.sampled_from(["range", "variance", "v2d"]),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0, 5, 12]),
    st.lists(st.integers(0, 15), max_size=3),
)
def test_numpy_twin_cuts_as_the_kernel(data, rule, unit, split_2k, leaf_max, ancestors):
    """The twin a first use takes (plain numpy) makes the kernel's cuts, numbered alike, for
    every rule, leaf limit and set of ancestors' cuts ordering tied rows."""
    Z, k = data
    n_dirs = Z.shape[1] ** 2 if rule == "v2d" else Z.shape[1]
    path = np.array([a % n_dirs for a in ancestors], np.int64)
    args = (k, RULES[rule], unit, split_2k, leaf_max, path)
    np.testing.assert_array_equal(mondrian_plain.mondrian_subtree_labels(Z, *args),
                                  mondrian_subtree_labels(np.ascontiguousarray(Z), *args))


@pytest.mark.parametrize("name", ["census", "eia", "adult"])
def test_numpy_twin_cuts_as_the_kernel_on_benchmark_files(name):
    Z = np.ascontiguousarray(benchmark_matrix(name))
    for rule in RULES.values():
        for leaf_max in (0, 40):
            args = (3, rule, True, True, leaf_max, np.empty(0, np.int64))
            np.testing.assert_array_equal(mondrian_plain.mondrian_subtree_labels(Z, *args),
                                          mondrian_subtree_labels(Z, *args))


def test_a_first_use_cuts_small_data_with_the_twin(monkeypatch):
    """Until the Mondrian kernel is compiled or cached, data within PLAIN_WORK are cut by the
    numpy twin; larger data, or any data once the kernel is ready, by the kernel: same parts."""
    from incrowd.microaggregation.mondrian import mondrian as module

    Z = np.ascontiguousarray(np.random.default_rng(2).standard_normal((500, 3)))
    taken = []
    twin = mondrian_plain.mondrian_subtree_labels
    monkeypatch.setattr(module._mondrian_plain, "mondrian_subtree_labels",
                        lambda *a: taken.append("twin") or twin(*a))
    monkeypatch.setattr(module, "mondrian_subtree_labels",
                        lambda *a: taken.append("kernel") or mondrian_subtree_labels(*a))
    work = 500 * (9 + 100)
    found = []
    for ready, limit, used in ((True, work, "kernel"), (False, work, "twin"), (False, work - 1, "kernel")):
        monkeypatch.setattr(module, "compiled_or_cached", lambda _kernel, ready=ready: ready)
        monkeypatch.setattr(module, "PLAIN_WORK", limit)
        found.append(MondrianV2D(4).fit(Z).labels_)
        assert taken.pop() == used
    np.testing.assert_array_equal(found[1], found[0])
    np.testing.assert_array_equal(found[2], found[0])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 3) | st.floats(-1e3, 1e3), min_size=1, max_size=80), st.data())
def test_select_kth(values, data):
    a = np.array(values, dtype=float)
    r = data.draw(st.integers(0, a.size - 1))
    assert select_kth(a.copy(), a.size, r) == np.sort(a)[r]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 3) | st.floats(-1e3, 1e3), min_size=0, max_size=80), st.data())
def test_heap_sort_range_sorts_the_range_only(values, data):
    # select_kth's fallback after too many quickselect rounds; quickselect rarely reaches it
    a = np.array(values, dtype=float)
    lo = data.draw(st.integers(0, a.size))
    hi = data.draw(st.integers(lo, a.size))
    b = a.copy()
    heap_sort_range(b, lo, hi)
    np.testing.assert_array_equal(b[lo:hi], np.sort(a[lo:hi]))
    np.testing.assert_array_equal(b[:lo], a[:lo])
    np.testing.assert_array_equal(b[hi:], a[hi:])


# ---------------------------------------------------------------------------------------------
# Estimators


@pytest.mark.parametrize("rule", ["range", "variance", "v2d"])
@settings(max_examples=40, deadline=None)
@given(data=tie_heavy_data(), split_2k=st.booleans(), shift=st.floats(-1e3, 1e3), scale=st.floats(0.1, 1e3))
def test_estimator_invariants(rule, data, split_2k, shift, scale):
    Z, k = data
    X = Z * scale + shift  # standardization inside fit undoes this up to rounding
    model = ESTIMATORS[rule](k=k, split_2k=split_2k).fit(X)
    check_partition(model.labels_, X.shape[0], k, split_2k)
    assert 0.0 <= model.information_loss_ <= 1.0 + 1e-12
    again = ESTIMATORS[rule](k=k, split_2k=split_2k, random_state=3).fit(X)
    np.testing.assert_array_equal(again.labels_, model.labels_)


def test_v2d_in_one_dimension_is_mondrian_v():
    x = np.random.default_rng(0).standard_normal(500)
    np.testing.assert_array_equal(MondrianV2D(k=4).fit(x).labels_, MondrianV(k=4).fit(x).labels_)


def test_fit_transform_publishes_group_means():
    X = np.random.default_rng(1).standard_normal((300, 4)) * [1, 10, 100, 1000]
    model = MondrianV2D(k=5)
    out = model.fit_transform(pd.DataFrame(X, columns=list("abcd")))
    for g in range(model.n_groups_):
        rows = model.labels_ == g
        np.testing.assert_allclose(out.to_numpy()[rows], np.tile(X[rows].mean(axis=0), (rows.sum(), 1)))


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: MondrianV2D(k=3, diagonals="half"), "diagonals must be one of 'sum', 'unit'; got 'half'"),
        (lambda: MondrianV(k=3, split_2k="yes"), "split_2k must be True or False; got 'yes'"),
        (lambda: Mondrian(k=1), "k must be an integer in [2, n_rows=20]; got 1"),
    ],
)
def test_parameter_errors(make, message):
    with pytest.raises(ParameterError) as info:
        make().fit(np.arange(40.0).reshape(20, 2))
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# Paper 000, Table 6 (information loss in %, k = 2, 3, 4, 5, 7, 10)

KS = (2, 3, 4, 5, 7, 10)
TABLE_6 = {
    "adult": {
        "range": (0.25, 0.51, 0.51, 0.51, 0.92, 0.92),
        "variance": (0.21, 0.41, 0.41, 0.41, 0.76, 0.76),
        "v2d": (0.19, 0.38, 0.38, 0.38, 0.71, 0.71),
    },
    "credit": {
        "range": (30.33, 30.33, 41.47, 41.47, 43.75, 50.71),
        "variance": (24.05, 24.05, 32.54, 32.54, 34.12, 39.27),
        "v2d": (15.81, 15.81, 21.93, 21.93, 23.23, 27.34),
    },
}

_credit: list[np.ndarray] = []


def credit_card() -> np.ndarray:
    """Credit Card (30,000 rows, the 24 attributes besides ID), standardized."""
    if not _credit:
        path = data_dir() / "credit_default.csv.gz"
        if not path.exists():
            pytest.skip(f"benchmark file {path} is absent (set INCROWD_DATA)")
        frame = pd.read_csv(path).drop(columns="ID")
        _credit.append(standardize(frame.to_numpy(dtype=np.float64))[0])
    return _credit[0]


@pytest.mark.parametrize("name", ["adult", "credit"])
@pytest.mark.parametrize("rule", ["range", "variance", "v2d"])
def test_table_6(name, rule):
    Z = benchmark_matrix("adult") if name == "adult" else credit_card()
    got = [100 * information_loss(Z, kernel(Z, k, rule), standardized=True) for k in KS]
    # The paper prints 2 decimals; we reproduce every printed digit (the tightest check the
    # table allows: |ours - published| <= 0.005, i.e. <= 2.7 % relative on Adult's 0.19).
    assert [f"{v:.2f}" for v in got] == [f"{v:.2f}" for v in TABLE_6[name][rule]]


def test_table_6_needs_the_paper_conventions():
    """The documented choices matter: each alternative misses a Table 6 cell."""
    Z = credit_card()
    il = lambda labels: round(100 * information_loss(Z, labels, standardized=True), 2)  # noqa: E731
    assert il(kernel(Z, 2, "v2d", "unit")) != 15.81  # unit-vector diagonal scores: 17.84
    assert il(kernel(Z, 2, "variance", split_2k=True)) != 24.05  # splitting parts of 2k rows

# seconds in all: the full suite (make test) runs them, the quick tier leaves them out
pytestmark = [pytestmark, pytest.mark.slow]
