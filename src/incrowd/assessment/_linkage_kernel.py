"""Exact nearest-original search for distance-based record linkage.

A k-d tree answers this quickly only while every masked record lies close to its own original;
after microaggregation in 15 dimensions the nearest original is far and a tree search visits
most of the tree. This kernel scans all originals per masked record with partial-distance
elimination (a sum of squares stops once it exceeds the best so far), which costs a few
coordinates per pair whatever the masking.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def link_credit(xs, xms, queries, tol):  # pragma: no cover - compiled
    """Credit of each masked row ``queries[q]``: 1/t when its own original is among the t
    originals at the nearest Euclidean distance d (all within ``d * (1 + tol)``), else 0."""
    n, p = xs.shape
    m = queries.shape[0]
    out = np.zeros(m)
    for q in prange(m):
        i = queries[q]
        # own row first: usually near, so it bounds the scan from the start
        best = 0.0
        for c in range(p):
            diff = xms[i, c] - xs[i, c]
            best += diff * diff
        for j in range(n):
            s = 0.0
            for c in range(p):
                diff = xms[i, c] - xs[j, c]
                s += diff * diff
                if s > best:
                    break
            if s < best:
                best = s
        lim = math.sqrt(best) * (1.0 + tol)
        lim2 = lim * lim * (1.0 + 1e-15)
        ties = 0
        own = False
        for j in range(n):
            s = 0.0
            for c in range(p):
                diff = xms[i, c] - xs[j, c]
                s += diff * diff
                if s > lim2:
                    break
            if s <= lim2 and math.sqrt(s) <= lim:
                ties += 1
                if j == i:
                    own = True
        out[q] = 1.0 / ties if own else 0.0
    return out
