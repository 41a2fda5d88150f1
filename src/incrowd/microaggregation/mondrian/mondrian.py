"""Mondrian, Mondrian V and Mondrian V2D: median splits, O(n d log n) (Thaeter & Reischuk (2021), section 4).

LeFevre et al.'s Mondrian (Thaeter & Reischuk (2021), Algorithm 4) turned into microaggregation: the data are
cut recursively at the median of one direction, and the final parts are the groups. The three
estimators differ only in how a part chooses its direction:

* :class:`Mondrian`: the attribute of widest range (max - min), LeFevre's rule;
* :class:`MondrianV`: the attribute of largest variance;
* :class:`MondrianV2D` (Algorithm 5): largest variance over the d attributes and the d(d-1)
  diagonals x_a + x_b and x_a - x_b (a < b), i.e. hyperplanes at 45 and 315 degrees.

All work on the standardized quasi-identifiers (mean 0, variance 1), where information loss is
measured too. The precise rules, chosen because together they reproduce every cell of the
Mondrian rows of Thaeter & Reischuk's (2021) Table 6 at its two decimals (``docs/reproduction.md``, section
"mondrian", has the evidence and the variants that do not):

**When a part is split.** By default a part of m rows is split while m >= 2k, so every group
has k..2k-1 rows, as the paper's prose says and as in every method of the MDAV family (an
optimal k-partition never needs a group of 2k or more). ``split_2k=False`` splits only parts of
more than 2k rows (groups of k..2k): that is the rule Thaeter & Reischuk's (2021) Table 6 was computed with. Its
values repeat in exactly that pattern (Adult: k = 3, 4, 5 equal and k = 7, 10 equal; Credit
Card: k = 2, 3 and k = 4, 5 equal), and only ``split_2k=False`` reproduces them; the default
loses less information (Adult, Mondrian V, k = 3: 0.24 % instead of the published 0.41 %).

**Where a part is cut.** By position, not by value: the left part gets the floor(m/2) rows that
come first in the part's order, the right part the other ceil(m/2). So both parts always have
>= k rows, a cut is always allowed when m is large enough, and the direction is never changed
for lack of an allowed cut (no "next best direction" is needed). Cutting by value, which keeps
rows equal at the median on one side (LeFevre's strict Mondrian, or the literal ``x <= median``
of Algorithm 4), misses Table 6 widely on Adult, whose 48,842 rows hold only 9,953 distinct
(age, education-num, hours-per-week) triples: it leaves many parts unsplittable or cuts them
unevenly.

**Ties at the median.** The part's order is the projection on the chosen direction, ties broken
by the order the part had in its parent, and the root's order is the row order. Equivalently:
ties are broken by the projection of the parent's cut, then the grandparent's, ..., then by row
index. This is what a stable sort of each part by its projection gives (e.g. Java's
``Collections.sort``), and it keeps rows that are close in the earlier cut directions together.
It matters a lot with duplicates: breaking ties by row index alone gives 30-60 % higher losses
on Adult (0.36 % instead of 0.25 % for Mondrian at k = 2); on Credit Card it is 2-6 % higher.

**The V2D score.** A diagonal direction is scored by the variance of x_a +- x_b itself, which is
twice the variance along the unit vector (e_a +- e_b)/sqrt(2): diagonals are favoured over axes
by a factor 2. The paper's text puts a 1/sqrt(2) prefactor on the diagonals "to measure
variances in an orthonormal basis", but only the unnormalized score reproduces Table 6 (Credit
Card: 15.81 % at k = 2 as published; the unit-vector score gives 17.84 %). ``diagonals="unit"``
selects the unit-vector score. The cut position does not depend on this choice.

Variance means the sum of squared deviations from the part's mean, summed over the part's rows
in row order; ties between directions go to the first (attributes in column order, then pairs
a < b in lexicographic order, "+" before "-"). Group ids are dense, in depth-first order with
the lower side first. Deterministic: ``random_state`` has no effect. The median is found by an
O(m) selection, so a run costs O(n d log n) for Mondrian and Mondrian V and O(n d^2 log n) for
Mondrian V2D (numba kernel in ``_mondrian_kernel``).
"""

from __future__ import annotations

import numpy as np

from ..._runtime import compiled_or_cached
from ...exceptions import ParameterError
from .._base import MicroaggregationEstimator
from . import _mondrian_plain
from ._mondrian_kernel import RULE_RANGE, RULE_V2D, RULE_VARIANCE, mondrian_subtree_labels

_DIAGONALS = ("sum", "unit")

#: up to this much work (rows x (directions + 100)) the numpy twin cuts in about 0.1 s (Census's
#: 1,080 rows in 169 V2D directions: 0.03 s), while the Mondrian kernels compile for about 3 s on
#: a machine's first use: until they are compiled or cached, data this small take the twin
PLAIN_WORK = 1_500_000


def cut_labels(Z, k, rule, unit_diagonals, split_2k, leaf_max, ancestors):
    """The parts of ``_mondrian_kernel.mondrian_subtree_labels``, by its numpy twin on a machine
    where the kernel is not compiled yet and the data are small (see ``PLAIN_WORK``), else by the
    kernel. Both give the same parts, numbered alike."""
    n, d = Z.shape
    directions = d * d if rule == RULE_V2D else d
    if n * (directions + 100) <= PLAIN_WORK and not compiled_or_cached(mondrian_subtree_labels):
        return _mondrian_plain.mondrian_subtree_labels(Z, k, rule, unit_diagonals, split_2k, leaf_max, ancestors)
    return mondrian_subtree_labels(Z, k, rule, unit_diagonals, split_2k, leaf_max, ancestors)


def _check_diagonals(value) -> None:
    if not isinstance(value, str) or value not in _DIAGONALS:
        raise ParameterError(
            f"diagonals must be one of {', '.join(repr(v) for v in _DIAGONALS)}; got {value!r}"
        )


def _check_split_2k(value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"split_2k must be True or False; got {value!r}")


def _mondrian(Z, k, rule, unit_diagonals, split_2k):
    """``mondrian_labels`` through the specialization MONA calls (leaf limit and ancestors as
    run-time values): Mondrian and MONA then share one compiled kernel per machine, where the
    wrapper's omitted defaults would compile a second one on a first run)."""
    return cut_labels(Z, k, rule, bool(unit_diagonals), bool(split_2k), 0, np.empty(0, np.int64))


class _MondrianBase(MicroaggregationEstimator):
    _rule = RULE_VARIANCE

    def __init__(self, k: int = 5, *, split_2k: bool = True, random_state=None):
        super().__init__(k, random_state=random_state)
        self.split_2k = split_2k

    def _check_params(self) -> None:
        _check_split_2k(self.split_2k)

    def _labels(self, Z, k, rng):
        return _mondrian(Z, k, self._rule, False, bool(self.split_2k))


class Mondrian(_MondrianBase):
    """Mondrian (LeFevre et al.): median cuts on the attribute of widest range, O(n d log n).

    Thaeter & Reischuk (2021), Algorithm 4: a part is cut at the median of the attribute of widest range
    (max - min), recursively, while it has at least 2k rows; the final parts are the groups, of
    k..2k-1 rows. ``split_2k=False``: leave parts of exactly 2k rows whole (groups of k..2k
    rows), the rule of the paper's Table 6.
    See the module docstring for how ties at the median are broken and why. Attributes set by
    ``fit``: ``labels_``, ``n_groups_``, ``group_sizes_``, ``centroids_`` (original units),
    ``information_loss_`` (SSE/SST on standardized data), ``seconds_`` (the algorithm alone),
    ``compile_seconds_`` (numba compiling or loading its kernels during the fit).

    Parameters
    ----------
    k : int, default 5
        The smallest group size: every group has at least k rows.
    split_2k : bool, default True
        Cut parts of exactly 2k rows too (groups of k..2k-1 rows); False leaves them whole
        (groups of k..2k rows, the rule of Thaeter & Reischuk's Table 6).
    random_state : None
        Accepted for a uniform interface; the method is deterministic and ignores it.
    """

    _rule = RULE_RANGE


class MondrianV(_MondrianBase):
    """Mondrian V: median cuts on the attribute of largest variance, O(n d log n).

    Thaeter & Reischuk (2021), section 4: Mondrian with LeFevre's widest-range rule replaced by the largest
    variance (sum of squared deviations from the part's mean). Groups have k..2k-1 rows;
    ``split_2k=False`` leaves parts of exactly 2k rows whole (k..2k, the rule of the paper's
    Table 6). See the module docstring for the exact rules. Deterministic.

    Parameters
    ----------
    k, split_2k, random_state
        As in :class:`Mondrian`.
    """

    _rule = RULE_VARIANCE


class MondrianV2D(_MondrianBase):
    """Mondrian V2D: Mondrian V over the attributes and the diagonals x_a +- x_b, O(n d^2 log n).

    Thaeter & Reischuk (2021), Algorithm 5: the candidate directions are the d attributes and the d(d-1)
    diagonals x_a + x_b, x_a - x_b (a < b). ``diagonals``: ``"sum"`` (default) scores a
    diagonal by the variance of x_a +- x_b, which reproduces Thaeter & Reischuk's (2021) Table 6; ``"unit"`` by
    the variance along the unit vector (e_a +- e_b)/sqrt(2), half as much, as the paper's text
    describes. ``split_2k=False``: leave parts of exactly 2k rows whole (Table 6's rule).
    Deterministic.

    Parameters
    ----------
    diagonals : {"sum", "unit"}, default "sum"
        How a diagonal direction is scored: by the variance of x_a +- x_b (``"sum"``, which
        reproduces Thaeter & Reischuk's Table 6) or along the unit vector (``"unit"``).
    k, split_2k, random_state
        As in :class:`Mondrian`.
    """

    _rule = RULE_V2D

    def __init__(
        self, k: int = 5, *, diagonals: str = "sum", split_2k: bool = True, random_state=None
    ):
        super().__init__(k, split_2k=split_2k, random_state=random_state)
        self.diagonals = diagonals

    def _check_params(self) -> None:
        _check_diagonals(self.diagonals)
        _check_split_2k(self.split_2k)

    def _labels(self, Z, k, rng):
        return _mondrian(Z, k, self._rule, self.diagonals == "unit", bool(self.split_2k))
