"""Top coding: values above a limit replaced (sdcMicro's ``topBotCoding``, kind "top")."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._native import CODING_TYPES, code_values
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

    def _fill(self) -> Any:
        replacement = self.values["replacement"]
        return self.values["value"] if replacement is None else replacement

    def _beyond(self, x: np.ndarray, limit: Any) -> np.ndarray:
        # a missing cell (NaN) is beyond no limit: numpy compares it without a warning
        return np.greater(x, limit) if self.side > 0 else np.less(x, limit)

    def apply_column(self, x: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        beyond = self._beyond(x, self.values["value"])
        x[beyond] = self._fill()
        return x, {self.coded: int(np.count_nonzero(beyond))}

    def code_column(self, old: np.ndarray) -> tuple[np.ndarray | None, int, dict[str, Any]] | None:
        limit, fill = self.values["value"], self._fill()
        if old.dtype == np.float64:
            new, count, changed = code_values(old, limit, fill, self.side)
            return (new if count else None), changed, {self.coded: count}
        if old.dtype.kind not in "iu":
            return None
        info = np.iinfo(old.dtype)
        if not float(fill).is_integer() or not info.min <= fill <= info.max:
            return None  # a fraction or a number the type cannot hold: the column becomes float64
        # a whole number is beyond the limit exactly when it is beyond the limit's whole part on
        # the near side, compared in integers: exact past 2**53, where a float is not
        limit = math.floor(limit) if self.side > 0 else math.ceil(limit)
        fill = int(fill)
        if old.dtype in CODING_TYPES and info.min <= limit <= info.max:
            new, count, changed = code_values(old, limit, fill, self.side)
            return (new if count else None), changed, {self.coded: count}
        # int32, uint8, ... (or a limit past int64's range): numpy's passes
        beyond = self._beyond(old, limit)
        count = int(np.count_nonzero(beyond))
        if not count:
            return None, 0, {self.coded: count}
        new = old.copy()
        new[beyond] = fill
        # a cell beyond the limit that already held the replacement is not changed; only a
        # replacement itself beyond the limit can be such a cell
        same = int(np.count_nonzero(old[beyond] == fill)) if self._beyond(np.array(fill), limit) else 0
        return new, count - same, {self.coded: count}
