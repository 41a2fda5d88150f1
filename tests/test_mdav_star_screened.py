"""The screened MDAV* kernel against the scan kernel (itself the reference of the grid kernel and
of the estimator): the same group for every row, ties included."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import benchmark_matrix, kernel_data
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd import MDAVStar
from incrowd.values import standardize
from incrowd.microaggregation._adaptive import new_tuner, tuner_counts
from incrowd.microaggregation.greedy import _mdav_star_fast
from incrowd.microaggregation.greedy._greedy_kernels import mdav_star_labels
from incrowd.microaggregation.greedy._mdav_star_fast import mdav_star_best_labels
from incrowd.microaggregation.greedy._mdav_star_screened import mdav_star_screened_labels

# (batch, window, spare, narrow): one query per pass, the default batches, int8 codes
_VARIANTS = [(1, 1, 1, False), (8, 32, 2, False), (16, 64, 4, True)]


def _screened(Z, k, batch, window, spare, narrow):
    return mdav_star_screened_labels(Z, k, narrow=narrow, spare=spare, batch=batch, window=window)[0]


@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@pytest.mark.parametrize("kind", ["gauss", "ints", "copies", "cauchy"])
@pytest.mark.parametrize("n,m,k", [(3, 2, 2), (7, 6, 3), (400, 1, 3), (1200, 6, 4), (1500, 15, 10), (900, 13, 2),
                                   (700, 9, 5)])
def test_screened_kernel_equals_the_scan(kind, n, m, k):
    Z = kernel_data(kind, n, m, n * m + k)
    plain = mdav_star_labels(Z, k)
    for variant in _VARIANTS:
        np.testing.assert_array_equal(_screened(Z, k, *variant), plain)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 300), m=st.integers(1, 16), k=st.integers(2, 6), levels=st.integers(2, 6),
       seed=st.integers(0, 2**32 - 1), variant=st.sampled_from(_VARIANTS))
def test_tie_heavy_data_equal_the_scan(n, m, k, levels, seed, variant):
    k = min(k, n)
    X = np.random.default_rng(seed).integers(0, levels, (n, m)).astype(float)  # ties, copies, constants
    np.testing.assert_array_equal(_screened(X, k, *variant), mdav_star_labels(X, k))


def test_masses_of_copies_take_the_single_query_pass():
    # over a thousand copies of each point: more candidates at distance 0 than a batched query
    # keeps, so those queries are answered by the single-query pass (serial and threaded)
    X = np.repeat(np.random.default_rng(7).standard_normal((3, 7)), 1400, axis=0)
    X = X[np.random.default_rng(8).permutation(len(X))]
    plain = mdav_star_labels(X, 5)
    labels, stats = mdav_star_screened_labels(X, 5)
    np.testing.assert_array_equal(labels, plain)
    assert stats[4] > 0
    threads = new_tuner(force_threads=True)  # every pass on the threads, batched and single
    np.testing.assert_array_equal(mdav_star_screened_labels(X, 5, 0, 2, False, threads)[0], plain)
    assert tuner_counts(threads)["parallel_passes"] > 0


def test_threaded_passes_equal_the_scan():
    Z = kernel_data("gauss", 2500, 15, 3)
    threads = new_tuner(force_threads=True)
    np.testing.assert_array_equal(mdav_star_screened_labels(Z, 4, 0, 2, True, threads)[0], mdav_star_labels(Z, 4))
    assert tuner_counts(threads)["parallel_passes"] > 0


@pytest.mark.parametrize("name", ["census", "tarragona", "eia", "cloud1", "cloud2"])
def test_benchmark_files_equal_the_scan(name):
    Z = benchmark_matrix(name)
    for k in (2, 3, 5, 10):
        labels, stats = mdav_star_screened_labels(Z, k)
        np.testing.assert_array_equal(labels, mdav_star_labels(Z, k))
        assert stats[0] + stats[1] > 0


def test_best_labels_choose_an_exact_kernel(monkeypatch):
    calls = []
    real = _mdav_star_fast.mdav_star_screened_labels
    monkeypatch.setattr(_mdav_star_fast, "mdav_star_screened_labels",
                        lambda *a, **kw: calls.append(a[0].shape) or real(*a, **kw))
    for n, m in ((2500, 3), (1500, 8), (300, 8)):
        Z = standardize(np.random.default_rng(n + m).standard_normal((n, m)))[0]
        np.testing.assert_array_equal(mdav_star_best_labels(Z, 5), mdav_star_labels(Z, 5))
    assert calls == [(1500, 8)]  # the grid in 3 columns, the scan on 300 rows
    huge = np.random.default_rng(1).standard_normal((1200, 6)) * 1e16  # beyond the screen's bounds
    np.testing.assert_array_equal(mdav_star_best_labels(huge, 4), mdav_star_labels(huge, 4))
    assert len(calls) == 1


def test_estimator_groups_in_many_columns():
    X = np.random.default_rng(15).standard_normal((3000, 15))
    est = MDAVStar(10).fit(X)
    np.testing.assert_array_equal(est.labels_, mdav_star_labels(standardize(X)[0], 10))
    assert est.group_sizes_.min() >= 10


def test_column_major_input_is_left_alone():
    C = np.random.default_rng(1).standard_normal((600, 7))
    F = np.asfortranarray(C)
    before = F.copy()
    np.testing.assert_array_equal(mdav_star_screened_labels(F, 3)[0], mdav_star_labels(C, 3))
    np.testing.assert_array_equal(F, before)
