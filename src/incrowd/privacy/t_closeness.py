"""t-closeness: every class's sensitive distribution lies within earth mover's distance t of the
table's.

Definition: Li, Li and Venkatasubramanian, "t-Closeness" (ICDE 2007), with ARX's two ground
distances (``criteria/EqualDistanceTCloseness.java``, ``OrderedDistanceTCloseness.java``:
monotone under generalization, not under suppression): the ordered distance for numeric and
ordinal values (their order), the equal distance for nominal ones. The distance is computed
exactly as :mod:`incrowd.privacy._emd` does for ``publish`` (a missing value is one category, after every
present value). pycanon ``anonymity.t_closeness`` returns the largest distance (ordered for a
numeric column, equal for text): a table passes exactly when it is <= t.

With a ``hierarchy`` of the sensitive values, the hierarchical distance of ARX
``criteria/HierarchicalDistanceTCloseness.java`` (Li et al., section 4.2): two values are
``level(their lowest common ancestor) / H`` apart (H the hierarchy's height) and the distance is
``sum over inner nodes N of level(N)/H * min(pos(N), neg(N))``, where ``pos`` and ``neg`` sum the
positive and negative surpluses ``p_i - q_i`` its children carry up. A missing value hangs from
the root (it is as far as can be from every value).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError
from ..values import sensitive_keys
from ._emd import dense_distances, exceeds
from ._model import TOLERANCE, ClassStats, PrivacyModel, SpecNumber

_ROOT = ("\0root",)


def _node_ids(hierarchy, values: tuple, missing: bool, column: str | None) -> tuple[list[np.ndarray], int]:
    """Each code's node at levels 1..H (one int array per level) and the height H. A node is its
    whole path up, so one label under two parents is two nodes; a top level of several values
    gets a root above it; a missing value hangs from the root."""
    rows = [tuple(row) for row in hierarchy]
    widths = {len(row) for row in rows}
    if not rows:
        raise ParameterError("the hierarchy of t has no rows; give one row per sensitive value (the value, then "
                             "its ancestors)")
    if len(widths) != 1 or min(widths) < 2:
        raise ParameterError("the hierarchy of t must give every value with the same number of levels above it "
                             f"(at least one); got rows of {sorted(widths)} column(s)")
    keys, _ = sensitive_keys(pd.Series([row[0] for row in rows], dtype=object))
    up = {key: tuple(str(v) for v in row[1:]) for key, row in zip(keys.tolist(), rows)}
    extra_root = len({path[-1] for path in up.values()}) > 1
    height = widths.pop() - 1 + int(extra_root)
    paths = []
    for value in values:
        if value not in up:
            where = f"column {column!r}" if column else "the sensitive column"
            raise DataError(f"{where}: value {value!r} is not in the hierarchy of t; add it there")
        full = up[value]
        paths.append([full[level - 1:] for level in range(1, height)] + [_ROOT])
    if missing:
        paths.append([("\0missing", str(level)) for level in range(1, height)] + [_ROOT])
    ids = []
    for level in range(height):
        codes, _ = pd.factorize(pd.Series([path[level] for path in paths], dtype=object))
        ids.append(np.asarray(codes, dtype=np.int64))
    return ids, height


def hierarchical_distances(counts: np.ndarray, reference: np.ndarray, ids: list[np.ndarray],
                           height: int) -> np.ndarray:
    """Hierarchical earth mover's distance of each row of ``counts`` to ``reference`` (counts
    over the same codes; ``ids[L - 1][code]`` is the code's node at level L)."""
    counts = np.asarray(counts, dtype=np.int64)
    reference = np.asarray(reference, dtype=np.int64)
    if counts.shape[0] == 0 or reference.size == 0:
        return np.zeros(counts.shape[0], dtype=np.float64)
    p_total = int(reference.sum())
    q_total = counts.sum(axis=1)
    extra = reference[None, :] * q_total[:, None] - counts * p_total  # p_i - q_i, scaled by P * Q
    cost = np.zeros(counts.shape[0], dtype=np.float64)
    below = np.arange(reference.size, dtype=np.int64)  # each code's unit one level down (leaves first)
    for level in range(1, height + 1):
        above = ids[level - 1]
        child_of = np.zeros((int(below.max()) + 1, int(above.max()) + 1), dtype=np.int64)
        child_of[below, above] = 1
        pos = np.maximum(extra, 0) @ child_of
        neg = np.maximum(-extra, 0) @ child_of
        cost += level / height * np.minimum(pos, neg).sum(axis=1)
        extra = extra @ child_of
        below = above
    out = np.zeros(counts.shape[0], dtype=np.float64)
    nonempty = q_total > 0
    out[nonempty] = cost[nonempty] / (float(p_total) * q_total[nonempty].astype(np.float64))
    return out


@dataclass(frozen=True)
class TCloseness(PrivacyModel):
    """Every class lies within earth mover's distance ``t`` of the table's distribution (ordered
    or equal distance as the column's values are, see :func:`incrowd.values.sensitive_codes`).

    Attributes
    ----------
    t : float
        The largest distance of a class, in (0, 1].
    hierarchy : tuple of tuple, optional
        The sensitive values' hierarchy, one row per value (the value, then its ancestors up to
        the top, as a hierarchy file's rows): the hierarchical distance instead.
    column : str or None
        The sensitive column it protects (None: every column with the ``sensitive`` role).
    """

    t: float
    hierarchy: tuple[tuple, ...] | None = None

    key = "t"
    example = ('t = 0.3', "t-closeness: earth mover's distance per class, in (0, 1]")
    spec_number = SpecNumber("t", "a number in (0, 1] (earth mover's distance)", low=0, high=1, high_open=False)
    lever = "raise"
    monotone_generalization = True
    reads_distribution = True
    merges = True

    def distances(self, stats: ClassStats) -> np.ndarray:
        """The distance of each class to the table's distribution.

        Parameters
        ----------
        stats : ClassStats
            The classes and the counts of the sensitive column.

        Returns
        -------
        numpy.ndarray
            One distance per class, in [0, 1].
        """
        counts = stats._need(stats.counts)
        reference = stats._need(stats.table_counts).astype(np.int64)
        if self.hierarchy is not None:
            ids, height = _node_ids(self.hierarchy, stats.values, stats.missing, stats.column or self.column)
            return hierarchical_distances(counts, reference, ids, height)
        used = reference > 0  # a code the reference never takes is not one of its values
        return dense_distances(counts[:, used], reference[used], stats.ordered)

    def classes_ok(self, stats: ClassStats) -> np.ndarray:
        return ~exceeds(self.distances(stats), self.t)

    def merge_share(self, distinct: np.ndarray, distances: np.ndarray, reach: float) -> np.ndarray:
        # a class is the mixture of its parts and the distance is convex, so d(C) <= sum |P|/|C|
        # d(P): a passing part lies within t, a failing one within reach, so the failing parts
        # hold at least (d(C) - t) / (reach - t) of the class
        limit = self.t + TOLERANCE
        room = reach - limit
        if room <= 0:  # no class can fail t
            return np.zeros(distances.size)
        return np.clip((distances - limit) / room, 0.0, 1.0)

    def merge_gap(self, distinct: np.ndarray, distances: np.ndarray) -> np.ndarray:
        if self.hierarchy is not None:
            raise ParameterError("t with a hierarchy of the sensitive values is met by the generalization search, "
                                 "not by merging groups")
        return distances - self.t

    def describe(self) -> str:
        how = " (hierarchical distance)" if self.hierarchy is not None else ""
        return f"{self.t:g}-close{how} {self._where()}"
