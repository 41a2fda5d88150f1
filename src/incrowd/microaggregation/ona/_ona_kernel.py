"""Numba kernels of ONA (Thaeter & Reischuk 2021, Algorithm 2, after Soria-Comas et al. 2019) and ONA*
(Algorithm 3 there).

Cluster bookkeeping. Every cluster keeps its size, the sum of its rows, its centroid
(``sums / size``, refreshed after every change) and its SSE. They are updated incrementally:

* x joins B:  SSE(B + x) = SSE(B) + |B| / (|B| + 1) * ||x - c_B||^2, then sums += x;
* x leaves A: SSE(A - x) = SSE(A) - |A| / (|A| - 1) * ||x - c_A||^2, then sums -= x;

so the cost of a candidate move is O(d) and nothing is recomputed from its members per candidate.
A cluster is computed from its members (sequential sum in ascending row order, two-pass SSE) only
when it is created (initialization, split) and, in ONA*, once at the start of every round, which
bounds floating-point drift. Squared distances are summed over the columns in column order,
starting from 0, as in ``_kernels``.

Nearest centroid. Both algorithms ask, over and over, for the cluster whose centroid is closest
to a row among all clusters but the row's own. ``_nearest`` answers by brute force or from a
k-d tree over the centroids. The tree is exact: its nodes hold bounding boxes of centroid values
that are bit-identical to the current ones (a cluster whose centroid changes is marked *stale*,
skipped in the tree and scanned in a short list instead, and the tree is rebuilt when that list
grows), a box is pruned only when the lower bound computed from it exceeds the best distance
(floating-point rounding is monotone, so the bound never exceeds a distance computed from a point
inside the box), and ties go to the lowest cluster id. Both modes return the same cluster.

Decisions that compare two costs (dissolve or not, move or not) require the gain to exceed
``TOL`` times the compared terms plus the data's scale SST / n, so that rounding noise in an
exact tie never counts as an improvement. Without it, two clusters of duplicate rows whose
centroids carry different rounding errors (distances of 1e-32) trade rows back and forth forever.
On standardized data the margin is 1e-10 * d in SSE units, far below anything the tables show.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.typed import List

from .._kernels import box_sq_dist, helper, join_growth
from ..greedy._greedy_kernels import mdav_plus_labels, mdav_star_labels

#: relative margin a cost decrease must exceed to count (see module docstring)
TOL = 1e-10
_LEAF = 8
_STACK = 256

# ---------------------------------------------------------------------------------------------
# Small helpers


@helper
def _sqdist_row(X, r, C, g):
    """sum_j (X[r, j] - C[g, j])**2 in column order."""
    s = 0.0
    for j in range(X.shape[1]):
        diff = X[r, j] - C[g, j]
        s += diff * diff
    return s


@helper
def _gain_exceeds(gain_side, loss_side, scale):
    """True when gain_side - loss_side > 0 beyond rounding (both non-negative costs)."""
    return gain_side - loss_side > TOL * (gain_side + loss_side + scale)


@helper
def _dissolve_cost(X, members, k, tg, ls, n_l, size, sums, cent, tsum, tcent):
    """sum over the targets l of Cost(C_l + its new members) - Cost(C_l), when the k
    ``members`` of a dissolved cluster join their targets ``tg`` (distinct targets in ``ls``),
    each target taking its new members one at a time in member order."""
    m = X.shape[1]
    inc_total = 0.0
    for q in range(n_l):
        g = ls[q]
        sz = size[g]
        for j in range(m):
            tsum[j] = sums[g, j]
            tcent[0, j] = cent[g, j]
        inc = 0.0
        for t in range(k):
            if tg[t] != g:
                continue
            r = members[t]
            inc += join_growth(sz, _sqdist_row(X, r, tcent, 0))
            sz += 1
            for j in range(m):
                tsum[j] += X[r, j]
                tcent[0, j] = tsum[j] / sz
        inc_total += inc
    return inc_total


@njit(cache=True)
def sst_per_row(X):
    """SST / n: sum over columns (in order) of squared deviations from the sequential mean."""
    n, m = X.shape
    s = 0.0
    for j in range(m):
        mu = 0.0
        for r in range(n):
            mu += X[r, j]
        mu /= n
        for r in range(n):
            diff = X[r, j] - mu
            s += diff * diff
    return s / n


@helper
def _set_from_rows(X, g, rows, cnt, size, sums, cent, sse):
    """Cluster g := the given rows (size, sequential sum in the given order, centroid, SSE)."""
    m = X.shape[1]
    size[g] = cnt
    for j in range(m):
        sums[g, j] = 0.0
    for t in range(cnt):
        r = rows[t]
        for j in range(m):
            sums[g, j] += X[r, j]
    for j in range(m):
        cent[g, j] = sums[g, j] / cnt
    s = 0.0
    for j in range(m):
        c = cent[g, j]
        for t in range(cnt):
            diff = X[rows[t], j] - c
            s += diff * diff
    sse[g] = s


@helper
def _add_row(X, r, g, size, sums, cent, sse):
    """x joins g: SSE grows by |g| / (|g| + 1) * ||x - c_g||^2."""
    m = X.shape[1]
    sz = size[g]
    if sz == 0:
        sse[g] = 0.0
        for j in range(m):
            sums[g, j] = X[r, j]
    else:
        sse[g] += join_growth(sz, _sqdist_row(X, r, cent, g))
        for j in range(m):
            sums[g, j] += X[r, j]
    size[g] = sz + 1
    for j in range(m):
        cent[g, j] = sums[g, j] / (sz + 1)


@helper
def _remove_row(X, r, g, size, sums, cent, sse):
    """x leaves g (|g| >= 2): SSE shrinks by |g| / (|g| - 1) * ||x - c_g||^2 (kept >= 0)."""
    m = X.shape[1]
    sz = size[g]
    v = sse[g] - sz / (sz - 1.0) * _sqdist_row(X, r, cent, g)
    sse[g] = v if v > 0.0 else 0.0
    for j in range(m):
        sums[g, j] -= X[r, j]
    size[g] = sz - 1
    for j in range(m):
        cent[g, j] = sums[g, j] / (sz - 1)


# ---------------------------------------------------------------------------------------------
# Nearest centroid: brute force or an exact k-d tree with a stale list.
#
# The index is a tuple of arrays:
#   0 ids   1 lo   2 hi   3 start   4 end   5 left   6 dim   7 split   8 stale   9 dlist
#   10 meta [n_nodes, n_stale, use_tree, rebuild threshold]   11 work stack


@njit(cache=True)
def _new_index(cap, m, use_tree, threshold):
    ncap = 2 * cap + 2
    meta = np.zeros(4, np.int64)
    meta[2] = 1 if use_tree else 0
    meta[3] = threshold
    return (
        np.empty(cap, np.int64),
        np.empty((ncap, m)),
        np.empty((ncap, m)),
        np.empty(ncap, np.int64),
        np.empty(ncap, np.int64),
        np.empty(ncap, np.int64),
        np.empty(ncap, np.int64),
        np.empty(ncap),
        np.zeros(cap, np.bool_),
        np.empty(cap, np.int64),
        meta,
        np.empty(_STACK, np.int64),
    )


@njit(cache=True)
def _rebuild(T, cent, size, nc):
    ids, lo, hi, start, end, left, dim, split, stale, dlist, meta, stack = T
    meta[1] = 0
    for g in range(stale.shape[0]):
        stale[g] = False
    if meta[2] == 0:
        meta[0] = 0
        return
    m = cent.shape[1]
    cnt = 0
    for g in range(nc):
        if size[g] > 0:
            ids[cnt] = g
            cnt += 1
    if cnt == 0:
        meta[0] = 0
        return
    n_nodes = 1
    start[0] = 0
    end[0] = cnt
    todo = np.empty(2 * cnt + 2, np.int64)
    sp = 1
    todo[0] = 0
    while sp > 0:
        sp -= 1
        node = todo[sp]
        s = start[node]
        e = end[node]
        for j in range(m):
            lo[node, j] = np.inf
            hi[node, j] = -np.inf
        for q in range(s, e):
            g = ids[q]
            for j in range(m):
                v = cent[g, j]
                if v < lo[node, j]:
                    lo[node, j] = v
                if v > hi[node, j]:
                    hi[node, j] = v
        best_dim = 0
        best_w = -1.0
        for j in range(m):
            w = hi[node, j] - lo[node, j]
            if w > best_w:
                best_w = w
                best_dim = j
        if e - s <= _LEAF or best_w <= 0.0:
            left[node] = -1
            continue
        keys = np.empty(e - s)
        for q in range(s, e):
            keys[q - s] = cent[ids[q], best_dim]
        order = np.argsort(keys)
        tmp = ids[s:e].copy()
        for q in range(e - s):
            ids[s + q] = tmp[order[q]]
        mid = (s + e) // 2
        dim[node] = best_dim
        split[node] = cent[ids[mid], best_dim]
        a = n_nodes
        n_nodes += 2
        start[a] = s
        end[a] = mid
        start[a + 1] = mid
        end[a + 1] = e
        left[node] = a
        todo[sp] = a
        todo[sp + 1] = a + 1
        sp += 2
    meta[0] = n_nodes


@njit(cache=True)
def _touch(T, g, cent, size, nc):
    """Cluster g changed (centroid moved, created or dissolved): scan it outside the tree."""
    meta = T[10]
    if meta[2] == 0:
        return
    stale = T[8]
    if not stale[g]:
        stale[g] = True
        T[9][meta[1]] = g
        meta[1] += 1
        if meta[1] > meta[3]:
            _rebuild(T, cent, size, nc)


@helper
def _nearest_scan(X, r, exclude, cent, size, nc):
    """``_nearest`` by a scan of every centroid: the same (cluster, squared distance). ONA*'s
    reference kernel asks only this way; its fast twin and ONA keep the tree for many clusters."""
    m = X.shape[1]
    best = -1
    bd = np.inf
    for g in range(nc):
        if g == exclude or size[g] == 0:
            continue
        dd = 0.0
        for j in range(m):
            diff = X[r, j] - cent[g, j]
            dd += diff * diff
        if dd < bd:
            bd = dd
            best = g
    return best, bd


@njit(cache=True)
def _nearest(X, r, exclude, cent, size, nc, T):
    """(cluster, squared distance) of the centroid closest to X[r] among the non-empty clusters
    other than ``exclude``; lowest id on ties; (-1, inf) when there is none."""
    best = -1
    bd = np.inf
    meta = T[10]
    if meta[2] == 0:
        return _nearest_scan(X, r, exclude, cent, size, nc)
    ids, lo, hi, start, end, left, dim, split, stale, dlist, meta, stack = T
    for q in range(meta[1]):
        g = dlist[q]
        if g == exclude or g >= nc or size[g] == 0:
            continue
        dd = _sqdist_row(X, r, cent, g)
        if dd < bd or (dd == bd and g < best):
            bd = dd
            best = g
    if meta[0] == 0:
        return best, bd
    sp = 1
    stack[0] = 0
    while sp > 0:
        sp -= 1
        node = stack[sp]
        if box_sq_dist(X, r, lo, hi, node) > bd:
            continue
        a = left[node]
        if a < 0:
            for q in range(start[node], end[node]):
                g = ids[q]
                if stale[g] or g == exclude:
                    continue
                dd = _sqdist_row(X, r, cent, g)
                if dd < bd or (dd == bd and g < best):
                    bd = dd
                    best = g
        else:
            if X[r, dim[node]] < split[node]:
                stack[sp] = a + 1
                stack[sp + 1] = a
            else:
                stack[sp] = a
                stack[sp + 1] = a + 1
            sp += 2
    return best, bd


@njit(cache=True)
def _threshold(n_clusters):
    return max(64, int(4.0 * np.sqrt(max(n_clusters, 1))))


# ---------------------------------------------------------------------------------------------
# ONA* (Thaeter & Reischuk 2021, Algorithm 3)


@helper
def _distinct_ascending(tg, k, ls):
    """The distinct targets among ``tg[:k]`` into ``ls``, ascending; returns their count."""
    n_l = 0
    for t in range(k):
        g = tg[t]
        pos = n_l
        dup = False
        for q in range(n_l):
            if ls[q] == g:
                dup = True
                break
        if dup:
            continue
        while pos > 0 and ls[pos - 1] > g:
            ls[pos] = ls[pos - 1]
            pos -= 1
        ls[pos] = g
        n_l += 1
    return n_l


@njit(cache=True)
def _grow(mem, size, sums, cent, sse, newcap):
    cap, width = mem.shape
    m = sums.shape[1]
    mem2 = np.empty((newcap, width), np.int64)
    size2 = np.zeros(newcap, np.int64)
    sums2 = np.zeros((newcap, m))
    cent2 = np.zeros((newcap, m))
    sse2 = np.zeros(newcap)
    # element by element: a slice assignment would compile numba's shape-mismatch message
    # (string formatting) into every kernel that grows the arrays
    for g in range(cap):
        for t in range(width):
            mem2[g, t] = mem[g, t]
        for j in range(m):
            sums2[g, j] = sums[g, j]
            cent2[g, j] = cent[g, j]
        size2[g] = size[g]
        sse2[g] = sse[g]
    return mem2, size2, sums2, cent2, sse2


@helper
def _insert_sorted(mem, g, cnt, r):
    """Insert row r into the ascending member list mem[g, :cnt]."""
    pos = cnt
    while pos > 0 and mem[g, pos - 1] > r:
        mem[g, pos] = mem[g, pos - 1]
        pos -= 1
    mem[g, pos] = r


@helper
def _delete_sorted(mem, g, cnt, r):
    pos = 0
    while mem[g, pos] != r:
        pos += 1
    for t in range(pos, cnt - 1):
        mem[g, t] = mem[g, t + 1]


@helper
def _label_count(labels):
    """``labels.max() + 1`` of non-empty labels, as a loop: the array method would compile
    numba's reduction machinery into ONA*'s kernels for this one use."""
    count = 0
    for t in range(labels.shape[0]):
        if labels[t] + 1 > count:
            count = labels[t] + 1
    return count


def start_labels(X, k, init):
    """ONA*'s lines 1-4 as labels: the MDAV* labels ``init`` with every group of >= 2k rows
    replaced by MDAV+ of its rows. The first part keeps the group's label; the others take new
    labels after all existing ones, in order of group and part, which is the order in which the
    paper's list appends them. Every group of the result has fewer than 2k rows.

    Written in Python around the compiled MDAV+: the groups to split are few, and the kernels
    that start from these labels then compile without MDAV+ inside them."""
    counts = np.bincount(init)
    large = np.flatnonzero(counts >= 2 * k)
    if large.size == 0:
        return init
    out = init.copy()
    order = np.argsort(init, kind="stable")  # each group's rows, ascending
    bounds = np.concatenate(([0], np.cumsum(counts)))
    new_label = counts.size
    for g in large:
        M = order[bounds[g] : bounds[g + 1]]
        parts = mdav_plus_labels(np.ascontiguousarray(X[M]), k)
        for p in range(1, int(parts.max()) + 1):
            out[M[parts == p]] = new_label
            new_label += 1
    return out


@njit(cache=True, nogil=True)
def start_clusters(X, k, init, spare):
    """The cluster arrays of the labels ``init`` (from :func:`start_labels`: every group has
    fewer than 2k rows): members in ascending row order, sizes, sums, centroids, SSEs, the
    cluster count and the arrays' capacity (room for ``spare`` more clusters; default
    n // k + 16)."""
    n, m = X.shape
    n0 = _label_count(init)
    width = 3 * k
    cap = n0 + (n // k + 16 if spare < 0 else spare)
    mem = np.empty((cap, width), np.int64)
    size = np.zeros(cap, np.int64)
    sums = np.zeros((cap, m))
    cent = np.zeros((cap, m))
    sse = np.zeros(cap)
    fill = np.zeros(n0, np.int64)
    for i in range(n):
        fill[init[i]] += 1
    for g in range(n0):
        if fill[g] >= 2 * k:  # the member lists hold fewer than 3k rows
            raise ValueError("a start group has 2k rows or more: split it first (start_labels)")
        fill[g] = 0
    # rows grouped by cluster, ascending inside (a counting sort: an argsort would compile
    # numba's merge sort into this kernel)
    for i in range(n):
        g = init[i]
        mem[g, fill[g]] = i
        fill[g] += 1
    for g in range(n0):
        _set_from_rows(X, g, mem[g], fill[g], size, sums, cent, sse)
    return mem, size, sums, cent, sse, n0, cap


def ona_star_labels(X, k, max_rounds, spare=-1, scale=-1.0, stop=None):
    """ONA* on row-major float64 X. Returns (labels, rounds run, converged).

    The reference: every question "which other centroid is closest?" is a scan of all clusters
    (``_nearest_scan``). Its fast twin (``_ona_star_fast``) gives the same groups for many
    clusters; this kernel serves few, where a scan is as fast, and compiles in a fraction of the
    time without the k-d tree.

    Labels are numbered in the order of the final cluster list (see ``ONAStar``). ``spare``:
    room for clusters appended by splits before the arrays are grown (default n // k + 16;
    tests pass 0 to exercise the growth). ``scale``: the SST / n that sets the rounding margin
    of ``_gain_exceeds``; by default X's own. A caller clustering a part of a larger data set
    passes the whole set's: a part of identical rows has SST = 0, and without a margin its
    rounding noise (1e-30) would count as gains and move rows back and forth forever.
    ``stop``: a one-element uint8 array another thread may set to 1; the rounds then end before
    the next one starts (a cancel from the web app), leaving a valid partition.
    """
    n = X.shape[0]
    if n < 2 * k:
        return np.zeros(n, np.int64), 0, True
    clusters = start_clusters(X, k, start_labels(X, k, mdav_star_labels(X, k)), spare)
    if scale < 0.0:
        scale = sst_per_row(X)
    return _ona_star_rounds(X, k, max_rounds, scale, stop, *clusters)


@njit(cache=True, nogil=True)
def _ona_star_rounds(X, k, max_rounds, scale, stop, mem, size, sums, cent, sse, nc, cap):
    n, m = X.shape
    labels = np.zeros(n, np.int64)
    width = mem.shape[1]
    rows = np.empty(n, np.int64)

    tg = np.empty(width, np.int64)  # targets j(s) of a cluster's members
    ls = np.empty(width, np.int64)  # distinct targets, ascending
    buf = np.empty(width, np.int64)
    tsum = np.empty(m)
    tcent = np.empty((1, m))

    rounds = 0
    converged = False
    while rounds < max_rounds:
        if stop is not None:
            if stop[0] != 0:
                break
        rounds += 1
        changed = False
        # Refresh every cluster from its members (bounds floating-point drift).
        for g in range(nc):
            if size[g] > 0:
                _set_from_rows(X, g, mem[g], size[g], size, sums, cent, sse)

        # ---- Phase 1: dissolving clusters of exactly k rows (lines 6-17) ---------------------
        i = 0
        while i < nc:
            if size[i] != k:
                i += 1
                continue
            ok = True
            for t in range(k):
                g, _ = _nearest_scan(X, mem[i, t], i, cent, size, nc)
                if g < 0:
                    ok = False
                    break
                tg[t] = g
            if not ok:
                i += 1
                continue
            n_l = _distinct_ascending(tg, k, ls)
            # Cost1 > Cost2  <=>  SSE(C_i) > sum over l of [Cost(C'_l) - Cost(C_l)]
            inc_total = _dissolve_cost(X, mem[i], k, tg, ls, n_l, size, sums, cent, tsum, tcent)
            if not _gain_exceeds(sse[i], inc_total, scale):
                i += 1
                continue
            # dissolve C_i
            for t in range(k):
                buf[t] = mem[i, t]
            for q in range(n_l):
                g = ls[q]
                for t in range(k):
                    if tg[t] == g:
                        _add_row(X, buf[t], g, size, sums, cent, sse)
                        _insert_sorted(mem, g, size[g] - 1, buf[t])
            size[i] = 0
            sse[i] = 0.0
            changed = True
            # split clusters that reached 2k (lines 14-17)
            for q in range(n_l):
                g = ls[q]
                if size[g] >= 2 * k:
                    if nc + 2 > cap:
                        cap = 2 * cap + 2
                        mem, size, sums, cent, sse = _grow(mem, size, sums, cent, sse, cap)
                    nc = _split_star(X, k, g, nc, mem, size, sums, cent, sse, rows)
            i += 1

        # ---- Phase 2: reassigning rows of clusters with more than k rows (lines 18-32) -------
        i = 0
        while i < nc:
            while size[i] > k:
                si = size[i]
                best_imp = -np.inf
                r0 = -1
                j0 = -1
                a0 = 0.0
                b0 = 0.0
                for t in range(si):
                    r = mem[i, t]
                    g, dg = _nearest_scan(X, r, i, cent, size, nc)
                    if g < 0:
                        break
                    a = si / (si - 1.0) * _sqdist_row(X, r, cent, i)
                    b = join_growth(size[g], dg)
                    if a - b > best_imp:
                        best_imp = a - b
                        r0 = r
                        j0 = g
                        a0 = a
                        b0 = b
                if r0 < 0 or not _gain_exceeds(a0, b0, scale):
                    break
                _delete_sorted(mem, i, si, r0)
                _remove_row(X, r0, i, size, sums, cent, sse)
                _add_row(X, r0, j0, size, sums, cent, sse)
                _insert_sorted(mem, j0, size[j0] - 1, r0)
                changed = True
                if size[j0] >= 2 * k:
                    if nc + 2 > cap:
                        cap = 2 * cap + 2
                        mem, size, sums, cent, sse = _grow(mem, size, sums, cent, sse, cap)
                    nc = _split_star(X, k, j0, nc, mem, size, sums, cent, sse, rows)
            i += 1
        if not changed:
            converged = True
            break

    new_id = 0
    for g in range(nc):
        if size[g] > 0:
            for t in range(size[g]):
                labels[mem[g, t]] = new_id
            new_id += 1
    return labels, rounds, converged


@helper
def _gather_rows(X, ids, cnt):
    """(ids[:cnt], X at those rows) as new arrays, written out: a fancy index (``X[M]``) would
    compile numba's advanced indexing into the ONA* kernels."""
    m = X.shape[1]
    M = np.empty(cnt, np.int64)
    part = np.empty((cnt, m))
    for t in range(cnt):
        r = ids[t]
        M[t] = r
        for j in range(m):
            part[t, j] = X[r, j]
    return M, part


@helper
def _gather_part(sl, M, p, rows):
    """Rows (ids from M, in order) whose split label is p, written to ``rows``; their count."""
    c = 0
    for t in range(sl.size):
        if sl[t] == p:
            rows[c] = M[t]
            c += 1
    return c


@helper
def _store_cluster(X, tgt, rows, c, mem, size, sums, cent, sse):
    for t in range(c):
        mem[tgt, t] = rows[t]
    _set_from_rows(X, tgt, mem[tgt], c, size, sums, cent, sse)


@njit(cache=True, inline="always")
def _split_star(X, k, g, nc, mem, size, sums, cent, sse, rows):
    """Replace cluster g (>= 2k rows) by MDAV* of its rows (ascending): the first part keeps id
    g, the others are appended. Returns the new cluster count."""
    cnt = size[g]
    M, part = _gather_rows(X, mem[g], cnt)
    sl = mdav_star_labels(part, k)
    n_parts = _label_count(sl)
    for p in range(n_parts):
        c = _gather_part(sl, M, p, rows)
        tgt = g
        if p > 0:
            tgt = nc
            nc += 1
        _store_cluster(X, tgt, rows, c, mem, size, sums, cent, sse)
    return nc


# ---------------------------------------------------------------------------------------------
# ONA (Thaeter & Reischuk 2021, Algorithm 2): random k-member start, reassign / dissolve per row, recursive
# split of clusters of >= 2k rows, at most ``max_rounds`` rounds. Randomness comes from a
# SplitMix64 stream (state: a one-element uint64 array) so that runs are reproducible and
# independent of threads.


@njit(cache=True)
def _next_u64(state):
    state[0] += np.uint64(0x9E3779B97F4A7C15)
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _below(state, bound):
    """Uniform integer in [0, bound) (rejection sampling, no modulo bias)."""
    b = np.uint64(bound)
    limit = np.uint64(0xFFFFFFFFFFFFFFFF) - (np.uint64(0xFFFFFFFFFFFFFFFF) % b)
    while True:
        z = _next_u64(state)
        if z < limit:
            return np.int64(z % b)


@njit(cache=True)
def _link(r, g, head, tail, nxt, prv):
    prv[r] = tail[g]
    nxt[r] = -1
    if tail[g] >= 0:
        nxt[tail[g]] = r
    else:
        head[g] = r
    tail[g] = r


@njit(cache=True)
def _unlink(r, g, head, tail, nxt, prv):
    if prv[r] >= 0:
        nxt[prv[r]] = nxt[r]
    else:
        head[g] = nxt[r]
    if nxt[r] >= 0:
        prv[nxt[r]] = prv[r]
    else:
        tail[g] = prv[r]
    nxt[r] = -1
    prv[r] = -1


@njit(cache=True)
def _set_from_list(X, g, head, nxt, size, sums, cent, sse, rows):
    cnt = 0
    r = head[g]
    while r >= 0:
        rows[cnt] = r
        cnt += 1
        r = nxt[r]
    _set_from_rows(X, g, rows, cnt, size, sums, cent, sse)
    return cnt


# One ONA run works on a stack of frames instead of recursion (numba cannot load a cached
# recursive function): a frame is the whole state of ONA on one set of rows, and splitting a
# cluster pushes a frame for its rows, whose result the parent applies when the child is done.
# Randomness is consumed in the same order as by the recursive formulation.

_RUN, _SPLIT, _DONE = 0, 1, 2
# regs: 0 phase, 1 rounds, 2 changed, 3 cluster being split, 4 n_free, 5 version, 6 n_alive,
#       7 n_cl, 8 rows pending (size of the cluster being split)


@njit(cache=True)
def _new_frame(X, k, state, use_tree):
    """ONA's random k-member start on X (>= 2k rows): consecutive blocks of k of a random
    permutation; the n mod k rows left over join the last block."""
    n, m = X.shape
    n_cl = n // k  # clusters of the random start; never more are alive at once
    perm = np.arange(n)
    for t in range(n - 1, 0, -1):
        u = _below(state, t + 1)
        tmp = perm[t]
        perm[t] = perm[u]
        perm[u] = tmp
    head = np.full(n_cl, -1, np.int64)
    tail = np.full(n_cl, -1, np.int64)
    nxt = np.full(n, -1, np.int64)
    prv = np.full(n, -1, np.int64)
    lab = np.empty(n, np.int64)
    size = np.zeros(n_cl, np.int64)
    sums = np.zeros((n_cl, m))
    cent = np.zeros((n_cl, m))
    sse = np.zeros(n_cl)
    rows = np.empty(n, np.int64)
    pend = np.empty(n, np.int64)
    for t in range(n):
        g = min(t // k, n_cl - 1)
        r = perm[t]
        lab[r] = g
        _link(r, g, head, tail, nxt, prv)
    for g in range(n_cl):
        _set_from_list(X, g, head, nxt, size, sums, cent, sse, rows)
    free = np.empty(n_cl, np.int64)
    seen = np.full(n_cl, -1, np.int64)  # version at which a dissolve check last said no
    regs = np.zeros(9, np.int64)
    regs[0] = _RUN
    regs[6] = n_cl
    regs[7] = n_cl
    T = _new_index(n_cl, m, use_tree, _threshold(n_cl))
    _rebuild(T, cent, size, n_cl)
    return (X, lab, head, tail, nxt, prv, size, sums, cent, sse, free, seen, regs, rows, pend, T)


@njit(cache=True)
def _ona_round(F, k, scale):
    """Lines 3-16 of Algorithm 2: every row in row order, reassign (case 1) or consider
    dissolving its cluster (case 2). Sets regs[2] when something changed."""
    X, lab, head, tail, nxt, prv, size, sums, cent, sse, free, seen, regs, rows, pend, T = F
    n, m = X.shape
    n_cl = regs[7]
    n_free = regs[4]
    version = regs[5]
    n_alive = regs[6]
    tg = np.empty(k, np.int64)
    mb = np.empty(k, np.int64)
    ls = np.empty(k, np.int64)
    tsum = np.empty(m)
    tcent = np.empty((1, m))
    changed = False
    for x in range(n):
        i = lab[x]
        if size[i] > k:
            # Case 1: extract x, add it to the cluster with the closest centroid (its own
            # cluster, without x, keeps it on ties).
            si = size[i]
            d_own = 0.0
            for j in range(m):
                diff = X[x, j] - (sums[i, j] - X[x, j]) / (si - 1)
                d_own += diff * diff
            g, dg = _nearest(X, x, i, cent, size, n_cl, T)
            if g >= 0 and _gain_exceeds(d_own, dg, scale):
                _unlink(x, i, head, tail, nxt, prv)
                _remove_row(X, x, i, size, sums, cent, sse)
                _add_row(X, x, g, size, sums, cent, sse)
                _link(x, g, head, tail, nxt, prv)
                lab[x] = g
                _touch(T, i, cent, size, n_cl)
                _touch(T, g, cent, size, n_cl)
                version += 1
                changed = True
        elif size[i] == k:
            # Case 2: should C_i be dissolved? Skipped when nothing changed since the last
            # check of C_i said no (the same state gives the same answer), and when only two
            # clusters are left (merging them never lowers the cost; skipping it also keeps a
            # split from being handed its whole input again).
            if seen[i] == version or n_alive <= 2:
                continue
            r = head[i]
            slot = 0
            ok = True
            while r >= 0:
                mb[slot] = r
                g, _ = _nearest(X, r, i, cent, size, n_cl, T)
                if g < 0:
                    ok = False
                    break
                tg[slot] = g
                slot += 1
                r = nxt[r]
            if not ok:
                continue
            n_l = 0
            for slot in range(k):
                g = tg[slot]
                dup = False
                for q in range(n_l):
                    if ls[q] == g:
                        dup = True
                        break
                if not dup:
                    ls[n_l] = g
                    n_l += 1
            # Cost1 > Cost2  <=>  Cost(C_i) > sum over l of [Cost(C'_l) - Cost(C_l)]
            inc_total = _dissolve_cost(X, mb, k, tg, ls, n_l, size, sums, cent, tsum, tcent)
            if not _gain_exceeds(sse[i], inc_total, scale):
                seen[i] = version
                continue
            for slot in range(k):
                r = mb[slot]
                g = tg[slot]
                _unlink(r, i, head, tail, nxt, prv)
                _add_row(X, r, g, size, sums, cent, sse)
                _link(r, g, head, tail, nxt, prv)
                lab[r] = g
            for q in range(n_l):
                _touch(T, ls[q], cent, size, n_cl)
            size[i] = 0
            sse[i] = 0.0
            free[n_free] = i
            n_free += 1
            n_alive -= 1
            _touch(T, i, cent, size, n_cl)
            version += 1
            changed = True
    regs[2] = 1 if changed else 0
    regs[4] = n_free
    regs[5] = version
    regs[6] = n_alive


@njit(cache=True)
def _next_large(F, start, k):
    """First cluster id >= start with >= 2k rows, or -1; its rows go to ``pend``."""
    X, lab, head, tail, nxt, prv, size, sums, cent, sse, free, seen, regs, rows, pend, T = F
    for g in range(start, regs[7]):
        if size[g] >= 2 * k:
            cnt = 0
            r = head[g]
            while r >= 0:
                pend[cnt] = r
                cnt += 1
                r = nxt[r]
            regs[8] = cnt
            return g
    return -1


@njit(cache=True)
def _apply_split(F, g, sub_labels):
    """Cluster g (rows in ``pend``) := part 0 of sub_labels; the other parts take free ids."""
    X, lab, head, tail, nxt, prv, size, sums, cent, sse, free, seen, regs, rows, pend, T = F
    cnt = regs[8]
    n_parts = sub_labels.max() + 1
    ids = np.empty(n_parts, np.int64)
    ids[0] = g
    for p in range(1, n_parts):
        regs[4] -= 1
        ids[p] = free[regs[4]]
    regs[6] += n_parts - 1
    for p in range(n_parts):
        head[ids[p]] = -1
        tail[ids[p]] = -1
    for t in range(cnt):
        r = pend[t]
        gg = ids[sub_labels[t]]
        lab[r] = gg
        _link(r, gg, head, tail, nxt, prv)
    for p in range(n_parts):
        _set_from_list(X, ids[p], head, nxt, size, sums, cent, sse, rows)
        _touch(T, ids[p], cent, size, regs[7])
    regs[5] += 1


@njit(cache=True)
def _frame_labels(F):
    X, lab, head, tail, nxt, prv, size, sums, cent, sse, free, seen, regs, rows, pend, T = F
    n = X.shape[0]
    n_cl = regs[7]
    remap = np.full(n_cl, -1, np.int64)
    c = 0
    for g in range(n_cl):
        if size[g] > 0:
            remap[g] = c
            c += 1
    labels = np.empty(n, np.int64)
    for r in range(n):
        labels[r] = remap[lab[r]]
    return labels


@njit(cache=True)
def _ona_run(X, k, max_rounds, state, use_tree, scale):
    """One ONA run (Algorithm 2). Returns (labels, rounds run, converged).

    ``scale``: SST / n of the data (see ``_gain_exceeds``); split runs inherit it. A split
    runs ONA on the cluster's rows (in list order) with the same round cap and the same random
    stream, on brute-force nearest centroids.
    """
    n = X.shape[0]
    if n < 2 * k:
        return np.zeros(n, np.int64), 0, True
    stack = List()
    stack.append(_new_frame(X, k, state, use_tree))
    child = np.empty(0, np.int64)
    has_child = False
    while True:
        F = stack[-1]
        regs = F[12]
        if regs[0] == _RUN:
            regs[1] += 1
            _ona_round(F, k, scale)
            regs[0] = _SPLIT
            regs[3] = 0
        elif regs[0] == _SPLIT:
            # Split large clusters: lines 17-19, ONA on each cluster of >= 2k rows
            start = regs[3]
            if has_child:
                _apply_split(F, regs[3], child)
                has_child = False
                start = regs[3] + 1
            g = _next_large(F, start, k)
            if g >= 0:
                regs[3] = g
                cnt = regs[8]
                sub = np.empty((cnt, X.shape[1]))
                Xf = F[0]
                pend = F[14]
                for t in range(cnt):
                    sub[t] = Xf[pend[t]]
                stack.append(_new_frame(sub, k, state, False))
            elif regs[2] == 0 or regs[1] >= max_rounds:
                regs[0] = _DONE
            else:
                regs[0] = _RUN
        else:
            labels = _frame_labels(F)
            rounds = regs[1]
            converged = regs[2] == 0
            stack.pop()
            if len(stack) == 0:
                return labels, rounds, converged
            child = labels
            has_child = True


@njit(cache=True)
def sse_of_labels(X, labels):
    """SSE of a labelling: group sums in row order, then squared distances to the means."""
    n, m = X.shape
    G = labels.max() + 1
    sums = np.zeros((G, m))
    cnt = np.zeros(G, np.int64)
    for r in range(n):
        g = labels[r]
        cnt[g] += 1
        for j in range(m):
            sums[g, j] += X[r, j]
    total = 0.0
    for r in range(n):
        g = labels[r]
        for j in range(m):
            diff = X[r, j] - sums[g, j] / cnt[g]
            total += diff * diff
    return total


@njit(cache=True, nogil=True)
def ona_one_run(X, k, max_rounds, seed, use_tree, scale):
    """One ONA run seeded with ``seed`` (run q of :func:`ona_best_labels` is
    ``ona_one_run(X, ..., seeds[q], ..., sst_per_row(X))``): (labels, SSE, rounds, converged).
    Releases the GIL, so Python threads run several at once."""
    state = np.empty(1, np.uint64)
    state[0] = seed
    lab, rr, cv = _ona_run(X, k, max_rounds, state, use_tree, scale)
    return lab, sse_of_labels(X, lab), rr, cv


@njit(cache=True, parallel=True)
def ona_best_labels(X, k, max_rounds, seeds, use_tree):
    """``len(seeds)`` independent ONA runs (run r seeded with seeds[r]); returns the labels of
    the run with the lowest SSE (lowest run index on ties), every run's SSE, rounds and
    convergence flag, and the index of the best run."""
    n = X.shape[0]
    runs = seeds.shape[0]
    all_labels = np.empty((runs, n), np.int64)
    costs = np.empty(runs)
    rounds = np.empty(runs, np.int64)
    conv = np.empty(runs, np.bool_)
    scale = sst_per_row(X)
    for q in prange(runs):
        state = np.empty(1, np.uint64)
        state[0] = seeds[q]
        lab, rr, cv = _ona_run(X, k, max_rounds, state, use_tree, scale)
        all_labels[q] = lab
        costs[q] = sse_of_labels(X, lab)
        rounds[q] = rr
        conv[q] = cv
    best = 0
    for q in range(1, runs):
        if costs[q] < costs[best]:
            best = q
    return all_labels[best].copy(), costs, rounds, conv, best
