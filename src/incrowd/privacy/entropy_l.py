"""Entropy l-diversity: the entropy of every class's sensitive values is at least log l.

Definition: Machanavajjhala et al., "l-Diversity" (ICDE 2006): ``-sum_s p(s) ln p(s) >= ln l``
with p(s) the share of value s in the class. ARX ``criteria/EntropyLDiversity.java`` with its
default Shannon estimator checks the same inequality as ``sum_s n_s ln n_s <= n (ln n - ln l)``
(monotone under generalization, not under suppression). pycanon
``anonymity.entropy_l_diversity`` returns ``int(min_c exp(H_c))``, the largest integer l the
table meets: for an integer l a table passes exactly when that figure is >= l.

The distribution is that of the class's present values: a missing value is no value, so a class
whose values are all missing is not diverse. The comparison absorbs :data:`TOLERANCE` of rounding
(a class spread evenly over l values has entropy ln l exactly and passes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._model import TOLERANCE, ClassStats, PrivacyModel, SpecNumber


def class_entropy(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy (natural log) of each row of ``counts``; 0 for a row without counts."""
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = counts / n[:, None]
        terms = np.where(counts > 0, share * np.log(np.where(counts > 0, share, 1.0)), 0.0)
    return -terms.sum(axis=1)


@dataclass(frozen=True)
class EntropyL(PrivacyModel):
    """The entropy of every class's present sensitive values is at least ``ln l``.

    Attributes
    ----------
    l : float
        The class entropy (natural log) must reach ``ln l``; l > 1.
    column : str or None
        The sensitive column it protects (None: every column with the ``sensitive`` role).
    """

    l: float

    key = "entropy_l"
    example = ('entropy_l = 2', "entropy l-diversity: exp(entropy) of a class's sensitive values")
    spec_number = SpecNumber("l", "a number > 1 (the class entropy must reach ln l)", low=1)
    monotone_generalization = True

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        known = stats.known()
        return (known.sum(axis=1) > 0) & (class_entropy(known) >= np.log(self.l) - TOLERANCE)

    def describe(self) -> str:
        return f"entropy {self.l:g}-diverse {self._where()}"
