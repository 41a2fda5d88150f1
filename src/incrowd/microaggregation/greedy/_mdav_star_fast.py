"""MDAV* with the groups of ``_greedy_kernels.mdav_star_labels``, exactly, without full scans.

The scan kernel spends each step on passes over all unassigned rows (the k nearest to x and to
its nearest neighbour nu) and over all groups (clos(x)). Here both are grid queries
(:mod:`._grid`): the rows' grid answers "k nearest alive rows" and the centroids' grid answers
clos(x), each as the scan would (same distances, ties by the lowest row or group id). In a few
columns a query touches a handful of cells, so a step costs about the same at any n; copies of
a row (Adult has 9,953 distinct triples in 48,842 rows) share one distance. The grid spans at
most three columns; with more, queries stay exact but visit more cells, so ``MDAVStar`` uses this
kernel only up to ``GRID_MAX_COLUMNS`` columns; from five columns on the screened kernel
(``_mdav_star_screened``) is faster (the measurements are in the docs' performance studies).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from .._adaptive import new_tuner, next_fit
from ..mdav._mdav_fast import PARALLEL_FROM
from ..mdav._screen import PARALLEL_LOCK
from ._fixed_center import add_to_group, next_origin, visiting_order
from ._greedy_kernels import mdav_star_labels
from ._grid import (
    centroid_cell,
    fresh_rows,
    grid_bounds,
    least_growth,
    link,
    nearest_rows,
    remove_row,
    row_grid,
    unlink,
)
from ._mdav_star_screened import _sse_rows, mdav_star_screened_labels

FAST_MAX_COLUMNS = 5  # MDAV+ and V-MDAV (``_vmdav_fast``) take their grid kernels up to here
GRID_MAX_COLUMNS = 4  # MDAV* takes the grid up to here, the screened kernel beyond
_FAST_MIN_ROWS = 2_000  # below this the index costs more than the scans
# The screened kernel beats the scan from about 1,000 rows; below, its index costs more than it
# saves.
_SCREEN_MIN_ROWS = 1_000
# int8 codes from here (as ``mdav._mdav_large.NARROW_FROM``, for MDAV*'s many more passes): they halve the
# bytes a pass streams, which pays once the codes leave the cache; a batched pass reads the
# codes once for all its queries, which narrows the gain. Kept from 64,000 rows until a batched
# comparison at a million rows says otherwise.
NARROW_FROM = 64_000
NARROW_MAX_RANGE = 16.0
# one per process, used under PARALLEL_LOCK (as ``mdav._mdav_large._TUNER``): whether the threads pay on this
# machine now carries over from one fit to the next
_TUNER = new_tuner()
_ROWS_PER_CELL = 4
_GROUPS_PER_CELL = 4


def mdav_star_best_labels(X: np.ndarray, k: int, threads: bool = True) -> np.ndarray:
    """``mdav_star_labels`` through whichever kernel is faster for the shape of X: the grid in
    up to ``GRID_MAX_COLUMNS`` columns, the screened kernel beyond, the scan on small inputs
    (and on values of 1e15 or more, beyond the screened kernel's error bounds). ``threads``:
    False keeps the work on the calling thread (fits run side by side on the cores)."""
    n, m = X.shape
    if m <= GRID_MAX_COLUMNS and n >= _FAST_MIN_ROWS:
        return mdav_star_fast_labels(X, k)
    if n >= _SCREEN_MIN_ROWS and np.abs(X).max() < 1e15:
        narrow = n >= NARROW_FROM and bool(np.ptp(X, axis=0).max() <= NARROW_MAX_RANGE)
        if (not threads or n < PARALLEL_FROM or numba.get_num_threads() < 2
                or not PARALLEL_LOCK.acquire(blocking=False)):
            return mdav_star_screened_labels(X, k, narrow=narrow)[0]
        try:
            return mdav_star_screened_labels(X, k, PARALLEL_FROM, numba.get_num_threads(), narrow,
                                             next_fit(_TUNER))[0]
        finally:
            PARALLEL_LOCK.release()
    return mdav_star_labels(X, k)


def mdav_star_fast_labels(X: np.ndarray, k: int) -> np.ndarray:
    """Group id per row, equal to ``mdav_star_labels(X, k)``."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2 * k:
        return np.zeros(n, np.int64)
    (row_cuts, row_offsets, row_sizes, point_rows, point_start, point_cell, cell_start, point_of_row,
     distinct) = row_grid(X, _ROWS_PER_CELL)
    g_cuts, g_offsets, g_sizes = grid_bounds(X, max(min(distinct, n // k) // _GROUPS_PER_CELL, 1))
    return _mdav_star(X, k, row_cuts, row_offsets, row_sizes, point_rows, point_start, point_cell,
                      cell_start, point_of_row, g_cuts, g_offsets, g_sizes)


@njit(cache=True, nogil=True)
def _mdav_star(X, k, row_cuts, row_offsets, row_sizes, point_rows, point_start, point_cell, cell_start,
               point_of_row, g_cuts, g_offsets, g_sizes):
    n, m = X.shape
    labels = np.full(n, -1, np.int64)
    order = visiting_order(X)
    alive, point_head, point_alive, cell_alive, row_ring = fresh_rows(n, point_start, point_cell, cell_start)
    n_gcells = 1
    for j in range(g_sizes.shape[0]):
        n_gcells *= g_sizes[j]
    g_ring = np.empty(n_gcells, np.int64)
    g_head = np.full(n_gcells, -1, np.int64)
    max_groups = n // k + 1
    g_next = np.empty(max_groups, np.int64)
    g_prev = np.empty(max_groups, np.int64)
    g_where = np.empty(max_groups, np.int64)
    sums = np.zeros((max_groups, m))
    sizes = np.zeros(max_groups, np.int64)
    members = np.empty(k, np.int64)
    members_nu = np.empty(k, np.int64)
    near_d = np.empty(k)
    n_live = n
    g = 0
    pos = 0
    while n_live >= k:
        pos, r = next_origin(order, pos, labels)
        members[0] = r
        nearest_rows(X, X[r], k - 1, r, -1, alive, point_rows, point_start, point_head, point_alive,
                     cell_start, cell_alive, row_cuts, row_offsets, row_sizes, row_ring, members[1:], near_d)
        cost_new = _sse_rows(X, members, k) / k
        extend = False
        clos = -1
        if g > 0 and n_live - 1 >= k:
            nu = members[1]
            members_nu[0] = nu
            nearest_rows(X, X[nu], k - 1, r, nu, alive, point_rows, point_start, point_head, point_alive,
                         cell_start, cell_alive, row_cuts, row_offsets, row_sizes, row_ring, members_nu[1:],
                         near_d)
            cost_nu = _sse_rows(X, members_nu, k)
            clos, growth = least_growth(X, r, sums, sizes, k, g_head, g_next, g_cuts, g_offsets, g_sizes, g_ring)
            extend = cost_new > (growth + cost_nu) / (k + 1)
        if extend:
            unlink(clos, g_head, g_next, g_prev, g_where)
            add_to_group(X, r, clos, labels, sums, sizes)
            link(clos, centroid_cell(sums, sizes, clos, g_cuts, g_offsets, g_sizes, m), g_head, g_next, g_prev,
                 g_where)
            remove_row(r, alive, point_of_row, point_rows, point_start, point_head, point_alive, point_cell,
                       cell_alive)
            n_live -= 1
        else:
            for t in range(k):
                add_to_group(X, members[t], g, labels, sums, sizes)
                remove_row(members[t], alive, point_of_row, point_rows, point_start, point_head, point_alive,
                           point_cell, cell_alive)
            link(g, centroid_cell(sums, sizes, g, g_cuts, g_offsets, g_sizes, m), g_head, g_next, g_prev,
                 g_where)
            g += 1
            n_live -= k
    # Leftovers each join clos(x), judged one after another as the groups grow.
    for i in range(n):
        if labels[i] < 0:
            c, _ = least_growth(X, i, sums, sizes, k, g_head, g_next, g_cuts, g_offsets, g_sizes, g_ring)
            unlink(c, g_head, g_next, g_prev, g_where)
            add_to_group(X, i, c, labels, sums, sizes)
            link(c, centroid_cell(sums, sizes, c, g_cuts, g_offsets, g_sizes, m), g_head, g_next, g_prev, g_where)
    return labels
