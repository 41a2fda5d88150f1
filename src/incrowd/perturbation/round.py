"""Rounding: each value to the nearest multiple of a base (mu-ARGUS's rounding; in R,
``base * round(x / base)``)."""

from __future__ import annotations

from typing import Any

import numpy as np

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

    def apply_column(self, x: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        # in place: one array for the division, the rounding and the product
        np.divide(x, self.base, out=x)
        np.round(x, out=x)
        np.multiply(self.base, x, out=x)
        return x, {}
