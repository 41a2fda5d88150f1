"""Compiled steps of the l/t merge (``_sensitive``): the nearest live group of a block and the
status of groups held as dense value counts.

They run once per merge, and a block (a class of the generalization) can hold tens of
thousands of groups: the numpy forms paid a pass per feature and a temporary array per step.
Each kernel computes exactly what its numpy form computes, in the same order of float
operations (no fast-math), so the merges, and so the release, are the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def nearest_slots(cent, lo, n, own):
    """The offsets (from ``lo``) of the live groups nearest to the group at offset ``own`` among
    the ``n`` slots from ``lo`` of ``cent`` (features x slots), itself left out, ascending;
    squared Euclidean distance summed feature by feature, as the numpy form sums it."""
    p = cent.shape[0]
    out = np.empty(n, dtype=np.int64)
    found = 0
    best = np.inf
    for i in range(n):
        if i == own:
            continue
        d = 0.0
        for j in range(p):
            t = cent[j, lo + i] - cent[j, lo + own]
            d += t * t
        if d < best:
            best = d
            out[0] = i
            found = 1
        elif d == best:
            out[found] = i
            found += 1
    return out[:found]


@njit(cache=True)
def dense_status(counts, reference, ordered, missing):
    """(distinct values, earth mover's distance) of each row of ``counts`` (groups x m, int64)
    against ``reference`` (m positive int64), with integer numerators as ``_emd.dense_distances``
    computes them where they are exact (its caller checks ``_emd`` says so); the last value not
    counted as distinct when it is the ``missing`` one."""
    g, m = counts.shape
    distinct = np.zeros(g, dtype=np.int64)
    distance = np.zeros(g, dtype=np.float64)
    n_ref = 0
    for v in range(m):
        n_ref += reference[v]
    counted = m - 1 if missing else m
    for r in range(g):
        size = 0
        for v in range(m):
            c = counts[r, v]
            size += c
            if v < counted and c > 0:
                distinct[r] += 1
        if m == 1 or size == 0:
            continue
        num = 0
        if ordered:
            cum = 0
            ref_cum = 0
            for v in range(m - 1):
                cum += counts[r, v]
                ref_cum += reference[v]
                num += abs(cum * n_ref - ref_cum * size)
            distance[r] = num / (size * n_ref * (m - 1))
        else:
            for v in range(m):
                num += abs(counts[r, v] * n_ref - reference[v] * size)
            distance[r] = num / (2 * size * n_ref)
    return distinct, distance
