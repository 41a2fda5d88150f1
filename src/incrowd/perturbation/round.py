"""Rounding: each value to the nearest multiple of a base (mu-ARGUS's rounding; in R,
``base * round(x / base)``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._base import Method, Outcome, Param, is_number, numbers


class Round(Method):
    key = "round"
    sdcmicro = "base * round(x / base)"
    summary = "rounds each value to the nearest multiple of a base"
    params = {
        "base": Param("a number > 0", 1, is_number(0, open_lo=True),
                      "each value becomes the nearest multiple of base (a half to the even multiple, as R rounds)"),
    }

    by_column = True

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        return Outcome({name: self.apply_column(numbers(frame, name, "round"))[0] for name in self.columns}, {})

    def apply_column(self, x: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        # in place: one array for the division, the rounding and the product
        np.divide(x, self.base, out=x)
        np.round(x, out=x)
        np.multiply(self.base, x, out=x)
        return x, {}
