"""ONA* with the groups of ``_ona_kernel.ona_star_labels``, exactly, without a full search per
question.

The reference kernel asks "which centroid, other than the row's own, is closest to this row?"
for every member of every cluster it visits, every round, and again for every member after each
move in phase 2. Each answer is a search over all clusters (a k-d tree does not prune in 15
columns), so a round costs n x (n / k) distances and the method is quadratic.

Here every row keeps the answer's neighbourhood between questions:

* a short list of clusters (``K`` of them) with their squared distances to the row, as they
  were when the list was made, and a bound ``lb``: the pair (distance, cluster id) of the first
  cluster left off the list. Every cluster off the list had, at that time, a pair at least
  ``lb`` in (distance, id) order;
* a stamp: the position of a change log at that time. Every change of a cluster (its centroid
  moved, it was created or dissolved) is appended to the log.

A question then looks only at the clusters the log names since the row's stamp (each once, at
its latest change) and at the listed ones that changed; everything else still has its old
distance, so still lies beyond ``lb``. When the best pair found (other than the row's own
cluster) lies below ``lb``, it is the answer the full search gives, distance for distance
(``_sqdist_row`` on the same centroid values) and tie for tie (lowest id). Otherwise, or when
the log since the stamp is longer than a search, the list is rebuilt by a full search.

Full searches are vectorized: distances grow one column at a time over all clusters (or, in a
blocked pass, over a block of rows), so the compiler uses vector instructions while every
distance is still summed over its columns in order. Before a phase visits a stretch of
clusters, the rows there whose lists the log can no longer bring up to date get new lists in one
blocked pass, which reads each centroid once per 64 rows instead of once per row; their
questions then need only the few changes made since. In 4 columns or fewer a k-d tree over the
centroids answers full searches instead (see ``ona.use_tree_star``).

A list does not have to be made afresh when many clusters changed: a block of rows brings its
lists up to date from the clusters changed since its oldest stamp (``_update_block``), which
skips every cluster that kept its centroid; rows more than ``WALK_MIN`` log entries behind are
updated so, in blocks, before their questions, instead of each walking the log alone.

The moves, their order and the arithmetic are the reference's, so the groups are identical;
``tests/test_ona_fast.py`` checks that against the reference kernel.

The MDAV* start is computed by :func:`mdav_star_best_labels` (the fastest exact MDAV* kernel
for the data's shape) instead of inside the kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..._runtime import compiled_or_cached
from .._adaptive import monotonic_ns, new_tuner, record, use_threads
from .._kernels import before, box_sq_dist, insert_pair, join_growth
from ..greedy._greedy_kernels import mdav_star_labels
from ..greedy._mdav_star_fast import mdav_star_best_labels
from ._ona_kernel import (
    _add_row,
    _delete_sorted,
    _dissolve_cost,
    _distinct_ascending,
    _gain_exceeds,
    _gather_part,
    _grow,
    _insert_sorted,
    _new_index,
    _rebuild,
    _remove_row,
    _set_from_rows,
    _sqdist_row,
    _store_cluster,
    _threshold,
    _touch,
    ona_star_labels,
    sst_per_row,
    start_clusters,
    start_labels,
)
from ._screen_widths import LANES, WIDEST, screen_pairs, screen_width

#: clusters remembered per row
LIST_SIZE = 6
#: a question walks at most nc / LOG_DIVISOR log entries before a full search is cheaper
LOG_DIVISOR = 16
#: a block updates its lists when the clusters changed since its oldest stamp are fewer than
#: this share of all clusters, else it makes them afresh; with the float32 screen an update
#: costs no more than a full pass even when every cluster changed (the study of the share is
#: in the docs' performance studies)
UPDATE_SHARE = 1.0
#: rows whose log walk would exceed this many entries are updated in blocks before their question
WALK_MIN = 32
_BLOCK = LANES  # rows per block of a blocked pass
_SCREEN_CHUNK = 32  # centroids one call of the screen covers (its values fill 8 KiB)
_PREFETCH = 512  # rows whose lists one blocked pass makes ahead of their questions
_CANDIDATES = 128  # single-precision candidates a row of a blocked pass keeps before compacting
_U32 = 2.0**-24  # unit roundoff of float32
#: beyond this magnitude float32 squares could overflow; such data take the double pass
_SINGLE_LIMIT = 1e15
# the blocked passes' screens (``single``): none (double only; data whose float32 squares could
# overflow), in column chunks, written out for the column count
_CHUNKED, _WIDTHS = 2, 3
# slots of the kernel's counters (``meta``): the change log's length, the question token
_LOG, _TOKEN, _META = range(3)


# ---------------------------------------------------------------------------------------------
# (distance, id) pairs


@njit(cache=True, inline="always")
def _sqdist_below(X, r, cent, g, limit):
    """``_sqdist_row(X, r, cent, g)`` when it is at most ``limit``; otherwise some value above
    ``limit`` (the sum stops once a partial sum passes it: the terms are never negative)."""
    s = 0.0
    for j in range(X.shape[1]):
        diff = X[r, j] - cent[g, j]
        s += diff * diff
        if s > limit:
            return s
    return s


@njit(cache=True, inline="always")
def _push32(top, t, cap, f, a):
    """Insert the float32 screen value ``a`` into row t's ascending ``top[t, :f]`` kept to
    ``cap`` values; returns the new count."""
    if f < cap:
        pos = f
        f += 1
    elif a < top[t, cap - 1]:
        pos = cap - 1
    else:
        return f
    while pos > 0 and top[t, pos - 1] > a:
        top[t, pos] = top[t, pos - 1]
        pos -= 1
    top[t, pos] = a
    return f


@njit(cache=True, inline="always")
def _keep32(ca, cg, cn, t, limit, a, g):
    """Keep candidate (a, g) for row t, first dropping the kept ones above ``limit`` when the
    buffer is full; False when it is still full (too many candidates within the limit)."""
    q = cn[t]
    if q == _CANDIDATES:
        q = 0
        for e in range(_CANDIDATES):
            if ca[t, e] <= limit:
                ca[t, q] = ca[t, e]
                cg[t, q] = cg[t, e]
                q += 1
        if q == _CANDIDATES:
            return False
    ca[t, q] = a
    cg[t, q] = g
    cn[t] = q + 1
    return True


# ---------------------------------------------------------------------------------------------
# The change log: ``log[0]`` holds the entries, ``meta[0]`` their count; ``last[g]`` is the
# position of cluster g's latest entry (-1: none).


@njit(cache=True)
def _log_change(g, log, meta, last):
    n = meta[0]
    log[n] = g
    last[g] = n
    meta[0] = n + 1


@njit(cache=True)
def _room(log, meta, need):
    """The log, grown when fewer than ``need`` entries are free."""
    if meta[0] + need <= log.shape[0]:
        return log
    bigger = np.empty(2 * log.shape[0] + need, np.int64)
    bigger[: meta[0]] = log[: meta[0]]
    return bigger


@njit(cache=True)
def _grow_last(last, cap):
    if last.shape[0] >= cap:
        return last
    bigger = np.full(cap, -1, np.int64)
    bigger[: last.shape[0]] = last
    return bigger


# ---------------------------------------------------------------------------------------------
# Full searches: the (K + 1) smallest (distance, id) pairs of a row over all non-empty clusters.


@njit(cache=True)
def _full_brute(X, r, cent, size, nc, bd, bg, cap):
    filled = 0
    for g in range(nc):
        if size[g] == 0:
            continue
        d = _sqdist_row(X, r, cent, g)
        filled = insert_pair(bd, bg, filled, cap, d, g)
    return filled


@njit(cache=True)
def _full_columns(X, r, centT, size, nc, acc, bd, bg, cap):
    """As ``_full_brute`` on the centroids stored column by column: the distances to all
    centroids grow one column at a time (clusters inside), which vectorizes and keeps each sum
    in column order."""
    m = X.shape[1]
    for g in range(nc):
        acc[g] = 0.0
    for j in range(m):
        x = X[r, j]
        col = centT[j]
        for g in range(nc):
            diff = x - col[g]
            acc[g] += diff * diff
    filled = 0
    for g in range(nc):
        if size[g] == 0:
            continue
        d = acc[g]
        if filled == cap and d >= bd[cap - 1]:
            continue  # clusters come in ascending id: an equal distance loses its tie
        filled = insert_pair(bd, bg, filled, cap, d, g)
    return filled


@njit(cache=True)
def _full_tree(X, r, cent, size, nc, T, bd, bg, cap):
    """As ``_full_brute`` through the k-d tree of ``_ona_kernel`` (stale clusters scanned)."""
    ids, lo, hi, start, end, left, dim, split, stale, dlist, meta, stack = T
    filled = 0
    for q in range(meta[1]):
        g = dlist[q]
        if g >= nc or size[g] == 0:
            continue
        filled = insert_pair(bd, bg, filled, cap, _sqdist_row(X, r, cent, g), g)
    if meta[0] == 0:
        return filled
    sp = 1
    stack[0] = 0
    while sp > 0:
        sp -= 1
        node = stack[sp]
        if filled == cap and box_sq_dist(X, r, lo, hi, node) > bd[cap - 1]:
            continue
        a = left[node]
        if a < 0:
            for q in range(start[node], end[node]):
                g = ids[q]
                if stale[g]:
                    continue
                filled = insert_pair(bd, bg, filled, cap, _sqdist_row(X, r, cent, g), g)
        else:
            if sp + 2 > stack.shape[0]:
                # deeper than the work stack: finish by brute force (same answer)
                return _full_brute(X, r, cent, size, nc, bd, bg, cap)
            if X[r, dim[node]] < split[node]:
                stack[sp] = a + 1
                stack[sp + 1] = a
            else:
                stack[sp] = a
                stack[sp + 1] = a + 1
            sp += 2
    return filled


@njit(cache=True)
def _store_list(r, bd, bg, filled, K, cid, cd, ccnt, clb, clbg, cst, stamp, bnd=np.inf, bndg=-1):
    """Row r remembers the first K pairs; the (K + 1)-th (or (bnd, bndg): +inf when the pairs
    came from every cluster) becomes its bound."""
    cnt = filled if filled < K else K
    for q in range(cnt):
        cid[r, q] = bg[q]
        cd[r, q] = bd[q]
    ccnt[r] = cnt
    if filled > K:
        clb[r] = bd[K]
        clbg[r] = bg[K]
    else:
        clb[r] = bnd
        clbg[r] = bndg
    cst[r] = stamp


@njit(cache=True, inline="always")
def _far_from_block(Xt, cent, g, b, acc, worst):
    """Centroid g's squared distances to the block's rows (``Xt``, column by column) into
    ``acc``, summed in column order as ``_sqdist_row`` does; True, with the sums left partial,
    once every row's partial sum exceeds its ``worst`` (partial sums only grow, so the centroid
    can enter no list; the rows of a block are neighbours, so a far centroid is far from all)."""
    m = Xt.shape[0]
    for t in range(b):
        acc[t] = 0.0
    for j in range(m):
        c = cent[g, j]
        for t in range(b):
            diff = Xt[j, t] - c
            acc[t] += diff * diff
        if (j & 3) == 3 and j + 1 < m:
            far = True
            for t in range(b):
                if acc[t] <= worst[t]:
                    far = False
                    break
            if far:
                return True
    return False


@njit(cache=True)
def _lists_block(X, rows, r0, b, cent, size, nc, lists, stamp):
    """The lists of ``rows[r0:r0 + b]`` (b <= _BLOCK) by one pass over the centroids: each
    centroid's distances are summed column by column, rows inside, which vectorizes, reads each
    centroid once per block, and keeps each row's sum in column order, the order of
    ``_sqdist_row``. ``lists``: the rows' lists (``_new_lists``)."""
    cid, cd, ccnt, clb, clbg, cst = lists
    K = cid.shape[1]
    m = X.shape[1]
    cap = K + 1
    Xt = np.empty((m, _BLOCK))
    acc = np.empty(_BLOCK)
    bd = np.empty((_BLOCK, cap))
    bg = np.empty((_BLOCK, cap), np.int64)
    filled = np.zeros(_BLOCK, np.int64)
    worst = np.empty(_BLOCK)  # each row's (K + 1)-th best distance so far, +inf until K + 1 seen
    for j in range(m):
        for t in range(b):
            Xt[j, t] = X[rows[r0 + t], j]
    for t in range(b):
        worst[t] = np.inf
    for g in range(nc):
        if size[g] == 0:
            continue
        if _far_from_block(Xt, cent, g, b, acc, worst):
            continue
        for t in range(b):
            if filled[t] == cap and acc[t] >= bd[t, cap - 1]:
                continue  # clusters come in ascending id: an equal distance loses its tie
            filled[t] = insert_pair(bd[t], bg[t], filled[t], cap, acc[t], g)
            if filled[t] == cap:
                worst[t] = bd[t, cap - 1]
    for t in range(b):
        _store_list(rows[r0 + t], bd[t], bg[t], filled[t], K, cid, cd, ccnt, clb, clbg, cst, stamp)


@njit(cache=True)
def _single_margin(X, r, xmax):
    """A bound on |float32 distance - double distance| for row r against any centroid.

    Every centroid is a mean of rows, so |c_j| <= xmax_j (times 1 + a few roundoffs). Rounding
    x and c to float32, the difference, its square and the sum of m terms each err by at most
    one roundoff u of a magnitude at most (|x_j| + xmax_j)^2 per term: in all at most
    (m + 6) u sum_j (|x_j| + xmax_j)^2 (the double sum's own error is far smaller); 1.01
    absorbs the second-order terms. The expanded form of the written-out screens
    (``_screen_widths``) errs by at most (m + 2) u times the same sum."""
    m = X.shape[1]
    s = 0.0
    for j in range(m):
        v = abs(X[r, j]) + xmax[j]
        s += v * v
    return 1.01 * (m + 6) * _U32 * s


@njit(cache=True, inline="always")
def _single_threshold(worst, margin):
    """worst + 2 margin, rounded up to a float32 that is not below it."""
    if worst == np.inf:
        return np.float32(np.inf)
    return np.float32((np.float64(worst) + 2.0 * margin) * (1.0 + 4.0 * _U32))


@njit(cache=True, inline="always")
def _sq(x, c):
    d = x - c
    return d * d


@njit(cache=True, fastmath={"contract"})
def _screen_hits(Xt, cent32, g, acc, limit):
    """Centroid g's float32 squared distances to all ``_BLOCK`` lanes of a block into ``acc``;
    whether any lane's is at most its ``limit`` (one vector reduction decides for the whole
    block: most centroids are far from all its rows; padding lanes have limit -inf).

    The columns are taken eight (then four, two, one) at a time with the lanes inside, so each
    lane's running sum stays in a register across a chunk: summed one column at a time, every
    column's add waited on the store of the column before, which bounded the pass. The order
    of the float32 sum and its fused multiply-adds do not matter for exactness: the margin of
    ``_single_margin`` bounds any order of summation."""
    m = Xt.shape[0]
    j = 0
    while j < m:
        left = m - j
        if left >= 8:
            c0 = cent32[g, j]
            c1 = cent32[g, j + 1]
            c2 = cent32[g, j + 2]
            c3 = cent32[g, j + 3]
            c4 = cent32[g, j + 4]
            c5 = cent32[g, j + 5]
            c6 = cent32[g, j + 6]
            c7 = cent32[g, j + 7]
            if j == 0:
                for t in range(_BLOCK):
                    acc[t] = ((_sq(Xt[j, t], c0) + _sq(Xt[j + 1, t], c1)) + (_sq(Xt[j + 2, t], c2) + _sq(Xt[j + 3, t], c3))) \
                        + ((_sq(Xt[j + 4, t], c4) + _sq(Xt[j + 5, t], c5)) + (_sq(Xt[j + 6, t], c6) + _sq(Xt[j + 7, t], c7)))
            else:
                for t in range(_BLOCK):
                    acc[t] += ((_sq(Xt[j, t], c0) + _sq(Xt[j + 1, t], c1)) + (_sq(Xt[j + 2, t], c2) + _sq(Xt[j + 3, t], c3))) \
                        + ((_sq(Xt[j + 4, t], c4) + _sq(Xt[j + 5, t], c5)) + (_sq(Xt[j + 6, t], c6) + _sq(Xt[j + 7, t], c7)))
            j += 8
        elif left >= 4:
            c0 = cent32[g, j]
            c1 = cent32[g, j + 1]
            c2 = cent32[g, j + 2]
            c3 = cent32[g, j + 3]
            if j == 0:
                for t in range(_BLOCK):
                    acc[t] = (_sq(Xt[j, t], c0) + _sq(Xt[j + 1, t], c1)) + (_sq(Xt[j + 2, t], c2) + _sq(Xt[j + 3, t], c3))
            else:
                for t in range(_BLOCK):
                    acc[t] += (_sq(Xt[j, t], c0) + _sq(Xt[j + 1, t], c1)) + (_sq(Xt[j + 2, t], c2) + _sq(Xt[j + 3, t], c3))
            j += 4
        elif left >= 2:
            c0 = cent32[g, j]
            c1 = cent32[g, j + 1]
            if j == 0:
                for t in range(_BLOCK):
                    acc[t] = _sq(Xt[j, t], c0) + _sq(Xt[j + 1, t], c1)
            else:
                for t in range(_BLOCK):
                    acc[t] += _sq(Xt[j, t], c0) + _sq(Xt[j + 1, t], c1)
            j += 2
        else:
            c0 = cent32[g, j]
            if j == 0:
                for t in range(_BLOCK):
                    acc[t] = _sq(Xt[j, t], c0)
            else:
                for t in range(_BLOCK):
                    acc[t] += _sq(Xt[j, t], c0)
            j += 1
    hit = False
    for t in range(_BLOCK):
        hit |= acc[t] <= limit[t]
    return hit


@njit(cache=True)
def _lane_norms(X, rows, r0, b):
    """Squared norms of the block's rows, summed in double and rounded once to float32 (0 on
    the padding lanes)."""
    xn = np.zeros(_BLOCK, np.float32)
    for t in range(b):
        r = rows[r0 + t]
        s = 0.0
        for j in range(X.shape[1]):
            s += X[r, j] * X[r, j]
        xn[t] = np.float32(s)
    return xn


@njit(cache=True)
def single_centroids(cent):
    """The float32 centroids of the screen: each centroid's values rounded, zero columns up to
    ``screen_width``, then its squared norm (summed in double, rounded once) in the last column."""
    nc, m = cent.shape
    cent32 = np.zeros((nc, screen_width(m) + 1), np.float32)
    for g in range(nc):
        _sync_single(g, cent, cent32)
    return cent32


@njit(cache=True, inline="always")
def _sync_single(g, cent, cent32):
    s = 0.0
    for j in range(cent.shape[1]):
        cent32[g, j] = np.float32(cent[g, j])
        s += cent[g, j] * cent[g, j]
    cent32[g, cent32.shape[1] - 1] = np.float32(s)


@njit(cache=True)
def _screen_chunk(single, Xt, xn, cent32, ids, lo, cnt, acc, limit, hit):
    """The float32 screen of the centroids ``ids[lo:lo + cnt]`` (cnt <= ``_SCREEN_CHUNK``):
    their distances to the block's lanes into ``acc[q]``, ``hit[q]`` whether any lane's is at
    most its ``limit``; whether any hit. A hit is only a hint: the caller compares each lane
    with its limit at the time it takes the centroid, so a limit lowered since the screen keeps
    the same candidates a screen of one centroid at a time would."""
    if single == _WIDTHS and Xt.shape[0] <= WIDEST:
        return screen_pairs(Xt, xn, cent32, ids, lo, cnt, acc, limit, hit)
    any_hit = False
    for q in range(cnt):
        h = _screen_hits(Xt, cent32, ids[lo + q], acc[q], limit)
        hit[q] = h
        any_hit |= h
    return any_hit


@njit(cache=True)
def _lists_block_single(X, X32, xmax, rows, r0, b, cent, cent32, size, nc, lists, stamp, single):
    """``_lists_block`` with the distances screened in float32, then confirmed in double.

    Float32 doubles the distances one vector instruction computes. Let A be a row's (K + 1)-th
    smallest float32 distance and M its margin (``_single_margin``). At least K + 1 centroids
    then lie within A + M in double, so every centroid of the row's K + 1 closest in double has
    a float32 distance at most A + 2M. The pass keeps, per row, every centroid whose float32
    distance was at most its running (K + 1)-th smallest + 2M when it was seen (a superset of
    those within the final A + 2M), computes their distances in double exactly as
    ``_sqdist_row`` does, and keeps the K + 1 smallest in (distance, id) order: the lists of
    ``_lists_block``, bit for bit. A row whose kept centroids do not fit (many centroids at
    one distance) gets a double full search instead."""
    cid, cd, ccnt, clb, clbg, cst = lists
    K = cid.shape[1]
    m = X.shape[1]
    cap = K + 1
    Xt = np.zeros((cent32.shape[1] - 1, _BLOCK), np.float32)  # zero rows pad to the screen's width
    xn = _lane_norms(X, rows, r0, b)
    ids = np.empty(_SCREEN_CHUNK, np.int64)
    acc = np.empty((_SCREEN_CHUNK + 1, _BLOCK), np.float32)
    hit = np.empty(_SCREEN_CHUNK + 1, np.bool_)
    worst = np.empty(_BLOCK, np.float32)  # running (K + 1)-th smallest float32 distance
    thr = np.empty(_BLOCK, np.float32)  # worst + 2 margin: a centroid below it is kept
    margin = np.empty(_BLOCK)
    top = np.empty((_BLOCK, cap), np.float32)
    filled = np.zeros(_BLOCK, np.int64)
    ca = np.empty((_BLOCK, _CANDIDATES), np.float32)
    cg = np.empty((_BLOCK, _CANDIDATES), np.int64)
    cn = np.zeros(_BLOCK, np.int64)
    spill = np.zeros(_BLOCK, np.bool_)
    for j in range(m):
        for t in range(b):
            Xt[j, t] = X32[rows[r0 + t], j]
    for t in range(_BLOCK):
        if t < b:
            worst[t] = np.inf
            thr[t] = np.inf
            margin[t] = _single_margin(X, rows[r0 + t], xmax)
        else:
            worst[t] = -np.inf  # padding lanes never keep anything
            thr[t] = -np.inf
    g0 = 0
    while g0 < nc:
        cnt = 0
        while g0 < nc and cnt < _SCREEN_CHUNK:
            if size[g0] > 0:
                ids[cnt] = g0
                cnt += 1
            g0 += 1
        # an int64 start, not the literal 0: one compiled screen serves this pass and the updates
        if not _screen_chunk(single, Xt, xn, cent32, ids, np.int64(0), cnt, acc, thr, hit):
            continue
        for q in range(cnt):
            if not hit[q]:
                continue
            g = ids[q]
            for t in range(b):
                a = acc[q, t]
                if not a <= thr[t] or spill[t]:
                    continue
                if not _keep32(ca, cg, cn, t, thr[t], a, g):
                    spill[t] = True
                    continue
                filled[t] = _push32(top, t, cap, filled[t], a)
                if filled[t] == cap:
                    worst[t] = top[t, cap - 1]
                    thr[t] = _single_threshold(worst[t], margin[t])
    bd = np.empty(cap)
    bg = np.empty(cap, np.int64)
    for t in range(b):
        r = rows[r0 + t]
        if spill[t]:
            got = _full_brute(X, r, cent, size, nc, bd, bg, cap)
        else:
            got = 0
            for e in range(cn[t]):
                if ca[t, e] <= thr[t]:
                    g = cg[t, e]
                    got = insert_pair(bd, bg, got, cap, _sqdist_row(X, r, cent, g), g)
        _store_list(r, bd, bg, got, K, cid, cd, ccnt, clb, clbg, cst, stamp)


@njit(cache=True, inline="always")
def _latest_live(h, e, last, size, nc):
    """Whether log entry e is cluster h's latest change and h still exists."""
    return last[h] == e and h < nc and size[h] > 0


@njit(cache=True)
def _recent_changes(rows, count, cst, stamp, log, last, size, nc):
    """(clusters, positions): every non-empty cluster whose latest change lies at or after the
    oldest stamp of ``rows[:count]`` (rows without a list left out), in log order, with the
    position of that change. A block's clusters changed since its own oldest stamp are then a
    suffix (``_changed_in``): one walk of the log per pass instead of one per block."""
    old = stamp
    for t in range(count):
        st = cst[rows[t]]
        if 0 <= st < old:
            old = st
    clusters = np.empty(min(nc, stamp - old) + 1, np.int64)
    positions = np.empty(clusters.shape[0], np.int64)
    n = 0
    for e in range(old, stamp):
        h = log[e]
        if not _latest_live(h, e, last, size, nc):
            continue
        clusters[n] = h
        positions[n] = e
        n += 1
    return clusters[:n], positions[:n]


@njit(cache=True)
def _changed_in(recent, rows, r0, b, cst, stamp, nc, share):
    """(oldest stamp of the block, the non-empty clusters changed since it in log order, their
    count), taken from the pass's ``_recent_changes`` by a binary search; the count is -1 when a
    row has no list or more than ``share`` of the clusters changed."""
    clusters, positions = recent
    old = stamp
    for t in range(b):
        st = cst[rows[r0 + t]]
        if st < 0:
            return old, clusters[:0], -1
        if st < old:
            old = st
    start = np.searchsorted(positions, old)
    nchg = clusters.shape[0] - start
    if nchg > int(share * nc):
        return old, clusters[:0], -1
    return old, clusters[start:], nchg


@njit(cache=True)
def _update_block(X, rows, r0, b, cent, size, nc, lists, stamp, last, share, recent):
    """The lists of ``rows[r0:r0 + b]`` brought up to date from the clusters changed since the
    block's oldest stamp, in one pass over those clusters; returns the distances computed, or -1
    when a full pass is cheaper (a row without a list, or too many changes).

    A row's list holds, at its stamp, exact distances below its bound B, and every cluster off
    the list then had a pair at least B. A cluster not changed since (no log entry from the
    stamp on) keeps its distance, so: the listed ones keep theirs, the others stay at least B.
    Every changed cluster gets its current distance, computed as ``_sqdist_row`` does (columns
    in order, rows inside, which vectorizes). The K + 1 smallest pairs below B then make the new
    list, the (K + 1)-th the new bound (B itself when fewer fall below it): the invariant of
    ``_nearest_cached`` holds again at the new stamp. ``recent``: the pass's
    ``_recent_changes``."""
    cid, cd, ccnt, clb, clbg, cst = lists
    K = cid.shape[1]
    old, changed, nchg = _changed_in(recent, rows, r0, b, cst, stamp, nc, share)
    if nchg < 0:
        return -1
    m = X.shape[1]
    cap = K + 1
    Xt = np.empty((m, _BLOCK))
    acc = np.empty(_BLOCK)
    bd = np.empty((_BLOCK, cap))
    bg = np.empty((_BLOCK, cap), np.int64)
    filled = np.zeros(_BLOCK, np.int64)
    bnd = np.empty(_BLOCK)  # the row's bound B: (bnd, bndg)
    bndg = np.empty(_BLOCK, np.int64)
    worst = np.empty(_BLOCK)  # nothing at a distance above this can enter the row's list
    for j in range(m):
        for t in range(b):
            Xt[j, t] = X[rows[r0 + t], j]
    for t in range(b):
        r = rows[r0 + t]
        bnd[t] = clb[r]
        bndg[t] = clbg[r]
        for q in range(ccnt[r]):
            h = cid[r, q]
            if last[h] < old:  # unchanged since every stamp of the block: not among the changed
                filled[t] = insert_pair(bd[t], bg[t], filled[t], cap, cd[r, q], h)
        worst[t] = bd[t, cap - 1] if filled[t] == cap else bnd[t]
    for c in range(nchg):
        g = changed[c]
        if _far_from_block(Xt, cent, g, b, acc, worst):
            continue
        for t in range(b):
            d = acc[t]
            if not before(d, g, bnd[t], bndg[t]):
                continue
            f = filled[t]
            if f == cap and not before(d, g, bd[t, cap - 1], bg[t, cap - 1]):
                continue
            filled[t] = insert_pair(bd[t], bg[t], f, cap, d, g)
            if filled[t] == cap:
                worst[t] = bd[t, cap - 1]
    for t in range(b):
        _store_list(rows[r0 + t], bd[t], bg[t], filled[t], K, cid, cd, ccnt, clb, clbg, cst, stamp,
                    bnd[t], bndg[t])
    return nchg * b


@njit(cache=True)
def _update_block_single(X, X32, xmax, rows, r0, b, cent, cent32, size, nc, lists, stamp, last, share, single,
                         recent):
    """``_update_block`` with the changed clusters screened in float32, then confirmed in
    double; the same lists, bit for bit.

    Each candidate of a row (a listed cluster unchanged since, at its float32-rounded exact
    distance, or a changed cluster at its float32 distance) has a screen value within the row's
    margin M (``_single_margin``) of its double distance. With A the running (K + 1)-th
    smallest screen value, every cluster among the K + 1 closest below the bound B has a screen
    value at most A + 2M, and below B + M: the screen keeps those (a superset), and the double
    confirmation computes their distances as ``_sqdist_row`` does and selects as
    ``_update_block``. A block whose kept candidates overflow (many tied distances) is updated
    in double instead."""
    cid, cd, ccnt, clb, clbg, cst = lists
    K = cid.shape[1]
    old, changed, nchg = _changed_in(recent, rows, r0, b, cst, stamp, nc, share)
    if nchg < 0:
        return -1
    m = X.shape[1]
    cap = K + 1
    Xt = np.zeros((cent32.shape[1] - 1, _BLOCK), np.float32)  # zero rows pad to the screen's width
    xn = _lane_norms(X, rows, r0, b)
    acc = np.empty((_SCREEN_CHUNK + 1, _BLOCK), np.float32)
    hit = np.empty(_SCREEN_CHUNK + 1, np.bool_)
    worst = np.empty(_BLOCK, np.float32)  # running (K + 1)-th smallest screen value
    keep = np.empty(_BLOCK, np.float32)  # a changed cluster at most this is kept
    below = np.empty(_BLOCK, np.float32)  # B + M rounded up: no candidate above can pass B
    margin = np.empty(_BLOCK)
    top = np.empty((_BLOCK, cap), np.float32)
    filled = np.zeros(_BLOCK, np.int64)
    ca = np.empty((_BLOCK, _CANDIDATES), np.float32)
    cg = np.empty((_BLOCK, _CANDIDATES), np.int64)
    cn = np.zeros(_BLOCK, np.int64)
    for j in range(m):
        for t in range(b):
            Xt[j, t] = X32[rows[r0 + t], j]
    for t in range(_BLOCK):
        if t >= b:
            keep[t] = -np.inf  # padding lanes never keep anything
            continue
        r = rows[r0 + t]
        margin[t] = _single_margin(X, r, xmax)
        below[t] = _single_threshold(clb[r], margin[t] / 2.0)
        worst[t] = np.inf
        for q in range(ccnt[r]):
            if last[cid[r, q]] < old:
                filled[t] = _push32(top, t, cap, filled[t], np.float32(cd[r, q]))
        if filled[t] == cap:
            worst[t] = top[t, cap - 1]
        keep[t] = min(_single_threshold(worst[t], margin[t]), below[t])
    for c0 in range(0, nchg, _SCREEN_CHUNK):
        cnt = min(_SCREEN_CHUNK, nchg - c0)
        if not _screen_chunk(single, Xt, xn, cent32, changed, c0, cnt, acc, keep, hit):
            continue
        for q in range(cnt):
            if not hit[q]:
                continue
            g = changed[c0 + q]
            for t in range(b):
                a = acc[q, t]
                if not a <= keep[t]:
                    continue
                if not _keep32(ca, cg, cn, t, keep[t], a, g):
                    return _update_block(X, rows, r0, b, cent, size, nc, lists, stamp, last, share, recent)
                filled[t] = _push32(top, t, cap, filled[t], a)
                if filled[t] == cap:
                    worst[t] = top[t, cap - 1]
                    keep[t] = min(_single_threshold(worst[t], margin[t]), below[t])
    bd = np.empty(cap)
    bg = np.empty(cap, np.int64)
    for t in range(b):
        r = rows[r0 + t]
        bnd = clb[r]
        bndg = clbg[r]
        got = 0
        for q in range(ccnt[r]):
            h = cid[r, q]
            if last[h] < old:
                got = insert_pair(bd, bg, got, cap, cd[r, q], h)
        for e in range(cn[t]):
            if ca[t, e] <= keep[t]:
                g = cg[t, e]
                d = _sqdist_row(X, r, cent, g)
                if not before(d, g, bnd, bndg):
                    continue
                if got == cap and not before(d, g, bd[cap - 1], bg[cap - 1]):
                    continue
                got = insert_pair(bd, bg, got, cap, d, g)
        _store_list(r, bd, bg, got, K, cid, cd, ccnt, clb, clbg, cst, stamp, bnd, bndg)
    return nchg * b


@njit(cache=True, inline="always")
def _one_block(X, passes, lists, rows, r0, b, cent, cent32, size, nc, stamp, last, recent):
    """One block's lists, by an update when it is cheaper, else by a full pass; returns the
    distances computed."""
    X32, xmax, single, share, _, _ = passes
    if share > 0.0:
        if single:
            done = _update_block_single(X, X32, xmax, rows, r0, b, cent, cent32, size, nc, lists, stamp, last,
                                        share, single, recent)
        else:
            done = _update_block(X, rows, r0, b, cent, size, nc, lists, stamp, last, share, recent)
        if done >= 0:
            return done
    if single:
        _lists_block_single(X, X32, xmax, rows, r0, b, cent, cent32, size, nc, lists, stamp, single)
    else:
        _lists_block(X, rows, r0, b, cent, size, nc, lists, stamp)
    return nc * b


@njit(cache=True)
def _lists_for(X, passes, lists, rows, count, cent, cent32, size, nc, stamp, last, recent):
    """The lists of ``rows[:count]``, block after block; returns the distances computed."""
    work = 0
    for r0 in range(0, count, _BLOCK):
        work += _one_block(X, passes, lists, rows, r0, min(_BLOCK, count - r0), cent, cent32, size, nc, stamp,
                           last, recent)
    return work


@njit(cache=True, parallel=True)
def _lists_for_parallel(X, passes, lists, rows, count, cent, cent32, size, nc, stamp, last, recent):
    """``_lists_for`` with the blocks on numba's threads (each block writes its own rows)."""
    n_blocks = (count + _BLOCK - 1) // _BLOCK
    work = np.zeros(n_blocks, np.int64)
    for q in prange(n_blocks):
        r0 = q * _BLOCK
        work[q] = _one_block(X, passes, lists, rows, r0, min(_BLOCK, count - r0), cent, cent32, size, nc, stamp,
                             last, recent)
    return work.sum()


@njit(cache=True)
def _prefetch(X, passes, lists, clusters, log, meta, i, nc, want_k, k, log_limit, tuner):
    """Make in one blocked pass the lists of the rows the coming clusters (from i on) will ask
    about and could not answer cheaply from their lists: members of clusters of exactly k rows
    (``want_k``, phase 1) or of more than k rows (phase 2), whose stamp is older than
    ``walk_min`` log entries (``log_limit`` when blocks only make lists afresh, ``share`` 0).
    Returns the first cluster not looked at. The pass runs on numba's threads while the tuner
    (``_adaptive``) finds them faster than one thread. ``passes``, ``lists`` and ``clusters``:
    the workspaces of ``_start``."""
    _, _, _, share, walk_min, pending = passes
    cst = lists[5]
    mem, size, _, cent, _, _, last, _, _, cent32, _ = clusters
    now = meta[0]
    stale = log_limit if share <= 0.0 else min(walk_min, log_limit)
    count = 0
    g = i
    while g < nc and count < pending.shape[0] - 3 * k:
        sz = size[g]
        if (want_k and sz == k) or (not want_k and sz > k):
            for t in range(sz):
                r = mem[g, t]
                if cst[r] < 0 or now - cst[r] > stale:
                    pending[count] = r
                    count += 1
        g += 1
    if count > 0:
        threaded = use_threads(tuner)
        t0 = monotonic_ns()
        recent = _recent_changes(pending, count if share > 0.0 else 0, cst, now, log, last, size, nc)
        if threaded:
            work = _lists_for_parallel(X, passes, lists, pending, count, cent, cent32, size, nc, now, last, recent)
        else:
            work = _lists_for(X, passes, lists, pending, count, cent, cent32, size, nc, now, last, recent)
        record(tuner, threaded, monotonic_ns() - t0, max(work, 1))
    return g


@njit(cache=True)
def _nearest_cached(X, r, exclude, cent, size, nc, T, use_tree, K, cid, cd, ccnt, clb, clbg, cst,
                    log, meta, last, log_limit, bd, bg, centT, acc, mark):
    """(cluster, squared distance) of the centroid closest to X[r] among the non-empty clusters
    other than ``exclude``, lowest id on ties: the answer of ``_ona_kernel._nearest``."""
    now = meta[0]
    st = cst[r]
    if st >= 0 and now - st <= log_limit:
        lbd = clb[r]
        lbg = clbg[r]
        cnt = 0
        # a token unique to this question marks the listed clusters for the log walk
        meta[_TOKEN] += 1
        token = meta[_TOKEN]
        # listed clusters: old distance when unchanged, new one otherwise
        for q in range(ccnt[r]):
            h = cid[r, q]
            mark[h] = token
            if last[h] >= st:
                if h >= nc or size[h] == 0:
                    continue
                d = _sqdist_below(X, r, cent, h, lbd)
            else:
                d = cd[r, q]
            if before(d, h, lbd, lbg):
                bd[cnt] = d
                bg[cnt] = h
                cnt += 1
        # clusters changed since the stamp, each at its latest entry
        for e in range(st, now):
            h = log[e]
            if last[h] != e or h >= nc or size[h] == 0 or mark[h] == token:
                continue
            d = _sqdist_below(X, r, cent, h, lbd)
            if not before(d, h, lbd, lbg):
                continue
            if cnt < K:
                bd[cnt] = d
                bg[cnt] = h
                cnt += 1
                continue
            worst = 0
            for q in range(1, cnt):
                if before(bd[worst], bg[worst], bd[q], bg[q]):
                    worst = q
            if before(d, h, bd[worst], bg[worst]):
                lbd = bd[worst]
                lbg = bg[worst]
                bd[worst] = d
                bg[worst] = h
            else:
                lbd = d
                lbg = h
        best = -1
        best_d = np.inf
        for q in range(cnt):
            h = bg[q]
            if h == exclude:
                continue
            if best < 0 or before(bd[q], h, best_d, best):
                best = h
                best_d = bd[q]
        for q in range(cnt):
            cid[r, q] = bg[q]
            cd[r, q] = bd[q]
        ccnt[r] = cnt
        clb[r] = lbd
        clbg[r] = lbg
        cst[r] = now
        if best >= 0:
            return best, best_d
    cap = K + 1
    if use_tree:
        filled = _full_tree(X, r, cent, size, nc, T, bd, bg, cap)
    else:
        filled = _full_columns(X, r, centT, size, nc, acc, bd, bg, cap)
    _store_list(r, bd, bg, filled, K, cid, cd, ccnt, clb, clbg, cst, now)
    for q in range(filled):
        if bg[q] != exclude:
            return bg[q], bd[q]
    return -1, np.inf


@njit(cache=True)
def _sync(g, cent, centT, cent32):
    for j in range(cent.shape[1]):
        centT[j, g] = cent[g, j]
    _sync_single(g, cent, cent32)


@njit(cache=True)
def _grow_columns(centT, cap):
    if centT.shape[1] >= cap:
        return centT
    bigger = np.zeros((centT.shape[0], cap))
    bigger[:, : centT.shape[1]] = centT
    return bigger


@njit(cache=True)
def _grow_single(cent32, cap):
    if cent32.shape[0] >= cap:
        return cent32
    bigger = np.zeros((cap, cent32.shape[1]), np.float32)
    bigger[: cent32.shape[0]] = cent32
    return bigger


@njit(cache=True)
def _grown(cap, nc, use_tree, clusters):
    """(cap, clusters): every per-cluster array for twice the clusters (a split needs room for
    two more)."""
    mem, size, sums, cent, sse, _, last, mark, centT, cent32, _ = clusters
    cap = 2 * cap + 2
    mem, size, sums, cent, sse = _grow(mem, size, sums, cent, sse, cap)
    T = _new_index(cap, cent.shape[1], use_tree, _threshold(nc))
    _rebuild(T, cent, size, nc)
    return cap, (mem, size, sums, cent, sse, T, _grow_last(last, cap), _grow_last(mark, cap),
                 _grow_columns(centT, cap), _grow_single(cent32, cap), np.empty(cap))


@njit(cache=True)
def _changed(g, T, cent, size, nc, log, meta, last, centT, cent32):
    _touch(T, g, cent, size, nc)
    _log_change(g, log, meta, last)
    _sync(g, cent, centT, cent32)


@njit(cache=True)
def _split_star(X, k, g, nc, clusters, rows, log, meta):
    """``_ona_kernel._split_star``, with every part logged as changed."""
    mem, size, sums, cent, sse, T, last, _, centT, cent32, _ = clusters
    cnt = size[g]
    M = mem[g, :cnt].copy()
    sl = mdav_star_labels(np.ascontiguousarray(X[M]), k)
    n_parts = sl.max() + 1
    for p in range(n_parts):
        c = _gather_part(sl, M, p, rows)
        tgt = g
        if p > 0:
            tgt = nc
            nc += 1
        _store_cluster(X, tgt, rows, c, mem, size, sums, cent, sse)
        _changed(tgt, T, cent, size, nc, log, meta, last, centT, cent32)
    return nc


@njit(cache=True)
def _split_if_full(X, k, g, nc, cap, use_tree, clusters, rows, log, meta):
    """(nc, cap, clusters): cluster g split when it reached 2k rows, the arrays grown first
    when they have no room for its parts."""
    if clusters[1][g] >= 2 * k:
        if nc + 2 > cap:
            cap, clusters = _grown(cap, nc, use_tree, clusters)
        nc = _split_star(X, k, g, nc, clusters, rows, log, meta)
    return nc, cap, clusters


# ---------------------------------------------------------------------------------------------
# The kernel's phases. Three workspaces travel between them (built by ``_start``), each
# unpacked once at the top of a phase so that the per-question loops run on plain arrays:
#
# * ``clusters``: (mem, size, sums, cent, sse, T, last, mark, centT, cent32, acc), everything
#   ``_grown`` replaces when a split needs room (T the search index, ``last`` each cluster's
#   latest log entry, ``mark`` the question tokens, ``centT`` / ``cent32`` the centroids by
#   column and in float32, ``acc`` a full search's distances);
# * ``lists``: (cid, cd, ccnt, clb, clbg, cst), the rows' lists: cluster ids, their distances,
#   their count, the bound (distance, id) and the stamp;
# * ``passes``: (X32, xmax, single, share, walk_min, pending), the blocked passes' data and
#   settings.


@njit(cache=True)
def _new_lists(n, K):
    return (np.empty((n, K), np.int64), np.empty((n, K)), np.zeros(n, np.int64), np.empty(n),
            np.empty(n, np.int64), np.full(n, -1, np.int64))


@njit(cache=True)
def _start(X, k, init, spare, use_tree, K, update_share, walk_min):
    """(nc, cap, clusters, lists, passes, log, meta): the clusters of the start labels ``init``,
    empty lists and log, and the blocked passes' precision: float32 screens only where their
    squares cannot overflow and a candidate buffer holds a list."""
    n, m = X.shape
    mem, size, sums, cent, sse, nc, cap = start_clusters(X, k, init, spare)
    T = _new_index(cap, m, use_tree, _threshold(nc))
    _rebuild(T, cent, size, nc)
    xmax = np.zeros(m)
    for r in range(n):
        for j in range(m):
            v = abs(X[r, j])
            if v > xmax[j]:
                xmax[j] = v
    single = 0
    if xmax.max() < _SINGLE_LIMIT and K + 1 <= _CANDIDATES:
        single = _WIDTHS if m <= WIDEST else _CHUNKED
    # the values (zero columns up to the written-out screen's width), then the squared norm
    cent32 = np.zeros((cap, (screen_width(m) if single == _WIDTHS else m) + 1), np.float32)
    X32 = X.astype(np.float32) if single else np.empty((0, m), np.float32)
    clusters = (mem, size, sums, cent, sse, T, np.full(cap, -1, np.int64), np.full(cap, -1, np.int64),
                np.zeros((m, cap)), cent32, np.empty(cap))
    # the blocked passes scan all centroids: without the tree only
    share = update_share if not use_tree else 0.0
    passes = (X32, xmax, single, share, walk_min, np.empty(_PREFETCH + 3 * k, np.int64))
    return nc, cap, clusters, _new_lists(n, K), passes, np.empty(4 * n + 64, np.int64), np.zeros(_META, np.int64)


@njit(cache=True)
def _refresh(X, nc, clusters, log, meta):
    """Every cluster recomputed from its members at a round's start; a centroid whose bits move
    is a change. Returns the log (grown when short)."""
    mem, size, sums, cent, sse, T, last, _, centT, cent32, _ = clusters
    old = np.empty(X.shape[1])
    log = _room(log, meta, nc)
    for g in range(nc):
        if size[g] > 0:
            for j in range(X.shape[1]):
                old[j] = cent[g, j]
            _set_from_rows(X, g, mem[g], size[g], size, sums, cent, sse)
            for j in range(X.shape[1]):
                if cent[g, j] != old[j]:
                    _log_change(g, log, meta, last)
                    break
            _sync(g, cent, centT, cent32)
    _rebuild(T, cent, size, nc)
    return log


@njit(cache=True)
def _dissolve_phase(X, k, use_tree, scale, tuner, nc, cap, clusters, lists, passes, log, meta, log_limit):
    """Phase 1: each cluster of exactly k rows is dissolved when sending every member to its
    nearest other cluster lowers the cost; a target that reaches 2k rows is split. Returns
    (changed, nc, cap, clusters, log)."""
    cid, cd, ccnt, clb, clbg, cst = lists
    K = cid.shape[1]
    mem, size, sums, cent, sse, T, last, mark, centT, cent32, acc = clusters
    width = mem.shape[1]
    m = X.shape[1]
    bd = np.empty(K + 1)
    bg = np.empty(K + 1, np.int64)
    tg = np.empty(width, np.int64)
    ls = np.empty(width, np.int64)
    buf = np.empty(width, np.int64)
    tsum = np.empty(m)
    tcent = np.empty((1, m))
    rows = np.empty(X.shape[0], np.int64)
    need = 6 * k + 16  # most log entries one step can add (a dissolve with its splits)
    changed = False
    i = 0
    fetched = 0  # clusters before this one have had their rows' lists made
    while i < nc:
        if size[i] != k:
            i += 1
            continue
        if not use_tree and i >= fetched:
            fetched = _prefetch(X, passes, lists, clusters, log, meta, i, nc, True, k, log_limit, tuner)
        ok = True
        for t in range(k):
            g, _ = _nearest_cached(X, mem[i, t], i, cent, size, nc, T, use_tree, K, cid, cd, ccnt, clb, clbg,
                                   cst, log, meta, last, log_limit, bd, bg, centT, acc, mark)
            if g < 0:
                ok = False
                break
            tg[t] = g
        if not ok:
            i += 1
            continue
        n_l = _distinct_ascending(tg, k, ls)
        inc_total = _dissolve_cost(X, mem[i], k, tg, ls, n_l, size, sums, cent, tsum, tcent)
        if not _gain_exceeds(sse[i], inc_total, scale):
            i += 1
            continue
        log = _room(log, meta, need)
        for t in range(k):
            buf[t] = mem[i, t]
        for q in range(n_l):
            g = ls[q]
            for t in range(k):
                if tg[t] == g:
                    _add_row(X, buf[t], g, size, sums, cent, sse)
                    _insert_sorted(mem, g, size[g] - 1, buf[t])
            _changed(g, T, cent, size, nc, log, meta, last, centT, cent32)
        size[i] = 0
        sse[i] = 0.0
        _changed(i, T, cent, size, nc, log, meta, last, centT, cent32)
        changed = True
        for q in range(n_l):
            nc, cap, clusters = _split_if_full(X, k, ls[q], nc, cap, use_tree, clusters, rows, log, meta)
        mem, size, sums, cent, sse, T, last, mark, centT, cent32, acc = clusters
        i += 1
    return changed, nc, cap, clusters, log


@njit(cache=True)
def _reassign_phase(X, k, use_tree, scale, tuner, nc, cap, clusters, lists, passes, log, meta, log_limit):
    """Phase 2: while a cluster has more than k rows, its member whose move to its nearest other
    cluster lowers the cost most moves there; a target that reaches 2k rows is split. Returns
    (changed, nc, cap, clusters, log)."""
    cid, cd, ccnt, clb, clbg, cst = lists
    K = cid.shape[1]
    mem, size, sums, cent, sse, T, last, mark, centT, cent32, acc = clusters
    bd = np.empty(K + 1)
    bg = np.empty(K + 1, np.int64)
    rows = np.empty(X.shape[0], np.int64)
    need = 6 * k + 16
    changed = False
    i = 0
    fetched = 0
    while i < nc:
        if not use_tree and size[i] > k and i >= fetched:
            fetched = _prefetch(X, passes, lists, clusters, log, meta, i, nc, False, k, log_limit, tuner)
        while size[i] > k:
            si = size[i]
            best_imp = -np.inf
            r0 = -1
            j0 = -1
            a0 = 0.0
            b0 = 0.0
            for t in range(si):
                r = mem[i, t]
                g, dg = _nearest_cached(X, r, i, cent, size, nc, T, use_tree, K, cid, cd, ccnt, clb, clbg, cst,
                                        log, meta, last, log_limit, bd, bg, centT, acc, mark)
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
            log = _room(log, meta, need)
            _delete_sorted(mem, i, si, r0)
            _remove_row(X, r0, i, size, sums, cent, sse)
            _add_row(X, r0, j0, size, sums, cent, sse)
            _insert_sorted(mem, j0, size[j0] - 1, r0)
            _changed(i, T, cent, size, nc, log, meta, last, centT, cent32)
            _changed(j0, T, cent, size, nc, log, meta, last, centT, cent32)
            changed = True
            nc, cap, clusters = _split_if_full(X, k, j0, nc, cap, use_tree, clusters, rows, log, meta)
            mem, size, sums, cent, sse, T, last, mark, centT, cent32, acc = clusters
        i += 1
    return changed, nc, cap, clusters, log


@njit(cache=True)
def _labels_of(mem, size, nc, n):
    """Row labels, clusters numbered in slot order with the empty ones left out."""
    labels = np.zeros(n, np.int64)
    new_id = 0
    for g in range(nc):
        if size[g] > 0:
            for t in range(size[g]):
                labels[mem[g, t]] = new_id
            new_id += 1
    return labels


@njit(cache=True, nogil=True)
def ona_star_fast_kernel(X, k, max_rounds, use_tree, init, tuner, spare=-1, scale=-1.0, stop=None,
                         list_size=LIST_SIZE, update_share=UPDATE_SHARE, walk_min=WALK_MIN):
    """``_ona_kernel.ona_star_labels`` from ``init``, the MDAV* labels with every group of >= 2k
    rows split (``start_labels``); same results.

    ``list_size``, ``update_share`` and ``walk_min`` change only the speed; the tests vary them
    to drive every path (lists that run out, blocks updated however many clusters changed)."""
    n = X.shape[0]
    if n < 2 * k:
        return np.zeros(n, np.int64), 0, True
    if scale < 0.0:
        scale = sst_per_row(X)
    nc, cap, clusters, lists, passes, log, meta = _start(X, k, init, spare, use_tree, list_size, update_share,
                                                         walk_min)
    rounds = 0
    converged = False
    while rounds < max_rounds:
        if stop is not None:
            if stop[0] != 0:
                break
        rounds += 1
        log = _refresh(X, nc, clusters, log, meta)
        # a log walk longer than a search is not worth it
        log_limit = nc // LOG_DIVISOR if not use_tree else 64
        moved, nc, cap, clusters, log = _dissolve_phase(X, k, use_tree, scale, tuner, nc, cap, clusters, lists,
                                                        passes, log, meta, log_limit)
        shifted, nc, cap, clusters, log = _reassign_phase(X, k, use_tree, scale, tuner, nc, cap, clusters, lists,
                                                          passes, log, meta, log_limit)
        if not (moved or shifted):
            converged = True
            break
    return _labels_of(clusters[0], clusters[1], nc, n), rounds, converged


def ona_star_fast_labels(X, k, max_rounds, use_tree, spare=-1, scale=-1.0, stop=None, *, threads=True):
    """``_ona_kernel.ona_star_labels(X, k, max_rounds, use_tree, spare, scale, stop)``: the
    same (labels, rounds run, converged). ``threads``: False keeps every pass on the calling
    thread (for fits run side by side, as MONA's parts)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.shape[0] < 2 * k:
        return np.zeros(X.shape[0], np.int64), 0, True
    init = start_labels(X, k, mdav_star_best_labels(X, k, threads))
    return ona_star_fast_kernel(X, k, max_rounds, use_tree, init, new_tuner(serial=not threads), spare, scale,
                                stop, LIST_SIZE, UPDATE_SHARE, WALK_MIN)


#: below this many clusters the reference kernel is faster (measured from 100 to 12,800 rows in 3
#: to 13 columns at k = 3 and 10: the lists and the change log cost more than the searches they
#: save while a full search covers a few hundred centroids); MONA's parts are often this small
SMALL_CLUSTERS = 320

#: up to this much work (rows x clusters x columns) the reference runs in a few seconds (0.2 s on
#: EIA's 4,092 rows in 11 columns, 3.5 s on 20,000 rows in 6 columns at k = 5), while the fast
#: kernel compiles for over a minute on its first use on a machine: until the fast kernel is
#: compiled or cached, data this small take the reference
FIRST_USE_WORK = 5e8


def ona_star_best_labels(X, k, max_rounds, use_tree, spare=-1, scale=-1.0, stop=None, threads=True):
    """The groups of ``_ona_kernel.ona_star_labels`` by whichever kernel is faster for the data's
    size: the reference for fewer than ``SMALL_CLUSTERS`` clusters, else the fast one (on one
    thread when ``threads`` is False), except on its first use on a machine for data of at most
    ``FIRST_USE_WORK``, where the reference's run is shorter than the fast kernel's compile. Both
    give the same groups and release the GIL."""
    n = X.shape[0]
    clusters = n // max(k, 1)
    if clusters < SMALL_CLUSTERS or (n * clusters * X.shape[1] <= FIRST_USE_WORK
                                     and not compiled_or_cached(ona_star_fast_kernel)):
        X = np.ascontiguousarray(X, dtype=np.float64)
        return ona_star_labels(X, k, max_rounds, spare, scale, stop)
    return ona_star_fast_labels(X, k, max_rounds, use_tree, spare, scale, stop, threads=threads)
