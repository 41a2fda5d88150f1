"""The greedy group-growing methods: MDAV+ (``mdav_plus``), V-MDAV (``vmdav``) and MDAV* (``mdav_star``),
their kernels (``_greedy_kernels``, ``_fixed_center``), the row grid (``_grid``) and the fast and
screened passes (``_mdav_star_fast``, ``_mdav_star_screened``, ``_vmdav_fast``).

Imports the package root's shared helpers and ``mdav`` (its screened distances), never the
families above it.
"""

from __future__ import annotations

from .mdav_plus import MDAVPlus
from .mdav_star import MDAVStar
from .vmdav import VMDAV

__all__ = ["MDAVPlus", "MDAVStar", "VMDAV"]
