"""k-anonymity: every equivalence class has at least k rows.

Definition: Samarati and Sweeney (1998); ARX ``criteria/KAnonymity.java`` (monotone under
generalization and under suppression); pycanon ``anonymity.k_anonymity`` (the smallest class
size: a table is k-anonymous exactly when it is >= k).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._model import ClassStats, PrivacyModel, SpecNumber


@dataclass(frozen=True)
class KAnonymity(PrivacyModel):
    """Every class has at least ``k`` rows.

    Attributes
    ----------
    k : int
        The fewest rows of a class (>= 2 in a spec).
    column : str or None
        Unused: k reads no sensitive column.
    """

    k: int

    key = "k"
    example = ('k = 5', 'every published class holds at least k rows')
    spec_number = SpecNumber("k", "an integer >= 2 (rows per class)", low=2, low_open=False, integer=True)
    lever = "lower"
    histogram = True
    monotone_generalization = True
    monotone_suppression = True
    needs_sensitive = False

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        # with a missing value matching any value, the rows a row matches are its crowd
        return np.asarray(stats.sizes if stats.matches is None else stats.matches) >= self.k

    def describe(self) -> str:
        return f"{self.k}-anonymous"
