"""Data shuffling: the values of each column reordered after a model of them given the
predictors (Muralidhar and Sarathy; sdcMicro's ``shuffle``, method "ds")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._runtime import lazy as _lazy
from .._runtime import small as _small
from ..exceptions import DataError
from ._base import REQUIRED, Method, Outcome, Param, is_names, numbers


class Shuffle(Method):
    key = "shuffle"
    sdcmicro = "shuffle"
    summary = "reorders each column's own values as a model of them given the predictors says"
    draws = True
    params = {
        "by": Param("a list of column names", REQUIRED, lambda v: is_names(v) and len(v) > 0,
                    "the predictors (sdcMicro's right-hand side of form): numbers as they are, text by "
                    "its categories"),
    }

    def other_columns(self) -> list[str]:
        return list(self.by)

    def check(self, frame: pd.DataFrame, where: str) -> None:
        super().check(frame, where)
        both = [c for c in self.by if c in self.columns]
        if both:
            raise DataError(f"{where}: {', '.join(map(repr, both))} is both shuffled and a predictor (by)")

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        Y = np.column_stack([numbers(frame, name, "shuffle") for name in self.columns])
        S = _predictors(frame, self.by)
        return Outcome(dict(zip(self.columns, shuffle(Y, S, rng).T)), {})


def _predictors(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    parts = []
    for name in names:
        column = frame[name]
        if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
            parts.append(column.to_numpy(dtype=np.float64, na_value=np.nan)[:, None])
        else:  # a category: one indicator per value but the first, as a regression's model matrix
            codes, uniques = pd.factorize(column)
            if uniques.size > 1:
                parts.append((codes[:, None] == np.arange(1, uniques.size)[None, :]).astype(np.float64))
    return np.hstack(parts) if parts else np.zeros((len(frame), 0))


# scipy.special (0.15 to 0.3 s to import, scipy.stats 0.9 s) is loaded only by a large shuffle
_ndtri = _lazy.function("scipy.special", "ndtri")


def _average_ranks(X: np.ndarray) -> np.ndarray:
    """Each column's ranks from 1, tied values given their mean rank, a column with a missing
    value all missing: scipy.stats.rankdata(X, axis=0), value for value (every rank is a whole or
    half number, exact in floating point)."""
    n = X.shape[0]
    ranks = np.full(X.shape, np.nan)
    for j in range(X.shape[1]):
        x = X[:, j]
        if np.isnan(x).any():
            continue
        order = np.argsort(x, kind="stable")
        sorted_x = x[order]
        starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
        ends = np.r_[starts[1:], n]
        ranks[order, j] = np.repeat(0.5 * (starts + ends + 1), ends - starts)
    return ranks


def _normal_scores(X: np.ndarray) -> np.ndarray:
    """Each column's ranks (ties averaged) as standard normal quantiles of (rank - 0.5) / n:
    scipy.stats.norm.ppf of them, bit for bit, without loading scipy.stats."""
    q = (_average_ranks(X) - 0.5) / X.shape[0]
    if _small.prefer_plain(q.size):
        return _small.timed_plain(_small.normal_quantiles, q)
    return _ndtri(q)


def shuffle(Y: np.ndarray, S: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The shuffled responses. A missing value is filled by a value of the column drawn at random
    for the model, and is missing again in the result (as sdcMicro does). Each column of the result
    holds exactly the column's own values, reordered."""
    Y, S = Y.copy(), S.copy()
    missing = np.isnan(Y)
    for M in (Y, S):
        for j in range(M.shape[1]):
            gone = np.isnan(M[:, j])
            if gone.any() and (~gone).any():
                M[gone, j] = rng.choice(M[~gone, j], int(gone.sum()))
    # predictors that do not vary carry nothing (and would make the correlation undefined)
    S = S[:, np.nanstd(S, axis=0) > 0] if S.size else S
    q = Y.shape[1]
    n = Y.shape[0]
    out = Y.copy()
    if n < 3:
        return out
    scores = _normal_scores(np.hstack([Y, S]))
    rho = np.corrcoef(scores, rowvar=False) if scores.shape[1] > 1 else np.ones((1, 1))
    rho = np.atleast_2d(np.nan_to_num(rho))
    pmc = 2 * np.sin(np.pi * rho / 6)  # the normal correlation a rank correlation stands for
    pxx, pxs, pss = pmc[:q, :q], pmc[:q, q:], pmc[q:, q:]
    if S.shape[1]:
        B = pxs @ np.linalg.pinv(pss)
        fitted = scores[:, q:] @ B.T
        sigma = pxx - B @ pxs.T
    else:
        fitted, sigma = np.zeros((n, q)), pxx
    sigma = (sigma + sigma.T) / 2
    w, V = np.linalg.eigh(sigma)
    noise = rng.standard_normal((n, q)) @ (V * np.sqrt(np.clip(w, 0, None))).T
    ystar = fitted + noise
    for j in range(q):
        # reverse mapping: the column's own values, sorted, placed in the order of the model's
        order = np.argsort(ystar[:, j], kind="stable")
        out[order, j] = np.sort(Y[:, j])
    out[missing] = np.nan
    return out
