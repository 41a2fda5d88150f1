"""Noise: each value plus a random amount (sdcMicro's ``addNoise``, methods "additive",
"correlated2" and "ROMM")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._base import Method, Outcome, Param, is_integer, is_number, numbers, one_of


class Noise(Method):
    key = "noise"
    sdcmicro = "addNoise"
    summary = "adds random noise to numeric columns"
    draws = True
    params = {
        "amount": Param("a number > 0", 150, is_number(0, open_lo=True),
                        "the noise's standard deviation in percent of each column's (additive, correlated); "
                        "with romm, 100 times the size of the random part of the mixing matrix"),
        "kind": Param("text", "additive", one_of("additive", "correlated", "romm"),
                      "additive: independent normal noise per column; correlated: each column shrunk towards "
                      "its mean and noise added so that its mean and variance hold (sdcMicro's correlated2); "
                      "romm: the rows mixed by a random orthogonal matrix (sdcMicro's ROMM)",
                      ("additive", "correlated", "romm")),
        "block": Param("an integer >= 2", 20, is_integer(2),
                       "romm: the rows are mixed within random blocks of this many rows"),
    }

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        X = np.column_stack([numbers(frame, name, "noise") for name in self.columns])
        if self.kind == "romm":
            out = romm(X, self.amount / 100, self.block, rng)
        else:
            out = X.copy()
            for j in range(X.shape[1]):
                x = X[:, j]
                present = ~np.isnan(x)
                whole = bool(present.all())  # no missing cell: no masked copies
                values = x if whole else x[present]
                if values.size < 2:
                    continue
                centred = values - values.mean()
                sd = float(np.sqrt(np.add.reduce(centred * centred) / (values.size - 1)))  # np.std(ddof=1)
                if self.kind == "additive":
                    changed = values + rng.normal(0.0, self.amount / 100 * sd, values.size)
                else:
                    changed = correlated(values, self.amount / 100, sd, rng)
                if whole:
                    out[:, j] = changed
                else:
                    out[present, j] = changed
        return Outcome({name: out[:, j] for j, name in enumerate(self.columns)}, {"kind": self.kind})


def correlated(x: np.ndarray, delta: float, sd: float, rng: np.random.Generator) -> np.ndarray:
    """sdcMicro's "correlated2": ``x * sqrt(1 - delta^2) + delta * e`` with ``e`` normal of the
    column's standard deviation and a mean that keeps the column's mean. A ``delta`` of 1 or more
    would leave nothing of the value: it is held just below 1."""
    delta = min(delta, 1 - 1e-9)
    d1 = np.sqrt(1 - delta ** 2)
    mean = float(x.mean())
    return x * d1 + delta * rng.normal((1 - d1) / delta * mean, sd, x.size)


def romm(X: np.ndarray, p: float, block: int, rng: np.random.Generator) -> np.ndarray:
    """Random orthogonal matrix masking: ``T X`` with ``T`` the orthonormalized ``I + p M`` (``M``
    standard normal), as sdcMicro's ROMM; ``T`` is block diagonal over random blocks of ``block``
    rows, so that the cost is linear, and ``T' T = I`` still makes ``X' X`` (the cross products
    of the columns) exactly those of the input. A row with a missing value is left as it is."""
    out = X.copy()
    rows = np.flatnonzero(~np.isnan(X).any(axis=1))
    n = rows.size
    if n < 2:
        return out
    rows = rng.permutation(rows)
    b = min(block, n)
    rest = n % b
    regular = n // b - (1 if rest else 0)  # the last block takes the rest
    blocks = [rows[:regular * b].reshape(regular, b)]
    if rest:
        blocks.append(rows[regular * b:].reshape(1, -1))
    for picked in blocks:
        if picked.size == 0:
            continue
        size = picked.shape[1]
        M = np.eye(size)[None] + p * rng.standard_normal((picked.shape[0], size, size))
        Q, R = np.linalg.qr(M)
        Q = Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]  # Gram-Schmidt's signs
        out[picked] = Q @ X[picked]
    return out
