"""A quantile grid over up to three columns, for exact nearest-neighbour queries in few dimensions.

The cells of dimension j are cut at data values (quantiles), so a cell's slab is
``bounds[c - 1] <= x < bounds[c]`` with exact comparisons, dense regions get narrow cells and
tails wide ones. A query visits the cells in Chebyshev rings around the query's cell; after ring
r every unvisited point lies outside the block of rings 0..r, so its distance is at least the
distance from the query to the block's nearest face (computed over the grid's columns only, so a
lower bound in any number of columns). Queries stop when that bound exceeds the current answer
with a relative slack far above rounding, so answers are those of a full scan, ties included.

Two indexes sit on a grid: rows (:func:`row_index`: distinct points, their rows in row order,
alive counts, so copies of a row cost one distance) and group centroids (linked lists per cell,
moved when a group's centroid moves).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import row_sq_dist

GRID_DIMS = 3
# lower bounds are shrunk by this relative amount: far above the rounding of a sum of a few
# squares (about 1e-15), far below any gap that would change which cells are visited
_SLACK = 1e-9


def grid_bounds(X: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cut points per grid column (flat), their offsets, and the cells per dimension.

    About ``cells`` cells in all, cut at quantiles of each of the first ``GRID_DIMS`` columns;
    repeated cut values collapse, so a column with few distinct values gets few slabs.
    """
    n, m = X.shape
    dims = min(m, GRID_DIMS)
    per_dim = max(1, int(round(max(cells, 1) ** (1.0 / dims))))
    cuts = []
    for j in range(GRID_DIMS):
        if j >= dims or per_dim == 1:
            cuts.append(np.empty(0))
            continue
        column = np.sort(X[:, j])
        at = column[(np.arange(1, per_dim) * n) // per_dim]
        cut = np.unique(at)
        cuts.append(cut[cut > column[0]])  # a cut at the minimum would leave an empty first slab
    offsets = np.zeros(GRID_DIMS + 1, np.int64)
    for j in range(GRID_DIMS):
        offsets[j + 1] = offsets[j] + cuts[j].size
    flat = np.concatenate(cuts) if offsets[-1] else np.empty(0)
    sizes = np.array([c.size + 1 for c in cuts], np.int64)
    return flat.astype(np.float64), offsets, sizes


@njit(cache=True)
def cell_of(q, cuts, offsets, sizes, out):
    """Cell coordinates of point q into out (length GRID_DIMS); returns the linear cell id."""
    lin = 0
    for j in range(GRID_DIMS):
        c = 0
        if sizes[j] > 1:
            c = np.searchsorted(cuts[offsets[j]:offsets[j + 1]], q[j], side="right")
        out[j] = c
        lin = lin * sizes[j] + c
    return lin


@njit(cache=True)
def ring_cells(center, r, sizes, out):
    """Linear ids of the cells at Chebyshev distance exactly r from ``center``, into out;
    returns how many (cells beyond the grid are left out)."""
    count = 0
    lo0 = max(center[0] - r, 0)
    hi0 = min(center[0] + r, sizes[0] - 1)
    lo1 = max(center[1] - r, 0)
    hi1 = min(center[1] + r, sizes[1] - 1)
    lo2 = max(center[2] - r, 0)
    hi2 = min(center[2] + r, sizes[2] - 1)
    for c0 in range(lo0, hi0 + 1):
        edge0 = abs(c0 - center[0]) == r
        for c1 in range(lo1, hi1 + 1):
            edge1 = edge0 or abs(c1 - center[1]) == r
            base = (c0 * sizes[1] + c1) * sizes[2]
            if edge1:
                for c2 in range(lo2, hi2 + 1):
                    out[count] = base + c2
                    count += 1
            else:
                if center[2] - r >= 0:
                    out[count] = base + center[2] - r
                    count += 1
                if r > 0 and center[2] + r < sizes[2]:
                    out[count] = base + center[2] + r
                    count += 1
    return count


@njit(cache=True)
def beyond_ring(q, center, r, cuts, offsets, sizes):
    """A lower bound on the squared distance (over the grid's columns) from q to any point in a
    cell outside rings 0..r, shrunk by the slack; -1.0 when no cell lies outside."""
    best = np.inf
    for j in range(GRID_DIMS):
        lo = center[j] - r
        hi = center[j] + r
        if lo > 0:
            best = min(best, q[j] - cuts[offsets[j] + lo - 1])
        if hi < sizes[j] - 1:
            best = min(best, cuts[offsets[j] + hi] - q[j])
    if best == np.inf:
        return -1.0
    best = max(best, 0.0)
    return best * best * (1.0 - _SLACK)


# -- rows ---------------------------------------------------------------------------------------


def row_index(X: np.ndarray, cuts, offsets, sizes):
    """The rows grouped into distinct points, points grouped by cell.

    Returns (point_rows, point_start, point_cell, cell_start, point_of_row): rows of point u are
    ``point_rows[point_start[u]:point_start[u + 1]]`` in increasing row order; points of cell c
    are ``cell_start[c]:cell_start[c + 1]``.
    """
    n, m = X.shape
    cells = _cells_of_rows(X, cuts, offsets, sizes)
    keys = [X[:, j] for j in range(m - 1, -1, -1)] + [cells]
    order = np.lexsort(keys)  # stable: equal rows keep row order
    Xs = X[order]
    new_point = np.ones(n, np.bool_)
    if n > 1:
        new_point[1:] = (cells[order][1:] != cells[order][:-1]) | np.any(Xs[1:] != Xs[:-1], axis=1)
    starts = np.flatnonzero(new_point)
    point_start = np.append(starts, n).astype(np.int64)
    point_cell = cells[order][starts].astype(np.int64)
    n_cells = int(np.prod(sizes))
    cell_start = np.searchsorted(point_cell, np.arange(n_cells + 1), side="left").astype(np.int64)
    point_of_row = np.empty(n, np.int64)
    point_of_row[order] = np.cumsum(new_point) - 1
    return order.astype(np.int64), point_start, point_cell, cell_start, point_of_row


def row_grid(X: np.ndarray, rows_per_cell: int = 4):
    """A quantile grid with about ``rows_per_cell`` distinct rows per cell, and the rows' index
    on it: (cuts, offsets, sizes, point_rows, point_start, point_cell, cell_start, point_of_row,
    distinct rows)."""
    distinct = len(np.unique(X, axis=0)) if len(X) <= 5_000_000 else len(X)
    cuts, offsets, sizes = grid_bounds(X, max(distinct // rows_per_cell, 1))
    return (cuts, offsets, sizes, *row_index(X, cuts, offsets, sizes), distinct)


@njit(cache=True)
def alive_counts(point_start, point_cell, n_cells):
    """Every row alive: the first row of each point, rows per point, rows per cell."""
    n_points = point_start.shape[0] - 1
    point_head = point_start[:-1].copy()
    point_alive = np.diff(point_start)
    cell_alive = np.zeros(n_cells, np.int64)
    for u in range(n_points):
        cell_alive[point_cell[u]] += point_alive[u]
    return point_head, point_alive, cell_alive


@njit(cache=True)
def fresh_rows(n, point_start, point_cell, cell_start):
    """Every row alive: (alive by row, point_head, point_alive, cell_alive, a ring buffer)."""
    n_cells = cell_start.shape[0] - 1
    point_head, point_alive, cell_alive = alive_counts(point_start, point_cell, n_cells)
    return np.ones(n, np.bool_), point_head, point_alive, cell_alive, np.empty(n_cells, np.int64)


@njit(cache=True)
def _cells_of_rows(X, cuts, offsets, sizes):
    n = X.shape[0]
    out = np.empty(n, np.int64)
    c = np.empty(GRID_DIMS, np.int64)
    q = np.zeros(GRID_DIMS)
    for i in range(n):
        for j in range(min(X.shape[1], GRID_DIMS)):
            q[j] = X[i, j]
        out[i] = cell_of(q, cuts, offsets, sizes, c)
    return out


@njit(cache=True)
def _insert_pair(buf_d, buf_r, filled, size, d, row):
    """Keep the ``size`` smallest (d, row) pairs, ascending; returns the new fill, or -1 when the
    pair did not enter (then no pair with the same d and a larger row enters either)."""
    if filled == size and (d > buf_d[size - 1] or (d == buf_d[size - 1] and row > buf_r[size - 1])):
        return -1
    pos = filled if filled < size else size - 1
    while pos > 0 and (buf_d[pos - 1] > d or (buf_d[pos - 1] == d and buf_r[pos - 1] > row)):
        buf_d[pos] = buf_d[pos - 1]
        buf_r[pos] = buf_r[pos - 1]
        pos -= 1
    buf_d[pos] = d
    buf_r[pos] = row
    return filled + 1 if filled < size else filled


@njit(cache=True)
def nearest_rows(X, q, count, skip_a, skip_b, alive, point_rows, point_start, point_head, point_alive,
                 cell_start, cell_alive, cuts, offsets, sizes, ring_buf, out, out_d):
    """The ``count`` alive rows nearest to q (rows skip_a, skip_b left out), ascending by
    (squared distance, row) as a full scan gives them; returns how many were found."""
    if count <= 0:
        return 0
    center = np.empty(GRID_DIMS, np.int64)
    qg = np.zeros(GRID_DIMS)
    for j in range(min(X.shape[1], GRID_DIMS)):
        qg[j] = q[j]
    cell_of(qg, cuts, offsets, sizes, center)
    filled = 0
    r = 0
    while True:
        n_ring = ring_cells(center, r, sizes, ring_buf)
        for t in range(n_ring):
            c = ring_buf[t]
            if cell_alive[c] == 0:
                continue
            for u in range(cell_start[c], cell_start[c + 1]):
                if point_alive[u] == 0:
                    continue
                d = row_sq_dist(X, point_rows[point_head[u]], q)
                if filled == count and d > out_d[count - 1]:
                    continue
                for p in range(point_head[u], point_start[u + 1]):
                    row = point_rows[p]
                    if not alive[row] or row == skip_a or row == skip_b:
                        continue
                    got = _insert_pair(out_d, out, filled, count, d, row)
                    if got < 0:
                        break  # copies further on have larger row ids
                    filled = got
        bound = beyond_ring(qg, center, r, cuts, offsets, sizes)
        if bound < 0.0 or (filled == count and bound > out_d[count - 1]):
            return filled
        r += 1


@njit(cache=True)
def remove_row(row, alive, point_of_row, point_rows, point_start, point_head, point_alive, point_cell,
               cell_alive):
    alive[row] = False
    u = point_of_row[row]
    point_alive[u] -= 1
    cell_alive[point_cell[u]] -= 1
    while point_head[u] < point_start[u + 1] and not alive[point_rows[point_head[u]]]:
        point_head[u] += 1


# -- group centroids ----------------------------------------------------------------------------


@njit(cache=True)
def centroid_cell(sums, sizes_g, g, cuts, offsets, sizes, m):
    q = np.zeros(GRID_DIMS)
    c = np.empty(GRID_DIMS, np.int64)
    for j in range(min(m, GRID_DIMS)):
        q[j] = sums[g, j] / sizes_g[g]
    return cell_of(q, cuts, offsets, sizes, c)


@njit(cache=True)
def link(g, cell, head, nxt, prv, where):
    where[g] = cell
    prv[g] = -1
    nxt[g] = head[cell]
    if head[cell] >= 0:
        prv[head[cell]] = g
    head[cell] = g


@njit(cache=True)
def unlink(g, head, nxt, prv, where):
    cell = where[g]
    if prv[g] >= 0:
        nxt[prv[g]] = nxt[g]
    else:
        head[cell] = nxt[g]
    if nxt[g] >= 0:
        prv[nxt[g]] = prv[g]


@njit(cache=True)
def least_growth(X, row, sums, sizes_g, min_size, head, nxt, cuts, offsets, sizes, ring_buf):
    """clos(x) of MDAV*: the group whose SSE grows least, |G| / (|G| + 1) * ||x - c_G||^2, when
    X[row] joins it (lowest group id on ties), as a scan over all groups finds it; returns
    (group, growth). Every group has at least ``min_size`` rows, which bounds the factor."""
    m = X.shape[1]
    center = np.empty(GRID_DIMS, np.int64)
    qg = np.zeros(GRID_DIMS)
    for j in range(min(m, GRID_DIMS)):
        qg[j] = X[row, j]
    cell_of(qg, cuts, offsets, sizes, center)
    factor = min_size / (min_size + 1.0)
    best = -1
    best_d = 0.0
    r = 0
    while True:
        n_ring = ring_cells(center, r, sizes, ring_buf)
        for t in range(n_ring):
            g = head[ring_buf[t]]
            while g >= 0:
                dist = 0.0
                for j in range(m):
                    diff = X[row, j] - sums[g, j] / sizes_g[g]
                    dist += diff * diff
                growth = sizes_g[g] / (sizes_g[g] + 1.0) * dist
                if best < 0 or growth < best_d or (growth == best_d and g < best):
                    best = g
                    best_d = growth
                g = nxt[g]
        bound = beyond_ring(qg, center, r, cuts, offsets, sizes)
        if bound < 0.0 or (best >= 0 and factor * bound > best_d):
            return best, best_d
        r += 1
