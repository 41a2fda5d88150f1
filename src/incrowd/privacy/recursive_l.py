"""Recursive (c, l)-diversity: the most frequent sensitive value of a class is not too frequent.

Definition: Machanavajjhala et al., "l-Diversity" (ICDE 2006): with a class's value counts
sorted ``r_1 >= r_2 >= ... >= r_m``, the class is recursive (c, l)-diverse when
``r_1 < c (r_l + r_(l+1) + ... + r_m)``; a class with fewer than l distinct values is not. ARX
``criteria/RecursiveCLDiversity.java`` checks exactly this (strict, monotone under generalization,
not under suppression). pycanon's ``anonymity.recursive_c_l_diversity`` sorts the counts in
ascending order and divides the *smallest* by the sum of the largest, so its c is not this
definition's; the tests check this model against the definition itself.

The counts are those of the class's present values (a missing value is no value).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import ParameterError
from ._model import ClassStats, PrivacyModel, number, spec_table


@dataclass(frozen=True)
class RecursiveL(PrivacyModel):
    """``r_1 < c (r_l + ... + r_m)`` in every class, over its present sensitive values.

    Attributes
    ----------
    c : float
        The factor bounding the most frequent value.
    l : int
        The rank from which the less frequent values are summed; a class needs l distinct values.
    column : str or None
        The sensitive column it protects (None: every column with the ``sensitive`` role).
    """

    c: float
    l: int

    key = "recursive_l"
    example = ('recursive_l = { c = 3, l = 2 }', 'recursive (c, l)-diversity')
    monotone_generalization = True

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        known = stats.known()
        if known.shape[1] < self.l:
            return np.zeros(known.shape[0], dtype=bool)
        ranked = -np.sort(-known, axis=1)  # r_1 >= r_2 >= ...
        distinct = (known > 0).sum(axis=1)
        tail = ranked[:, self.l - 1:].sum(axis=1)
        return (distinct >= self.l) & (ranked[:, 0] < self.c * tail)

    def describe(self) -> str:
        return f"recursive ({self.c:g}, {self.l})-diverse {self._where()}"

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> RecursiveL:
        entries, column = spec_table("recursive_l", value, ("c", "l"), column, "a table such as { c = 3, l = 2 }")
        missing = [name for name in ("c", "l") if name not in entries]
        if missing:
            raise ParameterError(f"recursive_l needs {' and '.join(missing)}, e.g. {{ c = 3, l = 2 }}")
        c = number("recursive_l.c", entries["c"], "a positive number", low=0)
        l = number("recursive_l.l", entries["l"], "an integer >= 2", low=2, low_open=False, integer=True)
        return cls(c=c, l=int(l), column=column)
