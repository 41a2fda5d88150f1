"""The k-d tree MDAV kernel against the plain scan (the compiled extension's ``mdav_labels``): the
same group for every row, on data full of exact copies and equal distances."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import kernel_data
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd import MDAV
from incrowd._native import mdav_labels
from incrowd.microaggregation.mdav._mdav_tree import mdav_tree_labels
from incrowd.values import standardize


@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@pytest.mark.parametrize("kind", ["gauss", "ints", "copies", "cauchy"])
@pytest.mark.parametrize("n,m,k", [(1, 2, 2), (5, 3, 3), (6, 2, 3), (7, 2, 3), (400, 2, 3), (1500, 3, 5),
                                   (3000, 1, 3), (2000, 6, 4), (2500, 3, 2)])
def test_tree_kernel_equals_the_scan(kind, n, m, k):
    Z = kernel_data(kind, n, m, n * m + k)
    np.testing.assert_array_equal(mdav_tree_labels(Z, k)[0], mdav_labels(Z, k))

@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 400), m=st.integers(1, 4), k=st.integers(2, 6), distinct=st.integers(1, 40),
       levels=st.integers(2, 20), standardized=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_many_copies_give_the_scans_groups(n, m, k, distinct, levels, standardized, seed):
    # a few distinct rows, each repeated many times, on a coarse grid: exact copies and rows at
    # equal distances from every centre, as in a survey file resampled to many rows
    rng = np.random.default_rng(seed)
    base = rng.integers(0, levels, (distinct, m)).astype(float)
    X = np.ascontiguousarray(base[rng.integers(0, distinct, n)])
    if standardized:
        X = np.ascontiguousarray(standardize(X)[0])
    np.testing.assert_array_equal(mdav_tree_labels(X, k)[0], mdav_labels(X, k))

def test_estimator_takes_the_tree_on_few_columns(monkeypatch):
    # the screened kernel's passes read every live row in every round (quadratic); on up to three
    # columns the estimator's exact path must not take it
    from incrowd.microaggregation.mdav import mdav

    def screened(Z, k):
        raise AssertionError("the screened kernel was taken")

    monkeypatch.setattr(mdav, "SCAN_BELOW", 0)
    monkeypatch.setattr(mdav, "SCAN_WORK", 0)
    monkeypatch.setattr(mdav, "_fast_labels", screened)
    rng = np.random.default_rng(7)
    X = np.repeat(rng.integers(0, 50, (400, 3)).astype(float), 6, axis=0)[rng.permutation(2400)]
    fitted = MDAV(3).fit(X)
    np.testing.assert_array_equal(fitted.labels_, mdav_labels(standardize(X)[0], 3))
