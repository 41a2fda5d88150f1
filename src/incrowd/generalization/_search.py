"""numba kernels of the negotiation (slides 004, "Algorithm SimpleAnonymityNegotiation").

``t`` is the privacy threshold (k or l) and the histogram keys are class sizes or distinct
sensitive values accordingly: rows suppressed at node v for t = rows under keys < t. Every
search counts the nodes whose histogram it read ("visited").

Full lattice: suppression can only fall going up (an ancestor's classes are unions of a
descendant's), so the nodes of v_max's sublattice within the limit form an up-set there; a
depth-first descent from v_max through nodes within the limit reaches all of them, and
"some node of height h is within the limit" holds for every height above the first one that
does, so the lowest height is found by binary search. Partial lattice: those arguments fail
on the nodes left out, so the sublattice and the heights are scanned.
"""

from __future__ import annotations

import numpy as np
from numba import njit

NONE = -1
#: the result vector's fields, in order
FIELDS = (
    "exact", "exact_supp", "exact_visited",
    "r_supp", "r_supp_supp", "r_supp_visited",
    "r_height", "r_height_supp", "r_height_visited",
    "r_t", "r_t_supp", "r_t_value", "r_t_visited",
)


@njit(cache=True)
def suppressed(node, t, offsets, keys, cum_rows):
    a = offsets[node]
    lo = a
    hi = offsets[node + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return cum_rows[lo - 1] if lo > a else 0


@njit(cache=True)
def largest_threshold(node, max_supp, offsets, keys, cum_rows, n_rows):
    """The largest t whose suppression at ``node`` stays within ``max_supp``: the first key at
    which the running row count passes the limit (classes with that key survive t = key)."""
    for e in range(offsets[node], offsets[node + 1]):
        if cum_rows[e] > max_supp:
            return keys[e]
    return n_rows + 1


@njit(cache=True)
def _better(h, s, v, bh, bs, bv):
    if bv < 0:
        return True
    if h != bh:
        return h < bh
    if s != bs:
        return s < bs
    return v < bv


@njit(cache=True)
def descend(vmax, t, max_supp, levels, strides, heights, offsets, keys, cum_rows):
    """Lowest node (height, then suppression, then id) of v_max's sublattice within the limit,
    by depth-first descent through nodes within it. Returns (node or -1, its suppression,
    nodes visited)."""
    n = heights.size
    m = strides.size
    seen = np.zeros(n, np.bool_)
    stack = np.empty(n, np.int64)
    s0 = suppressed(vmax, t, offsets, keys, cum_rows)
    seen[vmax] = True
    visited = 1
    if s0 > max_supp:
        return NONE, s0, visited
    best, best_s, best_h = vmax, s0, heights[vmax]
    top = 0
    stack[top] = vmax
    top += 1
    while top > 0:
        top -= 1
        v = stack[top]
        for i in range(m):
            if levels[v, i] > 0:
                c = v - strides[i]
                if not seen[c]:
                    seen[c] = True
                    visited += 1
                    sc = suppressed(c, t, offsets, keys, cum_rows)
                    if sc <= max_supp:
                        stack[top] = c
                        top += 1
                        if _better(heights[c], sc, c, best_h, best_s, best):
                            best, best_s, best_h = c, sc, heights[c]
    return best, best_s, visited


@njit(cache=True)
def _scan_height(h, t, max_supp, h_order, h_offsets, materialized, offsets, keys, cum_rows, seen, first_only):
    """Nodes of height h within the limit: the first one found (``first_only``) or the best
    (least suppression, then id). Returns (node or -1, suppression, nodes newly read)."""
    best, best_s, visited = NONE, 0, 0
    for e in range(h_offsets[h], h_offsets[h + 1]):
        v = h_order[e]
        if not materialized[v]:
            continue
        if not seen[v]:
            seen[v] = True
            visited += 1
        s = suppressed(v, t, offsets, keys, cum_rows)
        if s <= max_supp and (best < 0 or s < best_s or (s == best_s and v < best)):
            best, best_s = v, s
            if first_only:
                break
    return best, best_s, visited


@njit(cache=True)
def lowest_height(t, max_supp, h_order, h_offsets, materialized, offsets, keys, cum_rows, binary):
    """Lowest node anywhere (height, then suppression, then id) within the limit: binary search
    over heights on a full lattice, an upward scan of the heights on a partial one."""
    n_heights = h_offsets.size - 1
    seen = np.zeros(h_order.size, np.bool_)
    visited = 0
    found = -1
    if binary:
        lo, hi = 0, n_heights - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            node, _, vis = _scan_height(mid, t, max_supp, h_order, h_offsets, materialized, offsets, keys, cum_rows, seen, True)
            visited += vis
            if node >= 0:
                found = mid
                hi = mid - 1
            else:
                lo = mid + 1
    else:
        for h in range(n_heights):
            node, _, vis = _scan_height(h, t, max_supp, h_order, h_offsets, materialized, offsets, keys, cum_rows, seen, True)
            visited += vis
            if node >= 0:
                found = h
                break
    if found < 0:
        return NONE, 0, visited
    best, best_s, vis = _scan_height(found, t, max_supp, h_order, h_offsets, materialized, offsets, keys, cum_rows, seen, False)
    return best, best_s, visited + vis


@njit(cache=True)
def _in_sublattice(v, vmax, levels):
    for i in range(levels.shape[1]):
        if levels[v, i] > levels[vmax, i]:
            return False
    return True


@njit(cache=True)
def scan_sublattice(vmax, t, max_supp, levels, heights, materialized, offsets, keys, cum_rows, by_supp):
    """Best materialized node of v_max's sublattice within the limit: by (height, suppression,
    id), or with ``by_supp`` by (suppression, height, id). Returns (node, suppression, visited)."""
    best, best_s, best_h, visited = NONE, 0, 0, 0
    for v in range(heights.size):
        if not materialized[v] or not _in_sublattice(v, vmax, levels):
            continue
        visited += 1
        s = suppressed(v, t, offsets, keys, cum_rows)
        if s > max_supp:
            continue
        h = heights[v]
        if by_supp:
            better = best < 0 or s < best_s or (s == best_s and (h < best_h or (h == best_h and v < best)))
        else:
            better = _better(h, s, v, best_h, best_s, best)
        if better:
            best, best_s, best_h = v, s, h
    return best, best_s, visited


@njit(cache=True)
def negotiate_kernel(vmax, t, max_supp, n_rows, levels, strides, heights, h_order, h_offsets,
                     materialized, offsets, keys, cum_rows, partial):
    """The whole negotiation for one request; the result vector's fields are :data:`FIELDS`."""
    out = np.full(len(FIELDS), NONE, np.int64)
    big = n_rows + 1
    # a node that suppresses every row publishes nothing: never an answer
    if max_supp > n_rows - 1:
        max_supp = n_rows - 1
    if not partial:
        best, s, vis = descend(vmax, t, max_supp, levels, strides, heights, offsets, keys, cum_rows)
        out[0], out[1], out[2] = best, s, vis
        if best >= 0:
            return out
        s_vmax = s
        # relax max suppression: v_max's own suppression is the least its sublattice can do
        if s_vmax < n_rows:
            best, s, vis = descend(vmax, t, s_vmax, levels, strides, heights, offsets, keys, cum_rows)
            out[3], out[4], out[5] = best, s, vis
        else:
            out[5] = 0
        best, s, vis = lowest_height(t, max_supp, h_order, h_offsets, materialized, offsets, keys, cum_rows, True)
        out[6], out[7], out[8] = best, s, vis
        t_star = largest_threshold(vmax, max_supp, offsets, keys, cum_rows, n_rows)
        out[12] = 1
        if 2 <= t_star < big:
            best, s, vis = descend(vmax, t_star, max_supp, levels, strides, heights, offsets, keys, cum_rows)
            out[9], out[10], out[11], out[12] = best, s, t_star, vis + 1
        return out
    # partial lattice: v_max may be missing, and a failed node says nothing about missing ones
    if materialized[vmax] and suppressed(vmax, t, offsets, keys, cum_rows) > max_supp:
        out[0], out[1], out[2] = NONE, 0, 1
    else:
        best, s, vis = scan_sublattice(vmax, t, max_supp, levels, heights, materialized, offsets, keys, cum_rows, False)
        out[0], out[1], out[2] = best, s, vis
        if best >= 0:
            return out
    best, s, vis = scan_sublattice(vmax, t, n_rows - 1, levels, heights, materialized, offsets, keys, cum_rows, True)
    out[3], out[4], out[5] = best, s, vis
    best, s, vis = lowest_height(t, max_supp, h_order, h_offsets, materialized, offsets, keys, cum_rows, False)
    out[6], out[7], out[8] = best, s, vis
    t_star = 1
    visited = 0
    for v in range(heights.size):
        if materialized[v] and _in_sublattice(v, vmax, levels):
            visited += 1
            tv = largest_threshold(v, max_supp, offsets, keys, cum_rows, n_rows)
            if tv < big and tv > t_star:
                t_star = tv
    out[12] = visited
    if t_star >= 2:
        best, s, vis = scan_sublattice(vmax, t_star, max_supp, levels, heights, materialized, offsets, keys, cum_rows, False)
        out[9], out[10], out[11], out[12] = best, s, t_star, visited + vis
    return out
