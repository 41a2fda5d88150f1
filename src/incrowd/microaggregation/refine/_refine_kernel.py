"""Numba kernels of Refine: local search on a partition with groups of k..2k-1 rows.

The state is a list of groups, each held as its member rows (``mem[g, :size[g]]``). The one
move is a *pair re-partition*: the rows of two neighbouring groups A and B (at most 4k - 2 rows)
are split again into two groups of k..2k-1 rows, and the split is kept when it lowers
SSE(A) + SSE(B). The new split is searched three ways, on the union centred at its mean (so
SSE(part) = sum ||x||^2 - ||sum of part||^2 / |part|):

* sweep: sort the rows along a direction and take the best prefix (prefix sums give every
  admissible size in one pass). For a fixed size the best split minimises a concave function of
  the part's sum, so it is a vertex of the polytope of part sums, that is a split by a
  hyperplane; the sweep along c_A - c_B, repeated with the new centroids until it stops
  changing, finds such splits;
* moves and swaps: first-improvement descent over moving one row (sizes permitting) and swapping
  two rows, from the sweep's split and from the current one;
* exhaustive: for unions of at most ``EXACT_MAX`` rows every subset is tried (Gray code order),
  so the pair's split is optimal.

A change counts only when it lowers the cost by more than ``TOL`` times the union's scatter plus
``scale`` (rounding noise between duplicate rows is no improvement), which makes every accepted
move strictly decrease the SSE and the search finite.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# SplitMix64, the stream ONA draws from (state: a uint64 array of one)
from .._adaptive import monotonic_ns
from ..ona._ona_kernel import _next_u64 as _next

TOL = 1e-10
#: unions of at most this many rows are split by trying every subset (2**14 = 16384 splits)
EXACT_MAX = 12

#: move kinds (bit flags) for the ablation: which searches a pair re-partition runs
MOVE_SWAP = 1
MOVE_SWEEP = 2
MOVE_EXACT = 4
#: a pair of at least 3k rows may become three groups (the group count is free: more groups of
#: k..2k-1 rows never need more SSE, and no pair re-partition or kick changes the count)
MOVE_SPLIT3 = 8


@njit(cache=True)
def _group_cost(X, mem, g, size):
    """SSE of group g, two-pass (centroid, then squared deviations)."""
    m = X.shape[1]
    s = size[g]
    c = np.zeros(m)
    for t in range(s):
        r = mem[g, t]
        for j in range(m):
            c[j] += X[r, j]
    for j in range(m):
        c[j] /= s
    tot = 0.0
    for t in range(s):
        r = mem[g, t]
        for j in range(m):
            d = X[r, j] - c[j]
            tot += d * d
    return tot


@njit(cache=True)
def group_costs(X, mem, size):
    G = size.shape[0]
    out = np.empty(G)
    for g in range(G):
        out[g] = _group_cost(X, mem, g, size)
    return out


@njit(cache=True)
def _part_sums(P, side, u, s0, s1):
    """Add the rows P[:u] of side 0 to s0 and of side 1 to s1; returns the count of side 0."""
    m = P.shape[1]
    n0 = 0
    for t in range(u):
        if side[t] == 0:
            n0 += 1
            for j in range(m):
                s0[j] += P[t, j]
        else:
            for j in range(m):
                s1[j] += P[t, j]
    return n0


@njit(cache=True)
def _split_cost(P, side, u):
    """SSE of the two parts (side 0/1) of centred rows P[:u]."""
    m = P.shape[1]
    s0 = np.zeros(m)
    s1 = np.zeros(m)
    n0 = _part_sums(P, side, u, s0, s1)
    sq = 0.0
    for t in range(u):
        for j in range(m):
            sq += P[t, j] * P[t, j]
    a = 0.0
    b = 0.0
    for j in range(m):
        a += s0[j] * s0[j]
        b += s1[j] * s1[j]
    return sq - a / n0 - b / (u - n0)


@njit(cache=True)
def _move_if_better(P, t, s_from, s_to, c_from, c_to, n_from, n_to, eps):
    """Move row t from its part (column sums ``s_from``, centroid ``c_from``, ``n_from`` rows) to
    the other when that lowers the SSE by more than eps; whether it moved (the sums are updated,
    the sizes and centroids are the caller's)."""
    m = P.shape[1]
    da = 0.0
    db = 0.0
    for j in range(m):
        d = P[t, j] - c_from[j]
        da += d * d
        d = P[t, j] - c_to[j]
        db += d * d
    delta = -n_from / (n_from - 1.0) * da + n_to / (n_to + 1.0) * db
    if not delta < -eps:
        return False
    for j in range(m):
        s_from[j] -= P[t, j]
        s_to[j] += P[t, j]
    return True


@njit(cache=True)
def _descend(P, side, u, lo, hi, eps):
    """First-improvement moves and swaps between the two parts; sizes stay in [lo, hi]."""
    m = P.shape[1]
    s0 = np.zeros(m)
    s1 = np.zeros(m)
    n0 = _part_sums(P, side, u, s0, s1)
    n1 = u - n0
    c0 = np.empty(m)
    c1 = np.empty(m)
    for _sweep_no in range(100):
        improved = False
        for j in range(m):
            c0[j] = s0[j] / n0
            c1[j] = s1[j] / n1
        # single moves
        for t in range(u):
            if side[t] == 0 and n0 > lo and n1 < hi:
                moved = _move_if_better(P, t, s0, s1, c0, c1, n0, n1, eps)
            elif side[t] == 1 and n1 > lo and n0 < hi:
                moved = _move_if_better(P, t, s1, s0, c1, c0, n1, n0, eps)
            else:
                continue
            if moved:
                to = 1 - side[t]
                side[t] = to
                n0 += -1 if to == 1 else 1
                n1 += 1 if to == 1 else -1
                for j in range(m):
                    c0[j] = s0[j] / n0
                    c1[j] = s1[j] / n1
                improved = True
        # swaps: x in part 0, y in part 1, d = y - x:
        # delta = -2 (c0 - c1).d - ||d||^2 (1/n0 + 1/n1)
        w = 1.0 / n0 + 1.0 / n1
        for t in range(u):
            if side[t] != 0:
                continue
            for v in range(u):
                if side[v] != 1:
                    continue
                lin = 0.0
                qd = 0.0
                for j in range(m):
                    d = P[v, j] - P[t, j]
                    lin += (c0[j] - c1[j]) * d
                    qd += d * d
                delta = -2.0 * lin - qd * w
                if delta < -eps:
                    side[t] = 1
                    side[v] = 0
                    for j in range(m):
                        d = P[v, j] - P[t, j]
                        s0[j] += d
                        s1[j] -= d
                        c0[j] = s0[j] / n0
                        c1[j] = s1[j] / n1
                    improved = True
                    break
        if not improved:
            break


@njit(cache=True)
def _sorted_along(P, u, dirv, proj, order):
    """order[:u]: the rows of P[:u] by their projection on dirv (stable, so ties keep row order)."""
    m = P.shape[1]
    for t in range(u):
        s = 0.0
        for j in range(m):
            s += P[t, j] * dirv[j]
        proj[t] = s
    order[:u] = np.argsort(proj[:u], kind="mergesort")


@njit(cache=True)
def _first_part_cost(s0, m, n0, u, lo, hi):
    """The cost of a split of u centred rows whose first part has n0 rows summing to ``s0[:m]``
    (the other part's sum is then -s0), up to the constant sum ||x||^2; +inf when a part's size
    is outside [lo, hi]."""
    if n0 < lo or n0 > hi or u - n0 < lo or u - n0 > hi:
        return np.inf
    q = 0.0
    for j in range(m):
        q += s0[j] * s0[j]
    return -q * (1.0 / n0 + 1.0 / (u - n0))


@njit(cache=True)
def _sweep(P, u, lo, hi, dirv, side, proj, order, pre):
    """Best split of P[:u] by a threshold along dirv with the first part's size in [lo, hi]
    (the second's then in [u - hi, u - lo]); writes side, returns its cost (up to the constant
    sum ||x||^2, which the caller adds)."""
    m = P.shape[1]
    _sorted_along(P, u, dirv, proj, order)
    for j in range(m):
        pre[j] = 0.0
    best = np.inf
    best_a = -1
    for a in range(1, u):
        r = order[a - 1]
        for j in range(m):
            pre[j] += P[r, j]
        cost = _first_part_cost(pre, m, a, u, lo, hi)
        if cost < best:
            best = cost
            best_a = a
    for t in range(u):
        side[order[t]] = 0 if t < best_a else 1
    return best


@njit(cache=True)
def _exact(P, u, lo, hi, side):
    """Every split of P[:u] (Gray code over the rows but the last, which stays in part 1)."""
    m = P.shape[1]
    s0 = np.zeros(m)
    cur = np.zeros(u, np.int64)  # 1 = in part 0
    n0 = 0
    best = np.inf
    best_code = 0
    code = 0
    total = 1 << (u - 1)
    for it in range(1, total):
        # the bit that flips between Gray codes it-1 and it
        b = 0
        x = it
        while (x & 1) == 0:
            x >>= 1
            b += 1
        if cur[b] == 1:
            cur[b] = 0
            n0 -= 1
            for j in range(m):
                s0[j] -= P[b, j]
        else:
            cur[b] = 1
            n0 += 1
            for j in range(m):
                s0[j] += P[b, j]
        code ^= 1 << b
        cost = _first_part_cost(s0, m, n0, u, lo, hi)
        if cost < best:
            best = cost
            best_code = code
    for t in range(u):
        side[t] = 0 if (t < u - 1 and (best_code >> t) & 1) else 1
    return best


@njit(cache=True)
def _gather_pair(X, A, B, mem, size, rows, side, P, mean):
    """The rows of groups A then B into ``rows`` (``side`` 0 for A, 1 for B) and centred at
    their mean into P; returns (their count, the sum of their squared deviations)."""
    m = X.shape[1]
    a0 = size[A]
    u = a0 + size[B]
    for t in range(a0):
        rows[t] = mem[A, t]
        side[t] = 0
    for t in range(size[B]):
        rows[a0 + t] = mem[B, t]
        side[a0 + t] = 1
    for j in range(m):
        mean[j] = 0.0
    for t in range(u):
        for j in range(m):
            mean[j] += X[rows[t], j]
    for j in range(m):
        mean[j] /= u
    sq = 0.0
    for t in range(u):
        for j in range(m):
            v = X[rows[t], j] - mean[j]
            P[t, j] = v
            sq += v * v
    return u, sq


@njit(cache=True)
def _centroid_line(P, a0, u, dirv):
    """dirv = the centroid of P[:a0] minus that of P[a0:u]."""
    for j in range(P.shape[1]):
        sa = 0.0
        sb = 0.0
        for t in range(a0):
            sa += P[t, j]
        for t in range(a0, u):
            sb += P[t, j]
        dirv[j] = sa / a0 - sb / (u - a0)


@njit(cache=True)
def _kept(c, best, eps, trial, side, u):
    """A trial split's cost c when it beats ``best`` by more than eps (the trial then copied to
    ``side``), else ``best``."""
    if c < best - eps:
        side[:u] = trial[:u]
        return c
    return best


@njit(cache=True)
def _repartition(X, A, B, k, mem, size, cost, moves, scale, P, rows, side, trial, proj, order,
                 pre, dirv, mean):
    """Re-split the rows of groups A and B; True when the split changed (lower SSE)."""
    m = X.shape[1]
    a0 = size[A]
    u, sq = _gather_pair(X, A, B, mem, size, rows, side, P, mean)
    current = cost[A] + cost[B]
    eps = TOL * sq + scale
    lo = k
    hi = 2 * k - 1
    best = current
    if (moves & MOVE_EXACT) != 0 and u <= EXACT_MAX:
        best = _kept(sq + _exact(P, u, lo, hi, trial), best, eps, trial, side, u)
    else:
        if (moves & MOVE_SWEEP) != 0:
            # direction c_A - c_B, then the new parts' centroids until the split repeats
            _centroid_line(P, a0, u, dirv)
            for _it in range(8):
                _sweep(P, u, lo, hi, dirv, trial, proj, order, pre)
                if (moves & MOVE_SWAP) != 0:
                    _descend(P, trial, u, lo, hi, eps)
                before = best
                best = _kept(_split_cost(P, trial, u), best, eps, trial, side, u)
                if best == before:
                    break
                n0 = 0
                for j in range(m):
                    dirv[j] = 0.0
                for t in range(u):
                    if trial[t] == 0:
                        n0 += 1
                for t in range(u):
                    w = 1.0 / n0 if trial[t] == 0 else -1.0 / (u - n0)
                    for j in range(m):
                        dirv[j] += w * P[t, j]
        if (moves & MOVE_SWAP) != 0:
            for t in range(u):
                trial[t] = 0 if t < a0 else 1
            _descend(P, trial, u, lo, hi, eps)
            best = _kept(_split_cost(P, trial, u), best, eps, trial, side, u)
    if not best < current:  # no split beat the current one
        return False
    na = 0
    nb = 0
    for t in range(u):
        if side[t] == 0:
            mem[A, na] = rows[t]
            na += 1
        else:
            mem[B, nb] = rows[t]
            nb += 1
    size[A] = na
    size[B] = nb
    # members in ascending row order: the result then depends only on the groups' contents
    mem[A, :na] = np.sort(mem[A, :na])
    mem[B, :nb] = np.sort(mem[B, :nb])
    cost[A] = _group_cost(X, mem, A, size)
    cost[B] = _group_cost(X, mem, B, size)
    return True


@njit(cache=True)
def _part_pair(P, side, u, p, q, Q, qside, qidx):
    """Gather the rows of parts p and q (of side[:u]) into Q, side 0 for p, 1 for q; returns
    their count (their original positions go to qidx)."""
    m = P.shape[1]
    w = 0
    for t in range(u):
        if side[t] == p or side[t] == q:
            for j in range(m):
                Q[w, j] = P[t, j]
            qside[w] = 0 if side[t] == p else 1
            qidx[w] = t
            w += 1
    return w


@njit(cache=True)
def _three_cost(P, side, u, sums, counts):
    """SSE of the three parts (side 0/1/2) of rows P[:u]."""
    m = P.shape[1]
    sums[:, :] = 0.0
    counts[:] = 0
    sq = 0.0
    for t in range(u):
        s = side[t]
        counts[s] += 1
        for j in range(m):
            sums[s, j] += P[t, j]
            sq += P[t, j] * P[t, j]
    out = sq
    for s in range(3):
        q = 0.0
        for j in range(m):
            q += sums[s, j] * sums[s, j]
        out -= q / counts[s]
    return out


@njit(cache=True)
def _split_three(X, A, B, C, k, mem, size, cost, scale, P, rows, side, proj, order, pre3, dirv,
                 mean, Q, qside, qidx, sums, counts):
    """Split the rows of groups A and B (at least 3k of them) into three groups of k..2k-1
    rows, the third being the new group C: cut in three along c_A - c_B (prefix sums give every
    admissible pair of cuts), then moves and swaps between each two of the parts until none
    helps; kept when the three costs less than A and B. True when kept."""
    m = X.shape[1]
    u, sq = _gather_pair(X, A, B, mem, size, rows, side, P, mean)
    eps = TOL * sq + scale
    lo = k
    hi = 2 * k - 1
    _centroid_line(P, size[A], u, dirv)
    _sorted_along(P, u, dirv, proj, order)
    for j in range(m):
        pre3[0, j] = 0.0
    for t in range(u):
        r = order[t]
        for j in range(m):
            pre3[t + 1, j] = pre3[t, j] + P[r, j]
    best = np.inf
    best_a = -1
    best_b = -1
    for a in range(lo, hi + 1):
        for b in range(lo, hi + 1):
            c = u - a - b
            if c < lo:
                break
            if c > hi:
                continue
            q0 = 0.0
            q1 = 0.0
            q2 = 0.0
            for j in range(m):
                v0 = pre3[a, j]
                v1 = pre3[a + b, j] - v0
                v2 = pre3[u, j] - pre3[a + b, j]
                q0 += v0 * v0
                q1 += v1 * v1
                q2 += v2 * v2
            val = -(q0 / a + q1 / b + q2 / c)
            if val < best:
                best = val
                best_a = a
                best_b = b
    if best_a < 0:
        return False
    for t in range(u):
        side[order[t]] = 0 if t < best_a else (1 if t < best_a + best_b else 2)
    for _sweep_no in range(4):
        moved = False
        for pq in range(3):
            p = 0 if pq < 2 else 1
            q = 1 if pq == 0 else 2
            w = _part_pair(P, side, u, p, q, Q, qside, qidx)
            for t in range(w):
                proj[t] = qside[t]  # the split before the descent
            _descend(Q, qside, w, lo, hi, eps)
            for t in range(w):
                if qside[t] != proj[t]:
                    moved = True
                side[qidx[t]] = p if qside[t] == 0 else q
        if not moved:
            break
    if _three_cost(P, side, u, sums, counts) >= cost[A] + cost[B] - eps:
        return False
    n_of = np.zeros(3, np.int64)
    for t in range(u):
        s = side[t]
        g = A if s == 0 else (B if s == 1 else C)
        mem[g, n_of[s]] = rows[t]
        n_of[s] += 1
    for s in range(3):
        g = A if s == 0 else (B if s == 1 else C)
        size[g] = n_of[s]
        mem[g, :n_of[s]] = np.sort(mem[g, :n_of[s]])
        cost[g] = _group_cost(X, mem, g, size)
    return True


@njit(cache=True)
def split_round(X, k, mem, size, cost, neigh, G, scale, dirty, deadline_ns=0):
    """Each pair of neighbouring groups among the first ``G`` with at least 3k rows is offered
    :func:`_split_three`, the new group taking the next free index (``mem``, ``size``,
    ``cost`` and ``dirty`` have room for n // k groups). Returns the new group count; the
    groups changed are marked in ``dirty``. ``neigh`` lists neighbours for the first
    ``neigh.shape[0]`` groups only (a new group is found by the next refresh)."""
    u_max = 4 * k - 2
    m = X.shape[1]
    P = np.empty((u_max, m))
    rows = np.empty(u_max, np.int64)
    side = np.empty(u_max, np.int64)
    proj = np.empty(u_max)
    ordr = np.empty(u_max, np.int64)
    pre3 = np.empty((u_max + 1, m))
    dirv = np.empty(m)
    mean = np.empty(m)
    Q = np.empty((u_max, m))
    qside = np.empty(u_max, np.int64)
    qidx = np.empty(u_max, np.int64)
    sums = np.empty((3, m))
    counts = np.empty(3, np.int64)
    cap = size.shape[0]
    for A in range(min(G, neigh.shape[0])):
        for q in range(neigh.shape[1]):
            if G >= cap:
                return G
            B = neigh[A, q]
            if B < 0 or B == A or size[A] + size[B] < 3 * k:
                continue
            if deadline_ns > 0 and monotonic_ns() >= deadline_ns:
                return G
            if _split_three(X, A, B, G, k, mem, size, cost, scale, P, rows, side, proj, ordr,
                            pre3, dirv, mean, Q, qside, qidx, sums, counts):
                dirty[A] = True
                dirty[B] = True
                dirty[G] = True
                G += 1
    return G


@njit(cache=True)
def _pair_workspace(k, m):
    """What ``_repartition`` works in, for two groups of at most 2k - 1 rows each: (P, rows, side,
    trial, proj, order, pre, dirv, mean)."""
    u_max = 4 * k - 2
    return (np.empty((u_max, m)), np.empty(u_max, np.int64), np.empty(u_max, np.int64), np.empty(u_max, np.int64),
            np.empty(u_max), np.empty(u_max, np.int64), np.empty(m), np.empty(m), np.empty(m))


@njit(cache=True)
def refine_round(X, k, mem, size, cost, neigh, order, moves, scale, dirty_in, dirty_out, deadline_ns=0):
    """One pass over the groups (in ``order``): each group is re-partitioned with each of its
    neighbours, skipping pairs of which neither group changed since the previous round (their
    split is already the best the search finds). ``dirty_in``: groups changed in the previous
    round; ``dirty_out`` (filled here): groups changed in this one. Returns the number of pairs
    changed. ``deadline_ns`` > 0: the round ends early, before the next pair, once the monotonic
    clock passes it (the partition stays valid: every change is complete)."""
    m = X.shape[1]
    P, rows, side, trial, proj, ordr, pre, dirv, mean = _pair_workspace(k, m)
    changed = 0
    late = False
    for gi in range(order.shape[0]):
        if late:
            break
        A = order[gi]
        for q in range(neigh.shape[1]):
            B = neigh[A, q]
            if B < 0 or B == A:
                continue
            if not (dirty_in[A] or dirty_in[B] or dirty_out[A] or dirty_out[B]):
                continue
            # the clock is read before each pair (tens of nanoseconds against a re-partition's
            # microseconds), so a round ends within one pair of its deadline
            if deadline_ns > 0 and monotonic_ns() >= deadline_ns:
                late = True
                break
            if _repartition(X, A, B, k, mem, size, cost, moves, scale, P, rows, side, trial,
                            proj, ordr, pre, dirv, mean):
                changed += 1
                dirty_out[A] = True
                dirty_out[B] = True
    return changed


@njit(cache=True)
def _below(state, bound):
    """A draw in [0, bound); the modulo bias is below bound / 2**64, nothing at these sizes."""
    return np.int64(_next(state) % np.uint64(bound))


@njit(cache=True)
def _save(g, mem, size, cost, saved_id, saved_mem, saved_size, saved_cost, mark, stamp, n_saved):
    if mark[g] == stamp or n_saved >= saved_id.shape[0]:
        return n_saved, mark[g] == stamp
    mark[g] = stamp
    saved_id[n_saved] = g
    saved_size[n_saved] = size[g]
    saved_cost[n_saved] = cost[g]
    saved_mem[n_saved, :] = mem[g, :]
    return n_saved + 1, True


@njit(cache=True)
def ils_kicks(X, k, mem, size, cost, neigh, moves, scale, n_kicks, strength, seed, deadline_work,
              deadline_ns=0, slack=0.0):
    """Iterated local search, ``n_kicks`` times: pool the rows of a random group and
    ``strength`` of its neighbours, deal them out again at random (sizes kept), then descend
    with pair re-partitions over a work list of the groups that changed; keep the result when
    the SSE of the touched groups went down, else restore them. ``seed`` starts the SplitMix64
    stream (one per call, drawn from the estimator's generator). Returns the kicks kept.
    ``deadline_work`` caps the pair re-partitions a descent may run (a safeguard, never reached
    in practice: every kept change lowers the SSE). ``deadline_ns`` > 0: no kick starts, and a
    descent stops, once the monotonic clock passes it. ``slack`` > 0 keeps a kick that raised
    the SSE of the touched groups by less than it (threshold accepting)."""
    G = size.shape[0]
    m = X.shape[1]
    h = 2 * k - 1
    P, rows, side, trial, proj, ordr, pre, dirv, mean = _pair_workspace(k, m)
    cap = 512
    saved_id = np.empty(cap, np.int64)
    saved_size = np.empty(cap, np.int64)
    saved_cost = np.empty(cap)
    saved_mem = np.empty((cap, h), np.int64)
    mark = np.full(G, -1, np.int64)
    inq = np.zeros(G, np.bool_)
    queue = np.empty(G + 1, np.int64)
    pool = np.empty((strength + 1) * h, np.int64)
    grp = np.empty(strength + 1, np.int64)
    state = np.empty(1, np.uint64)
    state[0] = seed
    kept = 0
    for kick in range(n_kicks):
        if deadline_ns > 0 and monotonic_ns() >= deadline_ns:
            break
        A = _below(state, G)
        ng = 1
        grp[0] = A
        for q in range(neigh.shape[1]):
            if ng > strength:
                break
            B = neigh[A, q]
            if B >= 0 and B != A:
                dup = False
                for t in range(ng):
                    if grp[t] == B:
                        dup = True
                if not dup:
                    grp[ng] = B
                    ng += 1
        n_saved = 0
        npool = 0
        for t in range(ng):
            g = grp[t]
            n_saved, _ = _save(g, mem, size, cost, saved_id, saved_mem, saved_size, saved_cost,
                               mark, kick, n_saved)
            for v in range(size[g]):
                pool[npool] = mem[g, v]
                npool += 1
        # Fisher-Yates on the pooled rows, then refill the groups with their old sizes
        for t in range(npool - 1, 0, -1):
            j = _below(state, t + 1)
            tmp = pool[t]
            pool[t] = pool[j]
            pool[j] = tmp
        pos = 0
        for t in range(ng):
            g = grp[t]
            for v in range(size[g]):
                mem[g, v] = pool[pos]
                pos += 1
            mem[g, :size[g]] = np.sort(mem[g, :size[g]])
            cost[g] = _group_cost(X, mem, g, size)
        # descent over a work list
        head = 0
        tail = 0
        for t in range(ng):
            queue[tail] = grp[t]
            inq[grp[t]] = True
            tail += 1
        work = 0
        while head != tail and work < deadline_work:
            # a descent cut at the deadline is judged like a finished one: kept only if it lowered
            # the SSE, else the saved groups come back
            if deadline_ns > 0 and monotonic_ns() >= deadline_ns:
                break
            g = queue[head]
            head = (head + 1) % queue.shape[0]
            inq[g] = False
            for q in range(neigh.shape[1]):
                B = neigh[g, q]
                if B < 0 or B == g:
                    continue
                # groups outside the saved set can not be restored: stop growing there
                n_saved, ok_a = _save(g, mem, size, cost, saved_id, saved_mem, saved_size,
                                      saved_cost, mark, kick, n_saved)
                n_saved, ok_b = _save(B, mem, size, cost, saved_id, saved_mem, saved_size,
                                      saved_cost, mark, kick, n_saved)
                if not (ok_a and ok_b):
                    continue
                work += 1
                if _repartition(X, g, B, k, mem, size, cost, moves, scale, P, rows, side, trial,
                                proj, ordr, pre, dirv, mean):
                    for w in (g, B):
                        if not inq[w]:
                            inq[w] = True
                            queue[tail] = w
                            tail = (tail + 1) % queue.shape[0]
        while head != tail:
            inq[queue[head]] = False
            head = (head + 1) % queue.shape[0]
        old = 0.0
        new = 0.0
        for t in range(n_saved):
            g = saved_id[t]
            old += saved_cost[t]
            new += cost[g]
        if new < old - (TOL * old + scale) + slack:
            kept += 1
        else:
            for t in range(n_saved):
                g = saved_id[t]
                size[g] = saved_size[t]
                cost[g] = saved_cost[t]
                mem[g, :] = saved_mem[t, :]
    return kept
