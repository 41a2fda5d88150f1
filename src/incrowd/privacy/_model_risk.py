"""The log-linear model risk of a sample, as sdcMicro 5.8.0's ``modRisk`` defines it.

The sample frequencies of the key combinations are taken as independent Poisson counts whose
means follow a log-linear model of the keys' main effects, fitted over every combination of the
keys' observed values (the empty ones included, as ``modRisk`` lays out its grid). For a key
combination with fitted mean ``lambda`` and inclusion probability ``p`` (the sum of ``1 / w`` over
its rows), ``modRisk`` takes

- risk 1: ``exp(-(1 - p) lambda)``, the probability that a sample unique is population unique;
- risk 2: ``(1 - exp(-v)) / v`` with ``v = (1 - p) lambda``, the expected share of correct
  matches of a sample unique;

each divided by the number of non-empty combinations (``modRisk`` divides so), and summed over
the sample uniques: ``gr1`` and ``gr2``.

Methods: ``"default"`` (sdcMicro's standard model) and ``"CE"`` (Clogg and Eliason: the log of
``counts / weights + 0.1`` per combination as an offset, 0 counts and weights counting as 0).
A main-effects model's maximum-likelihood fit has the observed one-way margins; iterative
proportional fitting from the offset reaches it (for ``"default"`` in one cycle: the product of
the margins), with no design matrix, so the cost is that of the grid.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..exceptions import ParameterError

#: modRisk's methods this module fits (the main effects of every key)
MODEL_RISK_METHODS = ("default", "CE")
#: the most key combinations the grid may have (each one float per pass)
MAX_CELLS = 5_000_000
_TOLERANCE = 1e-12
_MAX_PASSES = 10_000


def model_risk(codes: np.ndarray, weights: np.ndarray, method: str = "default") -> dict[str, Any]:
    """sdcMicro's ``modRisk`` over key codes (rows x keys; each key's values 0, 1, ..., a
    missing value -1 counted as a value of its own, as ``modRisk`` groups it).

    Parameters
    ----------
    codes : numpy.ndarray
        The keys' codes per row.
    weights : numpy.ndarray
        The sampling weights (positive).
    method : {"default", "CE"}
        The model.

    Returns
    -------
    dict
        ``method``, ``gr1`` (risk 1 summed over the sample uniques), ``gr2`` (risk 2 summed over
        them) and ``cells`` (the key combinations of the grid).
    """
    if method not in MODEL_RISK_METHODS:
        raise ParameterError(f"model risk method must be one of {', '.join(MODEL_RISK_METHODS)}; got {method!r}")
    codes = np.asarray(codes, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    levels = []
    columns = []
    for j in range(codes.shape[1]):
        # the values present, a missing one a level of its own (modRisk's unique() keeps NA)
        _, column = np.unique(codes[:, j], return_inverse=True)
        columns.append(column.ravel().astype(np.int64))
        levels.append(int(column.max()) + 1)
    cells = math.prod(levels)
    if method == "default":
        # the main-effects fit is the product of the one-way margins: no grid is needed
        cell, counts_of, inclusion_of = _combinations(columns, w)
        n = float(codes.shape[0])
        fitted_of = np.full(counts_of.size, n)
        for column, size in zip(columns, levels):
            margin = np.bincount(column, minlength=size).astype(np.float64)
            fitted_of *= margin[_first_codes(cell, column, counts_of.size)] / n
        return _risks(method, counts_of, fitted_of, inclusion_of, cells)
    if cells > MAX_CELLS:
        raise ParameterError(f"the CE model risk's grid of every combination of the keys' values has {cells:,} "
                             f"cells, more than {MAX_CELLS:,}; measure it over fewer keys or coarser ones, or "
                             "with the default model")
    cell = np.zeros(codes.shape[0], np.int64)
    for column, size in zip(columns, levels):
        cell = cell * size + column
    counts = np.bincount(cell, minlength=cells).astype(np.float64)
    weight_sums = np.bincount(cell, weights=w, minlength=cells)
    inclusion = np.bincount(cell, weights=1.0 / w, minlength=cells)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(weight_sums > 0, counts / np.where(weight_sums > 0, weight_sums, 1.0), 0.0)
    # exp(offset), the offset being log(counts / weights + 0.1), 0 / 0 counting as 0
    fitted = _fit_margins(ratio + 0.1, counts, levels)
    return _risks(method, counts, fitted, inclusion, cells)


def _combinations(columns: list[np.ndarray], w: np.ndarray):
    """The non-empty key combinations: each row's, their counts and their sums of ``1 / w``."""
    key = np.column_stack(columns) if columns else np.zeros((w.size, 0), np.int64)
    _, cell, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    cell = cell.ravel()
    return cell, counts.astype(np.float64), np.bincount(cell, weights=1.0 / w, minlength=counts.size)


def _first_codes(cell: np.ndarray, column: np.ndarray, n_cells: int) -> np.ndarray:
    """Per combination, its value of ``column``."""
    out = np.zeros(n_cells, np.int64)
    out[cell] = column
    return out


def _risks(method: str, counts: np.ndarray, fitted: np.ndarray, inclusion: np.ndarray,
           cells: int) -> dict[str, Any]:
    """gr1 and gr2 from each combination's count, fitted mean and sum of ``1 / w``."""
    present = counts > 0
    present &= ~(fitted == 0)
    n_cells = int(present.sum())
    unique = present & (counts == 1)
    # only the sample uniques count: modRisk multiplies every combination's risk by freq == 1,
    # and where a larger one overflows (1 / w summing past 1) 0 times infinity makes its sum NaN
    v = (1.0 - inclusion[unique]) * fitted[unique]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        matches = np.where(v == 0, 1.0, -np.expm1(-v) / np.where(v == 0, 1.0, v))   # its limit at v = 0
        unique_risk = np.exp(-v)
    return {"method": method, "gr1": float(unique_risk.sum() / n_cells), "gr2": float(matches.sum() / n_cells),
            "cells": int(cells)}


def _fit_margins(start: np.ndarray, counts: np.ndarray, levels: list[int]) -> np.ndarray:
    """The grid ``start`` scaled, one key at a time, until every one-way margin is the observed
    one: the maximum-likelihood fit of the main-effects log-linear model with offset
    ``log(start)``."""
    shape = tuple(levels)
    fitted = start.reshape(shape).copy()
    observed = counts.reshape(shape)
    targets = [observed.sum(axis=tuple(a for a in range(len(shape)) if a != j)) for j in range(len(shape))]
    for _ in range(_MAX_PASSES):
        worst = 0.0
        for j, target in enumerate(targets):
            axes = tuple(a for a in range(len(shape)) if a != j)
            margin = fitted.sum(axis=axes)
            with np.errstate(invalid="ignore", divide="ignore"):
                scale = np.where(margin > 0, target / np.where(margin > 0, margin, 1.0), 0.0)
            worst = max(worst, float(np.max(np.abs(margin - target) / np.maximum(target, 1.0))))
            view = [1] * len(shape)
            view[j] = shape[j]
            fitted *= scale.reshape(view)
        if worst < _TOLERANCE:
            break
    return fitted.ravel()


__all__ = ["MAX_CELLS", "MODEL_RISK_METHODS", "model_risk"]
