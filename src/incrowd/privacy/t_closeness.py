"""t-closeness: every class's sensitive distribution lies within earth mover's distance t of the
table's.

Definition: Li, Li and Venkatasubramanian, "t-Closeness" (ICDE 2007), with ARX's two ground
distances (``criteria/EqualDistanceTCloseness.java``, ``OrderedDistanceTCloseness.java``:
monotone under generalization, not under suppression): the ordered distance for numeric and
ordinal values (their order), the equal distance for nominal ones. The distance is computed
exactly as :mod:`incrowd._emd` does for ``publish`` (a missing value is one category, after every
present value). pycanon ``anonymity.t_closeness`` returns the largest distance (ordered for a
numeric column, equal for text): a table passes exactly when it is <= t.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._emd import dense_distances, exceeds
from ._model import ClassStats, PrivacyModel, number, spec_table


@dataclass(frozen=True)
class TCloseness(PrivacyModel):
    """Every class lies within earth mover's distance ``t`` of the table's distribution (ordered
    or equal distance as the column's values are, see :func:`incrowd.metrics.sensitive_codes`).

    Attributes
    ----------
    t : float
        The largest distance of a class, in (0, 1].
    column : str or None
        The sensitive column it protects (None: every column with the ``sensitive`` role).
    """

    t: float

    key = "t"
    monotone_generalization = True
    monotone_suppression = False

    def distances(self, stats: ClassStats) -> np.ndarray:
        counts = stats._need(stats.counts)
        reference = stats._need(stats.table_counts).astype(np.int64)
        used = reference > 0  # a code the reference never takes is not one of its values
        return dense_distances(counts[:, used], reference[used], stats.ordered)

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        return ~exceeds(self.distances(stats), self.t)

    def describe(self) -> str:
        return f"{self.t:g}-close {self._where()}"

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> TCloseness:
        entries, column = spec_table("t", value, ("value",), column)
        t = number("t", entries.get("value"), "a number in (0, 1] (earth mover's distance)", low=0, high=1,
                   high_open=False)
        return cls(t=t, column=column)
