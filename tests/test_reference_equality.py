"""The fast kernels give exactly the groups of the plain reference implementations."""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from conftest import benchmark_matrix
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.microaggregation.greedy._greedy_kernels import (
    mdav_plus_labels,
    mdav_star_labels,
    vmdav_labels,
)
from incrowd.microaggregation.mdav._mdav_kernel import mdav_labels

pytestmark = pytest.mark.slow  # seconds a test: in make test, not in make test-fast


@pytest.mark.parametrize("name", ["census", "tarragona", "eia", "cloud1", "cloud2"])
@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_mdav_equals_reference_on_benchmark_files(name, k):
    Z = benchmark_matrix(name)
    np.testing.assert_array_equal(mdav_labels(Z, k), ref.mdav(Z, k))


def test_mdav_equals_reference_on_adult_with_its_many_ties():
    Z = benchmark_matrix("adult")  # 48,842 rows of 3 small-integer attributes
    np.testing.assert_array_equal(mdav_labels(Z, 10), ref.mdav(Z, 10))


@pytest.mark.parametrize("n,m,k", [(3000, 15, 10), (2000, 3, 3), (999, 1, 4)])
def test_mdav_equals_reference_on_gaussian_data(n, m, k):
    Z = np.random.default_rng(n).standard_normal((n, m))
    np.testing.assert_array_equal(mdav_labels(Z, k), ref.mdav(Z, k))


@pytest.mark.parametrize("name", ["census", "tarragona", "cloud2"])
@pytest.mark.parametrize("k", [3, 7])
def test_fixed_centroid_variants_equal_reference_on_benchmark_files(name, k):
    Z = benchmark_matrix(name)
    np.testing.assert_array_equal(mdav_plus_labels(Z, k), ref.mdav_plus(Z, k))
    np.testing.assert_array_equal(vmdav_labels(Z, k, 0.4), ref.vmdav(Z, k, 0.4))
    np.testing.assert_array_equal(mdav_star_labels(Z, k), ref.mdav_star(Z, k))


@st.composite
def tie_heavy_data(draw):
    """Small integer grids: many duplicate rows and equidistant neighbours, the hard cases."""
    n = draw(st.integers(2, 40))
    m = draw(st.integers(1, 3))
    k = draw(st.integers(2, n))
    levels = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    X = np.random.default_rng(seed).integers(0, levels, (n, m)).astype(np.float64)
    std = X.std(axis=0)
    Z = np.ascontiguousarray((X - X.mean(axis=0)) / np.where(std > 0, std, 1.0))
    return Z, k


@settings(max_examples=150, deadline=None)
@given(tie_heavy_data(), st.sampled_from([0.0, 0.2, 1.1, 2.0]))
def test_every_kernel_equals_its_reference_on_tie_heavy_data(data, gamma):
    Z, k = data
    np.testing.assert_array_equal(mdav_labels(Z, k), ref.mdav(Z, k))
    np.testing.assert_array_equal(mdav_plus_labels(Z, k), ref.mdav_plus(Z, k))
    np.testing.assert_array_equal(vmdav_labels(Z, k, gamma), ref.vmdav(Z, k, gamma))
    np.testing.assert_array_equal(mdav_star_labels(Z, k), ref.mdav_star(Z, k))
