"""MONA_rho and MONA 2D_rho over row blocks on a Dask cluster, with exactly the single-machine
groups.

Phases (Thaeter & Reischuk (2021), Algorithm 6):

1. Standardize: column means and deviations folded over the blocks in row order (see
   ``_kernels``), so Z is bit for bit the single-machine Z; likewise SST / n for ONA*.
2. Cut: while a part has more than ``part_rows`` rows (and Mondrian V would cut it), its
   direction is chosen from score sums folded in row order, and its median found by an exact
   distributed selection: each block sorts its projections; a few rounds of sampling and
   counting narrow the value holding rank floor(m/2) down to the value itself. Rows tied with
   the median are ordered by the ancestors' projections and row index, as in the kernel. All
   parts of one depth are cut together, so each round costs a constant number of passes.
3. Leaves: each part of at most ``part_rows`` rows is gathered on one worker, where the
   single-machine kernel finishes it (further cuts with the ancestors' directions for ties,
   then ONA* on every part of at most n^rho rows).
4. Labels go back to the blocks; groups are numbered in Mondrian's depth-first order, as on one
   machine.

Every task is a pure function of its inputs and no data is scattered, so Dask recomputes what a
lost worker held and the result is unchanged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..exceptions import DataError, IncrowdError, ParameterError
from ..microaggregation import MAX_ROUNDS, RULE_V2D, RULE_VARIANCE, check_int, check_k, check_real, directions
from ..microaggregation.mondrian.mona import split_limit
from . import _blocks as B
from ._io import block_count
from ._kernels import fold_direction_moments, fold_squared_deviations, fold_sst_column, fold_sums

_SAMPLE = 64  # values per block per selection round
_GATHER = 4096  # a bracket this small is fetched and finished on the client


@dataclass
class DistributedResult:
    """Labels (group id per row, depth-first numbering as single-machine MONA), group sizes,
    centroids in the data's units, the information loss, and how the work was split."""

    labels: np.ndarray
    group_sizes: np.ndarray
    centroids: np.ndarray
    information_loss: float
    k: int
    rho: float
    method: str
    n_rows: int
    block_rows: list[int]
    leaf_parts: int
    distributed_cuts: int
    ona_parts: int
    tied_cuts: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    label_blocks: list = field(default_factory=list, repr=False)  # futures, one per block

    @property
    def n_groups(self) -> int:
        return int(self.group_sizes.size)


@dataclass
class _Part:
    id: int
    size: int
    ancestors: tuple[int, ...]  # direction ids of the cuts above, root first
    children: tuple[int, int] | None = None


def _blocks_of(client, data) -> list:
    """Futures of float64 row blocks, in row order, that Dask can recompute."""
    if hasattr(data, "to_delayed"):  # dask array or dataframe
        delayed = data.to_delayed()
        delayed = list(np.asarray(delayed, dtype=object).ravel()) if not isinstance(delayed, list) else delayed
        raw = client.compute(delayed)
    elif isinstance(data, (list, tuple)) and data and all(type(b).__name__ == "Future" for b in data):
        raw = list(data)
    elif isinstance(data, (list, tuple)):
        raw = [client.submit(np.asarray, block, pure=False) for block in data]
    else:
        raise ParameterError("data must be a dask array, a dask dataframe, or a list of numpy row blocks")
    return [client.submit(B.as_block, r) for r in raw]


def _chain(client, fn, blocks, start, *args):
    """Fold ``fn(block, *args, acc)`` over the blocks in row order; the future of the result."""
    acc = start
    for blk in blocks:
        acc = client.submit(fn, blk, *args, acc)
    return acc


def mona(data, k: int, *, client, rho: float = 0.5, diagonals: str | None = None, split_2k: bool = True,
         max_rounds: int = 100, part_rows: int = 1_000_000,
         on_round: Callable[[int], None] | None = None, collect_labels: bool = True,
         keep_label_blocks: bool = False) -> DistributedResult:
    """MONA_rho (or MONA 2D_rho when ``diagonals`` is "sum" or "unit") on ``data`` spread over
    ``client``'s workers; the groups equal ``incrowd.MONA`` / ``incrowd.MONA2D`` on the same rows.

    ``data``: a dask array or dataframe (every column a quasi-identifier) or a list of numpy row
    blocks; ``part_rows``: parts at most this large are finished on one worker (it bounds a
    worker's memory for that phase); ``on_round(i)`` is called after each round of cuts;
    ``collect_labels=False`` leaves the labels on the workers (``keep_label_blocks`` keeps their
    futures in the result, for writing the output block by block).
    """
    t0 = time.perf_counter()
    rho = check_real(rho, "rho", 0.0, 1.0)
    max_rounds = check_int(max_rounds, "max_rounds", 1, MAX_ROUNDS)
    part_rows = check_int(part_rows, "part_rows", 2)
    if diagonals not in (None, "sum", "unit"):
        raise ParameterError(f"diagonals must be 'sum' or 'unit'; got {diagonals!r}")
    rule = RULE_VARIANCE if diagonals is None else RULE_V2D
    unit = diagonals == "unit"
    blocks = _blocks_of(client, data)
    sizes = client.gather([client.submit(B.rows, b) for b in blocks])
    keep = [i for i, s in enumerate(sizes) if s > 0]
    blocks, sizes = [blocks[i] for i in keep], [sizes[i] for i in keep]
    n = int(sum(sizes))
    k = check_k(k, n)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    d = int(client.submit(lambda X: X.shape[1], blocks[0]).result())

    # -- 1. standardize exactly as Standardizer.fit / transform
    if d >= 2:
        total = client.gather(_chain(client, fold_sums, blocks, np.zeros(d)))
        mean = total / n
        var = client.gather(_chain(client, fold_squared_deviations, blocks, np.zeros(d), mean)) / n
        std = np.sqrt(var)
    else:  # numpy sums one column pairwise, not in row order: do it numpy's way
        column = np.concatenate(client.gather(blocks))
        if not np.isfinite(column).all():
            raise DataError("the quasi-identifier has a missing or infinite value")
        mean, std = column.mean(axis=0), column.std(axis=0)
    if not (np.isfinite(mean).all() and np.isfinite(std).all()):
        j = int(np.flatnonzero(~(np.isfinite(mean) & np.isfinite(std)))[0])
        raise DataError(f"quasi-identifier column {j} has a missing or infinite value, or values so "
                        "large (near 1e308) that its mean or spread overflows; the distributed path "
                        "refuses such columns (without --scheduler they are standardized safely)")
    scale = np.where(std > 0, std, 1.0)
    Z = [client.submit(B.standardize, b, mean, scale) for b in blocks]
    mu = client.gather(_chain(client, fold_sums, Z, np.zeros(d))) / n
    sst = 0.0
    for j in range(d):  # sst_per_row: column by column, rows in order, one running sum
        sst = _chain(client, fold_sst_column, Z, sst, j, mu[j])
    sst_per_row = float(client.gather(sst)) / n
    t1 = time.perf_counter()

    # -- 2. distributed cuts
    limit = split_limit(n, rho)
    min_split = 2 * k if split_2k else 2 * k + 1
    dir_a, dir_b, dir_o = (np.asarray(x) for x in directions(d, rule))
    n_dirs = dir_a.size
    parts = {0: _Part(0, n, ())}
    part_of = [client.submit(B.zero_parts, z) for z in Z]
    next_id = 1
    cuts = 0
    rounds = 0
    tied_cuts = 0

    def to_cut(p: _Part) -> bool:
        return p.size >= min_split and p.size > limit and p.size > part_rows

    frontier = [p for p in parts.values() if to_cut(p)]
    while frontier:
        ids = np.array([p.id for p in frontier], np.int64)
        slot_of = np.full(next_id, -1, np.int64)
        slot_of[ids] = np.arange(ids.size)
        m = np.array([p.size for p in frontier], np.float64)
        acc = np.zeros((ids.size, n_dirs))
        unused = np.zeros((1, n_dirs))  # the sums pass reads no means
        for z, part in zip(Z, part_of):
            acc = client.submit(fold_direction_moments, z, part, slot_of, rule == RULE_V2D, unused, False, acc)
        means = client.gather(acc) / m[:, None]
        acc = np.zeros((ids.size, n_dirs))
        for z, part in zip(Z, part_of):
            acc = client.submit(fold_direction_moments, z, part, slot_of, rule == RULE_V2D, means, True, acc)
        sq = client.gather(acc)
        if rule == RULE_V2D and unit:
            sq[:, d:] *= 0.5
        best = np.argmax(sq, axis=1)  # the first of equal scores, as the kernel
        dirs = [(int(dir_a[t]), int(dir_b[t]), int(dir_o[t])) for t in best]
        ranks = [p.size // 2 for p in frontier]
        sorted_blocks = [client.submit(B.sorted_projections, z, part, list(ids), dirs) for z, part in zip(Z, part_of)]
        pivots, n_less = _select(client, sorted_blocks, ranks)
        left_ties = []
        for j, p in enumerate(frontier):
            need = ranks[j] - n_less[j]
            if need <= 0:
                left_ties.append(np.zeros(0, np.int64))
                continue
            tied_cuts += 1
            ancestors = [(int(dir_a[t]), int(dir_b[t]), int(dir_o[t])) for t in p.ancestors]
            got = client.gather([client.submit(B.tie_keys, z, part, p.id, pivots[j], dirs[j], ancestors, int(off))
                                 for z, part, off in zip(Z, part_of, offsets)])
            rows_tied = np.concatenate([g[0] for g in got])
            keys = [np.concatenate([g[1][lvl] for g in got]) for lvl in range(len(ancestors))]
            order = np.lexsort([rows_tied, *keys]) if keys else np.argsort(rows_tied, kind="stable")
            left_ties.append(np.sort(rows_tied[order[:need]]))
        left_ids = list(range(next_id, next_id + 2 * len(frontier), 2))
        right_ids = [i + 1 for i in left_ids]
        next_id += 2 * len(frontier)
        part_of = [client.submit(B.split, z, part, list(ids), dirs, list(pivots), left_ties, left_ids, right_ids,
                                 int(off)) for z, part, off in zip(Z, part_of, offsets)]
        new_frontier = []
        for j, p in enumerate(frontier):
            left = _Part(left_ids[j], ranks[j], p.ancestors + (int(best[j]),))
            right = _Part(right_ids[j], p.size - ranks[j], p.ancestors + (int(best[j]),))
            parts[left.id], parts[right.id] = left, right
            p.children = (left.id, right.id)
            new_frontier += [c for c in (left, right) if to_cut(c)]
        cuts += len(frontier)
        rounds += 1
        frontier = new_frontier
        if on_round is not None:
            on_round(rounds)
    t2 = time.perf_counter()

    # -- 3. leaves, in depth-first order (lower side first), each finished on one worker
    leaves = _depth_first_leaves(parts)
    taken = [client.submit(B.take_parts, z, part, leaves) for z, part in zip(Z, part_of)]
    threads = task_threads(client)
    results = []
    for p in leaves:
        pieces = [client.submit(B.pick, t, p) for t in taken]
        results.append(client.submit(B.local_mona, k, rule, limit, sst_per_row, unit, bool(split_2k), max_rounds,
                                     np.asarray(parts[p].ancestors, np.int64), threads, *pieces))
    counts = np.array(client.gather([client.submit(B.part_counts, part, leaves) for part in part_of]))
    info = client.gather([client.submit(lambda r: (int(r[0].max()) + 1, r[1], r[2], r[3]), r) for r in results])
    groups_per_leaf = np.array([i[0] for i in info], np.int64)
    leaf_offset = np.concatenate([[0], np.cumsum(groups_per_leaf)])
    t3 = time.perf_counter()

    # -- 4. labels back to the blocks, centroids, information loss
    starts = np.vstack([np.zeros(len(leaves), np.int64), np.cumsum(counts, axis=0)])
    labels_blocks = []
    for b, part in enumerate(part_of):
        present = [j for j in range(len(leaves)) if counts[b, j] > 0]
        slices = [client.submit(B.label_slice, results[j], int(starts[b, j]), int(starts[b + 1, j]),
                                int(leaf_offset[j])) for j in present]
        labels_blocks.append(client.submit(B.assemble, part, [leaves[j] for j in present], *slices))
    n_groups = int(leaf_offset[-1])
    sums = client.gather([client.submit(B.group_sums, blk, z, lab) for blk, z, lab in zip(blocks, Z, labels_blocks)])
    group_sizes = np.zeros(n_groups, np.int64)
    sx = np.zeros((n_groups, d))
    sz = np.zeros((n_groups, d))
    zz = 0.0
    for g, c, x, z, q in sums:
        group_sizes[g] += c
        sx[g] += x
        sz[g] += z
        zz += q
    if group_sizes.min() < k or group_sizes.sum() != n:
        raise IncrowdError("internal error: a row was left unassigned or a group has < k rows")
    centroids = sx / group_sizes[:, None]
    sst_total = sst_per_row * n
    sse = zz - float(np.einsum("ij,ij->", sz, sz / group_sizes[:, None]))
    il = 0.0 if sst_total == 0 else max(0.0, sse / sst_total)
    labels = np.concatenate(client.gather(labels_blocks)) if collect_labels else np.zeros(0, np.int64)
    t4 = time.perf_counter()
    name = "mona" if rule == RULE_VARIANCE else "mona-2d"
    return DistributedResult(
        labels=labels, group_sizes=group_sizes, centroids=centroids, information_loss=il, k=k, rho=rho,
        method=name, n_rows=n, block_rows=[int(s) for s in sizes], leaf_parts=len(leaves),
        distributed_cuts=cuts, ona_parts=int(sum(i[1] for i in info)),
        tied_cuts=tied_cuts, label_blocks=labels_blocks if keep_label_blocks else [],
        seconds={"standardize": t1 - t0, "cuts": t2 - t1, "leaves": t3 - t2, "labels": t4 - t3, "total": t4 - t0},
    )


def task_threads(client) -> dict[str, int]:
    """Per worker address: the compiled threads one of its tasks may use (:func:`share_threads`
    over the workers the scheduler knows now; a worker that joins later keeps numba's count)."""
    cores = client.run(_numba_threads)
    workers = client.scheduler_info(n_workers=-1)["workers"]
    return share_threads({a: (w["host"], int(w["nthreads"])) for a, w in workers.items()}, cores)


def _numba_threads() -> int:
    import numba

    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]  # set at import, not typed


def share_threads(workers: dict[str, tuple[str, int]], cores: dict[str, int]) -> dict[str, int]:
    """A host's cores shared among the Dask threads of all its workers: each task gets the
    host's cores (numba's thread count there) over those threads, at least 1. Two one-thread
    workers on two cores get one thread per task, not two each; one worker alone keeps both."""
    per_host: dict[str, int] = {}
    for host, nthreads in workers.values():
        per_host[host] = per_host.get(host, 0) + max(1, nthreads)
    return {a: max(1, cores.get(a, 1) // per_host[host]) for a, (host, _) in workers.items()}


def _depth_first_leaves(parts: dict[int, _Part]) -> list[int]:
    out, stack = [], [0]
    while stack:
        p = parts[stack.pop()]
        if p.children is None:
            out.append(p.id)
        else:
            stack += [p.children[1], p.children[0]]  # lower side first
    return out


def _select(client, sorted_blocks: Sequence, ranks: Sequence[int]) -> tuple[list[float], list[int]]:
    """Per part, the value of 0-based rank r among its projections over all blocks, and the
    number of values below it. Exact: it ends on a value whose counts bracket r."""
    n_parts = len(ranks)
    lows = [-np.inf] * n_parts
    highs = [np.inf] * n_parts
    below_low = [0] * n_parts  # values <= low
    result: list[float | None] = [None] * n_parts
    n_less = [0] * n_parts
    while any(r is None for r in result):
        open_ = [j for j in range(n_parts) if result[j] is None]
        samples = client.gather([client.submit(B.sample_between, s, lows, highs, _SAMPLE) for s in sorted_blocks])
        inside = [sum(samples[b][j][0] for b in range(len(sorted_blocks))) for j in range(n_parts)]
        small = [j for j in open_ if inside[j] <= _GATHER]
        candidates = []
        for j in range(n_parts):
            if j in small or result[j] is not None:
                candidates.append(np.zeros(0))
            else:
                candidates.append(np.unique(np.concatenate([samples[b][j][1] for b in range(len(sorted_blocks))])))
        for j in small:  # every value in the bracket is here: finish on the client
            values = np.sort(np.concatenate([samples_all for samples_all in
                                             _values_between(client, sorted_blocks, j, lows[j], highs[j])]))
            result[j] = float(values[ranks[j] - below_low[j]])
        counted = client.gather([client.submit(B.counts_at, s, candidates) for s in sorted_blocks])
        for j in open_:
            if j in small:
                continue
            lt = np.sum([counted[b][j][0] for b in range(len(sorted_blocks))], axis=0)
            le = np.sum([counted[b][j][1] for b in range(len(sorted_blocks))], axis=0)
            r = ranks[j]
            hit = np.flatnonzero((lt <= r) & (le > r))
            if hit.size:
                result[j] = float(candidates[j][hit[0]])
                continue
            above = np.flatnonzero(le > r)  # candidates at or above the answer
            below = np.flatnonzero(le <= r)
            if above.size:
                highs[j] = float(candidates[j][above[0]])
            if below.size:
                lows[j] = float(candidates[j][below[-1]])
                below_low[j] = int(le[below[-1]])
    pivots = [float(v) for v in result]
    counted = client.gather([client.submit(B.counts_at, s, [np.array([v]) for v in pivots]) for s in sorted_blocks])
    for j in range(n_parts):
        n_less[j] = int(sum(counted[b][j][0][0] for b in range(len(sorted_blocks))))
    return pivots, n_less


def _values_between(client, sorted_blocks, j, low, high):
    def values(sorted_list, j=j, low=low, high=high):
        vals = sorted_list[j]
        return vals[np.searchsorted(vals, low, side="right"):np.searchsorted(vals, high, side="right")]
    return client.gather([client.submit(values, s) for s in sorted_blocks])


def fit_distributed(estimator, values: np.ndarray, scheduler, *, part_rows: int = 1_000_000) -> DistributedResult:
    """Run a MONA / MONA 2D estimator's parameters over ``scheduler`` (a ``distributed.Client``
    or a ``--scheduler`` string) on an in-memory matrix split into row blocks."""
    from ._cluster import connect

    diagonals = getattr(estimator, "diagonals", None)
    kwargs = dict(rho=float(estimator.rho), diagonals=diagonals, split_2k=bool(estimator.split_2k),
                  max_rounds=int(estimator.max_rounds), part_rows=part_rows)

    def run(client) -> DistributedResult:
        blocks = np.array_split(values, block_count(client, values.shape[0], part_rows))
        return mona(blocks, estimator.k, client=client, **kwargs)

    if isinstance(scheduler, str):
        with connect(scheduler) as client:
            return run(client)
    return run(scheduler)
