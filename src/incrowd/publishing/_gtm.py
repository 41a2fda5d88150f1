"""Generalize, then microaggregate: pick the categorical generalization, then microaggregate the
numeric quasi-identifiers inside each of its classes.

The node (one level per categorical quasi-identifier) is the lowest in the lattice whose
suppression stays within the limit, ties to the least suppression, then to the first node in
the lattice's order (``Lattice`` numbers nodes the same way): a class is suppressed when it has
fewer than k rows, or, when asked, fewer than l distinct values or a distance above t in a
sensitive column. Merging groups inside a class can always reach l and t when the whole class
does (the distance of a union is at most the largest of its parts'), so those are the only
classes that must go. With ``missing.numeric = "separate"`` the missing pattern is part of the
class, as it is part of what the published row shows.

Inside a class of at least 2k rows the chosen method forms groups of at least k rows on the
standardized numeric columns the class has; a smaller class is one group.

With ``[privacy] metric`` other than ``"height"`` (the default is ``"loss"``), the node is the
one with the least metric over the categorical quasi-identifiers (ties: lowest height, least
suppression, lattice order; :mod:`incrowd.generalization._utility_metrics` defines the
metrics): nodes are evaluated in order of a lower bound of the metric valid for every node, and
the search stops at the first whose bound exceeds the best value found, so the answer is exact.
A node rules out every node below it when its floor passes the limit: the rows of its classes
failing k or l (their parts fail them too), plus, for a class failing t, the share of its rows
that fails t in any split of it (the distance is convex: :func:`_t_floor`). Best first meets
the nodes below the first that passes one by one, so a node over the limit is followed up a
chain to a node high above it whose floor still passes the limit (:func:`_climb`), ruling out
its whole down-set at once. Only nodes that cannot pass are skipped, so the answer is the same.
A node's classes and its l and t come from kernels of the compiled extension
(:mod:`incrowd._native`) that give the numpy lines' ids, flags and distances.

A node that suppresses every row publishes nothing, so it is never the answer, whatever
``max_suppression`` allows. Where the release publishes finer keys than the classes (numeric
quasi-identifiers with risk targets: their groups' means), the release judges a node that would
be the answer so far as it will publish it (``fits``), and a node it refuses is passed over.
The lattice is held to the size limits of a lattice build (``max_nodes``, ``max_memory``:
:mod:`incrowd.generalization._limits`), checked before any node is evaluated; the nodes are
generated one at a time, never all held, and the search stops at the next node once its job
is cancelled (:mod:`incrowd._runtime._cancel`).
"""

from __future__ import annotations

import heapq
import secrets
from dataclasses import dataclass
from typing import Callable, Collection, Iterator, Sequence

import numpy as np

from .._native import sensitive_counts
from .._runtime import check_cancelled
from ..exceptions import DataError, ParameterError
from ..generalization import check_memory, check_nodes, max_suppression_count
from ..privacy import emd as _emd
from . import _risk_targets
from ._models import Judge, Population, judge_of, population_of
from ._prepare import Prepared
from ._spec import ReleaseSpec

#: the advice ending a refusal: publish has no --partial, its lattice shrinks through [levels]
_WAY_OUT = ("fix levels in [levels], or use fewer or coarser categorical quasi-identifiers, or raise "
            "{flag} (Python: {arg}=)")


@dataclass
class GtmChoice:
    levels: dict[str, int]
    class_of: np.ndarray      # (n,) class id at the chosen node
    keep: np.ndarray          # (n,) bool: rows of classes that are published
    suppressed: int
    nodes_evaluated: int
    metric: str = "height"
    metrics: dict | None = None   # every utility metric of the node
    #: with differential_privacy: the sample, the k derived, the budget spent, the seed
    differential_privacy: dict | None = None
    #: k-map's and delta-presence's population table, as the search read it
    population: Population | None = None
    #: (n,) the microaggregation groups inside the classes, where the search made them to judge
    #: the node as released (:data:`Fits`); None: not made yet
    groups: np.ndarray | None = None


#: The release's judgement of a node that passes on its classes, made as the release will
#: publish it (with numeric keys and risk targets: its microaggregation groups' means as keys,
#: whole groups suppressed while a target is missed): None where it is published within the
#: limit, else the refusal the release would give.
Fits = Callable[[GtmChoice], "ParameterError | None"]


@dataclass
class _Bottom:
    """The rows grouped by their level-0 codes (and missing pattern): every node's classes are
    unions of these, so a node is judged on them, not on every row."""

    codes: dict[str, np.ndarray]       # per categorical QI: (B,) level-0 code
    pattern: np.ndarray                # (B,)
    counts: np.ndarray                 # (B,) rows
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # per sensitive column: (bottom, value, rows)
    of_row: np.ndarray                 # (n,) bottom class of each row
    #: what the compiled node kernels read (:func:`_compiled`), made on first use; False: none
    compiled: _Compiled | bool | None = None
    #: per sensitive column, the largest distance to its reference (:func:`_t_reach`)
    t_reach: list[float] | None = None
    #: the models beyond k, l and t judging a node's classes (:func:`_judge`), made on first use
    judge: Judge | None = None
    #: the population table of k-map and delta-presence, as level-0 codes (:func:`_judge`)
    population: Population | None = None


@dataclass
class _Compiled:
    """The bottom classes as the compiled kernels read them: level-0 codes (B, m), every
    column's level maps stacked (one row per column and level), each row's label count, and per
    sensitive column its reference as int64, or None where the numpy path must judge it."""

    codes0: np.ndarray
    first_key: np.ndarray
    maps: np.ndarray
    row0: np.ndarray
    widths: np.ndarray
    references: list[np.ndarray | None]

    def node(self, prep: Prepared, levels: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        rows = self.row0 + np.fromiter((levels[a] for a in prep.categorical), np.int64, len(prep.categorical))
        return rows, self.widths[rows]


def _compiled(prep: Prepared, bottom: _Bottom) -> _Compiled | None:
    """The compiled kernels' arrays, or None when a node's key could pass int64 (the numpy
    path renumbers the key as it grows)."""
    if bottom.compiled is None:
        hier = [prep.hierarchies[a] for a in prep.categorical]
        bound = int(bottom.pattern.max(initial=0)) + 1
        for h in hier:
            bound *= max(int(x.size) for x in h.labels)
        if bound >= 2**62:
            bottom.compiled = False
            return None
        maps = [h.code_map(level).astype(np.int64) for h in hier for level in range(h.depth)]
        table = np.zeros((len(maps), max((x.size for x in maps), default=1)), np.int64)
        for i, code_map in enumerate(maps):
            table[i, : code_map.size] = code_map
        depths = [h.depth for h in hier]
        references: list[np.ndarray | None] = []
        for s in prep.sensitive:
            ref = np.ascontiguousarray(s.reference_counts, dtype=np.int64)
            n_ref, m = int(ref.sum()), int(ref.size)
            # the kernel sums the distance's numerator in int64 and walks all m values of an
            # ordered column per class: elsewhere emd_pairs (floats, runs) judges the column
            fits = m == s.n_values and m * n_ref * n_ref < 2**62 and not (_reads_distance(prep) and s.ordered
                                                                          and m > 1024)
            references.append(ref if fits else None)
        codes0 = (np.column_stack([bottom.codes[a] for a in prep.categorical]).astype(np.int64)
                  if hier else np.zeros((bottom.counts.size, 0), np.int64))
        bottom.compiled = _Compiled(
            np.ascontiguousarray(codes0), np.ascontiguousarray(bottom.pattern, dtype=np.int64), table,
            np.concatenate([[0], np.cumsum(depths)[:-1]]).astype(np.int64) if hier else np.zeros(0, np.int64),
            np.array([int(h.labels[level].size) for h in hier for level in range(h.depth)], np.int64),
            references)
    return bottom.compiled if isinstance(bottom.compiled, _Compiled) else None


def _radix_key(first: np.ndarray, digits) -> np.ndarray:
    """One int64 key per row for the tuple (first, *codes): ``digits`` gives (codes, width)
    pairs; the key is renumbered densely before a digit would carry it past int64."""
    key = first.astype(np.int64)
    for codes, width in digits:
        if key.max(initial=0) >= 2**62 // max(width, 1):
            key = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)
        key = key * width + codes.astype(np.int64)
    return key


def _bottom(prep: Prepared) -> _Bottom:
    key = _radix_key(prep.pattern, ((prep.codes0[a], int(prep.hierarchies[a].labels[0].size))
                                    for a in prep.categorical))
    _, first, of_row = np.unique(key, return_index=True, return_inverse=True)
    of_row = of_row.ravel()
    n_bottom = first.size
    pairs = []
    for s in prep.sensitive:  # sparse: a many-valued numeric column never makes a dense matrix
        m = s.n_values
        keys, counts = np.unique(of_row * m + s.codes, return_counts=True)
        pairs.append((keys // m, keys % m, counts.astype(np.int64)))
    return _Bottom({a: prep.codes0[a][first] for a in prep.categorical}, prep.pattern[first],
                   np.bincount(of_row, minlength=n_bottom), pairs, of_row)


def bottom_counts(prep: Prepared) -> _Bottom:
    """A part's bottom classes (its rows grouped by their level-0 codes and missing pattern)."""
    return _bottom(prep)


def combine_bottoms(prep: Prepared, parts: Sequence[_Bottom]) -> tuple[_Bottom, list[np.ndarray]]:
    """The bottom classes of a file from its parts' (in part order): the same classes, in the
    same order, with the same rows and sensitive pairs as :func:`_bottom` of the whole file; and
    per part, the number in the file of each of its bottom classes."""
    codes = {a: np.concatenate([p.codes[a] for p in parts]) for a in prep.categorical}
    pattern = np.concatenate([p.pattern for p in parts])
    key = _radix_key(pattern, ((codes[a], int(prep.hierarchies[a].labels[0].size)) for a in prep.categorical))
    _, first, number = np.unique(key, return_index=True, return_inverse=True)
    number = number.ravel().astype(np.int64)
    n_bottom = first.size
    counts = np.bincount(number, weights=np.concatenate([p.counts for p in parts]), minlength=n_bottom)
    bounds = np.cumsum([0] + [p.counts.size for p in parts])
    maps = [number[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    pairs = []
    for i, s in enumerate(prep.sensitive):
        m = s.n_values
        keys = np.concatenate([w[p.pairs[i][0]] * m + p.pairs[i][1] for p, w in zip(parts, maps)])
        rows = np.concatenate([p.pairs[i][2] for p in parts])
        distinct, where = np.unique(keys, return_inverse=True)
        total = np.bincount(where.ravel(), weights=rows, minlength=distinct.size).astype(np.int64)
        pairs.append((distinct // m, distinct % m, total))
    bottom = _Bottom({a: codes[a][first] for a in prep.categorical}, pattern[first], counts.astype(np.int64), pairs,
                     np.arange(n_bottom, dtype=np.int64))
    return bottom, maps


def _classes(prep: Prepared, bottom: _Bottom, levels: dict[str, int]) -> tuple[np.ndarray, int]:
    """Class id of each bottom class at ``levels``, and the class count."""
    fast = _compiled(prep, bottom)
    if fast is not None:  # the same ids as the numpy path's np.unique, by hashing
        from ..generalization import node_classes

        class_of, _, n_classes = node_classes(fast.codes0, fast.first_key, fast.maps, *fast.node(prep, levels))
        return class_of, int(n_classes)
    hier = prep.hierarchies
    key = _radix_key(bottom.pattern, ((hier[a].code_map(levels[a])[bottom.codes[a]],
                                       int(hier[a].labels[levels[a]].size)) for a in prep.categorical))
    _, class_of = np.unique(key, return_inverse=True)
    class_of = class_of.ravel().astype(np.int64)
    return class_of, int(class_of.max()) + 1


def _failing(prep: Prepared, bottom: _Bottom, class_of: np.ndarray, n_classes: int,
             within: int | None = None, levels: dict[str, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(per class: True when it cannot be published, per class: rows). With ``within``, a node
    whose classes below k alone hold more rows is answered without l and t (a failure they add
    only suppresses more), so its flags may be incomplete."""
    monotone, far, sizes = _fails(prep, bottom, class_of, n_classes, within, levels=levels)
    return monotone | far, sizes


def _fails(prep: Prepared, bottom: _Bottom, class_of: np.ndarray, n_classes: int,
           within: int | None = None, excess: np.ndarray | None = None,
           levels: dict[str, int] | None = None,
           floor_only: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_failing`'s flags in two parts: failing k or l (a coarser class fails them only
    when all its parts do, so these rows never grow going down the lattice), failing only t (a
    coarser class may fail t where some of its parts pass); and the rows per class.

    ``excess`` (per class, zeros), when given, receives for t (and each model with a split
    floor) the least share of a class's rows that fail it in any split of the class into
    smaller classes (:func:`_t_floor`). ``floor_only``: what a floor needs and nothing more (the
    other models' failing classes and the release's check left out)."""
    spec = prep.spec
    sizes = np.bincount(class_of, weights=bottom.counts, minlength=n_classes).astype(np.int64)
    bad = sizes < spec.k
    far = np.zeros(n_classes, dtype=bool)
    if within is not None and int(sizes[bad].sum()) > within:
        return bad, far, sizes
    fast = _compiled(prep, bottom)
    merging = spec.merging_models
    with_distance = _reads_distance(prep)
    for i, (s, (b, value, count)) in enumerate(zip(prep.sensitive, bottom.pairs)):
        if not merging:
            break
        distinct = np.zeros(n_classes, np.int64)
        distance = np.zeros(n_classes)
        if fast is not None and fast.references[i] is not None:
            # the numpy lines below in one pass over the pairs: the same counts and distances
            sensitive_counts(class_of, n_classes, b, value, count, fast.references[i], bool(s.ordered),
                             bool(s.missing), with_distance, distinct, distance)
        else:
            m = s.n_values
            keys, where = np.unique(class_of[b] * m + value, return_inverse=True)
            per_pair = np.bincount(where.ravel(), weights=count).astype(np.int64)
            cls, val = keys // m, keys % m
            # a missing value (the last code) is never a distinct value
            distinct = np.bincount(cls[val != m - 1] if s.missing else cls, minlength=n_classes)
            if with_distance:
                # exactly the verifier's distance (integer counts, one rounding), so a class kept
                # here is one the merging can make pass and the verification accepts
                distance = _emd.emd_pairs(cls, val, per_pair, n_classes, s.reference_counts.astype(np.int64),
                                          s.ordered)
        for model in merging:
            fails = model.merge_gap(distinct, distance) > _emd.TOLERANCE
            if model.monotone_suppression:  # a failing class's parts all fail: they never grow going down
                bad |= fails
                continue
            far |= fails
            if excess is not None:
                share = model.merge_share(distinct, distance, _t_reach(prep, bottom)[i])
                if share is not None:
                    np.maximum(excess, share, out=excess)
    judge = _judge(prep, bottom)
    if judge and (not floor_only or (excess is not None and judge.floors)):
        # the other models add to the suppression, and to the floor only where they bound what
        # a class's parts must fail (split_floor), so pruning by the floor stays exact
        population = None
        if bottom.population is not None and levels is not None:  # the population's classes at this node
            population = bottom.population.at(prep, bottom.codes, levels, class_of, n_classes)
        stats = judge.stats(class_of, n_classes, population=population)
        if excess is not None and judge.floors:  # the share of each class its parts must fail
            np.maximum(excess, judge.floor_rows(stats, n_classes) / np.maximum(sizes, 1), out=excess)
        if not floor_only:
            far |= judge.failing_classes(stats, n_classes)
            if judge.release_fails(stats, ~(bad | far)) is not None:
                far[:] = True  # a release its models refuse is no answer, however little it suppresses
    return bad, far, sizes


def _judge(prep: Prepared, bottom: _Bottom) -> Judge:
    if bottom.judge is None:
        weights = None if prep.weights is None else np.bincount(bottom.of_row, weights=prep.weights,
                                                                  minlength=bottom.counts.size)
        bottom.judge = judge_of(prep, bottom.counts, bottom.pairs, weights)
        bottom.population = population_of(prep, bottom.codes, bottom.counts)
    return bottom.judge


def _t_reach(prep: Prepared, bottom: _Bottom) -> list[float]:
    """Per sensitive column, the largest distance any class can have: the distance is convex in
    the class's distribution, so it peaks at a class of one value."""
    if bottom.t_reach is None:
        reach = []
        for s in prep.sensitive:
            ref = np.asarray(s.reference_counts, dtype=np.int64)
            # past a few thousand values the m x m table costs more than a looser bound saves
            reach.append(float(_emd.emd_dense(np.eye(ref.size, dtype=np.int64), ref, s.ordered).max())
                         if 0 < ref.size <= 2048 and (ref > 0).all() else 1.0)
        bottom.t_reach = reach
    return bottom.t_reach


def _reads_distance(prep: Prepared) -> bool:
    """Whether a merging model of the spec reads a class's distance to the column's distribution."""
    return any(model.reads_distribution for model in prep.spec.merging_models)


def _t_floor(sizes: np.ndarray, monotone: np.ndarray, excess: np.ndarray) -> int:
    """Rows every node below a node must suppress, from the node's classes: all of a class
    failing k or l (its parts fail them too), and a share of a class failing t.

    A class C split into parts P: its distribution is their mixture, and the distance to the
    reference is convex, so d(C) <= sum |P|/|C| d(P). A passing part is within t, a failing
    one within the largest distance D, so the failing parts hold at least
    |C| (d(C) - t) / (D - t) rows. Rounded down, with a margin for the float division. The
    other models' floors (:meth:`incrowd.privacy.PrivacyModel.split_floor`: alpha, beta and
    delta bound a value's share the same way) enter ``excess`` as shares of their class."""
    share = np.where(monotone, 1.0, excess * (1.0 - 1e-9))
    return int(np.floor(sizes * share).sum())


def _ranges(prep: Prepared) -> list[tuple[int, int]]:
    """(lowest, highest) level per categorical QI: a level fixed in [levels] is both."""
    from ._recode import informative_top

    fixed = prep.spec.levels or {}
    return [(fixed[a], fixed[a]) if a in fixed else (0, informative_top(prep, a)) for a in prep.categorical]


def nodes(prep: Prepared) -> Iterator[tuple[int, ...]]:
    """Level vectors to try, lowest height first, then in the lattice's order (lexicographic
    within a height), one at a time: the lattice is never held in memory."""
    ranges = _ranges(prep)
    low, high = sum(lo for lo, _ in ranges), sum(hi for _, hi in ranges)
    for height in range(low, high + 1):
        yield from _of_height(ranges, height)


def _of_height(ranges: Sequence[tuple[int, int]], height: int) -> Iterator[tuple[int, ...]]:
    """The vectors within ``ranges`` whose levels sum to ``height``, in lexicographic order;
    an explicit stack, so that many columns never deepen the recursion."""
    m = len(ranges)
    if m == 0:
        if height == 0:
            yield ()
        return
    # the least and most the columns from i on can add
    rest_lo = [0] * (m + 1)
    rest_hi = [0] * (m + 1)
    for i in range(m - 1, -1, -1):
        rest_lo[i] = rest_lo[i + 1] + ranges[i][0]
        rest_hi[i] = rest_hi[i + 1] + ranges[i][1]
    if not rest_lo[0] <= height <= rest_hi[0]:
        return
    vector = [0] * m
    left = [0] * (m + 1)  # height still to place from column i on
    left[0] = height

    def bounds(i: int) -> tuple[int, int]:
        lo, hi = ranges[i]
        return max(lo, left[i] - rest_hi[i + 1]), min(hi, left[i] - rest_lo[i + 1])

    i = 0
    vector[0] = bounds(0)[0]
    while i >= 0:
        if vector[i] > bounds(i)[1]:
            i -= 1
            if i >= 0:
                vector[i] += 1
            continue
        left[i + 1] = left[i] - vector[i]
        if i == m - 1:
            yield tuple(vector)
            vector[i] += 1
            continue
        i += 1
        vector[i] = bounds(i)[0]


def lattice_depths(spec: ReleaseSpec) -> list[int] | None:
    """Levels per categorical QI (1 where [levels] fixes one) read from the spec alone, before
    the data: None when a hierarchy file cannot be read yet (preparing the data names it)."""
    from ..generalization import read_hierarchy

    fixed = spec.levels or {}
    depths = []
    for c in spec.columns.values():
        if c.role != "categorical":
            continue
        if c.name in fixed:
            depths.append(1)
        elif c.intervals is not None:
            depths.append(len(c.intervals) + 2)  # the values, one level per width, then '*'
        elif c.hierarchy is not None:
            try:
                depths.append(read_hierarchy(c.hierarchy, c.name).depth)
            except (DataError, ParameterError, OSError):
                return None
        else:
            depths.append(2)  # flat: the value or '*'
    return depths


def check_spec_nodes(spec: ReleaseSpec, max_nodes: int | None) -> None:
    """The node limit of the generalize-then-microaggregate lattice, from the spec alone."""
    if max_nodes is None or spec.strategy == "joint":
        return
    depths = lattice_depths(spec)
    if depths is not None:
        check_nodes(depths, 1.0, max_nodes, way_out=_WAY_OUT.format(flag="--max-nodes", arg="max_nodes"))


def _check_limits(prep: Prepared, n_bottom: int, max_nodes: int | None, max_memory: int | None) -> None:
    """The lattice build's limits on this lattice, its bottom classes counted: its memory
    estimate is a bound here, as the search holds one node's classes at a time."""
    depths = [hi - lo + 1 for lo, hi in _ranges(prep)]
    check_nodes(depths, 1.0, max_nodes, way_out=_WAY_OUT.format(flag="--max-nodes", arg="max_nodes"))
    check_memory(depths, 1.0, n_bottom, max_memory, n_rows=prep.n, sensitive=bool(prep.sensitive),
                 encoding=False, way_out=_WAY_OUT.format(flag="--max-memory", arg="max_memory"))


def choose(prep: Prepared, *, max_nodes: int | None = None, max_memory: int | None = None,
           bottom: _Bottom | None = None, fits: Fits | None = None) -> GtmChoice:
    """The node (module docstring); ``bottom``: the bottom classes of a partitioned file, summed
    over its partitions (:func:`combine_bottoms`), where ``prep`` holds no rows. ``fits``: the
    release's judgement of a node that passes on its classes (:data:`Fits`), asked only of a
    node that would be the answer so far, in the order the search visits them; a node it
    refuses is passed over, and where it refuses every such node its first refusal (the
    least-loss node's) is raised."""
    dp = next((m for m in prep.spec.models if m.key == "differential_privacy"), None)
    if dp is not None:
        return _differentially_private(prep, dp, max_nodes, max_memory)
    limit = max_suppression_count(prep.spec.max_suppression, prep.n)
    # a node that suppresses every row publishes nothing: never an answer
    within = min(limit, prep.n - 1)
    if bottom is None:
        bottom = _bottom(prep)
    _check_limits(prep, int(bottom.counts.size), max_nodes, max_memory)
    tables = _metric_tables(prep, bottom)
    by_height = prep.spec.metric == "height"
    refusals: list[ParameterError] = []
    best = None if by_height else _choose_by_metric(prep, bottom, tables, within, fits, refusals)
    evaluated = 0 if best is None else best.nodes_evaluated
    height_found = None
    for vector in nodes(prep) if by_height else ():
        check_cancelled()
        height = sum(vector)
        if height_found is not None and height > height_found:
            break
        levels = dict(zip(prep.categorical, vector))
        class_of, n_classes = _classes(prep, bottom, levels)
        bad, sizes = _failing(prep, bottom, class_of, n_classes, within, levels)
        bad = _risk_targets.judged(prep, bottom, levels, class_of, n_classes, bad, sizes, within)
        evaluated += 1
        suppressed = int(sizes[bad].sum())
        if suppressed <= within and (best is None or suppressed < best.suppressed):
            rows_class = class_of[bottom.of_row]
            candidate = GtmChoice(levels, rows_class, ~bad[rows_class], suppressed, 0)
            if _released(candidate, fits, refusals):
                best, height_found = candidate, height
    if best is None:
        if refusals:  # nodes passed on their classes, and the release refused each
            raise refusals[0]
        _risk_targets.refuse(prep, bottom, limit)
        top = ", ".join(f"{a}={hi}" for a, (_, hi) in zip(prep.categorical, _ranges(prep))) or "no categorical column"
        capped = [a for a, (_, hi) in zip(prep.categorical, _ranges(prep)) if hi < prep.hierarchies[a].max_level
                  and not (prep.spec.levels and a in prep.spec.levels)]
        # a column with no hierarchy has no level between its values and "*": it is the one that
        # holds every class at the bottom, so it is the one to name
        flat = [a for a in capped if prep.hierarchies[a].max_level == 1 and no_hierarchy(prep.spec.columns.get(a))]
        if flat:
            have, it = ("has", "it") if len(flat) == 1 else ("have", "them")
            top += (f"; {', '.join(flat)} {have} no hierarchy: give {it} one, or make {it} 'other'/'sensitive', "
                    "or set allow_full_suppression = true (the spec sets it false)")
        elif capped:  # the way out may be the one label the spec forbids
            top += (f"; {', '.join(capped)} stop below their top, which is one label in every row: the spec "
                    "forbids it (allow_full_suppression = false); set it true to allow it")
        levers = _levers(prep.spec)
        if limit >= prep.n:
            raise ParameterError(
                f"every generalization of the categorical quasi-identifiers suppresses all {prep.n} rows, "
                f"even the top ({top}), so nothing would be published; {levers}, or leave "
                "a level free in [levels]")
        raise ParameterError(
            f"no generalization of the categorical quasi-identifiers keeps suppression within "
            f"max_suppression={prep.spec.max_suppression!r} ({limit} rows), not even the top ({top}); "
            f"allow more suppression, {levers}, or leave a level free in [levels]")
    best.nodes_evaluated = evaluated
    if best.metrics is None:
        best.metrics = _metrics_of(prep, bottom, tables, best.levels, within)
    best.population = bottom.population
    return best


def _differentially_private(prep: Prepared, model, max_nodes: int | None, max_memory: int | None) -> GtmChoice:
    """The node SafePub draws (:func:`incrowd.generalization.safepub`: a random sample of the
    rows, the exponential mechanism over the lattice) and the rows it releases: sampled and in a
    class of at least its derived k, then of at least the spec's k (suppressing by the release's
    own class sizes is post-processing: the guarantee holds). ``max_suppression`` does not
    apply: every row not drawn, and every class below k, must go."""
    from ..generalization import safepub

    bottom = _bottom(prep)
    _check_limits(prep, int(bottom.counts.size), max_nodes, max_memory)
    qis = prep.categorical
    # a seed drawn here is one random_state takes back (the spec's range), so the curator can
    # make the same release again
    seed = prep.spec.random_state if prep.spec.random_state is not None else secrets.randbelow(2**32)
    result = safepub([prep.codes0[a] for a in qis], [prep.hierarchies[a] for a in qis], model, seed=seed)
    levels = dict(zip(qis, (int(v) for v in result.levels)))
    class_of, n_classes = _classes(prep, bottom, levels)
    rows_class = class_of[bottom.of_row]
    keep = np.asarray(result.kept, dtype=bool).copy()
    sizes = np.bincount(rows_class[keep], minlength=n_classes)
    keep &= sizes[rows_class] >= prep.spec.k
    choice = GtmChoice(levels, rows_class, keep, int((~keep).sum()), int(result.visited), f"safepub {result.metric}")
    choice.metrics = _sample_metrics(prep, bottom, levels, rows_class, keep, n_classes)
    choice.differential_privacy = {
        "epsilon": model.epsilon, "delta": model.delta, "k": int(result.k), "sampling_probability": result.beta,
        "rows_sampled": int(np.asarray(result.sampled).sum()), "score": result.metric,
        "budget": result.budget.describe(), "seed": result.seed, "nodes_drawn": len(result.path)}
    return choice


def _sample_metrics(prep: Prepared, bottom: _Bottom, levels: dict[str, int], rows_class: np.ndarray,
                    keep: np.ndarray, n_classes: int) -> dict:
    """Every utility metric of a node whose classes are released in part (a sample): each class
    is its released rows and its withheld rows, the latter counted as suppressed."""
    tables = _metric_tables(prep, bottom)
    vector = np.array([levels[a] for a in prep.categorical], dtype=np.int64)
    part = {name: values[0] for name, values in tables.parts(vector.reshape(1, -1)).items()}
    kept = np.bincount(rows_class[keep], minlength=n_classes)
    withheld = np.bincount(rows_class[~keep], minlength=n_classes)
    first = np.zeros(n_classes, np.int64)
    first[rows_class[::-1]] = np.arange(rows_class.size - 1, -1, -1)
    gen = (np.column_stack([prep.hierarchies[a].code_map(levels[a])[prep.codes0[a][first]] for a in prep.categorical])
           if prep.categorical else np.zeros((n_classes, 0), np.int64)).astype(np.int64)
    sizes = np.concatenate([kept, withheld])
    failing = np.concatenate([np.zeros(n_classes, bool), np.ones(n_classes, bool)])
    present = sizes > 0
    both = np.vstack([gen, gen])[present]
    return tables.values(vector, part, sizes[present], failing[present], both, None)


def top_suppression(prep: Prepared, held: Collection[str] = ()) -> int:
    """Rows the most general node the spec allows suppresses: for k alone (monotone), the least
    suppression any node reaches, so the smallest ``max_suppression`` that publishes. The flat
    columns in ``held`` stay at their values (level 0), as if not allowed to end as "*"."""
    bottom = _bottom(prep)
    levels = {a: (lo if a in held else hi) for a, (lo, hi) in zip(prep.categorical, _ranges(prep))}
    class_of, n_classes = _classes(prep, bottom, levels)
    bad, sizes = _failing(prep, bottom, class_of, n_classes, levels=levels)
    return int(sizes[bad].sum())


def no_hierarchy(column) -> bool:
    """Whether a categorical column was given no hierarchy, so it is flat: its value or ``*``."""
    return column is None or (column.hierarchy is None and column.intervals is None)


def _levers(spec) -> str:
    """The privacy parameters a refusal may point at: k always, each model where the spec set it."""
    verbs: dict[str, list[str]] = {"lower": ["k"]}
    for model in spec.privacy_models:
        keys = verbs.setdefault(model.lever, [])
        if model.key not in keys:
            keys.append(model.key)
    return ", ".join(f"{verb} {' or '.join(keys)}" for verb, keys in verbs.items())


def _metric_tables(prep: Prepared, bottom: _Bottom):
    from ..generalization import ColumnTables, check_weights

    hier = [prep.hierarchies[a] for a in prep.categorical]
    marginals = [np.bincount(bottom.codes[a], weights=bottom.counts, minlength=int(h.labels[0].size))
                 for a, h in zip(prep.categorical, hier)]
    return ColumnTables(hier, marginals, check_weights(prep.spec.metric_weights, prep.categorical), prep.n)


def _class_facts(prep: Prepared, bottom: _Bottom, levels: dict[str, int], class_of: np.ndarray, n_classes: int,
                 with_target: bool):
    """Generalized codes per class (C, m) and, with a sensitive column (the target of
    ``classification``: the first one), the rows of each class's unique most frequent value."""
    first = np.zeros(n_classes, np.int64)
    first[class_of] = np.arange(class_of.size)
    gen = np.column_stack([prep.hierarchies[a].code_map(levels[a])[bottom.codes[a][first]]
                           for a in prep.categorical]) if prep.categorical else np.zeros((n_classes, 0), np.int64)
    major = None
    if with_target and bottom.pairs:
        b, value, count = bottom.pairs[0]
        major = _target_majority(prep, class_of[b], value, count, n_classes)
    return gen.astype(np.int64), major


def _target_majority(prep: Prepared, pair_class: np.ndarray, value: np.ndarray, count: np.ndarray,
                     n_classes: int) -> np.ndarray:
    """Per class, the rows of its unique most frequent value of the target (the first sensitive
    column), from (class, value, rows) triples."""
    from ..generalization import majority

    width = int(prep.sensitive[0].n_values)
    keys, where = np.unique(pair_class * width + value, return_inverse=True)
    rows = np.bincount(where.ravel(), weights=count).astype(np.int64)
    return majority(keys // width, rows, n_classes)


def _metrics_of(prep: Prepared, bottom: _Bottom, tables, levels: dict[str, int], within: int | None = None) -> dict:
    """Every utility metric of the node ``levels`` over the categorical quasi-identifiers."""
    vector = np.array([[levels[a] for a in prep.categorical]], dtype=np.int64).reshape(1, -1)
    class_of, n_classes = _classes(prep, bottom, levels)
    bad, sizes = _failing(prep, bottom, class_of, n_classes, levels=levels)
    bad = _risk_targets.judged(prep, bottom, levels, class_of, n_classes, bad, sizes, within)
    gen, major = _class_facts(prep, bottom, levels, class_of, n_classes, True)
    part = {name: values[0] for name, values in tables.parts(vector).items()}
    return tables.values(vector[0], part, sizes, bad, gen, major)


def cell_metrics(prep: Prepared, choice: GtmChoice, blank: np.ndarray) -> dict:
    """Every utility metric of a cell release (``choice`` after its blanks; ``blank``: rows x
    categorical QIs): the classes as published (a blank a value of the class's key), the rows
    of too small missing patterns suppressed, and each blanked cell costing in ``loss``,
    ``precision`` and ``entropy`` what a cell of a suppressed row costs."""
    bottom = _bottom(prep)
    tables = _metric_tables(prep, bottom)
    vector = np.array([choice.levels[a] for a in prep.categorical], dtype=np.int64)
    part = {name: values[0] for name, values in tables.parts(vector.reshape(1, -1)).items()}
    class_of = choice.class_of
    n_classes = int(class_of.max()) + 1
    sizes = np.bincount(class_of, minlength=n_classes)
    failing = np.zeros(n_classes, dtype=bool)
    failing[class_of[~choice.keep]] = True  # a class is a missing pattern's: kept whole or not at all
    first = np.zeros(n_classes, np.int64)
    first[class_of[::-1]] = np.arange(class_of.size - 1, -1, -1)
    at_level = {a: prep.hierarchies[a].code_map(choice.levels[a])[prep.codes0[a]].astype(np.int64)
                for a in prep.categorical}
    gen = np.column_stack([at_level[a][first] for a in prep.categorical])
    major = None
    if prep.sensitive:  # the target of classification
        major = _target_majority(prep, class_of, prep.sensitive[0].codes, np.ones(class_of.size), n_classes)
    out = tables.values(vector, part, sizes, failing, gen, major)
    published = blank & choice.keep[:, None]
    extra = tables.blank_costs(vector, [at_level[a][published[:, j]] for j, a in enumerate(prep.categorical)])
    for name, cost in extra.items():
        out[name] = float(out[name] + cost)
    return out


def _released(choice: GtmChoice, fits: Fits | None, refusals: list[ParameterError]) -> bool:
    """Whether the release publishes ``choice`` (always, without ``fits``); the first refusal is
    kept in ``refusals`` for when no node is published."""
    if fits is None:
        return True
    refusal = fits(choice)
    if refusal is None:
        return True
    if not refusals:
        refusals.append(refusal)
    return False


def _choose_by_metric(prep: Prepared, bottom: _Bottom, tables, within: int, fits: Fits | None = None,
                      refusals: list[ParameterError] | None = None) -> GtmChoice | None:
    """The least-metric node within the limit that the release publishes (``fits``): best
    first by a lower bound (see the module)."""
    metric = prep.spec.metric
    if metric == "classification" and not prep.sensitive:
        raise ParameterError("metric \"classification\" needs a column with role \"sensitive\" (its target)")
    ranges = _ranges(prep)
    grids = np.meshgrid(*[np.arange(lo, hi + 1) for lo, hi in ranges], indexing="ij")
    levels = (np.stack([g.ravel() for g in grids], axis=1) if ranges else np.zeros((1, 0))).astype(np.int64)
    parts = tables.parts(levels)
    bound = tables.bound(metric, parts)
    if bound is None:  # every node's classes are unions of the bottom classes
        floor = {"discernibility": float(np.sum(bottom.counts.astype(np.float64) ** 2)),
                 "aecs": prep.n / max(int(bottom.counts.size), 1)}.get(metric, 0.0)
        bound = np.full(levels.shape[0], floor)
    heights = levels.sum(axis=1)
    # the sum of squared class sizes and n / classes, suppression left out, only grow going up
    # (classes merge) and bound the metric from below: a node evaluated raises its ancestors' bounds
    raise_bounds = metric in ("discernibility", "aecs")
    heap = [(float(bound[v]), int(heights[v]), int(v)) for v in range(levels.shape[0])]
    heapq.heapify(heap)
    # nodes that cannot pass: below a node whose floor (_t_floor) passes the limit
    dead = np.zeros(levels.shape[0], dtype=bool)
    # without t the floor never grows going up: a node whose floor passes vouches for those above
    # (a model whose parts' floor is a share, as t's, may see it grow going up too)
    floor_ok = (np.zeros(levels.shape[0], dtype=bool)
                if all(m.monotone_suppression for m in prep.spec.merging_models) and not _judge(prep, bottom).floors
                else None)
    # each node's floor against the limit, once known (-1: not yet), shared by every climb
    floor_seen = np.full(levels.shape[0], -1, dtype=np.int8)
    best, best_key, evaluated = None, None, 0
    while heap:
        check_cancelled()
        b, h, v = heapq.heappop(heap)
        if b < bound[v]:  # raised since it was queued
            heapq.heappush(heap, (float(bound[v]), h, v))
            continue
        if best_key is not None and bound[v] > best_key[0]:
            break
        lv = levels[v]
        if dead[v]:
            continue
        chosen = dict(zip(prep.categorical, lv.tolist()))
        class_of, n_classes = _classes(prep, bottom, chosen)
        excess = np.zeros(n_classes)
        monotone, far, sizes = _fails(prep, bottom, class_of, n_classes, within, excess, chosen)
        bad = _risk_targets.judged(prep, bottom, chosen, class_of, n_classes, monotone | far, sizes, within)
        evaluated += 1
        suppressed = int(sizes[bad].sum())
        if raise_bounds:
            floor = (float(np.sum(sizes.astype(np.float64) ** 2)) if metric == "discernibility"
                     else prep.n / max(n_classes, 1))
            above = np.all(levels >= lv, axis=1)
            bound[above] = np.maximum(bound[above], floor)
        if suppressed > within:
            if _t_floor(sizes, monotone, excess) > within:
                dead |= np.all(levels <= lv, axis=1)
                evaluated += _climb(prep, bottom, levels, lv, within, dead, ranges, floor_ok, floor_seen)
            continue
        gen, major = _class_facts(prep, bottom, chosen, class_of, n_classes, metric == "classification")
        part = {name: values[v] for name, values in parts.items()}
        value = tables.values(lv, part, sizes, bad, gen, major)[metric]
        key = (value, int(heights[v]), suppressed, int(v))
        if best_key is None or key < best_key:
            rows_class = class_of[bottom.of_row]
            candidate = GtmChoice(chosen, rows_class, ~bad[rows_class], suppressed, 0, metric)
            if _released(candidate, fits, refusals if refusals is not None else []):
                best, best_key = candidate, key
    if best is not None:
        best.nodes_evaluated = evaluated
    return best


def _climb(prep: Prepared, bottom: _Bottom, levels: np.ndarray, lv: np.ndarray, within: int, dead: np.ndarray,
           ranges: Sequence[tuple[int, int]], floor_ok: np.ndarray | None, floor_seen: np.ndarray) -> int:
    """From ``lv``, whose :func:`_t_floor` passes the limit, a node high on a chain up to the
    top whose floor still does, its down-set marked ``dead``; returns the nodes evaluated.

    Best first by a bound that grows with the levels meets the nodes below the first that
    passes one by one; a node high above them that fails rules them all out at once. Without
    t the floor is the rows failing k or l, which never grow going up, so the nodes over the
    limit are a prefix of the chain and a binary search finds the highest; with t it finds one.
    ``floor_ok`` (without t): nodes known to pass, marked here as found; ``floor_seen``: per
    node, whether its floor is over the limit (1), not (0) or not yet known (-1), kept across
    climbs so that no node's floor is computed twice.
    """
    chain = [lv.copy()]
    step = lv.copy()
    while True:  # one level at a time, the columns in turn, so the chain stays near the diagonal
        raised = False
        for j, (_, hi) in enumerate(ranges):
            if step[j] < hi:
                step[j] += 1
                chain.append(step.copy())
                raised = True
        if not raised:
            break
    count = [0]

    # levels holds the grid of ranges in C order: a node's row is its offsets' mixed-radix number
    widths = np.array([hi - lo + 1 for lo, hi in ranges], dtype=np.int64)
    strides = np.concatenate([np.cumprod(widths[::-1])[::-1][1:], [1]]).astype(np.int64) if widths.size else widths
    low = np.array([lo for lo, _ in ranges], dtype=np.int64)

    def over(node: np.ndarray) -> bool:
        at = int(np.dot(node - low, strides)) if widths.size else 0
        if dead[at]:
            return True
        if floor_ok is not None and floor_ok[at]:
            return False
        if floor_seen[at] >= 0:  # a climb before this one evaluated it
            return bool(floor_seen[at])
        check_cancelled()
        at_node = dict(zip(prep.categorical, node.tolist()))
        class_of, n_classes = _classes(prep, bottom, at_node)
        excess = np.zeros(n_classes)
        # only the floor: which classes the other models refuse does not change it
        monotone, _, sizes = _fails(prep, bottom, class_of, n_classes, within, excess, at_node, floor_only=True)
        count[0] += 1
        floor_seen[at] = _t_floor(sizes, monotone, excess) > within
        if floor_seen[at]:
            return True
        if floor_ok is not None:
            floor_ok[np.all(levels >= node, axis=1)] = True
        return False

    lo, hi_i = 0, len(chain)
    while hi_i - lo > 1:
        mid = (lo + hi_i) // 2
        if over(chain[mid]):
            lo = mid
        else:
            hi_i = mid
    top = chain[lo]
    moved = True
    while moved:  # then up one column at a time while the floor stays over the limit
        moved = False
        for j, (_, hi) in enumerate(ranges):
            if top[j] < hi:
                parent = top.copy()
                parent[j] += 1
                if over(parent):
                    top, moved = parent, True
                    break
    if not np.array_equal(top, lv):
        dead |= np.all(levels <= top, axis=1)
    return count[0]


def microaggregate_classes(prep: Prepared, choice: GtmChoice) -> np.ndarray:
    """Group id per row (-1 for suppressed rows): the method's groups inside each kept class."""
    spec = prep.spec
    labels = np.full(prep.n, -1, np.int64)
    rows = np.flatnonzero(choice.keep)
    if rows.size == 0:
        return labels
    order = rows[np.argsort(choice.class_of[rows], kind="stable")]
    bounds = np.flatnonzero(np.diff(choice.class_of[order])) + 1
    estimator = None
    # without a numeric column every class is one group: loading the methods (a second or so in
    # a fresh process) is left out, unless [method_params] asks for its check
    if prep.numeric or spec.method_params:
        from ..microaggregation import make_estimator

        estimator = make_estimator(spec.method, spec.k, spec.random_state, **spec.method_params)
        estimator._check_params()
    next_id = 0
    for members in np.split(order, bounds):
        check_cancelled()
        present = prep.pattern_masks[int(prep.pattern[members[0]])]
        if estimator is None or members.size < 2 * spec.k or not present.any():
            labels[members] = next_id
            next_id += 1
            continue
        Z = np.ascontiguousarray(prep.Z[np.ix_(members, np.flatnonzero(present))])
        rng = np.random.default_rng(spec.random_state)
        local = np.asarray(estimator._labels(Z, spec.k, rng), dtype=np.int64)
        _, local = np.unique(local, return_inverse=True)
        labels[members] = next_id + local.ravel()
        next_id += int(local.max()) + 1
    return labels
