"""Earth mover's distance of each class's sensitive values to a reference distribution.

The two ground distances ARX offers (Li, Li, Venkatasubramanian, "t-Closeness", ICDE 2007):

* ordered distance (numeric and ordinal values, sorted, m distinct values of the reference):
  ``EMD = 1/(m-1) * sum_i |sum_{j<=i} (q_j - p_j)|``;
* equal distance (nominal values): ``EMD = 1/2 * sum_i |q_i - p_i|``.

``q`` is a class's distribution, ``p`` the reference's. Both are computed on integer counts:
with class size s and reference size N every term is ``|C_i*N - R_i*s| / (s*N)``, so the sum is
an exact integer and the distance carries a single rounding. A class exactly at t therefore
lands on the float nearest to t; :data:`TOLERANCE` only absorbs that last rounding.

Codes are ``0..m-1`` in the order of the values; every reference count must be positive (a
value the reference never takes is not one of its m values).
"""

from __future__ import annotations

import numpy as np

#: a class is t-close when its distance is <= t + TOLERANCE
TOLERANCE = 1e-12


def exceeds(distance, t: float):
    """True where ``distance`` is farther than t (beyond the rounding tolerance)."""
    return np.asarray(distance) > t + TOLERANCE


def exact_counts(n_reference: int, m: int) -> bool:
    # every numerator term is <= N*s <= N^2 and there are m of them
    return m * n_reference * n_reference < 2**62


def _check_reference(reference_counts) -> np.ndarray:
    ref = np.asarray(reference_counts, dtype=np.int64)
    if ref.ndim != 1 or ref.size == 0 or (ref <= 0).any():
        raise ValueError("reference counts must be a non-empty 1-D array of positive counts")
    return ref


def emd_dense(counts, reference_counts, ordered: bool) -> np.ndarray:
    """Distance of each row of ``counts`` (classes x m value counts) to the reference.

    A class without rows has distance 0. Memory: a few arrays of the shape of ``counts``.
    """
    ref = _check_reference(reference_counts)
    cnt = np.asarray(counts)
    if cnt.ndim == 1:
        cnt = cnt[None, :]
    if cnt.shape[1] != ref.size:
        raise ValueError(f"counts have {cnt.shape[1]} values; the reference has {ref.size}")
    return dense_distances(cnt, ref, ordered)


def dense_distances(counts: np.ndarray, reference: np.ndarray, ordered: bool) -> np.ndarray:
    """:func:`emd_dense` without its checks, for callers that loop (2-D int counts, positive
    int64 reference of the same width)."""
    m = reference.size
    out = np.zeros(counts.shape[0], dtype=np.float64)
    if m == 1 or counts.shape[0] == 0:
        return out  # one value: every class has the reference's distribution
    n_ref = int(reference.sum())
    dtype = np.int64 if exact_counts(n_ref, m) else np.float64
    cnt = counts.astype(dtype, copy=False)
    ref = reference.astype(dtype, copy=False)
    sizes = cnt.sum(axis=1)
    if ordered:
        cum = np.cumsum(cnt, axis=1)[:, :-1]  # the last cumulative term is always 0
        num = np.abs(cum * n_ref - np.cumsum(ref)[:-1] * sizes[:, None]).sum(axis=1)
        den = sizes * n_ref * (m - 1)
    else:
        num = np.abs(cnt * n_ref - ref * sizes[:, None]).sum(axis=1)
        den = 2 * sizes * n_ref
    nonempty = sizes > 0
    out[nonempty] = num[nonempty] / den[nonempty]
    return out


def emd_by_class(class_ids, codes, n_classes: int, reference_counts, ordered: bool) -> np.ndarray:
    """Distance of each class (rows grouped by ``class_ids``) to the reference, sparse.

    Works on the (class, value) pairs that occur, never on a classes x values matrix, so a
    numeric sensitive column with many distinct values costs O(n log m) (see :func:`emd_pairs`).
    """
    ref = _check_reference(reference_counts)
    cls = np.asarray(class_ids, dtype=np.int64)
    val = np.asarray(codes, dtype=np.int64)
    m = ref.size
    pairs, pair_count = np.unique(cls * m + val, return_counts=True)  # sorted by class, then value
    return emd_pairs(pairs // m, pairs % m, pair_count, n_classes, ref, ordered)


def emd_pairs(p_cls, p_val, p_cnt, n_classes: int, reference: np.ndarray, ordered: bool) -> np.ndarray:
    """Distance of each class given as (class, value, count) triples, sorted by class then value,
    one per value a class takes (count > 0); ``reference`` positive int64 counts.

    In the ordered case the cumulative class count is constant between two values the class
    takes, and over such a run of reference values the terms ``|C*N - R_i*s|`` change sign once
    (R_i increases), so each run is summed from prefix sums of the reference's cumulative counts.
    """
    m = reference.size
    out = np.zeros(int(n_classes), dtype=np.float64)
    if m == 1 or len(p_cls) == 0:
        return out
    n_ref = int(reference.sum())
    exact = exact_counts(n_ref, m)
    dtype = np.int64 if exact else np.float64
    p_cls = np.asarray(p_cls, dtype=np.int64)
    p_val = np.asarray(p_val, dtype=np.int64)
    cnt = np.asarray(p_cnt).astype(dtype)
    sizes = np.zeros(int(n_classes), dtype=dtype)
    np.add.at(sizes, p_cls, cnt)
    s = sizes[p_cls]
    num: np.ndarray = np.zeros(int(n_classes), dtype=dtype)
    if not ordered:
        r = reference[p_val].astype(dtype)
        np.add.at(num, p_cls, np.abs(cnt * n_ref - r * s) - r * s)
        num += sizes * n_ref  # values the class lacks add R_i*s each: s*N in all, less those present
        den = 2 * sizes * n_ref
    else:
        first = np.ones(p_cls.size, dtype=bool)
        first[1:] = p_cls[1:] != p_cls[:-1]
        last = np.ones(p_cls.size, dtype=bool)
        last[:-1] = first[1:]
        run_start = np.flatnonzero(first)
        cum = np.cumsum(cnt)
        cum -= np.repeat(cum[run_start] - cnt[run_start], np.diff(np.append(run_start, p_cls.size)))
        nxt = np.empty_like(p_val)
        nxt[:-1] = p_val[1:]
        nxt[last] = m
        # runs [a, b) of reference values with constant cumulative class count C: one before the
        # class's first value (C = 0), then one from each value the class takes to the next
        seg_cls = np.concatenate([p_cls[first], p_cls])
        seg_a = np.concatenate([np.zeros(run_start.size, np.int64), p_val])
        seg_b = np.concatenate([p_val[first], nxt])
        seg_c = np.concatenate([np.zeros(run_start.size, dtype), cum])
        seg_s = sizes[seg_cls]
        r_cum = np.cumsum(reference).astype(dtype)  # R_i
        prefix = np.concatenate([np.zeros(1, dtype), np.cumsum(r_cum)])  # sum_{j<i} R_j
        target = seg_c * n_ref
        # first i with R_i * s >= C * N, kept inside the run
        thr = (target + seg_s - 1) // seg_s if exact else target / seg_s
        split = np.clip(np.searchsorted(r_cum, thr, side="left"), seg_a, seg_b)
        below = (split - seg_a) * target - seg_s * (prefix[split] - prefix[seg_a])
        above = seg_s * (prefix[seg_b] - prefix[split]) - (seg_b - split) * target
        np.add.at(num, seg_cls, below + above)
        den = sizes * n_ref * (m - 1)
    nonempty = sizes > 0
    out[nonempty] = num[nonempty] / den[nonempty]
    return out
