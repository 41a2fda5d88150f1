"""Top coding: values above a limit replaced (sdcMicro's ``topBotCoding``, kind "top")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._base import REQUIRED, Method, Outcome, Param, is_number, numbers


class TopCode(Method):
    key = "top_code"
    sdcmicro = 'topBotCoding(kind = "top")'
    summary = "replaces the values above a limit"
    #: which side of the limit is replaced: values above it (+1) or below it (-1)
    side = 1
    params = {
        "value": Param("a number", REQUIRED, is_number(), "the limit: values beyond it are replaced"),
        "replacement": Param("a number", None, lambda v: v is None or is_number()(v),
                             "what replaces them (left out: the limit itself)"),
    }

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        replacement = self.value if self.replacement is None else self.replacement
        out: dict[str, np.ndarray] = {}
        coded = 0
        for name in self.columns:
            x = numbers(frame, name, self.key)
            with np.errstate(invalid="ignore"):
                beyond = (x > self.value) if self.side > 0 else (x < self.value)
            x[beyond] = replacement
            coded += int(beyond.sum())
            out[name] = x
        return Outcome(out, {f"{self.key}d": coded})
