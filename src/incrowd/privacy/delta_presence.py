"""delta-presence: whether a person is in the released data at all stays uncertain.

Definition: Nergiz, Atzori and Clifton, "Hiding the presence of individuals from shared
databases" (SIGMOD 2007); ARX ``criteria/DPresence.java``. The data (the research subset) is
part of a population table; for every class of the population, generalized as the release is,
the share of its records that are in the data lies in [min, max]. A population class that holds
no row of the data has share 0, so ``min > 0`` refuses it. Monotone under generalization (a
merged class's share lies between its parts' shares), not under suppression (ARX's flags).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import ParameterError
from ._model import TOLERANCE, ClassStats, PrivacyModel, file_name, number, spec_table


@dataclass(frozen=True)
class DeltaPresence(PrivacyModel):
    """``min <= rows of the class in the data / records of the class in the population <= max``.

    Attributes
    ----------
    min : float
        The least share of a population class in the data (0 <= min <= max).
    max : float
        The largest share (max <= 1).
    population : str
        The population table's file (the spec's ``population``); the caller reads it and gives
        its frame to :func:`check_table`.
    column : str or None
        Unused: delta-presence reads no sensitive column.
    """

    min: float
    max: float
    population: str

    key = "delta_presence"
    example = ('delta_presence = { min = 0.0, max = 0.5, population = "FILE" }', 'presence stays uncertain')
    monotone_generalization = True
    needs_sensitive = False

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        share = stats.sizes / np.maximum(stats.population_counts(self.key), 1)
        return np.asarray((share >= self.min - TOLERANCE) & (share <= self.max + TOLERANCE))

    def release_ok(self, stats: ClassStats) -> bool:
        return super().release_ok(stats) and (self.min <= 0 or not self._unmatched(stats).size)

    def release_figure(self, stats: ClassStats) -> str:
        unmatched = self._unmatched(stats)
        return (f"{unmatched.size} class(es) of the population ({int(unmatched.sum())} record(s)) hold no row of the "
                f"data: their share 0 is below min {self.min:g}")

    def _unmatched(self, stats: ClassStats) -> np.ndarray:
        stats.population_counts(self.key)
        return stats.population_only if stats.population_only is not None else np.zeros(0, dtype=np.int64)

    def describe(self) -> str:
        return f"({self.min:g}, {self.max:g})-present in the population table {self.population!r}"

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> DeltaPresence:
        entries, _ = spec_table("delta_presence", value, ("min", "max", "population"), None,
                                'a table: { min = 0.0, max = 0.5, population = "FILE" }')
        low = number("delta_presence's min", entries.get("min", 0.0), "a number in [0, 1]", low=0, low_open=False,
                     high=1, high_open=False)
        high = number("delta_presence's max", entries.get("max"), "a number in (0, 1]", low=0, high=1,
                      high_open=False)
        if low > high:
            raise ParameterError(f"delta_presence's min ({low:g}) must not exceed its max ({high:g})")
        return cls(min=low, max=high, population=file_name("delta_presence's population", entries.get("population")))
