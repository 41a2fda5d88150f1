"""k-map: every class matches at least k people of the population, not only k rows of the sample.

Definition: Sweeney (2002) and El Emam and Dankar (2008); ARX ``criteria/KMap.java``, monotone
under generalization and under suppression. Two ways to know the population's class sizes:

- a population table (ARX's research subset in a population, ``DataSubset``): the
  quasi-identifier columns, one row per person of the population, generalized as the release
  is; a class of the release passes when the population holds at least k records with its
  values;
- an estimate from the sampling fraction f = n / N (n the rows, N the sum of the sampling
  weights), ARX's ``CellSizeEstimator``: with lambda = f * k, a population class of k people
  shows a Poisson(lambda) number of rows in the sample (zero-truncated: given that it shows at
  least one). ARX derives the smallest sample class size k' whose cumulative probability reaches
  1 - significance, caps it at k and at n, and checks every class against k' (k-anonymity with
  k'). The counting is ARX's own (``calculateKPoisson``, ``calculateKZeroPoisson``), kept as it
  is: the Poisson loop answers one more than the first size reaching the level.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import ParameterError
from ._model import ClassStats, PrivacyModel, file_name, number, spec_table

#: the estimators of ARX's ``KMap.CellSizeEstimator``, by spec name
ESTIMATORS = ("poisson", "zero_truncated_poisson")


def _pmf(count: int, lam: float) -> float:
    return math.exp(count * math.log(lam) - lam - math.lgamma(count + 1))


def derived_k(k: int, fraction: float, significance: float, estimator: str) -> int:
    """ARX's k' for k-map estimated at sampling fraction ``fraction`` (before the caps at k and n).

    Parameters
    ----------
    k : int
        The population class size to reach.
    fraction : float
        n / N, in (0, 1].
    significance : float
        The accepted chance that a class of k' rows stands for fewer than k people.
    estimator : str
        ``"poisson"`` or ``"zero_truncated_poisson"``.

    Returns
    -------
    int
    """
    lam = fraction * k
    threshold = 1.0 - significance
    if estimator == "poisson":
        counter, value, cdf = 0, 0.0, 0.0
        while value < threshold:
            cdf += _pmf(counter, lam)
            value = cdf
            counter += 1
            if counter >= k:  # k' reached k: k-anonymity with k itself
                break
        return counter + 1
    truncated = 1.0 - math.exp(-lam)
    counter, value = 1, 0.0
    while value < threshold:
        value += _pmf(counter, lam) / truncated
        counter += 1
        if counter >= k:
            break
    return counter


@dataclass(frozen=True)
class KMap(PrivacyModel):
    """Every class matches at least ``k`` people of the population.

    Attributes
    ----------
    k : int
        The fewest people of the population a class must match (>= 2).
    population : str or None
        The population table's file (the spec's ``population``); the caller reads it and gives
        its frame to :func:`check_table`. None with an estimator.
    estimator : str or None
        ``"poisson"`` or ``"zero_truncated_poisson"``: estimate the population's class sizes from
        the sampling weights instead of a population table.
    significance : float
        With an estimator, the accepted chance of a class smaller than k in the population
        (ARX's significance level; default 0.01, ARX's default).
    column : str or None
        Unused: k-map reads no sensitive column.
    """

    k: int
    population: str | None = None
    estimator: str | None = None
    significance: float = 0.01

    key = "k_map"
    example = ('k_map = { k = 5, population = "FILE" }', 'k people of the population per class')
    monotone_generalization = True
    monotone_suppression = True
    needs_sensitive = False
    reads_release = True

    def class_floor(self, stats: ClassStats) -> int:
        """The fewest rows a class of ``stats`` needs under the estimator (ARX's k', capped at k and
        at the table's rows)."""
        rows = int(stats.sizes.sum())
        fraction = rows / stats.population_size(self.key)
        return min(self.k, derived_k(self.k, fraction, self.significance, str(self.estimator)), rows)

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        if self.estimator is None:
            return np.asarray(stats.population_counts(self.key) >= self.k)
        if stats.n_classes == 0:
            return np.zeros(0, dtype=bool)
        return np.asarray(stats.sizes >= self.class_floor(stats))

    def describe(self) -> str:
        if self.estimator is None:
            return f"{self.k}-map in the population table {self.population!r}"
        return f"{self.k}-map estimated by {self.estimator.replace('_', '-')} at significance {self.significance:g}"

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> KMap:
        entries, _ = spec_table("k_map", value, ("k", "population", "estimator", "significance"), None,
                                'a table: { k = 5, population = "FILE" } or { k = 5, estimator = "poisson" }')
        k = int(number("k_map's k", entries.get("k"), "an integer >= 2 (people of the population per class)", low=2,
                       low_open=False, integer=True))
        population, estimator = entries.get("population"), entries.get("estimator")
        if (population is None) == (estimator is None):
            raise ParameterError("k_map needs exactly one of population = \"FILE\" (a population table) and estimator "
                                 f"= {' or '.join(map(repr, ESTIMATORS))} (from the sampling weights)")
        if population is not None:
            file_name("k_map's population", population)
        if estimator is not None and estimator not in ESTIMATORS:
            raise ParameterError(f"k_map's estimator must be {' or '.join(map(repr, ESTIMATORS))}; got {estimator!r}")
        if "significance" in entries and estimator is None:
            raise ParameterError("k_map's significance goes with an estimator; a population table is counted exactly")
        significance = number("k_map's significance", entries.get("significance", 0.01),
                              "a number in [0, 1) (the accepted chance of a class smaller than k)", low=0,
                              low_open=False, high=1)
        return cls(k=k, population=population, estimator=estimator, significance=significance)
