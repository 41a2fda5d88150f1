"""Plain numpy twins of a few kernels, for small inputs in a process that has not run numba yet.

The first numba kernel a process calls, even one loaded from the on-disk cache, makes numba load
its whole runtime (its typing and lowering registries, and through them scipy.linalg): about
0.3 s, far more than MDAV on a file of a few thousand rows costs in plain numpy. So a one-shot
process (a CLI command, see ``_process``) computes a small file here; everything else,
including every long-lived process (a notebook, the web server, a benchmark, a loop over k),
runs on the kernels, whose start-up it pays once.

Each twin performs the same floating-point operations in the same order as its kernel (the
exactness contract of ``microaggregation._kernels``: distances summed over columns in column
order from 0, centroids as sequential row-order sums divided by the count, ties to the lowest
row), so the groups and figures are bit for bit those of the kernel; tests check it.
"""

from __future__ import annotations

import sys

import numpy as np

from . import _process

# Rows x columns up to which a one-pass twin (a sum, a mean) costs less than numba's start-up.
SMALL_CELLS = 65_000
# MDAV in numpy is quadratic: about n * n / k * (m + 8) * 3.3 ns here (1,080 x 13 at k = 2: 0.05 s;
# 2,000 x 13 at k = 2: 0.14 s; 5,000 x 13 at k = 2: 0.8 s). Up to this much work it stays well
# under numba's start-up.
MDAV_WORK = 45e6


def jit_runtime_loaded() -> bool:
    """True once numba's CPU runtime is loaded in this process (its last step imports
    ``numba.np.npyimpl``): kernels then cost only their own time."""
    return "numba.np.npyimpl" in sys.modules


def prefer_numpy(n_rows: int, n_columns: int) -> bool:
    """Whether a one-pass computation is cheaper in plain numpy than paying numba's start-up."""
    return _process.one_shot and n_rows * max(n_columns, 1) <= SMALL_CELLS and not jit_runtime_loaded()


def prefer_numpy_mdav(n_rows: int, n_columns: int, k: int) -> bool:
    """Whether MDAV on this input is cheaper in plain numpy than paying numba's start-up."""
    work = n_rows * n_rows / max(k, 1) * (n_columns + 8)
    return _process.one_shot and work <= MDAV_WORK and not jit_runtime_loaded()


def _sq_dist(cols: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Squared distance of every column of ``cols`` (m x r) to ``point``, summed in j order."""
    d = np.zeros(cols.shape[1])
    for j in range(cols.shape[0]):
        diff = cols[j] - point[j]
        d += diff * diff
    return d


def _k_nearest(d: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` smallest d, ascending by (d, position)."""
    return np.argsort(d, kind="stable")[:count]


def mdav_labels(X: np.ndarray, k: int) -> np.ndarray:
    """MDAV's groups, as ``_mdav_kernel.mdav_labels`` forms them (same ids, same ties)."""
    n = X.shape[0]
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    remaining = np.arange(n)
    Xt = np.ascontiguousarray(np.asarray(X, dtype=np.float64).T)
    group = 0
    while remaining.size >= 2 * k:
        cols = Xt[:, remaining]
        centroid = np.cumsum(cols, axis=1)[:, -1] / remaining.size
        p = int(np.argmax(_sq_dist(cols, centroid)))
        d = _sq_dist(cols, cols[:, p])
        d_p = d.copy()
        d_p[p] = np.inf
        taken = np.concatenate(([p], _k_nearest(d_p, k - 1)))
        labels[remaining[taken]] = group
        # Q is the farthest row from P among those left, read off P's distances
        d_q = d.copy()
        d_q[taken] = -1.0
        q = int(np.argmax(d_q))
        d = _sq_dist(cols, cols[:, q])
        d[taken] = np.inf
        d[q] = np.inf
        second = np.concatenate(([q], _k_nearest(d, k - 1)))
        labels[remaining[second]] = group + 1
        group += 2
        keep = np.ones(remaining.size, np.bool_)
        keep[taken] = False
        keep[second] = False
        remaining = remaining[keep]
    labels[remaining] = group if remaining.size >= k else group - 1
    return labels


def group_sums(X: np.ndarray, labels: np.ndarray, g: int) -> np.ndarray:
    """``data._group_sums``: per-group column sums, sequential in row order."""
    sums = np.zeros((g, X.shape[1]))
    np.add.at(sums, labels, X)
    return sums


def neumaier_add(total: float, comp: float, x: float) -> tuple[float, float]:
    """``total + x`` and ``comp`` plus that sum's rounding error (Neumaier's compensated sum, whose
    result is ``total + comp``). The kernels compile this very function, so a twin and its kernel
    round alike."""
    t = total + x
    if abs(total) >= abs(x):
        comp += (total - t) + x
    else:
        comp += (x - t) + total
    return t, comp


def squared_deviations(X: np.ndarray, group: np.ndarray, centers: np.ndarray) -> float:
    """``metrics._squared_deviations``: rows' squared distances (column order), Neumaier-summed
    over rows in row order."""
    diff = X - centers[group]
    rows = np.zeros(X.shape[0])
    for j in range(X.shape[1]):
        rows += diff[:, j] * diff[:, j]
    total = 0.0
    comp = 0.0
    for row in rows.tolist():
        total, comp = neumaier_add(total, comp, row)
    return total + comp
