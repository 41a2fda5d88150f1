"""The k-d tree MDAV kernel (the compiled extension's ``mdav_tree_labels``) against the plain scan
(its ``mdav_labels``): the same group for every row, on data full of exact copies and equal
distances, and its errors on bad buffers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import kernel_data
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd import MDAV, _native
from incrowd._native import mdav_labels, mdav_tree_labels
from incrowd.values import standardize


@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@pytest.mark.parametrize("kind", ["gauss", "ints", "copies", "cauchy"])
@pytest.mark.parametrize("n,m,k", [(0, 2, 3), (1, 2, 2), (1, 1, 1), (5, 3, 3), (6, 2, 3), (7, 2, 3), (400, 2, 3),
                                   (1500, 3, 5), (3000, 1, 3), (2000, 6, 4), (2500, 3, 2), (300, 2, 1),
                                   (301, 3, 150), (300, 3, 150), (299, 3, 150)])
def test_tree_kernel_equals_the_scan(kind, n, m, k):
    Z = kernel_data(kind, n, m, n * m + k) if n else np.empty((0, m))
    np.testing.assert_array_equal(mdav_tree_labels(Z, k)[0], mdav_labels(Z, k))


@pytest.mark.parametrize("leaf", [1, 2, 3, 64])
def test_any_leaf_size_gives_the_scans_groups(leaf):
    Z = kernel_data("copies", 1200, 3, leaf)
    np.testing.assert_array_equal(mdav_tree_labels(Z, 3, leaf)[0], mdav_labels(Z, 3))


def test_columns_of_one_value_give_the_scans_groups():
    # every box is flat in a constant column, and every row is a copy where all are constant
    rng = np.random.default_rng(5)
    X = np.column_stack([np.zeros(900), rng.integers(0, 4, 900).astype(float)])
    for Z in (X, np.zeros((900, 2))):
        np.testing.assert_array_equal(mdav_tree_labels(Z, 4)[0], mdav_labels(Z, 4))


@pytest.mark.parametrize("args,message", [
    ((np.zeros((10, 2)), 2, 0, 16, np.empty(10, np.int64)), "k must be at least 1; got 0"),
    ((np.zeros((10, 2)), 2, 3, 0, np.empty(10, np.int64)), "leaf must be at least 1; got 0"),
    ((np.zeros((10, 2)), 2, 3, 16, np.empty(9, np.int64)), "X holds 160 bytes; expected 144"),
    ((np.zeros((5, 2)), 2, 3, 16, np.empty(11, np.int32)), "labels holds 44 bytes; expected 40"),
    ((np.zeros((10, 65)), 65, 3, 16, np.empty(10, np.int64)), "m must be 0 to 64 columns; got 65"),
])
def test_the_kernel_refuses_bad_buffers_with_one_line(args, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        _native._mdav_tree.mdav_tree_labels(*args)


def test_the_wrapper_refuses_a_table_that_is_not_two_dimensional():
    with pytest.raises(ValueError, match="X must be two-dimensional"):
        mdav_tree_labels(np.zeros(10), 2)
    with pytest.raises(ValueError, match="k must be at least 1; got 0"):
        mdav_tree_labels(np.zeros((10, 2)), 0)

@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@settings(max_examples=80, deadline=None)
@given(n=st.integers(0, 400), m=st.integers(1, 5), k=st.integers(1, 6), distinct=st.integers(1, 40),
       levels=st.integers(2, 20), standardized=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_many_copies_give_the_scans_groups(n, m, k, distinct, levels, standardized, seed):
    # a few distinct rows, each repeated many times, on a coarse grid: exact copies and rows at
    # equal distances from every centre, as in a survey file resampled to many rows
    rng = np.random.default_rng(seed)
    base = rng.integers(0, levels, (distinct, m)).astype(float)
    X = np.ascontiguousarray(base[rng.integers(0, distinct, n)])
    if standardized and n:
        X = np.ascontiguousarray(standardize(X)[0])
    np.testing.assert_array_equal(mdav_tree_labels(X, k)[0], mdav_labels(X, k))

@pytest.mark.parametrize("columns", [1, 3, 4, 5])
def test_estimator_takes_the_tree_on_few_columns(monkeypatch, columns):
    # the screened kernel's passes read every live row in every round (quadratic); on up to four
    # columns the estimator's exact path must not take it, nor on five in a large file (here the
    # bar of a large file is lowered to this one)
    from incrowd.microaggregation.mdav import mdav

    def screened(Z, k):
        raise AssertionError("the screened kernel was taken")

    monkeypatch.setattr(mdav, "SCAN_BELOW", 0)
    monkeypatch.setattr(mdav, "SCAN_WORK", 0)
    monkeypatch.setattr(mdav, "_fast_labels", screened)
    monkeypatch.setattr(mdav, "TREE_FIVE_COLUMNS_FROM", 2000)
    rng = np.random.default_rng(7)
    X = np.repeat(rng.integers(0, 50, (400, columns)).astype(float), 6, axis=0)[rng.permutation(2400)]
    fitted = MDAV(3).fit(X)
    np.testing.assert_array_equal(fitted.labels_, mdav_labels(standardize(X)[0], 3))


def test_five_columns_in_a_small_file_keep_the_screened_kernel(monkeypatch):
    from incrowd.microaggregation.mdav import mdav

    taken = []
    monkeypatch.setattr(mdav, "SCAN_BELOW", 0)
    monkeypatch.setattr(mdav, "SCAN_WORK", 0)
    monkeypatch.setattr(mdav, "_fast_labels", lambda Z, k: taken.append(Z.shape) or mdav_labels(Z, k))
    X = np.random.default_rng(8).normal(size=(2400, 5))
    MDAV(3).fit(X)
    assert taken == [(2400, 5)]


@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@pytest.mark.parametrize("kind", ["copies", "cauchy"])
def test_a_large_file_whose_radius_order_is_sorted_in_part_gives_the_scans_groups(kind):
    # from 65,536 live rows the search for P sorts only the farthest eighth of the rows by their
    # distance from the centroid and walks the rest in row order when it must
    Z = kernel_data(kind, 70_000, 2, 3)
    np.testing.assert_array_equal(mdav_tree_labels(Z, 25)[0], mdav_labels(Z, 25))
