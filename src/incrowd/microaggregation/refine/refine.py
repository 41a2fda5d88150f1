"""Refine: lower the information loss of any method's partition by local search."""

from __future__ import annotations

import numbers
import time

import numpy as np

from ..._runtime import cancel as _cancel
from ..._runtime import compile_clock
from ...exceptions import ParameterError
from .._base import MAX_ROUNDS, MicroaggregationEstimator, check_int
from .._knn import knn_scan, use_scan
from ._refine_kernel import MOVE_EXACT, MOVE_SPLIT3, MOVE_SWAP, MOVE_SWEEP, group_costs, ils_kicks, refine_round, split_round

#: each group is re-partitioned with this many of its nearest groups (by centroid); with
#: kicks of 2 neighbours, 8 lowered the SSE more, on average over the benchmark files, than 5
#: with kicks of 3 (the figures are in the docs' studies)
N_NEIGHBOURS = 8
#: neighbours pooled with a kicked group
KICK_STRENGTH = 2
ALL_MOVES = MOVE_SWAP | MOVE_SWEEP | MOVE_EXACT | MOVE_SPLIT3
#: kicks from this round on accept a result up to a threshold worse (threshold accepting); up to
#: here (the default run's length) only better results are kept, as before
THRESHOLD_AFTER = 60
#: the threshold falls linearly to 0 over a cycle of rounds, then the walk goes back to the best
#: partition met and the next cycle, twice as long, starts; the first cycle has this many rounds
THRESHOLD_FIRST_CYCLE = 250
#: the threshold at the start of a cycle, as a share of the mean group's SSE
THRESHOLD_SHARE = 0.3


def _start_estimator(start, k, random_state):
    from .. import METHODS  # the registry imports this module

    if isinstance(start, MicroaggregationEstimator):
        if isinstance(start, Refine):
            raise ParameterError("start must be another method than refine; got a Refine estimator")
        est = start.__class__(**{**start.get_params(), "k": k})
        return est
    if isinstance(start, str) and start in METHODS and start != "refine":
        return METHODS[start](k=k, random_state=random_state)
    names = ", ".join(n for n in METHODS if n != "refine")
    raise ParameterError(f"start must be a method name ({names}) or a microaggregation estimator; got {start!r}")


def _split_large(Z, labels, k):
    """Groups of 2k or more rows cut into groups of k..2k-1 along their widest direction
    (sorted by the projection on the first principal axis, cut every k rows, the rest joining
    the last piece), so the local search starts from an admissible partition."""
    labels = labels.copy()
    nxt = int(labels.max()) + 1
    sizes = np.bincount(labels)
    for g in np.flatnonzero(sizes >= 2 * k):
        rows = np.flatnonzero(labels == g)
        P = Z[rows] - Z[rows].mean(axis=0)
        _, _, vt = np.linalg.svd(P, full_matrices=False)
        order = rows[np.argsort(P @ vt[0], kind="mergesort")]
        pieces = len(order) // k
        for p in range(1, pieces):
            end = (p + 1) * k if p < pieces - 1 else len(order)
            labels[order[p * k:end]] = nxt
            nxt += 1
    return labels


def _neighbours(Z, mem, size, n_neigh):
    """For each group, its ``n_neigh`` nearest other groups by centroid (-1 pads)."""
    G = size.shape[0]
    valid = mem >= 0
    sums = np.einsum("gtj,gt->gj", Z[np.where(valid, mem, 0)], valid.astype(Z.dtype))
    cent = sums / size[:, None]
    if use_scan(G, Z.shape[1]):
        return np.ascontiguousarray(knn_scan(cent, n_neigh)[1])
    # scipy.spatial costs every command that loads the methods 0.2 s; only this search needs it
    from scipy.spatial import cKDTree

    q = min(G, n_neigh + 1)
    _, idx = cKDTree(cent).query(cent, k=q)
    idx = np.asarray(idx, np.int64).reshape(G, q)
    own = idx == np.arange(G)[:, None]
    # drop the group itself (or, among exact duplicates of its centroid, the last column)
    drop = np.where(own.any(axis=1), own.argmax(axis=1), q - 1)
    keep = np.ones_like(own)
    keep[np.arange(G), drop] = False
    out = idx[keep].reshape(G, q - 1) if q > 1 else np.full((G, 1), -1, np.int64)
    return np.ascontiguousarray(out)


def _labels_of(mem, size, n):
    """The label of every row from the group table."""
    out = np.empty(n, np.int64)
    # a group's rows are the first size[g] of its row of mem (the kernels leave stale ids after
    # them); row-major order lists the groups in turn
    held = np.arange(mem.shape[1])[None, :] < size[:, None]
    out[mem[held]] = np.repeat(np.arange(size.shape[0], dtype=np.int64), size)
    return out


def _timed_neighbours(Z, mem, size):
    """:func:`_neighbours` with ``N_NEIGHBOURS``, and the seconds it took."""
    t = time.perf_counter()
    neigh = _neighbours(Z, mem, size, N_NEIGHBOURS)
    return neigh, time.perf_counter() - t


class Refine(MicroaggregationEstimator):
    """Refine: a start partition (ONA* by default) improved by local search.

    1. Start: the partition of ``start`` (a method name or an estimator) on the same
       standardized data; groups of 2k or more rows are cut into groups of k..2k-1.
    2. Rounds: each group, in a random order, is re-partitioned with each of its eight nearest
       groups (by centroid): the rows of the two groups are split again
       into two groups of k..2k-1 rows, exactly (every split) when they are at most 12 rows,
       else by the best threshold along the line between the two centroids (repeated with the
       new centroids) followed by row moves and pairwise swaps; the split is kept when it
       lowers the SSE. ONA* moves one row at a time and only out of groups larger than k, so it
       cannot make a swap or regroup two groups at once. After each round, a pair of
       neighbouring groups with at least 3k rows between them is split into three groups of
       k..2k-1 rows when that lowers the SSE (cut in three along the line between the two
       centroids, then moves and swaps between each two of the three): no other move changes
       the number of groups, and more groups of k rows lose less.
    3. When a round changes nothing (a local optimum), each later round runs kicks for a quarter
       of the groups: a kick deals the rows of a random group and its two nearest groups out
       again at random (sizes kept), repairs them with pair re-partitions, and is kept only when
       the SSE went down, else those groups are restored (iterated local search). From round 60
       on (longer runs than the default), a kick is also kept when the SSE rose by less than a
       threshold (threshold accepting): 0.3 of the mean group's SSE, falling linearly to 0 over
       cycles of 250, 500, 1,000, ... rounds (the last cut to end with ``max_rounds``); each
       cycle starts from the best partition met, and that partition is the one returned.
    4. Stops after ``max_rounds`` rounds or ``max_seconds`` seconds (the start method included,
       numba compiling left out; checked between rounds), whichever comes first, and returns
       the best partition found.

    Up to round 60 every accepted change lowers the SSE, and later the best partition met is
    returned, so the result is never worse than the start (when the
    start's groups have at most 2k - 1 rows, as with every method but the Mondrian family with
    ``split_2k=False``) and every group has k..2k-1 rows. Deterministic for a fixed
    ``random_state`` when the run ends by ``max_rounds``; a run cut by ``max_seconds`` depends on
    the machine's speed.

    ``start`` given as an estimator is refitted with Refine's ``k`` and its own other parameters.

    Attributes set by ``fit`` besides those of every method: ``start_information_loss_`` (the
    start's IL), ``n_rounds_``, ``stopped_by_`` ("max_rounds" or "max_seconds"), ``n_kicks_``
    and ``n_kicks_kept_`` (perturbations tried and kept).

    Parameters
    ----------
    k : int, default 5
        The smallest group size: every group has at least k rows.
    start : str or MicroaggregationEstimator, default "ona-star"
        The start partition: a method name of :data:`incrowd.METHODS` or an estimator.
    max_seconds : float, default 10.0
        Stop after this many seconds (the start included, compiling left out).
    max_rounds : int, default 60
        Stop after this many rounds.
    random_state : int, numpy.random.Generator or None
        The seed of the group order and the kicks.
    """

    def __init__(self, k: int = 5, *, start="ona-star", max_seconds: float = 10.0,
                 max_rounds: int = 60, random_state=None):
        super().__init__(k, random_state=random_state)
        self.start = start
        self.max_seconds = max_seconds
        self.max_rounds = max_rounds

    #: which moves run (bit flags of ``_refine_kernel``); the ablation bench switches them
    _moves = ALL_MOVES
    _perturb = True

    def _check_params(self) -> None:
        v = self.max_seconds
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v <= 0:
            raise ParameterError(f"max_seconds must be a real number > 0; got {v!r}")
        check_int(self.max_rounds, "max_rounds", 1, MAX_ROUNDS)
        _start_estimator(self.start, 2, None)

    def _labels(self, Z, k, rng):
        # max_seconds counts the start method and the search, not numba compiling kernels (a
        # first call on a fresh machine would otherwise spend the budget compiling and stop
        # at a different partition than later calls)
        with compile_clock() as clock:
            t0 = time.perf_counter()
            est = _start_estimator(self.start, k, self.random_state)
            est._check_params()
            labels = np.asarray(est._labels(Z, k, np.random.default_rng(rng.integers(2**63))), np.int64)
            out, info = refine_partition(Z, k, labels, rng, int(self.max_rounds), float(self.max_seconds),
                                         t0=t0, moves=self._moves, kicks=self._perturb, clock=clock)
        self.start_information_loss_ = info["start_information_loss"]
        self.n_rounds_ = info["rounds"]
        self.stopped_by_ = info["stopped_by"]
        self.n_kicks_ = info["kicks"]
        self.n_kicks_kept_ = info["kicks_kept"]
        return out


def _threshold_cycle(r: int, total: int) -> tuple[int, int, int]:
    """Round r of threshold accepting (from 0) in cycles of THRESHOLD_FIRST_CYCLE rounds,
    doubling, the last cut to end with the ``total`` rounds: (cycle, round within it, its
    length). Whatever the budget, the walk has cooled down recently, and a long run anneals
    slowly."""
    cycle, start, length = 0, 0, THRESHOLD_FIRST_CYCLE
    while r >= start + length:
        start += length
        length *= 2
        cycle += 1
    return cycle, r - start, max(1, min(length, total - start))


class _Best:
    """A copy of the best partition met (the group table's arrays at full capacity), made at
    the first save: runs that never reach threshold accepting copy nothing."""

    def __init__(self):
        self.mem = self.size = self.cost = None
        self.groups = 0
        self.total = np.inf

    def save(self, mem_all, size_all, cost_all, groups, total):
        if self.mem is None:
            self.mem, self.size, self.cost = mem_all.copy(), size_all.copy(), cost_all.copy()
        else:
            self.mem[:] = mem_all
            self.size[:] = size_all
            self.cost[:] = cost_all
        self.groups, self.total = groups, total

    def restore(self, mem_all, size_all, cost_all) -> int:
        mem_all[:] = self.mem
        size_all[:] = self.size
        cost_all[:] = self.cost
        return self.groups


def _compile_kernels(Z, k, moves, scale, strength) -> None:
    """Compile (or load from numba's cache) the search kernels on a two-group copy of Z's first
    rows, so that no compiling happens inside a timed call: the kernels stop at a deadline, and
    a call that spent its budget compiling would end a run before it searched."""
    if refine_round.signatures and ils_kicks.signatures and split_round.signatures:
        return
    n = min(Z.shape[0], 2 * k)
    Zs = np.ascontiguousarray(Z[:n])
    mem = np.full((2, 2 * k - 1), -1, np.int64)
    size = np.array([n // 2, n - n // 2], np.int64)
    mem[0, : size[0]] = np.arange(size[0])
    mem[1, : size[1]] = np.arange(size[0], n)
    cost = group_costs(Zs, mem, size)
    neigh = np.array([[1], [0]], np.int64)
    dirty = np.ones(2, np.bool_)
    refine_round(Zs, k, mem, size, cost, neigh, np.arange(2, dtype=np.int64), moves, scale, dirty,
                 np.zeros(2, np.bool_), 0)
    ils_kicks(Zs, k, mem, size, cost, neigh, moves, scale, 1, strength, np.uint64(1), 100, 0)
    split_round(Zs, k, mem, size, cost, neigh, 2, scale, dirty, 0)


def refine_partition(Z, k, labels, rng, max_rounds, max_seconds, *, t0=None, moves=ALL_MOVES,
                     kicks=True, strength=KICK_STRENGTH, kick_share=0.25, clock=None, threshold=True):
    """The search of :class:`Refine` from given labels on standardized Z; returns the new
    labels and a dict (start_information_loss, rounds, stopped_by, kicks, kicks_kept). ``t0``:
    the clock reading max_seconds counts from (default: now). ``moves``: bit flags of the pair
    re-partition searches; ``kicks``: perturb once at a local optimum (else stop there);
    ``strength``: neighbours pooled with a kicked group; ``kick_share``: kicks per round, as a
    share of the groups; ``clock``: a compile clock whose seconds are left out of the time."""
    from .._measures import sse, sst

    t0 = time.perf_counter() if t0 is None else t0
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    _, labels = np.unique(np.asarray(labels, np.int64), return_inverse=True)
    labels = labels.astype(np.int64)
    total = sst(Z)
    start_il = sse(Z, labels) / total if total > 0 else 0.0
    labels = _split_large(Z, labels, k)
    G = int(labels.max()) + 1
    # room for every group a three-way split may add (at most n // k groups in all); the search
    # sees views of the first G
    cap = max(G, Z.shape[0] // k)
    order = np.argsort(labels, kind="stable")
    size_all = np.zeros(cap, np.int64)
    size_all[:G] = np.bincount(labels, minlength=G)
    mem_all = np.full((cap, 2 * k - 1), -1, np.int64)
    cost_all = np.zeros(cap)
    starts = np.concatenate(([0], np.cumsum(size_all[:G])))
    for g in range(G):
        mem_all[g, : size_all[g]] = order[starts[g]:starts[g + 1]]
    mem, size, cost = mem_all[:G], size_all[:G], cost_all[:G]
    cost[:] = group_costs(Z, mem, size)
    split3 = (moves & MOVE_SPLIT3) != 0
    scale = total / Z.shape[0] * 1e-12 if total > 0 else 0.0
    rounds = 0
    stopped = "max_rounds"
    neigh, refresh_seconds = _timed_neighbours(Z, mem, size)
    _compile_kernels(Z, k, moves, scale, strength)
    dirty = np.ones(G, np.bool_)
    converged = False
    # threshold accepting walks away from the best partition met: it is kept here
    best = _Best() if threshold and kicks else None
    last_cycle = 0
    n_kicks = 0
    kept = 0
    # the labels are assembled after the search, inside the budget: its time (measured once
    # here) and 0.5 ms for the Python steps around it (less runs over the budget on a shared
    # machine) are kept back
    t = time.perf_counter()
    _labels_of(mem, size, Z.shape[0])
    finish = time.perf_counter() - t + 5e-4

    def seconds_left() -> float:
        return max_seconds - finish - (time.perf_counter() - t0 - (clock.seconds if clock is not None else 0.0))

    def refresh_fits() -> bool:
        # a refresh cannot be cut short: one that could run past the budget (its time varies by a
        # fifth or so on a shared machine) is not started
        return seconds_left() >= 1.5 * refresh_seconds

    while rounds < max_rounds:
        left = seconds_left()
        if left <= 0.0:
            stopped = "max_seconds"
            break
        _cancel.check_cancelled()
        # the kernels read the same clock, so a long round or a run of kicks ends on time too
        deadline = time.monotonic_ns() + int(left * 1e9)
        grew = False
        if not converged:
            dirty_out = np.zeros(G, np.bool_)
            changed = refine_round(Z, k, mem, size, cost, neigh, rng.permutation(G).astype(np.int64),
                                   moves, scale, dirty, dirty_out, deadline)
            if time.monotonic_ns() >= deadline:
                rounds += 1  # cut short, so no local optimum is proven
                stopped = "max_seconds"
                break
            dirty = dirty_out
            converged = changed == 0
        else:
            seed = np.uint64(rng.integers(0, 2**63))
            n = max(1, int(kick_share * G))
            slack = 0.0
            if best is not None and rounds >= THRESHOLD_AFTER:
                cycle, phase, cycle_rounds = _threshold_cycle(rounds - THRESHOLD_AFTER,
                                                              max_rounds - THRESHOLD_AFTER)
                now = float(cost.sum())
                if now < best.total:
                    best.save(mem_all, size_all, cost_all, G, now)
                elif cycle > last_cycle and now > best.total and refresh_fits():
                    # a cycle ends where the walk stands: the next starts from the best. The
                    # restored groups need fresh lists; with no time left for them the walk goes
                    # on, and the best is restored after the search all the same
                    G = best.restore(mem_all, size_all, cost_all)
                    mem, size, cost = mem_all[:G], size_all[:G], cost_all[:G]
                    dirty = np.zeros(G, np.bool_)
                    neigh, refresh_seconds = _timed_neighbours(Z, mem, size)
                    now = best.total
                last_cycle = cycle
                slack = THRESHOLD_SHARE * (1.0 - phase / cycle_rounds) * now / G
            kept += ils_kicks(Z, k, mem, size, cost, neigh, moves, scale, n,
                              strength, seed, 100 * G, deadline, slack)
            n_kicks += n
        if split3 and time.monotonic_ns() < deadline:
            grown = np.zeros(cap, np.bool_)
            G_new = split_round(Z, k, mem_all, size_all, cost_all, neigh, G, scale, grown, deadline)
            if G_new > G:
                G = G_new
                mem, size, cost = mem_all[:G], size_all[:G], cost_all[:G]
                # the pairs around the new groups are searched again (and the lists refreshed
                # below, so the new groups have neighbours)
                dirty = grown[:G] | np.concatenate((dirty, np.zeros(G - dirty.shape[0], np.bool_)))
                # no neighbours yet for the new groups, should the refresh below be skipped
                neigh = np.concatenate((neigh, np.full((G - neigh.shape[0], neigh.shape[1]), -1, np.int64)))
                converged = False
                grew = True
        if converged and not kicks:
            rounds += 1
            stopped = "converged"
            break
        rounds += 1
        _cancel.report_progress(rounds, max_rounds)
        # stale lists only change which pairs are tried, so the lists are refreshed every 4th
        # round, and every round only while the pair search descends on few groups or columns
        # (a scan over many groups in many columns costs as much as a round); the kicks touch a
        # few groups each, and a refresh after each round of them took a large share of a short
        # budget; none after the last round
        due = (not converged and not use_scan(G, Z.shape[1])) or rounds % 4 == 0 or grew
        # without the time for a refresh, the search goes on with the lists it has
        if rounds < max_rounds and due and refresh_fits():
            neigh, refresh_seconds = _timed_neighbours(Z, mem, size)
    if best is not None and best.total < float(cost.sum()):
        G = best.restore(mem_all, size_all, cost_all)
        mem, size = mem_all[:G], size_all[:G]
    info = {"start_information_loss": start_il, "rounds": rounds, "stopped_by": stopped,
            "kicks": n_kicks, "kicks_kept": kept}
    return _labels_of(mem, size, Z.shape[0]), info
