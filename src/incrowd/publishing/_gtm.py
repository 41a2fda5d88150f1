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
Without t, a node over the limit rules out every node below it (its classes are unions of
theirs, so they suppress at least as many rows).

A node that suppresses every row publishes nothing, so it is never the answer, whatever
``max_suppression`` allows. The lattice is held to the size limits of a lattice build
(``max_nodes``, ``max_memory``: :mod:`incrowd.generalization._limits`), checked before any node
is evaluated; the nodes are generated one at a time, never all held, and the search stops at
the next node once its job is cancelled (:mod:`incrowd._runtime._cancel`).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from .. import _emd
from .._runtime import check_cancelled
from ..exceptions import DataError, ParameterError
from ..generalization._limits import check_memory, check_nodes
from ..generalization._negotiate import max_suppression_count
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


@dataclass
class _Bottom:
    """The rows grouped by their level-0 codes (and missing pattern): every node's classes are
    unions of these, so a node is judged on them, not on every row."""

    codes: dict[str, np.ndarray]       # per categorical QI: (B,) level-0 code
    pattern: np.ndarray                # (B,)
    counts: np.ndarray                 # (B,) rows
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # per sensitive column: (bottom, value, rows)
    of_row: np.ndarray                 # (n,) bottom class of each row


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


def _classes(prep: Prepared, bottom: _Bottom, levels: dict[str, int]) -> tuple[np.ndarray, int]:
    """Class id of each bottom class at ``levels``, and the class count."""
    hier = prep.hierarchies
    key = _radix_key(bottom.pattern, ((hier[a].code_map(levels[a])[bottom.codes[a]],
                                       int(hier[a].labels[levels[a]].size)) for a in prep.categorical))
    _, class_of = np.unique(key, return_inverse=True)
    class_of = class_of.ravel().astype(np.int64)
    return class_of, int(class_of.max()) + 1


def _failing(prep: Prepared, bottom: _Bottom, class_of: np.ndarray, n_classes: int,
             within: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(per class: True when it cannot be published, per class: rows). With ``within``, a node
    whose classes below k alone hold more rows is answered without l and t (a failure they add
    only suppresses more), so its flags may be incomplete."""
    spec = prep.spec
    sizes = np.bincount(class_of, weights=bottom.counts, minlength=n_classes).astype(np.int64)
    bad = sizes < spec.k
    if within is not None and int(sizes[bad].sum()) > within:
        return bad, sizes
    for s, (b, value, count) in zip(prep.sensitive, bottom.pairs):
        if spec.l is None and spec.t is None:
            break
        m = s.n_values
        keys, where = np.unique(class_of[b] * m + value, return_inverse=True)
        per_pair = np.bincount(where.ravel(), weights=count).astype(np.int64)
        cls, val = keys // m, keys % m
        if spec.l is not None:  # a missing value (the last code) is never a distinct value
            bad |= np.bincount(cls[val != m - 1] if s.missing else cls, minlength=n_classes) < spec.l
        if spec.t is not None:
            # exactly the verifier's distance (integer counts, one rounding), so a class kept
            # here is one the merging can make pass and the verification accepts
            distance = _emd.emd_pairs(cls, val, per_pair, n_classes, s.reference_counts.astype(np.int64),
                                      s.ordered)
            bad |= _emd.exceeds(distance, spec.t)
    return bad, sizes


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
    from ..generalization._hierarchy import read_hierarchy

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


def choose(prep: Prepared, *, max_nodes: int | None = None, max_memory: int | None = None) -> GtmChoice:
    limit = max_suppression_count(prep.spec.max_suppression, prep.n)
    # a node that suppresses every row publishes nothing: never an answer
    within = min(limit, prep.n - 1)
    bottom = _bottom(prep)
    _check_limits(prep, int(bottom.counts.size), max_nodes, max_memory)
    tables = _metric_tables(prep, bottom)
    by_height = prep.spec.metric == "height"
    best = None if by_height else _choose_by_metric(prep, bottom, tables, within)
    evaluated = 0 if best is None else best.nodes_evaluated
    height_found = None
    for vector in nodes(prep) if by_height else ():
        check_cancelled()
        height = sum(vector)
        if height_found is not None and height > height_found:
            break
        levels = dict(zip(prep.categorical, vector))
        class_of, n_classes = _classes(prep, bottom, levels)
        bad, sizes = _failing(prep, bottom, class_of, n_classes, within)
        evaluated += 1
        suppressed = int(sizes[bad].sum())
        if suppressed <= within and (best is None or suppressed < best.suppressed):
            rows_class = class_of[bottom.of_row]
            best = GtmChoice(levels, rows_class, ~bad[rows_class], suppressed, 0)
            height_found = height
    if best is None:
        top = ", ".join(f"{a}={hi}" for a, (_, hi) in zip(prep.categorical, _ranges(prep))) or "no categorical column"
        capped = [a for a, (_, hi) in zip(prep.categorical, _ranges(prep)) if hi < prep.hierarchies[a].max_level
                  and not (prep.spec.levels and a in prep.spec.levels)]
        # a column with no hierarchy has no level between its values and "*": it is the one that
        # holds every class at the bottom, so it is the one to name
        flat = [a for a in capped if prep.hierarchies[a].max_level == 1 and no_hierarchy(prep.spec.columns.get(a))]
        if flat:
            have, it = ("has", "it") if len(flat) == 1 else ("have", "them")
            top += (f"; {', '.join(flat)} {have} no hierarchy: give {it} one, or make {it} 'other'/'sensitive', "
                    "or allow_full_suppression = true")
        elif capped:  # the way out may be the one label the spec refuses by default
            top += (f"; {', '.join(capped)} stop below their top, which is one label in every row: allow it "
                    "with allow_full_suppression = true")
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
        best.metrics = _metrics_of(prep, bottom, tables, best.levels)
    return best


def top_suppression(prep: Prepared) -> int:
    """Rows the most general node the spec allows suppresses: for k alone (monotone), the least
    suppression any node reaches, so the smallest ``max_suppression`` that publishes."""
    bottom = _bottom(prep)
    levels = {a: hi for a, (_, hi) in zip(prep.categorical, _ranges(prep))}
    class_of, n_classes = _classes(prep, bottom, levels)
    bad, sizes = _failing(prep, bottom, class_of, n_classes)
    return int(sizes[bad].sum())


def no_hierarchy(column) -> bool:
    """Whether a categorical column was given no hierarchy, so it is flat: its value or ``*``."""
    return column is None or (column.hierarchy is None and column.intervals is None)


def _levers(spec) -> str:
    """The privacy parameters a refusal may point at: k always, l and t only where the spec set them."""
    lowered = ["k"] + (["l"] if spec.l is not None else [])
    said = f"lower {' or '.join(lowered)}"
    return said + (", raise t" if spec.t is not None else "")


def _metric_tables(prep: Prepared, bottom: _Bottom):
    from ..generalization._utility_metrics import ColumnTables

    hier = [prep.hierarchies[a] for a in prep.categorical]
    marginals = [np.bincount(bottom.codes[a], weights=bottom.counts, minlength=int(h.labels[0].size))
                 for a, h in zip(prep.categorical, hier)]
    return ColumnTables(hier, marginals, np.ones(len(hier)), prep.n)


def _class_facts(prep: Prepared, bottom: _Bottom, levels: dict[str, int], class_of: np.ndarray, n_classes: int,
                 with_target: bool):
    """Generalized codes per class (C, m) and, with a sensitive column (the target of
    ``classification``: the first one), the rows of each class's unique most frequent value."""
    from ..generalization._utility_metrics import majority

    first = np.zeros(n_classes, np.int64)
    first[class_of] = np.arange(class_of.size)
    gen = np.column_stack([prep.hierarchies[a].code_map(levels[a])[bottom.codes[a][first]]
                           for a in prep.categorical]) if prep.categorical else np.zeros((n_classes, 0), np.int64)
    major = None
    if with_target and bottom.pairs:
        b, value, count = bottom.pairs[0]
        width = int(prep.sensitive[0].n_values)
        keys, where = np.unique(class_of[b] * width + value, return_inverse=True)
        rows = np.bincount(where.ravel(), weights=count).astype(np.int64)
        major = majority(keys // width, rows, n_classes)
    return gen.astype(np.int64), major


def _metrics_of(prep: Prepared, bottom: _Bottom, tables, levels: dict[str, int]) -> dict:
    """Every utility metric of the node ``levels`` over the categorical quasi-identifiers."""
    vector = np.array([[levels[a] for a in prep.categorical]], dtype=np.int64).reshape(1, -1)
    class_of, n_classes = _classes(prep, bottom, levels)
    bad, sizes = _failing(prep, bottom, class_of, n_classes)
    gen, major = _class_facts(prep, bottom, levels, class_of, n_classes, True)
    part = {name: values[0] for name, values in tables.parts(vector).items()}
    return tables.values(vector[0], part, sizes, bad, gen, major)


def _choose_by_metric(prep: Prepared, bottom: _Bottom, tables, within: int) -> GtmChoice | None:
    """The least-metric node within the limit: best first by a lower bound (see the module)."""
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
    prune = prep.spec.t is None  # with t, a coarser class may fail where its parts pass
    failed: list[np.ndarray] = []
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
        if prune and failed and np.any(np.all(lv <= np.asarray(failed), axis=1)):
            continue
        chosen = dict(zip(prep.categorical, lv.tolist()))
        class_of, n_classes = _classes(prep, bottom, chosen)
        bad, sizes = _failing(prep, bottom, class_of, n_classes, within)
        evaluated += 1
        suppressed = int(sizes[bad].sum())
        if raise_bounds:
            floor = (float(np.sum(sizes.astype(np.float64) ** 2)) if metric == "discernibility"
                     else prep.n / max(n_classes, 1))
            above = np.all(levels >= lv, axis=1)
            bound[above] = np.maximum(bound[above], floor)
        if suppressed > within:
            failed.append(lv)
            continue
        gen, major = _class_facts(prep, bottom, chosen, class_of, n_classes, metric == "classification")
        part = {name: values[v] for name, values in parts.items()}
        value = tables.values(lv, part, sizes, bad, gen, major)[metric]
        key = (value, int(heights[v]), suppressed, int(v))
        if best_key is None or key < best_key:
            rows_class = class_of[bottom.of_row]
            best, best_key = GtmChoice(chosen, rows_class, ~bad[rows_class], suppressed, 0, metric), key
    if best is not None:
        best.nodes_evaluated = evaluated
    return best


def microaggregate_classes(prep: Prepared, choice: GtmChoice) -> np.ndarray:
    """Group id per row (-1 for suppressed rows): the method's groups inside each kept class."""
    from .._microaggregate import make_estimator

    spec = prep.spec
    labels = np.full(prep.n, -1, np.int64)
    rows = np.flatnonzero(choice.keep)
    if rows.size == 0:
        return labels
    order = rows[np.argsort(choice.class_of[rows], kind="stable")]
    bounds = np.flatnonzero(np.diff(choice.class_of[order])) + 1
    estimator = make_estimator(spec.method, spec.k, spec.random_state, **spec.method_params)
    estimator._check_params()
    next_id = 0
    for members in np.split(order, bounds):
        check_cancelled()
        present = prep.pattern_masks[int(prep.pattern[members[0]])]
        if members.size < 2 * spec.k or not present.any():
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
