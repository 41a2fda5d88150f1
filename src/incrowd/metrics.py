"""Utility and privacy measures: SSE, SST, information loss, group sizes, k-anonymity.

Information loss follows paper 000 Def. 4 / paper 001 Def. 1.5: IL = SSE / SST where SSE is the
sum of squared distances of the rows to their group centroid and SST the sum of squared
distances to the global centroid, both on standardized quasi-identifiers. IL lies in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd
from numba import njit

from . import _small
from .data import group_means, standardize
from .exceptions import DataError, ParameterError


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


def sse(X, labels) -> float:
    """Sum of squared distances of each row to its group's centroid (in the units of X)."""
    Xa = _as_2d(X)
    lab = _check_labels(labels, Xa.shape[0])
    counts = np.bincount(lab)
    dense = lab if counts.all() else np.unique(lab, return_inverse=True)[1]  # ids 0..g-1 already: no sort
    centroids = group_means(Xa, dense)
    return _deviations(Xa, dense, centroids)


def sst(X) -> float:
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


def information_loss(X, labels, *, standardized: bool = False) -> float:
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


def group_sizes(labels) -> np.ndarray:
    """Size of each group, indexed by group id (ids need not be dense; absent ids are dropped)."""
    lab = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(lab)
    return counts[counts > 0]


def group_size_stats(labels) -> GroupSizeStats:
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


def verify_k_anonymity(table, quasi_identifiers: Sequence[str] | None, k: int) -> KAnonymityReport:
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
