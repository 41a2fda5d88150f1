"""The F-MDAV ablation kernels (paper 003): the variants that do not change the arithmetic give
the plain scan kernel's labels; every variant gives a valid k-partition."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.microaggregation.mdav._mdav_kernel import mdav_labels

# the variants are a bench's kernels, kept under bench/ (not in the package); this test alone
# puts bench/ on the path to reach them
sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))
from _fmdav_variants import mdav_variant_labels  # noqa: E402
from conftest import kernel_data

FLAGS = list(itertools.product([False, True], repeat=4))  # inner, reuse, partial, subtract
SAME_ARITHMETIC = [(False, reuse, partial, False) for reuse in (False, True)
                   for partial in (False, True)]


def assert_k_partition(labels: np.ndarray, n: int, k: int) -> None:
    assert labels.shape == (n,)
    assert labels.min() == 0
    sizes = np.bincount(labels)
    assert (sizes > 0).all()  # ids 0..g-1, none skipped
    if n >= k:
        assert sizes.min() >= k
    assert sizes.sum() == n


@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@pytest.mark.parametrize("kind", ["gauss", "ints", "copies"])
@pytest.mark.parametrize("n,m,k", [(1, 2, 2), (5, 3, 3), (6, 2, 3), (7, 2, 3), (400, 2, 3),
                                   (1500, 3, 5), (2000, 13, 10), (1200, 6, 4)])
def test_same_arithmetic_variants_equal_the_scan_kernel(kind, n, m, k):
    Z = kernel_data(kind, n, m, n * m + k)
    plain = mdav_labels(Z, k)
    for flags in SAME_ARITHMETIC:
        np.testing.assert_array_equal(mdav_variant_labels(Z, k, *flags), plain, err_msg=str(flags))


@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["gauss", "ints", "copies"])
def test_every_variant_is_a_k_partition(kind, dtype):
    n, m, k = 503, 5, 4
    Z = kernel_data(kind, n, m, 7).astype(dtype)
    for flags in FLAGS:
        labels = mdav_variant_labels(Z, k, *flags)
        assert_k_partition(labels, n, k)


def test_float32_input_runs_in_single_precision():
    Z = kernel_data("gauss", 300, 4, 1)
    labels = mdav_variant_labels(Z.astype(np.float32), 5, True, True, True, True)
    assert_k_partition(labels, 300, 5)
    sigs = [str(s) for s in mdav_variant_labels.signatures]
    assert any("float32" in s for s in sigs)


@pytest.mark.parametrize("n", [19, 20, 21, 29, 30, 39])
def test_rest_handling_follows_the_scan_kernel(n):
    Z = kernel_data("gauss", n, 3, n)
    for flags in FLAGS:
        labels = mdav_variant_labels(Z, 10, *flags)
        assert_k_partition(labels, n, 10)
        if not flags[0] and not flags[3]:
            np.testing.assert_array_equal(labels, mdav_labels(Z, 10))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 200), m=st.integers(1, 5), k=st.integers(2, 6),
       levels=st.integers(2, 30), flags=st.sampled_from(FLAGS),
       single=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_random_small_integer_data(n, m, k, levels, flags, single, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, m)).astype(np.float32 if single else np.float64)
    labels = mdav_variant_labels(X, k, *flags)
    assert_k_partition(labels, n, k)
    np.testing.assert_array_equal(mdav_variant_labels(X, k, *flags), labels)
    if not single and not flags[0] and not flags[3]:
        np.testing.assert_array_equal(labels, mdav_labels(X, k))
