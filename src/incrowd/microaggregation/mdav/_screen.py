"""The exact "k nearest and k farthest live rows from a point" of the fast MDAV kernel: a pass
over 16-bit codes of the rows that leaves only a handful of rows for float64.

* **Codes** (:func:`quantize`). Column j is coded q = round((x - mid_j) / s), one step s for all
  columns, in the blocked-pairs layout of ``_blockdot`` (32 bytes a row at 15 columns, so a pass
  reads a quarter of the float64 bytes). With the squared code norms kept, the screened
  distance d = |a|^2 + |q|^2 - 2 a.q is exact in integers, 32 products per instruction.
  :func:`quantize_narrow` codes in int8 instead (|q| <= 127): half the bytes again, for files
  too large for the cache, at the price of a step (and gap) 47 times wider at 15 columns.
* **Bars.** Every dequantized value is within s/2 of the real one, so a row's real distance to
  the point is within s sqrt(m) of s sqrt(d). A row whose screened root exceeds the n-th best
  screened root by more than 2 sqrt(m) (``gap``, with room for rounding) cannot be among the n
  nearest, likewise for the farthest. The rows within the bars get their float64 distance,
  computed from the row exactly as the scan computes it, and the scan's selection is made
  among them: ascending (or descending) distance, the lower row first on ties.
* **Shares.** :func:`screened_pass_parallel` screens one share of the slots per thread, each
  against its own bars (a row beyond its share's n-th best is beyond the whole's), and decides
  on the union. Callers hold ``PARALLEL_LOCK``: numba's workqueue threading layer (the
  fallback where neither TBB nor OpenMP is installed) aborts on concurrent parallel launches.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import trailing_zeros

from .._kernels import _DEAD_FRACTION, row_sq_dist
from ._blockdot import LANES, QUADS, block_screen, code_shift, per_word

PARALLEL_LOCK = threading.Lock()

# The small helpers are inlined into their callers in numba's own IR (``inline="always"``):
# compiled apart, each was optimized once alone and again inside every caller, about a tenth
# of a first MDAV call's compile time; the kernels run at the same speed either way.

_INT32_MAX = 2**31 - 1
_INT32_MIN = -(2**31)
# Codes are bounded so that a row's squared code norm stays under this: then every int32 sum of
# the screen (norm minus twice a dot product, partial sums included) stays in range.
_NORM_CAP = 2**29
_CHUNK_BLOCKS = 64  # 1,024 slots: their codes (16 KB at 16 columns) and int32 scratch stay in L1


def quantize_narrow(X):
    """:func:`quantize` with int8 codes (|q| <= 127): half the bytes per pass, a wider gap. On
    CPUs with AVX-512 VNNI the codes go in quads (:func:`quantize_quads`), elsewhere in pairs
    (:func:`quantize_pairs8`); the screens give the same integers from either."""
    return quantize_quads(X) if QUADS else quantize_pairs8(X)


@njit(cache=True)
def quantize_pairs8(X):
    """int8 codes in the blocked-pairs layout, widened to int16 in the register by the screens."""
    data, norms, npairs, gap, step = _quantize(X, 127)
    return data.astype(np.int8), norms, npairs, gap, step


@njit(cache=True)
def quantize_quads(X):
    """The int8 codes of :func:`quantize_pairs8` in the blocked-quads layout: word w of a block is
    64 bytes, lane l's codes of columns 4w .. 4w + 3 at 4l .. 4l + 3, each stored as code + 128
    (``vpdpbusd`` multiplies unsigned bytes by signed ones; the screens take the 128 back off).
    At 13 columns a slot takes 4 words of 4 bytes against 7 of 2, and a block's product is 4
    instructions against 7 multiply-adds and 7 widenings. Returns (codes, norms, words per slot,
    gap, step)."""
    pairs, norms, npairs, gap, step = _quantize(X, 127)
    n, m = X.shape
    nquads = (m + 3) // 4
    data = np.full((norms.shape[0] // LANES) * nquads * 4 * LANES, 128, np.uint8)  # padding: code 0
    for i in range(n):
        pb = (i // LANES) * npairs * 2 * LANES + 2 * (i % LANES)
        qb = (i // LANES) * nquads * 4 * LANES + 4 * (i % LANES)
        for j in range(m):
            data[qb + (j // 4) * 4 * LANES + (j % 4)] = np.uint8(pairs[pb + (j // 2) * 2 * LANES + (j % 2)] + 128)
    return data, norms, nquads, gap, step


@njit(cache=True)
def quantize(X):
    """See :func:`_quantize`."""
    return _quantize(X, 0)


@njit(cache=True)
def code_frame(X, limit):
    """The centre of X's bounding box and one step for all columns: the widest range over
    2 * limit, so every code lies in [-limit, limit]."""
    n, m = X.shape
    mid = np.empty(m)
    widest = 0.0
    for j in range(m):
        lo_j = X[0, j]
        hi_j = X[0, j]
        for i in range(n):
            lo_j = min(lo_j, X[i, j])
            hi_j = max(hi_j, X[i, j])
        mid[j] = lo_j + (hi_j - lo_j) / 2.0
        widest = max(widest, hi_j - lo_j)
    step = widest / (2.0 * limit) if widest > 0.0 else 1.0
    return mid, step


@njit(cache=True)
def _quantize(X, cap):
    """The blocked int16 codes of X, their squared norms (int32, one per slot, padded to whole
    blocks), the number of column pairs, the screening gap and the step s.

    One step s for all columns, the widest range over 2L, where L = floor(sqrt(2**29 / m)) keeps
    every squared code norm under 2**29. Each dequantized value mid_j + q s is within s/2 of x
    (the float rounding of the division adds under 1e-11 s), so two rows' dequantized difference
    is within s of the real one in every column and within s sqrt(m) overall; ``gap`` is
    2 sqrt(m) (1 + 1e-6), in units of s.
    """
    n, m = X.shape
    npairs = (m + 1) // 2
    n_blocks = (n + LANES - 1) // LANES
    limit = math.floor(math.sqrt(_NORM_CAP / m))
    if cap > 0:
        limit = min(limit, cap)
    mid, step = code_frame(X, limit)
    data = np.zeros(n_blocks * npairs * 2 * LANES, np.int16)
    norms = np.zeros(n_blocks * LANES, np.int32)
    for i in range(n):
        base = (i // LANES) * npairs * 2 * LANES + 2 * (i % LANES)
        total = 0
        for j in range(m):
            q = min(max(np.round((X[i, j] - mid[j]) / step), -limit), limit)
            data[base + (j // 2) * 2 * LANES + (j % 2)] = np.int16(q)
            total += np.int64(q) * np.int64(q)
        norms[i] = total
    return data, norms, npairs, 2.0 * math.sqrt(m) * (1.0 + 1e-6), step


@njit(cache=True, inline="always")
def slot_words(data, npairs, slot, out):
    """The int32 words of one slot, word by word (two int16 codes each, or four int8 codes for
    quads): a query for the pass."""
    per = per_word(data)
    shift = code_shift(data)
    base = (slot // LANES) * npairs * per * LANES + per * (slot % LANES)
    for p in range(npairs):
        at = base + p * per * LANES
        if per == 2:
            out[p] = (np.int32(data[at + 1]) << 16) | (np.int32(data[at]) & 0xFFFF)
        else:
            word = 0
            for e in range(4):
                word |= ((np.int32(data[at + e]) - shift) & 0xFF) << (8 * e)
            out[p] = np.int32(np.uint32(word))


@njit(cache=True)
def fresh_slots(n, n_slots):
    """Every row alive in its own slot of the codes: (the row of each slot, the slot of each row,
    alive by slot, alive by row); the last block's padding slots, n to n_slots, stay dead."""
    alive_slot = np.zeros(n_slots, np.bool_)
    alive_slot[:n] = True
    return np.arange(n), np.arange(n), alive_slot, np.ones(n, np.bool_)


@njit(cache=True)
def compact_blocked(data, norms, npairs, ids, slot_of, alive, n_slots):
    """Move the alive slots to the front, keeping their order (codes, norms, ids, slot_of).
    Returns the new slot count."""
    per = per_word(data)
    block = npairs * per * LANES
    w = 0
    for i in range(n_slots):
        if alive[i]:
            if w != i:
                src = (i // LANES) * block + per * (i % LANES)
                dst = (w // LANES) * block + per * (w % LANES)
                for p in range(npairs):
                    for e in range(per):
                        data[dst + p * per * LANES + e] = data[src + p * per * LANES + e]
                norms[w] = norms[i]
                ids[w] = ids[i]
                slot_of[ids[w]] = w
            alive[w] = True
            w += 1
    for i in range(w, alive.shape[0]):
        alive[i] = False
    return w


@njit(cache=True)
def maybe_compact_blocked(data, norms, npairs, ids, slot_of, alive, n_slots, n_live):
    """:func:`compact_blocked` under the rule of ``_kernels.maybe_compact`` (a quarter dead)."""
    if n_slots - n_live > _DEAD_FRACTION * n_slots:
        return compact_blocked(data, norms, npairs, ids, slot_of, alive, n_slots)
    return n_slots


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _near_bar(kth, gap):
    """The largest code distance that can still belong to a row as near as the one at ``kth``:
    sqrt(d) <= (sqrt(kth) + gap) (1 + 1e-9), as an integer rounded outward."""
    b = (math.sqrt(float(kth)) + gap) * (1.0 + 1e-9)
    return int(b * b) + 1


@njit(cache=True, inline="always")
def _far_bar(kth, gap):
    """The smallest code distance that can still belong to a row as far as the one at ``kth``."""
    r = (math.sqrt(float(kth)) - gap) * (1.0 - 1e-9)
    if r <= 0.0:
        return -1
    return int(r * r) - 1


@njit(cache=True, inline="always")
def _clamp32(v):
    return max(min(v, _INT32_MAX), _INT32_MIN)


@njit(cache=True)
def _screen_blocks(data, norms, npairs, n_slots, alive, qwords, q_norm, exclude, n_near, n_far, gap,
                   b_lo, b_hi, cand, cand_d, cand_at, bars):
    """Screen the slots of blocks [b_lo, b_hi): their candidates go to cand[cand_at:] (slot and
    code distance); returns their number, and bars[0:2] = the final near and far bars."""
    near_buf = np.empty(max(n_near, 1), np.int64)
    far_buf = np.empty(max(n_far, 1), np.int64)
    acc = np.empty(_CHUNK_BLOCKS * LANES, np.int32)
    masks = np.zeros(_CHUNK_BLOCKS, np.uint16)
    words = masks.view(np.uint64)
    fn = 0
    ff = 0
    n_cand = 0
    # in units of v = |a|^2 - 2 a.q (the point's own norm is added back only for the rare hits)
    hi_v = _INT32_MAX if n_near > 0 else _INT32_MIN
    lo_v = _INT32_MIN if n_far > 0 else _INT32_MAX
    block = npairs * per_word(data) * LANES
    cb = b_lo
    size = 1
    while cb < b_hi:
        # chunks grow from one block: the bars start at infinity, and every slot flagged under
        # a loose bar goes through the scalar loop below
        eb = min(cb + size, b_hi)
        size = min(2 * size, _CHUNK_BLOCKS)
        nb = eb - cb
        s0 = cb * LANES
        block_screen(acc, data, cb * block, npairs, qwords, nb, norms[s0:s0 + nb * LANES], hi_v, lo_v, masks)
        for t in range((nb + 3) // 4):
            if words[t] == 0:
                continue  # no slot of these 4 blocks reaches either bar: the common case
            for b in range(4 * t, min(4 * t + 4, nb)):
                mask = np.uint64(masks[b])
                while mask != 0:  # the flagged lanes only
                    i = b * LANES + trailing_zeros(mask)
                    mask &= mask - np.uint64(1)
                    v = acc[i]
                    if v > hi_v and v < lo_v:
                        continue  # the bars have tightened since the chunk was screened
                    slot = s0 + i
                    if slot >= n_slots or not alive[slot] or slot == exclude:
                        continue
                    d = np.int64(v) + q_norm
                    if n_near > 0 and (fn < n_near or d < near_buf[n_near - 1]):
                        fn = _kth_insert(near_buf, fn, n_near, d, True)
                        if fn == n_near:
                            hi_v = _clamp32(_near_bar(near_buf[n_near - 1], gap) - q_norm)
                    if n_far > 0 and (ff < n_far or d > far_buf[n_far - 1]):
                        ff = _kth_insert(far_buf, ff, n_far, d, False)
                        if ff == n_far:
                            lo_v = _clamp32(_far_bar(far_buf[n_far - 1], gap) - q_norm)
                    # bars only tighten, so every final candidate is collected here
                    cand[cand_at + n_cand] = slot
                    cand_d[cand_at + n_cand] = d
                    n_cand += 1
        cb = eb
    # too few live slots in this part for a bar: every candidate stays one
    bars[0] = _near_bar(near_buf[n_near - 1], gap) if n_near > 0 and fn == n_near else 8 * _NORM_CAP
    bars[1] = _far_bar(far_buf[n_far - 1], gap) if n_far > 0 and ff == n_far else -1
    return n_cand


@njit(cache=True, inline="always")
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


@njit(cache=True)
def _decide(X, ids, point, n_near, n_far, cand, cand_d, cand_at, n_cand, bars, near_out, far_out,
            near_d, far_d, gn, gf):
    """Float64 distances for the candidates of one part within its bars, into the selections."""
    for u in range(cand_at, cand_at + n_cand):
        d = cand_d[u]
        take_near = n_near > 0 and d <= bars[0]
        take_far = n_far > 0 and d >= bars[1]
        if not (take_near or take_far):
            continue
        slot = cand[u]
        dist = row_sq_dist(X, ids[slot], point)
        if take_near:
            gn = _insert(near_d, near_out, gn, n_near, dist, slot, True)
        if take_far:
            gf = _insert(far_d, far_out, gf, n_far, dist, slot, False)
    return gn, gf


@njit(cache=True)
def screened_pass(X, data, norms, npairs, ids, n_slots, alive, point, qwords, q_norm, exclude, n_near, n_far,
                  gap, near_out, far_out, cand, cand_d):
    """The n_near nearest live slots to ``point`` (``exclude`` skipped) and the n_far farthest,
    sorted by (distance, slot) as full sorts would give; returns how many of each were found."""
    bars = np.empty(2, np.int64)
    n_cand = _screen_blocks(data, norms, npairs, n_slots, alive, qwords, q_norm, exclude, n_near, n_far, gap,
                            0, (n_slots + LANES - 1) // LANES, cand, cand_d, 0, bars)
    return _decide(X, ids, point, n_near, n_far, cand, cand_d, 0, n_cand, bars, near_out, far_out,
                   np.empty(max(n_near, 1)), np.empty(max(n_far, 1)), 0, 0)


@njit(cache=True, parallel=True)
def screened_pass_parallel(X, data, norms, npairs, ids, n_slots, alive, point, qwords, q_norm, exclude, n_near,
                           n_far, gap, near_out, far_out, cand, cand_d, shares):
    """:func:`screened_pass` in ``shares`` shares of the slots, on numba's threads (the count is
    an argument: numba cannot cache a kernel that asks for it)."""
    n_blocks = (n_slots + LANES - 1) // LANES
    parts = max(1, min(shares, n_blocks))
    bars = np.empty((parts, 2), np.int64)
    counts = np.empty(parts, np.int64)
    for h in prange(parts):
        b_lo = n_blocks * h // parts
        b_hi = n_blocks * (h + 1) // parts
        counts[h] = _screen_blocks(data, norms, npairs, n_slots, alive, qwords, q_norm, exclude, n_near, n_far,
                                   gap, b_lo, b_hi, cand, cand_d, b_lo * LANES, bars[h])
    near_d = np.empty(max(n_near, 1))
    far_d = np.empty(max(n_far, 1))
    gn = 0
    gf = 0
    for h in range(parts):
        gn, gf = _decide(X, ids, point, n_near, n_far, cand, cand_d, (n_blocks * h // parts) * LANES, counts[h],
                         bars[h], near_out, far_out, near_d, far_d, gn, gf)
    return gn, gf
