"""A toy privacy model in one file: importing it registers it, with no other edit anywhere.

``max_class_size = N``: no published class holds more than N rows (a bound no real curator
asks for, chosen because nothing else in incrowd computes it: a command that meets it can only
have reached it through the model)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from incrowd.exceptions import ParameterError
from incrowd.privacy import ClassStats, PrivacyModel, register_model


@register_model
@dataclass(frozen=True)
class MaxClassSize(PrivacyModel):
    """No class holds more than ``size`` rows."""

    size: int

    key = "max_class_size"
    monotone_generalization = False
    monotone_suppression = True
    needs_sensitive = False

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        return np.asarray(stats.sizes) <= self.size

    def describe(self) -> str:
        return f"classes of at most {self.size} rows"

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> MaxClassSize:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(f"max_class_size must be a whole number of rows >= 1; got {value!r}")
        return cls(size=value)
