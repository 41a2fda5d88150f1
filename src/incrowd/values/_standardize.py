"""Standardization and group means: the scaling every clustering runs on, overflow-safe.

:class:`Standardizer` maps quasi-identifiers to mean 0 and variance 1 and back (a state file
keeps its ``mean`` and ``scale``); :func:`group_means` gives the centroids in the data's units.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .._native import group_sums, group_sums_in_units
from ..exceptions import DataWarning

#: A column whose spread lies outside [2**-_SAFE_EXPONENT, 2**_SAFE_EXPONENT] is fitted again
#: in units of a power of two near its largest magnitude: squares of values beyond 2**511
#: overflow float64, those below 2**-511 underflow towards zero. The plain formulas run first,
#: so ordinary data costs nothing extra and gets exactly the plain formulas' numbers.
_SAFE_EXPONENT = 480
_LARGEST = np.finfo(np.float64).max


def _power_of_two_units(magnitude: np.ndarray) -> np.ndarray:
    """Per column, a power of two within a factor 2 below ``magnitude`` (1.0 for 0).

    Dividing by a power of two is exact (barring subnormals), so numbers computed in these
    units and scaled back equal the plain formulas' bit for bit wherever those do not overflow.
    """
    magnitude = np.abs(np.asarray(magnitude, dtype=np.float64))
    _, exponent = np.frexp(magnitude)  # magnitude = f * 2**exponent, f in [0.5, 1)
    # 2**(exponent - 1) <= magnitude: finite even for the largest float64
    return np.where(magnitude > 0, np.ldexp(1.0, exponent - 1), 1.0)


@dataclass(frozen=True)
class Standardizer:
    """Maps quasi-identifiers to mean 0 and variance 1 (population variance) and back.

    ``mean`` and ``scale`` are in the units of the data. Columns of very large (or very small)
    magnitude are fitted and transformed in units of a power of two, so every finite input gives
    finite standardized values; for ordinary data the numbers are exactly the plain formulas'.
    """

    mean: np.ndarray
    scale: np.ndarray
    constant_columns: tuple[int, ...] = ()

    @classmethod
    def fit(cls, X: np.ndarray, names: Sequence[str] | None = None) -> Standardizer:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # detected below
            mean = X.mean(axis=0)
            std = X.std(axis=0)
        # a zero spread is checked too: tiny values can underflow to it (a constant column stays 0)
        redo = ~(np.isfinite(mean) & (std <= 2.0 ** _SAFE_EXPONENT) & (std >= 2.0 ** -_SAFE_EXPONENT))
        if redo.any():
            columns = np.flatnonzero(redo)
            low, high = X[:, columns].min(axis=0), X[:, columns].max(axis=0)
            units = np.ones(X.shape[1])
            units[columns] = _power_of_two_units(np.maximum(np.abs(low), np.abs(high)))
            # the whole matrix, so numpy sums in the same order as above (it sums a lone
            # column pairwise, several columns row by row); exact: powers of two
            scaled = X / units
            mean, std = mean.copy(), std.copy()
            # a last rounding must not carry a mean or a spread past the float64 limit
            mean[columns] = np.clip(scaled.mean(axis=0)[columns] * units[columns], low, high)
            std[columns] = np.minimum(scaled.std(axis=0)[columns] * units[columns], _LARGEST)
        constant = tuple(int(j) for j in np.flatnonzero(~(std > 0)))
        if constant:
            labels = [names[j] if names is not None else f"column {j}" for j in constant]
            warnings.warn(
                f"quasi-identifier(s) {labels} are constant; they get scale 1 and add nothing "
                "to the clustering",
                DataWarning,
                stacklevel=3,
            )
        scale = np.where(std > 0, std, 1.0)
        return cls(mean=mean, scale=scale, constant_columns=constant)

    def _units(self) -> np.ndarray:
        # From the fitted numbers alone (a state file stores only mean and scale): x - mean can
        # overflow only where the mean or the spread is near the float64 limit.
        size = np.maximum(np.abs(self.mean), self.scale)
        return np.where(size > 2.0 ** _SAFE_EXPONENT, _power_of_two_units(size), 1.0)

    def transform(self, X: np.ndarray) -> np.ndarray:
        units = self._units()
        if np.all(units == 1.0):
            # the same two operations as (X - mean) / scale, the second in place: one copy of X
            Z = np.subtract(X, self.mean, order="C")
            Z /= self.scale
            return Z
        Z = np.divide(X, units, order="C")
        Z -= self.mean / units
        Z /= self.scale / units
        return Z

    def inverse_transform(self, Z: np.ndarray) -> np.ndarray:
        units = self._units()
        if np.all(units == 1.0):
            return Z * self.scale + self.mean
        return np.clip((Z * (self.scale / units) + self.mean / units) * units, -_LARGEST, _LARGEST)


def standardize(X: np.ndarray, names: Sequence[str] | None = None) -> tuple[np.ndarray, Standardizer]:
    """Standardized copy of X and the fitted :class:`Standardizer`."""
    st = Standardizer.fit(X, names)
    return st.transform(X), st


def group_means(X: np.ndarray, labels: np.ndarray, n_groups: int | None = None) -> np.ndarray:
    """Per-group column means in the units of X, shape (n_groups, m).

    Never overflows: a column whose plain sums overflow is summed again in units of a power of
    two (a finite plain sum never overflowed on the way, so it is kept as it is).
    """
    labels = np.asarray(labels)
    X = np.asarray(X, dtype=np.float64)
    g = int(labels.max()) + 1 if n_groups is None else n_groups
    counts = np.bincount(labels, minlength=g).astype(np.float64)
    lab = labels.astype(np.int64, copy=False)
    sums = group_sums(X, lab, g)
    redo = ~np.isfinite(sums).all(axis=0)
    if not redo.any():
        return sums / counts[:, None]
    columns = np.flatnonzero(redo)
    part = np.ascontiguousarray(X[:, columns])
    low, high = part.min(axis=0), part.max(axis=0)
    units = _power_of_two_units(np.maximum(np.abs(low), np.abs(high)))
    means = sums / counts[:, None]
    scaled = group_sums_in_units(part, lab, g, 1.0 / units) / counts[:, None] * units
    means[:, columns] = np.clip(scaled, low, high)  # a mean lies in its column's range; rounding may not
    return means


__all__ = ["Standardizer", "standardize", "group_means"]
