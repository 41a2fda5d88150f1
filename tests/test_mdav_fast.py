"""The fast exact MDAV kernel against the plain scan kernel (itself tested against the numpy
reference in test_reference_equality): the same group for every row."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import kernel_data
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd import MDAV
from incrowd.values import standardize
from incrowd.microaggregation.mdav._mdav_fast import mdav_fast_labels
from incrowd.microaggregation.mdav._mdav_kernel import mdav_labels


@pytest.mark.filterwarnings("ignore::incrowd.exceptions.DataWarning")
@pytest.mark.parametrize("kind", ["gauss", "ints", "copies", "cauchy"])
@pytest.mark.parametrize("n,m,k", [(1, 2, 2), (5, 3, 3), (6, 2, 3), (7, 2, 3), (400, 2, 3), (1500, 3, 5),
                                   (2000, 15, 10), (3000, 6, 4), (2500, 13, 3)])
def test_fast_kernels_equal_the_scan(kind, n, m, k):
    Z = kernel_data(kind, n, m, n * m + k)
    plain = mdav_labels(Z, k)
    np.testing.assert_array_equal(mdav_fast_labels(Z, k)[0], plain)
    # every pass in shares on threads (the kernel does this from PARALLEL_FROM slots up)
    np.testing.assert_array_equal(mdav_fast_labels(Z, k, 0, 3)[0], plain)
    # int8 codes (the estimator's choice for large files), serial and in shares
    np.testing.assert_array_equal(mdav_fast_labels(Z, k, -1, 1, True)[0], plain)
    np.testing.assert_array_equal(mdav_fast_labels(Z, k, 0, 2, True)[0], plain)


def test_near_ties_take_the_exact_centroid_path():
    Z = standardize(np.random.default_rng(3000).integers(0, 4, (3000, 4)).astype(float))[0]
    labels, fallbacks, _ = mdav_fast_labels(Z, 5)
    assert fallbacks > 0  # the candidates for P differed: the scan's own centroid decided
    np.testing.assert_array_equal(labels, mdav_labels(Z, 5))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 300), m=st.integers(1, 6), k=st.integers(2, 6), levels=st.integers(2, 50),
       seed=st.integers(0, 2**32 - 1))
def test_random_small_data_equal_the_scan(n, m, k, levels, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, (n, m)).astype(float)
    Z = np.ascontiguousarray(X)  # unstandardized on purpose: ties, constant columns
    plain = mdav_labels(Z, k)
    np.testing.assert_array_equal(mdav_fast_labels(Z, k)[0], plain)


def test_estimator_uses_an_exact_kernel(monkeypatch):
    from incrowd.microaggregation.mdav import _mdav_large, mdav
    from incrowd.microaggregation.mdav._screen import PARALLEL_LOCK

    for m in (3, 8):
        X = np.random.default_rng(m).standard_normal((2000, m))
        plain = mdav_labels(standardize(X)[0], 5)
        np.testing.assert_array_equal(MDAV(5).fit(X).labels_, plain)  # the scan
        monkeypatch.setattr(mdav, "SCAN_BELOW", 0)  # the fast kernel, whether numba has started or not
        monkeypatch.setattr(mdav, "SCAN_WORK", 0)
        np.testing.assert_array_equal(MDAV(5).fit(X).labels_, plain)
        monkeypatch.setattr(_mdav_large, "PARALLEL_FROM", 1000)  # the threaded passes, then the serial
        np.testing.assert_array_equal(MDAV(5).fit(X).labels_, plain)
        monkeypatch.setattr(_mdav_large, "NARROW_FROM", 1000)  # int8 codes
        np.testing.assert_array_equal(MDAV(5).fit(X).labels_, plain)
        with PARALLEL_LOCK:  # another thread holds the threads: this fit runs serially
            np.testing.assert_array_equal(MDAV(5).fit(X).labels_, plain)
        assert not PARALLEL_LOCK.locked()
        monkeypatch.undo()


def test_float32_option_reports_what_changed():
    from incrowd.exceptions import ParameterError
    from incrowd.microaggregation.mdav.mdav import rows_regrouped

    X = np.random.default_rng(4).standard_normal((3000, 6))
    single = MDAV(5, dtype="float32").fit(X)
    double = MDAV(5).fit(X)
    Z32 = standardize(X)[0].astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(single.labels_, mdav_labels(np.ascontiguousarray(Z32), 5))
    assert single.rows_regrouped_ == rows_regrouped(single.labels_, double.labels_)
    assert single.groups_changed_ == (single.rows_regrouped_ > 0)
    assert single.group_sizes_.min() >= 5
    assert rows_regrouped(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0])) == 0
    assert rows_regrouped(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])) == 4
    with pytest.raises(ParameterError, match="dtype must be 'float64' or 'float32'"):
        MDAV(5, dtype="float16").fit(X)


@pytest.mark.parametrize("columns", [1, 3])
def test_the_kernel_chosen_by_size_gives_the_scans_groups_on_both_sides_of_the_switch(columns):
    """Below ``SCAN_BELOW`` rows MDAV runs the plain scan (it compiles in a fraction of the
    screened kernel's time), from there the screened kernel: the groups are the scan's on both
    sides, ties included (ages on a grid)."""
    from incrowd.microaggregation.mdav import mdav as mdav_module

    rng = np.random.default_rng(columns)
    for n in (mdav_module.SCAN_BELOW - 1, mdav_module.SCAN_BELOW):
        Z = np.ascontiguousarray(np.round(rng.standard_normal((n, columns)) * 8) / 8)
        expected = mdav_labels(Z, 5)
        np.testing.assert_array_equal(mdav_module.mdav_exact_labels(Z, 5), expected)
        np.testing.assert_array_equal(mdav_fast_labels(Z, 5, -1, 1, False)[0], expected)
