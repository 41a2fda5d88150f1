"""Microaggregation methods, each an estimator and a name in :data:`METHODS`.

One subpackage per family (``mdav``, ``greedy``, ``ona``, ``mondrian``, ``refine``), each holding its
estimators and their numba kernels; the helpers every family shares sit here (``_base``: the
estimator base and parameter checks; ``_kernels``: distances and group updates; ``_adaptive``:
the thread tuner). Families import one way: ``mondrian`` -> ``ona`` -> ``greedy`` -> ``mdav``.
"""

from __future__ import annotations

from ._base import MicroaggregationEstimator
from .greedy import VMDAV, MDAVPlus, MDAVStar
from .mdav import MDAV
from .mondrian import MONA, MONA2D, Mondrian, MondrianV, MondrianV2D
from .ona import ONA, ONAStar
from .refine import Refine

#: method name (as used by the API, the CLI and the web UI) -> estimator class
METHODS: dict[str, type[MicroaggregationEstimator]] = {
    "mdav": MDAV,
    "mdav-plus": MDAVPlus,
    "v-mdav": VMDAV,
    "mdav-star": MDAVStar,
    "ona": ONA,
    "ona-star": ONAStar,
    "mondrian": Mondrian,
    "mondrian-v": MondrianV,
    "mondrian-v2d": MondrianV2D,
    "mona": MONA,
    "mona-2d": MONA2D,
    "refine": Refine,
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
