"""Every model's spec key, and the models of a ``[privacy]`` table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..exceptions import ParameterError
from ._model import PrivacyModel
from .alpha_k import AlphaK
from .average_risk import AverageRisk
from .beta_likeness import BetaLikeness
from .delta_disclosure import DeltaDisclosure
from .delta_presence import DeltaPresence
from .differential_privacy import DifferentialPrivacy
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
                  KMap, DeltaPresence, AverageRisk, PopulationUniqueness, DifferentialPrivacy)
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
    ``max_average_risk = 0.05``, ``max_population_uniqueness = { value = 0.01, model = "dankar" }``,
    ``differential_privacy = { epsilon = 1.0, delta = 1e-6 }`` (with ``search_budget``, ``steps``
    and ``metric`` optional).

    Parameters
    ----------
    privacy : mapping
        The spec's ``[privacy]`` table.

    Returns
    -------
    list of PrivacyModel
    """
    return [model.from_spec(privacy[key], privacy=privacy) for key, model in MODELS.items() if key in privacy]


def models_from_summary(summary: Mapping[str, Any]) -> list[PrivacyModel]:
    """The models beyond k that a release's summary (``publish``'s JSON) states by their spec keys
    with a number (a model given as a table is stated by its description only, and read from
    the spec instead).

    Parameters
    ----------
    summary : mapping
        The release's summary.

    Returns
    -------
    list of PrivacyModel
    """
    entries = {key: value for key, value in summary.items()
               if key in MODELS and key != "k" and isinstance(value, (int, float)) and not isinstance(value, bool)}
    return models_from_spec(entries)


def other_models(entries: Mapping[str, Any], k: int | None = None, *, what: str = "models") -> list[PrivacyModel]:
    """The models beyond k, l and t that ``entries`` (spec keys to their values) ask for, as a
    command that takes k, l and t apart reads them (``negotiate``'s ``--model``, the web's
    ``models``); ``k`` is what ``alpha`` pairs with. An unknown key, or k, l or t among them, is
    refused in one line naming ``what``."""
    others = [name for name in MODELS if name not in ("k", "l", "t")]
    for key in entries:
        if key not in others:
            raise ParameterError(f"{what}: {key!r} is not a privacy model taken here; known: {', '.join(others)} "
                                 "(k, l and t have their own options)")
    return [m for m in models_from_spec({**entries, **({"k": k} if k is not None else {})}) if m.key != "k"]


def register_model(model: type[PrivacyModel]) -> type[PrivacyModel]:
    """Add a model class to :data:`MODELS` under its spec key (usable as a class decorator):
    the spec, ``publish``, ``negotiate``, ``generalize``, the report, the CLI's ``--model`` and
    the web then take it with no other edit. A key already taken by another class is refused.

    Parameters
    ----------
    model : type
        A :class:`PrivacyModel` subclass with its ``key``.

    Returns
    -------
    type
        ``model``.
    """
    if not (isinstance(model, type) and issubclass(model, PrivacyModel)):
        raise ParameterError(f"register_model takes a PrivacyModel subclass; got {model!r}")
    taken = MODELS.get(model.key)
    if taken is not None and taken is not model:
        raise ParameterError(f"privacy model key {model.key!r} is taken by {taken.__name__}")
    MODELS[model.key] = model
    return model


def unregister_model(key: str) -> None:
    """Remove the model of spec key ``key`` (one :func:`register_model` added); the built-in
    models stay.

    Parameters
    ----------
    key : str
        The model's spec key.

    Returns
    -------
    None
    """
    if key in _BUILT_IN:
        raise ParameterError(f"{key!r} is a built-in privacy model; it cannot be removed")
    MODELS.pop(key, None)


#: the keys incrowd itself defines
_BUILT_IN = frozenset(MODELS)
