"""MDAV "generic" with the groups of ``_mdav_kernel.mdav_labels``, exactly, in fewer passes.

Per round the scan kernel makes four passes over the remaining rows: the centroid, distances to
it (for P), distances to P (P's group and Q), distances to Q (Q's group). This kernel makes two:

* **No centroid pass.** The sum of the remaining rows is kept in double-double arithmetic
  (error-free two-sums), within about n * 2**-106 of the real sum; the scan's float centroid
  (a sequential sum in row order) lies within the classical bound ``delta`` of it. Every row
  whose distance to the double-double centroid comes within the error ``delta`` can cause of the
  farthest one is a candidate for P: one candidate (or copies of one row) is P; otherwise the
  scan's centroid is computed as the scan does and decides (rare: near-ties).
* **No distance pass for P.** Rows are kept in decreasing distance ``e`` from a reference point
  c0 (an earlier centroid); since |x - c| <= e(x) + |c - c0|, the search for P walks down that
  order and stops as soon as the bound falls below the best distance found. The order is rebuilt
  around the current centroid when the walks grow long.
* The two passes left (distances to P and to Q) are screened on 16-bit codes of the rows
  (``_screen``: exact integer distances between the codes, 32 products per instruction, and
  proven bars around the n-th best), so only a handful of rows per pass get their float64
  distance, computed from the row exactly as the scan computes it; the selection among them is
  the scan's. Heavy tails widen the bars (more rows get the float64 distance), never the answer.
  (Inputs must stay below 1e15 in magnitude; ``incrowd.MDAV`` uses the scan kernel otherwise.)
* Large passes are split over numba's threads (``parallel_from``): a pass over a million rows
  is bound by memory bandwidth, and two cores stream twice the bytes of one; ``narrow`` int8
  codes halve those bytes again (``incrowd.MDAV`` takes them from 500,000 rows on). Whether a
  pass runs on the threads is decided pass by pass from the passes' own times (``_adaptive``):
  on a machine shared with other work the threaded passes wait for descheduled threads, and the
  kernel then goes serial.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit

from .._adaptive import monotonic_ns, new_tuner, record, use_threads
from .._kernels import row_sq_dist
from ._screen import (
    fresh_slots,
    maybe_compact_blocked,
    quantize,
    quantize_narrow,
    screened_pass,
    screened_pass_parallel,
    slot_words,
)

_U = 2.0**-53
_REBUILD_MIN = 256
# Below this many slots a pass takes under about 10 microseconds, and a second thread gains
# little over its start-up (measured on 50,000 x 15, 2 cores: 16,384 beat 4,096 to 65,536).
PARALLEL_FROM = 16384


@njit(cache=True, inline="always")
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(cache=True, inline="always")
def _update_sum(x, sign, s_hi, s_lo, abs_sum):
    for j in range(x.shape[0]):
        v = sign * x[j]
        s, e = _two_sum(s_hi[j], v)
        s_hi[j] = s
        s_lo[j] += e
        abs_sum[j] += sign * abs(v)



@njit(cache=True, inline="always")
def centroid_and_error(s_hi, s_lo, abs_sum, abs_total, n_live, updates, c):
    """The double-double centroid of the live rows into ``c``; returns ``delta``, the bound on its
    distance to the scan's float centroid (a sequential sum in row order)."""
    delta2 = 0.0
    for j in range(c.shape[0]):
        c[j] = (s_hi[j] + s_lo[j]) / n_live
        dj = (1.01 * (n_live + 4) * _U * abs_sum[j] + 4.0 * updates * _U * _U * abs_total[j]) / n_live
        dj += 2.0 * _U * abs(c[j]) + 1e-300
        delta2 += dj * dj
    return math.sqrt(delta2)


@njit(cache=True, inline="always")
def p_threshold(best_d, delta, gamma):
    """Every row that can be the scan's P is at least this far (squared) from the double-double
    centroid, whose farthest live row is ``best_d`` away."""
    rr = math.sqrt(best_d) * (1.0 + gamma)
    err = delta * (2.0 * rr + delta) + 2.0 * gamma * (rr + delta) ** 2
    return max(best_d - 2.02 * err, 0.0)


@njit(cache=True)
def choose_p(X, p_cand, n_cand, alive, n_live, exact_c):
    """The scan's P among the candidates: copies of one row give its lowest row; otherwise the
    scan's own centroid decides. Returns (P, 1 if that centroid was needed else 0)."""
    n, m = X.shape
    fell_back = 0
    same = True
    for u in range(1, n_cand):
        for j in range(m):
            if X[p_cand[u], j] != X[p_cand[0], j]:
                same = False
                break
        if not same:
            break
    p = p_cand[0]
    if same:
        for u in range(1, n_cand):
            if p_cand[u] < p:
                p = p_cand[u]
    else:
        fell_back = 1
        for j in range(m):
            exact_c[j] = 0.0
        for i in range(n):  # the scan's centroid: live rows in row order
            if alive[i]:
                for j in range(m):
                    exact_c[j] += X[i, j]
        for j in range(m):
            exact_c[j] /= n_live
        best = -1.0
        for u in range(n_cand):
            du = row_sq_dist(X, p_cand[u], exact_c)
            if du > best or (du == best and p_cand[u] < p):
                best = du
                p = p_cand[u]
    return p, fell_back


@njit(cache=True)
def _walk(X, c, order, radius, head, n_order, alive, shift, gamma, threshold, out):
    """Walk the live rows down the radius order while |x - c| <= radius + shift can still reach
    the bar. With ``threshold`` < 0: the largest distance to c (the bar rises as found); returns
    (it, rows walked, 0). Otherwise: the rows at distance >= threshold into ``out``; returns
    (-1, rows walked, their number)."""
    best_d = -1.0
    walked = 0
    n_out = 0
    for t in range(head, n_order):
        r = order[t]
        if not alive[r]:
            continue
        bound = (radius[t] + shift) * (1.0 + 2.0 * gamma)
        if bound * bound < (best_d if threshold < 0.0 else threshold):
            break
        walked += 1
        dr = row_sq_dist(X, r, c)
        if threshold < 0.0:
            if dr > best_d:
                best_d = dr
        elif dr >= threshold:
            out[n_out] = r
            n_out += 1
    return best_d, walked, n_out


@njit(cache=True)
def _radius_order(X, alive_rows, n_alive, c0, order, radius):
    """Live rows by decreasing distance from c0 (lowest row first on ties), into order/radius."""
    e = np.empty(n_alive)
    for t in range(n_alive):
        e[t] = math.sqrt(row_sq_dist(X, alive_rows[t], c0))
    idx = np.argsort(-e, kind="mergesort")
    for t in range(n_alive):
        order[t] = alive_rows[idx[t]]
        radius[t] = e[idx[t]]
    return n_alive


# the radius walk's state between rounds, kept in one int64 array
_HEAD, _N_ORDER, _WALKED_SINCE, _REBUILDS, _FALLBACKS, _WALK_STATE = 0, 1, 2, 3, 4, 5


@njit(cache=True)
def new_walk(X, s_hi, s_lo, c0, order, radius):
    """The radius walk's state over all rows of X, ordered around c0, set here to their mean (from
    their double-double sum)."""
    for j in range(X.shape[1]):
        c0[j] = (s_hi[j] + s_lo[j]) / X.shape[0]
    walk = np.zeros(_WALK_STATE, np.int64)
    walk[_N_ORDER] = _radius_order(X, np.arange(X.shape[0]), X.shape[0], c0, order, radius)
    return walk


@njit(cache=True)
def p_search_state(X):
    """What every round's search for P (:func:`find_p`) starts from: the rows' double-double column
    sums with their absolute sums (the error bound), the centroid buffers, the radius walk's
    order, radii and state around the mean, the candidates' buffer and the rounding factor."""
    n, m = X.shape
    s_hi = np.zeros(m)
    s_lo = np.zeros(m)
    abs_sum = np.zeros(m)
    for i in range(n):
        _update_sum(X[i], 1.0, s_hi, s_lo, abs_sum)
    abs_total = abs_sum.copy()
    c = np.empty(m)
    c0 = np.empty(m)
    exact_c = np.empty(m)
    order = np.empty(n, np.int64)
    radius = np.empty(n)
    p_cand = np.empty(n, np.int64)
    gamma = (m + 3) * _U
    walk = new_walk(X, s_hi, s_lo, c0, order, radius)
    return s_hi, s_lo, abs_sum, abs_total, c, c0, exact_c, order, radius, p_cand, gamma, walk


@njit(cache=True)
def find_p(X, s_hi, s_lo, abs_sum, abs_total, n_live, updates, alive, c, c0, exact_c, order, radius, p_cand,
           walk, gamma):
    """The scan's P: the live row farthest from the scan's centroid, lowest row on ties."""
    m = X.shape[1]
    delta = centroid_and_error(s_hi, s_lo, abs_sum, abs_total, n_live, updates, c)
    shift2 = 0.0
    for j in range(m):
        sh = c[j] - c0[j]
        shift2 += sh * sh
    shift = math.sqrt(shift2) * (1.0 + 2.0 * gamma)
    head = walk[_HEAD]
    while not alive[order[head]]:
        head += 1
    walk[_HEAD] = head
    n_order = walk[_N_ORDER]
    best_d, walked, _ = _walk(X, c, order, radius, head, n_order, alive, shift, gamma, -1.0, p_cand)
    threshold = p_threshold(best_d, delta, gamma)
    _, _, n_cand = _walk(X, c, order, radius, head, n_order, alive, shift, gamma, threshold, p_cand)
    p, fell_back = choose_p(X, p_cand, n_cand, alive, n_live, exact_c)
    walk[_FALLBACKS] += fell_back
    walk[_WALKED_SINCE] += walked
    if walked > _REBUILD_MIN and walk[_WALKED_SINCE] > n_live:
        # the walks since the last ordering cost as much as a new one: order the live rows
        # around the current centroid (so walking never costs more than ordering, amortized)
        for j in range(m):
            c0[j] = c[j]
        live_rows = np.empty(n_live, np.int64)
        w = 0
        for i in range(X.shape[0]):  # in row order, as the slots keep them
            if alive[i]:
                live_rows[w] = i
                w += 1
        walk[_N_ORDER] = _radius_order(X, live_rows, n_live, c0, order, radius)
        walk[_HEAD] = 0
        walk[_REBUILDS] += 1
        walk[_WALKED_SINCE] = 0
    return p


@njit(cache=True)
def _screen(X, data, norms, npairs, gap, ids, n_slots, alive_slot, row, seed_slot, n_near, n_far, point,
            qwords, sel, far, cand, cand_d, parallel_from, shares, tuner):
    """Distances from ``row`` (in slot ``seed_slot``): its nearest and farthest live slots.
    ``tuner`` None compiles the serial passes only; an array (``_adaptive``) lets passes over at
    least ``parallel_from`` slots run on the threads while they pay."""
    for j in range(X.shape[1]):
        point[j] = X[row, j]
    slot_words(data, npairs, seed_slot, qwords)
    q_norm = np.int64(norms[seed_slot])
    if tuner is None:
        screened_pass(X, data, norms, npairs, ids, n_slots, alive_slot, point, qwords, q_norm, seed_slot, n_near,
                      n_far, gap, sel, far, cand, cand_d)
    elif parallel_from <= n_slots:
        threaded = use_threads(tuner)
        t0 = monotonic_ns()
        if threaded:
            screened_pass_parallel(X, data, norms, npairs, ids, n_slots, alive_slot, point, qwords, q_norm,
                                   seed_slot, n_near, n_far, gap, sel, far, cand, cand_d, shares)
        else:
            screened_pass(X, data, norms, npairs, ids, n_slots, alive_slot, point, qwords, q_norm, seed_slot,
                          n_near, n_far, gap, sel, far, cand, cand_d)
        record(tuner, threaded, monotonic_ns() - t0, n_slots)
    else:
        screened_pass(X, data, norms, npairs, ids, n_slots, alive_slot, point, qwords, q_norm, seed_slot, n_near,
                      n_far, gap, sel, far, cand, cand_d)


@njit(cache=True, inline="always")
def _take(X, ids, seed_slot, sel, k, group, labels, alive_slot, alive, s_hi, s_lo, abs_sum):
    for t in range(k):
        s = seed_slot if t == 0 else sel[t - 1]
        labels[ids[s]] = group
        alive_slot[s] = False
        alive[ids[s]] = False
        _update_sum(X[ids[s]], -1.0, s_hi, s_lo, abs_sum)


def mdav_fast_labels(X, k, parallel_from=-1, shares=2, narrow=False, tuner=None):
    """Group id per row, equal to ``mdav_labels(X, k)``; returns (labels, exact centroids needed,
    order rebuilds). With ``parallel_from`` >= 0, passes over at least that many slots may screen
    in ``shares`` shares on numba's threads, when ``tuner`` (``_adaptive.new_tuner()``, made here
    if None) finds that they pay: hold ``_screen.PARALLEL_LOCK`` (``PARALLEL_FROM`` is the
    measured break-even on 2 cores). ``narrow``: int8 codes instead of int16.

    The choices are made here, in Python, so a call compiles only its own variant: the serial
    one never compiles the threaded passes, and int16 data never compiles the int8 rounds."""
    n = X.shape[0]
    if n < 2 * k:
        return np.zeros(n, np.int64), 0, 0
    data, norms, npairs, gap, _ = quantize_narrow(X) if narrow else quantize(X)
    if parallel_from < 0:
        return _mdav_rounds(X, k, data, norms, npairs, gap, -1, 1, None)
    if tuner is None:
        tuner = new_tuner()
    # A kernel loaded from numba's cache does not start the thread pool its parallel callee
    # needs (it crashed when nothing had started it before); asking for the count starts it.
    numba.get_num_threads()
    return _mdav_rounds(X, k, data, norms, npairs, gap, parallel_from, shares, tuner)


@njit(cache=True)
def _mdav_rounds(X, k, data, norms, npairs, gap, parallel_from, shares, tuner):
    n, m = X.shape
    labels = np.full(n, -1, np.int64)
    qwords = np.empty(npairs, np.int32)
    cand = np.empty(n, np.int64)
    cand_d = np.empty(n, np.int64)
    ids, slot_of, alive_slot, alive = fresh_slots(n, norms.shape[0])
    point = np.empty(m)
    sel = np.empty(max(k - 1, 1), np.int64)
    far = np.empty(k + 1, np.int64)
    s_hi, s_lo, abs_sum, abs_total, c, c0, exact_c, order, radius, p_cand, gamma, walk = p_search_state(X)
    n_slots = n
    n_live = n
    updates = n
    group = 0
    while n_live >= 2 * k:
        # -- P (see the module docstring)
        p = find_p(X, s_hi, s_lo, abs_sum, abs_total, n_live, updates, alive, c, c0, exact_c, order, radius,
                   p_cand, walk, gamma)
        # -- P's group and the candidates for Q from one pass; Q's group from a second
        seed_slot = slot_of[p]
        _screen(X, data, norms, npairs, gap, ids, n_slots, alive_slot, p, seed_slot, k - 1, k + 1, point,
                qwords, sel, far, cand, cand_d, parallel_from, shares, tuner)
        _take(X, ids, seed_slot, sel, k, group, labels, alive_slot, alive, s_hi, s_lo, abs_sum)
        group += 1
        q_slot = -1
        for t in range(k + 1):  # the farthest from P not in P's group (it has k rows)
            if alive_slot[far[t]]:
                q_slot = far[t]
                break
        _screen(X, data, norms, npairs, gap, ids, n_slots, alive_slot, ids[q_slot], q_slot, k - 1, 0, point,
                qwords, sel, far, cand, cand_d, parallel_from, shares, tuner)
        _take(X, ids, q_slot, sel, k, group, labels, alive_slot, alive, s_hi, s_lo, abs_sum)
        group += 1
        updates += 2 * k
        n_live -= 2 * k
        n_slots = maybe_compact_blocked(data, norms, npairs, ids, slot_of, alive_slot, n_slots, n_live)
    rest = group if n_live >= k else group - 1
    for i in range(n_slots):
        if alive_slot[i]:
            labels[ids[i]] = rest
    return labels, walk[_FALLBACKS], walk[_REBUILDS]
