"""A node's working table and its histograms, on the compiled extension (``incrowd._native``).

A node's table is its equivalence classes as rows of level codes (plus, with a sensitive
attribute, one row per distinct (class, sensitive value) pair) and a row count each. A coarser
node's table comes from a finer node's by mapping one column to the next level and merging equal
rows again (:func:`rollup`), or from the bottom node's by mapping every column at once
(:func:`generalize_table`), so no step after the first touches the raw rows.

``incrowd generalize`` and ``incrowd lattice build`` run nothing else compiled, so they run
these in the extension rather than in numba: a one-shot process never pays numba's start-up.
"""

from __future__ import annotations

import numpy as np

from .._native import count_by_value, group_rows, merge_rows


def _merge_mapped(codes: np.ndarray, counts: np.ndarray, maps: np.ndarray, map_rows: np.ndarray):
    merged, sums = merge_rows(codes, counts, maps, map_rows)
    return merged.astype(codes.dtype, copy=False), sums


def rollup(codes: np.ndarray, counts: np.ndarray, column: int, mapping: np.ndarray):
    """The table one level up in ``column``: map that column through ``mapping``, then merge
    equal rows (in order of first appearance; counts summed)."""
    map_rows = np.full(codes.shape[1], -1, np.int64)
    map_rows[column] = 0
    return _merge_mapped(codes, counts, np.asarray(mapping).reshape(1, -1), map_rows)


def generalize_table(codes: np.ndarray, counts: np.ndarray, maps: np.ndarray, offsets: np.ndarray,
                     levels: np.ndarray, n_qi: int):
    """A node's table straight from a finer table (usually the bottom node's): map every QI
    column j to its level (row ``offsets[j] + levels[j]`` of ``maps`` is column j's level-0 ->
    level map), then merge equal rows."""
    map_rows = np.full(codes.shape[1], -1, np.int64)
    map_rows[:n_qi] = np.asarray(offsets[:n_qi], np.int64) + np.asarray(levels[:n_qi], np.int64)
    return _merge_mapped(codes, counts, maps, map_rows)


def node_histograms(codes: np.ndarray, counts: np.ndarray, n_qi: int, with_sensitive: bool, missing: int = -1):
    """(class sizes -> classes) and, with a sensitive column, (distinct values -> classes, rows).

    Without a sensitive attribute the table rows are the classes; with one they are the distinct
    (class, value) pairs, grouped once more by the QI columns. The sensitive code ``missing``
    (-1: none) is never a distinct value, as in publish: a class of only missing values has 0.
    Returns (classes, k_size, k_classes, l_distinct, l_classes, l_rows).
    """
    empty = np.zeros(0, np.int64)
    if not with_sensitive:
        sizes = np.asarray(counts, np.int64)
        k_size, k_classes, _ = count_by_value(sizes, sizes)
        return sizes.size, k_size, k_classes, empty, empty, empty
    _, sizes, inverse, n_classes = group_rows(codes, counts, n_qi)
    if missing >= 0:
        inverse = inverse[np.asarray(codes)[:, n_qi] != missing]
    distinct = np.bincount(inverse, minlength=n_classes).astype(np.int64, copy=False)
    k_size, k_classes, _ = count_by_value(sizes, sizes)
    l_distinct, l_classes, l_rows = count_by_value(distinct, sizes)
    return n_classes, k_size, k_classes, l_distinct, l_classes, l_rows
