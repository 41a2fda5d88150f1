"""Pieces shared by the fixed-centroid MDAV variants (MDAV+, V-MDAV, MDAV*).

These variants pick each new group's origin as the unassigned row farthest from the centroid of
the *whole* data, which never moves, so the visiting order is one sort done up front.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import growth_to_sums, helper, order_by_distance_desc, sequential_mean


@helper
def visiting_order(X):
    return order_by_distance_desc(X, sequential_mean(X))


@helper
def next_origin(order, pos, labels):
    """Advance ``pos`` past assigned rows; returns the new position and its row (unassigned)."""
    while labels[order[pos]] >= 0:
        pos += 1
    return pos, order[pos]


@njit(cache=True)
def extension_accepts(d_in, d_out, gamma):
    """V-MDAV's rule: the row closest to the group (squared distance d_in) joins when it is closer
    than gamma times its distance to its own nearest unassigned neighbour (d_out, infinite when
    it is the last row, then any gamma > 0 lets it join)."""
    if d_out == np.inf:
        return gamma > 0.0
    return d_in < gamma * d_out


@helper
def add_to_group(X, row, g, labels, sums, sizes):
    labels[row] = g
    sizes[g] += 1
    for j in range(X.shape[1]):
        sums[g, j] += X[row, j]


@helper
def nearest_centroid(X, row, sums, sizes, n_groups):
    """Group whose centroid is closest to X[row] (lowest id on ties)."""
    m = X.shape[1]
    best = -1
    best_d = 0.0
    for g in range(n_groups):
        dist = 0.0
        for j in range(m):
            diff = X[row, j] - sums[g, j] / sizes[g]
            dist += diff * diff
        if best < 0 or dist < best_d:
            best = g
            best_d = dist
    return best


@helper
def sse_growth_closest(X, row, sums, sizes, n_groups):
    """clos(x) of MDAV*: the group whose SSE grows least when X[row] joins it.

    SSE(G + x) - SSE(G) = |G| / (|G| + 1) * ||x - c_G||^2. Returns (group, growth).
    """
    best = -1
    best_d = 0.0
    for g in range(n_groups):
        growth = growth_to_sums(X, row, sums, sizes, g)
        if best < 0 or growth < best_d:
            best = g
            best_d = growth
    return best, best_d
