"""Benchmark estimates: the figures an office publishes from a survey (a weighted mean of a
variable, overall or by a grouping), computed on the original and on the release, with their
relative change and whether their confidence intervals overlap.

An estimate is written as text, ``"income"`` or ``"income by urbrur"`` (``"income by urbrur,
sex"`` groups by both): the spec's ``[benchmarks]`` section names them (``estimates``).

The weighted mean is the ratio sum(w y) / sum(w). Its variance is the linearization
(with-replacement) estimate n / (n - 1) * sum(w_i^2 (y_i - mean)^2) / sum(w)^2, the one a survey
package gives when it knows the weights but no strata or clusters; with no weight column every
weight is 1 and this is the usual variance of a mean. The interval is mean +- z * se (normal
quantile). The overlap measure is Karr et al.'s (2006): the mean of the overlapping length's share
of each interval (1: the same interval; 0: disjoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError
from ..publishing import BenchmarkEstimate as Estimate
from ._align import cell_text, file_value_labels


@dataclass(frozen=True)
class Interval:
    mean: float | None
    low: float | None
    high: float | None
    n: int


def weighted_mean(values: np.ndarray, weights: np.ndarray, confidence: float = 0.95) -> Interval:
    """The weighted mean of ``values`` and its confidence interval (see the module's text); rows
    where a value or a weight is missing are left out."""
    y = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    keep = np.isfinite(y) & np.isfinite(w)
    y, w = y[keep], w[keep]
    n = int(y.size)
    total = float(w.sum())
    if n == 0 or total <= 0:
        return Interval(None, None, None, n)
    mean = float(w @ y) / total
    if n < 2:
        return Interval(mean, None, None, n)
    variance = n / (n - 1) * float(((w * (y - mean)) ** 2).sum()) / total**2
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * variance**0.5
    return Interval(mean, mean - half, mean + half, n)


def interval_overlap(a: Interval, b: Interval) -> float | None:
    """Karr et al.'s overlap of two intervals: 0.5 * (o / |a| + o / |b|), o the overlapping length;
    1 for two equal intervals, 0 for disjoint ones. None where an interval is undefined."""
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return None
    overlap = max(0.0, min(a.high, b.high) - max(a.low, b.low))
    width_a, width_b = a.high - a.low, b.high - b.low
    if width_a <= 0 or width_b <= 0:  # a constant group: equal means overlap fully, else not at all
        return 1.0 if a.mean == b.mean else 0.0
    return 0.5 * (overlap / width_a + overlap / width_b)


def _numbers(frame: pd.DataFrame, column: str, side: str) -> np.ndarray:
    if column not in frame.columns:
        raise DataError(f"benchmark column {column!r} is not in the {side}")
    values = pd.to_numeric(frame[column], errors="coerce")
    if values.notna().sum() == 0 and frame[column].notna().any():
        raise DataError(f"benchmark variable {column!r} is not numeric in the {side}; a benchmark takes a weighted mean")
    return values.to_numpy(np.float64, na_value=np.nan)


def _group_keys(frame: pd.DataFrame, by: Sequence[str], side: str) -> list[tuple[str, ...] | None]:
    for column in by:
        if column not in frame.columns:
            raise DataError(f"benchmark group {column!r} is not in the {side}")
    cells = [frame[c].tolist() for c in by]
    return [None if any(pd.isna(v) or v == "" for v in row) else tuple(cell_text(v) for v in row)
            for row in zip(*cells)] if by else [()] * frame.shape[0]


def _in_order(group: tuple[str, ...]) -> tuple:
    """Groups in the order a table lists them: codes by number, words by text."""
    def one(text: str) -> tuple:
        try:
            return (0, float(text), "")
        except ValueError:
            return (1, 0.0, text)
    return tuple(one(v) for v in group)


def _positions(keys: list[tuple[str, ...] | None]) -> dict[tuple[str, ...] | None, np.ndarray]:
    """Each group's row positions, the groups in order of first appearance."""
    found: dict[tuple[str, ...] | None, list[int]] = {}
    for i, key in enumerate(keys):
        found.setdefault(key, []).append(i)
    return {key: np.asarray(rows, dtype=np.int64) for key, rows in found.items()}


def benchmark_estimates(original: pd.DataFrame, release: pd.DataFrame, estimates: Sequence[str | Estimate], *,
                        weight: str | None = None, release_weights: np.ndarray | None = None,
                        confidence: float = 0.95) -> list[dict[str, Any]]:
    """Each estimate on ``original`` and on ``release``: one row per group (the groups of the
    original, codes in numeric order, words in text order; a group the release blanked is counted as "suppressed" on the
    release side), with the weighted means, the relative change of the release's mean, both
    confidence intervals, whether they overlap and Karr's overlap measure.

    ``weight`` is the sampling-weight column of the original; ``release_weights`` are the
    release rows' weights (the original weight of each kept row; default: the release's own
    ``weight`` column, else 1 per row).

    A group of a labelled file (SPSS, Stata: value labels) also has ``label``, per grouping
    column its value label (``{"urbrur": "Urban"}`` beside ``"group": {"urbrur": "1"}``)."""
    if not 0 < confidence < 1:
        raise ParameterError(f"confidence must be in (0, 1); got {confidence}")
    parsed = [e if isinstance(e, Estimate) else Estimate.parse(e) for e in estimates]
    if weight is not None and weight not in original.columns:
        raise DataError(f"weight column {weight!r} is not in the original")
    w_orig = (pd.to_numeric(original[weight], errors="coerce").to_numpy(np.float64, na_value=np.nan)
              if weight is not None else np.ones(original.shape[0]))
    if release_weights is not None:
        w_rel = np.asarray(release_weights, dtype=np.float64)
        if w_rel.shape != (release.shape[0],):
            raise ParameterError(f"release_weights has {w_rel.size} values for {release.shape[0]} release rows")
    elif weight is not None and weight in release.columns:
        w_rel = pd.to_numeric(release[weight], errors="coerce").to_numpy(np.float64, na_value=np.nan)
    else:
        w_rel = np.ones(release.shape[0])
    rows: list[dict[str, Any]] = []
    # a labelled file's group is named by its value label ("Urban"), its code kept beside it
    labels = {column: {cell_text(code): str(label) for code, label in pairs.items()}
              for column, pairs in {**file_value_labels(release, list(release.columns)),
                                    **file_value_labels(original, list(original.columns))}.items()}
    for est in parsed:
        y_orig, y_rel = _numbers(original, est.variable, "original"), _numbers(release, est.variable, "release")
        keys_orig, keys_rel = _group_keys(original, est.by, "original"), _group_keys(release, est.by, "release")
        at_orig, at_rel = _positions(keys_orig), _positions(keys_rel)
        none = np.empty(0, dtype=np.int64)
        for group in sorted((g for g in at_orig if g is not None), key=_in_order):
            before = weighted_mean(y_orig[at_orig[group]], w_orig[at_orig[group]], confidence)
            after = weighted_mean(y_rel[at_rel.get(group, none)], w_rel[at_rel.get(group, none)], confidence)
            change = (None if not before.mean or after.mean is None
                      else (after.mean - before.mean) / abs(before.mean))
            measure = interval_overlap(before, after)
            named = {c: labels[c][v] for c, v in zip(est.by, group) if v in labels.get(c, {})}
            rows.append({
                "estimate": str(est), "group": dict(zip(est.by, group)), **({"label": named} if named else {}),
                "original": before.mean, "release": after.mean, "relative_change": change,
                "original_ci": [before.low, before.high], "release_ci": [after.low, after.high],
                "ci_overlap": None if measure is None else measure > 0, "ci_overlap_measure": measure,
                "original_rows": before.n, "release_rows": after.n,
            })
        if None in at_rel:  # release rows whose group was blanked: their mean, on the release side only
            blanked = weighted_mean(y_rel[at_rel[None]], w_rel[at_rel[None]], confidence)
            rows.append({
                "estimate": str(est), "group": dict.fromkeys(est.by, "suppressed"),
                "original": None, "release": blanked.mean, "relative_change": None,
                "original_ci": [None, None], "release_ci": [blanked.low, blanked.high],
                "ci_overlap": None, "ci_overlap_measure": None, "original_rows": 0, "release_rows": blanked.n,
            })
    return rows
