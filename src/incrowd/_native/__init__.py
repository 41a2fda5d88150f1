"""Kernels compiled ahead of time, by ``pip install``: those a one-shot command runs.

A command on a survey-sized file spends less on its work than numba spends starting (its import
and its runtime, loaded by the first cached kernel: about 0.6 s). So the kernels such a command
runs are a C extension (``_kernels.c``) built with the package: a node's classes for the node
search (:func:`node_groups`), MDAV's plain scan (:func:`mdav_labels`) and the group sums of the
centroids (:func:`group_sums`), and a node's working table for ``incrowd generalize`` and
``incrowd lattice build`` (:func:`group_rows`, :func:`merge_rows`, :func:`count_by_value`).
Modules of their own (one per C file): top and bottom coding and rounding of a column in one
pass (``_coding.c``), exact MDAV from a k-d tree of the live rows (``_mdav_tree.c``), l's and t's
figures (``_sensitive.c``), local suppression's matches (``_suppression.c``), the within-group sum
of squares (``_measures.c``) and SUDA2 (``_suda2.c``).
Each is the numba kernel it replaced, loop for loop and operation for operation, built without
floating-point contraction: the results are numba's bit for bit.

These wrappers take numpy arrays of any layout and integer or float type as numba did, hand the
extension C-contiguous int64 and float64 buffers, and allocate the outputs.
"""

from __future__ import annotations

import numpy as np

try:
    # one module per C file, each its own block below (kernels added apart merge apart)
    from . import _coding, _kernels, _mdav_tree, _measures, _sensitive, _suda2, _suppression
except ImportError as exc:  # a source checkout used without an install: say how to build it
    raise ImportError(f"incrowd's compiled extension ({exc.name or 'incrowd._native'}) is not built: install the "
                      "package (pip install -e . needs a C compiler) or build it in place with "
                      "'python setup.py build_ext --inplace'") from exc


def _int64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


def node_groups(codes0: np.ndarray, first_key: np.ndarray, maps: np.ndarray, map_rows: np.ndarray,
                widths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group the bottom classes by their key at a node (open-addressing hash, linear in the
    bottom classes). Bottom class r's key is the radix number ``first_key[r]``, then column j's
    code ``maps[map_rows[j], codes0[r, j]]`` as a digit of base ``widths[j]``. Returns (group of
    each bottom class, numbered by first appearance; each group's key; its first bottom class)."""
    codes0, maps = _int64(codes0), _int64(maps)
    if codes0.ndim != 2 or maps.ndim != 2:
        raise ValueError("codes0 and maps must be two-dimensional")
    n, m = codes0.shape
    gid = np.empty(n, np.int64)
    keys = np.empty(n, np.int64)
    first = np.empty(n, np.int64)
    g = _kernels.node_groups(codes0, m, _int64(first_key), maps, maps.shape[1], _int64(map_rows), _int64(widths),
                             gid, keys, first)
    return gid, keys[:g], first[:g]


def mdav_labels(X: np.ndarray, k: int) -> np.ndarray:
    """MDAV "generic" (Rodriguez-Hoyos et al. (2020), Algorithm 1), the plain scan: a group id
    per row of X (n x m, float64), ids in order of creation. Fewer than 2k rows form one group."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError("X must be two-dimensional")
    labels = np.empty(X.shape[0], np.int64)
    _kernels.mdav_labels(X, X.shape[1], int(k), labels)
    return labels


def group_sums(X: np.ndarray, labels: np.ndarray, g: int) -> np.ndarray:
    """Per-group column sums of X (n x m), shape (g, m), each a sequential sum in row order (as
    ``np.add.at`` sums, at a tenth of its time)."""
    return _sums(X, labels, g, None)


def group_sums_in_units(X: np.ndarray, labels: np.ndarray, g: int, inverse_units: np.ndarray) -> np.ndarray:
    """As :func:`group_sums`, of ``X * inverse_units`` (each column times its own factor)."""
    return _sums(X, labels, g, np.ascontiguousarray(inverse_units, dtype=np.float64))


def _sums(X: np.ndarray, labels: np.ndarray, g: int, inverse_units: np.ndarray | None) -> np.ndarray:
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError("X must be two-dimensional")
    sums = np.zeros((int(g), X.shape[1]))
    _kernels.group_sums(X, X.shape[1], _int64(labels), int(g), inverse_units, sums)
    return sums


def _codes(a: np.ndarray) -> np.ndarray:
    """int32 codes as they are (a lattice's), any other integers as int64."""
    return np.ascontiguousarray(a, dtype=np.int32 if a.dtype == np.int32 else np.int64)


def group_rows(codes: np.ndarray, counts: np.ndarray, n_key: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Group the rows of ``codes`` (n x m) by their first ``n_key`` columns (open-addressing hash
    on the code tuple). Returns (first row of each group, summed counts, group id of every row,
    number of groups); groups are numbered in order of first appearance."""
    codes = _codes(np.asarray(codes))
    if codes.ndim != 2:
        raise ValueError("codes must be two-dimensional")
    n, m = codes.shape
    first = np.empty(n, np.int64)
    sums = np.empty(n, np.int64)
    inverse = np.empty(n, np.int64)
    g = _kernels.group_rows(codes, codes.itemsize, m, int(n_key), _int64(counts), first, sums, inverse)
    return first[:g], sums[:g], inverse, g


def merge_rows(codes: np.ndarray, counts: np.ndarray, maps: np.ndarray,
               map_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``codes`` (n x m) with column j mapped through row ``map_rows[j]`` of ``maps`` (a code c
    becomes ``maps[map_rows[j], c]``; -1 keeps the column), then equal rows merged: (each group's
    mapped row, its summed counts), groups in order of first appearance (as :func:`group_rows`
    numbers them); the rows int32 for int32 codes, int64 for any other integers."""
    codes, maps = _codes(np.asarray(codes)), _int64(maps)
    if codes.ndim != 2 or maps.ndim != 2:
        raise ValueError("codes and maps must be two-dimensional")
    merged = np.empty(codes.shape, codes.dtype)
    sums = np.empty(codes.shape[0], np.int64)
    g = _kernels.merge_rows(codes, codes.itemsize, codes.shape[1], maps, maps.shape[1], _int64(map_rows),
                            _int64(counts), merged, sums)
    # a copy when groups merged: the tables a lattice build keeps on its stack hold only their rows
    return (merged, sums) if g == codes.shape[0] else (merged[:g].copy(), sums[:g].copy())


def count_by_value(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct values (non-negative integers) ascending, how many items hold each, and their
    summed weights (int64)."""
    values = _int64(values)
    n = values.size
    keys = np.empty(n, np.int64)
    items = np.empty(n, np.int64)
    totals = np.empty(n, np.int64)
    k = _kernels.count_by_value(values, _int64(weights), keys, items, totals)
    return keys[:k], items[:k], totals[:k]


__all__ = ["node_groups", "mdav_labels", "group_sums", "group_sums_in_units", "group_rows", "merge_rows",
           "count_by_value"]


# --- top and bottom coding and rounding of one column in one pass (_coding.c) -------------------

#: the column types the one-pass kernels take
CODING_TYPES = (np.dtype(np.float64), np.dtype(np.int64))


def code_values(x: np.ndarray, limit: float | int, fill: float | int, side: int) -> tuple[np.ndarray, int, int]:
    """Top coding (``side`` > 0) or bottom coding of a float64 or int64 column: (the new
    column, the cells beyond ``limit``, the cells changed). A cell beyond the limit becomes
    ``fill``; a NaN is beyond no limit and keeps its bits. On int64, ``limit`` and ``fill`` are
    whole numbers int64 holds."""
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    if x.dtype == np.int64:
        beyond, changed = _coding.code_i64(x, out, int(limit), int(fill), side)
    else:
        beyond, changed = _coding.code_f64(np.ascontiguousarray(x, dtype=np.float64), out, float(limit),
                                           float(fill), side)
    return out, beyond, changed


def round_values(x: np.ndarray, base: float) -> tuple[np.ndarray | None, int]:
    """Each value of a float64 or int64 column to ``base * rint(x / base)`` in doubles, as numpy
    computes it: (the new column in the input's type, the cells changed); a NaN keeps its bits.
    (None, -1) where an int64 column's rounded value is past int64's range."""
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    if x.dtype == np.int64:
        changed = _coding.round_i64(x, out, float(base))
        return (None, -1) if changed < 0 else (out, changed)
    return out, _coding.round_f64(np.ascontiguousarray(x, dtype=np.float64), out, float(base))


__all__ += ["CODING_TYPES", "code_values", "round_values"]


# ---- exact MDAV from a k-d tree (_mdav_tree.c) ----

#: rows a leaf of the tree holds at most
MDAV_TREE_LEAF = 16


def mdav_tree_labels(X: np.ndarray, k: int, leaf: int = MDAV_TREE_LEAF) -> tuple[np.ndarray, int]:
    """MDAV's groups as :func:`mdav_labels` gives them, row for row, from a k-d tree of the live
    rows (for a few columns, within +-1e15): (a group id per row, the rounds where the scan's own
    centroid had to decide P)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError("X must be two-dimensional")
    labels = np.empty(X.shape[0], np.int64)
    fallbacks = _mdav_tree.mdav_tree_labels(X, X.shape[1], int(k), int(leaf), labels)
    return labels, fallbacks


__all__ += ["mdav_tree_labels", "MDAV_TREE_LEAF"]


# ------------------------------------------------------------------------------------------------
# l-diversity's and t-closeness's figures (_sensitive.c), local suppression's matches
# (_suppression.c) and the within-group sum of squares (_measures.c): the rest of what a publish
# with l or t, a release with cell suppression and ``incrowd local-suppression`` run, so that they
# start no numba either.

def _out_array(a: np.ndarray, dtype: type, name: str) -> np.ndarray:
    """``a`` itself, for a kernel to write into: it must already be C-contiguous of ``dtype``."""
    if not (isinstance(a, np.ndarray) and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable):
        raise ValueError(f"{name} must be a writable C-contiguous {np.dtype(dtype).name} array")
    return a


def sensitive_counts(class_of: np.ndarray, n_classes: int, pair_b: np.ndarray, pair_val: np.ndarray,
                     pair_cnt: np.ndarray, reference: np.ndarray, ordered: bool, missing: bool, with_t: bool,
                     distinct_out: np.ndarray, distance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One sensitive column's figures per class, from the bottom classes' (bottom class
    ``pair_b``, value ``pair_val``, rows ``pair_cnt``) pairs and each bottom class's class
    ``class_of``: ``distinct_out[c]`` the distinct values of class c (with ``missing`` the last
    code is never a distinct value), and with ``with_t`` ``distance[c]`` its earth mover's distance
    to ``reference`` (:func:`incrowd.privacy.emd` ``emd_pairs``'s integer numerator over the same
    denominator, one float division; the caller makes sure it fits an int64). Both outputs
    (int64 and float64, one per class) are written in place and returned."""
    _sensitive.sensitive_counts(_int64(class_of), int(n_classes), _int64(pair_b), _int64(pair_val), _int64(pair_cnt),
                                _int64(reference), bool(ordered), bool(missing), bool(with_t),
                                _out_array(distinct_out, np.int64, "distinct_out"),
                                _out_array(distance, np.float64, "distance"))
    return distinct_out, distance


def _table_and_row(table: np.ndarray, row: np.ndarray, table_name: str,
                   row_name: str) -> tuple[np.ndarray, np.ndarray]:
    """``table`` (two-dimensional) and ``row`` (one value per column of it) as int64 buffers."""
    table, row = _int64(table), _int64(row)
    if table.ndim != 2:
        raise ValueError(f"{table_name} must be two-dimensional")
    if row.size != table.shape[1]:
        raise ValueError(f"{row_name} holds {row.size} values; {table_name} has {table.shape[1]} columns")
    return table, row


def dense_status(counts: np.ndarray, reference: np.ndarray, ordered: bool,
                 missing: bool) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, earth mover's distance) of each row of ``counts`` (groups x m) against
    ``reference`` (m positive counts), with integer numerators (the caller checks they are exact,
    ``incrowd.privacy.emd``'s ``exact_counts``); the last value not counted as distinct when it is
    the ``missing`` one."""
    counts, reference = _table_and_row(counts, reference, "counts", "reference")
    distinct = np.zeros(counts.shape[0], np.int64)
    distance = np.zeros(counts.shape[0], np.float64)
    _sensitive.dense_status(counts, reference, bool(ordered), bool(missing), distinct, distance)
    return distinct, distance


def nearest_slots(cent: np.ndarray, lo: int, n: int, own: int) -> np.ndarray:
    """The offsets (from ``lo``) of the live groups nearest to the group at offset ``own`` among
    the ``n`` slots from ``lo`` of ``cent`` (features x slots), itself left out, ascending;
    squared Euclidean distance summed feature by feature."""
    cent = np.ascontiguousarray(cent, dtype=np.float64)
    if cent.ndim != 2:
        raise ValueError("cent must be two-dimensional")
    out = np.empty(max(int(n), 0), np.int64)
    found = _sensitive.nearest_slots(cent, cent.shape[1], int(lo), int(n), int(own), out)
    return out[:found]


def centroid_tree(points: np.ndarray, leaf: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A k-d tree of ``points`` (m x p, finite, m and p at least 1): (perm, lo, hi), each node's
    box in lo and hi (nodes x p); see ``_sensitive.c``."""
    points = np.ascontiguousarray(points, dtype=np.float64)
    m, p = points.shape
    size, depth = m, 0
    while size > leaf:  # a node splits its positions in halves, the larger ceil(size / 2)
        size, depth = -(-size // 2), depth + 1
    nodes = 2 ** (depth + 1) - 1
    perm = np.empty(m, np.int64)
    lo = np.empty((nodes, p), np.float64)
    hi = np.empty((nodes, p), np.float64)
    _sensitive.centroid_tree(points, m, int(leaf), perm, lo, hi)
    return perm, lo, hi


def centroid_nearest(points: np.ndarray, leaf: int, perm: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                     alive: np.ndarray, q: np.ndarray, exclude: int, extra: np.ndarray, n_extra: int | None = None,
                     exclude_extra: int = -1, out: np.ndarray | None = None) -> np.ndarray:
    """The points nearest to ``q`` among the live ones of a :func:`centroid_tree` (``alive``: int8
    by tree position; ``exclude``: a position left out, -1 for none) and the first ``n_extra``
    rows of ``extra`` (all by default; ``exclude_extra``: one of them left out): each as its tree
    position, or as -1 - j for extra's row j; squared Euclidean distance summed feature by
    feature, as :func:`nearest_slots` sums it. ``out``: a buffer of at least m + n_extra."""
    n_extra = extra.shape[0] if n_extra is None else n_extra
    if out is None:
        out = np.empty(points.shape[0] + n_extra, np.int64)
    found = _sensitive.centroid_nearest(points, points.shape[0], int(leaf), perm, lo, hi, alive,
                                        np.ascontiguousarray(q, dtype=np.float64), int(exclude), extra, int(n_extra),
                                        int(exclude_extra), out)
    return out[:found]


def match_combinations(U: np.ndarray, row: np.ndarray, c: int, value: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``U`` (value combinations, -1 missing, a missing value matching any): does it
    match a record with values ``row``, and one with column ``c`` set to ``value`` (-1: blanked)
    instead?"""
    U, row = _table_and_row(U, row, "U", "row")
    match_src = np.empty(U.shape[0], np.bool_)
    match_dest = np.empty(U.shape[0], np.bool_)
    _suppression.match_combinations(U, row, int(c), int(value), match_src, match_dest)
    return match_src, match_dest


def squared_deviations(X: np.ndarray, group: np.ndarray, centers: np.ndarray) -> float:
    """Sum over rows of ||x - centers[group[x]]||^2: each row's squares summed over columns in
    column order, the rows in row order with Neumaier's compensation."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    centers = np.ascontiguousarray(centers, dtype=np.float64)
    if X.ndim != 2 or centers.ndim != 2:
        raise ValueError("X and centers must be two-dimensional")
    if centers.shape[1] != X.shape[1]:
        raise ValueError(f"centers has {centers.shape[1]} columns; X has {X.shape[1]}")
    return float(_measures.squared_deviations(X, X.shape[1], _int64(group), centers))


__all__ += ["sensitive_counts", "dense_status", "nearest_slots", "centroid_tree", "centroid_nearest", "match_combinations",
            "squared_deviations"]


# ------------------------------------------------------------------------------------------------
# SUDA2 (_suda2.c): the records in class order, sdcMicro's record hash, the DIS scores and the
# search of the minimal sample uniques, so that ``incrowd risk`` starts no numba either.

def counting_order(classes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The records ordered by class number (a counting sort, stable); ``sizes[c]`` the records of
    class c."""
    classes = _int64(classes)
    rows = np.empty(classes.size, np.int64)
    _suda2.counting_order(classes, _int64(sizes), rows)
    return rows


def record_hashes(raw: np.ndarray) -> np.ndarray:
    """sdcMicro's 16-bit rotate-and-add hash of each record's values (``raw[variable, record]``)."""
    raw = _int64(raw)
    if raw.ndim != 2:
        raise ValueError("raw must be two-dimensional")
    out = np.empty(raw.shape[1], np.int64)
    _suda2.record_hashes(raw, raw.shape[0], out)
    return out


def dis_scores(score: np.ndarray, q: float, odds: float) -> np.ndarray:
    """The DIS scores of SUDA2's scores: ``1 / (1 + odds / (score**q * sum of 1 / score**q))`` for
    a record with a score, the sum in record order (sdcMicro's), 0 for a record without."""
    score = np.ascontiguousarray(score, dtype=np.float64)
    out = np.zeros(score.size)
    _suda2.dis_scores(score, float(q), float(odds), out)
    return out


def msu_search(codes: np.ndarray, cards: np.ndarray, suffix: np.ndarray, max_size: int, stop: np.ndarray,
               budget: int) -> tuple[np.ndarray, int, int]:
    """SUDA2's minimal sample uniques of each size per record (``out[r, s - 1]``: MSUs of s
    variables), from ``codes[variable, record]`` (-1 missing, else below ``cards[variable]``) and
    ``suffix[v, record]`` (class numbers on variables v..); sets over ``max_size`` variables not
    searched. ``stop[0]`` is read as the search runs (a cancel: status 1) and ``budget`` steps
    bound it (0: none; status 2); returns (counts, status, steps taken)."""
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    suffix = np.ascontiguousarray(suffix, dtype=np.int32)
    if codes.ndim != 2 or suffix.ndim != 2 or suffix.shape != (codes.shape[0] + 1, codes.shape[1]):
        raise ValueError("codes must be m x n and suffix (m + 1) x n")
    if not (isinstance(stop, np.ndarray) and stop.dtype == np.uint8 and stop.flags.c_contiguous):
        raise ValueError("stop must be a C-contiguous uint8 array (read while the search runs)")
    m, n = codes.shape
    out = np.zeros((n, m), np.int64)
    status, work = _suda2.msu_search(codes, m, _int64(cards), suffix, int(max_size), stop, int(budget), out)
    return out, status, work


__all__ += ["counting_order", "record_hashes", "dis_scores", "msu_search"]
