"""Privacy models: one model per file, each a small frozen class with its parameters, its
``[privacy]`` spec key, whether it is monotone under generalization and under suppression, and
its vectorized check of every equivalence class (:meth:`PrivacyModel.classes_ok` on a
:class:`ClassStats`).

- :class:`KAnonymity` (``k``), :class:`DistinctL` (``l``), :class:`EntropyL` (``entropy_l``),
  :class:`RecursiveL` (``recursive_l``), :class:`AlphaK` (``alpha``, with ``k``),
  :class:`DeltaDisclosure` (``delta_disclosure``), :class:`BetaLikeness` (``beta``, basic or
  enhanced), :class:`TCloseness` (``t``);
- :data:`MODELS`: spec key -> model class; :func:`models_from_spec` reads them from a
  ``[privacy]`` table;
- :func:`class_stats` builds the statistics of a table, :func:`check_table` checks a whole
  table (a release as read back) and returns a :class:`Failure` per model it does not meet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._model import TOLERANCE, ClassStats, PrivacyModel
from ._stats import Failure, check_table, class_stats
from .alpha_k import AlphaK
from .beta_likeness import BetaLikeness
from .delta_disclosure import DeltaDisclosure
from .distinct_l import DistinctL
from .entropy_l import EntropyL
from .k_anonymity import KAnonymity
from .recursive_l import RecursiveL
from .t_closeness import TCloseness

#: spec key -> model class, in the order a verdict lists them
MODELS: dict[str, type[PrivacyModel]] = {
    model.key: model
    for model in (KAnonymity, AlphaK, DistinctL, EntropyL, RecursiveL, TCloseness, BetaLikeness, DeltaDisclosure)
}


def models_from_spec(privacy: Mapping[str, Any]) -> list[PrivacyModel]:
    """The models a ``[privacy]`` table asks for, in :data:`MODELS`' order; keys of other
    settings (``max_suppression``, ``strategy``, ...) are left to the caller.

    A model's value is its parameter (``l = 2``) or a table with it (``l = { value = 2,
    column = "income" }``; ``recursive_l = { c = 3, l = 2 }``; ``beta = { value = 1.0,
    variant = "enhanced" }``); ``column`` names the sensitive column it protects (default:
    every column with the ``sensitive`` role). ``alpha`` reads ``k``.

    Parameters
    ----------
    privacy : mapping
        The spec's ``[privacy]`` table.

    Returns
    -------
    list of PrivacyModel
    """
    return [model.from_spec(privacy[key], privacy=privacy) for key, model in MODELS.items() if key in privacy]


__all__ = ["MODELS", "TOLERANCE", "AlphaK", "BetaLikeness", "ClassStats", "DeltaDisclosure", "DistinctL",
           "EntropyL", "Failure", "KAnonymity", "PrivacyModel", "RecursiveL", "TCloseness", "check_table",
           "class_stats", "models_from_spec"]
