"""Numba kernels of the increment strategies: nearest-centroid adjoining and cell splitting.

Every group is kept as running per-column sums and sums of squares over standardized values,
so a centroid update costs O(m) (the incremental thesis, section 3.2.6: the new centroid is a convex
combination of the old one and the new row). Member lists are linked lists over the rows of
the combined point array, so a split touches only the members of the split cell.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..microaggregation import heap_sort_range, mdav_labels_jit

#: split modes of :func:`adjoin`
NO_SPLIT, SPLIT_MID, SPLIT_END = 0, 1, 2


@njit(cache=True)
def _weighted_sq_dist(z, centroids, q, sizes, inertial, best):
    """w_q * ||z - c_q||^2, summed over columns in order; inf once it exceeds ``best``."""
    w = sizes[q] / (sizes[q] + 1.0) if inertial else 1.0
    d = 0.0
    for j in range(z.shape[0]):
        diff = z[j] - centroids[q, j]
        d += diff * diff
        if w * d > best:  # partial sums only grow; equality must finish (a tie may win)
            return np.inf
    return w * d


@njit(cache=True)
def _nearest_group(z, zn, approx, c0n, drift, n_block_groups, centroids, sizes, n_groups, inertial):
    """The group minimizing w_q * ||z - c_q||^2 (w_q = n_q/(n_q+1) when inertial, else 1).

    Exact: the value of every candidate is the plain column-order sum, and ties go to the lowest
    group id, so the result is that of a scan over all groups. Speed: ``approx[q]`` = z . C0_q
    from one matrix product per block of rows, where C0 are the centroids at the block's start
    and ``drift[q]`` bounds how far centroid q has moved since; ||z - c_q|| >= ||z - C0_q|| -
    drift[q] rules most groups out without touching their coordinates. Groups created during
    the block (ids >= n_block_groups) are always evaluated.
    """
    # a first candidate: the nearest block-start centroid by the cheap estimate
    guess = 0
    guess_v = np.inf
    for q in range(n_block_groups):
        a = c0n[q] - 2.0 * approx[q]
        if a < guess_v:
            guess_v = a
            guess = q
    best = np.inf
    best_q = -1
    if n_block_groups > 0:
        best = _weighted_sq_dist(z, centroids, guess, sizes, inertial, np.inf)
        best_q = guess
    for q in range(n_block_groups, n_groups):
        v = _weighted_sq_dist(z, centroids, q, sizes, inertial, best)
        if v < best or (v == best and q < best_q):
            best = v
            best_q = q
    for q in range(n_block_groups):
        if q == guess:
            continue
        # lower bound of ||z - c_q||, with a margin for the rounding of the matrix product
        a = zn + c0n[q] - 2.0 * approx[q]
        a -= 1e-9 * (zn + c0n[q]) + 1e-300
        if a > 0.0:
            w = sizes[q] / (sizes[q] + 1.0) if inertial else 1.0
            if drift[q] == 0.0:  # untouched in this block: no square root needed
                if w * a > best * (1.0 + 1e-9):
                    continue
            else:
                lb = np.sqrt(a) - drift[q]
                if lb > 0.0 and w * lb * lb > best * (1.0 + 1e-9):
                    continue
        v = _weighted_sq_dist(z, centroids, q, sizes, inertial, best)
        if v < best or (v == best and q < best_q):
            best = v
            best_q = q
    return best_q


@njit(cache=True)
def _drift(centroids, C0, q):
    """||c_q - C0_q|| rounded up a little, so it stays an upper bound."""
    s = 0.0
    for j in range(C0.shape[1]):
        diff = centroids[q, j] - C0[q, j]
        s += diff * diff
    return np.sqrt(s) * (1.0 + 1e-9) + 1e-300


@njit(cache=True)
def _point(P_old, P_new, first_new, r):
    """Row r of the combined data: stored rows first, then the increment's."""
    if r < first_new:
        return P_old[r]
    return P_new[r - first_new]


@njit(cache=True)
def _split_group(P_old, P_new, first_new, q, k, n_groups, head, nxt, labels, sums, sumsq, sizes,
                 centroids):
    """Split group q by MDAV on its members; the first part keeps id q. Returns n_groups."""
    count = sizes[q]
    members = np.empty(count, np.int64)
    r = head[q]
    slot = 0
    while r >= 0:
        members[slot] = r
        slot += 1
        r = nxt[r]
    # MDAV's result depends on the row order it is given; ascending row numbers make the split
    # independent of the order in which members were linked.
    heap_sort_range(members, 0, count)
    m = P_new.shape[1]
    block = np.empty((count, m))
    # element by element: a row assignment would compile numba's shape-mismatch error path
    for slot in range(count):
        r = members[slot]
        if r < first_new:
            for j in range(m):
                block[slot, j] = P_old[r, j]
        else:
            for j in range(m):
                block[slot, j] = P_new[r - first_new, j]
    sub = mdav_labels_jit(block, k)
    n_parts = sub.max() + 1
    ids = np.empty(n_parts, np.int64)
    ids[0] = q
    for p in range(1, n_parts):
        ids[p] = n_groups
        head[n_groups] = -1
        n_groups += 1
    head[q] = -1
    for p in range(n_parts):
        g = ids[p]
        sizes[g] = 0
        for j in range(m):
            sums[g, j] = 0.0
            sumsq[g, j] = 0.0
    for t in range(count):  # ascending row order, so the sums do not depend on link order
        r = members[t]
        g = ids[sub[t]]
        labels[r] = g
        nxt[r] = head[g]
        head[g] = r
        sizes[g] += 1
        for j in range(m):
            v = block[t, j]
            sums[g, j] += v
            sumsq[g, j] += v * v
    for p in range(n_parts):
        g = ids[p]
        for j in range(m):
            centroids[g, j] = sums[g, j] / sizes[g]
    return n_groups


@njit(cache=True)
def link_members(labels, n_groups, n_rows_cap):
    """Linked member lists: ``head`` per group, ``nxt`` per row, -1 ends a list."""
    head = np.full(n_groups, -1, np.int64)
    nxt = np.full(n_rows_cap, -1, np.int64)
    for r in range(labels.shape[0]):
        g = labels[r]
        if g >= 0:
            nxt[r] = head[g]
            head[g] = r
    return head, nxt


@njit(cache=True)
def adjoin(P_old, P_new, labels, sums, sumsq, sizes, n_groups, k, inertial, split_mode):
    """Adjoin the rows of P_new one by one, in order, to their nearest group.

    Rows are numbered stored-first: row r < first_new = len(labels) - len(P_new) is stored
    row r (``P_old[r]``, needed only for splitting), row first_new + i is ``P_new[i]``.
    ``labels`` holds a group id for the stored rows and receives one for the new rows; the
    group arrays have room for every group that splitting can create. ``split_mode``:
    NO_SPLIT (plain nearest centroid), SPLIT_MID (split a group by MDAV as soon as it reaches
    2k rows) or SPLIT_END (once all rows are placed, split every group of >= 2k rows by MDAV).
    Returns the new number of groups and the number of splits.
    """
    m = P_new.shape[1]
    first_new = labels.shape[0] - P_new.shape[0]
    cap = sizes.shape[0]
    centroids = np.empty((cap, m))
    for q in range(n_groups):
        for j in range(m):
            centroids[q, j] = sums[q, j] / sizes[q]
    splitting = split_mode != NO_SPLIT
    if splitting:
        head, nxt = link_members(labels[:first_new], cap, labels.shape[0])
    else:
        head = np.full(1, -1, np.int64)
        nxt = np.full(1, -1, np.int64)
    splits = 0
    n_new = P_new.shape[0]
    # rows per block: the block's product with the centroids stays below 2^24 entries (128 MB)
    block = max(16, min(512, (1 << 24) // max(n_groups, 1)))
    for b0 in range(0, n_new, block):
        b1 = min(b0 + block, n_new)
        n_block_groups = n_groups
        C0 = centroids[:n_block_groups].copy()
        c0n = np.empty(n_block_groups)
        for q in range(n_block_groups):
            s = 0.0
            for j in range(m):
                s += C0[q, j] * C0[q, j]
            c0n[q] = s
        approx = np.dot(np.ascontiguousarray(P_new[b0:b1]), C0.T)
        drift = np.zeros(n_block_groups)
        for i in range(b0, b1):
            r = first_new + i
            z = P_new[i]
            zn = 0.0
            for j in range(m):
                zn += z[j] * z[j]
            q = _nearest_group(z, zn, approx[i - b0], c0n, drift, n_block_groups, centroids,
                               sizes, n_groups, inertial)
            labels[r] = q
            n = sizes[q]
            for j in range(m):
                v = z[j]
                sums[q, j] += v
                sumsq[q, j] += v * v
                centroids[q, j] = sums[q, j] / (n + 1)
            sizes[q] = n + 1
            if splitting:  # list order does not matter: a split sorts the members first
                nxt[r] = head[q]
                head[q] = r
            if split_mode == SPLIT_MID and sizes[q] >= 2 * k:
                n_groups = _split_group(P_old, P_new, first_new, q, k, n_groups, head, nxt, labels,
                                        sums, sumsq, sizes, centroids)
                splits += 1
            if q < n_block_groups:
                drift[q] = _drift(centroids, C0, q)
    if split_mode == SPLIT_END:
        n_before = n_groups
        for q in range(n_before):
            if sizes[q] >= 2 * k:
                n_groups = _split_group(P_old, P_new, first_new, q, k, n_groups, head, nxt,
                                        labels, sums, sumsq, sizes, centroids)
                splits += 1
    return n_groups, splits
