"""The "joint" strategy's clustering: one partition over numeric and categorical QIs together.

Distance of two rows a, b::

    d(a, b) = sum_numeric (x_a - x_b)**2 + sum_categorical lca_level(a_c, b_c) / max_level_c

with numeric columns standardized, ``lca_level`` the level of the lowest common ancestor of the
two values in the column's hierarchy (0 when equal; a flat column is a 2-level hierarchy, so its
term is 0/1), and ``max_level_c`` the hierarchy's top level. Two values with no common ancestor
(a hierarchy whose top level holds several values) count as level ``depth`` = max level + 1.

Objective (total loss) of a partition, the quantity seeding aims at and refinement lowers::

    loss = sum_groups SSE of the numeric columns around the group mean
         + sum_groups |group| * sum_categorical lca_level(group, c) / max_level_c

where ``lca_level(group, c)`` is the level at which all the group's values of column c meet
(what the group publishes, see :func:`group_lca`). Per row and column the categorical term is in
[0, 1] like a standardized column's share of SST per row, so neither kind dominates by scale.

Seeding (:func:`joint_labels`, ``refine=False``) runs MDAV's rounds with d: P is the remaining
row farthest from the "centroid", Q the remaining row farthest from P, each with its k-1 nearest
remaining rows; the last k..2k-1 rows form a group, fewer than k join the last group. The
centroid distance of a row is its numeric squared distance to the remaining rows' mean plus, per
categorical column, the mean of its LCA term over the remaining rows: for numeric columns the
two differ by a constant (the remaining rows' variance), so the categorical part is measured
the same way the numeric part implicitly is, and with no categorical column the groups are
MDAV's (``incrowd.microaggregation.MDAV``), tie for tie. Ties go to the lowest row index.
``seeding="mdav-loss"`` keeps the rounds but grows P's and Q's groups one row at a time by the
least growth of the loss (as MDAV* grows groups by SSE growth): slower, lower loss.

Refinement (``refine=True``) is ONA*'s local search (Thaeter & Reischuk (2021), Algorithm 3) on the same loss,
with exact loss changes instead of centroid distances: phase 1 dissolves a group of exactly k
rows into neighbouring groups when that lowers the loss; phase 2 moves a row out of a group of
more than k rows to the neighbouring group where the loss falls most; a group that reaches 2k
rows is split in two groups of k the MDAV way (ONA*'s split step; splitting never raises the
loss, as a part's SSE and LCA levels are at most the whole's), so groups keep k..2k-1 rows. The
neighbouring groups of a group are the ``NEIGHBOUR_GROUPS`` whose loss would grow least by
taking in a row at its mean with its first member's values, recomputed every round. Rounds
repeat until no move helps or ``max_seconds`` pass; the result is never worse than the seed.

Scaling. Seeding costs O(n^2 / k) distance evaluations and each refinement round compares every
group with every other (O((n / k)^2)), so on a whole file both grow with the square of the rows.
Above ``part_rows`` rows (:data:`PART_ROWS` by default), :func:`joint_labels` first cuts the rows
into parts the way Mondrian (and MONA) does (:func:`joint_parts`), between two values of a
categorical column first and at a numeric median only where one combination of categorical
values dominates, until every part has at most ``part_rows`` rows; the seeding and refinement
above then run inside each part. Cutting costs O(n log n) (O(n) per level of cuts, each
categorical cut leaving at least ``part_rows // 16`` rows and 1/64 of the part on a side); each part costs at most
O(part_rows^2 / k), so the whole is O(n log n + n * part_rows / k). A group never crosses a
cut, which costs a little loss near the cuts (on Adult's 45,222 complete rows, 2 % at the
default 4,096 rows; cutting numeric medians first cost 23 to 66 %); with ``part_rows`` at or
above n the result is the whole-file clustering, bit for bit.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from ..._runtime import check_cancelled
from ...exceptions import DataError, ParameterError

#: how many neighbouring groups a row or a dissolved group may move to
NEIGHBOUR_GROUPS = 128
#: a move must lower the loss by more than this, so float noise never cycles
EPSILON = 1e-9
#: the (columns x V x V) table of LCA terms, V the most distinct values of a column, must fit
MAX_TABLE_BYTES = 1 << 30
#: groups handled per kernel call between two looks at the clock
_CHUNK = 2048
#: above this many rows, :func:`joint_labels` first cuts the rows into parts of at most this
#: many (see :func:`joint_parts`); at or below it the whole file is one part, as before
PART_ROWS = 4096


def group_lca(labels, codes0, hierarchy) -> tuple[np.ndarray, np.ndarray]:
    """Per group id g in 0..G-1 (G = labels.max() + 1): the lowest level at which all its rows'
    level-0 codes map to one code, and that code (``hierarchy.labels[level][code]``).

    A group with no common ancestor (the top level holds several values) or with no rows gets
    level ``hierarchy.depth`` and code -1. Loops over levels, never over rows.
    """
    labels = np.asarray(labels, dtype=np.int64)
    codes0 = np.asarray(codes0)
    depth = hierarchy.depth
    n_groups = int(labels.max()) + 1 if labels.size else 0
    level = np.full(n_groups, depth, dtype=np.int64)
    code = np.full(n_groups, -1, dtype=np.int64)
    if labels.size == 0:
        return level, code
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    present = ordered[starts]
    open_ = np.ones(present.size, dtype=bool)
    ordered_codes = codes0[order]
    for lev in range(depth):
        mapped = hierarchy.code_map(lev)[ordered_codes]
        lo = np.minimum.reduceat(mapped, starts)
        hi = np.maximum.reduceat(mapped, starts)
        meet = open_ & (lo == hi)
        level[present[meet]] = lev
        code[present[meet]] = lo[meet]
        open_ &= ~meet
        if not open_.any():
            break
    return level, code


def _distinct(codes0: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes0, return_inverse=True)`` (values ascending, each row's index among
    them) in O(n) for integer codes in [0, width); anything else goes to np.unique, whose sort
    costs seconds on a million rows."""
    if codes0.dtype.kind in "iu" and codes0.size and 0 <= codes0.min() and codes0.max() < width:
        seen = np.bincount(codes0, minlength=width) > 0
        values = np.flatnonzero(seen)
        index = np.cumsum(seen) - 1
        return values.astype(codes0.dtype), index[codes0]
    values, dense = np.unique(codes0, return_inverse=True)
    return values, dense.reshape(-1)


def lca_cost_table(hierarchy, values: np.ndarray) -> np.ndarray:
    """(V, V) LCA level / max level between the level-0 codes ``values`` (V of them)."""
    depth = hierarchy.depth
    table = np.full((values.size, values.size), float(depth))
    for lev in range(depth - 1, -1, -1):
        mapped = hierarchy.code_map(lev)[values]
        table[mapped[:, None] == mapped[None, :]] = lev
    return table / hierarchy.max_level


def _prepare(numeric, categorical, k):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be a positive integer; got {k!r}")
    X = np.ascontiguousarray(np.asarray(numeric, dtype=np.float64))
    if X.ndim != 2:
        raise ParameterError(f"numeric must be a 2-D array (rows, columns); got {X.ndim} dimension(s)")
    n = X.shape[0]
    if X.size and not np.all(np.isfinite(X)):
        row = int(np.flatnonzero(~np.isfinite(X).all(axis=1))[0]) + 1
        raise DataError(f"numeric quasi-identifiers: row {row} has a missing or infinite value")
    C = len(categorical)
    codes = np.zeros((n, C), dtype=np.int32)
    tables = []
    for c, (codes0, hierarchy) in enumerate(categorical):
        codes0 = np.asarray(codes0)
        if codes0.shape != (n,):
            raise ParameterError(
                f"categorical column {hierarchy.attribute!r}: {codes0.shape[0] if codes0.ndim else 0} "
                f"codes for {n} rows")
        values, dense = _distinct(codes0, hierarchy.labels[0].size)
        if values.size and (values[0] < 0 or values[-1] >= hierarchy.labels[0].size):
            raise DataError(f"categorical column {hierarchy.attribute!r}: code outside its hierarchy")
        codes[:, c] = dense.reshape(-1)
        tables.append(lca_cost_table(hierarchy, values))
    width = max([t.shape[0] for t in tables], default=1) or 1
    if C * width * width * 8 > MAX_TABLE_BYTES:
        widest = max(range(C), key=lambda c: tables[c].shape[0])
        raise DataError(
            f"categorical column {categorical[widest][1].attribute!r} has {width:,} distinct values: "
            f"the joint strategy's distance tables would take {C * width * width * 8 / 2**30:.1f} GiB "
            f"(limit {MAX_TABLE_BYTES / 2**30:g} GiB); generalize it first or use "
            "generalize-then-microaggregate")
    T = np.zeros((C, width, width))
    for c, t in enumerate(tables):
        T[c, : t.shape[0], : t.shape[0]] = t
    return X, codes, T


def joint_objective(numeric, categorical: Sequence[tuple], labels) -> tuple[float, float]:
    """(numeric SSE, categorical loss) of a partition; their sum is the loss the module
    docstring defines."""
    from ._joint_kernels import objective_parts

    X, codes, T = _prepare(numeric, categorical, 1)
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    n_groups = int(labels.max()) + 1 if labels.size else 0
    sse, cat = objective_parts(X, codes, T, labels, n_groups)
    return float(sse), float(cat)


SEEDINGS = ("mdav", "mdav-loss")


def joint_parts(numeric, categorical: Sequence[tuple], part_rows: int,
                min_rows: int | None = None) -> list[np.ndarray]:
    """Mondrian-style cut of the rows into parts of at most ``part_rows`` rows (row indices,
    ascending within a part; parts in the order of the cuts, lower half first).

    A part with more than ``part_rows`` rows is cut in two, categorical values first: rows that
    share all their categorical values are each other's nearest under d (a categorical
    mismatch costs a whole hierarchy level, a numeric neighbour little), so a cut through a
    numeric column would split them while a cut between two values of a categorical column
    keeps every combination of values whole. The cut goes between two values of the most spread
    categorical column (mean LCA term over pairs of its rows) that leaves at least ``min_rows``
    rows and 1/64 of the part on each side, values in depth-first order along the hierarchy, at the boundary whose
    two values meet highest (a subtree kept whole), then nearest the median. A part whose
    categorical columns allow no such cut (one dominant combination) is halved (floor and ceil)
    at the median of its numeric column of largest variance, ties to the lower row index (in
    row order when there is no numeric column). Every part of a cut file has at least
    ``min(min_rows, part_rows // 2)`` rows. ``numeric`` and ``categorical`` are as in
    :func:`joint_labels`.

    Parameters
    ----------
    numeric : array_like, shape (n, p)
        Standardized numeric quasi-identifiers.
    categorical : sequence of (codes0, hierarchy)
        Level-0 codes and hierarchy per categorical quasi-identifier.
    part_rows : int
        The most rows a part may have (at least 2).
    min_rows : int, optional
        The fewest rows a categorical cut may leave on a side; default ``part_rows // 16``
        (at least 1). Smaller allows cuts at rarer values, which kept the loss lowest on Adult.

    Returns
    -------
    list of numpy.ndarray
        The parts' row indices; together they hold every row once.
    """
    if isinstance(part_rows, bool) or not isinstance(part_rows, (int, np.integer)) or part_rows < 2:
        raise ParameterError(f"part_rows must be an integer >= 2; got {part_rows!r}")
    X = np.asarray(numeric, dtype=np.float64)
    n = X.shape[0]
    # per categorical column: each row's value as its depth-first rank, each rank's ancestors
    # at every level (ranks x depth) and the divisor of its LCA term
    columns = []
    for codes0, hierarchy in categorical:
        values, dense = _distinct(np.asarray(codes0, dtype=np.int64), hierarchy.labels[0].size)
        path = [hierarchy.code_map(lev)[values] for lev in range(hierarchy.depth)]
        order = np.lexsort(path)  # the last key (top level) sorts first: depth first
        rank = np.empty(values.size, np.int64)
        rank[order] = np.arange(values.size)
        ancestors = np.column_stack(path)[order].astype(np.int64)
        columns.append((rank[dense], ancestors, max(hierarchy.max_level, 1)))
    min_side = max(part_rows // 16, 1) if min_rows is None else int(min_rows)
    parts, stack = [], [np.arange(n)]
    while stack:
        rows = stack.pop()
        if rows.size <= part_rows:
            parts.append(rows)
            continue
        # a side keeps 1/64 of the part too, so no run of cuts peels a few rows at a time:
        # at most log(n / part_rows) / log(64 / 63) levels of cuts, each O(n)
        cut = _categorical_cut(columns, rows, max(min_side, rows.size // 64))
        if cut is None:
            # one combination of categorical values (or none cuttable): the most spread numeric
            # column at its median; no numeric column: halves in row order
            j = int(np.argmax(X[rows].var(axis=0))) if X.shape[1] else -1
            order = rows[np.argsort(X[rows, j], kind="stable")] if j >= 0 else rows
            cut = (np.sort(order[: rows.size // 2]), np.sort(order[rows.size // 2:]))
        # the second side is pushed first so that the first side is cut (and listed) first
        stack.append(cut[1])
        stack.append(cut[0])
    return parts


def _mean_lca_term(ancestors, counts, top) -> float:
    """Mean of a column's LCA term over all ordered pairs of rows (a row with itself too), from
    its distinct values' ancestors (values x depth) and row counts: two values' LCA level counts
    the levels where their ancestors differ, so the mean is the sum over levels of the Gini
    impurity, over ``top``."""
    m = float(counts.sum())
    total = 0.0
    for lev in range(ancestors.shape[1]):
        share = np.bincount(ancestors[:, lev], weights=counts) / m
        total += 1.0 - float(share @ share)
    return total / top


def _categorical_cut(columns, rows, min_side):
    """The rows (ascending) cut between two values of one categorical column (depth-first
    order), both sides of at least ``min_side`` rows, or None. The column is the most spread
    one (mean LCA term over pairs of rows) that has such a cut; among its cuts, the one between
    values whose lowest common ancestor is highest (a subtree kept whole), then the one nearest
    the median. O(rows + values x depth) per column."""
    best, best_spread = None, -1.0
    for rank, ancestors, top in columns:
        r = rank[rows]
        counts = np.bincount(r, minlength=ancestors.shape[0])
        present = np.flatnonzero(counts)
        if present.size < 2:
            continue
        spread = _mean_lca_term(ancestors[present], counts[present].astype(np.float64), top)
        if spread <= best_spread:
            continue
        before = np.cumsum(counts[present])[:-1]  # rows below each boundary
        ok = (before >= min_side) & (rows.size - before >= min_side)
        if not ok.any():
            continue
        # two values meet at the level that counts the levels where their ancestors differ
        meet = (ancestors[present[:-1]] != ancestors[present[1:]]).sum(axis=1)
        candidates = np.flatnonzero(ok)
        score = np.lexsort((np.abs(before[candidates] - rows.size / 2), -meet[candidates]))
        left = r <= present[candidates[score[0]]]
        best, best_spread = (rows[left], rows[~left]), spread
    return best


def joint_labels(numeric, categorical: Sequence[tuple], k: int, *, refine: bool = False,
                 seeding: str = "mdav", random_state=None, max_seconds: float | None = None,
                 part_rows: int | None = PART_ROWS) -> np.ndarray:
    """Group id per row (int64, 0..G-1): groups of at least k rows (k..2k-1 when n >= k).

    ``numeric``: (n, p) float64 standardized numeric quasi-identifiers, no missing value (p may
    be 0). ``categorical``: ``(codes0, hierarchy)`` per categorical quasi-identifier, codes0 the
    rows' level-0 codes. With fewer than 2k rows all rows form group 0 (fewer than k rows: one
    group smaller than k, which the caller must suppress). ``refine`` adds the ONA*-style
    search, stopped after ``max_seconds`` (checked between batches of groups; seeding itself is
    not cut short). ``seeding``: "mdav" (P's and Q's groups are their k-1 nearest rows by d;
    MDAV itself on numeric columns alone) or "mdav-loss" (the groups grow one row at a time by
    the least loss growth; slower, lower loss). ``part_rows``: with more rows than this, the
    rows are first cut into parts of at most ``max(part_rows, 2k)`` rows, at least k each
    (:func:`joint_parts`, ``min_rows`` = max(part_rows // 16, k)), and each part is clustered on
    its own, group ids following the parts' order; ``None``
    clusters the whole file at once (time grows with the square of the rows). Deterministic:
    ``random_state`` has no effect; only a refinement cut short by ``max_seconds`` (one clock
    for all parts) depends on the machine's speed.
    """
    del random_state  # deterministic by design; accepted like the estimators' argument
    if seeding not in SEEDINGS:
        raise ParameterError(f"seeding must be one of {', '.join(map(repr, SEEDINGS))}; got {seeding!r}")
    if part_rows is not None and (isinstance(part_rows, bool) or not isinstance(part_rows, (int, np.integer))
                                  or part_rows < 2):
        raise ParameterError(f"part_rows must be an integer >= 2 or None; got {part_rows!r}")
    X, codes, T = _prepare(numeric, categorical, k)
    k = int(k)
    n = X.shape[0]
    if refine and n >= 2 * k and max_seconds is not None and max_seconds < 0:
        raise ParameterError(f"max_seconds must be >= 0; got {max_seconds!r}")
    # parts of at least k rows: numeric cuts halve more than 2k rows, categorical cuts leave k
    limit = None if part_rows is None else max(int(part_rows), 2 * k)
    if limit is None or n <= limit:
        return _cluster(X, codes, T, k, refine, seeding, None, max_seconds)
    # one clock for all parts, started before the first seeding
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    labels = np.empty(n, np.int64)
    offset = 0
    for rows in joint_parts(X, categorical, limit, max(limit // 16, k)):
        check_cancelled()
        local = _cluster(np.ascontiguousarray(X[rows]), np.ascontiguousarray(codes[rows]), T, k, refine,
                         seeding, deadline, None)
        labels[rows] = local + offset
        offset += int(local.max()) + 1
    return labels


def _cluster(X, codes, T, k, refine, seeding, deadline, max_seconds):
    """Seeding, then (``refine``) the ONA*-style search until no move helps or the deadline
    (``deadline``, or ``max_seconds`` after the seeding)."""
    from . import _joint_kernels as kern

    labels = kern.seed_labels(X, codes, T, k, seeding == "mdav-loss")
    n = labels.size
    if not refine or n < 2 * k:
        return labels
    if deadline is None and max_seconds is not None:
        deadline = time.monotonic() + max_seconds
    n_groups = int(labels.max()) + 1
    seed_loss = sum(kern.objective_parts(X, codes, T, labels, n_groups))
    work = labels.copy()
    # every group keeps >= k rows, so n // k slots hold all groups, the split-off ones too;
    # free = [count, slot, slot, ...]: slots of dissolved groups are reused by splits
    n_slots = max(n // k, n_groups)
    state = kern.init_state(X, codes, T, work, n_slots, 2 * k)
    members, size, sums, rep, lv = state
    free = np.zeros(n_slots + 1, dtype=np.int64)
    free[0] = n_slots - n_groups
    free[1:free[0] + 1] = np.arange(n_groups, n_slots)
    count = min(NEIGHBOUR_GROUPS, n_groups - 1)  # n_groups >= 2 here: n >= 2k
    stopped = False
    near = np.full((n_slots, count), -1, dtype=np.int64)
    while not stopped:
        changes = 0
        for start in range(0, n_slots, _CHUNK):
            check_cancelled()  # between batches of groups, as the deadline
            if deadline is not None and time.monotonic() >= deadline:
                stopped = True
                break
            kern.neighbour_groups(X, codes, T, size, sums, rep, lv, near, start, min(start + _CHUNK, n_slots))
        for phase in (kern.dissolve_pass, kern.reassign_pass):
            if stopped:
                break
            for start in range(0, n_slots, _CHUNK):
                check_cancelled()
                if deadline is not None and time.monotonic() >= deadline:
                    stopped = True
                    break
                changes += phase(X, codes, T, members, size, sums, rep, lv, work, near, k, free,
                                 start, min(start + _CHUNK, n_slots), EPSILON)
        if changes == 0:
            break
        kern.recompute_all(X, codes, T, members, size, sums, rep, lv)  # no drift in the sums
    alive = size > 0
    new_id = np.cumsum(alive) - 1
    refined = new_id[work].astype(np.int64)
    if sum(kern.objective_parts(X, codes, T, refined, int(alive.sum()))) > seed_loss:
        return labels
    return refined
