"""MDAV "generic" (Rodriguez-Hoyos et al. (2020), Algorithm 1) as a numba kernel; exact, see ``_kernels``."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import (
    centroid_alive,
    farthest_alive,
    maybe_compact,
    nearest_alive,
    rest_group,
    sq_dist_to,
)


@njit(cache=True)
def _take_group(Xt, n_slots, ids, alive, labels, d, center_slot, k, sel, group, point):
    """Assign center_slot and its k-1 nearest alive slots to ``group`` (``d`` becomes every slot's
    squared distance to center_slot's row, copied into ``point``)."""
    for j in range(Xt.shape[0]):
        point[j] = Xt[j, center_slot]
    sq_dist_to(Xt, n_slots, point, d)
    nearest_alive(d, alive, n_slots, center_slot, -1, k - 1, sel)
    labels[ids[center_slot]] = group
    alive[center_slot] = False
    for t in range(k - 1):
        s = sel[t]
        labels[ids[s]] = group
        alive[s] = False


@njit(cache=True)
def mdav_labels(X, k):
    """Group id per row (ids in order of creation) for row-major float64 X."""
    n, m = X.shape
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    Xt = X.T.copy()  # always a copy: compaction writes into it, and X.T of an F-ordered X is X
    ids = np.arange(n)
    slot_of = np.arange(n)
    alive = np.ones(n, np.bool_)
    d = np.empty(n)
    c = np.empty(m)
    point = np.empty(m)
    sel = np.empty(max(k - 1, 1), np.int64)
    n_slots = n
    n_live = n
    group = 0
    while n_live >= 2 * k:
        centroid_alive(Xt, alive, n_slots, n_live, c)
        sq_dist_to(Xt, n_slots, c, d)
        p = farthest_alive(d, alive, n_slots)
        _take_group(Xt, n_slots, ids, alive, labels, d, p, k, sel, group, point)
        group += 1
        # Distance reuse: Q is the farthest remaining row from P, read off the same distances.
        q = farthest_alive(d, alive, n_slots)
        _take_group(Xt, n_slots, ids, alive, labels, d, q, k, sel, group, point)
        group += 1
        n_live -= 2 * k
        n_slots = maybe_compact(Xt, ids, slot_of, alive, n_slots, n_live)
    rest = rest_group(group, n_live, k)
    for i in range(n_slots):
        if alive[i]:
            labels[ids[i]] = rest
    return labels
