"""PRAM, the post-randomization method: each category changed to another at random by a
transition matrix (sdcMicro's ``pram``)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError
from ._base import Method, Outcome, Param, is_bool, is_number, is_text


class Pram(Method):
    key = "pram"
    sdcmicro = "pram"
    summary = "changes categories at random by a transition matrix"
    data = "categorical"
    draws = True
    params = {
        "pd": Param("a number in (0, 1]", 0.8, is_number(0, 1, open_lo=True),
                    "the smallest diagonal: each category keeps its value with a probability drawn in [pd, 1]"),
        "alpha": Param("a number in [0, 1]", 0.5, is_number(0, 1),
                       "with invariant: the share of the invariant matrix mixed with the identity (sdcMicro's alpha)"),
        "invariant": Param("true or false", True, is_bool,
                           "make the matrix invariant: the expected frequencies after PRAM are those before"),
        "matrix": Param("a file path", None, lambda v: v is None or is_text(v),
                        "a CSV file of the transition matrix instead (categories in the first row and column, "
                        "each row summing to 1)", input="file"),
    }

    def check(self, frame: pd.DataFrame, where: str) -> None:
        # the categories are the whole column's (or the matrix file's), in every stratum alike
        given = read_matrix(self.matrix, where) if self.matrix is not None else None
        self.values["_categories"], self.values["_matrix"] = {}, {}
        for name in self.columns:
            present = _categories(frame[name])
            if given is None:
                self.values["_categories"][name] = present
                continue
            names, P = given
            spelled = {_text(c): c for c in present}
            unknown = [t for t in spelled if t not in names]
            if unknown:
                raise DataError(f"{where}: column {name!r} holds {', '.join(map(repr, unknown))}, which the matrix "
                                f"file {self.matrix!r} does not name; it names {', '.join(names)}")
            self.values["_categories"][name] = [spelled.get(t, _as_cell(t, frame[name])) for t in names]
            self.values["_matrix"][name] = P

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        out: dict[str, np.ndarray] = {}
        details: dict[str, Any] = {}
        for name in self.columns:
            column = frame[name]
            values = column.to_numpy(copy=True)
            present = ~pd.isna(column).to_numpy()
            codes = _codes(values[present], self.values["_categories"][name])
            categories = self.values["_categories"][name]
            if name in self.values["_matrix"]:
                P = self.values["_matrix"][name]
            else:
                counts = np.bincount(codes, minlength=len(categories)).astype(np.float64)
                P = transition_matrix(counts, self.pd, self.alpha if self.invariant else None, rng)
            new = draw(codes, P, rng)
            realised = np.zeros_like(P)
            np.add.at(realised, (codes, new), 1.0)
            values[present] = np.asarray(categories, dtype=object)[new] if values.dtype == object else \
                np.asarray(categories)[new]
            out[name] = values
            details[name] = {"categories": [_plain(c) for c in categories], "matrix": P.tolist(),
                             "transitions": realised.astype(int).tolist()}
        return Outcome(out, {"pram": details})

    @staticmethod
    def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
        """Per stratum, each its own matrix: the list of them."""
        return {"pram": [p.get("pram") for p in parts]}


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _categories(column: pd.Series) -> list:
    """The column's present values, sorted (by number for codes, as text otherwise)."""
    values = pd.unique(column.dropna())
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=str)


def _codes(values: np.ndarray, categories: list) -> np.ndarray:
    return pd.Index(categories, dtype=object).get_indexer(pd.Index(values, dtype=object)).astype(np.int64)


def transition_matrix(counts: np.ndarray, pd_: float, alpha: float | None,
                      rng: np.random.Generator) -> np.ndarray:
    """sdcMicro's matrix: diagonal drawn uniformly in [pd, 1], the rest of each row spread evenly;
    with ``alpha``, made invariant (``R = P Q``, ``Q`` the backward matrix under the frequencies
    ``counts``) and mixed with the identity: ``alpha R + (1 - alpha) I``."""
    L = counts.size
    if L < 2:
        return np.ones((L, L))
    diagonal = rng.uniform(pd_, 1.0, L)
    P = np.repeat(((1 - diagonal) / (L - 1))[:, None], L, axis=1)
    np.fill_diagonal(P, diagonal)
    if alpha is None:
        return P
    p = counts / counts.sum()
    s = p @ P  # the expected frequency of each category after P
    with np.errstate(invalid="ignore", divide="ignore"):
        Q = np.where(s[:, None] > 0, (P * p[:, None]).T / s[:, None], 0.0)
    R = P @ Q
    absent = p == 0  # a category no row holds keeps its value
    R[absent] = 0.0
    R[absent, absent] = 1.0
    return alpha * R + (1 - alpha) * np.eye(L)


def draw(codes: np.ndarray, P: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each code's new code drawn from its row of ``P``."""
    cumulative = np.cumsum(P, axis=1)
    cumulative[:, -1] = 1.0
    u = rng.random(codes.size)
    new = np.empty_like(codes)
    for i in np.unique(codes):
        rows = codes == i
        new[rows] = np.searchsorted(cumulative[i], u[rows], side="right")
    return np.minimum(new, P.shape[0] - 1)


def read_matrix(path: str, where: str) -> tuple[list[str], np.ndarray]:
    """(the categories as text, the matrix) of a CSV file: the categories in the first row
    (after an empty cell) and the first column, in the same order; each row sums to 1."""
    if not os.path.exists(path):
        raise ParameterError(f"{where}: matrix file {path!r} does not exist")
    try:
        table = pd.read_csv(path, index_col=0, dtype={0: str})
    except (OSError, ValueError) as exc:
        raise DataError(f"{where}: matrix file {path!r} cannot be read as CSV ({exc})") from None
    rows = [str(r) for r in table.index]
    columns = [str(c) for c in table.columns]
    if len(rows) != len(columns):
        raise DataError(f"{where}: matrix file {path!r} is not square: {len(rows)} rows, {len(columns)} columns "
                        "(one row and one column per category)")
    if rows != columns:
        raise DataError(f"{where}: matrix file {path!r} must name the same categories, in the same order, in its "
                        f"first row and first column; rows {rows}, columns {columns}")
    try:
        P = table.to_numpy(dtype=np.float64)
    except ValueError:
        raise DataError(f"{where}: matrix file {path!r} holds a cell that is not a number") from None
    if not np.isfinite(P).all() or (P < 0).any():
        raise DataError(f"{where}: matrix file {path!r}: every probability must be a number >= 0")
    sums = P.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1) > 1e-9)
    if bad.size:
        raise DataError(f"{where}: matrix file {path!r}: the row of {rows[bad[0]]!r} sums to {sums[bad[0]]:.6g}, "
                        "not 1")
    return rows, P


def _text(value: Any) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _as_cell(text: str, column: pd.Series) -> Any:
    """A category the matrix file names as the column holds it (a number in a column of codes)."""
    if pd.api.types.is_numeric_dtype(column.dtype):
        try:
            return column.dtype.type(float(text))
        except (TypeError, ValueError):
            raise DataError(f"pram: the matrix file names {text!r}, which is no value of the numeric column "
                            f"{column.name!r}") from None
    return text
