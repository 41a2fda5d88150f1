"""Mondrian's cuts in plain numpy: the twin of ``_mondrian_kernel.mondrian_subtree_labels``.

A first use of Mondrian or MONA on a machine would otherwise compile the Mondrian kernels (about
3 s) to cut a file that numpy cuts in milliseconds. The twin makes the same cuts: every figure a
cut is chosen by is computed with the kernel's operations in the kernel's order (sums and
squared deviations accumulated row by row in ascending row order, a diagonal as x_a + x_b or
x_a - x_b in double precision, the first direction among equal scores), the median is the same
value, and tied rows are ordered by the ancestors' projections with the same stable sorts. So
the parts, and their numbering, are those of the kernel; ``tests/test_mondrian.py`` checks it.
"""

from __future__ import annotations

import numpy as np

from ._mondrian_kernel import RULE_RANGE, RULE_V2D


def directions(d: int, rule: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_mondrian_kernel.directions``: (a, b, o) per direction, the axes first, then per pair
    a < b the sum (o = +1) and the difference (o = -1)."""
    dir_a, dir_b, dir_o = list(range(d)), list(range(d)), [0] * d
    if rule == RULE_V2D:
        for a in range(d):
            for b in range(a + 1, d):
                for o in (1, -1):
                    dir_a.append(a)
                    dir_b.append(b)
                    dir_o.append(o)
    return np.array(dir_a, np.int64), np.array(dir_b, np.int64), np.array(dir_o, np.int64)


def _projections(W: np.ndarray, dir_a: np.ndarray, dir_b: np.ndarray, dir_o: np.ndarray) -> np.ndarray:
    """Every row's coordinate along every direction (rows x directions)."""
    a, b = W[:, dir_a], W[:, dir_b]
    return np.where(dir_o == 0, a, np.where(dir_o > 0, a + b, a - b))


def _best_direction(W: np.ndarray, rule: int, unit_diagonals: bool, dirs) -> int:
    if rule == RULE_RANGE:
        return int(np.argmax(W.max(axis=0) - W.min(axis=0)))
    P = _projections(W, *dirs)
    means = np.add.accumulate(P, axis=0)[-1] / W.shape[0]  # a row-by-row sum, as the kernel's
    dev = P - means
    sq = np.add.accumulate(dev * dev, axis=0)[-1]
    if rule == RULE_V2D and unit_diagonals:
        sq[W.shape[1]:] *= 0.5
    return int(np.argmax(sq))


def mondrian_subtree_labels(X, k, rule, unit_diagonals, split_2k, leaf_max, ancestors) -> np.ndarray:
    """``_mondrian_kernel.mondrian_subtree_labels`` in numpy: the same parts, numbered alike."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, d = X.shape
    labels = np.zeros(n, np.int64)
    min_split = 2 * k if split_2k else 2 * k + 1
    if n < min_split or n <= leaf_max:
        return labels
    dirs = directions(d, rule)
    dir_a, dir_b, dir_o = dirs
    group = 0
    # parts to cut, the last pushed first: (row ids in ascending order, the cuts above them)
    stack = [(np.arange(n), tuple(int(t) for t in ancestors))]
    while stack:
        ids, path = stack.pop()
        m = ids.shape[0]
        if m < min_split or m <= leaf_max:
            labels[ids] = group
            group += 1
            continue
        W = X[ids]
        t = _best_direction(W, rule, unit_diagonals, dirs)
        proj = _projections(W, dir_a[t:t + 1], dir_b[t:t + 1], dir_o[t:t + 1])[:, 0]
        r = m // 2
        pivot = np.partition(proj, r)[r]
        to_left = proj < pivot
        tie = np.flatnonzero(proj == pivot)
        need = r - int(to_left.sum())
        if need > 0:
            order = tie
            for level in path:  # stable sorts, root first: the parent's cut is the primary key
                key = _projections(W[order], dir_a[level:level + 1], dir_b[level:level + 1],
                                   dir_o[level:level + 1])[:, 0]
                order = order[np.argsort(key, kind="stable")]
            to_left[order[:need]] = True
        below = path + (t,)
        stack.append((ids[~to_left], below))
        stack.append((ids[to_left], below))
    return labels
