"""Privacy models: one model per file, each a small frozen class with its parameters, its
``[privacy]`` spec key, whether it is monotone under generalization and under suppression, and
its vectorized check of every equivalence class (:meth:`PrivacyModel.classes_ok` on a
:class:`ClassStats`).

- :class:`KAnonymity` (``k``), :class:`DistinctL` (``l``), :class:`EntropyL` (``entropy_l``),
  :class:`RecursiveL` (``recursive_l``), :class:`AlphaK` (``alpha``, with ``k``),
  :class:`DeltaDisclosure` (``delta_disclosure``), :class:`BetaLikeness` (``beta``, basic or
  enhanced), :class:`TCloseness` (``t``);
- the population models: :class:`KMap` (``k_map``, a population table or an estimate from the
  weights), :class:`DeltaPresence` (``delta_presence``, a population table), and the global models
  :class:`AverageRisk` (``max_average_risk``) and :class:`PopulationUniqueness`
  (``max_population_uniqueness``), which judge the whole release (:meth:`PrivacyModel.release_ok`);
- :data:`MODELS`: spec key -> model class; :func:`models_from_spec` reads them from a
  ``[privacy]`` table;
- :func:`class_stats` builds the statistics of a table, :func:`check_table` checks a whole
  table (a release as read back) and returns a :class:`Failure` per model it does not meet;
  :class:`ReleaseCheck` is that check as a written release runs it (``incrowd.io`` reads the file
  back and calls it), with the records and the one-line refusals of a verification;
- the verifiers of a published table, each with its report: :func:`verify_k_anonymity`
  (:class:`KAnonymityReport`), :func:`verify_l_diversity` (:class:`LDiversityReport`),
  :func:`verify_t_closeness` (:class:`TClosenessReport`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# internal (not in __all__): t's earth mover's distance on integer counts, which generalization's
# search and publish's sensitive-column merging compute too
from . import _emd as emd  # noqa: F401

# internal (not in __all__): the weighted sample risk measures (fk, Fk, individual and household
# risk, as sdcMicro) that the report and the publish risk targets both compute
from . import _sample_risk as sample_risk  # noqa: F401
from ._model import TOLERANCE, ClassStats, PrivacyModel
from ._stats import Failure, check_table, class_stats

# internal (not in __all__): the population-uniqueness estimators the risk summary reports too,
# under another name: the package attribute population_uniqueness is the model's module
from ._uniqueness import population_uniqueness as uniqueness_estimates  # noqa: F401
from ._verify import (
    KAnonymityReport,
    LDiversityReport,
    TClosenessReport,
    verify_k_anonymity,
    verify_l_diversity,
    verify_t_closeness,
)
from ._written import ReleaseCheck, verified_lines
from .alpha_k import AlphaK
from .average_risk import AverageRisk
from .beta_likeness import BetaLikeness
from .delta_disclosure import DeltaDisclosure
from .delta_presence import DeltaPresence
from .distinct_l import DistinctL
from .entropy_l import EntropyL
from .k_anonymity import KAnonymity
from .k_map import KMap
from .population_uniqueness import PopulationUniqueness
from .recursive_l import RecursiveL
from .t_closeness import TCloseness

#: spec key -> model class, in the order a verdict lists them
MODELS: dict[str, type[PrivacyModel]] = {
    model.key: model
    for model in (KAnonymity, AlphaK, DistinctL, EntropyL, RecursiveL, TCloseness, BetaLikeness, DeltaDisclosure,
                  KMap, DeltaPresence, AverageRisk, PopulationUniqueness)
}


def models_from_spec(privacy: Mapping[str, Any]) -> list[PrivacyModel]:
    """The models a ``[privacy]`` table asks for, in :data:`MODELS`' order; keys of other
    settings (``max_suppression``, ``strategy``, ...) are left to the caller.

    A model's value is its parameter (``l = 2``) or a table with it (``l = { value = 2,
    column = "income" }``; ``recursive_l = { c = 3, l = 2 }``; ``beta = { value = 1.0,
    variant = "enhanced" }``); ``column`` names the sensitive column it protects (default:
    every column with the ``sensitive`` role). ``alpha`` reads ``k``. The population models:
    ``k_map = { k = 5, population = "FILE" }`` or ``{ k = 5, estimator = "poisson",
    significance = 0.01 }``, ``delta_presence = { min = 0.0, max = 0.5, population = "FILE" }``,
    ``max_average_risk = 0.05``, ``max_population_uniqueness = { value = 0.01, model = "dankar" }``.

    Parameters
    ----------
    privacy : mapping
        The spec's ``[privacy]`` table.

    Returns
    -------
    list of PrivacyModel
    """
    return [model.from_spec(privacy[key], privacy=privacy) for key, model in MODELS.items() if key in privacy]


__all__ = ["MODELS", "TOLERANCE", "AlphaK", "AverageRisk", "BetaLikeness", "ClassStats", "DeltaDisclosure",
           "DeltaPresence", "DistinctL", "EntropyL", "Failure", "KAnonymity", "KAnonymityReport", "KMap",
           "LDiversityReport", "PopulationUniqueness", "PrivacyModel", "RecursiveL", "ReleaseCheck", "TCloseness",
           "TClosenessReport", "check_table", "class_stats", "models_from_spec", "verify_k_anonymity",
           "verified_lines", "verify_l_diversity", "verify_t_closeness"]
