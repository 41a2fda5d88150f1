"""Strict JSON: every document incrowd prints parses with any JSON parser.

Python's ``json`` writes ``NaN`` and ``Infinity`` for non-finite floats, which are not JSON. A
number that is not finite carries no value a reader could use, so it becomes ``null``; the
encoder then runs with ``allow_nan=False`` so nothing non-finite can slip through.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np


def plain(value: Any) -> Any:
    """``value`` as JSON-ready Python objects: numpy scalars and arrays unwrapped, paths as
    strings, non-finite floats as None."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, (str, int, float, bool)) and k is not None else k: plain(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Path):
        return str(value)
    return value


def dumps(value: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text of ``value`` (see :func:`plain`); raises TypeError for other objects."""
    return json.dumps(plain(value), indent=indent, allow_nan=False)
