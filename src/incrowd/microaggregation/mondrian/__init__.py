"""Mondrian and MONA: the median-cut estimators (``mondrian``), their kernel
(``_mondrian_kernel``) and MONA (``mona``), which hands small parts to ONA*.

Imports the package root's shared helpers and ``ona`` (MONA's parts).
"""

from __future__ import annotations

from .mona import MONA, MONA2D
from .mondrian import Mondrian, MondrianV, MondrianV2D

__all__ = ["Mondrian", "MondrianV", "MondrianV2D", "MONA", "MONA2D"]
