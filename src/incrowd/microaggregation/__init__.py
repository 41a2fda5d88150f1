"""Microaggregation methods, each an estimator and a name in :data:`METHODS`.

One subpackage per family (``mdav``, ``greedy``, ``ona``, ``mondrian``, ``refine``), each holding its
estimators and their numba kernels; the helpers every family shares sit here (``_estimator``: the
scikit-learn contract without scikit-learn; ``_base``: the estimator base and parameter checks;
``_kernels``: distances and group updates; ``_adaptive``: the thread tuner). Families import one
way: ``mondrian`` -> ``ona`` -> ``greedy`` -> ``mdav``.
"""

from __future__ import annotations

from .._methods import METHOD_CLASSES
from ._base import MicroaggregationEstimator
from ._bound import lower_bound as lower_bound  # the rest of incrowd takes it here; public as incrowd.lower_bound
from .greedy import VMDAV, MDAVPlus, MDAVStar
from .mdav import MDAV
from .mondrian import MONA, MONA2D, Mondrian, MondrianV, MondrianV2D
from .ona import ONA, ONAStar
from .refine import Refine

#: method name (as used by the API, the CLI and the web UI) -> estimator class; the names and their
#: order come from the one table, ``incrowd._methods.METHOD_CLASSES``
METHODS: dict[str, type[MicroaggregationEstimator]] = {
    name: globals()[cls] for name, cls in METHOD_CLASSES.items()
}

__all__ = [
    "METHODS",
    "MicroaggregationEstimator",
    "MDAV",
    "MDAVPlus",
    "VMDAV",
    "MDAVStar",
    "ONA",
    "ONAStar",
    "Mondrian",
    "MondrianV",
    "MondrianV2D",
    "MONA",
    "MONA2D",
    "Refine",
]
