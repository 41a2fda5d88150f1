"""delta-disclosure privacy: no class shifts the share of a sensitive value by a factor of e^delta.

Definition: Brickell and Shmatikov, "The cost of privacy" (KDD 2008): for every class and every
sensitive value s it holds, ``|ln(p_class(s) / p_table(s))| < delta``. A value the class does
not hold is skipped, as in ARX ``criteria/DDisclosurePrivacy.java`` and pycanon
``anonymity.delta_disclosure`` (which returns the largest such logarithm: a table passes exactly
when it is < delta). ARX takes the logarithm to base 2, the paper and pycanon the natural
logarithm, which this model uses: ARX's delta d is this model's d * ln 2.

Shares are over the present values of the class and of the table (a missing value is no value).
Not monotone: a merged class may hold a value neither part showed far from its table share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._model import ClassStats, PrivacyModel, SpecNumber, share_floor


def shares(stats: ClassStats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(class counts, class present totals, table shares)`` of the present values."""
    known = stats.known().astype(np.float64)
    table = stats.table_known().astype(np.float64)
    total = table.sum()
    return known, known.sum(axis=1), table / total if total > 0 else table


@dataclass(frozen=True)
class DeltaDisclosure(PrivacyModel):
    """``|ln(p_class(s) / p_table(s))| < delta`` for every value s a class holds.

    Attributes
    ----------
    delta : float
        The bound on the natural logarithm of a value's share in a class over its share in the table.
    column : str or None
        The sensitive column it protects (None: every column with the ``sensitive`` role).
    """

    delta: float

    key = "delta_disclosure"
    example = ('delta_disclosure = 1.0', "no class shifts a sensitive value's share by a factor above e^delta")
    spec_number = SpecNumber("delta", "a positive number (the largest |ln| of a value's share in a class over its "
                             "share in the table)", low=0)
    reads_distribution = True

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        known, present, table = shares(stats)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = known / np.maximum(present, 1)[:, None] / table
            far = np.where(known > 0, np.abs(np.log(np.where(known > 0, ratio, 1.0))), 0.0)
        return np.asarray(~(far >= self.delta).any(axis=1), dtype=bool)

    def split_floor(self, stats: ClassStats) -> np.ndarray:
        known, _, table = shares(stats)
        # only a share too high bounds the parts: a share too low can sit in one part while the
        # others hold none of the value, which the model does not count
        return share_floor(known, table * np.exp(self.delta) * (1.0 + 1e-12))

    def describe(self) -> str:
        return f"{self.delta:g}-disclosure private {self._where()}"
