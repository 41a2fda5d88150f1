"""The report's measures from partial results: one part of the file at a time (a partition of a
dataset, its release partition beside it), then the parts' sums combined (the Dask backend's
report of a partitioned dataset).

A part's :class:`ReportPartial` holds what the measures are sums of: the release's classes with
their rows, each numeric quasi-identifier's count, mean and co-moments (combined by Chan et al.'s
pairwise update, so no sum of squares about zero loses the digits of a large mean), the row
pairs' absolute and squared differences, and each categorical value's rows before and after.
The figures are those of one process over the whole file, to float rounding where a sum is taken
in another order. What needs more than sums (the distance-based risks and record linkage need
every row's nearest neighbours, the t-closeness check each class's whole distribution, the
hierarchy level of a published label all the rows published with it) is left out and said in
:data:`LEFT_OUT`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..values import class_ids
from ._align import align
from ._report import _blanks_missing, _value_labels
from ._risk import class_risk_of_sizes
from ._utility import (
    _eigen_pair,
    categorical_of_tallies,
    categorical_tallies_of_release,
    correlation_of,
    numeric_figures,
    per_qi_figures,
)

#: the report's measures left out when it is made from partial results, and why
LEFT_OUT = {
    "drisk, drisk_rmd, record_linkage": "each needs every release row's nearest original rows over the whole file",
    "attribute_disclosure": "the l and t checks need each class's sensitive values gathered from every partition",
    "height, ncp": "a published label's hierarchy level is read from all the rows published with it",
    "verdict": "its lines name the rows and values that drive a failure, found in the whole file",
    "figures": "the histograms and correlation plots are drawn from every row",
}


@dataclass
class Moments:
    """Rows, column means and co-moments (the sum of the outer products of the deviations from
    the means) of a complete numeric matrix; ``low`` and ``high`` each column's extremes."""

    n: int
    mean: np.ndarray
    m2: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray) -> Moments:
        p = X.shape[1]
        if X.shape[0] == 0:
            return cls(0, np.zeros(p), np.zeros((p, p)), np.full(p, np.inf), np.full(p, -np.inf))
        mean = X.mean(axis=0)
        D = X - mean
        return cls(int(X.shape[0]), mean, D.T @ D, X.min(axis=0), X.max(axis=0))

    def __add__(self, other: Moments) -> Moments:
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        return Moments(n, self.mean + delta * (other.n / n),
                       self.m2 + other.m2 + np.outer(delta, delta) * (self.n * other.n / n),
                       np.minimum(self.low, other.low), np.maximum(self.high, other.high))

    def covariance(self) -> np.ndarray:
        p = self.mean.shape[0]
        return self.m2 / (self.n - 1) if self.n >= 2 else np.full((p, p), np.nan)

    def correlation(self) -> np.ndarray:
        p = self.mean.shape[0]
        return correlation_of(self.covariance(), self.high > self.low) if self.n >= 2 else np.full((p, p), np.nan)


@dataclass
class ColumnMoments:
    """Per column, the present cells' count, mean and squared deviations (missing cells left out)."""

    n: np.ndarray
    mean: np.ndarray
    m2: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray) -> ColumnMoments:
        present = ~np.isnan(X)
        n = present.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, np.where(present, X, 0.0).sum(axis=0) / np.maximum(n, 1), 0.0)
        return cls(n, mean, (np.where(present, X - mean, 0.0) ** 2).sum(axis=0))

    def __add__(self, other: ColumnMoments) -> ColumnMoments:
        n = self.n + other.n
        share = np.divide(other.n, n, out=np.zeros(n.shape), where=n > 0)
        delta = other.mean - self.mean
        return ColumnMoments(n, self.mean + delta * share, self.m2 + other.m2 + delta ** 2 * self.n * share)


@dataclass
class NumericPartial:
    """The numeric quasi-identifiers' sums of one part: ``x`` and ``y`` the original's and the
    release's rows complete on both sides, their differences, and over every original row
    (``everyone``), the withheld rows and the kept row pairs what the all-rows IL needs."""

    x: Moments
    y: Moments
    abs_diff: np.ndarray
    sq_diff: np.ndarray
    il1: float
    everyone: ColumnMoments
    withheld: ColumnMoments
    kept_sq_diff: np.ndarray

    def __add__(self, other: NumericPartial) -> NumericPartial:
        return NumericPartial(self.x + other.x, self.y + other.y, self.abs_diff + other.abs_diff,
                              self.sq_diff + other.sq_diff, self.il1 + other.il1, self.everyone + other.everyone,
                              self.withheld + other.withheld, self.kept_sq_diff + other.kept_sq_diff)


@dataclass
class ReportPartial:
    """What one part of a file (its original rows and its release rows, aligned as one process
    aligns them) adds to the report."""

    rows_original: int
    rows_release: int
    numeric: list[str]
    categorical: list[str]
    assumptions: list[str]
    classes: pd.DataFrame  # the release's classes: their quasi-identifier values and "rows"
    numbers: NumericPartial | None
    tallies: dict[str, Any] | None


#: the column of a part's classes that holds their rows (a quasi-identifier cannot be named so:
#: the name is taken from outside the file's columns when it is)
_ROWS = "__rows__"


def report_partial(original: pd.DataFrame, release: pd.DataFrame, quasi_identifiers: Sequence[str],
                   sensitive: Sequence[str] | None = None, identifiers: Sequence[str] | None = None, *,
                   numeric: Sequence[str] | None = None, suppression: str = "rows",
                   kept_rows: Sequence[int] | np.ndarray | None = None) -> ReportPartial:
    """One part's sums; its rows aligned by :func:`incrowd.reporting._align.align` (``kept_rows``:
    the part's row of each release row, as publish knows them; without it the same rows, or the
    columns that pass through tell which were suppressed), a DataError where they cannot be.
    ``numeric``: the quasi-identifiers measured as numbers (all others categorical); None: those
    that hold numbers on both sides of this part."""
    a = align(original, release, quasi_identifiers, sensitive, identifiers, kept_rows=kept_rows, numeric=numeric or None,
              categorical=() if numeric is None else [q for q in quasi_identifiers if q not in set(numeric)])
    codes = a.release_classes
    m = int(codes.max()) + 1 if codes.size else 0
    first = np.zeros(m, dtype=np.int64)
    first[codes[::-1]] = np.arange(codes.size - 1, -1, -1)
    classes = a.release[a.quasi_identifiers].iloc[first].reset_index(drop=True)
    classes[_ROWS] = np.bincount(codes, minlength=m)
    numbers = None
    if a.numeric:
        X, Y, _ = a.complete_numbers
        everyone, published = a.numbers("everyone"), a.numbers("release")
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = 100.0 * np.abs(X - Y) / np.abs(X)
        kept = everyone[a.kept] - published
        numbers = NumericPartial(Moments.of(X), Moments.of(Y), np.abs(X - Y).sum(axis=0), ((X - Y) ** 2).sum(axis=0),
                                 float(ratio[np.isfinite(ratio)].sum()), ColumnMoments.of(everyone),
                                 ColumnMoments.of(everyone[a.suppressed]),
                                 np.where(np.isnan(kept), 0.0, kept ** 2).sum(axis=0))
    tallies = None
    if a.categorical or a.suppressed.any():
        published_cells = a.release[a.categorical]
        tallies = categorical_tallies_of_release(
            a.original[a.categorical], _blanks_missing(published_cells) if suppression == "cells" else published_cells,
            a.kept, value_labels=_value_labels(a.release, a.categorical), suppression=suppression)
    return ReportPartial(int(a.original.shape[0]), int(a.release.shape[0]), a.numeric, a.categorical,
                         a.assumptions, classes, numbers, tallies)


def report_of_partials(parts: Sequence[ReportPartial], quasi_identifiers: Sequence[str], *, k: int | None = None,
                       threshold: float = 0.2) -> tuple[dict, dict, dict]:
    """(risk, utility, about) of the whole file from its parts' sums, in the parts' order."""
    qis = list(quasi_identifiers)
    classes = pd.concat([p.classes for p in parts], ignore_index=True)
    number = class_ids(classes[qis]) if classes.shape[0] else np.zeros(0, dtype=np.int64)
    sizes = np.bincount(number, weights=classes[_ROWS].to_numpy(np.float64)).astype(np.int64) \
        if number.size else np.zeros(0, dtype=np.int64)
    risk = {"classes": class_risk_of_sizes(sizes, k=k, threshold=threshold)}
    utility: dict[str, Any] = {}
    numeric, categorical = parts[0].numeric, parts[0].categorical
    if numeric:
        utility["numeric"] = _numeric(parts, numeric)
    tallies = [p.tallies for p in parts if p.tallies is not None]
    if tallies:
        utility["categorical"] = categorical_of_tallies(tallies)
    rows_original = sum(p.rows_original for p in parts)
    rows_release = sum(p.rows_release for p in parts)
    about = {"rows_original": rows_original, "rows_release": rows_release, "suppressed": rows_original - rows_release,
             "quasi_identifiers": qis, "numeric": numeric, "categorical": categorical, "k": k,
             "threshold": threshold}
    return risk, utility, about


def _numeric(parts: Sequence[ReportPartial], names: list[str]) -> dict:
    total = parts[0].numbers
    for p in parts[1:]:
        total = total + p.numbers  # type: ignore[operator]  # every part has the numeric columns
    assert total is not None
    x, y = total.x, total.y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cov_x, cov_y = x.covariance(), y.covariance()
        cor_x, cor_y = x.correlation(), y.correlation()
        means_x = x.mean if x.n else np.full(len(names), np.nan)
        means_y = y.mean if y.n else np.full(len(names), np.nan)
    out = numeric_figures(x.n, list(names), _il(x, total.sq_diff), _il1s(x, cov_x, total.abs_diff),
                          x.n * len(names), total.il1, _eigen_pair(cor_x, cor_y),
                          per_qi_figures(means_x, means_y, np.diag(cov_x), np.diag(cov_y), list(names)),
                          (cov_x, cov_y), (cor_x, cor_y))
    out.update(_il_all_rows(total, names))
    return out


def _il(x: Moments, sq_diff: np.ndarray) -> float:
    """SSE / SST on the original's standardization (population sd, a constant column scale 1),
    as :func:`incrowd.reporting._utility.information_loss_pairwise` on complete rows."""
    if x.n == 0 or sq_diff.size == 0:
        return 0.0
    std = np.sqrt(np.diag(x.m2) / x.n)
    scale2 = np.where(std > 0, std, 1.0) ** 2
    sst = float((np.diag(x.m2) / scale2).sum())
    return float((sq_diff / scale2).sum()) / sst if sst != 0.0 else 0.0


def _il1s(x: Moments, cov_x: np.ndarray, abs_diff: np.ndarray) -> float:
    if x.n < 2:
        return 0.0
    sd = np.sqrt(np.diag(cov_x))
    spread = (x.high > x.low) & np.isfinite(sd) & (sd > 0)  # as _utility.il1s: an underflowing spread is left out
    return float(np.sum(abs_diff[spread] / (sd[spread] * np.sqrt(2.0))))


def _il_all_rows(total: NumericPartial, names: Sequence[str]) -> dict:
    """:func:`incrowd.reporting._utility.information_loss_all_rows` from the sums."""
    every, withheld = total.everyone, total.withheld
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.divide(every.m2, every.n, out=np.full(every.m2.shape, np.nan), where=every.n > 0))
    scale2 = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0) ** 2
    sst = every.m2 / scale2
    away = withheld.m2 + np.where(withheld.n > 0, withheld.n * (withheld.mean - every.mean) ** 2, 0.0)
    sse_col = (total.kept_sq_diff + away) / scale2
    total_sst, total_sse = float(sst.sum()), float(sse_col.sum())
    share = {str(c): (float(v / total_sse) if total_sse > 0 else 0.0) for c, v in zip(names, sse_col)}
    return {"il_all_rows": total_sse / total_sst if total_sst > 0 else 0.0, "il_column_share": share}
