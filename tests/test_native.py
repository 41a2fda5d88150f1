"""The compiled extension's kernels (``incrowd._native``): each against a brute force of its
definition and against the numba kernel it replaced (kept here, loop for loop, as the reference),
bit for bit: random shapes, ties, k at its edges, no row and one row."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numba import njit

from incrowd._native import group_sums, group_sums_in_units, mdav_labels, node_groups
from incrowd.microaggregation import mdav_labels_jit

# ------------------------------------------------------------------------------------------------
# The numba kernels as they were before the extension took them over (the group sums and a node's
# grouping; MDAV's numba copy stays in the package for the kernels that call it: mdav_labels_jit)


@njit(cache=True)
def _old_group_sums(X, labels, g):
    sums = np.zeros((g, X.shape[1]))
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            sums[labels[i], j] += X[i, j]
    return sums


@njit(cache=True)
def _old_group_sums_in_units(X, labels, g, inverse_units):
    sums = np.zeros((g, X.shape[1]))
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            sums[labels[i], j] += X[i, j] * inverse_units[j]
    return sums


@njit(cache=True)
def _old_node_groups(codes0, first_key, maps, map_rows, widths):
    n = codes0.shape[0]
    m = codes0.shape[1]
    cap = 16
    while cap < 2 * n:
        cap <<= 1
    table = np.full(cap, -1, np.int64)
    mask = np.uint64(cap - 1)
    group_key = np.empty(n, np.int64)
    group_first = np.empty(n, np.int64)
    gid = np.empty(n, np.int64)
    g = 0
    for r in range(n):
        key = first_key[r]
        for j in range(m):
            key = key * widths[j] + maps[map_rows[j], codes0[r, j]]
        h = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
        pos = (h ^ (h >> np.uint64(29))) & mask
        while True:
            e = table[pos]
            if e == -1:
                table[pos] = g
                group_key[g] = key
                group_first[g] = r
                gid[r] = g
                g += 1
                break
            if group_key[e] == key:
                gid[r] = e
                break
            pos = (pos + np.uint64(1)) & mask
    return gid, group_key[:g], group_first[:g]


# ------------------------------------------------------------------------------------------------
# Brute forces of the definitions


def _brute_mdav(X: np.ndarray, k: int) -> np.ndarray:
    """MDAV "generic" as the textbook states it, one row at a time: while at least 2k rows are
    left, the centroid C (sequential row-order sums over the count), P the farthest from C and its
    k - 1 nearest, Q the farthest left from P and its k - 1 nearest; k..2k-1 rows left form a
    group, fewer join the last one. Distances summed over columns from 0, ties to the lowest row."""
    n, m = X.shape
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    left = list(range(n))

    def dist(r: int, point: list[float]) -> float:
        total = 0.0
        for j in range(m):
            diff = float(X[r, j]) - point[j]
            total += diff * diff
        return total

    def take(center: int, group: int) -> None:
        point = [float(X[center, j]) for j in range(m)]
        others = sorted((r for r in left if r != center), key=lambda r: (dist(r, point), r))[: k - 1]
        for r in (center, *others):
            labels[r] = group
            left.remove(r)

    def farthest(point: list[float]) -> int:
        return max(left, key=lambda r: (dist(r, point), -r))

    group = 0
    while len(left) >= 2 * k:
        centroid = [0.0] * m
        for r in left:
            for j in range(m):
                centroid[j] += float(X[r, j])
        centroid = [c / len(left) for c in centroid]
        p = farthest(centroid)
        p_point = [float(X[p, j]) for j in range(m)]
        take(p, group)
        q = farthest(p_point)
        take(q, group + 1)
        group += 2
    for r in left:
        labels[r] = group if len(left) >= k else group - 1
    return labels


def _brute_sums(X: np.ndarray, labels: np.ndarray, g: int, factors: np.ndarray | None = None) -> np.ndarray:
    sums = np.zeros((g, X.shape[1]))
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            value = float(X[i, j]) if factors is None else float(X[i, j]) * float(factors[j])
            sums[labels[i], j] = float(sums[labels[i], j]) + value
    return sums


# small integer grids give many exact ties, where tie-breaking must agree
_values = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6, allow_nan=False))


@st.composite
def _table(draw, max_rows=60):
    n = draw(st.integers(0, max_rows))
    m = draw(st.integers(1, 5))
    return draw(arrays(np.float64, (n, m), elements=_values))


@settings(max_examples=300, deadline=None)
@given(_table(), st.integers(1, 8))
def test_mdav_labels_equals_the_definition_and_numba_s_kernel(X, k):
    labels = mdav_labels(X, k)
    assert labels.dtype == np.int64 and labels.shape == (X.shape[0],)
    np.testing.assert_array_equal(labels, mdav_labels_jit(np.ascontiguousarray(X), k))
    np.testing.assert_array_equal(labels, _brute_mdav(X, k))


@pytest.mark.parametrize("n, k", [(0, 1), (1, 1), (1, 2), (2, 1), (3, 2), (4, 2), (5, 2), (7, 3), (8, 3), (9, 3)])
def test_mdav_labels_at_the_edges_of_k(n, k):
    X = np.arange(n * 2, dtype=np.float64).reshape(n, 2) % 3  # ties
    labels = mdav_labels(X, k)
    np.testing.assert_array_equal(labels, _brute_mdav(X, k))
    np.testing.assert_array_equal(labels, mdav_labels_jit(X, k))
    if n:
        assert np.bincount(labels).min() >= min(k, n)


def test_mdav_labels_on_a_larger_file_in_any_layout():
    """Past the compaction of dead slots (a quarter of the rows assigned) many times, and from a
    Fortran-ordered or integer input (the wrapper hands the kernel a C-ordered float64 copy)."""
    X = np.round(np.random.default_rng(5).standard_normal((3000, 4)) * 4) / 4
    expected = mdav_labels_jit(X, 5)
    np.testing.assert_array_equal(mdav_labels(X, 5), expected)
    np.testing.assert_array_equal(mdav_labels(np.asfortranarray(X), 5), expected)
    ints = np.random.default_rng(6).integers(0, 9, (500, 3))
    np.testing.assert_array_equal(mdav_labels(ints, 4), mdav_labels_jit(ints.astype(np.float64), 4))


def test_mdav_labels_refuses_k_below_one():
    with pytest.raises(ValueError, match="k must be at least 1; got 0"):
        mdav_labels(np.zeros((4, 2)), 0)


@settings(max_examples=200, deadline=None)
@given(_table(), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_group_sums_equal_the_definition_and_numba_s_kernels(X, g, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, g, X.shape[0]).astype(np.int64)
    sums = group_sums(X, labels, g)
    assert sums.tobytes() == _old_group_sums(X, labels, g).tobytes()
    assert sums.tobytes() == _brute_sums(X, labels, g).tobytes()
    factors = np.ldexp(1.0, rng.integers(-600, 600, X.shape[1]))  # powers of two, as group_means uses
    factors[0] = 0.1  # and one that rounds
    in_units = group_sums_in_units(X, labels, g, factors)
    assert in_units.tobytes() == _old_group_sums_in_units(X, labels, g, factors).tobytes()
    assert in_units.tobytes() == _brute_sums(X, labels, g, factors).tobytes()


def test_group_sums_refuse_a_group_out_of_range():
    with pytest.raises(ValueError, match="row 1's group 3 is not below 3"):
        group_sums(np.ones((2, 1)), np.array([0, 3]), 3)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 80), st.integers(0, 4), st.integers(1, 3))
def test_node_groups_equal_the_definition_and_numba_s_kernel(seed, n, m, top):
    rng = np.random.default_rng(seed)
    leaves = rng.integers(1, 7, m)
    codes0 = (np.column_stack([rng.integers(0, w, n) for w in leaves]).astype(np.int64) if m
              else np.zeros((n, 0), np.int64))
    first_key = rng.integers(0, top, n).astype(np.int64)
    n_rows = 2 * max(m, 1)
    maps = np.zeros((n_rows, int(leaves.max(initial=1))), np.int64)
    widths = rng.integers(1, 7, m).astype(np.int64)
    map_rows = (2 * np.arange(m) + rng.integers(0, 2, m)).astype(np.int64)
    for j in range(m):
        maps[map_rows[j], : leaves[j]] = rng.integers(0, widths[j], leaves[j])
    gid, keys, first = node_groups(codes0, first_key, maps, map_rows, widths)
    for got, want in zip((gid, keys, first), _old_node_groups(codes0, first_key, maps, map_rows, widths)):
        np.testing.assert_array_equal(got, want)
    # the definition: each bottom class's radix key; groups numbered by first appearance
    key = [int(first_key[r]) for r in range(n)]
    for r in range(n):
        for j in range(m):
            key[r] = key[r] * int(widths[j]) + int(maps[map_rows[j], codes0[r, j]])
    order: dict[int, int] = {}
    for r in range(n):
        order.setdefault(key[r], r)
    assert keys.tolist() == list(order)
    assert first.tolist() == list(order.values())
    assert gid.tolist() == [list(order).index(key[r]) for r in range(n)]


def test_node_groups_with_many_colliding_keys():
    """Keys that differ only in high bits share hash slots: the probe walks past each."""
    n = 5000
    first_key = (np.arange(n, dtype=np.int64) % 700) << 40
    codes0 = np.zeros((n, 1), np.int64)
    maps = np.zeros((1, 1), np.int64)
    gid, keys, first = node_groups(codes0, first_key, maps, np.zeros(1, np.int64), np.ones(1, np.int64))
    want = _old_node_groups(codes0, first_key, maps, np.zeros(1, np.int64), np.ones(1, np.int64))
    for got, ref in zip((gid, keys, first), want):
        np.testing.assert_array_equal(got, ref)
    assert keys.size == 700 and np.array_equal(first, np.arange(700))


def test_node_groups_refuse_a_code_outside_the_maps():
    with pytest.raises(ValueError, match="codes0 row 1 holds a code outside maps' columns"):
        node_groups(np.array([[0], [4]]), np.zeros(2, np.int64), np.zeros((1, 3), np.int64),
                    np.zeros(1, np.int64), np.ones(1, np.int64))
