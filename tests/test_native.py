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

from incrowd._native import count_by_value, group_rows, group_sums, group_sums_in_units, mdav_labels, merge_rows, node_groups
from incrowd.generalization._node_tables import generalize_table, node_histograms, rollup
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
# The numba kernels of a node's working table (incrowd.generalization's generalize_table, rollup,
# node_histograms), as they were before the extension took them over


@njit(cache=True)
def _old_row_hash(codes, r, n_key):
    h = np.uint64(14695981039346656037)
    for c in range(n_key):
        h ^= np.uint64(codes[r, c]) + np.uint64(0x9E3779B97F4A7C15) + (h << np.uint64(6)) + (h >> np.uint64(2))
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    return h


@njit(cache=True)
def _old_open_table(n):
    """An empty open-addressing table for n keys (a power of two at least 2n, so probes stay
    short) and the mask that maps a hash to a slot."""
    cap = 16
    while cap < 2 * n:
        cap <<= 1
    return np.full(cap, -1, np.int64), np.uint64(cap - 1)


@njit(cache=True)
def _old_group_rows(codes, counts, n_key):
    """Group rows by their first ``n_key`` columns (open-addressing hash on the code tuple).

    Returns (first row of each group, summed counts, group id of every row, number of groups);
    groups are numbered in order of first appearance, so the result is deterministic.
    """
    n = codes.shape[0]
    table, mask = _old_open_table(n)
    first = np.empty(n, np.int64)
    sums = np.zeros(n, np.int64)
    inverse = np.empty(n, np.int64)
    g = 0
    for r in range(n):
        pos = _old_row_hash(codes, r, n_key) & mask
        while True:
            gid = table[pos]
            if gid == -1:
                table[pos] = g
                first[g] = r
                sums[g] = counts[r]
                inverse[r] = g
                g += 1
                break
            f = first[gid]
            same = True
            for c in range(n_key):
                if codes[f, c] != codes[r, c]:
                    same = False
                    break
            if same:
                sums[gid] += counts[r]
                inverse[r] = gid
                break
            pos = (pos + np.uint64(1)) & mask
    return first[:g], sums[:g], inverse, g


@njit(cache=True)
def _old_merge_equal_rows(mapped, counts):
    first, sums, _, _ = _old_group_rows(mapped, counts, mapped.shape[1])
    out = np.empty((first.size, mapped.shape[1]), mapped.dtype)
    for g in range(first.size):
        out[g] = mapped[first[g]]
    return out, sums


@njit(cache=True)
def _old_rollup(codes, counts, column, mapping):
    """The table one level up in ``column``: map that column, then merge equal rows."""
    mapped = codes.copy()
    for r in range(codes.shape[0]):
        mapped[r, column] = mapping[codes[r, column]]
    return _old_merge_equal_rows(mapped, counts)


@njit(cache=True)
def _old_generalize_table(codes, counts, maps, offsets, levels, n_qi):
    """A node's table straight from a finer table (usually the bottom node's): map every QI
    column j to its level (row ``offsets[j] + levels[j]`` of ``maps`` is column j's level-0 ->
    level map), then merge equal rows."""
    mapped = codes.copy()
    for j in range(n_qi):
        row = offsets[j] + levels[j]
        for r in range(codes.shape[0]):
            mapped[r, j] = maps[row, codes[r, j]]
    return _old_merge_equal_rows(mapped, counts)


@njit(cache=True)
def _old_count_by_value(values, weights, n):
    """Distinct values ascending, how many items have each, and their summed weights."""
    top = 0
    for i in range(n):
        if values[i] > top:
            top = values[i]
    items = np.zeros(top + 1, np.int64)
    total = np.zeros(top + 1, np.int64)
    for i in range(n):
        items[values[i]] += 1
        total[values[i]] += weights[i]
    k = 0
    for v in range(top + 1):
        if items[v] > 0:
            k += 1
    keys = np.empty(k, np.int64)
    out_items = np.empty(k, np.int64)
    out_total = np.empty(k, np.int64)
    k = 0
    for v in range(top + 1):
        if items[v] > 0:
            keys[k] = v
            out_items[k] = items[v]
            out_total[k] = total[v]
            k += 1
    return keys, out_items, out_total


@njit(cache=True)
def _old_node_histograms(codes, counts, n_qi, with_sensitive, missing=-1):
    """(class sizes -> classes) and, with a sensitive column, (distinct values -> classes, rows).

    Without a sensitive attribute the table rows are the classes; with one they are the distinct
    (class, value) pairs, grouped once more by the QI columns. The sensitive code ``missing``
    (-1: none) is never a distinct value, as in publish: a class of only missing values has 0.
    """
    if not with_sensitive:
        sizes = counts
        n_classes = counts.size
        distinct = np.zeros(0, np.int64)
    else:
        _, sizes, inverse, n_classes = _old_group_rows(codes, counts, n_qi)
        distinct = np.zeros(n_classes, np.int64)
        if missing < 0:  # the loop without a look at the codes: as fast as before missing values
            for r in range(inverse.size):
                distinct[inverse[r]] += 1
        else:
            for r in range(inverse.size):
                if codes[r, n_qi] != missing:
                    distinct[inverse[r]] += 1
    k_size, k_classes, _ = _old_count_by_value(sizes, sizes, n_classes)
    if with_sensitive:
        l_distinct, l_classes, l_rows = _old_count_by_value(distinct, sizes, n_classes)
    else:
        l_distinct = np.zeros(0, np.int64)
        l_classes = np.zeros(0, np.int64)
        l_rows = np.zeros(0, np.int64)
    return n_classes, k_size, k_classes, l_distinct, l_classes, l_rows



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


# ------------------------------------------------------------------------------------------------
# A node's working table: group_rows, merge_rows, count_by_value and what generalization builds
# of them (generalize_table, rollup, node_histograms)


def _brute_groups(codes: np.ndarray, counts: np.ndarray, n_key: int):
    """Rows grouped by their first n_key codes, groups in order of first appearance."""
    first: dict[tuple, int] = {}
    sums: dict[tuple, int] = {}
    for r, row in enumerate(codes[:, :n_key].tolist()):
        key = tuple(row)
        first.setdefault(key, r)
        sums[key] = sums.get(key, 0) + int(counts[r])
    ids = {key: g for g, key in enumerate(first)}
    return (list(first.values()), list(sums.values()),
            [ids[tuple(row)] for row in codes[:, :n_key].tolist()])


@st.composite
def _codes(draw, max_rows=80):
    """A table of small codes (many equal rows), its row counts, and a seed for the rest."""
    n = draw(st.integers(0, max_rows))
    m = draw(st.integers(1, 5))
    top = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    return rng.integers(0, top, (n, m)).astype(np.int64), rng.integers(1, 9, n).astype(np.int64), rng


@settings(max_examples=300, deadline=None)
@given(_codes(), st.integers(0, 5))
def test_group_rows_equals_the_definition_and_numba_s_kernel(table, n_key):
    codes, counts, _ = table
    n_key = min(n_key, codes.shape[1])
    first, sums, inverse, g = group_rows(codes, counts, n_key)
    old = _old_group_rows(codes, counts, n_key)
    for got, want in zip((first, sums, inverse), old[:3]):
        np.testing.assert_array_equal(got, want)
    assert g == old[3]
    brute_first, brute_sums, brute_inverse = _brute_groups(codes, counts, n_key)
    assert (first.tolist(), sums.tolist(), inverse.tolist()) == (brute_first, brute_sums, brute_inverse)


def test_group_rows_with_many_colliding_rows():
    """Half a million rows over 5,000 distinct tuples, some differing only in high bits."""
    rng = np.random.default_rng(3)
    base = rng.integers(0, 5000, 500_000)
    codes = np.column_stack([base % 50, (base // 50) << 40, base % 7]).astype(np.int64)
    counts = rng.integers(1, 4, base.size).astype(np.int64)
    got, want = group_rows(codes, counts, 3), _old_group_rows(codes, counts, 3)
    for a, b in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(a, b)
    assert got[3] == want[3] == np.unique(base).size
    assert got[1].sum() == counts.sum()


@settings(max_examples=300, deadline=None)
@given(_codes(), st.sampled_from([np.int32, np.int64]))
def test_generalize_table_and_rollup_equal_numba_s_kernels_and_the_definition(table, dtype):
    codes, counts, rng = table
    n, m = codes.shape
    n_qi = int(rng.integers(1, m + 1))
    depths = rng.integers(1, 4, n_qi)
    width = int(codes.max(initial=0)) + 1 + int(rng.integers(0, 3))
    maps = rng.integers(0, width, (int(depths.sum()), width)).astype(np.int32)  # as code_map_table pads them
    offsets = np.concatenate([[0], np.cumsum(depths)[:-1]]).astype(np.int64)
    levels = np.array([rng.integers(0, d) for d in depths], np.int64)
    codes = codes.astype(dtype)
    got_codes, got_counts = generalize_table(codes, counts, maps, offsets, levels, n_qi)
    want_codes, want_counts = _old_generalize_table(codes, counts, maps, offsets, levels, n_qi)
    assert got_codes.dtype == want_codes.dtype == codes.dtype
    np.testing.assert_array_equal(got_codes, want_codes)
    np.testing.assert_array_equal(got_counts, want_counts)
    mapped = codes.astype(np.int64)
    for j in range(n_qi):
        mapped[:, j] = maps[offsets[j] + levels[j], codes[:, j]]
    brute_first, brute_sums, _ = _brute_groups(mapped, counts, m)
    assert got_codes.tolist() == mapped[brute_first].tolist() and got_counts.tolist() == brute_sums
    column = int(rng.integers(0, m))
    mapping = rng.integers(0, width, width).astype(np.int32)
    got_codes, got_counts = rollup(codes, counts, column, mapping)
    want_codes, want_counts = _old_rollup(codes, counts, column, mapping)
    assert got_codes.dtype == want_codes.dtype
    np.testing.assert_array_equal(got_codes, want_codes)
    np.testing.assert_array_equal(got_counts, want_counts)


@settings(max_examples=300, deadline=None)
@given(_codes(), st.booleans(), st.integers(-1, 3))
def test_node_histograms_equal_numba_s_kernel_and_the_definition(table, with_sensitive, missing):
    codes, counts, rng = table
    m = codes.shape[1]
    if with_sensitive and m < 2:
        codes = np.column_stack([codes, rng.integers(0, 4, codes.shape[0])]).astype(np.int64)
        m = 2
    n_qi = m - 1 if with_sensitive else m
    if with_sensitive:  # the table rows are distinct (class, value) pairs, as a node's table holds them
        first, sums, _, _ = _old_group_rows(codes, counts, m)
        codes, counts = codes[first], sums
    got = node_histograms(codes, counts, n_qi, with_sensitive, missing)
    want = _old_node_histograms(codes, counts, n_qi, with_sensitive, missing)
    assert got[0] == want[0]
    for a, b in zip(got[1:], want[1:]):
        np.testing.assert_array_equal(a, b)
    # the definition: class sizes and distinct non-missing values per class, tallied
    sizes: dict[tuple, int] = {}
    values: dict[tuple, set] = {}
    for row, c in zip(codes.tolist(), counts.tolist()):
        key = tuple(row[:n_qi]) if with_sensitive else tuple(row)
        sizes[key] = sizes.get(key, 0) + c
        values.setdefault(key, set())
        if with_sensitive and row[n_qi] != missing:
            values[key].add(row[n_qi])
    if not with_sensitive:
        sizes = {i: int(c) for i, c in enumerate(counts.tolist())}  # each row a class
    k_hist = sorted({s: sum(1 for v in sizes.values() if v == s) for s in sizes.values()}.items())
    assert got[0] == len(sizes)
    assert list(zip(got[1].tolist(), got[2].tolist())) == k_hist
    if with_sensitive:
        l_hist: dict[int, list[int]] = {}
        for key, vals in values.items():
            entry = l_hist.setdefault(len(vals), [0, 0])
            entry[0] += 1
            entry[1] += sizes[key]
        assert list(zip(got[3].tolist(), got[4].tolist(), got[5].tolist())) == [
            (d, c, r) for d, (c, r) in sorted(l_hist.items())]
    else:
        assert got[3].size == got[4].size == got[5].size == 0


@settings(max_examples=200, deadline=None)
@given(arrays(np.int64, st.integers(0, 60), elements=st.integers(0, 40)), st.integers(0, 2**32 - 1))
def test_count_by_value_equals_the_definition(values, seed):
    weights = np.random.default_rng(seed).integers(0, 100, values.size).astype(np.int64)
    keys, items, totals = count_by_value(values, weights)
    want = _old_count_by_value(values, weights, values.size)
    for a, b in zip((keys, items, totals), want):
        np.testing.assert_array_equal(a, b)
    distinct = sorted(set(values.tolist()))
    assert keys.tolist() == distinct
    assert items.tolist() == [int(np.sum(values == v)) for v in distinct]
    assert totals.tolist() == [int(weights[values == v].sum()) for v in distinct]


def test_the_table_kernels_refuse_bad_input():
    with pytest.raises(ValueError, match="codes row 1 column 0 holds a code outside maps' columns"):
        merge_rows(np.array([[0], [4]]), np.ones(2, np.int64), np.zeros((1, 3), np.int64), np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="map_rows\\[0\\] = 2 is not a row of maps"):
        merge_rows(np.array([[0]]), np.ones(1, np.int64), np.zeros((1, 3), np.int64), np.array([2]))
    with pytest.raises(ValueError, match="values\\[1\\] = -1 is negative"):
        count_by_value(np.array([0, -1]), np.ones(2, np.int64))
    with pytest.raises(ValueError, match="n_key = 3 must lie in"):
        group_rows(np.zeros((2, 2), np.int64), np.ones(2, np.int64), 3)
