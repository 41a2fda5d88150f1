"""Numba building blocks shared by the MDAV family.

Exactness contract: every kernel reproduces, bit for bit, the plain textbook computation it
replaces, so the groups equal those of a straightforward implementation:

* squared distances are summed over the columns in column order, starting from 0;
* a centroid of "the remaining rows" is the sequential sum of those rows in row order, divided
  by their count;
* ties are broken by the lowest row index, both for "farthest" and for "k nearest".

The speed comes from the layout and from doing less, never from reordering arithmetic: the
points live column-major (one contiguous vector per attribute, so a distance pass vectorizes
across rows without changing any row's summation order), assigned rows are compacted away
lazily (scans stay dense and order-preserving), distances to a point are computed once and
reused (P's neighbours and the farthest point Q from P), and the k nearest are found by a
single partial-selection scan instead of a sort.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._runtime import small as _small

#: The decorator of a kernel that only other kernels call. Numba then builds no entry point for
#: Python (nor one for C) beside its machine code: for a small kernel that is a good part of its
#: compile, paid on the first use on every machine. Only kernels may call one: numba gives a call
#: from Python no error but a crash (a test checks that no Python code in the repository does).
#: (Both are numba's own target options, which its type stubs leave out.)
helper = njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)  # type: ignore[call-overload]

# the one compensated sum step, shared with the numpy twins so that both round alike
neumaier_add = helper(_small.neumaier_add)

# Compact when this fraction of the slots is dead: wasted distance work stays under it, and the
# amortized copying cost stays a small multiple of one pass.
_DEAD_FRACTION = 0.25


@helper
def sq_dist_to(Xt, n_slots, point, out):
    """out[i] = sum_j (Xt[j, i] - point[j])**2 for the first n_slots slots, summed in j order."""
    m = Xt.shape[0]
    for i in range(n_slots):
        out[i] = 0.0
    for j in range(m):
        pj = point[j]
        col = Xt[j]
        for i in range(n_slots):
            diff = col[i] - pj
            out[i] += diff * diff


@njit(cache=True)
def row_sq_dist(X, r, q):
    """Squared distance of row r of X to point q, summed in column order (as sq_dist_to sums)."""
    acc = 0.0
    for j in range(X.shape[1]):
        diff = X[r, j] - q[j]
        acc += diff * diff
    return acc


@njit(cache=True)
def farthest_alive(d, alive, n_slots):
    """Slot of the largest d among alive slots (lowest slot on ties); -1 when none is alive."""
    best = -1
    best_d = -1.0
    for i in range(n_slots):
        if alive[i] and (best < 0 or d[i] > best_d):
            best = i
            best_d = d[i]
    return best


@helper
def nearest_alive(d, alive, n_slots, exclude_a, exclude_b, count, out):
    """The ``count`` alive slots with the smallest d, ascending by (d, slot), into out.

    Slots ``exclude_a`` and ``exclude_b`` (use -1 for none) are skipped. Returns how many were
    found (fewer than ``count`` only when fewer alive slots exist). A single scan with a sorted
    buffer: a slot enters only if strictly closer than the current worst, which keeps the lower
    slot on ties because slots are scanned in increasing order.
    """
    if count <= 0:
        return 0
    buf_d = np.empty(count)
    filled = 0
    for i in range(n_slots):
        if not alive[i] or i == exclude_a or i == exclude_b:
            continue
        di = d[i]
        if filled == count and di >= buf_d[count - 1]:
            continue
        # inline, not through insert_pair: this scan is MDAV's hot loop, and the call showed
        pos = filled if filled < count else count - 1
        while pos > 0 and buf_d[pos - 1] > di:
            buf_d[pos] = buf_d[pos - 1]
            out[pos] = out[pos - 1]
            pos -= 1
        buf_d[pos] = di
        out[pos] = i
        if filled < count:
            filled += 1
    return filled


@njit(cache=True)
def rest_group(group, n_left, k):
    """The group of MDAV's last rows: a new one (id ``group``) when at least k are left, else
    they join the last group formed (fewer than 2k rows are left at the end)."""
    return group if n_left >= k else group - 1


@helper
def compact(Xt, ids, slot_of, alive, n_slots):
    """Move the alive slots to the front, keeping their order. Returns the new slot count.

    ``ids[slot]`` is the row held by a slot and ``slot_of[row]`` its inverse; both follow.
    """
    m = Xt.shape[0]
    w = 0
    for i in range(n_slots):
        if alive[i]:
            if w != i:
                for j in range(m):
                    Xt[j, w] = Xt[j, i]
                ids[w] = ids[i]
                slot_of[ids[w]] = w
            alive[w] = True
            w += 1
    for i in range(w, n_slots):
        alive[i] = False
    return w


@helper
def maybe_compact(Xt, ids, slot_of, alive, n_slots, n_live):
    if n_slots - n_live > _DEAD_FRACTION * n_slots:
        return compact(Xt, ids, slot_of, alive, n_slots)
    return n_slots


@njit(cache=True)
def centroid_alive(Xt, alive, n_slots, n_live, out):
    """Mean of the alive slots: sequential sum in slot (= row) order, then one division."""
    m = Xt.shape[0]
    for j in range(m):
        out[j] = 0.0
    for i in range(n_slots):
        if alive[i]:
            for j in range(m):
                out[j] += Xt[j, i]
    for j in range(m):
        out[j] /= n_live


@helper
def sequential_mean(X):
    """Column means of a row-major array by sequential summation in row order."""
    n, m = X.shape
    out = np.zeros(m)
    for i in range(n):
        for j in range(m):
            out[j] += X[i, j]
    for j in range(m):
        out[j] /= n
    return out


@helper
def sse_of_slots(Xt, slots, count):
    """Sum of squared distances of the given slots to their own mean."""
    m = Xt.shape[0]
    total = 0.0
    for j in range(m):
        s = 0.0
        for t in range(count):
            s += Xt[j, slots[t]]
        mu = s / count
        for t in range(count):
            diff = Xt[j, slots[t]] - mu
            total += diff * diff
    return total


@helper
def order_by_distance_desc(X, center):
    """Row indices sorted by decreasing squared distance to ``center``, lowest index on ties."""
    n, m = X.shape
    d = np.zeros(n)
    for j in range(m):
        cj = center[j]
        for i in range(n):
            diff = X[i, j] - cj
            d[i] += diff * diff
    return stable_argsort(d, True)


@helper
def stable_argsort(d, descending):
    """``np.argsort(d, kind="mergesort")`` (or of ``-d`` when ``descending``) for finite ``d``:
    equal values keep their index order. A bottom-up merge sort written out, because numba's own
    merge sort would compile into every kernel that sorts, 1-2 s on first use; a stable order is
    unique, so the answer is numpy's."""
    n = d.shape[0]
    a = np.arange(n)
    b = np.empty(n, np.int64)
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            t = lo
            while i < mid and j < hi:
                # the right run's index goes first only when its value strictly comes first
                right_first = d[a[j]] > d[a[i]] if descending else d[a[j]] < d[a[i]]
                if right_first:
                    b[t] = a[j]
                    j += 1
                else:
                    b[t] = a[i]
                    i += 1
                t += 1
            while i < mid:
                b[t] = a[i]
                i += 1
                t += 1
            while j < hi:
                b[t] = a[j]
                j += 1
                t += 1
            lo = hi
        a, b = b, a
        width *= 2
    return a


# ---------------------------------------------------------------------------------------------
# Primitives the searches of several families share (ONA, the greedy MDAV variants, the joint
# clustering): one definition each, so that every kernel keeps and breaks ties alike.


@njit(cache=True, inline="always")
def before(d, g, e, h):
    """(d, g) < (e, h) in (distance, id) order: a scan in ascending id keeps the lowest id
    among equal distances."""
    return d < e or (d == e and g < h)


@njit(cache=True, inline="always")
def pair_enters(bd, bg, filled, cap, d, g):
    """Whether (d, g) enters the ascending (distance, id) pairs ``bd``/``bg[:filled]`` kept to at
    most ``cap``: always while there is room, else when it comes before the last pair."""
    return filled < cap or before(d, g, bd[cap - 1], bg[cap - 1])


@njit(cache=True)
def insert_pair(bd, bg, filled, cap, d, g):
    """Top-k insertion: (d, g) into the ascending (distance, id) pairs ``bd``/``bg[:filled]``,
    kept to the ``cap`` smallest; returns the new count (unchanged, and the pairs too, when the
    pair does not enter). Fed in ascending id, this is the "strictly closer than the worst"
    buffer of a scan: equal distances keep the lower id first."""
    if not pair_enters(bd, bg, filled, cap, d, g):
        return filled
    pos = filled if filled < cap else cap - 1
    while pos > 0 and before(d, g, bd[pos - 1], bg[pos - 1]):
        bd[pos] = bd[pos - 1]
        bg[pos] = bg[pos - 1]
        pos -= 1
    bd[pos] = d
    bg[pos] = g
    return filled + 1 if filled < cap else filled


@njit(cache=True, inline="always")
def box_sq_dist(X, r, lo, hi, node):
    """Squared distance from row r of X to the box ``lo[node]``..``hi[node]`` (0 inside), summed
    in column order: no point in the box is closer, so a search prunes a box whose bound exceeds
    its best distance."""
    lb = 0.0
    for j in range(X.shape[1]):
        v = X[r, j]
        if v < lo[node, j]:
            diff = v - lo[node, j]
            lb += diff * diff
        elif v > hi[node, j]:
            diff = v - hi[node, j]
            lb += diff * diff
    return lb


@njit(cache=True, inline="always")
def join_growth(size, sqdist):
    """Group growth: SSE(G + x) - SSE(G) = |G| / (|G| + 1) * ||x - c_G||^2, for a group of
    ``size`` rows whose centroid lies at squared distance ``sqdist`` from x."""
    return size / (size + 1.0) * sqdist


@njit(cache=True, inline="always")
def growth_to_sums(X, row, sums, sizes, g):
    """``join_growth`` of X[row] into group g, its centroid ``sums[g] / sizes[g]`` (distance
    summed in column order)."""
    dist = 0.0
    for j in range(X.shape[1]):
        diff = X[row, j] - sums[g, j] / sizes[g]
        dist += diff * diff
    return join_growth(sizes[g], dist)


@helper
def _sift_down(a, lo, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[lo + child] < a[lo + child + 1]:
            child += 1
        if a[lo + root] < a[lo + child]:
            v = a[lo + root]
            a[lo + root] = a[lo + child]
            a[lo + child] = v
            root = child
        else:
            return


@njit(cache=True)
def heap_sort_range(a, lo, hi):
    """Sort a[lo:hi] in place, in O(n log n) and without extra memory.

    Written out rather than ``a[lo:hi] = np.sort(a[lo:hi])`` or ``a.sort()``: those make numba
    compile its sort into each caller, and an array assignment its error path (message formatting
    included), 1-2 s on first use. A sort of values has one answer, so results are the same."""
    n = hi - lo
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(a, lo, root, n)
    for end in range(n - 1, 0, -1):
        v = a[lo]
        a[lo] = a[lo + end]
        a[lo + end] = v
        _sift_down(a, lo, 0, end)
