"""Utility measures of a microaggregation: SSE, SST, information loss, group sizes.

Information loss follows Thaeter & Reischuk (2021, Def. 4; 2018, Def. 1.5): IL = SSE / SST where SSE is the
sum of squared distances of the rows to their group centroid and SST the sum of squared
distances to the global centroid, both on standardized quasi-identifiers. IL lies in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._native import squared_deviations
from ..exceptions import ParameterError
from ..values import group_means, standardize

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["GroupSizeStats", "group_size_stats", "group_sizes", "information_loss", "sse", "sst"]


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
    """Sum of squared distances of each row to its group's centroid (in the units of X).

    Parameters
    ----------
    X : array_like of shape (n_rows, n_columns)
        The quasi-identifier values, one row per record.
    labels : array_like of shape (n_rows,)
        The group id of each row.

    Returns
    -------
    float
        The within-group sum of squares.
    """
    Xa = _as_2d(X)
    lab = _check_labels(labels, Xa.shape[0])
    counts = np.bincount(lab)
    dense = lab if counts.all() else np.unique(lab, return_inverse=True)[1]  # ids 0..g-1 already: no sort
    centroids = group_means(Xa, dense)
    return squared_deviations(Xa, dense, centroids)


def sst(X: ArrayLike) -> float:
    """Sum of squared distances of each row to the global centroid (in the units of X).

    Parameters
    ----------
    X : array_like of shape (n_rows, n_columns)
        The quasi-identifier values, one row per record.

    Returns
    -------
    float
        The total sum of squares.
    """
    Xa = _as_2d(X)
    return squared_deviations(Xa, np.zeros(Xa.shape[0], np.int64), Xa.mean(axis=0)[None, :])


def information_loss(X: ArrayLike, labels: ArrayLike, *, standardized: bool = False) -> float:
    """IL = SSE/SST on standardized data (X is standardized here unless ``standardized``).

    Returns 0.0 for data whose quasi-identifiers are all constant (nothing can be lost).

    Parameters
    ----------
    X : array_like of shape (n_rows, n_columns)
        The quasi-identifier values, one row per record.
    labels : array_like of shape (n_rows,)
        The group id of each row.
    standardized : bool, default False
        True when ``X`` is standardized already (mean 0, population variance 1 per column).

    Returns
    -------
    float
        SSE/SST, in [0, 1].
    """
    Xa = _as_2d(X)
    Z = Xa if standardized else standardize(Xa)[0]
    total = sst(Z)
    if total == 0.0:
        return 0.0
    return sse(Z, labels) / total


@dataclass(frozen=True)
class GroupSizeStats:
    """Sizes of the groups of a clustering.

    Attributes
    ----------
    n_groups : int
        Number of groups.
    min, max : int
        The smallest and the largest group size.
    mean : float
        The mean group size.
    histogram : dict of int to int
        Groups per size.
    """

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
    """Size of each group, indexed by group id (ids need not be dense; absent ids are dropped).

    Parameters
    ----------
    labels : array_like of shape (n_rows,)
        The group id of each row.

    Returns
    -------
    numpy.ndarray
        The size of each group present, in the order of the group ids.
    """
    lab = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(lab)
    return counts[counts > 0]


def group_size_stats(labels: ArrayLike) -> GroupSizeStats:
    """The sizes of the groups of a clustering, summarized.

    Parameters
    ----------
    labels : array_like of shape (n_rows,)
        The group id of each row.

    Returns
    -------
    GroupSizeStats
        The number of groups, the smallest, largest and mean size, and groups per size.
    """
    sizes = group_sizes(labels)
    values, counts = np.unique(sizes, return_counts=True)
    return GroupSizeStats(
        n_groups=int(sizes.size),
        min=int(sizes.min()),
        max=int(sizes.max()),
        mean=float(sizes.mean()),
        histogram={int(v): int(c) for v, c in zip(values, counts)},
    )
