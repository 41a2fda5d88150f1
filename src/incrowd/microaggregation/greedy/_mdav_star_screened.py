"""MDAV* with the groups of ``_greedy_kernels.mdav_star_labels``, exactly, at any column count.

The scan kernel spends a step (one origin x) on two float64 passes over all unassigned rows (the
k-1 nearest to x, and to x's nearest neighbour nu) and one over all groups (clos(x)); in 15
Gaussian columns the two row passes take almost all of the time, and 7,390 of the 10,651 steps
on 40,000 rows (k = 10) extended a group (one row assigned) rather than making one (k rows), so
a fit makes about five times MDAV's passes. The grid kernel (``_mdav_star_fast``) beats the scan only
in a few columns, and in 15 Gaussian columns no geometric bound prunes an exact k-nearest search
(ball bounds around clusters of 64 rows kept 84 % to 98 % of 100,000 rows): every query reads
every unassigned row. So the work stays about n^2 / k, and this kernel makes it cheap:

* **Screened passes.** A query reads 16-bit or 8-bit codes of the rows and keeps only rows
  within proven bars of its n-th best integer distance (``_screen``: the fast MDAV kernel's
  screen and compaction); those few get the float64 distance computed as the scan computes
  it, and the scan's (distance, row) order decides. The nu query marks x's slot dead.
* **Several queries per pass, kept lists.** A query keeps its k - 1 + ``_SPARE`` nearest. Such
  a list is the top of a total order over a set of rows that only shrinks, so while k - 1 of
  its rows are unassigned (and not excluded) they are exactly what a new pass would return,
  ties included. So a pass made for a query that has no valid list also serves the next
  origins in visiting order that have none, and the nu of those that have one: their lists are
  ready when their steps come (eight queries per pass left 2,595 passes for 21,300 queries at
  40,000 x 15). The codes are read chunk by chunk, each chunk screened for every query while it
  sits in the cache. A query with more candidates than its buffer holds (masses of copies of
  one row) is answered by the single-query pass instead.
* **clos(x)** is a weighted nearest-centroid search, growth = |g| / (|g| + 1) ||x - c_g||^2. The
  centroids, as the scan computes them (sums / sizes), are kept as int16 codes (one step for
  all columns, as ``_screen.quantize`` codes rows), updated when a group changes. Each code
  distance gives the real distance within s sqrt(m); the weight lies in [k/(k+1), w_max] with
  w_max from the largest group so far, so a group can win only if its code distance is within
  a bar of the least one; those few get the scan's float64 growth, the lowest id on ties.
* The bounds on cost (2) that would skip nu's pass (0 below, and the sum of squared distances
  from nu to x's other neighbours above, which bounds nu's SSE) decided no step at 40,000 x 15:
  the upper bound ran 2.4 times the cost, and the decision margin is far narrower.

Inputs must stay below 1e15 in magnitude (the bounds of ``_mdav_fast``); ``mdav_star_best_labels``
uses the scan kernel otherwise.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import trailing_zeros

from .._adaptive import monotonic_ns, new_tuner, record, use_threads
from .._kernels import growth_to_sums, insert_pair, row_sq_dist
from ..mdav._blockdot import LANES, block_dot, block_screen, per_word
from ..mdav._mdav_fast import _screen
from ..mdav._screen import (
    _CHUNK_BLOCKS,
    _INT32_MAX,
    _NORM_CAP,
    _clamp32,
    _kth_insert,
    _near_bar,
    code_frame,
    compact_blocked,
    fresh_slots,
    quantize,
    quantize_narrow,
    slot_words,
)
from ._fixed_center import add_to_group, next_origin, sse_growth_closest, visiting_order

# neighbours kept per query: k - 1 plus this many spares, so a list survives a few deaths
_SPARE = 2
_BATCH = 8  # query rows per pass
_WINDOW = 32  # next origins looked at for the batch
# Every query reads every slot, dead ones too, so the slots are compacted sooner than MDAV's (a
# quarter dead): about n / 2 queries share each compaction, which costs about one pass.
_DEAD_FRACTION = 1.0 / 16.0
_CAND_CAP = 1024  # candidates a batched query holds (copies beyond: the single-query pass)


def mdav_star_screened_labels(X, k, parallel_from=-1, shares=2, narrow=False, tuner=None, spare=_SPARE,
                              batch=_BATCH, window=_WINDOW):
    """Group id per row, equal to ``mdav_star_labels(X, k)``; returns (labels, stats) where stats
    counts [steps that extended, steps that made a group, batched passes, neighbour lists read
    from a kept list, queries answered by the single-query pass].

    ``parallel_from``, ``shares``, ``narrow`` and ``tuner`` as in ``_mdav_fast.mdav_fast_labels``
    (for the single-query passes; threaded passes need ``_screen.PARALLEL_LOCK`` held by the
    caller); ``spare``: neighbours kept beyond k - 1 (at least 1); ``batch``: query rows per
    pass; ``window``: next origins looked at to fill a batch."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2 * k:
        return np.zeros(n, np.int64), np.zeros(5, np.int64)
    data, norms, npairs, gap, _ = quantize_narrow(X) if narrow else quantize(X)
    if parallel_from < 0:
        return _mdav_star(X, k, data, norms, npairs, gap, -1, 1, None, spare, batch, window)
    if tuner is None:
        tuner = new_tuner()
    numba.get_num_threads()  # starts the thread pool a cached kernel does not (see _mdav_fast)
    return _mdav_star(X, k, data, norms, npairs, gap, parallel_from, shares, tuner, spare, batch, window)


@njit(cache=True)
def _centroid_coding(X):
    """mid, step and code limit of the centroid codes: ``_screen._quantize``'s int16 coding."""
    n, m = X.shape
    limit = math.floor(math.sqrt(_NORM_CAP / m))
    mid, step = code_frame(X, limit)
    return mid, step, limit


@njit(cache=True, inline="always")
def _code(v, mid_j, step, limit):
    return min(max(np.round((v - mid_j) / step), -limit), limit)


@njit(cache=True)
def _set_centroid(sums, sizes, g, mid, step, limit, cdata, cnorms, npairs):
    """The code of group g's centroid, from the centroid as the scan computes it."""
    m = sums.shape[1]
    base = (g // LANES) * npairs * 2 * LANES + 2 * (g % LANES)
    total = 0
    for j in range(m):
        q = _code(sums[g, j] / sizes[g], mid[j], step, limit)
        cdata[base + (j // 2) * 2 * LANES + (j % 2)] = np.int16(q)
        total += np.int64(q) * np.int64(q)
    cnorms[g] = total


@njit(cache=True)
def _clos(X, r, sums, sizes, n_groups, k, max_size, mid, step, limit, cdata, cnorms, npairs, qwords, acc, dc):
    """``sse_growth_closest(X, r, sums, sizes, n_groups)``, screened on the centroid codes."""
    m = X.shape[1]
    q_norm = 0
    for p in range(npairs):
        lo = np.int64(_code(X[r, 2 * p], mid[2 * p], step, limit))
        hi = np.int64(_code(X[r, 2 * p + 1], mid[2 * p + 1], step, limit)) if 2 * p + 1 < m else 0
        q_norm += lo * lo + hi * hi
        qwords[p] = (np.int32(hi) << 16) | (np.int32(lo) & 0xFFFF)
    d0 = np.int64(1) << 62
    n_blocks = (n_groups + LANES - 1) // LANES
    block_dot(acc, 0, cdata, 0, npairs, qwords, n_blocks)
    for g in range(n_groups):
        d = cnorms[g] + q_norm - 2 * np.int64(acc[g])
        dc[g] = d
        d0 = min(d0, d)
    # real distance / s within sqrt(m) of the code distance's root (both points coded within
    # s/2 per column); growth weights within [k/(k+1), w_max]; 1e-6 covers float rounding
    h = math.sqrt(m) * (1.0 + 1e-6)
    ratio = (max_size / (max_size + 1.0)) / (k / (k + 1.0)) * (1.0 + 1e-6)
    bar_root = math.sqrt(ratio) * (math.sqrt(float(d0)) + h) + h
    bar = bar_root * bar_root * (1.0 + 1e-9) + 1.0
    best = -1
    best_d = 0.0
    for g in range(n_groups):
        if dc[g] > bar:
            continue
        growth = growth_to_sums(X, r, sums, sizes, g)
        if best < 0 or growth < best_d:
            best = g
            best_d = growth
    return best, best_d


@njit(cache=True)
def _from_list(kept, kept_n, q, alive, exclude, count, out):
    """The first ``count`` rows of q's kept list that are alive and not ``exclude``, into out;
    False when fewer remain (then a pass is needed)."""
    got = 0
    for t in range(kept_n[q]):
        row = kept[q, t]
        if alive[row] and row != exclude:
            out[got] = row
            got += 1
            if got == count:
                return True
    return False


@njit(cache=True)
def _lists_screen(data, norms, npairs, gap, n_slots, alive_slot, q_lo, q_hi, n_near, qw, q_norm, q_slot, hi_v,
                  acc, masks, near_buf, cand, cand_d, fn, n_cand):
    """The screen of :func:`_lists_pass` for queries [q_lo, q_hi): candidates and near buffers."""
    n_blocks = (n_slots + LANES - 1) // LANES
    block = npairs * per_word(data) * LANES
    cap = cand.shape[1]
    words = masks.view(np.uint64)
    cb = 0
    size = 1
    while cb < n_blocks:
        eb = min(cb + size, n_blocks)
        size = min(2 * size, _CHUNK_BLOCKS)
        s0 = cb * LANES
        for q in range(q_lo, q_hi):
            nc = n_cand[q]
            if nc < 0:
                continue  # overflowed
            nb = eb - cb
            hi = hi_v[q]
            block_screen(acc, data, cb * block, npairs, qw[q], nb, norms[s0:s0 + nb * LANES], hi, _INT32_MAX, masks)
            qn = q_norm[q]
            qs = q_slot[q]
            f = fn[q]
            buf = near_buf[q]
            for t in range((nb + 3) // 4):
                if words[t] == 0:
                    continue  # no slot of these 4 blocks is under the bar: the common case
                for b in range(4 * t, min(4 * t + 4, nb)):
                    mask = np.uint64(masks[b])
                    while mask != 0:  # the flagged lanes only
                        i = b * LANES + trailing_zeros(mask)
                        mask &= mask - np.uint64(1)
                        v = acc[i]
                        if v > hi:
                            continue  # the bar has tightened since the chunk was screened
                        slot = s0 + i
                        if slot >= n_slots or not alive_slot[slot] or slot == qs:
                            continue
                        d = np.int64(v) + qn
                        if f < n_near or d < buf[n_near - 1]:
                            f = _kth_insert(buf, f, n_near, d, True)
                            if f == n_near:
                                hi = _clamp32(_near_bar(buf[n_near - 1], gap) - qn)
                        if nc == cap:  # drop the candidates the bar has passed by since
                            nc = 0
                            for u in range(cap):
                                if cand_d[q, u] <= hi + qn:
                                    cand[q, nc] = cand[q, u]
                                    cand_d[q, nc] = cand_d[q, u]
                                    nc += 1
                            if nc == cap:
                                nc = -1
                                break
                        cand[q, nc] = slot
                        cand_d[q, nc] = d
                        nc += 1
                    if nc < 0:
                        break
                if nc < 0:
                    break
            hi_v[q] = hi
            fn[q] = f
            n_cand[q] = nc
        cb = eb


@njit(cache=True, parallel=True)
def _lists_screen_parallel(data, norms, npairs, gap, n_slots, alive_slot, n_q, n_near, qw, q_norm, q_slot, hi_v,
                           near_buf, cand, cand_d, fn, n_cand, shares):
    """:func:`_lists_screen` with the queries in ``shares`` shares on numba's threads (each
    thread streams the codes once for its share)."""
    parts = max(1, min(shares, n_q))
    for h in prange(parts):
        acc = np.empty(_CHUNK_BLOCKS * LANES, np.int32)
        masks = np.zeros(_CHUNK_BLOCKS, np.uint16)
        _lists_screen(data, norms, npairs, gap, n_slots, alive_slot, n_q * h // parts, n_q * (h + 1) // parts,
                      n_near, qw, q_norm, q_slot, hi_v, acc, masks, near_buf, cand, cand_d, fn, n_cand)


@njit(cache=True)
def _lists_pass(X, codes, slots, n_slots, queries, n_q, n_near, work, kept, kept_n, parallel_from, shares, tuner):
    """One screened pass over the slots for the ``n_q`` query rows at once: each query's
    ``n_near`` nearest live rows (its own slot skipped), in the (distance, row) order of the
    scan, into ``kept``. The slots are read chunk by chunk, each chunk screened for every query
    while it sits in the cache, so a pass streams the codes once for all the queries. A query
    whose candidates overflow their buffer (masses of copies) gets ``kept_n`` = -1. With a
    ``tuner``, passes over at least ``parallel_from`` slots may split the queries over the
    threads, as ``_mdav_fast._screen`` splits a pass.

    The workspaces (built once by ``_mdav_star``): ``codes`` = (data, norms, npairs, gap), the
    slots' screen codes; ``slots`` = (ids, slot_of, alive_slot); ``work`` = (qw, acc, masks,
    near_buf, cand, cand_d, out_d, out_s), the pass's buffers. ``tuner`` stays an argument of
    its own: None there prunes the threaded branch at compile time."""
    data, norms, npairs, gap = codes
    ids, slot_of, alive_slot = slots
    qw, acc, masks, near_buf, cand, cand_d, out_d, out_s = work
    hi_v = np.empty(n_q, np.int64)
    fn = np.zeros(n_q, np.int64)
    n_cand = np.zeros(n_q, np.int64)
    q_norm = np.empty(n_q, np.int64)
    q_slot = np.empty(n_q, np.int64)
    for q in range(n_q):
        q_slot[q] = slot_of[queries[q]]
        slot_words(data, npairs, q_slot[q], qw[q])
        q_norm[q] = norms[q_slot[q]]
        hi_v[q] = _INT32_MAX
    if tuner is None:
        _lists_screen(data, norms, npairs, gap, n_slots, alive_slot, 0, n_q, n_near, qw, q_norm, q_slot, hi_v, acc,
                      masks, near_buf, cand, cand_d, fn, n_cand)
    elif parallel_from <= n_slots and n_q > 1:
        threaded = use_threads(tuner)
        t0 = monotonic_ns()
        if threaded:
            _lists_screen_parallel(data, norms, npairs, gap, n_slots, alive_slot, n_q, n_near, qw, q_norm, q_slot,
                                   hi_v, near_buf, cand, cand_d, fn, n_cand, shares)
        else:
            _lists_screen(data, norms, npairs, gap, n_slots, alive_slot, 0, n_q, n_near, qw, q_norm, q_slot, hi_v,
                          acc, masks, near_buf, cand, cand_d, fn, n_cand)
        record(tuner, threaded, monotonic_ns() - t0, n_slots * n_q)
    else:
        _lists_screen(data, norms, npairs, gap, n_slots, alive_slot, 0, n_q, n_near, qw, q_norm, q_slot, hi_v, acc,
                      masks, near_buf, cand, cand_d, fn, n_cand)
    for q in range(n_q):
        row = queries[q]
        if n_cand[q] < 0:
            kept_n[row] = -1
            continue
        bar = _near_bar(near_buf[q, n_near - 1], gap) if fn[q] == n_near else np.int64(1) << 62
        got = 0
        for u in range(n_cand[q]):
            if cand_d[q, u] > bar:
                continue
            slot = cand[q, u]
            got = insert_pair(out_d, out_s, got, n_near, row_sq_dist(X, ids[slot], X[row]), slot)
        for t in range(got):
            kept[row, t] = ids[out_s[t]]
        kept_n[row] = got


@njit(cache=True)
def _has_list(kept, kept_n, q, alive, exclude, count):
    """Whether q's kept list still holds ``count`` live rows other than ``exclude``."""
    got = 0
    for t in range(kept_n[q]):
        row = kept[q, t]
        if alive[row] and row != exclude:
            got += 1
            if got == count:
                return True
    return False


@njit(cache=True)
def _sse_rows(X, rows, count):
    """SSE of the given rows around their mean, in the order of ``sse_of_slots``."""
    total = 0.0
    for j in range(X.shape[1]):
        s = 0.0
        for t in range(count):
            s += X[rows[t], j]
        mu = s / count
        for t in range(count):
            diff = X[rows[t], j] - mu
            total += diff * diff
    return total


@njit(cache=True)
def _first_alive(kept, kept_n, q, alive, exclude):
    for t in range(kept_n[q]):
        row = kept[q, t]
        if alive[row] and row != exclude:
            return row
    return -1


@njit(cache=True)
def _add_query(queries, nq, row):
    for t in range(nq):
        if queries[t] == row:
            return nq
    queries[nq] = row
    return nq + 1


@njit(cache=True, nogil=True)
def _mdav_star(X, k, data, norms, npairs, gap, parallel_from, shares, tuner, spare, batch, window):
    n, m = X.shape
    labels = np.full(n, -1, np.int64)
    stats = np.zeros(5, np.int64)
    order = visiting_order(X)
    qwords = np.empty(npairs, np.int32)
    cand = np.empty(n, np.int64)
    cand_d = np.empty(n, np.int64)
    ids, slot_of, alive_slot, alive = fresh_slots(n, norms.shape[0])
    point = np.empty(m)
    n_list = k - 1 + max(spare, 1)  # >= k: a fresh list still answers with one row excluded
    sel = np.empty(n_list, np.int64)
    far = np.empty(1, np.int64)
    kept = np.empty((n, n_list), np.int32)
    kept_n = np.zeros(n, np.int64)
    queries = np.empty(batch, np.int64)
    qw = np.empty((batch, npairs), np.int32)
    acc = np.empty(_CHUNK_BLOCKS * LANES, np.int32)
    masks = np.zeros(_CHUNK_BLOCKS, np.uint16)
    near_buf = np.empty((batch, n_list), np.int64)
    b_cand = np.empty((batch, _CAND_CAP), np.int64)
    b_cand_d = np.empty((batch, _CAND_CAP), np.int64)
    out_d = np.empty(n_list)
    out_s = np.empty(n_list, np.int64)
    members = np.empty(k, np.int64)  # rows
    members_nu = np.empty(k, np.int64)
    max_groups = n // k + 1
    sums = np.zeros((max_groups, m))
    sizes = np.zeros(max_groups, np.int64)
    c_blocks = (max_groups + LANES - 1) // LANES
    cpairs = (m + 1) // 2  # the centroid codes are int16 pairs, whatever the rows' layout
    cdata = np.zeros(c_blocks * cpairs * 2 * LANES, np.int16)
    cnorms = np.zeros(c_blocks * LANES, np.int64)
    c_qwords = np.empty(cpairs, np.int32)
    c_acc = np.empty(c_blocks * LANES, np.int32)
    dc = np.empty(max_groups, np.int64)
    mid, step, limit = _centroid_coding(X)
    # the screened pass's workspaces (see ``_lists_pass``); the arrays stay, compaction rewrites them
    codes = (data, norms, npairs, gap)
    slots = (ids, slot_of, alive_slot)
    work = (qw, acc, masks, near_buf, b_cand, b_cand_d, out_d, out_s)
    max_size = k
    n_slots = n
    n_live = n
    g = 0
    pos = 0
    while n_live >= k:
        pos, r = next_origin(order, pos, labels)
        s = slot_of[r]
        option2 = g > 0 and n_live - 1 >= k
        for turn in range(2 if option2 else 1):
            # turn 0: x's list; turn 1: nu's, x excluded
            q = r if turn == 0 else members[1]
            excl = -1 if turn == 0 else r
            if _has_list(kept, kept_n, q, alive, excl, k - 1):
                stats[3] += 1
            else:
                # one pass for q and for the next origins (and their nu) that have no list yet
                nq = 1
                queries[0] = q
                at = pos + 1
                seen = 0
                while nq < batch and at < n and seen < window:
                    o = order[at]
                    at += 1
                    if labels[o] >= 0:
                        continue
                    seen += 1
                    if not _has_list(kept, kept_n, o, alive, -1, k - 1):
                        nq = _add_query(queries, nq, o)
                    else:
                        o_nu = _first_alive(kept, kept_n, o, alive, -1)
                        if not _has_list(kept, kept_n, o_nu, alive, o, k - 1):
                            nq = _add_query(queries, nq, o_nu)
                _lists_pass(X, codes, slots, n_slots, queries, nq, n_list, work, kept, kept_n, parallel_from, shares,
                            tuner)
                stats[2] += 1
                if kept_n[q] < 0:  # its candidates overflowed: the single-query pass
                    found = min(n_list, n_live - 1)
                    _screen(X, data, norms, npairs, gap, ids, n_slots, alive_slot, q, slot_of[q], found, 0,
                            point, qwords, sel, far, cand, cand_d, parallel_from, shares, tuner)
                    for t in range(found):
                        kept[q, t] = ids[sel[t]]
                    kept_n[q] = found
                    stats[4] += 1
            if turn == 0:
                members[0] = r
                _from_list(kept, kept_n, r, alive, -1, k - 1, members[1:])
            else:
                members_nu[0] = members[1]
                _from_list(kept, kept_n, members[1], alive, r, k - 1, members_nu[1:])
        cost_new = _sse_rows(X, members, k) / k
        extend = False
        clos = -1
        growth = 0.0
        if option2:
            cost_nu = _sse_rows(X, members_nu, k)
            clos, growth = _clos(X, r, sums, sizes, g, k, max_size, mid, step, limit, cdata, cnorms, cpairs,
                                 c_qwords, c_acc, dc)
            extend = cost_new > (growth + cost_nu) / (k + 1)
        if extend:
            add_to_group(X, r, clos, labels, sums, sizes)
            max_size = max(max_size, sizes[clos])
            _set_centroid(sums, sizes, clos, mid, step, limit, cdata, cnorms, cpairs)
            alive_slot[s] = False
            alive[r] = False
            n_live -= 1
            stats[0] += 1
        else:
            for t in range(k):
                row = members[t]
                add_to_group(X, row, g, labels, sums, sizes)
                alive_slot[slot_of[row]] = False
                alive[row] = False
            _set_centroid(sums, sizes, g, mid, step, limit, cdata, cnorms, cpairs)
            g += 1
            n_live -= k
            stats[1] += 1
        if n_slots - n_live > _DEAD_FRACTION * n_slots:
            n_slots = compact_blocked(data, norms, npairs, ids, slot_of, alive_slot, n_slots)
    # Leftovers (fewer than k) each join clos(x), judged one after another as the groups grow.
    for i in range(n):
        if labels[i] < 0:
            c, _ = sse_growth_closest(X, i, sums, sizes, g)
            add_to_group(X, i, c, labels, sums, sizes)
    return labels, stats
