"""Per-partition pieces of MONA's split phase, each a pure function of numpy blocks.

Exactness: the single-machine kernels sum sequentially in increasing row index (numpy's
``X.mean(axis=0)`` and ``X.std(axis=0)`` do too for two or more columns; the score sums of
``_mondrian_kernel`` and ``sst_per_row`` by construction). A sum over a data set split into row
blocks is reproduced bit for bit by *folding*: block i starts from the running sums block i-1
ended with, and adds its rows one by one in order. Each function below is one such step, or an
order-free step (counts, sorts, projections), so a chain of them over the blocks in row order
gives exactly the single-machine numbers.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def fold_sums(X, acc):
    """acc + the sequential column sums of X (rows in order)."""
    out = acc.copy()
    n, d = X.shape
    for i in range(n):
        for j in range(d):
            out[j] += X[i, j]
    return out


@njit(cache=True)
def fold_squared_deviations(X, mean, acc):
    """acc + the sequential column sums of (X - mean)**2."""
    out = acc.copy()
    n, d = X.shape
    for i in range(n):
        for j in range(d):
            t = X[i, j] - mean[j]
            out[j] += t * t
    return out


@njit(cache=True)
def fold_sst_column(Z, j, mu, s):
    """s + the sequential sum of (Z[:, j] - mu)**2 (``sst_per_row``'s inner loop)."""
    for r in range(Z.shape[0]):
        diff = Z[r, j] - mu
        s += diff * diff
    return s


@njit(inline="always")
def _add(out, slot, t, v, means, squares):
    if squares:
        dev = v - means[slot, t]
        out[slot, t] += dev * dev
    else:
        out[slot, t] += v


@njit(cache=True)
def fold_direction_moments(Z, part, slot_of, diag, means, squares, acc):
    """acc[slot] + per direction the sequential sum over the rows of each part being cut of the
    projection (``squares`` False) or of its squared deviation from ``means[slot]`` (True).

    ``slot_of[part id]`` is the part's row in acc, or -1 for parts not being cut; directions are
    laid out as in ``_mondrian_kernel._best_variance`` (axes, then x_a + x_b, x_a - x_b), and
    each value is rounded exactly as there.
    """
    out = acc.copy()
    n, d = Z.shape
    for i in range(n):
        slot = slot_of[part[i]]
        if slot < 0:
            continue
        t = d
        for a in range(d):
            xa = Z[i, a]
            _add(out, slot, a, xa, means, squares)
            if diag:
                for b in range(a + 1, d):
                    xb = Z[i, b]
                    _add(out, slot, t, xa + xb, means, squares)
                    _add(out, slot, t + 1, xa - xb, means, squares)
                    t += 2
    return out


def project(Z: np.ndarray, a: int, b: int, o: int) -> np.ndarray:
    """A direction's projection, with the kernel's one rounding (x_a, x_a + x_b or x_a - x_b)."""
    if o == 0:
        return Z[:, a].copy()
    return Z[:, a] + Z[:, b] if o > 0 else Z[:, a] - Z[:, b]
