"""Estimator base shared by every microaggregation method.

scikit-learn conventions (without importing scikit-learn: see ``_estimator``):
``__init__`` only stores parameters; ``fit`` validates, standardizes
the quasi-identifiers, clusters, and sets trailing-underscore attributes; ``fit_transform``
returns the aggregated data in the type it was given.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
import pandas as pd

from .._runtime import MAX_ROUNDS, MAX_RUNS, compile_clock  # noqa: F401  (kept here for ona/ona.py, mondrian/mona.py; the CLI reads them cheaply)
from ..exceptions import DataError, IncrowdError, ParameterError
from ..io import numeric_matrix
from ..values import Standardizer, group_means
from ._estimator import ClusterTags, Estimator
from ._measures import information_loss


def check_k(k, n_rows: int) -> int:
    """k as an int in [2, n_rows], else a ParameterError in the one message shape."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise ParameterError(f"k must be an integer in [2, n_rows={n_rows}]; got {k!r}")
    k = int(k)
    if n_rows < 2:
        raise DataError(f"microaggregation needs at least 2 rows; got {n_rows}")
    if not 2 <= k <= n_rows:
        raise ParameterError(f"k must be an integer in [2, n_rows={n_rows}]; got {k}")
    return k


def check_real(value, name: str, low: float, high: float | None = None) -> float:
    allowed = f"in [{low}, {high}]" if high is not None else f">= {low}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ParameterError(f"{name} must be a real number {allowed}; got {value!r}")
    if value < low or (high is not None and value > high):
        raise ParameterError(f"{name} must be {allowed}; got {value!r}")
    return float(value)


def check_int(value, name: str, low: int, high: int | None = None) -> int:
    """value as an int in [low, high] (no upper bound without high), else a ParameterError in
    the one message shape."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ParameterError(f"{name} must be an integer >= {low}; got {value!r}")
    if high is not None and value > high:
        raise ParameterError(f"{name} must be an integer in [{low}, {high}]; got {value!r}")
    return int(value)


def check_random_state(value):
    """The seed for ``np.random.default_rng``: a negative or boolean seed is refused by name
    (numpy would raise a bare ValueError); other seeds go to numpy as they are."""
    if isinstance(value, bool) or (isinstance(value, numbers.Integral) and value < 0):
        raise ParameterError(f"random_state must be a non-negative integer seed or None; got {value!r}")
    return value


def as_quasi_identifier_matrix(X) -> tuple[np.ndarray, list[str] | None]:
    """A float64 (n, m) matrix from a DataFrame (every column a QI) or an array-like."""
    if isinstance(X, pd.DataFrame):
        if X.shape[1] == 0:
            raise DataError("the data has no columns")
        return numeric_matrix(X, list(X.columns)), [str(c) for c in X.columns]
    if isinstance(X, pd.Series):
        return numeric_matrix(X.to_frame(), [X.name]), [str(X.name)]
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"quasi-identifiers must be numeric; {exc}") from exc
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataError(f"data must be 1-D or 2-D (rows x quasi-identifiers); got {arr.ndim}-D")
    if arr.shape[1] == 0:
        raise DataError("the data has no columns")
    bad = ~np.isfinite(arr)
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        raise DataError(
            f"quasi-identifier column {col} has a missing or infinite value in row {row + 1} "
            f"({int(bad.sum())} such value(s) in all)"
        )
    return np.ascontiguousarray(arr), None


class MicroaggregationEstimator(ClusterTags, Estimator):
    """Base class: subclasses implement ``_labels(Z, k, rng)`` on standardized data Z.

    ``fit`` sets ``seconds_`` (the fit without compiling) and ``compile_seconds_`` (numba
    compiling kernels, or loading them from its cache, during the fit; 0 once loaded).

    Parameters
    ----------
    k : int, default 5
        The smallest group size: every group has at least k rows.
    random_state : int, numpy.random.Generator or None
        The seed of a randomized method (the deterministic ones ignore it).
    """

    def __init__(self, k: int = 5, *, random_state=None):
        self.k = k
        self.random_state = random_state

    def _check_params(self) -> None:
        """Subclasses validate their own parameters here (raise ParameterError)."""

    def _labels(self, Z: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def fit(self, X, y=None):
        # ``seconds_`` is the algorithm's time: numba compiling (or loading compiled kernels
        # from its cache) on the first call is reported apart, in ``compile_seconds_``.
        with compile_clock() as clock:
            start = time.perf_counter()
            self._fit(X)
            elapsed = time.perf_counter() - start
        self.compile_seconds_ = clock.seconds
        self.seconds_ = max(elapsed - clock.seconds, 0.0)
        return self

    def _fit(self, X) -> None:
        values, names = as_quasi_identifier_matrix(X)
        k = check_k(self.k, values.shape[0])
        self._check_params()
        scaler = Standardizer.fit(values, names)
        Z = scaler.transform(values)
        rng = np.random.default_rng(check_random_state(self.random_state))
        labels = np.asarray(self._labels(Z, k, rng), dtype=np.int64)
        self.labels_ = labels
        self.n_groups_ = int(labels.max()) + 1
        self.group_sizes_ = np.bincount(labels, minlength=self.n_groups_)
        if labels.min() < 0 or self.group_sizes_.min() < k:
            # A kernel bug must surface as an error, never as an output.
            raise IncrowdError("internal error: a row was left unassigned or a group has < k rows")
        self.centroids_ = group_means(values, labels, self.n_groups_)
        self.information_loss_ = information_loss(Z, labels, standardized=True)
        self.scaler_ = scaler
        self.n_features_in_ = values.shape[1]
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_

    def fit_transform(self, X, y=None):
        """Aggregated data: each row replaced by its group's centroid, in original units."""
        self.fit(X)
        agg = self.centroids_[self.labels_]
        if isinstance(X, pd.DataFrame):
            return pd.DataFrame(agg, index=X.index, columns=X.columns)
        if isinstance(X, pd.Series):
            return pd.Series(agg[:, 0], index=X.index, name=X.name)
        if np.ndim(X) == 1:
            return agg[:, 0]
        return agg
