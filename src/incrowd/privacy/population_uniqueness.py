"""Population uniqueness: few people of the population are unique on the quasi-identifiers.

Definition: ARX ``criteria/PopulationUniqueness.java`` with ``risk/RiskModelPopulationUniqueness``:
from the release's class sizes and the sampling fraction f = n / N (N the sum of the sampling
weights) a statistical model estimates the share of the population that is unique in it
(:func:`incrowd.privacy.uniqueness_estimates`: Pitman, Zayatz, SNB, or Dankar's rule). The
release passes when that share is above 0 and at most the bound, or when it has no sample unique
(then no population unique was sampled). A model without an estimate, or an estimate of 0 beside
sample uniques, fails, as in ARX; and as ARX's criterion does, Dankar's rule at f <= 0.1 takes
Pitman's estimate with no fallback to Zayatz's. A global model. Not monotone under suppression;
ARX declares it monotone under generalization with Zayatz's model only, a flag this model leaves
off for every model, so that no search prunes on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import ParameterError
from ._model import TOLERANCE, ClassStats, PrivacyModel, number, spec_table
from ._uniqueness import population_uniqueness

#: the statistical models, by spec name
UNIQUENESS_MODELS = ("pitman", "zayatz", "snb", "dankar")


@dataclass(frozen=True)
class PopulationUniqueness(PrivacyModel):
    """The estimated share of population uniques is at most ``value``.

    Attributes
    ----------
    value : float
        The bound, in (0, 1].
    model : str
        ``"pitman"``, ``"zayatz"``, ``"snb"`` or ``"dankar"`` (default, ARX's default).
    column : str or None
        Unused: population uniqueness reads no sensitive column.
    """

    value: float
    model: str = "dankar"

    key = "max_population_uniqueness"
    example = ('max_population_uniqueness = { value = 0.01, model = "dankar" }', 'population uniques (needs weights)')
    needs_sensitive = False

    def estimate(self, stats: ClassStats) -> float | None:
        """The estimated share of population uniques (None where the model has none)."""
        rows = int(stats.sizes.sum())
        fraction = rows / stats.population_size(self.key)
        found = population_uniqueness(np.asarray(stats.sizes), fraction)
        if self.model == "dankar" and fraction <= 0.1 and found["pitman"] is None and found["sample_uniques"]:
            return None
        share = found[self.model]
        return None if share is None else float(share)

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        return np.ones(stats.n_classes, dtype=bool)

    def release_ok(self, stats: ClassStats) -> bool:
        if not (stats.sizes == 1).any():
            return True
        share = self.estimate(stats)
        return share is not None and 0 < share <= self.value + TOLERANCE

    def release_figure(self, stats: ClassStats) -> str:
        share = self.estimate(stats)
        if share is None or share == 0:
            return (f"the {self.model} model gives no estimate of population uniqueness for "
                    f"{int((stats.sizes == 1).sum())} sample unique(s)")
        return f"estimated population uniqueness ({self.model}) {share:.6g} > {self.value:g}"

    def describe(self) -> str:
        return f"within estimated population uniqueness {self.value:g} ({self.model})"

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> PopulationUniqueness:
        entries, _ = spec_table("max_population_uniqueness", value, ("value", "model"), None)
        bound = number("max_population_uniqueness", entries.get("value"), "a number in (0, 1] (the share of the "
                       "population unique on the quasi-identifiers)", low=0, high=1, high_open=False)
        model = entries.get("model", "dankar")
        if model not in UNIQUENESS_MODELS:
            raise ParameterError(f"max_population_uniqueness's model must be one of {', '.join(UNIQUENESS_MODELS)}; "
                                 f"got {model!r}")
        return cls(value=bound, model=model)
