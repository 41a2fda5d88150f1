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
