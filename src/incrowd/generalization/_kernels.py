"""numba kernels: group-by on code tuples, per-node histograms, suppression look-ups.

A node's working table is its equivalence classes as rows of level codes (plus, with a sensitive
attribute, one row per distinct (class, sensitive value) pair) and a row count each. A coarser
node's table comes from a finer node's by mapping one column to the next level and grouping
again, so no step after the first ever touches the raw rows.

``publish``'s node search (:mod:`incrowd.publishing._gtm`) reads two more: a node's classes
straight from the bottom classes (:func:`._node_classes.node_classes`, on the compiled extension:
a search without l or t runs no numba at all) and, in one pass over the (bottom class, sensitive
value) pairs, each class's distinct values and distance (:func:`sensitive_counts`), which the
privacy models judge.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_EMPTY = -1


@njit(cache=True)
def _row_hash(codes, r, n_key):
    h = np.uint64(14695981039346656037)
    for c in range(n_key):
        h ^= np.uint64(codes[r, c]) + np.uint64(0x9E3779B97F4A7C15) + (h << np.uint64(6)) + (h >> np.uint64(2))
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    return h


@njit(cache=True)
def _open_table(n):
    """An empty open-addressing table for n keys (a power of two at least 2n, so probes stay
    short) and the mask that maps a hash to a slot."""
    cap = 16
    while cap < 2 * n:
        cap <<= 1
    return np.full(cap, _EMPTY, np.int64), np.uint64(cap - 1)


@njit(cache=True)
def group_rows(codes, counts, n_key):
    """Group rows by their first ``n_key`` columns (open-addressing hash on the code tuple).

    Returns (first row of each group, summed counts, group id of every row, number of groups);
    groups are numbered in order of first appearance, so the result is deterministic.
    """
    n = codes.shape[0]
    table, mask = _open_table(n)
    first = np.empty(n, np.int64)
    sums = np.zeros(n, np.int64)
    inverse = np.empty(n, np.int64)
    g = 0
    for r in range(n):
        pos = _row_hash(codes, r, n_key) & mask
        while True:
            gid = table[pos]
            if gid == _EMPTY:
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
def _merge_equal_rows(mapped, counts):
    first, sums, _, _ = group_rows(mapped, counts, mapped.shape[1])
    out = np.empty((first.size, mapped.shape[1]), mapped.dtype)
    for g in range(first.size):
        out[g] = mapped[first[g]]
    return out, sums


@njit(cache=True)
def rollup(codes, counts, column, mapping):
    """The table one level up in ``column``: map that column, then merge equal rows."""
    mapped = codes.copy()
    for r in range(codes.shape[0]):
        mapped[r, column] = mapping[codes[r, column]]
    return _merge_equal_rows(mapped, counts)


@njit(cache=True)
def generalize_table(codes, counts, maps, offsets, levels, n_qi):
    """A node's table straight from a finer table (usually the bottom node's): map every QI
    column j to its level (row ``offsets[j] + levels[j]`` of ``maps`` is column j's level-0 ->
    level map), then merge equal rows."""
    mapped = codes.copy()
    for j in range(n_qi):
        row = offsets[j] + levels[j]
        for r in range(codes.shape[0]):
            mapped[r, j] = maps[row, codes[r, j]]
    return _merge_equal_rows(mapped, counts)


@njit(cache=True)
def _count_by_value(values, weights, n):
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
def node_histograms(codes, counts, n_qi, with_sensitive, missing=-1):
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
        _, sizes, inverse, n_classes = group_rows(codes, counts, n_qi)
        distinct = np.zeros(n_classes, np.int64)
        if missing < 0:  # the loop without a look at the codes: as fast as before missing values
            for r in range(inverse.size):
                distinct[inverse[r]] += 1
        else:
            for r in range(inverse.size):
                if codes[r, n_qi] != missing:
                    distinct[inverse[r]] += 1
    k_size, k_classes, _ = _count_by_value(sizes, sizes, n_classes)
    if with_sensitive:
        l_distinct, l_classes, l_rows = _count_by_value(distinct, sizes, n_classes)
    else:
        l_distinct = np.zeros(0, np.int64)
        l_classes = np.zeros(0, np.int64)
        l_rows = np.zeros(0, np.int64)
    return n_classes, k_size, k_classes, l_distinct, l_classes, l_rows


@njit(cache=True)
def sensitive_counts(class_of, n_classes, pair_b, pair_val, pair_cnt, reference, ordered, missing, with_t,
                     distinct_out, distance):
    """One sensitive column's figures per class, from the bottom classes' (bottom class, value,
    rows) pairs: ``distinct_out[c]`` the distinct values of class c (with ``missing`` the last
    code is never a distinct value), and with ``with_t`` ``distance[c]`` its earth mover's
    distance to ``reference``.

    The distance is :func:`incrowd.privacy._emd.emd_pairs`'s: the same integer numerator (the caller
    makes sure it fits an int64) over the same denominator, one float division.
    """
    m = reference.size
    n_pairs = pair_b.size
    start = np.zeros(n_classes + 1, np.int64)
    for p in range(n_pairs):
        start[class_of[pair_b[p]] + 1] += 1
    for c in range(n_classes):
        start[c + 1] += start[c]
    fill = start[:n_classes].copy()
    order = np.empty(n_pairs, np.int64)
    for p in range(n_pairs):
        c = class_of[pair_b[p]]
        order[fill[c]] = p
        fill[c] += 1
    n_ref = np.int64(0)
    r_cum = np.empty(m, np.int64)
    for i in range(m):
        n_ref += reference[i]
        r_cum[i] = n_ref
    scratch = np.zeros(m, np.int64)
    with_t = with_t and m > 1
    for c in range(n_classes):
        distinct = 0
        s = np.int64(0)
        for e in range(start[c], start[c + 1]):
            p = order[e]
            v = pair_val[p]
            if scratch[v] == 0 and not (missing and v == m - 1):
                distinct += 1
            scratch[v] += pair_cnt[p]
            s += pair_cnt[p]
        distinct_out[c] = distinct
        if with_t and s > 0:
            num = np.int64(0)
            if ordered:
                cum = np.int64(0)
                for i in range(m - 1):
                    cum += scratch[i]
                    num += abs(cum * n_ref - r_cum[i] * s)
                den = s * n_ref * (m - 1)
            else:
                for e in range(start[c], start[c + 1]):
                    v = pair_val[order[e]]
                    if scratch[v] != 0:  # a value met twice (two bottom classes) counts once
                        r = reference[v]
                        num += abs(scratch[v] * n_ref - r * s) - r * s
                        scratch[v] = 0
                num += s * n_ref
                den = 2 * s * n_ref
            distance[c] = num / den
        elif with_t:
            distance[c] = 0.0
        for e in range(start[c], start[c + 1]):
            scratch[pair_val[order[e]]] = 0
    return distinct_out, distance
