"""MDAV+ and V-MDAV with the groups of ``_greedy_kernels``, exactly, through the rows' grid.

The scan kernels pass over all unassigned rows for the origin's k - 1 nearest and, in V-MDAV's
extension, once more per member (the row closest to the group) and per candidate (its nearest
unassigned neighbour). Here each is a nearest-rows query on the grid of :mod:`._grid`. The row
closest to the group is the least (distance, row) pair over the members' own nearest rows, which
is the scan's choice (lowest row on ties); a member's nearest row is kept until that row is
taken. Leftovers (fewer than k) join the nearest centroid as in the scan kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._fixed_center import add_to_group, extension_accepts, next_origin, visiting_order
from ._greedy_kernels import _leftovers_to_nearest_centroid, mdav_plus_labels, vmdav_labels
from ._grid import fresh_rows, nearest_rows, remove_row, row_grid
from ._mdav_star_fast import _FAST_MIN_ROWS, FAST_MAX_COLUMNS

INF = np.inf


def _prepared(X: np.ndarray):
    X = np.ascontiguousarray(X, dtype=np.float64)
    return X, row_grid(X)[:-1]


def mdav_plus_best_labels(X: np.ndarray, k: int) -> np.ndarray:
    if X.shape[1] <= FAST_MAX_COLUMNS and X.shape[0] >= _FAST_MIN_ROWS:
        return mdav_plus_fast_labels(X, k)
    return mdav_plus_labels(X, k)


def vmdav_best_labels(X: np.ndarray, k: int, gamma: float) -> np.ndarray:
    if X.shape[1] <= FAST_MAX_COLUMNS and X.shape[0] >= _FAST_MIN_ROWS:
        return vmdav_fast_labels(X, k, gamma)
    return vmdav_labels(X, k, gamma)


def mdav_plus_fast_labels(X: np.ndarray, k: int) -> np.ndarray:
    """Group id per row, equal to ``mdav_plus_labels(X, k)``."""
    if X.shape[0] < 2 * k:
        return np.zeros(X.shape[0], np.int64)
    X, grid = _prepared(X)
    return _fixed_center(X, k, 0.0, False, *grid)


def vmdav_fast_labels(X: np.ndarray, k: int, gamma: float) -> np.ndarray:
    """Group id per row, equal to ``vmdav_labels(X, k, gamma)``."""
    if X.shape[0] < 2 * k:
        return np.zeros(X.shape[0], np.int64)
    X, grid = _prepared(X)
    return _fixed_center(X, k, float(gamma), True, *grid)


@njit(cache=True)
def _fixed_center(X, k, gamma, extend, cuts, offsets, sizes, point_rows, point_start, point_cell, cell_start,
                  point_of_row):
    n, m = X.shape
    labels = np.full(n, -1, np.int64)
    order = visiting_order(X)
    alive, point_head, point_alive, cell_alive, ring = fresh_rows(n, point_start, point_cell, cell_start)
    max_groups = n // k + 1
    sums = np.zeros((max_groups, m))
    group_sizes = np.zeros(max_groups, np.int64)
    members = np.empty(2 * k, np.int64)
    near_d = np.empty(max(k - 1, 1))
    one = np.empty(1, np.int64)
    one_d = np.empty(1)
    nn_row = np.empty(2 * k, np.int64)  # each member's nearest alive row (-1: none) and distance
    nn_d = np.empty(2 * k)
    n_live = n
    g = 0
    pos = 0
    while n_live >= k:
        pos, r = next_origin(order, pos, labels)
        members[0] = r
        nearest_rows(X, X[r], k - 1, r, -1, alive, point_rows, point_start, point_head, point_alive, cell_start,
                     cell_alive, cuts, offsets, sizes, ring, members[1:k], near_d)
        for t in range(k):
            add_to_group(X, members[t], g, labels, sums, group_sizes)
            remove_row(members[t], alive, point_of_row, point_rows, point_start, point_head, point_alive,
                       point_cell, cell_alive)
            nn_row[t] = -1
        n_live -= k
        size = k
        # V-MDAV's extension: the unassigned row closest to the group joins while it is closer to
        # the group than gamma times its distance to its own nearest unassigned neighbour.
        while extend and size < 2 * k - 1 and n_live > 0:
            e = -1
            d_in = 0.0
            for t in range(size):
                if nn_row[t] < 0 or not alive[nn_row[t]]:
                    found = nearest_rows(X, X[members[t]], 1, -1, -1, alive, point_rows, point_start, point_head,
                                         point_alive, cell_start, cell_alive, cuts, offsets, sizes, ring, one,
                                         one_d)
                    nn_row[t] = one[0] if found > 0 else -1
                    nn_d[t] = one_d[0]
                if nn_row[t] >= 0 and (e < 0 or nn_d[t] < d_in or (nn_d[t] == d_in and nn_row[t] < e)):
                    e = nn_row[t]
                    d_in = nn_d[t]
            found = nearest_rows(X, X[e], 1, e, -1, alive, point_rows, point_start, point_head, point_alive,
                                 cell_start, cell_alive, cuts, offsets, sizes, ring, one, one_d)
            d_out = one_d[0] if found > 0 else INF
            if not extension_accepts(d_in, d_out, gamma):
                break
            add_to_group(X, e, g, labels, sums, group_sizes)
            remove_row(e, alive, point_of_row, point_rows, point_start, point_head, point_alive, point_cell,
                       cell_alive)
            members[size] = e
            nn_row[size] = one[0] if found > 0 else -1  # e's nearest other row, still alive
            nn_d[size] = d_out
            n_live -= 1
            size += 1
        g += 1
    _leftovers_to_nearest_centroid(X, labels, sums, group_sizes, g)
    return labels
