"""A proven lower bound on the information loss of any k-partition: :func:`lower_bound`."""

from __future__ import annotations

import numpy as np
from numba import njit

from ._knn import knn_scan, use_scan

#: candidate partners per row (nearest neighbours); rows farther away enter the bound through
#: the distance to the last candidate, which keeps it valid for any number
_CANDIDATES_PER_K = 3
_ITERATIONS = 300
_STEP = 0.015


@njit(cache=True)
def _row_terms(d2, nbr, far2, u, k, chosen_s, grad, want_grad, terms):
    """b_i(u) for every row (see :func:`lower_bound`), summed; with ``want_grad`` also a
    subgradient of the sum in ``grad``."""
    n, M = d2.shape
    h = 2 * k - 1
    umax = u.max()
    vals = np.empty(M + h)
    idx = np.empty(M + h, np.int64)
    total = 0.0
    comp = 0.0
    if want_grad:
        grad[:] = 0.0
    for i in range(n):
        cnt = 0
        for t in range(M):
            j = nbr[i, t]
            if j < 0:
                continue
            vals[cnt] = 0.5 * d2[i, t] - u[j]
            idx[cnt] = j
            cnt += 1
        # rows outside the candidates: at squared distance >= far2[i], and u_j <= max(u)
        vfar = 0.5 * far2[i] - umax
        for _t in range(h - 1):
            vals[cnt] = vfar
            idx[cnt] = -1
            cnt += 1
        order = np.argsort(vals[:cnt])
        acc = -u[i]
        best = np.inf
        best_s = k
        for s in range(2, h + 1):
            acc += vals[order[s - 2]]
            if s >= k:
                val = acc / s
                if val < best:
                    best = val
                    best_s = s
        b = u[i] + best
        terms[i] = b
        # Neumaier-compensated sum: the bound is compared with SSE of the same magnitude
        tsum = total + b
        if abs(total) >= abs(b):
            comp += (total - tsum) + b
        else:
            comp += (b - tsum) + total
        total = tsum
        chosen_s[i] = best_s
        if want_grad:
            grad[i] += 1.0 - 1.0 / best_s
            for t in range(best_s - 1):
                j = idx[order[t]]
                if j >= 0:
                    grad[j] -= 1.0 / best_s
    return total + comp


@njit(cache=True)
def _ascent(d2, nbr, far2, k, iterations, c):
    """Subgradient ascent on the multipliers u with steps c / sqrt(1 + t); returns the best
    bound met (every evaluation is a valid bound, so the best one is)."""
    n = d2.shape[0]
    u = np.zeros(n)
    grad = np.zeros(n)
    chosen = np.empty(n, np.int64)
    terms = np.empty(n)
    best = _row_terms(d2, nbr, far2, u, k, chosen, grad, True, terms)
    for it in range(iterations):
        step = c / np.sqrt(1.0 + it)
        for i in range(n):
            u[i] += step * grad[i]
        val = _row_terms(d2, nbr, far2, u, k, chosen, grad, True, terms)
        if val > best:
            best = val
    return best


def _standardized(data):
    from .data import Standardizer
    from .microaggregation._base import as_quasi_identifier_matrix

    values, names = as_quasi_identifier_matrix(data)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant column is reported by the methods, not here
        scaler = Standardizer.fit(values, names)
    return scaler.transform(values)


def lower_bound(data, k: int, *, iterations: int = _ITERATIONS) -> float:
    """A number L with L <= SSE_opt / SST for ``data`` at this ``k``: no k-partition (any method,
    any group sizes) has an information loss below L.

    ``data``: a DataFrame (every column a quasi-identifier) or a numeric array, standardized
    exactly as the methods do before they measure information loss (mean 0, population
    variance 1 per column). ``iterations``: rounds of the subgradient ascent below (more can
    only raise L). So ``information_loss / L - 1`` is how far a result can at most be from the
    best possible partition.

    The argument.

    1. Some optimal k-partition has every group of k..2k-1 rows: a group of 2k or more rows can
       be split into two groups of at least k rows without raising the SSE.
    2. For a group G of s rows, SSE(G) = (1/(2s)) sum_{i in G} sum_{j in G} d_ij^2, where d_ij is
       the distance between rows i and j. For any numbers u (one per row),
       sum_{i in G} (u_i - (1/s) sum_{j in G} u_j) = 0, so
       SSE(G) = sum_{i in G} (1/s) sum_{j in G} (d_ij^2 / 2 - u_j + u_i) = sum_{i in G} t_i(G).
    3. Hence SSE of a partition = sum over rows i of t_i(group of i) >= sum_i b_i(u), with
       b_i(u) = u_i + min over s in [k, 2k-1] and over sets S of s-1 other rows of
       (1/s) (-u_i + sum_{j in S} (d_ij^2 / 2 - u_j)).
       The inner minimum takes the s-1 smallest values v_ij = d_ij^2/2 - u_j. Only the
       3k nearest neighbours of row i are looked at; any other row j is at squared distance
       >= D_i (that of the last neighbour) and has u_j <= max(u), so its v_ij is at least
       D_i / 2 - max(u), and that value is offered 2k - 2 times in its place: the minimum can
       only go down, the bound stays valid.
    4. L(u) = sum_i b_i(u) / SST is thus a lower bound for every u (a Lagrangian bound of the
       set-partitioning formulation; u = 0 gives the per-row nearest-neighbour bound). L(u) is
       concave in u; a subgradient ascent raises it, and the best value met is returned. The
       sum is compensated and L is lowered by a relative 1e-9 to absorb rounding.
    """
    from .microaggregation._base import check_int, check_k

    Z = _standardized(data)
    n = Z.shape[0]
    k = check_k(k, n)
    iterations = check_int(iterations, "iterations", 0, 100_000)
    total = float((Z * Z).sum())  # SST: Z has mean 0
    if total == 0.0:
        return 0.0
    from scipy.spatial import cKDTree

    M = min(n - 1, max(_CANDIDATES_PER_K * k, 2 * k))
    if use_scan(n, Z.shape[1]):
        approx, nbr = knn_scan(Z, M)
        # the scan's distances round (~1e-16 of the squared norms); a row outside the
        # candidates is at least this far, with room for that rounding
        norms = np.einsum("ij,ij->i", Z, Z)
        last = approx[:, -1] - 1e-9 * (norms + norms.max())
    else:
        dist, idx = cKDTree(Z).query(Z, k=M + 1)
        dist = np.asarray(dist).reshape(n, M + 1)
        idx = np.asarray(idx, np.int64).reshape(n, M + 1)
        # drop each row itself (among duplicates it may not come first)
        own = idx == np.arange(n)[:, None]
        drop = np.where(own.any(axis=1), own.argmax(axis=1), M)
        keep = np.ones_like(own)
        keep[np.arange(n), drop] = False
        nbr = idx[keep].reshape(n, M)
        # the tree's distances are rounded through a square root
        last = dist[:, -1] ** 2 * (1 - 1e-12)
    nbr = np.ascontiguousarray(nbr)
    # squared distances recomputed exactly from the rows
    d2 = np.ascontiguousarray(((Z[nbr] - Z[:, None, :]) ** 2).sum(axis=2))
    far2 = np.minimum(d2.max(axis=1), np.maximum(last, 0.0))
    # the per-row nearest-neighbour bound (u = 0)
    base = _ascent(d2, nbr, far2, k, 0, 0.0)
    # the step in units of the mean row term (measured on Census, Tarragona and EIA: 0.015 of
    # it climbs fastest; longer steps overshoot, and a step per row (its own term) lets the
    # sparse rows' multipliers grow, which lowers every row's bound through max(u))
    bound = _ascent(d2, nbr, far2, k, iterations, _STEP * base / n) if iterations > 0 else base
    return max(0.0, float(bound) / total * (1.0 - 1e-9))
