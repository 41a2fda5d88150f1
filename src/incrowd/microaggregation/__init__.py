"""Microaggregation methods, each an estimator and a name in :data:`METHODS`."""

from __future__ import annotations

from ._base import MicroaggregationEstimator
from .mdav import MDAV
from .mdav_plus import MDAVPlus
from .mdav_star import MDAVStar
from .vmdav import VMDAV

#: method name (as used by the API, the CLI and the web UI) -> estimator class
METHODS: dict[str, type[MicroaggregationEstimator]] = {
    "mdav": MDAV,
    "mdav-plus": MDAVPlus,
    "v-mdav": VMDAV,
    "mdav-star": MDAVStar,
}

__all__ = ["METHODS", "MicroaggregationEstimator", "MDAV", "MDAVPlus", "VMDAV", "MDAVStar"]
