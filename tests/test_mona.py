"""MONA_rho and MONA 2D_rho (paper 000 Algorithm 6): the two ends of the dial are exactly
Mondrian V (V2D) and ONA*, the estimator equals the plain recursive reference in between, the
invariants hold, bad parameters are refused, and paper 000's Table 6 rows are reproduced."""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from conftest import benchmark_matrix
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd import (
    MONA,
    MONA2D,
    MondrianV,
    MondrianV2D,
    ONAStar,
    ParameterError,
    microaggregate,
)
from incrowd.values import standardize
from incrowd.microaggregation.mondrian._mondrian_kernel import RULE_VARIANCE, mondrian_labels
from incrowd.microaggregation.mondrian.mona import mona_part_labels, split_limit
from incrowd.microaggregation.ona._ona_kernel import ona_star_labels, sst_per_row
from incrowd.microaggregation.ona._ona_star_fast import ona_star_best_labels

pytestmark = pytest.mark.filterwarnings("ignore::incrowd.DataWarning")


@st.composite
def tie_heavy_data(draw):
    """Small integer grids: duplicate rows, tied projections and tied costs."""
    n = draw(st.integers(2, 80))
    m = draw(st.integers(1, 3))
    k = draw(st.integers(2, max(2, min(n, 6))))
    levels = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    X = np.random.default_rng(seed).integers(0, levels, (n, m)).astype(np.float64)
    return X, k


# ---------------------------------------------------------------------------------------------
# The ends of the dial, exactly


@settings(max_examples=60, deadline=None)
@given(tie_heavy_data(), st.booleans())
def test_rho_0_is_mondrian_and_rho_1_is_ona_star(data, split_2k):
    X, k = data
    np.testing.assert_array_equal(
        MONA(k=k, rho=0.0, split_2k=split_2k).fit(X).labels_,
        MondrianV(k=k, split_2k=split_2k).fit(X).labels_,
    )
    np.testing.assert_array_equal(
        MONA2D(k=k, rho=0.0, split_2k=split_2k).fit(X).labels_,
        MondrianV2D(k=k, split_2k=split_2k).fit(X).labels_,
    )
    star = ONAStar(k=k).fit(X).labels_
    np.testing.assert_array_equal(MONA(k=k, rho=1.0, split_2k=split_2k).fit(X).labels_, star)
    np.testing.assert_array_equal(MONA2D(k=k, rho=1.0).fit(X).labels_, star)


@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 10])
def test_ends_of_the_dial_on_adult(k):
    Z = benchmark_matrix("adult")  # 48,842 rows, 9,953 distinct: ties everywhere
    np.testing.assert_array_equal(MONA(k=k, rho=0).fit(Z).labels_, MondrianV(k=k).fit(Z).labels_)
    np.testing.assert_array_equal(
        MONA2D(k=k, rho=0).fit(Z).labels_, MondrianV2D(k=k).fit(Z).labels_
    )
    model = MONA(k=k, rho=1).fit(Z)
    np.testing.assert_array_equal(model.labels_, ONAStar(k=k).fit(Z).labels_)
    assert model.n_parts_ == 1 and model.split_limit_ == Z.shape[0]


def test_split_limit():
    assert split_limit(48842, 0.0) == 1
    assert split_limit(48842, 1.0) == 48842
    assert split_limit(48842, 0.5) == 221  # sqrt(48842) = 221.0
    assert split_limit(30000, 0.5) == 173


# ---------------------------------------------------------------------------------------------
# In between: the plain recursive reference (Mondrian V cuts, reference ONA* in each part)


@settings(max_examples=60, deadline=None)
@given(tie_heavy_data(), st.sampled_from([0.3, 0.5, 0.7, 0.9]), st.booleans())
def test_kernel_equals_reference_on_tie_heavy_data(data, rho, split_2k):
    X, k = data
    Z = standardize(X)[0]
    got = MONA(k=k, rho=rho, split_2k=split_2k).fit(X).labels_
    np.testing.assert_array_equal(got, ref.mona(Z, k, rho, "variance", split_2k))


@pytest.mark.parametrize("rho", [0.4, 0.6])
def test_kernel_equals_reference_on_gaussian_data(rho):
    X = np.random.default_rng(5).standard_normal((1500, 4))
    Z = standardize(X)[0]
    np.testing.assert_array_equal(MONA(k=3, rho=rho).fit(X).labels_, ref.mona(Z, 3, rho))
    np.testing.assert_array_equal(MONA2D(k=3, rho=rho).fit(X).labels_, ref.mona(Z, 3, rho, "v2d"))


@settings(max_examples=150, deadline=None)
@given(tie_heavy_data(), st.integers(0, 90), st.booleans())
def test_mondrian_kernel_leaf_max_equals_reference(data, leaf_max, split_2k):
    X, k = data
    Z = standardize(X)[0]
    got = mondrian_labels(Z, k, RULE_VARIANCE, False, split_2k, leaf_max)
    np.testing.assert_array_equal(got, ref.mondrian(Z, k, "variance", "sum", split_2k, leaf_max))


def test_groups_stay_inside_the_mondrian_parts():
    X = np.random.default_rng(2).standard_normal((4000, 3))
    model = MONA(k=4, rho=0.5).fit(X)
    parts = mondrian_labels(standardize(X)[0], 4, RULE_VARIANCE, False, True, model.split_limit_)
    for g in range(model.n_groups_):
        assert np.unique(parts[model.labels_ == g]).size == 1
    assert model.n_parts_ == np.unique(parts).size  # 4000 / 2^6 = 62.5 <= 63: all to ONA*
    assert np.bincount(parts).max() <= model.split_limit_


@pytest.mark.parametrize("k", [2, 3])
def test_parts_side_by_side_give_the_groups_of_parts_one_after_another(k):
    # parts of 700-1400 rows: at k = 2 each takes ONA*'s fast kernel (320 clusters and more),
    # at k = 3 the reference kernel; several parts, so that the workers share them
    Z = standardize(np.random.default_rng(11).standard_normal((11_000, 4)))[0]
    limit, scale = split_limit(Z.shape[0], 0.78), sst_per_row(Z)
    one = mona_part_labels(Z, k, RULE_VARIANCE, limit, scale, workers=1)
    assert one[1] >= 8
    for workers in (2, 3):
        got = mona_part_labels(Z, k, RULE_VARIANCE, limit, scale, workers=workers)
        np.testing.assert_array_equal(got[0], one[0])
        assert got[1:] == one[1:]


def test_a_part_on_one_thread_gets_the_groups_of_the_threaded_fit():
    Z = standardize(np.random.default_rng(12).standard_normal((3000, 6)))[0]
    threaded = ona_star_best_labels(Z, 2, 100, False)
    serial = ona_star_best_labels(Z, 2, 100, False, threads=False)
    np.testing.assert_array_equal(serial[0], threaded[0])
    np.testing.assert_array_equal(serial[0], ona_star_labels(Z, 2, 100)[0])


# ---------------------------------------------------------------------------------------------
# Invariants


@pytest.mark.parametrize("cls", [MONA, MONA2D])
@settings(max_examples=40, deadline=None)
@given(data=tie_heavy_data(), rho=st.floats(0.0, 1.0))
def test_invariants(cls, data, rho):
    X, k = data
    model = cls(k=k, rho=rho).fit(X)
    n = X.shape[0]
    sizes = np.bincount(model.labels_)
    assert model.labels_.min() == 0 and np.all(sizes > 0) and sizes.sum() == n
    assert sizes.min() >= k
    assert sizes.max() <= (2 * k - 1 if n >= 2 * k else n)
    assert 0.0 <= model.information_loss_ <= 1.0 + 1e-12
    np.testing.assert_array_equal(cls(k=k, rho=rho, random_state=4).fit(X).labels_, model.labels_)


def test_more_ona_never_hurts_much_on_adult():
    # Not a theorem (a cut can separate rows ONA* would group), but on Adult each step of rho
    # toward ONA* lowers the loss (paper 000 Figure 2a); this guards against a broken hand-over.
    Z = benchmark_matrix("adult")
    losses = [MONA(k=10, rho=r).fit(Z).information_loss_ for r in (0.0, 0.3, 0.5, 0.7)]
    assert losses == sorted(losses, reverse=True)


# ---------------------------------------------------------------------------------------------
# Parameters


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: MONA(k=3, rho=1.5), "rho must be in [0.0, 1.0]; got 1.5"),
        (lambda: MONA(k=3, rho=-0.1), "rho must be in [0.0, 1.0]; got -0.1"),
        (lambda: MONA(k=3, rho=float("nan")), "rho must be a real number in [0.0, 1.0]; got nan"),
        (lambda: MONA(k=3, rho="half"), "rho must be a real number in [0.0, 1.0]; got 'half'"),
        (lambda: MONA(k=3, max_rounds=0), "max_rounds must be an integer >= 1; got 0"),
        (lambda: MONA(k=3, split_2k=None), "split_2k must be True or False; got None"),
        (lambda: MONA2D(k=3, diagonals="x"), "diagonals must be one of 'sum', 'unit'; got 'x'"),
    ],
)
def test_bad_parameters_are_refused_clearly(make, message):
    with pytest.raises(ParameterError) as info:
        make().fit(np.arange(40.0).reshape(20, 2))
    assert str(info.value) == message


def test_reachable_by_name():
    X = np.random.default_rng(0).standard_normal((500, 3))
    for name, cls in (("mona", MONA), ("mona-2d", MONA2D)):
        result = microaggregate(X, 5, name, rho=0.6)
        np.testing.assert_array_equal(result.labels, cls(k=5, rho=0.6).fit(X).labels_)
        assert result.params["rho"] == 0.6 and result.verification.ok
    with pytest.raises(ParameterError, match=r"rho must be in \[0.0, 1.0\]; got 2"):
        microaggregate(X, 5, "mona", rho=2)


# ---------------------------------------------------------------------------------------------
# Paper 000, Table 6 (Adult): MONA_0.5 and MONA 2D_0.5, IL in %, two decimals

KS = (2, 3, 4, 5, 7, 10)
TABLE_6_ADULT = {
    MONA: (0.05, 0.11, 0.16, 0.21, 0.32, 0.46),
    MONA2D: (0.05, 0.10, 0.16, 0.21, 0.30, 0.46),
}


@pytest.mark.parametrize("cls", [MONA, MONA2D])
def test_table_6_adult(cls):
    Z = benchmark_matrix("adult")
    got = np.array([100 * cls(k=k, rho=0.5).fit(Z).information_loss_ for k in KS])
    published = np.array(TABLE_6_ADULT[cls])
    # Two decimals on values of 0.05..0.46 % are coarse (0.005 is 10 % of 0.05). Ours rounds to
    # the published value in 5 of 6 cells of MONA and 4 of 6 of MONA 2D, and no cell is off by
    # more than 0.016 points (MONA 2D, k = 7: 0.315 vs 0.30; docs/reproduction.md explains).
    assert np.all(np.abs(got - published) <= 0.016)
    assert np.sum(np.round(got, 2) == published) >= 4
