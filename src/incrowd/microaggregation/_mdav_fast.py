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
* The two passes left (distances to P and to Q) are screened on 16-bit codes of the columns
  (30 bytes a row at 15 columns, so more of the data stays in cache): the screened distance is
  within a proven margin of the float64 one (:func:`quantize`), so only the rows within two
  margins of the k-th nearest (or farthest) get their float64 distance, computed from the row
  exactly as the scan computes it; the selection among them is the scan's. Heavy tails widen
  the margin (more rows get the float64 distance), never the answer. (Inputs must stay below
  1e15 in magnitude; ``incrowd.MDAV`` uses the scan kernel otherwise.)

Serial on purpose: numba's default threading layer aborts when two threads of one process (two
web requests, say) enter a parallel kernel at once, and ``prange`` over chunks gained 1.45x at
most on 2 cores.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._kernels import maybe_compact, row_sq_dist

_U = 2.0**-53
_REBUILD_MIN = 256


@njit(cache=True)
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@njit(cache=True)
def _update_sum(x, sign, s_hi, s_lo, abs_sum):
    for j in range(x.shape[0]):
        v = sign * x[j]
        s, e = _two_sum(s_hi[j], v)
        s_hi[j] = s
        s_lo[j] += e
        abs_sum[j] += sign * abs(v)


_CHUNK = 2048


@njit(cache=True)
def _insert(buf_d, buf_s, filled, size, d, slot, nearest):
    """Keep the best ``size`` (d, slot) pairs, sorted: ascending d for nearest, descending for
    farthest; the lower slot first on equal d in both."""
    if filled == size:
        wd = buf_d[size - 1]
        ws = buf_s[size - 1]
        if nearest:
            if d > wd or (d == wd and slot > ws):
                return filled
        elif d < wd or (d == wd and slot > ws):
            return filled
    pos = filled if filled < size else size - 1
    while pos > 0:
        pd = buf_d[pos - 1]
        ps = buf_s[pos - 1]
        before = (pd < d or (pd == d and ps < slot)) if nearest else (pd > d or (pd == d and ps < slot))
        if before:
            break
        buf_d[pos] = pd
        buf_s[pos] = ps
        pos -= 1
    buf_d[pos] = d
    buf_s[pos] = slot
    return filled + 1 if filled < size else filled


_U32 = 2.0**-24


@njit(cache=True)
def _kth_insert(buf, filled, size, v, smallest):
    """Keep the ``size`` smallest (or largest) values seen, sorted; returns the new fill."""
    if filled == size and ((smallest and v >= buf[size - 1]) or (not smallest and v <= buf[size - 1])):
        return filled
    pos = filled if filled < size else size - 1
    while pos > 0 and ((smallest and buf[pos - 1] > v) or (not smallest and buf[pos - 1] < v)):
        buf[pos] = buf[pos - 1]
        pos -= 1
    buf[pos] = v
    return filled + 1 if filled < size else filled


@njit(cache=True)
def _outward32(value, direction):
    """A float32 at or beyond ``value`` in ``direction`` (+1 up, -1 down)."""
    widened = value + direction * (abs(value) * 1e-6 + 1e-30)
    return np.float32(widened)


@njit(cache=True)
def screened_pass(X, codes, ids, n_slots, alive, point, point_codes, weights, exclude, n_near, n_far, margin,
                  near_out, far_out, cand, cand_d, tmp):
    """The n_near nearest live slots to ``point`` (``exclude`` skipped) and the n_far farthest,
    sorted by (distance, slot) as full sorts would give; distances screened in float32 and
    decided in float64.

    The screened distance (int16 codes, float32 weights and sums) is within ``margin`` of the
    float64 one (see :func:`quantize`), so rows whose screened distance is beyond the n-th best
    plus 2 margins cannot be among the n nearest (or farthest); the others get their float64
    distance, computed from the row exactly as the scan computes it, and the selection among
    them is the scan's selection."""
    m = codes.shape[0]
    near_buf = np.empty(max(n_near, 1), np.float32)
    far_buf = np.empty(max(n_far, 1), np.float32)
    fn = 0
    ff = 0
    n_cand = 0
    two = 2.0 * margin
    # running thresholds in float32, rounded outward so that no rounding eats into the margin
    hi32 = np.float32(np.inf) if n_near > 0 else np.float32(-np.inf)
    lo32 = np.float32(-np.inf) if n_far > 0 else np.float32(np.inf)
    for s in range(0, n_slots, _CHUNK):
        e = min(s + _CHUNK, n_slots)
        w = e - s
        for i in range(w):
            tmp[i] = np.float32(0.0)
        for j in range(m):
            pj = np.float32(point_codes[j])
            wj = weights[j]
            col = codes[j, s:e]
            for i in range(w):
                diff = np.float32(col[i]) - pj  # exact: codes are small integers
                tmp[i] += wj * (diff * diff)
        for i in range(w):
            v = tmp[i]
            if v > hi32 and v < lo32:
                continue  # neither near nor far: the common case, one comparison pair
            slot = s + i
            if not alive[slot] or slot == exclude:
                continue
            if n_near > 0 and (fn < n_near or v < near_buf[n_near - 1]):
                fn = _kth_insert(near_buf, fn, n_near, v, True)
                if fn == n_near:
                    hi32 = _outward32(float(near_buf[n_near - 1]) + two, 1.0)
            if n_far > 0 and (ff < n_far or v > far_buf[n_far - 1]):
                ff = _kth_insert(far_buf, ff, n_far, v, False)
                if ff == n_far:
                    lo32 = _outward32(float(far_buf[n_far - 1]) - two, -1.0)
            # thresholds only tighten, so every final candidate is collected here
            cand[n_cand] = slot
            cand_d[n_cand] = v
            n_cand += 1
    hi = float(near_buf[n_near - 1]) + two if n_near > 0 else np.inf
    lo = float(far_buf[n_far - 1]) - two if n_far > 0 else -np.inf
    near_d = np.empty(max(n_near, 1))
    far_d = np.empty(max(n_far, 1))
    gn = 0
    gf = 0
    for u in range(n_cand):
        v = float(cand_d[u])
        take_near = n_near > 0 and v <= hi
        take_far = n_far > 0 and v >= lo
        if not (take_near or take_far):
            continue
        slot = cand[u]
        d = row_sq_dist(X, ids[slot], point)
        if take_near:
            gn = _insert(near_d, near_out, gn, n_near, d, slot, True)
        if take_far:
            gf = _insert(far_d, far_out, gf, n_far, d, slot, False)
    return gn, gf


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


@njit(cache=True)
def _screen(X, codes, weights, margin, ids, n_slots, alive_slot, row, seed_slot, n_near, n_far, point,
            point_codes, sel, far, cand, cand_d, tmp):
    """Distances from ``row`` (in slot ``seed_slot``): its nearest and farthest live slots."""
    for j in range(X.shape[1]):
        point[j] = X[row, j]
        point_codes[j] = codes[j, seed_slot]
    screened_pass(X, codes, ids, n_slots, alive_slot, point, point_codes, weights, seed_slot, n_near, n_far,
                  margin, sel, far, cand, cand_d, tmp)


@njit(cache=True)
def quantize(X):
    """Column-major int16 codes of X, the float32 weights, and the proven screening margin.

    Column j is coded q = round((x - mid_j) / s_j) with s_j = range_j / 64000, so
    |x - (mid_j + q s_j)| <= s_j / 2 (plus a rounding far below it), and for two rows
    |(x_j - p_j) - s_j (q_x - q_p)| <= s_j. Summed over the columns, the real squared distance
    differs from sum_j s_j^2 (q_x - q_p)^2 by at most sum_j s_j^2 (2 * 64001 + 1); float32
    weights, squares and sums add (m + 4) units of 2**-24 on at most sum_j w_j 64001^2, and the
    scan's float64 sum its own (m + 3) units of 2**-53 on the same. The margin is their total.
    """
    n, m = X.shape
    codes = np.empty((m, n), np.int16)
    weights = np.empty(m, np.float32)
    margin = 0.0
    top = 0.0
    for j in range(m):
        lo_j = X[0, j]
        hi_j = X[0, j]
        for i in range(n):
            lo_j = min(lo_j, X[i, j])
            hi_j = max(hi_j, X[i, j])
        step = (hi_j - lo_j) / 64000.0 if hi_j > lo_j else 1.0
        mid = (lo_j + hi_j) / 2.0
        for i in range(n):
            codes[j, i] = np.int16(np.round((X[i, j] - mid) / step))
        weights[j] = np.float32(step * step)
        margin += float(weights[j]) * (2.0 * 64001.0 + 1.0) * (1.0 + 1e-6)
        top += float(weights[j]) * 64001.0 * 64001.0
    margin += 1.01 * ((m + 4) * _U32 + (m + 3) * _U) * top
    return codes, weights, margin


@njit(cache=True)
def _take(X, ids, seed_slot, sel, k, group, labels, alive_slot, alive, s_hi, s_lo, abs_sum):
    for t in range(k):
        s = seed_slot if t == 0 else sel[t - 1]
        labels[ids[s]] = group
        alive_slot[s] = False
        alive[ids[s]] = False
        _update_sum(X[ids[s]], -1.0, s_hi, s_lo, abs_sum)


@njit(cache=True)
def mdav_fast_labels(X, k):
    """Group id per row, equal to ``mdav_labels(X, k)``; returns (labels, exact centroids needed,
    order rebuilds)."""
    n, m = X.shape
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels, 0, 0
    codes, weights, margin = quantize(X)
    point_codes = np.empty(m, np.int16)
    cand = np.empty(n, np.int64)
    cand_d = np.empty(n, np.float32)
    tmp = np.empty(_CHUNK, np.float32)
    ids = np.arange(n)
    slot_of = np.arange(n)
    alive_slot = np.ones(n, np.bool_)
    alive = np.ones(n, np.bool_)  # by row
    point = np.empty(m)
    sel = np.empty(max(k - 1, 1), np.int64)
    far = np.empty(k + 1, np.int64)
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
    for j in range(m):
        c0[j] = (s_hi[j] + s_lo[j]) / n
    n_order = _radius_order(X, ids, n, c0, order, radius)
    head = 0
    n_slots = n
    n_live = n
    updates = n
    group = 0
    fallbacks = 0
    rebuilds = 0
    walked_since = 0
    while n_live >= 2 * k:
        # -- P (see the module docstring)
        delta2 = 0.0
        shift2 = 0.0
        for j in range(m):
            c[j] = (s_hi[j] + s_lo[j]) / n_live
            dj = (1.01 * (n_live + 4) * _U * abs_sum[j] + 4.0 * updates * _U * _U * abs_total[j]) / n_live
            dj += 2.0 * _U * abs(c[j]) + 1e-300
            delta2 += dj * dj
            sh = c[j] - c0[j]
            shift2 += sh * sh
        delta = math.sqrt(delta2)
        shift = math.sqrt(shift2) * (1.0 + 2.0 * gamma)
        while not alive[order[head]]:
            head += 1
        best_d, walked, _ = _walk(X, c, order, radius, head, n_order, alive, shift, gamma, -1.0, p_cand)
        rr = math.sqrt(best_d) * (1.0 + gamma)
        err = delta * (2.0 * rr + delta) + 2.0 * gamma * (rr + delta) ** 2
        threshold = max(best_d - 2.02 * err, 0.0)
        _, _, n_cand = _walk(X, c, order, radius, head, n_order, alive, shift, gamma, threshold, p_cand)
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
            fallbacks += 1
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
        walked_since += walked
        if walked > _REBUILD_MIN and walked_since > n_live:
            # the walks since the last ordering cost as much as a new one: order the live rows
            # around the current centroid (so walking never costs more than ordering, amortized)
            for j in range(m):
                c0[j] = c[j]
            live_rows = np.empty(n_live, np.int64)
            w = 0
            for i in range(n_slots):
                if alive_slot[i]:
                    live_rows[w] = ids[i]
                    w += 1
            n_order = _radius_order(X, live_rows, n_live, c0, order, radius)
            head = 0
            rebuilds += 1
            walked_since = 0
        # -- P's group and the candidates for Q from one pass; Q's group from a second
        seed_slot = slot_of[p]
        _screen(X, codes, weights, margin, ids, n_slots, alive_slot, p, seed_slot, k - 1, k + 1, point,
                point_codes, sel, far, cand, cand_d, tmp)
        _take(X, ids, seed_slot, sel, k, group, labels, alive_slot, alive, s_hi, s_lo, abs_sum)
        group += 1
        q_slot = -1
        for t in range(k + 1):  # the farthest from P not in P's group (it has k rows)
            if alive_slot[far[t]]:
                q_slot = far[t]
                break
        _screen(X, codes, weights, margin, ids, n_slots, alive_slot, ids[q_slot], q_slot, k - 1, 0, point,
                point_codes, sel, far, cand, cand_d, tmp)
        _take(X, ids, q_slot, sel, k, group, labels, alive_slot, alive, s_hi, s_lo, abs_sum)
        group += 1
        updates += 2 * k
        n_live -= 2 * k
        n_slots = maybe_compact(codes, ids, slot_of, alive_slot, n_slots, n_live)
    rest = group if n_live >= k else group - 1
    for i in range(n_slots):
        if alive_slot[i]:
            labels[ids[i]] = rest
    return labels, fallbacks, rebuilds
