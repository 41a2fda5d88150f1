"""The models by spec key, and the models a ``[privacy]`` table asks for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._model import PrivacyModel
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
