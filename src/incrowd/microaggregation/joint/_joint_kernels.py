"""Numba kernels of the joint clustering (``_joint``): MDAV seeding and ONA*-style moves.

Every kernel sees the data as ``X`` (n, p) float64 standardized numeric columns, ``codes``
(n, C) int32 dense categorical codes and ``T`` (C, V, V) float64 with ``T[c, u, v]`` = level of
the lowest common ancestor of values u and v in column c's hierarchy / its max level. In a tree
the LCA of a set holding row r sits at the level max_m T[c, r, m]: a group keeps one member's
code (``rep``) and that maximum (``lv``), so adding a row costs one lookup per column.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import growth_to_sums, insert_pair, join_growth


@njit(cache=True)
def _pair_dist(X, codes, T, a, b):
    """Mixed distance of rows a and b: numeric squared differences (column order), then the
    categorical LCA terms."""
    acc = 0.0
    for j in range(X.shape[1]):
        diff = X[b, j] - X[a, j]
        acc += diff * diff
    for c in range(codes.shape[1]):
        acc += T[c, codes[a, c], codes[b, c]]
    return acc


@njit(cache=True)
def _nearest(d, live, n_live, taken, exclude, count, out):
    """The ``count`` untaken live rows with the smallest d (ascending, lower row on ties) into out.

    Rows are scanned in increasing order and enter the sorted buffer only when strictly closer
    than its worst, which keeps the lower row on ties (as MDAV's ``nearest_alive``).
    """
    buf = np.empty(count)
    filled = 0
    for t in range(n_live):
        i = live[t]
        if taken[i] or i == exclude:
            continue
        di = d[t]
        # rows come in ascending order: one that only ties the worst kept does not enter
        if filled == count and di >= buf[count - 1]:
            continue
        filled = insert_pair(buf, out, filled, count, di, i)
    return filled


@njit(cache=True)
def _take(X, codes, T, live, n_live, d, taken, center, k, sel, labels, group):
    """Distances of the live rows to ``center`` into d; center and its k-1 nearest untaken rows
    form ``group``."""
    for t in range(n_live):
        d[t] = _pair_dist(X, codes, T, center, live[t])
    labels[center] = group
    taken[center] = True
    got = _nearest(d, live, n_live, taken, center, k - 1, sel)
    for t in range(got):
        labels[sel[t]] = group
        taken[sel[t]] = True


@njit(cache=True)
def _take_by_loss(X, codes, T, live, n_live, d, taken, center, k, labels, group, mean, rep, lv):
    """Distances of the live rows to ``center`` into d; the group grows from center one row at
    a time, by the untaken row whose joining raises the loss least (lowest row on ties)."""
    p = X.shape[1]
    C = codes.shape[1]
    for t in range(n_live):
        d[t] = _pair_dist(X, codes, T, center, live[t])
    labels[center] = group
    taken[center] = True
    for j in range(p):
        mean[j] = X[center, j]
    for c in range(C):
        rep[c] = codes[center, c]
        lv[c] = 0.0
    for h in range(1, k):
        best = -1
        best_d = 0.0
        for t in range(n_live):
            i = live[t]
            if taken[i]:
                continue
            num = 0.0
            for j in range(p):
                diff = X[i, j] - mean[j]
                num += diff * diff
            acc = num * h / (h + 1.0)
            for c in range(C):
                a = T[c, rep[c], codes[i, c]]
                if a < lv[c]:
                    a = lv[c]
                acc += (h + 1.0) * a - h * lv[c]
            if best < 0 or acc < best_d:
                best = i
                best_d = acc
        labels[best] = group
        taken[best] = True
        for j in range(p):
            mean[j] = (mean[j] * h + X[best, j]) / (h + 1.0)
        for c in range(C):
            a = T[c, rep[c], codes[best, c]]
            if a > lv[c]:
                lv[c] = a


@njit(cache=True)
def seed_labels(X, codes, T, k, by_loss):
    """MDAV rounds with the mixed distance; group ids in order of creation.

    The "centroid" distance of a row is its numeric squared distance to the mean of the
    remaining rows plus, per categorical column, its mean LCA term to the remaining rows. For
    numeric columns the two notions differ by a constant (the remaining rows' variance), so with
    no categorical column the rounds are MDAV's, tie for tie.

    ``by_loss``: P's and Q's groups grow by least loss growth (``_take_by_loss``) instead of
    being their k-1 nearest rows by the mixed distance.
    """
    n, p = X.shape
    C = codes.shape[1]
    V = T.shape[1]
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    live = np.arange(n)
    n_live = n
    taken = np.zeros(n, np.bool_)
    counts = np.zeros((C, V))
    for i in range(n):
        for c in range(C):
            counts[c, codes[i, c]] += 1.0
    mean_term = np.empty((C, V))
    centre = np.empty(p)
    d = np.empty(n)
    sel = np.empty(max(k - 1, 1), np.int64)
    mean = np.empty(p)
    rep = np.empty(C, np.int32)
    lv = np.empty(C)
    group = 0
    while n_live >= 2 * k:
        for j in range(p):
            centre[j] = 0.0
        for t in range(n_live):
            i = live[t]
            for j in range(p):
                centre[j] += X[i, j]
        for j in range(p):
            centre[j] /= n_live
        for c in range(C):
            for u in range(V):
                s = 0.0
                for v in range(V):
                    if counts[c, v] > 0.0:
                        s += counts[c, v] * T[c, u, v]
                mean_term[c, u] = s / n_live
        far = -1
        far_d = -1.0
        for t in range(n_live):
            i = live[t]
            acc = 0.0
            for j in range(p):
                diff = X[i, j] - centre[j]
                acc += diff * diff
            for c in range(C):
                acc += mean_term[c, codes[i, c]]
            if far < 0 or acc > far_d:
                far = i
                far_d = acc
        if by_loss:
            _take_by_loss(X, codes, T, live, n_live, d, taken, far, k, labels, group, mean, rep, lv)
        else:
            _take(X, codes, T, live, n_live, d, taken, far, k, sel, labels, group)
        group += 1
        # Q: the remaining row farthest from P, read off P's distances (as MDAV does)
        q = -1
        q_d = -1.0
        for t in range(n_live):
            i = live[t]
            if not taken[i] and (q < 0 or d[t] > q_d):
                q = i
                q_d = d[t]
        if by_loss:
            _take_by_loss(X, codes, T, live, n_live, d, taken, q, k, labels, group, mean, rep, lv)
        else:
            _take(X, codes, T, live, n_live, d, taken, q, k, sel, labels, group)
        group += 1
        w = 0
        for t in range(n_live):
            i = live[t]
            if taken[i]:
                for c in range(C):
                    counts[c, codes[i, c]] -= 1.0
            else:
                live[w] = i
                w += 1
        n_live = w
    rest = group if n_live >= k else group - 1
    for t in range(n_live):
        labels[live[t]] = rest
    return labels


# ---------------------------------------------------------------- refinement state and moves


@njit(cache=True)
def init_state(X, codes, T, labels, n_groups, width):
    """Members (at most ``width`` per group), sizes, numeric sums, and per column rep / lv, for
    ``n_groups`` slots (the groups of ``labels`` first, empty slots after)."""
    n, p = X.shape
    C = codes.shape[1]
    members = np.full((n_groups, width), -1, np.int64)
    size = np.zeros(n_groups, np.int64)
    sums = np.zeros((n_groups, p))
    rep = np.zeros((n_groups, C), np.int32)
    lv = np.zeros((n_groups, C))
    for i in range(n):
        g = labels[i]
        members[g, size[g]] = i
        size[g] += 1
    for g in range(n_groups):
        _recompute(X, codes, T, members, size, sums, rep, lv, g)
    return members, size, sums, rep, lv


@njit(cache=True)
def _recompute(X, codes, T, members, size, sums, rep, lv, g):
    """Sums, rep and lv of group g from its members (exact, no drift)."""
    p = X.shape[1]
    C = codes.shape[1]
    for j in range(p):
        sums[g, j] = 0.0
    for t in range(size[g]):
        i = members[g, t]
        for j in range(p):
            sums[g, j] += X[i, j]
    for c in range(C):
        if size[g] == 0:
            lv[g, c] = 0.0
            continue
        r = codes[members[g, 0], c]
        top = 0.0
        for t in range(1, size[g]):
            x = T[c, r, codes[members[g, t], c]]
            if x > top:
                top = x
        rep[g, c] = r
        lv[g, c] = top


@njit(cache=True)
def recompute_all(X, codes, T, members, size, sums, rep, lv):
    for g in range(size.shape[0]):
        if size[g] > 0:
            _recompute(X, codes, T, members, size, sums, rep, lv, g)


@njit(cache=True)
def _add_delta(X, codes, T, size, sums, rep, lv, g, x):
    """Loss change of adding row x to group g."""
    h = size[g]
    num = growth_to_sums(X, x, sums, size, g)
    before = 0.0
    after = 0.0
    for c in range(codes.shape[1]):
        before += lv[g, c]
        a = T[c, rep[g, c], codes[x, c]]
        after += a if a > lv[g, c] else lv[g, c]
    return num + (h + 1.0) * after - h * before


@njit(cache=True, inline="always")
def _best_neighbour(X, codes, T, size, sums, rep, lv, near, g, x, k):
    """(group, loss added) of the neighbour of group g (non-empty, under 2k rows) that row x
    joins at the least added loss; (-1, 0.0) when none can take it. Ties keep the earlier neighbour."""
    best = -1
    best_d = 0.0
    for s in range(near.shape[1]):
        h = near[g, s]
        if h < 0:
            break
        if size[h] == 0 or size[h] >= 2 * k:
            continue
        dd = _add_delta(X, codes, T, size, sums, rep, lv, h, x)
        if best < 0 or dd < best_d:
            best = h
            best_d = dd
    return best, best_d


@njit(cache=True)
def _remove_delta(X, codes, T, members, size, sums, lv, g, x):
    """Loss change of removing row x from group g (size >= 2): negative or zero."""
    m = size[g]
    num = 0.0
    for j in range(X.shape[1]):
        diff = X[x, j] - sums[g, j] / m
        num += diff * diff
    num *= m / (m - 1.0)
    before = 0.0
    after = 0.0
    for c in range(codes.shape[1]):
        before += lv[g, c]
        r = -1
        top = 0.0
        for t in range(m):
            i = members[g, t]
            if i == x:
                continue
            if r < 0:
                r = codes[i, c]
            else:
                a = T[c, r, codes[i, c]]
                if a > top:
                    top = a
        after += top
    return -num + (m - 1.0) * after - m * before


@njit(cache=True)
def _add(X, codes, T, members, size, sums, rep, lv, labels, g, x):
    members[g, size[g]] = x
    size[g] += 1
    labels[x] = g
    for j in range(X.shape[1]):
        sums[g, j] += X[x, j]
    for c in range(codes.shape[1]):
        if size[g] == 1:
            rep[g, c] = codes[x, c]
            lv[g, c] = 0.0
        else:
            a = T[c, rep[g, c], codes[x, c]]
            if a > lv[g, c]:
                lv[g, c] = a


@njit(cache=True)
def _remove(X, codes, T, members, size, sums, rep, lv, g, x):
    m = size[g]
    for t in range(m):
        if members[g, t] == x:
            members[g, t] = members[g, m - 1]
            members[g, m - 1] = -1
            break
    size[g] = m - 1
    _recompute(X, codes, T, members, size, sums, rep, lv, g)


@njit(cache=True)
def _group_cost(X, codes, members, size, sums, lv, g):
    """Loss of group g: numeric SSE around its mean plus size * sum of its LCA terms."""
    m = size[g]
    sse = 0.0
    for t in range(m):
        i = members[g, t]
        for j in range(X.shape[1]):
            diff = X[i, j] - sums[g, j] / m
            sse += diff * diff
    cat = 0.0
    for c in range(codes.shape[1]):
        cat += lv[g, c]
    return sse + m * cat


@njit(cache=True)
def neighbour_groups(X, codes, T, size, sums, rep, lv, out, g_start, g_stop):
    """For each live group g in g_start..g_stop-1, into ``out[g]``: the out.shape[1] other live
    groups (-1 pads) whose loss would grow least by taking in a row at g's mean holding g's rep
    values (a row of g, as a move or a dissolution brings). Scans every group: O(groups) each."""
    n_groups = size.shape[0]
    p = X.shape[1]
    C = codes.shape[1]
    count = out.shape[1]
    alive = np.flatnonzero(size > 0)
    n_alive = alive.size
    means = np.zeros((n_groups, p))
    for g in alive:
        for j in range(p):
            means[g, j] = sums[g, j] / size[g]
    buf = np.empty(count)
    for g in range(g_start, g_stop):
        for s in range(count):
            out[g, s] = -1
        if size[g] == 0:
            continue
        filled = 0
        for b in range(n_alive):
            h = alive[b]
            if h == g:
                continue
            # the loss change of adding G's mean row (holding G's rep values) to H
            sh = size[h]
            dist = 0.0
            for j in range(p):
                diff = means[h, j] - means[g, j]
                dist += diff * diff
            dist = join_growth(sh, dist)
            for c in range(C):
                x = T[c, rep[g, c], rep[h, c]]
                if lv[h, c] > x:
                    x = lv[h, c]
                dist += (sh + 1.0) * x - sh * lv[h, c]
            # groups come in ascending id, so an equal distance keeps the lower id first; the
            # buffer (128 groups) takes many insertions, cheaper inline than through insert_pair
            if filled == count and dist >= buf[count - 1]:
                continue
            pos = filled if filled < count else count - 1
            while pos > 0 and buf[pos - 1] > dist:
                buf[pos] = buf[pos - 1]
                out[g, pos] = out[g, pos - 1]
                pos -= 1
            buf[pos] = dist
            out[g, pos] = h
            if filled < count:
                filled += 1
    return out


@njit(cache=True)
def _split(X, codes, T, members, size, sums, rep, lv, labels, h, free, k):
    """Split group h (2k rows) in two groups of k, as MDAV would: the member farthest from the
    group's centroid (the seeding's notion) with its k-1 nearest members form a new group.
    Splitting never raises the loss: a part's SSE and LCA levels are at most the whole's."""
    m = size[h]
    C = codes.shape[1]
    rows = np.sort(members[h, :m].copy())
    far = -1
    far_d = -1.0
    for a in range(m):
        i = rows[a]
        acc = 0.0
        for j in range(X.shape[1]):
            diff = X[i, j] - sums[h, j] / m
            acc += diff * diff
        for c in range(C):
            s = 0.0
            for b in range(m):
                s += T[c, codes[i, c], codes[rows[b], c]]
            acc += s / m
        if far < 0 or acc > far_d:
            far = a
            far_d = acc
    d = np.empty(m)
    for a in range(m):
        d[a] = _pair_dist(X, codes, T, rows[far], rows[a])
    chosen = np.zeros(m, np.bool_)
    chosen[far] = True
    for _ in range(k - 1):
        best = -1
        for a in range(m):
            if not chosen[a] and (best < 0 or d[a] < d[best]):
                best = a
        chosen[best] = True
    new = free[free[0]]  # a slot is free: 2k rows in h leave fewer than n // k other groups
    free[0] -= 1
    size[h] = 0
    size[new] = 0
    for a in range(m):
        g = new if chosen[a] else h
        members[g, size[g]] = rows[a]
        size[g] += 1
        labels[rows[a]] = g
    for t in range(size[h], members.shape[1]):
        members[h, t] = -1
    _recompute(X, codes, T, members, size, sums, rep, lv, h)
    _recompute(X, codes, T, members, size, sums, rep, lv, new)


@njit(cache=True)
def dissolve_pass(X, codes, T, members, size, sums, rep, lv, labels, near, k, free, g_start, g_stop, eps):
    """ONA*'s phase 1 on groups g_start..g_stop-1 of exactly k rows: each member goes, in turn,
    to the neighbour group (of fewer than 2k rows) its joining raises least; kept when the total
    loss falls by more than eps, undone otherwise; a group reaching 2k rows is split (ONA*'s
    split step). Returns the number of groups dissolved."""
    done = 0
    moved_to = np.empty(k, np.int64)
    rows = np.empty(k, np.int64)
    for g in range(g_start, g_stop):
        if size[g] != k:
            continue
        before = _group_cost(X, codes, members, size, sums, lv, g)
        for t in range(k):
            rows[t] = members[g, t]
        added = 0.0
        placed = 0
        for t in range(k):
            x = rows[t]
            best, best_d = _best_neighbour(X, codes, T, size, sums, rep, lv, near, g, x, k)
            if best < 0:
                break
            added += best_d
            _add(X, codes, T, members, size, sums, rep, lv, labels, best, x)
            moved_to[t] = best
            placed += 1
        if placed == k and added < before - eps:
            for t in range(k):
                members[g, t] = -1
            size[g] = 0
            for j in range(X.shape[1]):
                sums[g, j] = 0.0
            free[0] += 1
            free[free[0]] = g
            done += 1
            for t in range(k):
                if size[moved_to[t]] >= 2 * k:
                    _split(X, codes, T, members, size, sums, rep, lv, labels, moved_to[t], free, k)
        else:
            for t in range(placed - 1, -1, -1):
                _remove(X, codes, T, members, size, sums, rep, lv, moved_to[t], rows[t])
                labels[rows[t]] = g
    return done


@njit(cache=True)
def reassign_pass(X, codes, T, members, size, sums, rep, lv, labels, near, k, free, g_start, g_stop, eps):
    """ONA*'s phase 2 on groups g_start..g_stop-1 of more than k rows: a member moves to the
    neighbour group (of fewer than 2k rows) where the total loss falls most, if by more than
    eps; a group reaching 2k rows is split. Returns the number of rows moved."""
    moved = 0
    rows = np.empty(2 * k, np.int64)
    for g in range(g_start, g_stop):
        if size[g] <= k:
            continue
        m0 = size[g]
        for t in range(m0):
            rows[t] = members[g, t]
        for t in range(m0):
            if size[g] <= k:
                break
            x = rows[t]
            out = _remove_delta(X, codes, T, members, size, sums, lv, g, x)
            best, best_d = _best_neighbour(X, codes, T, size, sums, rep, lv, near, g, x, k)
            if best >= 0 and out + best_d < -eps:
                _remove(X, codes, T, members, size, sums, rep, lv, g, x)
                _add(X, codes, T, members, size, sums, rep, lv, labels, best, x)
                moved += 1
                if size[best] >= 2 * k:
                    _split(X, codes, T, members, size, sums, rep, lv, labels, best, free, k)
    return moved


@njit(cache=True)
def objective_parts(X, codes, T, labels, n_groups):
    """(numeric SSE, categorical loss) of a partition, from scratch."""
    n, p = X.shape
    C = codes.shape[1]
    sizes = np.zeros(n_groups)
    sums = np.zeros((n_groups, p))
    first = np.full(n_groups, -1, np.int64)
    for i in range(n):
        g = labels[i]
        sizes[g] += 1.0
        for j in range(p):
            sums[g, j] += X[i, j]
        if first[g] < 0:
            first[g] = i
    sse = 0.0
    for i in range(n):
        g = labels[i]
        for j in range(p):
            diff = X[i, j] - sums[g, j] / sizes[g]
            sse += diff * diff
    top = np.zeros((n_groups, C))
    for i in range(n):
        g = labels[i]
        r = first[g]
        for c in range(C):
            a = T[c, codes[r, c], codes[i, c]]
            if a > top[g, c]:
                top[g, c] = a
    cat = 0.0
    for g in range(n_groups):
        for c in range(C):
            cat += sizes[g] * top[g, c]
    return sse, cat
