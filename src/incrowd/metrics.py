"""Utility and privacy measures: SSE, SST, information loss, group sizes, k-anonymity,
l-diversity, t-closeness.

Information loss follows Thaeter & Reischuk (2021, Def. 4; 2018, Def. 1.5): IL = SSE / SST where SSE is the
sum of squared distances of the rows to their group centroid and SST the sum of squared
distances to the global centroid, both on standardized quasi-identifiers. IL lies in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd
from numba import njit

from . import _small
from .data import group_means, standardize
from .exceptions import DataError, ParameterError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "sse",
    "sst",
    "information_loss",
    "group_sizes",
    "group_size_stats",
    "GroupSizeStats",
    "verify_k_anonymity",
    "KAnonymityReport",
    "verify_l_diversity",
    "LDiversityReport",
    "verify_t_closeness",
    "TClosenessReport",
]


def _as_2d(X) -> np.ndarray:
    arr = np.asarray(X, dtype=np.float64)
    return arr[:, None] if arr.ndim == 1 else arr


def _check_labels(labels, n_rows: int) -> np.ndarray:
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.shape[0] != n_rows:
        raise ParameterError(f"labels must be one group id per row ({n_rows} rows); got shape {lab.shape}")
    if lab.size and (lab.min() < 0 or not np.issubdtype(lab.dtype, np.integer)):
        raise ParameterError("labels must be non-negative integers")
    return lab.astype(np.int64, copy=False)


def sse(X: ArrayLike, labels: ArrayLike) -> float:
    """Sum of squared distances of each row to its group's centroid (in the units of X)."""
    Xa = _as_2d(X)
    lab = _check_labels(labels, Xa.shape[0])
    counts = np.bincount(lab)
    dense = lab if counts.all() else np.unique(lab, return_inverse=True)[1]  # ids 0..g-1 already: no sort
    centroids = group_means(Xa, dense)
    return _deviations(Xa, dense, centroids)


def sst(X: ArrayLike) -> float:
    """Sum of squared distances of each row to the global centroid (in the units of X)."""
    Xa = _as_2d(X)
    return _deviations(Xa, np.zeros(Xa.shape[0], np.int64), Xa.mean(axis=0)[None, :])


def _deviations(X, group, centers) -> float:
    if _small.prefer_numpy(*X.shape):
        return float(_small.squared_deviations(X, group, centers))
    return float(_squared_deviations(X, group, centers))


@njit(cache=True)
def _squared_deviations(X, group, centers):
    """Sum over rows of ||x - centers[group[x]]||^2, streamed (no n x m temporaries: SSE of a
    large file would otherwise need three copies of it), compensated (Neumaier) over rows."""
    total = 0.0
    comp = 0.0
    for i in range(X.shape[0]):
        row = 0.0
        c = group[i]
        for j in range(X.shape[1]):
            d = X[i, j] - centers[c, j]
            row += d * d
        t = total + row
        if abs(total) >= abs(row):
            comp += (total - t) + row
        else:
            comp += (row - t) + total
        total = t
    return total + comp


def information_loss(X: ArrayLike, labels: ArrayLike, *, standardized: bool = False) -> float:
    """IL = SSE/SST on standardized data (X is standardized here unless ``standardized``).

    Returns 0.0 for data whose quasi-identifiers are all constant (nothing can be lost).
    """
    Xa = _as_2d(X)
    Z = Xa if standardized else standardize(Xa)[0]
    total = sst(Z)
    if total == 0.0:
        return 0.0
    return sse(Z, labels) / total


@dataclass(frozen=True)
class GroupSizeStats:
    """Sizes of the groups of a clustering."""

    n_groups: int
    min: int
    max: int
    mean: float
    histogram: dict[int, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "n_groups": self.n_groups,
            "min": self.min,
            "max": self.max,
            "mean": self.mean,
            "histogram": {str(s): c for s, c in self.histogram.items()},
        }


def group_sizes(labels: ArrayLike) -> np.ndarray:
    """Size of each group, indexed by group id (ids need not be dense; absent ids are dropped)."""
    lab = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(lab)
    return counts[counts > 0]


def group_size_stats(labels: ArrayLike) -> GroupSizeStats:
    sizes = group_sizes(labels)
    values, counts = np.unique(sizes, return_counts=True)
    return GroupSizeStats(
        n_groups=int(sizes.size),
        min=int(sizes.min()),
        max=int(sizes.max()),
        mean=float(sizes.mean()),
        histogram={int(v): int(c) for v, c in zip(values, counts)},
    )


@dataclass(frozen=True)
class KAnonymityReport:
    """Outcome of checking a published table: truthy when it is k-anonymous."""

    k: int
    ok: bool
    n_rows: int
    n_classes: int
    min_class_size: int
    n_rows_in_small_classes: int

    def __bool__(self) -> bool:
        return self.ok

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def verify_k_anonymity(table: pd.DataFrame | np.ndarray, quasi_identifiers: Sequence[str] | None, k: int) -> KAnonymityReport:
    """Check the published table itself: every combination of QI values occurs >= k times.

    ``table`` is a DataFrame (``quasi_identifiers`` names columns; None means all columns) or a
    2-D array (every column is a quasi-identifier). Missing values count as a value of their own.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be a positive integer; got {k!r}")
    if isinstance(table, pd.DataFrame):
        cols = list(table.columns) if quasi_identifiers is None else list(quasi_identifiers)
        missing = [c for c in cols if c not in table.columns]
        if missing:
            raise DataError(f"unknown quasi-identifier column(s) {missing}; table has {list(table.columns)}")
        frame = table[cols]
    else:
        arr = _as_2d(table)
        frame = pd.DataFrame(arr)
    n = int(frame.shape[0])
    if n == 0:
        return KAnonymityReport(int(k), True, 0, 0, 0, 0)
    sizes = frame.groupby(list(frame.columns), dropna=False, sort=False).size().to_numpy()
    small = sizes < k
    return KAnonymityReport(
        k=int(k),
        ok=not bool(small.any()),
        n_rows=n,
        n_classes=int(sizes.size),
        min_class_size=int(sizes.min()),
        n_rows_in_small_classes=int(sizes[small].sum()),
    )


@dataclass(frozen=True)
class LDiversityReport:
    """Outcome of checking a published table for naive l-diversity: truthy when every class of
    equal quasi-identifier values holds at least l distinct sensitive values."""

    l: int
    ok: bool
    n_rows: int
    n_classes: int
    min_distinct: int
    n_rows_in_poor_classes: int

    def __bool__(self) -> bool:
        return self.ok

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def verify_l_diversity(table: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str,
                       l: int) -> LDiversityReport:
    """Check the published table itself: every QI class has >= l distinct ``sensitive`` values.

    Missing values count as a value of their own, in the QIs and in the sensitive column.
    """
    if isinstance(l, bool) or not isinstance(l, (int, np.integer)) or l < 1:
        raise ParameterError(f"l must be a positive integer; got {l!r}")
    cols = list(quasi_identifiers)
    missing = [c for c in [*cols, sensitive] if c not in table.columns]
    if missing:
        raise DataError(f"unknown column(s) {missing}; table has {list(table.columns)}")
    n = int(table.shape[0])
    if n == 0:
        return LDiversityReport(int(l), True, 0, 0, 0, 0)
    grouped = table.groupby(cols, dropna=False, sort=False)[sensitive]
    distinct = grouped.nunique(dropna=False).to_numpy()
    sizes = grouped.size().to_numpy()
    poor = distinct < l
    return LDiversityReport(
        l=int(l), ok=not bool(poor.any()), n_rows=n, n_classes=int(distinct.size),
        min_distinct=int(distinct.min()), n_rows_in_poor_classes=int(sizes[poor].sum()),
    )


@dataclass(frozen=True)
class TClosenessReport:
    """Outcome of checking a published table for t-closeness: truthy when the distribution of
    the sensitive values in every class of equal quasi-identifier values lies within earth
    mover's distance t of the reference distribution."""

    t: float
    ok: bool
    n_rows: int
    n_classes: int
    max_distance: float
    n_rows_in_far_classes: int
    ordered: bool = False

    def __bool__(self) -> bool:
        return self.ok

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _check_t(t) -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) or not 0 < t <= 1:
        raise ParameterError(f"t must be a number in (0, 1]; got {t!r}")
    return float(t)


def _default_order(dtype):
    """Ordered distance for numbers, an ordered categorical's own order, equal otherwise."""
    if isinstance(dtype, pd.CategoricalDtype):
        return list(dtype.categories) if dtype.ordered else False
    return bool(pd.api.types.is_numeric_dtype(dtype))


def _encode_sensitive(values: pd.Series, reference: pd.Series, ordered, column: str):
    """``(codes, reference_codes, m, ordered)``: the values as codes ``0..m-1`` over the m
    distinct values of the reference, sorted when the distance is ordered; a missing value is a
    value of its own, after all others."""
    if ordered is None:
        ordered = _default_order(values.dtype)
    order = None
    if not isinstance(ordered, (bool, np.bool_)):
        order = list(ordered)
        if len(set(order)) != len(order):
            raise ParameterError(f"ordered for column {column!r} lists a value twice: {order}")
        ordered = True
    ordered = bool(ordered)

    def plain(series: pd.Series) -> pd.Series:
        return series.astype(object) if isinstance(series.dtype, pd.CategoricalDtype) else series

    ref, vals = plain(reference), plain(values)
    ref_missing, val_missing = ref.isna().to_numpy(), vals.isna().to_numpy()
    distinct = pd.Index(pd.unique(ref[~ref_missing]))
    if order is not None:
        known = set(order)
        unknown = [v for v in distinct if v not in known]
        if unknown:
            raise DataError(f"column {column!r}: value {unknown[0]!r} is not in the order given ({order})")
        present = set(distinct)
        distinct = pd.Index([v for v in order if v in present], dtype=object)
    elif ordered:
        try:
            distinct = distinct.sort_values()
        except TypeError:
            raise DataError(f"column {column!r}: its values cannot be sorted for the ordered distance; "
                            "give their order as a list (ordered=[...]) or use ordered=False") from None
    n_present = len(distinct)
    m = n_present + int(ref_missing.any())

    def codes_of(series: pd.Series, missing: np.ndarray) -> np.ndarray:
        codes = np.full(len(series), n_present, dtype=np.int64)
        codes[~missing] = distinct.get_indexer(series[~missing])
        return codes

    ref_codes = codes_of(ref, ref_missing)
    codes = codes_of(vals, val_missing)
    bad = np.flatnonzero((codes < 0) | (val_missing & ~ref_missing.any()))
    if bad.size:
        raise DataError(f"column {column!r}: value {vals.iloc[bad[0]]!r} (row {bad[0]}) does not occur "
                        "in the reference distribution")
    return codes, ref_codes, m, ordered


def verify_t_closeness(table: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, t: float, *,
                       ordered: bool | Sequence[Any] | None = None,
                       reference: pd.Series | np.ndarray | None = None) -> TClosenessReport:
    """Check the published table itself: in every class of equal quasi-identifier values the
    ``sensitive`` values lie within earth mover's distance ``t`` of the reference distribution.

    The distances are ARX's (Li, Li and Venkatasubramanian, 2007), over the m distinct values of
    the reference:

    * ordered (numeric and ordinal values): ``1/(m-1) * sum_i |sum_{j<=i} (q_j - p_j)|`` with
      the values sorted; 0 when the reference holds one value;
    * equal (nominal values): ``1/2 * sum_i |q_i - p_i|``.

    ``ordered=None`` takes the ordered distance for numeric columns (and pandas ordered
    categoricals, in their category order) and the equal distance otherwise; ``True``/``False``
    force one; a list of values gives an ordinal order (``["low", "mid", "high"]``; values the
    reference does not take are left out of m).

    ``reference`` (a Series or array of sensitive values) is the distribution the classes are
    compared with; by default the table's own column. A release that suppressed rows should pass
    the ORIGINAL column here: measured against the published rows alone, the reference would
    move towards the classes that were kept. Every published value must occur in the reference.

    Missing values count as a value of their own, in the quasi-identifiers (as in
    :func:`verify_k_anonymity`) and in the sensitive column (the last value in the order).
    A class passes when its distance is at most ``t + 1e-12``: the distance is computed from
    integer counts with one rounding, so a class exactly at t passes and the tolerance only
    absorbs that rounding. Raises ``ParameterError`` for t outside (0, 1] and ``DataError`` for
    unknown columns or published values absent from the reference.

    pycanon's ``anonymity.t_closeness`` uses the same two distances (ordered for numeric columns,
    equal for text) with the table's own column as reference and gives the same largest
    distance, except that it leaves rows with a missing quasi-identifier out of every class,
    divides by zero when the column takes one value, and cannot take another reference.
    """
    from . import _emd

    t = _check_t(t)
    cols = list(quasi_identifiers)
    missing = [c for c in [*cols, sensitive] if c not in table.columns]
    if missing:
        raise DataError(f"unknown column(s) {missing}; table has {list(table.columns)}")
    if reference is None:
        ref = table[sensitive]
    elif isinstance(reference, pd.Series):
        ref = reference.reset_index(drop=True)
    else:
        arr = np.asarray(reference)
        if arr.ndim != 1:
            raise ParameterError(f"reference must be a 1-D array of {sensitive!r} values; got shape {arr.shape}")
        ref = pd.Series(arr)
    if ordered is None:
        ordered = _default_order(table[sensitive].dtype)
    n = int(table.shape[0])
    if n == 0:
        return TClosenessReport(t, True, 0, 0, 0.0, 0, bool(ordered) if isinstance(ordered, (bool, np.bool_)) else True)
    if len(ref) == 0:
        raise DataError(f"the reference distribution of column {sensitive!r} is empty")
    codes, ref_codes, m, is_ordered = _encode_sensitive(table[sensitive], ref, ordered, sensitive)
    if cols:
        classes = table.groupby(cols, dropna=False, sort=False).ngroup().to_numpy(np.int64)
    else:
        classes = np.zeros(n, dtype=np.int64)
    n_classes = int(classes.max()) + 1
    distance = _emd.emd_by_class(classes, codes, n_classes, np.bincount(ref_codes, minlength=m), is_ordered)
    far = _emd.exceeds(distance, t)
    sizes = np.bincount(classes, minlength=n_classes)
    return TClosenessReport(
        t=t, ok=not bool(far.any()), n_rows=n, n_classes=n_classes, max_distance=float(distance.max()),
        n_rows_in_far_classes=int(sizes[far].sum()), ordered=is_ordered,
    )
