"""Average re-identification risk: the release's mean prosecutor risk stays below a bound.

Definition: ARX ``criteria/AverageReidentificationRisk.java``: a record's prosecutor risk is
1 / the size of its class, and their mean over the release's records is ``classes / records``
(1 / the average class size). ARX's second form adds a highest risk h and a share of records at
risk r: the records in classes smaller than ARX's size threshold for h
(``ParameterTranslation.getSizeThreshold``: the floor of 1 / h, one more when 1 / floor exceeds
h by 1 % of h or more) make at most the share r of the release. A global model: no one
class fails, the release does. Suppressed records count nowhere, as in ARX (which takes them
and fully generalized records out of the class distribution): ``publish`` leaves them out of
the release, so the check counts the rows released. A release with no row passes, as in ARX.
Monotone under generalization and under suppression (ARX's flags): merging two classes lowers
classes per record, and so does suppressing a class no larger than the average class.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import ParameterError
from ._model import TOLERANCE, ClassStats, PrivacyModel, number, spec_table


def size_threshold(highest_risk: float) -> int:
    """ARX's ``ParameterTranslation.getSizeThreshold``: the class size whose risk is ``highest_risk``,
    rounded down unless that overshoots the risk by 1 % of it or more."""
    size = 1.0 / highest_risk
    floor = math.floor(size)
    if 1.0 / floor - 1.0 / size >= 0.01 * highest_risk:
        floor += 1
    return int(floor)


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
    highest_risk : float or None
        ARX's second form: the risk above which a record is at risk, in (0, 1] (with
        ``records_at_risk``).
    records_at_risk : float or None
        The largest share of the release's records at risk, in [0, 1].
    column : str or None
        Unused: the average risk reads no sensitive column.
    """

    value: float
    highest_risk: float | None = None
    records_at_risk: float | None = None

    key = "max_average_risk"
    example = ('max_average_risk = 0.05', "the release's mean re-identification risk")
    monotone_generalization = True
    monotone_suppression = True
    needs_sensitive = False

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        return np.ones(stats.n_classes, dtype=bool)

    def at_risk(self, stats: ClassStats) -> float:
        """The share of the release's records in classes smaller than the size threshold of
        ``highest_risk`` (0 without it, or without a row)."""
        rows = int(stats.sizes.sum())
        if self.highest_risk is None or not rows:
            return 0.0
        return float(stats.sizes[stats.sizes < size_threshold(self.highest_risk)].sum()) / rows

    def release_ok(self, stats: ClassStats) -> bool:
        if average_risk(stats) > self.value + TOLERANCE:
            return False
        return self.records_at_risk is None or self.at_risk(stats) <= self.records_at_risk + TOLERANCE

    def release_figure(self, stats: ClassStats) -> str:
        if average_risk(stats) > self.value + TOLERANCE or self.highest_risk is None:
            return (f"average re-identification risk {average_risk(stats):.6g} > {self.value:g} ({stats.n_classes} "
                    f"classes of {int(stats.sizes.sum())} rows)")
        return (f"a share {self.at_risk(stats):.6g} of the records is in classes of fewer than "
                f"{size_threshold(self.highest_risk)} rows (risk above {self.highest_risk:g}) > {self.records_at_risk:g}")

    def describe(self) -> str:
        if self.highest_risk is None:
            return f"within average re-identification risk {self.value:g}"
        return (f"within average re-identification risk {self.value:g}, at most {self.records_at_risk:g} of the "
                f"records above risk {self.highest_risk:g}")

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> AverageRisk:
        entries, _ = spec_table("max_average_risk", value, ("value", "highest_risk", "records_at_risk"), None)
        bound = number("max_average_risk", entries.get("value"), "a number in (0, 1] (classes per released record)",
                       low=0, high=1, high_open=False)
        if ("highest_risk" in entries) != ("records_at_risk" in entries):
            raise ParameterError("max_average_risk's highest_risk and records_at_risk go together (ARX's second form)")
        if "highest_risk" not in entries:
            return cls(value=bound)
        highest = number("max_average_risk's highest_risk", entries["highest_risk"], "a number in (0, 1] (the risk "
                         "above which a record is at risk)", low=0, high=1, high_open=False)
        share = number("max_average_risk's records_at_risk", entries["records_at_risk"], "a number in [0, 1] (the "
                       "largest share of records at risk)", low=0, low_open=False, high=1, high_open=False)
        return cls(value=bound, highest_risk=highest, records_at_risk=share)
