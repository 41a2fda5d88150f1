"""Every model's spec key, and the models of a ``[privacy]`` table."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from ..exceptions import ParameterError
from ._model import PrivacyModel

#: spec key -> (module of this package, class) of every built-in model, in the order a verdict
#: lists them
_BUILT_IN_CLASSES = {
    "k": (".k_anonymity", "KAnonymity"), "alpha": (".alpha_k", "AlphaK"), "l": (".distinct_l", "DistinctL"),
    "entropy_l": (".entropy_l", "EntropyL"), "recursive_l": (".recursive_l", "RecursiveL"),
    "t": (".t_closeness", "TCloseness"), "beta": (".beta_likeness", "BetaLikeness"),
    "delta_disclosure": (".delta_disclosure", "DeltaDisclosure"), "k_map": (".k_map", "KMap"),
    "delta_presence": (".delta_presence", "DeltaPresence"), "max_average_risk": (".average_risk", "AverageRisk"),
    "max_population_uniqueness": (".population_uniqueness", "PopulationUniqueness"),
    "differential_privacy": (".differential_privacy", "DifferentialPrivacy"),
}


class _Models(MutableMapping[str, type[PrivacyModel]]):
    """Spec key -> model class. A built-in model's module loads when its class is first looked
    up: a release that asks for k alone loads neither t's distances nor the population models'
    estimators (the keys alone answer ``in`` and the spec's checks)."""

    def __init__(self, built_in: Mapping[str, tuple[str, str]]):
        self._where = dict(built_in)
        self._classes: dict[str, type[PrivacyModel]] = {}
        self._keys = dict.fromkeys(built_in)  # the order a verdict lists them in, registered ones last

    def __getitem__(self, key: str) -> type[PrivacyModel]:
        model = self._classes.get(key)
        if model is None:
            module, name = self._where[key]
            model = self._classes[key] = getattr(importlib.import_module(module, __package__), name)
        return model

    def __setitem__(self, key: str, model: type[PrivacyModel]) -> None:
        self._classes[key] = model
        self._keys[key] = None

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        self._classes.pop(key, None)
        self._where.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"MODELS({', '.join(self._keys)})"


#: spec key -> model class, in the order a verdict lists them
MODELS: MutableMapping[str, type[PrivacyModel]] = _Models(_BUILT_IN_CLASSES)


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
    return [MODELS[key].from_spec(privacy[key], privacy=privacy) for key in MODELS if key in privacy]


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
