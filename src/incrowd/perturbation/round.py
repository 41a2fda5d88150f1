"""Rounding: each value to the nearest multiple of a base (mu-ARGUS's rounding; in R,
``base * round(x / base)``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._native import CODING_TYPES, round_values
from ._base import Method, Param, is_number


class Round(Method):
    key = "round"
    sdcmicro = "base * round(x / base)"
    summary = "rounds each value to the nearest multiple of a base"
    params = {
        "base": Param("a number > 0", 1, is_number(0, open_lo=True),
                      "each value becomes the nearest multiple of base (a half to the even multiple, as R rounds)"),
    }

    by_column = True

    def _rounded(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        # one array (``out``, float64) for the division, the rounding and the product; an
        # integer ``x`` is read as float64 by the division itself, not copied first
        base = float(self.base)
        np.divide(x, base, out=out)
        np.round(out, out=out)
        np.multiply(base, out, out=out)
        return out

    def apply_column(self, x: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        return self._rounded(x, x), {}

    def code_column(self, old: np.ndarray) -> tuple[np.ndarray | None, int, dict[str, Any]] | None:
        if old.dtype in CODING_TYPES and (old.dtype.kind == "f" or float(self.base).is_integer()):
            new, changed = round_values(old, self.base)
            if new is None:
                return None  # past int64's range: the column becomes float64
        elif old.dtype.kind in "iu" and float(self.base).is_integer():
            # int32, uint8, ...: numpy's passes (int64, the type a CSV's whole numbers are read as, has
            # the kernel's one)
            values = self._rounded(old, np.empty(old.shape, np.float64))
            # a whole base makes every value a whole number: only the type's range can keep it float
            info = np.iinfo(old.dtype)
            if old.size and not (values.min() >= info.min and values.max() <= info.max):
                return None
            new = values.astype(old.dtype)
            changed = int(np.count_nonzero(old != new))
        else:
            return None
        return (new if changed else None), changed, {}
