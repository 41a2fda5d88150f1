"""Per-class l and t of a sensitive column, for every class at once (numpy, no loop over classes).

t is the earth mover's distance between a class's distribution of the sensitive values and the
whole file's, as ARX and Li, Li and Venkatasubramanian (ICDE 2007) define it: for an ordered
attribute with m values, (1/(m-1)) * sum_i |sum_{j<=i} (p_j - q_j)|; for a nominal one (all
values equally far apart), (1/2) * sum_i |p_i - q_i|.
"""

from __future__ import annotations

import numpy as np

#: a class exactly at t passes; sums of fractions may land a rounding step above it
T_TOLERANCE = 1e-12


def class_value_counts(class_of: np.ndarray, codes: np.ndarray, n_classes: int, n_values: int) -> np.ndarray:
    flat = np.bincount(class_of * n_values + codes, minlength=n_classes * n_values)
    return flat.reshape(n_classes, n_values)


def distinct_per_class(class_of, codes, n_classes: int, n_values: int) -> np.ndarray:
    return (class_value_counts(class_of, codes, n_classes, n_values) > 0).sum(axis=1)


def emd_per_class(class_of, codes, n_classes: int, reference_counts: np.ndarray, ordered: bool) -> np.ndarray:
    n_values = int(reference_counts.size)
    counts = class_value_counts(class_of, codes, n_classes, n_values).astype(np.float64)
    sizes = counts.sum(axis=1, keepdims=True)
    p = counts / np.where(sizes > 0, sizes, 1.0)
    q = reference_counts / reference_counts.sum()
    return emd_rows(p, q, ordered)


def emd_rows(p: np.ndarray, q: np.ndarray, ordered: bool) -> np.ndarray:
    """EMD of each row of p (distributions) to q."""
    n_values = q.size
    if n_values <= 1:
        return np.zeros(p.shape[0])
    if ordered:
        return np.abs(np.cumsum(p - q, axis=1)[:, :-1]).sum(axis=1) / (n_values - 1)
    return 0.5 * np.abs(p - q).sum(axis=1)
