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
