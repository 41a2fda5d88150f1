"""Plain, unoptimized reference implementations the fast kernels are tested against.

Written for clarity with whole-array numpy steps. Arithmetic is spelled out so that it is the
textbook computation: a squared distance is the sum over columns, in column order, of squared
differences; a centroid is the sequential (row-order) sum of the rows divided by their count;
ties go to the lowest row index.
"""

from __future__ import annotations

import numpy as np


def sq_dist(X, point):
    d = np.zeros(X.shape[0])
    for j in range(X.shape[1]):
        d += (X[:, j] - point[j]) ** 2
    return d


def seq_mean(X):
    return np.cumsum(X, axis=0)[-1] / X.shape[0]


def nearest(d, candidates, count):
    """``count`` candidates with smallest d, ties to the lowest index (candidates ascending)."""
    order = np.argsort(d[candidates], kind="stable")
    return candidates[order[:count]]


def farthest(d, candidates):
    return candidates[int(np.argmax(d[candidates]))]


def mdav(X, k):
    n = X.shape[0]
    labels = np.full(n, -1)
    remaining = np.arange(n)
    group = 0
    if n < 2 * k:
        return np.zeros(n, dtype=int)
    while remaining.size >= 2 * k:
        c = seq_mean(X[remaining])
        p = farthest(sq_dist(X, c), remaining)
        dp = sq_dist(X, X[p])
        others = remaining[remaining != p]
        members = np.concatenate([[p], nearest(dp, others, k - 1)])
        labels[members] = group
        group += 1
        remaining = remaining[labels[remaining] < 0]
        q = farthest(dp, remaining)
        dq = sq_dist(X, X[q])
        others = remaining[remaining != q]
        members = np.concatenate([[q], nearest(dq, others, k - 1)])
        labels[members] = group
        group += 1
        remaining = remaining[labels[remaining] < 0]
    if remaining.size >= k:
        labels[remaining] = group
    elif remaining.size:
        labels[remaining] = group - 1
    return labels


# ---------------------------------------------------------------------------------------------
# Fixed-centroid variants (paper 001 sections 2-3). Group centroids are the sequential mean of
# the members in the order they joined, as the kernels keep them.


def visiting_order(X):
    d0 = sq_dist(X, seq_mean(X))
    return np.argsort(-d0, kind="stable")


def sse_of(X, members):
    total = 0.0
    for j in range(X.shape[1]):
        col = X[members, j]
        mu = np.cumsum(col)[-1] / col.size
        for v in col:
            total += (v - mu) ** 2
    return total


class _Groups:
    def __init__(self, X):
        self.X = X
        self.members: list[list[int]] = []

    def centroid(self, g):
        return seq_mean(self.X[self.members[g]])

    def nearest_centroid(self, row):
        dists = [sq_dist(self.centroid(g)[None, :], self.X[row])[0] for g in range(len(self.members))]
        return int(np.argmin(dists))

    def sse_growth_closest(self, row):
        growth = []
        for g in range(len(self.members)):
            size = len(self.members[g])
            dist = sq_dist(self.centroid(g)[None, :], self.X[row])[0]
            growth.append(size / (size + 1.0) * dist)
        g = int(np.argmin(growth))
        return g, growth[g]


def _single_group_if_small(n, k):
    return np.zeros(n, dtype=int) if n < 2 * k else None


def mdav_plus(X, k):
    n = X.shape[0]
    small = _single_group_if_small(n, k)
    if small is not None:
        return small
    labels = np.full(n, -1)
    groups = _Groups(X)
    for r in visiting_order(X):
        if (labels < 0).sum() < k:
            break
        if labels[r] >= 0:
            continue
        unassigned = np.flatnonzero(labels < 0)
        members = [int(r)] + list(nearest(sq_dist(X, X[r]), unassigned[unassigned != r], k - 1))
        labels[members] = len(groups.members)
        groups.members.append(members)
    leftovers = np.flatnonzero(labels < 0)
    targets = [groups.nearest_centroid(i) for i in leftovers]
    for i, g in zip(leftovers, targets):
        labels[i] = g
    return labels


def vmdav(X, k, gamma):
    n = X.shape[0]
    small = _single_group_if_small(n, k)
    if small is not None:
        return small
    labels = np.full(n, -1)
    groups = _Groups(X)
    for r in visiting_order(X):
        if (labels < 0).sum() < k:
            break
        if labels[r] >= 0:
            continue
        unassigned = np.flatnonzero(labels < 0)
        members = [int(r)] + list(nearest(sq_dist(X, X[r]), unassigned[unassigned != r], k - 1))
        g = len(groups.members)
        labels[members] = g
        while len(members) < 2 * k - 1:
            unassigned = np.flatnonzero(labels < 0)
            if unassigned.size == 0:
                break
            to_group = np.min([sq_dist(X[unassigned], X[m]) for m in members], axis=0)
            e = unassigned[int(np.argmin(to_group))]
            d_in = to_group.min()
            others = unassigned[unassigned != e]
            if others.size:
                accept = d_in < gamma * sq_dist(X[others], X[e]).min()
            else:
                accept = gamma > 0
            if not accept:
                break
            members.append(int(e))
            labels[e] = g
        groups.members.append(members)
    leftovers = np.flatnonzero(labels < 0)
    targets = [groups.nearest_centroid(i) for i in leftovers]
    for i, g in zip(leftovers, targets):
        labels[i] = g
    return labels


def mdav_star(X, k):
    n = X.shape[0]
    small = _single_group_if_small(n, k)
    if small is not None:
        return small
    labels = np.full(n, -1)
    groups = _Groups(X)
    for r in visiting_order(X):
        unassigned = np.flatnonzero(labels < 0)
        if unassigned.size < k:
            break
        if labels[r] >= 0:
            continue
        others = unassigned[unassigned != r]
        members = [int(r)] + list(nearest(sq_dist(X, X[r]), others, k - 1))
        cost_new = sse_of(X, members) / k
        extend = False
        if groups.members and unassigned.size - 1 >= k:
            nu = members[1]
            members_nu = [nu] + list(nearest(sq_dist(X, X[nu]), others[others != nu], k - 1))
            clos, growth = groups.sse_growth_closest(r)
            extend = cost_new > (growth + sse_of(X, members_nu)) / (k + 1)
        if extend:
            groups.members[clos].append(int(r))
            labels[r] = clos
        else:
            labels[members] = len(groups.members)
            groups.members.append(members)
    for i in np.flatnonzero(labels < 0):
        g, _ = groups.sse_growth_closest(i)
        groups.members[g].append(int(i))
        labels[i] = g
    return labels


# ---------------------------------------------------------------------------------------------
# ONA* (paper 000 Algorithm 3), written straight from the pseudo code with Python lists of
# members. The conventions the fast kernel shares, so that both make the same decisions even in
# exact ties: a cluster list in which a split cluster's first part keeps its place and the other
# parts are appended, and a dissolved cluster leaves an empty slot (numbered away at the end);
# members in ascending row order; a cluster's sum is the sequential sum of its rows, its centroid
# sum / size, its SSE two-pass (column by column); sums and SSE follow the incremental formulas
# SSE(B + x) = SSE(B) + |B|/(|B|+1) ||x - c_B||^2 and SSE(A - x) = SSE(A) - |A|/(|A|-1)
# ||x - c_A||^2 between the rounds, and are recomputed from the members at the start of each
# round; the nearest centroid has the lowest index on ties; a gain counts only when it exceeds
# ONA_TOL times the compared costs plus SST / n (rounding noise in exact ties is no gain).

ONA_TOL = 1e-10


def _sqd(x, c):
    d = 0.0
    for j in range(x.shape[0]):
        diff = x[j] - c[j]
        d += diff * diff
    return d


def _gain_exceeds(gain, loss, scale):
    return gain - loss > ONA_TOL * (gain + loss + scale)


def sst_per_row(X):
    """SST / n, summed column by column in row order (as the kernel does)."""
    n, m = X.shape
    s = 0.0
    for j in range(m):
        mu = np.cumsum(X[:, j])[-1] / n
        for v in X[:, j]:
            diff = v - mu
            s += diff * diff
    return s / n


class _OnaClusters:
    def __init__(self, X):
        self.X = X
        self.members: list[list[int] | None] = []
        self.sums: list[np.ndarray] = []
        self.sse: list[float] = []

    def size(self, g):
        return 0 if self.members[g] is None else len(self.members[g])

    def centroid(self, g):
        return self.sums[g] / self.size(g)

    def set(self, g, rows):
        """Cluster g := rows (ascending), computed from its members; g == len appends."""
        X = self.X
        rows = sorted(int(r) for r in rows)
        sums = np.zeros(X.shape[1])
        for r in rows:
            sums = sums + X[r]
        cent = sums / len(rows)
        sse = 0.0
        for j in range(X.shape[1]):
            for r in rows:
                diff = X[r, j] - cent[j]
                sse += diff * diff
        if g == len(self.members):
            self.members.append(None)
            self.sums.append(None)
            self.sse.append(0.0)
        self.members[g] = rows
        self.sums[g] = sums
        self.sse[g] = sse

    def add(self, r, g):
        sz = self.size(g)
        self.sse[g] += sz / (sz + 1.0) * _sqd(self.X[r], self.centroid(g))
        self.sums[g] = self.sums[g] + self.X[r]
        self.members[g] = sorted(self.members[g] + [r])

    def remove(self, r, g):
        sz = self.size(g)
        v = self.sse[g] - sz / (sz - 1.0) * _sqd(self.X[r], self.centroid(g))
        self.sse[g] = v if v > 0.0 else 0.0
        self.sums[g] = self.sums[g] - self.X[r]
        self.members[g].remove(r)

    def nearest_other(self, r, exclude):
        """Cluster with the closest centroid to row r among the others (lowest index on ties)."""
        alive = [g for g in range(len(self.members)) if self.members[g] is not None and g != exclude]
        if not alive:
            return -1, np.inf
        C = np.array([self.centroid(g) for g in alive])
        d = sq_dist(C, self.X[r])
        best = int(np.argmin(d))
        return alive[best], float(d[best])

    def split(self, g, k, method):
        """Replace cluster g by method(X[members], k): part 0 keeps g, the others are appended."""
        rows = np.array(self.members[g])
        parts = method(np.ascontiguousarray(self.X[rows]), k)
        for p in range(int(parts.max()) + 1):
            self.set(g if p == 0 else len(self.members), rows[parts == p])

    def labels(self, n):
        labels = np.full(n, -1)
        alive = [m for m in self.members if m is not None]
        for new_id, rows in enumerate(alive):
            labels[rows] = new_id
        return labels


def ona_star(X, k, max_rounds=100, scale=None):
    """ONA* of paper 000 Algorithm 3. Returns (labels, rounds run, converged)."""
    n = X.shape[0]
    if n < 2 * k:
        return np.zeros(n, dtype=int), 0, True
    cl = _OnaClusters(X)
    scale = sst_per_row(X) if scale is None else scale
    init = mdav_star(X, k)
    n0 = int(init.max()) + 1
    for g in range(n0):
        cl.set(g, np.flatnonzero(init == g))
    for g in range(n0):  # lines 2-4: clusters of >= 2k rows are split by MDAV+
        if cl.size(g) >= 2 * k:
            cl.split(g, k, mdav_plus)
    rounds, converged = 0, False
    while rounds < max_rounds:
        rounds += 1
        changed = False
        for g in range(len(cl.members)):
            if cl.members[g] is not None:
                cl.set(g, cl.members[g])
        # Phase 1: dissolve clusters of exactly k rows when that lowers the cost
        i = 0
        while i < len(cl.members):
            if cl.size(i) == k:
                rows = list(cl.members[i])
                targets = [cl.nearest_other(r, i)[0] for r in rows]
                if min(targets) >= 0:
                    L = sorted(set(targets))
                    inc_total = 0.0
                    for g in L:
                        sz = cl.size(g)
                        tsum = cl.sums[g].copy()
                        tc = cl.centroid(g)
                        inc = 0.0
                        for r, t in zip(rows, targets):
                            if t != g:
                                continue
                            inc += sz / (sz + 1.0) * _sqd(X[r], tc)
                            sz += 1
                            tsum = tsum + X[r]
                            tc = tsum / sz
                        inc_total += inc
                    # Cost1 > Cost2 <=> Cost(C_i) > sum_l [Cost(C'_l) - Cost(C_l)]
                    if _gain_exceeds(cl.sse[i], inc_total, scale):
                        for g in L:
                            for r, t in zip(rows, targets):
                                if t == g:
                                    cl.add(r, g)
                        cl.members[i] = None
                        cl.sse[i] = 0.0
                        changed = True
                        for g in L:
                            if cl.size(g) >= 2 * k:
                                cl.split(g, k, mdav_star)
            i += 1
        # Phase 2: move the row with the largest cost improvement out of clusters of > k rows
        i = 0
        while i < len(cl.members):
            while cl.size(i) > k:
                si = cl.size(i)
                best = None  # (improvement, row, target, a, b)
                for r in list(cl.members[i]):
                    g, dg = cl.nearest_other(r, i)
                    if g < 0:
                        break
                    a = si / (si - 1.0) * _sqd(X[r], cl.centroid(i))
                    b = cl.size(g) / (cl.size(g) + 1.0) * dg
                    if best is None or a - b > best[0]:
                        best = (a - b, r, g, a, b)
                if best is None or not _gain_exceeds(best[3], best[4], scale):
                    break
                _, r0, j0, _, _ = best
                cl.remove(r0, i)
                cl.add(r0, j0)
                changed = True
                if cl.size(j0) >= 2 * k:
                    cl.split(j0, k, mdav_star)
            i += 1
        if not changed:
            converged = True
            break
    return cl.labels(n), rounds, converged


# ---------------------------------------------------------------------------------------------
# Mondrian, Mondrian V, Mondrian V2D (paper 000 section 4), as defined in
# ``incrowd.microaggregation.mondrian.mondrian``: recursive median cuts by position after a stable sort
# of each part by its projection (so ties keep the parent's order; the root's order is the row
# order); a part is split while it has more than 2k rows (or >= 2k with split_2k).


def mondrian_directions(d, rule):
    """(a, b, o) per candidate direction: the axes, then for v2d the pairs a < b, + before -."""
    dirs = [(j, j, 0) for j in range(d)]
    if rule == "v2d":
        dirs += [(a, b, o) for a in range(d) for b in range(a + 1, d) for o in (1, -1)]
    return dirs


def mondrian_projection(X, direction):
    a, b, o = direction
    if o == 0:
        return X[:, a]
    return X[:, a] + X[:, b] if o > 0 else X[:, a] - X[:, b]


def mondrian_score(X, direction, rule, diagonals="sum"):
    """Widest range, or the sequential (row-order) sum of squared deviations from the mean."""
    p = mondrian_projection(X, direction)
    if rule == "range":
        return p.max() - p.min()
    mean = np.cumsum(p)[-1] / p.size
    ss = np.cumsum((p - mean) ** 2)[-1]
    return 0.5 * ss if direction[2] != 0 and diagonals == "unit" else ss


def mondrian(X, k, rule="variance", diagonals="sum", split_2k=False, leaf_max=0):
    """rule: "range" (Mondrian), "variance" (Mondrian V) or "v2d" (Mondrian V2D).

    ``leaf_max``: parts of at most this many rows are not cut (MONA's hand-over to ONA*)."""
    n, d = X.shape
    dirs = mondrian_directions(d, rule)
    labels = np.full(n, -1)
    next_id = [0]

    def split(order):  # the part's rows, in the part's order
        m = order.size
        if m < 2 * k or (m == 2 * k and not split_2k) or m <= leaf_max:
            labels[order] = next_id[0]
            next_id[0] += 1
            return
        rows = np.sort(order)  # scores sum in row order
        scores = [mondrian_score(X[rows], dr, rule, diagonals) for dr in dirs]
        best = dirs[int(np.argmax(scores))]  # first maximum
        p = mondrian_projection(X[order], best)
        ordered = order[np.argsort(p, kind="stable")]
        split(ordered[: m // 2])
        split(ordered[m // 2:])

    split(np.arange(n))
    return labels


# ---------------------------------------------------------------------------------------------
# ONA (paper 000 Algorithm 2), recursive as in the pseudo code. Shares with the kernel: the
# SplitMix64 stream (one per run, seeded by the caller) for the random starts; the start itself
# (consecutive blocks of k of a Fisher-Yates permutation, leftovers to the last block); members
# kept in the order they joined (a leaving row is taken out, a joining row goes last); ids of
# dissolved clusters reused last-freed-first by split parts; a cluster computed from its members
# only at the start and after a split; a run's SSE recomputed from its labels to pick the best.

_MASK64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = int(seed) & _MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, bound):
        limit = _MASK64 - (_MASK64 % bound)
        while True:
            z = self.next()
            if z < limit:
                return z % bound


class _OnaState:
    """Clusters as member lists in joining order; sums and SSE as in ``_OnaClusters``."""

    def __init__(self, X, n_cl):
        self.X = X
        self.members = [[] for _ in range(n_cl)]
        self.sums = [np.zeros(X.shape[1]) for _ in range(n_cl)]
        self.sse = [0.0] * n_cl

    def size(self, g):
        return len(self.members[g])

    def centroid(self, g):
        return self.sums[g] / self.size(g)

    def recompute(self, g):
        X, rows = self.X, self.members[g]
        sums = np.zeros(X.shape[1])
        for r in rows:
            sums = sums + X[r]
        cent = sums / len(rows)
        sse = 0.0
        for j in range(X.shape[1]):
            for r in rows:
                diff = X[r, j] - cent[j]
                sse += diff * diff
        self.sums[g] = sums
        self.sse[g] = sse

    def add(self, r, g):
        sz = self.size(g)
        self.sse[g] += sz / (sz + 1.0) * _sqd(self.X[r], self.centroid(g))
        self.sums[g] = self.sums[g] + self.X[r]
        self.members[g].append(r)

    def remove(self, r, g):
        sz = self.size(g)
        v = self.sse[g] - sz / (sz - 1.0) * _sqd(self.X[r], self.centroid(g))
        self.sse[g] = v if v > 0.0 else 0.0
        self.sums[g] = self.sums[g] - self.X[r]
        self.members[g].remove(r)

    def nearest_other(self, r, exclude):
        alive = [g for g in range(len(self.members)) if self.members[g] and g != exclude]
        if not alive:
            return -1, np.inf
        d = sq_dist(np.array([self.centroid(g) for g in alive]), self.X[r])
        best = int(np.argmin(d))
        return alive[best], float(d[best])


def ona_run(X, k, max_rounds, rng, scale):
    """One ONA run; ``rng`` a SplitMix64, ``scale`` SST / n of the top-level data.
    Returns (labels, rounds run, converged)."""
    n = X.shape[0]
    if n < 2 * k:
        return np.zeros(n, dtype=int), 0, True
    n_cl = n // k
    perm = list(range(n))
    for t in range(n - 1, 0, -1):
        u = rng.below(t + 1)
        perm[t], perm[u] = perm[u], perm[t]
    st = _OnaState(X, n_cl)
    lab = [0] * n
    for t in range(n):
        g = min(t // k, n_cl - 1)
        lab[perm[t]] = g
        st.members[g].append(perm[t])
    for g in range(n_cl):
        st.recompute(g)
    free: list[int] = []
    n_alive = n_cl
    rounds, converged = 0, False
    while rounds < max_rounds:
        rounds += 1
        changed = False
        for x in range(n):
            i = lab[x]
            if st.size(i) > k:  # case 1: reassign x to the closest centroid
                si = st.size(i)
                d_own = 0.0
                for j in range(X.shape[1]):
                    diff = X[x, j] - (st.sums[i][j] - X[x, j]) / (si - 1)
                    d_own += diff * diff
                g, dg = st.nearest_other(x, i)
                if g >= 0 and _gain_exceeds(d_own, dg, scale):
                    st.remove(x, i)
                    st.add(x, g)
                    lab[x] = g
                    changed = True
            elif st.size(i) == k:  # case 2: dissolve C_i?
                if n_alive <= 2:
                    continue
                rows = list(st.members[i])
                targets = [st.nearest_other(r, i)[0] for r in rows]
                if min(targets) < 0:
                    continue
                L = list(dict.fromkeys(targets))  # in order of first appearance
                inc_total = 0.0
                for g in L:
                    sz = st.size(g)
                    tsum = st.sums[g].copy()
                    tc = st.centroid(g)
                    inc = 0.0
                    for r, t in zip(rows, targets):
                        if t != g:
                            continue
                        inc += sz / (sz + 1.0) * _sqd(X[r], tc)
                        sz += 1
                        tsum = tsum + X[r]
                        tc = tsum / sz
                    inc_total += inc
                if not _gain_exceeds(st.sse[i], inc_total, scale):
                    continue
                for r, g in zip(rows, targets):
                    st.add(r, g)
                    lab[r] = g
                st.members[i] = []
                st.sse[i] = 0.0
                free.append(i)
                n_alive -= 1
                changed = True
        for g in range(n_cl):  # split clusters of >= 2k rows by ONA on their rows
            if st.size(g) < 2 * k:
                continue
            rows = list(st.members[g])
            parts, _, _ = ona_run(np.ascontiguousarray(X[rows]), k, max_rounds, rng, scale)
            n_parts = int(parts.max()) + 1
            ids = [g] + [free.pop() for _ in range(n_parts - 1)]
            n_alive += n_parts - 1
            for p in ids:
                st.members[p] = []
            for r, p in zip(rows, parts):
                lab[r] = ids[p]
                st.members[ids[p]].append(r)
            for p in ids:
                st.recompute(p)
        if not changed:
            converged = True
            break
    alive = [g for g in range(n_cl) if st.members[g]]
    new_id = {g: t for t, g in enumerate(alive)}
    return np.array([new_id[g] for g in lab]), rounds, converged


def sse_in_row_order(X, labels):
    G = int(labels.max()) + 1
    sums = np.zeros((G, X.shape[1]))
    cnt = np.zeros(G, dtype=int)
    for r in range(X.shape[0]):
        sums[labels[r]] = sums[labels[r]] + X[r]
        cnt[labels[r]] += 1
    total = 0.0
    for r in range(X.shape[0]):
        c = sums[labels[r]] / cnt[labels[r]]
        for j in range(X.shape[1]):
            diff = X[r, j] - c[j]
            total += diff * diff
    return total


def ona(X, k, seeds, max_rounds=30):
    """Best of len(seeds) ONA runs (lowest SSE, first on ties): (labels, SSE per run, best)."""
    scale = sst_per_row(X)
    results = [ona_run(X, k, max_rounds, SplitMix64(s), scale)[0] for s in seeds]
    costs = np.array([sse_in_row_order(X, lab) for lab in results])
    best = int(np.argmin(costs))
    return results[best], costs, best


# ---------------------------------------------------------------------------------------------
# MONA_rho (paper 000 Algorithm 6), recursive as in the pseudo code with the hand-over rule of
# ``incrowd.microaggregation.mondrian.mona``: a part of at most n^rho rows goes to ONA* (the reference
# ``ona_star`` above, on the part's rows in row order), a larger one is cut as by Mondrian V, and
# a part Mondrian would not cut is one group. Group ids follow the parts depth-first.


def mona(X, k, rho, rule="variance", split_2k=True):
    n = X.shape[0]
    limit = n if rho == 1.0 else int(np.floor(n**rho))
    scale = sst_per_row(X)
    dirs = mondrian_directions(X.shape[1], rule)
    labels = np.full(n, -1)
    next_id = [0]

    def part(order):
        m = order.size
        if m <= limit:
            rows = np.sort(order)
            sub, _, _ = ona_star(np.ascontiguousarray(X[rows]), k, 100, scale)
            labels[rows] = sub + next_id[0]
            next_id[0] += int(sub.max()) + 1
            return
        if m < 2 * k or (m == 2 * k and not split_2k):
            labels[order] = next_id[0]
            next_id[0] += 1
            return
        rows = np.sort(order)
        scores = [mondrian_score(X[rows], dr, rule) for dr in dirs]
        best = dirs[int(np.argmax(scores))]
        ordered = order[np.argsort(mondrian_projection(X[order], best), kind="stable")]
        part(ordered[: m // 2])
        part(ordered[m // 2:])

    part(np.arange(n))
    return labels


# ---------------------------------------------------------------------------------------------
# Incremental adjoining (paper 002 section 4.2.2 and 3.2.6). Groups are kept as running sums;
# a split runs MDAV on the members in ascending row order.


def incremental_adjoin(P_old, labels_old, Z_new, k, inertial=False, split="none"):
    """Labels of stored + new rows after adjoining Z_new one row at a time.

    ``split``: "none" (nn), "mid" (split a group by MDAV once it has 2k rows) or "end" (split
    every group of >= 2k rows by MDAV after all rows are placed).
    """
    points = np.concatenate([P_old, Z_new]) if P_old is not None and P_old.size else None
    n_old = labels_old.shape[0]
    labels = np.concatenate([labels_old, np.full(Z_new.shape[0], -1)]).astype(np.int64)
    g = int(labels_old.max()) + 1
    sizes = [int(np.count_nonzero(labels_old == q)) for q in range(g)]
    sums = [np.zeros(Z_new.shape[1]) for _ in range(g)]
    for r in range(n_old):  # sequential, as np.add.at accumulates
        sums[labels_old[r]] = sums[labels_old[r]] + P_old[r]
    centroids = [sums[q] / sizes[q] for q in range(g)]

    def split_group(q):
        members = np.sort(np.flatnonzero(labels == q))
        sub = mdav(points[members], k)
        ids = [q] + list(range(len(sizes), len(sizes) + int(sub.max())))
        for _ in range(int(sub.max())):
            sizes.append(0)
            sums.append(None)
            centroids.append(None)
        for p, gid in enumerate(ids):
            rows = members[sub == p]
            labels[rows] = gid
            sizes[gid] = rows.size
            total = np.zeros(Z_new.shape[1])
            for r in rows:
                total = total + points[r]
            sums[gid] = total
            centroids[gid] = total / rows.size

    for i in range(Z_new.shape[0]):
        z = Z_new[i]
        best, best_q = np.inf, -1
        for q in range(len(sizes)):
            w = sizes[q] / (sizes[q] + 1.0) if inertial else 1.0
            d = 0.0
            for j in range(z.shape[0]):
                d += (z[j] - centroids[q][j]) ** 2
            if w * d < best:
                best, best_q = w * d, q
        q = best_q
        labels[n_old + i] = q
        sums[q] = sums[q] + z
        sizes[q] += 1
        centroids[q] = sums[q] / sizes[q]
        if split == "mid" and sizes[q] >= 2 * k:
            split_group(q)
    if split == "end":
        for q in range(len(sizes)):
            if sizes[q] >= 2 * k:
                split_group(q)
    return labels


# ---------------------------------------------------------------------------------------------
# Generalization lattice (paper 004): generalize with plain pandas, group, count.


def read_arx_hierarchy(path):
    """An ARX hierarchy file as a table of strings (column j = level j)."""
    import pandas as pd

    return pd.read_csv(path, sep=";", header=None, dtype=str, keep_default_na=False)


def generalized_frame(frame, tables, levels):
    """The QI columns of ``frame`` replaced by their labels at ``levels`` (attr -> level)."""
    out = frame.copy()
    for attr, level in levels.items():
        table = tables[attr]
        out[attr] = frame[attr].astype(str).map(dict(zip(table[0], table[level])))
        assert not out[attr].isna().any(), f"value of {attr} missing from its hierarchy"
    return out


def brute_histograms(frame, tables, levels, sensitive=None):
    """({class size: classes}, {distinct sensitive values: (classes, rows)} or None)."""
    qis = list(levels)
    g = generalized_frame(frame, tables, levels)
    sizes = g.groupby(qis).size()
    k_hist = {int(s): int(c) for s, c in sizes.value_counts().items()}
    if sensitive is None:
        return k_hist, None
    distinct = g.groupby(qis)[sensitive].nunique()
    l_hist = {}
    for d in sorted(set(distinct.tolist())):
        mask = distinct == d
        l_hist[int(d)] = (int(mask.sum()), int(sizes[mask].sum()))
    return k_hist, l_hist


def suppressed_from(hist, t, criterion):
    """Rows under the threshold t in a brute-force histogram."""
    if criterion == "k":
        return sum(size * classes for size, classes in hist.items() if size < t)
    return sum(rows for d, (_, rows) in hist.items() if d < t)


def brute_negotiation(nodes, supp, vmax, t, limit, n_rows, available=None):
    """Definitions of the issue, by enumeration. ``nodes``: level tuples; ``supp(node, t)``;
    ``available``: the nodes with histograms (a partial lattice), None for all. A node that
    suppresses all ``n_rows`` rows publishes nothing and is never an answer.

    Returns {"exact" | "max_suppression" | "height" | "k": (levels, suppressed, threshold) or None}.
    """
    avail = [v for v in nodes if available is None or v in available]
    sub = [v for v in avail if all(a <= b for a, b in zip(v, vmax))]
    limit = min(limit, n_rows - 1)

    def lowest(cands, tt, lim):
        feasible = [(sum(v), supp(v, tt), v) for v in cands if supp(v, tt) <= lim]
        if not feasible:
            return None
        _, s, v = min(feasible)
        return (v, s, tt)

    answer = {"exact": lowest(sub, t, limit), "max_suppression": None, "height": None, "k": None}
    if answer["exact"] is not None:
        return answer
    publishing = [v for v in sub if supp(v, t) < n_rows]
    if publishing:
        s, _, v = min((supp(v, t), sum(v), v) for v in publishing)
        answer["max_suppression"] = (v, s, t)
    answer["height"] = lowest(avail, t, limit)
    for tt in range(t - 1, 1, -1):
        found = lowest(sub, tt, limit)
        if found is not None:
            answer["k"] = found
            break
    return answer
