"""beta-likeness, basic and enhanced: no class raises the share of a sensitive value by more than
beta relative to the table.

Definition: Cao and Karras, "Publishing microdata with a robust privacy guarantee" (VLDB 2012).
With p(s) the share of value s in the table and q(s) in a class, the relative gain is
``(q(s) - p(s)) / p(s)``; for every class and every s with q(s) > p(s):

- basic: gain <= beta;
- enhanced: gain <= min(beta, -ln p(s)) (a rare value may gain less than a common one).

ARX ``criteria/BasicBLikeness.java`` and ``EnhancedBLikeness.java`` check the same (monotone
under generalization, not under suppression). pycanon ``anonymity.basic_beta_likeness`` returns
the largest gain (a table passes basic beta-likeness exactly when it is <= beta); its
``enhanced_beta_likeness`` returns ``max_s min(largest gain, -ln p(s))``, which is not a bound
the definition checks, so the enhanced variant is tested against the definition and, where
``beta <= -ln p(s)`` for every s (then it is the basic one), against pycanon's basic figure.

Shares are over the present values of the class and of the table (a missing value is no value).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..exceptions import ParameterError
from ._model import TOLERANCE, ClassStats, PrivacyModel, number, share_floor, spec_table
from .delta_disclosure import shares

VARIANTS = ("basic", "enhanced")


@dataclass(frozen=True)
class BetaLikeness(PrivacyModel):
    """The relative gain of every sensitive value in a class is at most ``beta`` (``variant``
    "enhanced": at most ``min(beta, -ln p(s))``).

    Attributes
    ----------
    beta : float
        The largest relative gain ``(q(s) - p(s)) / p(s)`` of a value's share.
    variant : str
        "basic" or "enhanced".
    column : str or None
        The sensitive column it protects (None: every column with the ``sensitive`` role).
    """

    beta: float
    variant: str = "basic"

    key = "beta"
    example = ('beta = { value = 1.0, variant = "basic" }', 'beta-likeness ("basic" or "enhanced")')
    monotone_generalization = True
    reads_distribution = True

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        known, present, table = shares(stats)
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = (known / np.maximum(present, 1)[:, None] - table) / table
        over = (known > 0) & (gain > self._bound(table) + TOLERANCE)
        return ~over.any(axis=1)

    def split_floor(self, stats: ClassStats) -> np.ndarray:
        known, _, table = shares(stats)
        # gain <= bound is share <= table * (1 + bound): a bound on the share, as alpha's
        return share_floor(known, table * (1.0 + self._bound(table) + TOLERANCE))

    def _bound(self, table: np.ndarray) -> np.ndarray:
        """The largest gain of each value: beta, or min(beta, -ln p(s)) for the enhanced variant."""
        bound = np.full(table.shape, self.beta)
        if self.variant == "enhanced":
            with np.errstate(divide="ignore"):
                bound = np.minimum(bound, -np.log(table))
        return bound

    def describe(self) -> str:
        return f"{self.variant} {self.beta:g}-likeness {self._where()}"

    @classmethod
    def from_spec(cls, value: Any, column: str | None = None, *,
                  privacy: Mapping[str, Any] | None = None) -> BetaLikeness:
        if not isinstance(value, Mapping):
            value = {"value": value}
        entries, column = spec_table("beta", value, ("value", "variant"), column)
        beta = number("beta", entries.get("value"), "a positive number (the largest relative gain of a sensitive "
                      "value's share in a class)", low=0)
        variant = entries.get("variant", "basic")
        if variant not in VARIANTS:
            raise ParameterError(f"beta.variant must be \"basic\" or \"enhanced\"; got {variant!r}")
        return cls(beta=beta, variant=variant, column=column)
