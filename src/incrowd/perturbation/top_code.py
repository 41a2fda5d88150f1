"""Top coding: values above a limit replaced (sdcMicro's ``topBotCoding``, kind "top")."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import REQUIRED, Method, Param, is_number


class TopCode(Method):
    key = "top_code"
    sdcmicro = 'topBotCoding(kind = "top")'
    summary = "replaces the values above a limit"
    #: which side of the limit is replaced: values above it (+1) or below it (-1)
    side = 1
    #: its figure: how many values it replaced
    coded = "top_coded"
    params = {
        "value": Param("a number", REQUIRED, is_number(), "the limit: values beyond it are replaced"),
        "replacement": Param("a number", None, lambda v: v is None or is_number()(v),
                             "what replaces them (left out: the limit itself)"),
    }

    by_column = True

    def apply_column(self, x: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        limit, replacement = self.values["value"], self.values["replacement"]
        # a missing cell (NaN) is beyond no limit: numpy compares it without a warning
        beyond = np.greater(x, limit) if self.side > 0 else np.less(x, limit)
        x[beyond] = limit if replacement is None else replacement
        return x, {self.coded: int(np.count_nonzero(beyond))}
