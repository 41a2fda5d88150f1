"""Refine: the estimator (``refine``) that improves any method's partition by local moves, and its
kernel (``_refine_kernel``).

Imports the package root's shared helpers; the registry of starting methods is read at fit time.
"""

from __future__ import annotations

from .refine import Refine

__all__ = ["Refine"]
