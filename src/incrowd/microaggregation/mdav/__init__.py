"""MDAV: the estimator (``mdav``), its plain kernel (``_mdav_kernel``), the fast scan with screened
distances (``_mdav_fast``, ``_screen``, ``_blockdot``).

Imports only the shared helpers of the package root (``_base``, ``_kernels``, ``_adaptive``).
"""

from __future__ import annotations

from .mdav import MDAV

__all__ = ["MDAV"]
