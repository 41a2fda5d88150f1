"""MONA_rho and MONA 2D_rho (Thaeter & Reischuk (2021), section 5, Algorithm 6): Mondrian V cuts, then ONA*.

The fast method cuts the data into parts, the good one clusters each part:

* a part of more than n^rho rows (n: all rows) is cut at the median as by Mondrian V (MONA) or
  Mondrian V2D (MONA 2D), with the same direction, cut and tie rules (see :mod:`.mondrian`);
* a part of at most n^rho rows is clustered by ONA* on its own;
* a part that Mondrian would not cut any more (fewer than 2k rows; with ``split_2k=False``,
  at most 2k) is one group, as in Mondrian, when n^rho is smaller than that.

So MONA_0 is Mondrian V (n^0 = 1 row: no part reaches ONA*) and MONA_1 is ONA* (the whole data
set is one part of n <= n^1 rows), exactly. The printed Algorithm 6 hands a part to ONA* when
|X| < n^rho, which would cut the root once even at rho = 1; the prose ("clusters of size larger
than n^rho are iteratively split") and the stated identity MONA_1 = ONA* need |X| <= n^rho.

ONA* sees a part's rows in ascending row order and the data standardized once, globally (a part
is not standardized again, so distances and the information loss are those of the whole data;
the rounding margin of ONA*'s decisions is the whole data's too).
The groups of part p come after those of the parts before it in Mondrian's depth-first order.
Runtime O(n d log n) for the cuts plus ONA* on n^(1-rho) parts of at most n^rho rows
(Thaeter & Reischuk (2021), Lemma 2: O(n^(1+rho) d) for 0 < rho <= 1).
"""

from __future__ import annotations

import math
import threading

import numba
import numpy as np

from ..._runtime import cancel as _cancel
from ..._runtime import run_on_threads
from .._base import MAX_ROUNDS, MicroaggregationEstimator, check_int, check_real
from ..ona._ona_kernel import sst_per_row
from ..ona._ona_star_fast import ona_star_best_labels
from ..ona.ona import use_tree_star
from ._mondrian_kernel import RULE_V2D, RULE_VARIANCE
from .mondrian import _check_diagonals, _check_split_2k, cut_labels


def split_limit(n_rows: int, rho: float) -> int:
    """The largest part size handed to ONA*: floor(n^rho), exact at rho = 0 and rho = 1."""
    if rho == 1.0:
        return n_rows
    return int(math.floor(n_rows**rho))


def mona_labels(Z, k, rule, rho, *, unit_diagonals=False, split_2k=True, max_rounds=100):
    """(labels, number of parts given to ONA*, most ONA* rounds in a part, all converged)."""
    return mona_part_labels(Z, k, rule, split_limit(Z.shape[0], rho), sst_per_row(Z),
                            unit_diagonals=unit_diagonals, split_2k=split_2k, max_rounds=max_rounds)


def mona_part_labels(Z, k, rule, limit, scale, *, unit_diagonals=False, split_2k=True, max_rounds=100,
                     ancestors=None, workers=None):
    """MONA on Z, which may be one part of a larger data set (:mod:`incrowd.distributed`):
    ``limit`` and ``scale`` (SST / n) are then the whole data's, and ``ancestors`` the direction
    ids of the cuts above the part, root first. ``workers``: threads that cluster parts side by
    side (default ``numba.get_num_threads()``). Returns what :func:`mona_labels` does."""
    n = Z.shape[0]
    path = np.empty(0, np.int64) if ancestors is None else np.asarray(ancestors, np.int64)
    parts = cut_labels(Z, k, rule, unit_diagonals, split_2k, limit, path)
    order = np.argsort(parts, kind="stable")  # rows by part, ascending row index inside
    bounds = np.searchsorted(parts[order], np.arange(parts.max() + 2))
    sizes = np.diff(bounds)
    # Parts Mondrian would still cut can only be here because they fit under n^rho; smaller
    # ones are one group either way (ONA* of fewer than 2k rows is a single cluster).
    clustered = np.flatnonzero((sizes <= limit) & (sizes >= 2 * k))
    labels = np.zeros(n, np.int64)  # each part's own group ids first
    results = _cluster_parts(Z, k, order, bounds, clustered, max_rounds, scale,
                             numba.get_num_threads() if workers is None else int(workers), labels)
    groups = np.ones(sizes.shape[0], np.int64)  # a part not given to ONA* is one group
    for p, (n_groups, _, _) in results.items():
        groups[p] = n_groups
    first = np.cumsum(groups) - groups  # part p's groups come after those of the parts before it
    labels[order] += np.repeat(first, sizes)
    most_rounds = max((r for _, r, _ in results.values()), default=0)
    converged = all(done for _, _, done in results.values())
    return labels, int(clustered.shape[0]), most_rounds, converged


def _cluster_parts(Z, k, order, bounds, clustered, max_rounds, scale, workers, labels) -> dict:
    """ONA* of each part in ``clustered``, its group ids written to the part's rows of
    ``labels``: returns {part: (groups, rounds, converged)}.

    With two parts or more and two workers or more, the parts are spread over the workers,
    largest first, each part's ONA* on one thread (:func:`incrowd._runtime._task_threads.run_on_threads`):
    the cores then never wait on one part's serial steps (its MDAV* start, dissolving and
    splitting), which a lone part's threads do. A lone part keeps the threads. Each part's
    groups depend only on its rows, so the result is the same either way. A cancel token
    (:mod:`incrowd._runtime._cancel`) stops the work between parts and ONA*'s rounds inside one; the
    progress is the share of parts done."""
    n_parts = int(clustered.shape[0])
    side_by_side = workers >= 2 and n_parts >= 2
    # largest first, so that no big part starts last while the other workers have run dry
    queue = clustered[np.argsort(-np.diff(bounds)[clustered], kind="stable")] if side_by_side else clustered
    results: dict = {}
    lock = threading.Lock()

    def one_part(i: int) -> None:
        p = int(queue[i])
        rows = order[bounds[p] : bounds[p + 1]]
        sub = np.ascontiguousarray(Z[rows])
        tree = use_tree_star(sub.shape[0], sub.shape[1], k)
        sub_labels, rounds, done = ona_star_best_labels(sub, k, max_rounds, tree, -1, scale, _cancel.stop_flag(),
                                                        not side_by_side)
        _cancel.check_cancelled()  # a cancel ends the rounds early; that partition is not kept
        labels[rows] = sub_labels
        with lock:
            results[p] = (int(sub_labels.max()) + 1, int(rounds), bool(done))
            _cancel.report_progress(len(results), n_parts)

    run_on_threads(one_part, n_parts, workers if side_by_side else 1)
    return results


class MONA(MicroaggregationEstimator):
    """MONA_rho: Mondrian V cuts parts of more than n^rho rows, ONA* clusters the rest.

    ``rho`` in [0, 1] (default 0.5) sets the trade-off: 0 is Mondrian V (O(n d log n)), 1 is
    ONA* (quadratic), in between the ONA* phase costs O(n^(1+rho) d). ``split_2k`` and the
    median-cut rules are those of :class:`MondrianV`; ``max_rounds`` caps ONA*'s rounds in each
    part. Deterministic: ``random_state`` has no effect.

    Speed: the parts go to numba's threads one at a time, largest first, each part's ONA* on one
    thread (a lone part takes all the threads); the groups do not depend on the thread count.

    Attributes set by ``fit`` besides those of every method: ``split_limit_`` (floor(n^rho), the
    largest part given to ONA*), ``n_parts_`` (parts clustered by ONA*), ``n_rounds_`` (most
    ONA* rounds in one part), ``converged_`` (every part's ONA* converged).

    Parameters
    ----------
    k : int, default 5
        The smallest group size: every group has at least k rows.
    rho : float, default 0.5
        In [0, 1]: parts of more than n^rho rows are cut by Mondrian V, the rest clustered by
        ONA*.
    split_2k : bool, default True
        Cut parts of exactly 2k rows too (groups of k..2k-1 rows); False leaves them whole
        (groups of k..2k rows, the rule of Thaeter & Reischuk's Table 6).
    max_rounds : int, default 100
        The most ONA* rounds in one part.
    random_state : None
        Accepted for a uniform interface; the method is deterministic and ignores it.
    """

    _rule = RULE_VARIANCE

    def __init__(
        self,
        k: int = 5,
        *,
        rho: float = 0.5,
        split_2k: bool = True,
        max_rounds: int = 100,
        random_state=None,
    ):
        super().__init__(k, random_state=random_state)
        self.rho = rho
        self.split_2k = split_2k
        self.max_rounds = max_rounds

    def _check_params(self) -> None:
        check_real(self.rho, "rho", 0.0, 1.0)
        _check_split_2k(self.split_2k)
        check_int(self.max_rounds, "max_rounds", 1, MAX_ROUNDS)

    def _unit_diagonals(self) -> bool:
        return False

    def _labels(self, Z, k, rng):
        labels, n_parts, rounds, converged = mona_labels(
            Z,
            k,
            self._rule,
            float(self.rho),
            unit_diagonals=self._unit_diagonals(),
            split_2k=bool(self.split_2k),
            max_rounds=int(self.max_rounds),
        )
        self.split_limit_ = split_limit(Z.shape[0], float(self.rho))
        self.n_parts_ = n_parts
        self.n_rounds_ = rounds
        self.converged_ = converged
        return labels


class MONA2D(MONA):
    """MONA 2D_rho: as :class:`MONA`, with the cuts of Mondrian V2D (axes and diagonals).

    ``diagonals`` as in :class:`MondrianV2D` (``"sum"``, the default, reproduces Table 6).
    MONA 2D_0 is Mondrian V2D and MONA 2D_1 is ONA*.

    Parameters
    ----------
    rho : float, default 0.5
        In [0, 1]: parts of more than n^rho rows are cut by Mondrian V2D, the rest clustered by
        ONA*.
    diagonals : {"sum", "unit"}, default "sum"
        As in :class:`MondrianV2D`.
    k, split_2k, max_rounds, random_state
        As in :class:`MONA`.
    """

    _rule = RULE_V2D

    def __init__(
        self,
        k: int = 5,
        *,
        rho: float = 0.5,
        diagonals: str = "sum",
        split_2k: bool = True,
        max_rounds: int = 100,
        random_state=None,
    ):
        super().__init__(
            k, rho=rho, split_2k=split_2k, max_rounds=max_rounds, random_state=random_state
        )
        self.diagonals = diagonals

    def _check_params(self) -> None:
        super()._check_params()
        _check_diagonals(self.diagonals)

    def _unit_diagonals(self) -> bool:
        return self.diagonals == "unit"
