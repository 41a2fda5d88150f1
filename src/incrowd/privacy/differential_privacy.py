"""(epsilon, delta)-differential privacy for generalization, as ARX implements it (SafePub).

Definition: Bild, Kuhn and Prasser, "SafePub: A Truthful Data Anonymization Algorithm With Strong
Privacy Guarantees", PoPETs 2018(1), built on Li, Qardaji and Su's (k, beta)-SDGS (ASIACCS 2012):
draw each row with probability beta, generalize the sample with one full-domain scheme, suppress
every row of a class smaller than k. With beta = 1 - e^(-epsilon_anon) and k derived from
(epsilon_anon, delta) this is (epsilon_anon, delta)-differentially private; the scheme itself is
chosen by the exponential mechanism with the rest of the budget (``epsilon_search``), so the
release is (epsilon, delta)-differentially private. The search is
:func:`incrowd.generalization.safepub`; this model holds the parameters, the derived k and beta,
and the check of a release (every class has at least k rows).

The k is ARX's (``dp/ParameterCalculation.java``): with gamma = (e^eps - 1 + beta) / e^eps and
a_n = P(Binomial(n, beta) > floor(n gamma)), delta(k) = max over n >= ceil(k / gamma - 1) of a_n,
evaluated until the Chernoff bound c_n = exp(-n (gamma ln(gamma / beta) - (gamma - beta))), which
bounds every later a_n, falls to the running maximum. ARX's loop answers one more than the
smallest k with delta(k) < delta; that k is kept as ARX counts it (the larger k protects more,
and a release checks the same in both programs).

ARX declares the model monotone neither under generalization nor under suppression
(``EDDifferentialPrivacy``: ``super(false, false)``): its guarantee is the whole mechanism's, not
a property of classes a search could prune with.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .._runtime import lazy as _lazy
from ..exceptions import ParameterError
from ._model import ClassStats, PrivacyModel, number, spec_table

if TYPE_CHECKING:
    import scipy.special as special
else:
    special = _lazy.module("scipy.special")  # only deriving k needs the incomplete beta function

#: the score functions the search may use, by the names of ``incrowd.generalization.METRICS``;
#: ``loss`` (ARX's granularity, its default quality model) first, the default
SCORES = ("loss", "precision", "discernibility", "aecs")

#: ARX's defaults: the share of epsilon the search spends (its user interface's
#: ``epsilonGeneralizationFraction``) and the search's checks, divided among the quasi-identifiers
#: into steps (its user interface's step limit of 1000 checks)
SEARCH_BUDGET = 0.1
SEARCH_CHECKS = 1000

#: the largest epsilon taken: above it the bound that ends the derivation of k falls so slowly
#: (at epsilon = 10, after some 10^10 terms) that ARX's derivation does not end, and a budget of
#: e^5 = 148 times the odds promises little
MAX_EPSILON = 5.0

_BLOCK, _BLOCK_MAX = 4096, 1 << 20  # values of n evaluated at once while deriving delta(k)


def sampling_probability(epsilon: float) -> float:
    """beta = 1 - e^(-epsilon), the largest sampling probability (epsilon, delta)-SDGS allows.

    Parameters
    ----------
    epsilon : float
        The budget of the sampling and the suppression (epsilon_anon).

    Returns
    -------
    float
    """
    return -math.expm1(-epsilon)


def _gamma(epsilon: float, beta: float) -> float:
    power = math.exp(epsilon)
    return (power - 1.0 + beta) / power


def _tails(n: np.ndarray, gamma: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """a_n = P(Binomial(n, beta) >= floor(n gamma) + 1) and its Chernoff bound c_n, per n."""
    first = np.floor(n * gamma) + 1.0
    a = np.where(first > n, 0.0, special.betainc(first, np.maximum(n - first + 1.0, 1.0), beta))
    c = np.exp(-n * (gamma * math.log(gamma / beta) - (gamma - beta)))
    return a, c


def delta_of_k(k: int, epsilon: float) -> float:
    """The delta that (k, beta)-SDGS with beta = 1 - e^(-epsilon) reaches (ARX's ``calculateDelta``).

    Parameters
    ----------
    k : int
        The smallest class kept.
    epsilon : float
        epsilon_anon.

    Returns
    -------
    float
    """
    beta = sampling_probability(epsilon)
    gamma = _gamma(epsilon, beta)
    start = max(math.ceil(k / gamma - 1.0), 1)
    delta, block = -math.inf, _BLOCK
    while True:
        n = np.arange(start, start + block, dtype=np.float64)
        a, c = _tails(n, gamma, beta)
        running = np.maximum.accumulate(np.maximum(a, delta))
        reached = np.flatnonzero(running >= c)
        if reached.size:
            return float(running[reached[0]])
        # the bound falls slowly at a large epsilon: longer blocks keep the passes few
        delta, start, block = float(running[-1]), start + block, min(2 * block, _BLOCK_MAX)


@lru_cache(maxsize=64)
def derived_k(epsilon: float, delta: float) -> int:
    """ARX's k for (epsilon, delta) (``ParameterCalculation.calculateK``): one more than the
    smallest k with delta(k) < delta.

    delta(k) is the largest a_n over n >= n_m(k) = ceil(k / gamma - 1), and a_n does not depend
    on k; so one pass over n, until the bound c_n falls below delta (no later a_n reaches it),
    finds the last n whose a_n reaches delta, and delta(k) < delta exactly when n_m(k) is past
    it. ARX walks k up from 1 and evaluates delta(k) afresh for each; the answer is the same.

    Parameters
    ----------
    epsilon : float
        epsilon_anon, > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    int
    """
    beta = sampling_probability(epsilon)
    gamma = _gamma(epsilon, beta)
    last, start, block = 0, 1, _BLOCK
    while True:
        n = np.arange(start, start + block, dtype=np.float64)
        a, c = _tails(n, gamma, beta)
        reaching = np.flatnonzero(a >= delta)
        if reaching.size:
            last = int(n[reaching[-1]])
        if c[-1] < delta:  # c falls with n: from here on every a_n stays below delta
            break
        start, block = start + block, min(2 * block, _BLOCK_MAX)
    k = max(1, math.floor((last + 1) * gamma))
    while math.ceil(k / gamma - 1.0) <= last:  # the smallest k whose n_m is past the last reaching n
        k += 1
    while k > 1 and math.ceil((k - 1) / gamma - 1.0) > last:
        k -= 1
    return k + 1


@dataclass(frozen=True)
class DifferentialPrivacy(PrivacyModel):
    """(epsilon, delta)-differential privacy by SafePub: a random sample, generalized and with every
    class smaller than the derived k suppressed, at a scheme the exponential mechanism chose.

    Attributes
    ----------
    epsilon : float
        The whole privacy budget, > 0.
    delta : float
        The chance the guarantee may fail, in (0, 1).
    search_budget : float
        The share of epsilon the search spends, in (0, 1) (ARX's default 0.1); the rest,
        epsilon_anon, sets beta and k.
    steps : int or None
        The search's steps (each spends epsilon_search / steps); None: ARX's default, 1000 checks
        divided among the quasi-identifiers (:meth:`search_steps`).
    metric : str
        The score the search maximizes, one of :data:`SCORES` (default ``loss``).
    column : str or None
        Unused: the model reads no sensitive column.
    """

    epsilon: float
    delta: float
    search_budget: float = SEARCH_BUDGET
    steps: int | None = None
    metric: str = SCORES[0]

    key = "differential_privacy"
    example = ('differential_privacy = { epsilon = 1.0, delta = 1e-6 }', 'SafePub: the privacy budget')
    needs_sensitive = False

    def __post_init__(self) -> None:
        name = self.key
        number(f"{name}'s epsilon", self.epsilon, f"a number in (0, {MAX_EPSILON:g}] (the privacy budget)", low=0,
               high=MAX_EPSILON, high_open=False)
        number(f"{name}'s delta", self.delta, "a number in (0, 1)", low=0, high=1)
        number(f"{name}'s search_budget", self.search_budget,
               "a number in (0, 1) (the share of epsilon the search spends)", low=0, high=1)
        if self.steps is not None:
            number(f"{name}'s steps", self.steps, "an integer >= 1 (the search's steps)", low=1, low_open=False,
                   integer=True)
        if self.metric not in SCORES:
            raise ParameterError(f"{name}'s metric must be one of {', '.join(SCORES)}; got {self.metric!r}")

    @property
    def epsilon_search(self) -> float:
        """The budget of the search (epsilon x search_budget)."""
        return self.epsilon * self.search_budget

    @property
    def epsilon_anonymization(self) -> float:
        """The budget of the sampling and the suppression, epsilon_anon (epsilon - epsilon_search)."""
        return self.epsilon - self.epsilon_search

    @property
    def beta(self) -> float:
        """The probability each row is drawn into the sample."""
        return sampling_probability(self.epsilon_anonymization)

    @property
    def k(self) -> int:
        """The smallest class the release keeps."""
        return derived_k(self.epsilon_anonymization, self.delta)

    def search_steps(self, quasi_identifiers: int) -> int:
        """The search's steps for a table of ``quasi_identifiers`` columns.

        Parameters
        ----------
        quasi_identifiers : int

        Returns
        -------
        int
        """
        if self.steps is not None:
            return int(self.steps)
        return max(1, SEARCH_CHECKS // max(1, quasi_identifiers))

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        return np.asarray(stats.sizes) >= self.k

    def describe(self) -> str:
        return (f"({self.epsilon:g}, {self.delta:g})-differentially private: sampling {100 * self.beta:.1f} % of "
                f"rows, k = {self.k}, search budget {self.search_budget:g} of epsilon")

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> DifferentialPrivacy:
        entries, _ = spec_table(cls.key, value, ("epsilon", "delta", "search_budget", "steps", "metric"), None,
                                "a table: { epsilon = 1.0, delta = 1e-6 }")
        if entries.get("column") is not None:
            raise ParameterError("differential_privacy protects every row, not a sensitive column: leave out column")
        for needed in ("epsilon", "delta"):
            if needed not in entries:
                raise ParameterError(f"differential_privacy needs {needed}: {{ epsilon = 1.0, delta = 1e-6 }}")
        return cls(epsilon=entries["epsilon"], delta=entries["delta"],
                   search_budget=entries.get("search_budget", SEARCH_BUDGET), steps=entries.get("steps"),
                   metric=entries.get("metric", SCORES[0]))
