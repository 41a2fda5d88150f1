"""The grid kernels of MDAV*, MDAV+ and V-MDAV against the scan kernels: the same group for every
row."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import benchmark_matrix, kernel_data
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd import VMDAV, MDAVPlus, MDAVStar
from incrowd.values import standardize
from incrowd.microaggregation.greedy._greedy_kernels import mdav_plus_labels, mdav_star_labels, vmdav_labels
from incrowd.microaggregation.greedy._grid import GRID_DIMS, grid_bounds, ring_cells
from incrowd.microaggregation.greedy._mdav_star_fast import mdav_star_fast_labels
from incrowd.microaggregation.greedy._vmdav_fast import mdav_plus_fast_labels, vmdav_fast_labels
from incrowd.microaggregation.mdav._mdav_kernel import mdav_labels


@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@pytest.mark.parametrize("kind", ["gauss", "ints", "copies", "cauchy"])
@pytest.mark.parametrize("n,m,k", [(4, 1, 2), (7, 2, 3), (400, 1, 3), (1500, 3, 5), (3000, 2, 2), (2500, 3, 10),
                                   (1200, 5, 4), (800, 8, 3)])
def test_grid_kernels_equal_the_scans(kind, n, m, k):
    Z = kernel_data(kind, n, m, n * m + k)
    np.testing.assert_array_equal(mdav_star_fast_labels(Z, k), mdav_star_labels(Z, k))
    np.testing.assert_array_equal(mdav_plus_fast_labels(Z, k), mdav_plus_labels(Z, k))
    for gamma in (0.2, 1.1):
        np.testing.assert_array_equal(vmdav_fast_labels(Z, k, gamma), vmdav_labels(Z, k, gamma))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 300), m=st.integers(1, 5), k=st.integers(2, 6), levels=st.integers(2, 30),
       seed=st.integers(0, 2**32 - 1))
def test_random_small_data_equal_the_scan(n, m, k, levels, seed):
    if k > n:
        k = n
    X = np.random.default_rng(seed).integers(0, levels, (n, m)).astype(float)  # ties, constant columns
    labels = mdav_star_fast_labels(X, k)
    np.testing.assert_array_equal(labels, mdav_star_labels(X, k))
    sizes = np.bincount(labels)
    assert sizes.min() >= k and labels.size == n
    np.testing.assert_array_equal(mdav_plus_fast_labels(X, k), mdav_plus_labels(X, k))
    for gamma in (0.0, 0.2, 5.0):  # 0: MDAV+; 5: most groups grow to 2k - 1
        labels = vmdav_fast_labels(X, k, gamma)
        np.testing.assert_array_equal(labels, vmdav_labels(X, k, gamma))
        assert np.bincount(labels).min() >= k


def test_adult_triples_equal_the_scan():
    Z = benchmark_matrix("adult")[:12_000]  # a few seconds for the scan; ties everywhere
    for k in (2, 5):
        np.testing.assert_array_equal(mdav_star_fast_labels(Z, k), mdav_star_labels(Z, k))
    np.testing.assert_array_equal(vmdav_fast_labels(Z, 3, 0.2), vmdav_labels(Z, 3, 0.2))


def test_rings_cover_every_cell_once():
    X = np.random.default_rng(0).standard_normal((5000, 3))
    _, _, sizes = grid_bounds(X, 300)
    assert len(sizes) == GRID_DIMS and np.prod(sizes) > 100
    seen = []
    out = np.empty(int(np.prod(sizes)), np.int64)
    center = np.array([1, sizes[1] - 1, sizes[2] // 2])
    for r in range(int(sizes.max()) + 1):
        seen.extend(out[: ring_cells(center, r, sizes, out)])
    assert sorted(seen) == list(range(int(np.prod(sizes))))


def test_estimators_take_the_grid_in_few_columns():
    X = np.random.default_rng(5).standard_normal((3000, 3))
    Z = standardize(X)[0]
    np.testing.assert_array_equal(MDAVStar(4).fit(X).labels_, mdav_star_labels(Z, 4))
    np.testing.assert_array_equal(MDAVPlus(4).fit(X).labels_, mdav_plus_labels(Z, 4))
    np.testing.assert_array_equal(VMDAV(4, gamma=1.1).fit(X).labels_, vmdav_labels(Z, 4, 1.1))


@pytest.mark.parametrize("kernel", [mdav_labels, mdav_plus_labels, mdav_star_labels, mdav_star_fast_labels,
                                    mdav_plus_fast_labels, lambda X, k: vmdav_labels(X, k, 0.2),
                                    lambda X, k: vmdav_fast_labels(X, k, 0.2)])
def test_column_major_input_is_left_alone(kernel):
    """pandas hands out column-major arrays; a kernel that compacts a transposed view in place
    would overwrite them (and group the overwritten rows)."""
    C = np.random.default_rng(1).standard_normal((600, 3))
    F = np.asfortranarray(C)
    before = F.copy()
    np.testing.assert_array_equal(kernel(F, 3), kernel(C, 3))
    np.testing.assert_array_equal(F, before)
