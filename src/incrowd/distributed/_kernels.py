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


@njit(cache=True)
def fold_direction_sums(Z, part, slot_of, diag, acc):
    """acc[slot] + per direction the sequential sum over the rows of each part being cut.

    ``slot_of[part id]`` is the part's row in acc, or -1 for parts not being cut; directions are
    laid out as in ``_mondrian_kernel._best_variance`` (axes, then x_a + x_b, x_a - x_b).
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
            out[slot, a] += xa
            if diag:
                for b in range(a + 1, d):
                    xb = Z[i, b]
                    out[slot, t] += xa + xb
                    out[slot, t + 1] += xa - xb
                    t += 2
    return out


@njit(cache=True)
def fold_direction_squares(Z, part, slot_of, diag, means, acc):
    """acc[slot] + per direction the sequential sum of squared deviations from ``means[slot]``."""
    out = acc.copy()
    n, d = Z.shape
    for i in range(n):
        slot = slot_of[part[i]]
        if slot < 0:
            continue
        t = d
        for a in range(d):
            xa = Z[i, a]
            dev = xa - means[slot, a]
            out[slot, a] += dev * dev
            if diag:
                for b in range(a + 1, d):
                    xb = Z[i, b]
                    dp = (xa + xb) - means[slot, t]
                    dm = (xa - xb) - means[slot, t + 1]
                    out[slot, t] += dp * dp
                    out[slot, t + 1] += dm * dm
                    t += 2
    return out


def project(Z: np.ndarray, a: int, b: int, o: int) -> np.ndarray:
    """A direction's projection, with the kernel's one rounding (x_a, x_a + x_b or x_a - x_b)."""
    if o == 0:
        return Z[:, a].copy()
    return Z[:, a] + Z[:, b] if o > 0 else Z[:, a] - Z[:, b]
