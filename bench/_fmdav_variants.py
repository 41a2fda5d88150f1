"""Traditional MDAV and its F-MDAV variants, for the ablation of Rodriguez-Hoyos et al. (2020) only.

Rodriguez-Hoyos et al. (2020) (Rodriguez-Hoyos et al., F-MDAV) measures the speed-up of five techniques over
"traditional MDAV" (its Algorithm 1), each alone and all together. This module rebuilds that
ablation in numba (``bench/bench_ablation.py``, tested by ``tests/test_fmdav_variants.py``); it
lives under ``bench/``, not in the package, since no estimator uses it. The production kernels
are ``mdav_labels`` (plain scan) and ``mdav_fast_labels`` (fused, exact), reached through
``incrowd.cli._bench_entry``.

:func:`mdav_variant_labels` is MDAV "generic" with one switch per technique:

* ``inner``: squared distances as |x|^2 + |p|^2 - 2 x.p with the |x|^2 precomputed once;
* ``reuse``: Q is read off the distances to P computed for P's group (else recomputed);
* ``partial``: the k-1 nearest by a single-scan sorted buffer (else a stable full argsort);
* ``subtract``: the centroid from a running sum of the remaining rows, from which each group's
  rows are subtracted (else the remaining rows are summed every round);
* single precision: call it on a float32 array; every array and accumulator follows X's dtype.

All variants keep the remaining rows as a list of row indices in row order, compacted after
each group, and break ties by the lowest row index. With the arithmetic switches off
(``inner`` and ``subtract``) and float64 input, the labels equal ``mdav_labels``;
``inner``, ``subtract`` and float32 round differently, so their groups may differ slightly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from incrowd.cli._bench_entry import nearest_alive, rest_group


@njit(cache=True)
def _dist_direct(X, rem, n_rem, point, d):
    """d[t] = sum_j (X[rem[t], j] - point[j])**2, summed in column order."""
    m = X.shape[1]
    zero = np.zeros(1, d.dtype)[0]  # accumulators in X's dtype
    for t in range(n_rem):
        r = rem[t]
        s = zero
        for j in range(m):
            diff = X[r, j] - point[j]
            s += diff * diff
        d[t] = s


@njit(cache=True)
def _dist_inner(X, sqn, rem, n_rem, point, d):
    """d[t] = |x|^2 + |point|^2 - 2 x.point, with |x|^2 = sqn[row] precomputed."""
    m = X.shape[1]
    zero = np.zeros(1, d.dtype)[0]  # accumulators in X's dtype
    pn = zero
    for j in range(m):
        pn += point[j] * point[j]
    for t in range(n_rem):
        r = rem[t]
        dot = zero
        for j in range(m):
            dot += X[r, j] * point[j]
        d[t] = (sqn[r] + pn) - (dot + dot)


@njit(cache=True)
def _distances(X, sqn, rem, n_rem, point, d, inner):
    if inner:
        _dist_inner(X, sqn, rem, n_rem, point, d)
    else:
        _dist_direct(X, rem, n_rem, point, d)


@njit(cache=True)
def _farthest(d, rem, n_rem, taken):
    """Position of the largest d among positions whose row is not taken (lowest on ties)."""
    best = -1
    for t in range(n_rem):
        if taken[rem[t]]:
            continue
        if best < 0 or d[t] > d[best]:
            best = t
    return best


@njit(cache=True)
def _nearest_sorted(d, n_rem, exclude, count, out):
    """The ``count`` smallest d (positions != exclude), by a stable full sort of d[:n_rem]."""
    order = np.argsort(d[:n_rem], kind="mergesort")
    filled = 0
    for t in range(n_rem):
        if filled == count:
            break
        pos = order[t]
        if pos == exclude:
            continue
        out[filled] = pos
        filled += 1
    return filled


@njit(cache=True)
def _take_group(X, rem, n_rem, d, center, k, partial, sel, everyone, taken, labels, group,
                subtract, total):
    """Label position ``center`` and its k-1 nearest positions (by d) as ``group``."""
    if partial:  # the production kernels' single-scan selection, every position alive
        nearest_alive(d, everyone, n_rem, center, -1, k - 1, sel)
    else:
        _nearest_sorted(d, n_rem, center, k - 1, sel)
    m = X.shape[1]
    for t in range(k):
        r = rem[center] if t == 0 else rem[sel[t - 1]]
        labels[r] = group
        taken[r] = True
        if subtract:
            for j in range(m):
                total[j] -= X[r, j]


@njit(cache=True)
def _drop_taken(rem, n_rem, taken):
    """Remove the taken rows from rem[:n_rem], keeping row order. Returns the new length."""
    w = 0
    for t in range(n_rem):
        r = rem[t]
        if not taken[r]:
            rem[w] = r
            w += 1
    return w


@njit(cache=True)
def mdav_variant_labels(X, k, inner, reuse, partial, subtract):
    """Group id per row (ids in order of creation) for a row-major float64 or float32 X."""
    n, m = X.shape
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    dt = X.dtype
    rem = np.arange(n)
    n_rem = n
    taken = np.zeros(n, np.bool_)
    d = np.empty(n, dt)
    c = np.empty(m, dt)
    point = np.empty(m, dt)
    count = np.empty(1, dt)  # n_rem in X's dtype, so the centroid division stays in it
    sel = np.empty(max(k - 1, 1), np.int64)
    everyone = np.ones(n, np.bool_)
    total = np.zeros(m, dt)
    sqn = np.zeros(n, dt)
    if inner:
        for i in range(n):
            s = sqn[i]
            for j in range(m):
                s += X[i, j] * X[i, j]
            sqn[i] = s
    if subtract:
        for i in range(n):
            for j in range(m):
                total[j] += X[i, j]
    group = 0
    while n_rem >= 2 * k:
        # Centroid of the remaining rows.
        count[0] = n_rem
        if subtract:
            for j in range(m):
                c[j] = total[j] / count[0]
        else:
            for j in range(m):
                c[j] = 0
            for t in range(n_rem):
                r = rem[t]
                for j in range(m):
                    c[j] += X[r, j]
            for j in range(m):
                c[j] /= count[0]
        # P: the farthest remaining row from the centroid.
        _distances(X, sqn, rem, n_rem, c, d, inner)
        p = _farthest(d, rem, n_rem, taken)
        for j in range(m):
            point[j] = X[rem[p], j]
        # P's group: P and its k-1 nearest remaining rows.
        _distances(X, sqn, rem, n_rem, point, d, inner)
        _take_group(X, rem, n_rem, d, p, k, partial, sel, everyone, taken, labels, group,
                    subtract, total)
        group += 1
        # Q: the farthest row from P among those left.
        if reuse:
            q = rem[_farthest(d, rem, n_rem, taken)]
            n_rem = _drop_taken(rem, n_rem, taken)
        else:
            n_rem = _drop_taken(rem, n_rem, taken)
            _distances(X, sqn, rem, n_rem, point, d, inner)
            q = rem[_farthest(d, rem, n_rem, taken)]
        qpos = np.searchsorted(rem[:n_rem], q)  # rem is in row order
        for j in range(m):
            point[j] = X[q, j]
        # Q's group.
        _distances(X, sqn, rem, n_rem, point, d, inner)
        _take_group(X, rem, n_rem, d, qpos, k, partial, sel, everyone, taken, labels, group,
                    subtract, total)
        group += 1
        n_rem = _drop_taken(rem, n_rem, taken)
    rest = rest_group(group, n_rem, k)
    for t in range(n_rem):
        labels[rem[t]] = rest
    return labels
