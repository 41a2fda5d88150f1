"""Distinct l-diversity: every equivalence class holds at least l distinct sensitive values.

Definition: Machanavajjhala et al., "l-Diversity" (ICDE 2006), its distinct variant; ARX
``criteria/DistinctLDiversity.java`` (monotone under generalization and suppression); pycanon
``anonymity.l_diversity`` (the fewest distinct values of a class: a table is l-diverse exactly
when it is >= l). A missing sensitive value is never a distinct value here (it discloses nothing
and must not make a class look diverse); pycanon counts NaN as one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import ParameterError
from ._model import ClassStats, PrivacyModel, SpecNumber


@dataclass(frozen=True)
class DistinctL(PrivacyModel):
    """Every class holds at least ``l`` distinct present values of the sensitive column.

    Attributes
    ----------
    l : int
        The fewest distinct sensitive values of a class.
    column : str or None
        The sensitive column it protects (None: every column with the ``sensitive`` role).
    """

    l: int

    key = "l"
    example = ('l = 2', 'distinct sensitive values per class (needs a "sensitive" column)')
    spec_number = SpecNumber("l", "an integer >= 2 (distinct sensitive values per class)", low=2, low_open=False,
                             integer=True)
    lever = "lower"
    histogram = True
    monotone_generalization = True
    monotone_suppression = True
    merges = True

    def check_column(self, column: str, n_values: int) -> None:
        if self.column in (None, column) and self.l > n_values:
            raise ParameterError(f"l={self.l} is larger than the number of distinct values of sensitive column "
                                 f"{column!r} ({n_values}); no class can hold l distinct values (a missing value "
                                 "is not one)")

    def merge_gap(self, distinct: np.ndarray, distances: np.ndarray) -> np.ndarray:
        return np.maximum(self.l - distinct, 0)

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        return (stats.known() > 0).sum(axis=1) >= self.l

    def describe(self) -> str:
        return f"distinct {self.l}-diverse {self._where()}"
