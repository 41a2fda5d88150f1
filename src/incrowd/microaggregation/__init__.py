"""Microaggregation methods, each an estimator and a name in :data:`METHODS`."""

from __future__ import annotations

from ._base import MicroaggregationEstimator
from .mdav import MDAV
from .mdav_plus import MDAVPlus
from .mdav_star import MDAVStar
from .mona import MONA, MONA2D
from .mondrian import Mondrian, MondrianV, MondrianV2D
from .ona import ONA, ONAStar
from .refine import Refine
from .vmdav import VMDAV

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
