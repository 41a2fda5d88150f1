"""(alpha, k)-anonymity: classes of at least k rows in which no sensitive value has a share
above alpha.

Definition: Wong, Li, Fu and Wang, "(alpha, k)-anonymity" (KDD 2006): every class has at least k
rows and the relative frequency of every sensitive value in it is at most alpha. ARX has no
criterion of its own for it. pycanon ``anonymity.alpha_k_anonymity`` returns (the largest share
of a value in a class, the smallest class): a table passes exactly when the first is <= alpha
and the second >= k.

The shares are those of the class's present values (a missing value discloses nothing, so a
class whose values are all missing has no share to exceed). Monotone under generalization (a
merged class's share of a value lies between its parts'), not under suppression (a passing class
merged with one of a single value may exceed alpha).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import ParameterError
from ._model import TOLERANCE, ClassStats, PrivacyModel, number, share_floor, spec_table


@dataclass(frozen=True)
class AlphaK(PrivacyModel):
    """Every class has at least ``k`` rows and no present sensitive value above ``alpha`` of them.

    Attributes
    ----------
    alpha : float
        The largest share of one sensitive value in a class, in (0, 1].
    k : int
        The fewest rows of a class.
    column : str or None
        The sensitive column it protects (None: every column with the ``sensitive`` role).
    """

    alpha: float
    k: int

    key = "alpha"
    example = ('alpha = 0.5', '(alpha, k): no sensitive value above this share of a class')
    monotone_generalization = True

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        known = stats.known()
        present = known.sum(axis=1)
        top = known.max(axis=1, initial=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(present > 0, top / np.maximum(present, 1), 0.0)
        return (np.asarray(stats.sizes) >= self.k) & (share <= self.alpha + TOLERANCE)

    def split_floor(self, stats: ClassStats) -> np.ndarray:
        sizes = np.asarray(stats.sizes, dtype=np.int64)
        known = stats.known().astype(np.float64)
        # a class below k has every part below k; otherwise alpha's share bound
        bound = np.full(known.shape[1], self.alpha + TOLERANCE)
        return np.where(sizes < self.k, sizes, share_floor(known, bound))

    def describe(self) -> str:
        return f"({self.alpha:g}, {self.k})-anonymous {self._where()}"

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> AlphaK:
        entries, column = spec_table("alpha", value, ("value",), column)
        alpha = number("alpha", entries.get("value"), "a number in (0, 1] (the largest share of a sensitive value "
                       "in a class)", low=0, high=1, high_open=False)
        k = (privacy or {}).get("k")
        if k is None:
            raise ParameterError("alpha needs k in [privacy]: (alpha, k)-anonymity bounds the share of a value in "
                                 "classes of at least k rows")
        k = number("k", k, "an integer >= 2 (rows per class)", low=2, low_open=False, integer=True)
        return cls(alpha=alpha, k=int(k), column=column)
