"""Rounding: each value to the nearest multiple of a base (mu-ARGUS's rounding; in R,
``base * round(x / base)``)."""

from __future__ import annotations

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

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        return Outcome({name: self.base * np.round(numbers(frame, name, "round") / self.base)
                        for name in self.columns}, {})
