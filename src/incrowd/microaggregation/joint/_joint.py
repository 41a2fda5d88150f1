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
        values, dense = np.unique(codes0, return_inverse=True)
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


def joint_labels(numeric, categorical: Sequence[tuple], k: int, *, refine: bool = False,
                 seeding: str = "mdav", random_state=None, max_seconds: float | None = None) -> np.ndarray:
    """Group id per row (int64, 0..G-1): groups of at least k rows (k..2k-1 when n >= k).

    ``numeric``: (n, p) float64 standardized numeric quasi-identifiers, no missing value (p may
    be 0). ``categorical``: ``(codes0, hierarchy)`` per categorical quasi-identifier, codes0 the
    rows' level-0 codes. With fewer than 2k rows all rows form group 0 (fewer than k rows: one
    group smaller than k, which the caller must suppress). ``refine`` adds the ONA*-style
    search, stopped after ``max_seconds`` (checked between batches of groups; seeding itself is
    not cut short). ``seeding``: "mdav" (P's and Q's groups are their k-1 nearest rows by d;
    MDAV itself on numeric columns alone) or "mdav-loss" (the groups grow one row at a time by
    the least loss growth; slower, lower loss). Deterministic: ``random_state`` has no effect;
    only a refinement cut short by ``max_seconds`` depends on the machine's speed.
    """
    from . import _joint_kernels as kern

    del random_state  # deterministic by design; accepted like the estimators' argument
    if seeding not in SEEDINGS:
        raise ParameterError(f"seeding must be one of {', '.join(map(repr, SEEDINGS))}; got {seeding!r}")
    X, codes, T = _prepare(numeric, categorical, k)
    k = int(k)
    labels = kern.seed_labels(X, codes, T, k, seeding == "mdav-loss")
    n = labels.size
    if not refine or n < 2 * k:
        return labels
    if max_seconds is not None and max_seconds < 0:
        raise ParameterError(f"max_seconds must be >= 0; got {max_seconds!r}")
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
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
