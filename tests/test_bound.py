"""incrowd.lower_bound: no k-partition loses less (checked by exhaustive search on tiny data
and against every method on the benchmark files)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import benchmark_matrix
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from incrowd import METHODS, ParameterError, lower_bound, microaggregate
from incrowd.values import standardize

pytestmark = [pytest.mark.filterwarnings("ignore::incrowd.DataWarning"), pytest.mark.slow]


def optimal_il(X: np.ndarray, k: int) -> float:
    """The least information loss of any partition into groups of >= k rows (any size), by
    dynamic programming over subsets: best[S] = min over groups G of S holding S's lowest row of
    SSE(G) + best[S - G]."""
    Z = standardize(X)[0]
    n = Z.shape[0]
    total = float((Z * Z).sum())
    if total == 0.0:
        return 0.0
    full = (1 << n) - 1
    cost = np.full(1 << n, np.inf)
    for mask in range(1, 1 << n):
        rows = [i for i in range(n) if mask >> i & 1]
        if len(rows) >= k:
            P = Z[rows]
            cost[mask] = float(((P - P.mean(axis=0)) ** 2).sum())
    best = np.full(1 << n, np.inf)
    best[0] = 0.0
    for mask in range(1, 1 << n):
        low = mask & -mask
        rest = mask ^ low
        sub = rest
        while True:  # every subset of rest, joined with the lowest row
            group = sub | low
            if cost[group] < np.inf and best[mask ^ group] < np.inf:
                best[mask] = min(best[mask], cost[group] + best[mask ^ group])
            if sub == 0:
                break
            sub = (sub - 1) & rest
    return best[full] / total


def test_optimal_il_on_a_hand_example():
    # 1-D points 0, 1, 2, 10, 11, 12, k = 3: the groups {0,1,2} and {10,11,12}
    X = np.array([0.0, 1, 2, 10, 11, 12])[:, None]
    sst = ((X - X.mean()) ** 2).sum()
    assert optimal_il(X, 3) == pytest.approx(4.0 / sst)


@st.composite
def tiny(draw):
    n = draw(st.integers(2, 10))
    m = draw(st.integers(1, 3))
    elements = st.one_of(st.integers(-2, 2).map(float),
                         st.floats(-100, 100, allow_nan=False, allow_infinity=False))
    X = draw(arrays(np.float64, (n, m), elements=elements))
    k = draw(st.integers(2, n))
    return X, k


# the bound takes every pair of rows on small files and the nearest rows with stand-ins for the
# rest on large ones: a limit of 0 rows sends the tiny cases down the second path too
PATHS = {"every pair": None, "nearest rows": 0}


@pytest.mark.parametrize("all_rows_max", PATHS.values(), ids=PATHS.keys())
@settings(max_examples=60, deadline=None)
@given(case=tiny())
# rows equal up to rounding after standardizing: one distinct row, no neighbour to list
@example(case=(np.array([[6.1628397e-109]] * 3), 2))
def test_bound_is_below_the_exact_optimum(all_rows_max, case):
    X, k = case
    with _rows_limit(all_rows_max):
        L = lower_bound(X, k)
    assert 0.0 <= L <= 1.0
    assert optimal_il(X, k) >= L * (1 - 1e-9) - 1e-12


@pytest.mark.parametrize("all_rows_max", PATHS.values(), ids=PATHS.keys())
def test_bound_on_twelve_rows(all_rows_max):
    X = np.random.default_rng(4).standard_normal((12, 2))
    for k in (2, 3, 4):
        with _rows_limit(all_rows_max):
            L = lower_bound(X, k)
        opt = optimal_il(X, k)
        assert 0.4 * opt < L <= opt


def _rows_limit(value):
    """The bound's every-pair limit set to ``value`` for a with-block (None: as shipped); with a
    limit, also the fewest candidates (2k), so that tiny data has rows outside them."""
    from contextlib import ExitStack, nullcontext
    from unittest.mock import patch

    import incrowd.microaggregation._bound as bound

    if value is None:
        return nullcontext()
    stack = ExitStack()
    stack.enter_context(patch.object(bound, "_ALL_ROWS_MAX", value))
    stack.enter_context(patch.object(bound, "_CANDIDATES_PER_K", 1))
    return stack


@pytest.mark.parametrize("all_rows_max", PATHS.values(), ids=PATHS.keys())
def test_copies_of_rows(all_rows_max):
    rng = np.random.default_rng(5)
    # three values with k or more copies each: a partition of zero loss exists
    X = np.repeat(rng.standard_normal((3, 2)), [3, 4, 5], axis=0)
    with _rows_limit(all_rows_max):
        assert lower_bound(X, 3) == 0.0
    # copies among distinct rows (12 rows, 6 distinct); with k = 4 no value has k copies
    X = np.repeat(rng.standard_normal((6, 2)), [3, 3, 2, 2, 1, 1], axis=0)
    for k in (2, 3, 4):
        with _rows_limit(all_rows_max):
            L = lower_bound(X, k)
        opt = optimal_il(X, k)
        assert 0.4 * opt < L <= opt, k


def test_copies_raise_the_bound_of_the_nearest_rows_path(monkeypatch):
    import incrowd.microaggregation._bound as bound

    # 100 values with 60 copies each and 300 without: a copy's 10k nearest rows would all be
    # copies, so its stand-in for the other rows (at distance 0) would sit at -max(u)
    rng = np.random.default_rng(8)
    X = np.vstack([np.repeat(rng.standard_normal((100, 2)), 60, axis=0), rng.standard_normal((300, 2))])
    monkeypatch.setattr(bound, "_ALL_ROWS_MAX", 0)
    with_copies = lower_bound(X, 5, iterations=30)
    monkeypatch.setattr(bound, "_distinct", lambda Z: (Z, np.ones(Z.shape[0], np.int64)))
    one_per_row = lower_bound(X, 5, iterations=30)
    assert with_copies > one_per_row


def test_each_pair_points_back():
    from incrowd.microaggregation._bound import _all_pairs, _reverse

    Z = np.random.default_rng(3).standard_normal((40, 3))
    _, nbr = _all_pairs(Z)
    rev = _reverse(nbr)
    i = np.repeat(np.arange(40), 39).reshape(40, 39)
    assert (nbr[nbr, rev] == i).all()


def test_pair_multipliers_raise_the_bound_on_tarragona(monkeypatch):
    import incrowd.microaggregation._bound as bound

    Z = benchmark_matrix("tarragona")
    with_pairs = lower_bound(Z, 3, iterations=300)
    monkeypatch.setattr(bound, "_STEP_PAIRS", 0.0)
    assert with_pairs > lower_bound(Z, 3, iterations=300) * 1.03


def test_more_iterations_never_lower_the_bound():
    X = np.random.default_rng(1).standard_normal((300, 3))
    assert lower_bound(X, 5, iterations=50) >= lower_bound(X, 5, iterations=0)


def test_constant_data_has_bound_zero():
    assert lower_bound(np.ones((10, 2)), 3) == 0.0


@pytest.mark.parametrize("k, iterations, name", [(1, 10, "k"), (11, 10, "k"), (2.5, 10, "k"),
                                                 (3, -1, "iterations")])
def test_bad_parameters_are_named(k, iterations, name):
    with pytest.raises(ParameterError, match=name):
        lower_bound(np.arange(20.0).reshape(10, 2), k, iterations=iterations)


@pytest.mark.parametrize("name", ["census", "tarragona", "cloud1", "cloud2"])
def test_every_method_is_above_the_bound_on_benchmark_files(name):
    Z = benchmark_matrix(name)
    for k in (3, 10):
        L = lower_bound(Z, k)
        for method in METHODS:
            params = {"runs": 2} if method == "ona" else {"max_rounds": 4} if method == "refine" else {}
            il = microaggregate(Z, k, method, random_state=0, **params).information_loss
            assert il >= L, (method, k)


def test_a_long_refine_run_stays_above_the_bound_on_census():
    # the closest any result comes to the bound (IL/L about 1.3 at k = 10): Refine past round 60,
    # where threshold accepting runs
    Z = benchmark_matrix("census")
    L = lower_bound(Z, 10)
    il = microaggregate(Z, 10, "refine", random_state=0, max_rounds=400, max_seconds=600.0).information_loss
    assert L <= il < 1.35 * L


def test_microaggregate_bound_fields():
    X = np.random.default_rng(2).standard_normal((60, 2))
    res = microaggregate(X, 3, "ona-star", bound=True)
    s = res.summary()
    assert s["lower_bound"] == res.lower_bound > 0
    assert s["gap"] == pytest.approx(res.information_loss / res.lower_bound - 1)
    assert "lower_bound" not in microaggregate(X, 3, "ona-star").summary()
    with pytest.raises(ParameterError, match="bound"):
        microaggregate(X, 3, bound="yes")


def test_the_scan_for_many_columns_gives_the_trees_bound(monkeypatch):
    import incrowd.microaggregation._bound as bound
    import incrowd.microaggregation._knn as knn

    X = np.random.default_rng(6).standard_normal((400, 10))
    monkeypatch.setattr(bound, "_ALL_ROWS_MAX", 0)  # 400 rows would take every pair
    tree = lower_bound(X, 4, iterations=20)
    monkeypatch.setattr(knn, "SCAN_MIN_POINTS", 10)
    monkeypatch.setattr(bound, "use_scan", knn.use_scan)
    scan = lower_bound(X, 4, iterations=20)
    assert scan == pytest.approx(tree, rel=1e-6)
