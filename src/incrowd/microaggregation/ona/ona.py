"""ONA (after Soria-Comas et al. 2019) and ONA*: Thaeter & Reischuk (2021), Algorithms 2 and 3."""

from __future__ import annotations

import threading

import numba
import numpy as np

from ..._runtime import cancel as _cancel
from ..._runtime import run_on_threads
from .._base import MAX_ROUNDS, MAX_RUNS, MicroaggregationEstimator, check_int
from .._measures import sst
from ._ona_kernel import ona_one_run, sst_per_row
from ._ona_star_fast import ona_star_best_labels

# Nearest-centroid search: a k-d tree pays off once there are many clusters (on the benchmark
# files, EIA and Adult gain, the 1,000-row sets lose a little). Both searches return the same
# cluster, so this only changes speed.
_TREE_MIN_CLUSTERS = 800


def _use_tree(n_rows: int, k: int) -> bool:
    return n_rows // k >= _TREE_MIN_CLUSTERS


# ONA* asks for a full search only when a row's remembered neighbourhood no longer answers (see
# ``_ona_star_fast``); its scan is vectorized over the clusters and beats the tree from 5
# columns on, and its blocked passes run only without the tree.
_STAR_TREE_MAX_COLUMNS = 4


def use_tree_star(n_rows: int, n_columns: int, k: int) -> bool:
    """Whether ONA*'s kernel searches with the tree on a table this shape (MONA and compiling
    ahead ask the same)."""
    return _use_tree(n_rows, k) and n_columns <= _STAR_TREE_MAX_COLUMNS


class ONAStar(MicroaggregationEstimator):
    """ONA*: MDAV* followed by rounds of dissolving and cost-driven reassignment.

    1. Start from MDAV*; every cluster of >= 2k rows is replaced by MDAV+ of its rows, so no
       cluster has more than 2k - 1 rows.
    2. Round, phase 1: for each cluster C_i of exactly k rows, each member s is offered to the
       cluster with the closest centroid other than C_i; C_i is dissolved that way when this
       lowers the total SSE. A receiving cluster that reaches 2k rows is split by MDAV*.
    3. Round, phase 2: for each cluster C_i of more than k rows, repeatedly move the member
       whose move to its closest other centroid lowers the SSE the most (the actual change
       |C_i|/(|C_i|-1) ||s - c_i||^2 - |C_j|/(|C_j|+1) ||s - c_j||^2), until no move helps or
       C_i has k rows; a receiving cluster of 2k rows is split by MDAV*.
    4. Repeat until a round changes nothing, or ``max_rounds`` rounds have run (the paper has no
       cap; on the benchmark files ONA* converges in 3-9 rounds).

    Every change lowers the SSE, so the result is never worse than MDAV*, and every group has
    between k and 2k - 1 rows. Deterministic: ``random_state`` has no effect. The clusters form
    a list: a split cluster's first part keeps its place, the other part is appended; clusters
    are visited in list order and members in row order; ties go to the lowest cluster. A change
    counts only when it lowers the cost by more than 1e-10 of the compared costs plus SST/n
    (rounding noise between duplicate rows is not an improvement).

    Speed: the closest other centroid of a row is asked for over and over; each row remembers
    its few closest clusters and a bound on all the others, and a log of the clusters that
    changed since tells which remembered answers still hold, so most questions cost a handful of
    distances instead of one per cluster. The answers, and so the groups, are exactly those of a
    full search every time. Below 320 groups a plain scan of the centroids is as fast and is what
    runs. The remembering kernel compiles for over a minute on a machine's first use; until it is
    compiled or cached there (``incrowd warmup`` compiles it), data that the scan finishes in a
    few seconds run the scan, with the same groups.

    Attributes set by ``fit`` besides those of every method: ``n_rounds_`` (rounds run, the last
    one being the round that changed nothing when ``converged_``), ``converged_``.

    Parameters
    ----------
    k : int, default 5
        The smallest group size: every group has at least k rows.
    max_rounds : int, default 100
        The most rounds of dissolving and reassignment.
    random_state : None
        Accepted for a uniform interface; the method is deterministic and ignores it.
    """

    def __init__(self, k: int = 5, *, max_rounds: int = 100, random_state=None):
        super().__init__(k, random_state=random_state)
        self.max_rounds = max_rounds

    def _check_params(self) -> None:
        check_int(self.max_rounds, "max_rounds", 1, MAX_ROUNDS)

    def _labels(self, Z, k, rng):
        labels, rounds, converged = ona_star_best_labels(
            Z, k, int(self.max_rounds), use_tree_star(*Z.shape, k), -1, -1.0, _cancel.stop_flag()
        )
        _cancel.check_cancelled()  # a cancel ends the rounds early; that partition is not kept
        self.n_rounds_ = int(rounds)
        self.converged_ = bool(converged)
        return labels


class ONA(MicroaggregationEstimator):
    """ONA (Soria-Comas et al. 2019) as specified in Thaeter & Reischuk (2021), Algorithm 2; best of ``runs``.

    One run: a random k-member clustering (consecutive blocks of k rows of a random permutation,
    the n mod k rows left over joining the last block), then rounds over the rows in row order:

    * case 1, the row's cluster has more than k rows: the row is taken out and put into the
      cluster with the closest centroid (it stays when its own cluster, without it, is closest);
    * case 2, exactly k rows: each member is offered to the closest other centroid and the
      cluster is dissolved that way when this lowers the total SSE;

    after each round every cluster of >= 2k rows is split by a (single, recursive) ONA run on its
    rows. A run stops when a round changes nothing or after ``max_rounds`` rounds (30 in the
    paper). ``runs`` is the paper's mu: the run with the lowest SSE is kept.

    Reproducible: one ``numpy.random.Generator`` made from ``random_state`` draws one 64-bit
    seed per run, and each run (its random start and those of its splits) draws from a
    SplitMix64 stream with that seed, so results do not depend on threads or run order.

    Attributes set by ``fit`` besides those of every method: ``best_run_`` (index of the kept
    run), ``n_rounds_`` and ``converged_`` (of the kept run), ``run_information_losses_``,
    ``run_n_rounds_`` and ``run_converged_`` (one entry per run).

    Parameters
    ----------
    k : int, default 5
        The smallest group size: every group has at least k rows.
    runs : int, default 100
        Independent random starts (the paper's mu); the run with the lowest SSE is kept.
    max_rounds : int, default 30
        The most rounds of one run.
    random_state : int, numpy.random.Generator or None
        The seed of the random starts (None: fresh entropy).
    """

    def __init__(self, k: int = 5, *, runs: int = 100, max_rounds: int = 30, random_state=None):
        super().__init__(k, random_state=random_state)
        self.runs = runs
        self.max_rounds = max_rounds

    def _check_params(self) -> None:
        check_int(self.runs, "runs", 1, MAX_RUNS)
        check_int(self.max_rounds, "max_rounds", 1, MAX_ROUNDS)

    def _labels(self, Z, k, rng):
        seeds = rng.integers(0, np.iinfo(np.uint64).max, size=int(self.runs), dtype=np.uint64, endpoint=True)
        labels, costs, rounds, converged, best = _best_of_runs(
            Z, k, int(self.max_rounds), seeds, _use_tree(Z.shape[0], k)
        )
        total = sst(Z)
        self.run_information_losses_ = costs / total if total > 0 else np.zeros_like(costs)
        self.run_n_rounds_ = rounds
        self.run_converged_ = converged
        self.best_run_ = int(best)
        self.n_rounds_ = int(rounds[best])
        self.converged_ = bool(converged[best])
        return labels


def _best_of_runs(Z, k, max_rounds, seeds, use_tree):
    """What :func:`ona_best_labels` returns: the best run's labels (lowest SSE, lowest run index
    on ties), every run's SSE, rounds and convergence flag, and the best run's index.

    The runs go to ``numba.get_num_threads()`` Python threads (the calling one included), each
    taking the next run when it finishes one (:func:`incrowd._runtime._task_threads.run_on_threads`); a
    run is one compiled call that releases the GIL.
    Against one parallel region with the runs split in equal shares up front this compiles in
    a fraction of the time (no parallel-loop lowering), keeps only the best labels instead of
    every run's, and gives way on a shared machine: a thread beside another process's work does
    fewer runs instead of being the one the others wait for. A cancel token
    (:mod:`incrowd._runtime._cancel`) is checked before each run, and the progress is the share of runs
    done. Each run depends only on its seed, so the result is the same for any thread count."""
    runs = int(seeds.shape[0])
    scale = sst_per_row(Z)
    costs = np.empty(runs)
    rounds = np.empty(runs, np.int64)
    converged = np.empty(runs, np.bool_)
    lock = threading.Lock()
    state = {"done": 0, "best": -1, "labels": None}

    def one_run(q: int) -> None:
        lab, cost, rnd, conv = ona_one_run(Z, k, max_rounds, seeds[q], use_tree, scale)
        with lock:
            costs[q], rounds[q], converged[q] = cost, rnd, conv
            b = state["best"]
            if b < 0 or cost < costs[b] or (cost == costs[b] and q < b):
                state["best"], state["labels"] = q, lab
            state["done"] += 1
            _cancel.report_progress(state["done"], runs)

    run_on_threads(one_run, runs, numba.get_num_threads())
    return state["labels"], costs, rounds, converged, state["best"]
