"""Mondrian, Mondrian V and Mondrian V2D (Thaeter & Reischuk (2021), Algorithms 4 and 5) as one numba kernel.

The partition it computes is defined in :mod:`incrowd.microaggregation.mondrian.mondrian`; in short:
a part is split while it has more than 2k rows (with ``split_2k`` also at exactly 2k); the
direction is the one of widest range, of largest sum of squared deviations, or the latter over
the axes and the diagonals x_a + x_b, x_a - x_b (a < b); the left child gets the floor(m/2) rows
that come first in the part's order, which is (projection, then the projections of the
ancestors' cuts from the latest to the root, then row index).

Exactness contract, as in ``_kernels``: the groups equal those of the plain recursive reference
(``tests/reference.py``, ``mondrian``) bit for bit, because

* a projection is ``x[a]`` or ``x[a] + x[b]`` / ``x[a] - x[b]`` (one rounding, same operation);
* a score sums over the part's rows in increasing row index, sequentially from 0: the mean is
  that sum divided by the row count, the score the sequential sum of squared deviations from it
  (the "unit" diagonal convention multiplies by 0.5, which is exact);
* the first of equal scores (axes in column order, then the pairs a < b in lexicographic order,
  "+" before "-") is taken.

Speed: the rows of every part are kept contiguous in a row-major working copy (two buffers,
ping-pong), so each node reads its rows sequentially; the parts keep their rows in increasing
row index (the partition is stable), so the score sums need no sorting. The cut is found by an
O(m) three-way quickselect on the projection (no sort per node); only when rows equal to the
median value straddle the cut are those tied rows ordered, by the ancestors' projections (least
significant first, stable), which reproduces "stable sort at every node" without sorting the
part. Continuous data never take that path.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import heap_sort_range, helper, stable_argsort

RULE_RANGE = 0  # Mondrian: widest range
RULE_VARIANCE = 1  # Mondrian V: largest variance over the d axes
RULE_V2D = 2  # Mondrian V2D: largest variance over the axes and the d(d-1) diagonals

_MAX_DEPTH = 128  # depth <= log2(n) + 1 < 64 because the left child has floor(m/2) >= k rows


@njit(cache=True)
def directions(d, rule):
    """(a, b, o) per direction: o = 0 for the axis a, +1 / -1 for x[a] + x[b] / x[a] - x[b]."""
    n_dirs = d * d if rule == RULE_V2D else d
    dir_a = np.empty(n_dirs, np.int64)
    dir_b = np.empty(n_dirs, np.int64)
    dir_o = np.zeros(n_dirs, np.int64)
    for j in range(d):
        dir_a[j] = j
        dir_b[j] = j
    if rule == RULE_V2D:
        t = d
        for a in range(d):
            for b in range(a + 1, d):
                for o in (1, -1):
                    dir_a[t] = a
                    dir_b[t] = b
                    dir_o[t] = o
                    t += 1
    return dir_a, dir_b, dir_o


@helper
def _best_range(W, s, e):
    """Axis of widest range (max - min) over the rows s..e-1; the first on ties."""
    d = W.shape[1]
    lo = W[s].copy()
    hi = W[s].copy()
    for i in range(s + 1, e):
        for j in range(d):
            v = W[i, j]
            if v < lo[j]:
                lo[j] = v
            elif v > hi[j]:
                hi[j] = v
    best = 0
    best_score = hi[0] - lo[0]
    for j in range(1, d):
        sc = hi[j] - lo[j]
        if sc > best_score:
            best = j
            best_score = sc
    return best


@helper
def _best_variance(W, s, e, diag, unit, sums, sq):
    """Direction of largest sum of squared deviations over rows s..e-1 (first on ties).

    ``sums`` and ``sq`` are scratch of length d*d. Axis j lives at j, the pair a < b at
    d + 2*(pair index) for "+" and one more for "-", the order of :func:`directions`.
    """
    d = W.shape[1]
    m = e - s
    n_dirs = d * d if diag else d
    for t in range(n_dirs):
        sums[t] = 0.0
        sq[t] = 0.0
    for i in range(s, e):
        t = d
        for a in range(d):
            xa = W[i, a]
            sums[a] += xa
            if diag:
                for b in range(a + 1, d):
                    xb = W[i, b]
                    sums[t] += xa + xb
                    sums[t + 1] += xa - xb
                    t += 2
    for t in range(n_dirs):
        sums[t] /= m  # now the means
    for i in range(s, e):
        t = d
        for a in range(d):
            xa = W[i, a]
            dev = xa - sums[a]
            sq[a] += dev * dev
            if diag:
                for b in range(a + 1, d):
                    xb = W[i, b]
                    dp = (xa + xb) - sums[t]
                    dm = (xa - xb) - sums[t + 1]
                    sq[t] += dp * dp
                    sq[t + 1] += dm * dm
                    t += 2
    if diag and unit:
        for t in range(d, n_dirs):
            sq[t] *= 0.5
    best = 0
    best_score = sq[0]
    for t in range(1, n_dirs):
        if sq[t] > best_score:
            best = t
            best_score = sq[t]
    return best


@helper
def _project(W, s, e, a, b, o, out):
    """out[i - s] = projection of row i for i in s..e-1."""
    if o == 0:
        for i in range(s, e):
            out[i - s] = W[i, a]
    elif o > 0:
        for i in range(s, e):
            out[i - s] = W[i, a] + W[i, b]
    else:
        for i in range(s, e):
            out[i - s] = W[i, a] - W[i, b]


@njit(cache=True)
def select_kth(a, n, r):
    """The r-th smallest (0-based) of a[:n]; a[:n] is reordered. O(n) expected.

    Quickselect with a median-of-three pivot and a three-way partition (runs of equal values
    cost one pass); after 2*log2(n) + 8 rounds without finishing, the remaining range is sorted,
    so the worst case stays O(n log n).
    """
    lo = 0
    hi = n - 1
    rounds = 0
    limit = 8
    size = n
    while size > 1:
        limit += 2
        size >>= 1
    while lo < hi:
        rounds += 1
        if rounds > limit:
            heap_sort_range(a, lo, hi + 1)
            return a[r]
        mid = lo + (hi - lo) // 2
        x = a[lo]
        y = a[mid]
        z = a[hi]
        if x < y:
            if y < z:
                pivot = y
            elif x < z:
                pivot = z
            else:
                pivot = x
        else:
            if x < z:
                pivot = x
            elif y < z:
                pivot = z
            else:
                pivot = y
        lt = lo
        i = lo
        gt = hi
        while i <= gt:
            v = a[i]
            if v < pivot:
                a[i] = a[lt]
                a[lt] = v
                lt += 1
                i += 1
            elif v > pivot:
                a[i] = a[gt]
                a[gt] = v
                gt -= 1
            else:
                i += 1
        if r < lt:
            hi = lt - 1
        elif r > gt:
            lo = gt + 1
        else:
            return pivot
    return a[r]


@helper
def _order_ties(W, s, tie, n_tie, path, depth, dir_a, dir_b, dir_o):
    """Order the tied rows (offsets from s, in row order) by the ancestors' projections.

    Least significant key first: stable sorts by the root's cut direction, then the next one
    down, ..., then the parent's, so the parent's cut is the primary key and row index the last.
    """
    order = tie[:n_tie].copy()
    moved = np.empty(n_tie, np.int64)
    key = np.empty(n_tie)
    for level in range(depth):
        t = path[level]
        a = dir_a[t]
        b = dir_b[t]
        o = dir_o[t]
        for u in range(n_tie):
            i = s + order[u]
            if o == 0:
                key[u] = W[i, a]
            elif o > 0:
                key[u] = W[i, a] + W[i, b]
            else:
                key[u] = W[i, a] - W[i, b]
        perm = stable_argsort(key, False)
        for u in range(n_tie):
            moved[u] = order[perm[u]]
        order, moved = moved, order
    return order


@helper
def _move(src, dst, ids_src, ids_dst, i, w):
    d = src.shape[1]
    for j in range(d):
        dst[w, j] = src[i, j]
    ids_dst[w] = ids_src[i]


@njit(cache=True)
def mondrian_labels(X, k, rule, unit_diagonals=False, split_2k=False, leaf_max=0):
    """Group id per row of row-major float64 X; ids in depth-first order, lower side first.

    ``rule``: RULE_RANGE, RULE_VARIANCE or RULE_V2D. ``unit_diagonals``: score a diagonal by
    the variance along the unit vector (half that of x_a +- x_b). ``split_2k``: also split a
    part of exactly 2k rows. ``leaf_max``: a part of at most this many rows is not split
    either (MONA hands such parts to ONA*); 0 leaves the Mondrian rule alone.
    """
    return mondrian_subtree_labels(X, k, rule, unit_diagonals, split_2k, leaf_max, np.empty(0, np.int64))


@njit(cache=True)
def mondrian_subtree_labels(X, k, rule, unit_diagonals, split_2k, leaf_max, ancestors):
    """:func:`mondrian_labels` of a part that earlier cuts separated from a larger data set.

    X holds the part's rows in increasing row index of the whole data; ``ancestors`` are the
    direction ids (see :func:`directions`) of the cuts above it, root first, which order tied
    rows exactly as in the run over the whole data.
    """
    n, d = X.shape
    labels = np.empty(n, np.int64)
    min_split = 2 * k if split_2k else 2 * k + 1
    if n < min_split or n <= leaf_max:
        labels[:] = 0
        return labels
    dir_a, dir_b, dir_o = directions(d, rule)
    n_dirs = dir_a.shape[0]
    diag = rule == RULE_V2D
    buf0 = np.ascontiguousarray(X).copy()
    buf1 = np.empty_like(buf0)
    ids0 = np.arange(n)
    ids1 = np.empty(n, np.int64)
    proj = np.empty(n)
    scratch = np.empty(n)
    tie = np.empty(n, np.int64)
    to_left = np.zeros(n, np.bool_)
    sums = np.empty(n_dirs)
    sq = np.empty(n_dirs)
    path = np.empty(_MAX_DEPTH, np.int64)
    st_s = np.empty(_MAX_DEPTH + 2, np.int64)
    st_e = np.empty(_MAX_DEPTH + 2, np.int64)
    st_buf = np.empty(_MAX_DEPTH + 2, np.int64)
    st_depth = np.empty(_MAX_DEPTH + 2, np.int64)
    top = 0
    st_s[0] = 0
    st_e[0] = n
    st_buf[0] = 0
    for level in range(ancestors.shape[0]):
        path[level] = ancestors[level]
    st_depth[0] = ancestors.shape[0]
    top = 1
    group = 0
    while top > 0:
        top -= 1
        s = st_s[top]
        e = st_e[top]
        which = st_buf[top]
        depth = st_depth[top]
        m = e - s
        if which == 0:
            W = buf0
            ids = ids0
            W_out = buf1
            ids_out = ids1
        else:
            W = buf1
            ids = ids1
            W_out = buf0
            ids_out = ids0
        if m < min_split or m <= leaf_max:
            for i in range(s, e):
                labels[ids[i]] = group
            group += 1
            continue
        # -- direction
        if rule == RULE_RANGE:
            t = _best_range(W, s, e)
        else:
            t = _best_variance(W, s, e, diag, unit_diagonals, sums, sq)
        a = dir_a[t]
        b = dir_b[t]
        o = dir_o[t]
        # -- the cut: the r rows first in (projection, ancestors' projections, row) order
        r = m // 2
        _project(W, s, e, a, b, o, proj)
        for u in range(m):
            scratch[u] = proj[u]
        pivot = select_kth(scratch, m, r)
        n_less = 0
        n_tie = 0
        for u in range(m):
            v = proj[u]
            if v < pivot:
                n_less += 1
            elif v == pivot:
                tie[n_tie] = u
                n_tie += 1
        need = r - n_less  # tied rows that go left, 0 <= need < n_tie
        if need > 0:
            if depth > 0:
                order = _order_ties(W, s, tie, n_tie, path, depth, dir_a, dir_b, dir_o)
            else:
                order = tie[:n_tie]
            for u in range(need):
                to_left[order[u]] = True
        # -- stable partition into the other buffer
        wl = s
        wr = s + r
        for u in range(m):
            v = proj[u]
            if v < pivot or to_left[u]:
                _move(W, W_out, ids, ids_out, s + u, wl)
                wl += 1
                to_left[u] = False
            else:
                _move(W, W_out, ids, ids_out, s + u, wr)
                wr += 1
        path[depth] = t
        nxt = 1 - which
        st_s[top] = s + r
        st_e[top] = e
        st_buf[top] = nxt
        st_depth[top] = depth + 1
        top += 1
        st_s[top] = s
        st_e[top] = s + r
        st_buf[top] = nxt
        st_depth[top] = depth + 1
        top += 1
    return labels
