"""Average re-identification risk: the release's mean prosecutor risk stays below a bound.

Definition: ARX ``criteria/AverageReidentificationRisk.java`` (its first form, a threshold
alone): a record's prosecutor risk is 1 / the size of its class, and their mean over the
release's records is ``classes / records`` (1 / the average class size). A global model: no one
class fails, the release does. Suppressed records count nowhere, as in ARX (which takes them
and fully generalized records out of the class distribution): ``publish`` leaves them out of
the release, so the check counts the rows released. A release with no row passes, as in ARX.
Monotone under generalization and under suppression (ARX's flags): merging two classes lowers
classes per record, and so does suppressing a class no larger than the average class.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._model import TOLERANCE, ClassStats, PrivacyModel, number, spec_table


def average_risk(stats: ClassStats) -> float:
    """``classes / records`` of a release (0 for one with no row)."""
    rows = int(stats.sizes.sum())
    return stats.n_classes / rows if rows else 0.0


@dataclass(frozen=True)
class AverageRisk(PrivacyModel):
    """The release's average prosecutor risk, ``classes / records``, is at most ``value``.

    Attributes
    ----------
    value : float
        The bound, in (0, 1].
    """

    value: float

    key = "max_average_risk"
    monotone_generalization = True
    monotone_suppression = True
    needs_sensitive = False

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        return np.ones(stats.n_classes, dtype=bool)

    def release_ok(self, stats: ClassStats) -> bool:
        return average_risk(stats) <= self.value + TOLERANCE

    def release_figure(self, stats: ClassStats) -> str:
        return (f"average re-identification risk {average_risk(stats):.6g} > {self.value:g} ({stats.n_classes} "
                f"classes of {int(stats.sizes.sum())} rows)")

    def describe(self) -> str:
        return f"within average re-identification risk {self.value:g}"

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> AverageRisk:
        entries, _ = spec_table("max_average_risk", value, ("value",), None)
        bound = number("max_average_risk", entries.get("value"), "a number in (0, 1] (classes per released record)",
                       low=0, high=1, high_open=False)
        return cls(value=bound)
