"""Utility metrics of a generalization node, and the search for the node with the least one.

Each metric is a loss (lower is better) of a full-domain generalization with suppression, over
the ``n`` input rows and the ``m`` quasi-identifiers; a suppressed row is a removed row.

- ``loss``: Iyengar's loss metric LM (Iyengar 2002, "Transforming data to satisfy privacy
  constraints"): a cell published as a value with ``L`` leaves under it in a hierarchy of ``M``
  leaves costs ``(L - 1) / (M - 1)``; a cell of a suppressed row costs 1; the mean over the
  ``n x m`` cells of the input (weighted per quasi-identifier when weights are given).
- ``discernibility``: Bayardo & Agrawal's DM (2005): the sum of the squared class sizes of the
  published classes plus ``n`` per suppressed row.
- ``entropy``: ARX's non-monotonic non-uniform entropy (Prasser et al.; ARX
  ``MetricMDNUNMEntropyPrecomputed``, factors 1): per quasi-identifier, the sum over all rows of
  ``-log2(count of the row's value / count of its generalized value)``, plus, over the
  suppressed rows, ``-log2(count of the row's generalized value among the suppressed rows /
  suppressed rows)``; summed over the quasi-identifiers (weighted when weights are given).
- ``aecs``: the average equivalence class size as ARX computes it (LeFevre et al. 2006, not
  normalized): ``n`` over the published classes, the suppressed rows counting as one more class.
- ``precision``: Sweeney's Prec as a loss (2002, "Achieving k-anonymity privacy protection"):
  the mean over the cells of level / the hierarchy's top level, 1 for a suppressed row's cell.
- ``height``: the sum of the levels (the lowest node of the negotiation).
- ``classification``: ARX's classification metric (``MetricSDClassification``, penalties 1),
  with the lattice's sensitive column as the target: a published row whose target value is not
  its class's unique most frequent value costs 1 (every row of a class without a unique most
  frequent value costs 1), a suppressed row costs 1; divided by ``n``.

Every metric of a node comes from the lattice alone: its class sizes, its classes'
generalized values and the per-level leaf counts and value counts, computed with numpy from the
lattice's bottom classes (no data, no numba: ``incrowd negotiate`` stays a plain-Python process).

Search (:func:`best_node`): the node with the least metric among candidates (nodes within the
suppression limit; suppression never grows going up, so they are an up-set of the lattice).
``height``, ``precision``, ``aecs`` and (for k) ``discernibility`` are read for every node from
the histograms at once. ``loss``, ``entropy``, ``classification`` and ``discernibility`` for l
need a node's classes: candidates are visited in order of a lower bound valid for every node
(the generalization part of LM, of the entropy, the sum of squared class sizes without
suppression, 0 for classification), and the search stops at the first node whose bound exceeds
the best value found, as ARX's Flash prunes by bounds. That is exact: a node not visited has a
bound, hence a value, above the answer. Past :data:`MAX_EVALUATIONS` visited nodes the search
stops and returns the best node found with its optimality gap (its value minus the least bound
of the nodes not visited), so the answer is then within that gap of the optimum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from ..exceptions import DataError, ParameterError, name_list
from ..privacy import emd as _emd

if TYPE_CHECKING:
    import pandas as pd

    from ._hierarchy import Hierarchy
    from ._table import LatticeTable

#: the metrics, in the order the JSON lists them
METRICS = ("loss", "discernibility", "entropy", "aecs", "precision", "height", "classification")
"""What a search for the best generalization may minimize (``metric=``, a spec's ``metric``), in
the order the JSON lists them; ``loss`` is the default."""
DEFAULT_METRIC = "loss"
#: past this many nodes whose classes are computed, the search returns its best with the gap
MAX_EVALUATIONS = 20_000


def check_metric(metric: str) -> str:
    """The metric's name, checked: one of :data:`METRICS`."""
    if not isinstance(metric, str) or metric.strip().lower() not in METRICS:
        raise ParameterError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
    return metric.strip().lower()


def check_weights(weights: Mapping[str, float] | None, attributes: Sequence[str]) -> np.ndarray:
    """One weight per quasi-identifier (1 where left out): finite, >= 0, not all 0."""
    out = np.ones(len(attributes))
    if weights is None:
        return out
    if not isinstance(weights, Mapping):
        raise ParameterError(f"weights must map quasi-identifiers to numbers; got {weights!r}")
    unknown = [a for a in weights if a not in attributes]
    if unknown:
        raise ParameterError(f"weights given for {name_list(unknown)}, not quasi-identifiers "
                             f"({name_list(attributes)})")
    for j, a in enumerate(attributes):
        if a in weights:
            w = weights[a]
            if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(w) or w < 0:
                raise ParameterError(f"weight of {a!r} must be a finite number >= 0; got {w!r}")
            out[j] = float(w)
    if out.sum() <= 0:
        raise ParameterError("weights must not all be 0")
    return out


@dataclass
class _Column:
    """One quasi-identifier's per-level tables."""

    maps: list[np.ndarray]       # level-0 code -> code at each level
    cell_loss: list[np.ndarray]  # per level: LM cost of a cell published as that code
    lm_all: np.ndarray           # per level: LM cost of the column over all rows
    entropy_all: np.ndarray      # per level: the entropy's generalization part over all rows
    precision: np.ndarray        # per level: level / top level
    sizes: list[int]             # labels per level


def _column(hierarchy: Hierarchy, marginal: np.ndarray) -> _Column:
    leaves_total = int(hierarchy.labels[0].size)
    maps, cell_loss, lm_all, entropy_all = [], [], [], []
    a = marginal.astype(np.float64)
    for level in range(hierarchy.depth):
        code_map = hierarchy.code_map(level).astype(np.int64)
        size = int(hierarchy.labels[level].size)
        leaves = np.bincount(code_map, minlength=size)
        loss = (leaves - 1) / (leaves_total - 1) if leaves_total > 1 else np.zeros(size)
        maps.append(code_map)
        cell_loss.append(loss)
        lm_all.append(float(np.dot(a, loss[code_map])))
        b = np.bincount(code_map, weights=a, minlength=size)[code_map]
        present = a > 0
        entropy_all.append(float(np.sum(a[present] * np.log2(b[present] / a[present]))))
    top = hierarchy.max_level
    precision = np.arange(hierarchy.depth) / top if top > 0 else np.zeros(hierarchy.depth)
    return _Column(maps, cell_loss, np.array(lm_all), np.array(entropy_all), precision,
                   [int(x.size) for x in hierarchy.labels])


class ColumnTables:
    """The per-level tables of some quasi-identifiers (hierarchies, value counts over all rows,
    weights) and the metrics of a node computed from its classes: what the lattice's search and
    publish's generalize-then-microaggregate search share."""

    def __init__(self, hierarchies: Sequence[Hierarchy], marginals: Sequence[np.ndarray], weights: np.ndarray,
                 n_rows: int):
        self.columns = [_column(h, np.asarray(a)) for h, a in zip(hierarchies, marginals)]
        self.weights = weights
        self.n = int(n_rows)

    @property
    def weight_sum(self) -> float:
        # without a quasi-identifier to generalize (a numeric-only release) every cell part is
        # 0: dividing by 1 keeps the loss and the precision 0 rather than 0/0
        return float(self.weights.sum()) or 1.0

    def parts(self, levels: np.ndarray) -> dict[str, np.ndarray]:
        """Per node (rows of ``levels``), the parts of the metrics that depend on the levels alone."""
        w = self.weights
        zero = np.zeros(levels.shape[0])
        cols = list(enumerate(self.columns))
        return {
            "lm_all": sum((w[j] * c.lm_all[levels[:, j]] for j, c in cols), zero),
            "entropy_all": sum((w[j] * c.entropy_all[levels[:, j]] for j, c in cols), zero),
            "precision_all": sum((w[j] * c.precision[levels[:, j]] for j, c in cols), zero),
            "free_precision": sum((w[j] * (1.0 - c.precision[levels[:, j]]) for j, c in cols), zero),
            "heights": levels.sum(axis=1).astype(np.float64) if levels.shape[1] else zero,
        }

    def bound(self, metric: str, parts: Mapping[str, np.ndarray]) -> np.ndarray | None:
        """The generalization part of ``metric`` (a lower bound), None for the others."""
        n, W = self.n, self.weight_sum
        if metric == "loss":
            return parts["lm_all"] / (n * W)
        if metric == "entropy":
            return np.asarray(parts["entropy_all"], dtype=np.float64)
        if metric == "precision":
            return n * parts["precision_all"] / (n * W)
        if metric == "height":
            return np.asarray(parts["heights"], dtype=np.float64)
        return None

    def values(self, levels: np.ndarray, part: Mapping[str, float], sizes: np.ndarray, failing: np.ndarray,
               gen: np.ndarray, major: np.ndarray | None) -> dict[str, float | None]:
        """Every metric of a node from its classes: sizes, which are suppressed, their
        generalized codes (C, m) and, with a target, the rows of their unique most frequent
        target value (0 where none is unique)."""
        n, w, W = self.n, self.weights, self.weight_sum
        kept = ~failing
        s = int(sizes[failing].sum())
        loss_extra = 0.0
        entropy_extra = 0.0
        if s:
            sup_sizes = sizes[failing].astype(np.float64)
            for j, c in enumerate(self.columns):
                codes = gen[failing, j]
                loss_extra += float(w[j]) * float(np.dot(sup_sizes, 1.0 - c.cell_loss[levels[j]][codes]))
                counts = np.bincount(codes, weights=sup_sizes)
                counts = counts[counts > 0]
                entropy_extra += float(w[j]) * float(-np.sum(counts * np.log2(counts / s)))
        kept_classes = int(kept.sum())
        out: dict[str, float | None] = {
            # the generalization part first, the suppression part added: a node without
            # suppression gets exactly its lower bound
            "loss": (float(part["lm_all"]) + loss_extra) / (n * W),
            "discernibility": float(np.sum(sizes[kept].astype(np.float64) ** 2) + float(n) * s),
            "entropy": float(part["entropy_all"]) + entropy_extra,
            "aecs": n / (kept_classes + (1 if s else 0)) if kept_classes + s else float(n),
            "precision": (n * float(part["precision_all"]) + s * float(part["free_precision"])) / (n * W),
            "height": float(part["heights"]),
            "classification": None,
        }
        if major is not None:
            out["classification"] = float(sizes[kept].sum() - major[kept].sum() + s) / n
        return {name: None if v is None else float(v) for name, v in out.items()}


    def blank_costs(self, levels: np.ndarray, blanked: Sequence[np.ndarray]) -> dict[str, float]:
        """What blanked cells of published rows add to ``loss``, ``precision`` and ``entropy``:
        a blanked cell costs what a cell of a suppressed row costs (its value is withheld), and
        the entropy's suppression part is taken per column over its blanked cells.
        ``blanked[j]``: the codes at ``levels[j]`` of column j's blanked cells."""
        n, w, W = self.n, self.weights, self.weight_sum
        loss = precision = entropy = 0.0
        for j, c in enumerate(self.columns):
            codes = np.asarray(blanked[j], dtype=np.int64)
            if not codes.size:
                continue
            loss += float(w[j]) * float((1.0 - c.cell_loss[levels[j]][codes]).sum())
            precision += float(w[j]) * codes.size * (1.0 - float(c.precision[levels[j]]))
            counts = np.bincount(codes)
            counts = counts[counts > 0].astype(np.float64)
            entropy += float(w[j]) * float(-np.sum(counts * np.log2(counts / codes.size)))
        return {"loss": loss / (n * W), "precision": precision / (n * W), "entropy": entropy}


def majority(pair_class: np.ndarray, pair_rows: np.ndarray, n_classes: int) -> np.ndarray:
    """Per class, the rows of its unique most frequent target value, 0 where two values tie
    for most frequent (ARX penalizes every row of such a class); ``pair_class``/``pair_rows``:
    one entry per distinct (class, target value)."""
    distinct = np.bincount(pair_class, minlength=n_classes)
    order = np.lexsort((-pair_rows, pair_class))
    starts = np.searchsorted(pair_class[order], np.arange(n_classes))
    sorted_rows = pair_rows[order]
    top1 = sorted_rows[np.minimum(starts, max(order.size - 1, 0))]
    second = np.where(distinct > 1, sorted_rows[np.minimum(starts + 1, max(order.size - 1, 0))], -1)
    return np.where((distinct > 0) & (top1 != second), top1, 0)


class MetricTables:
    """What every metric of a lattice's nodes reads: per quasi-identifier and level the leaf
    counts and value counts, and the bottom classes. Built once per lattice and weights."""

    def __init__(self, lattice: LatticeTable, weights: np.ndarray):
        self.lattice = lattice
        self.weights = weights
        self.m = len(lattice.attributes)
        self.n = int(lattice.n_rows)
        codes = np.asarray(lattice.bottom_codes)
        self.counts = np.asarray(lattice.bottom_counts, dtype=np.int64)
        self.bottom = codes[:, : self.m].astype(np.int64)
        self.target = codes[:, self.m].astype(np.int64) if lattice.sensitive is not None else None
        #: t's reference (the whole table's sensitive values, as publish's) and distance; None
        #: where the lattice does not know its sensitive values' order
        self.reference: np.ndarray | None = None
        self.ordered = bool(lattice.sensitive_ordered)
        #: the missing value's code (after every value: one category for t, never a distinct
        #: value for l), -1 when the sensitive attribute has none
        self.missing = lattice.missing_code
        if self.target is not None and lattice.sensitive_order is not None:
            self.reference = np.bincount(self.target, weights=self.counts,
                                         minlength=len(lattice.sensitive_order) + int(self.missing >= 0)
                                         ).astype(np.int64)
        hierarchies = [lattice.hierarchies[a] for a in lattice.attributes]
        marginals = [np.bincount(self.bottom[:, j], weights=self.counts, minlength=int(h.labels[0].size))
                     for j, h in enumerate(hierarchies)]
        self.column_tables = ColumnTables(hierarchies, marginals, weights, self.n)
        self.columns = self.column_tables.columns
        self.levels = np.asarray(lattice.levels)
        self.heights = self.levels.sum(axis=1)
        self.parts = self.column_tables.parts(self.levels)

    @property
    def weight_sum(self) -> float:
        # without a quasi-identifier to generalize (a numeric-only release) every cell part is
        # 0: dividing by 1 keeps the loss and the precision 0 rather than 0/0
        return float(self.weights.sum()) or 1.0

    # -- one node's classes ---------------------------------------------------------------

    def classes(self, node: int):
        """(class of each bottom class, class count, generalized codes per class (C, m))."""
        levels = self.levels[node]
        key = np.zeros(self.bottom.shape[0], np.int64)
        gen = []
        for j, c in enumerate(self.columns):
            g = c.maps[levels[j]][self.bottom[:, j]]
            gen.append(g)
            width = c.sizes[levels[j]]
            if key.max(initial=0) >= 2**62 // max(width, 1):
                key = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)
            key = key * width + g
        _, first, class_of = np.unique(key, return_index=True, return_inverse=True)
        class_of = class_of.ravel()
        return class_of, first.size, np.column_stack(gen)[first] if gen else np.zeros((first.size, 0), np.int64)

    def class_facts(self, node: int, with_majority: bool = True):
        """(class of each bottom class, generalized codes per class, class sizes, distinct
        sensitive values per class or None, rows of each class's unique most frequent sensitive
        value or None)."""
        return self.node_facts(node, with_majority)[:5]

    def node_facts(self, node: int, with_majority: bool = True, with_distance: bool = False):
        """:meth:`class_facts` and, with ``with_distance``, each class's earth mover's distance
        to the whole table's sensitive values (publish's: :func:`incrowd.privacy._emd.emd_pairs` over
        the (class, value, rows) triples), else None."""
        class_of, n_classes, gen = self.classes(node)
        sizes = np.bincount(class_of, weights=self.counts, minlength=n_classes).astype(np.int64)
        distinct = major = distance = None
        if self.target is not None:
            width = int(self.target.max(initial=0)) + 1
            pair, where = np.unique(class_of * width + self.target, return_inverse=True)
            pair_class = pair // width
            # the missing value is never a distinct value (publish's rule)
            distinct = np.bincount(pair_class[pair % width != self.missing] if self.missing >= 0 else pair_class,
                                   minlength=n_classes)
            if with_majority or with_distance:
                pair_rows = np.bincount(where.ravel(), weights=self.counts).astype(np.int64)
            if with_majority:
                major = majority(pair_class, pair_rows, n_classes)
            if with_distance:
                if self.reference is None:  # negotiate refuses t on such a lattice first
                    raise ParameterError("this lattice does not record its sensitive values' order")
                distance = _emd.emd_pairs(pair_class, pair % width, pair_rows, n_classes, self.reference,
                                          self.ordered)
        return class_of, gen, sizes, distinct, major, distance

    @staticmethod
    def failing(sizes: np.ndarray, distinct: np.ndarray | None, criterion: str, threshold,
                distance: np.ndarray | None = None) -> np.ndarray:
        """Per class, whether it fails: size below k ("k"), fewer than l distinct sensitive
        values ("l"), either ("k+l", ``threshold`` the pair (k, l)), or any of k, l and a
        ``distance`` above t ("k+l+t", ``threshold`` the triple (k, l, t); k 1 and l 0 when not
        asked), as publish suppresses them."""
        if criterion == "k":
            return sizes < threshold
        if distinct is None:  # check_criterion refuses "l" on a lattice without a sensitive attribute
            raise ParameterError("l-diversity needs a lattice built with a sensitive attribute (--sensitive)")
        if criterion == "l":
            return distinct < threshold
        if criterion == "k+l+t":
            k, l, t = threshold
            if distance is None:  # the callers compute it for "k+l+t"
                raise ParameterError("t needs each class's distance")
            return (sizes < k) | (distinct < l) | _emd.exceeds(distance, t)
        k, l = threshold
        return (sizes < k) | (distinct < l)

    def suppression(self, node: int, criterion: str, threshold) -> tuple[int, int]:
        """(rows suppressed, classes published) at ``node`` for ``criterion``/``threshold``."""
        _, _, sizes, distinct, _, distance = self.node_facts(node, False, criterion == "k+l+t")
        failing = self.failing(sizes, distinct, criterion, threshold, distance)
        return int(sizes[failing].sum()), int((~failing).sum())

    def evaluate(self, node: int, criterion: str, threshold, failing: np.ndarray | None = None) -> dict[str, float | None]:
        """Every metric of ``node`` when the classes failing ``criterion``/``threshold`` are
        suppressed (``"k+l"``: a class fails when it fails either; ``threshold`` is (k, l);
        ``"k+l+t"``: any of the three, ``threshold`` (k, l, t)), or the classes ``failing``
        says (one bool per class, where more models judged them)."""
        _, gen, sizes, distinct, major, distance = self.node_facts(node, True, failing is None and criterion == "k+l+t")
        if failing is None:
            failing = self.failing(sizes, distinct, criterion, threshold, distance)
        part = {name: values[node] for name, values in self.parts.items()}
        return self.column_tables.values(self.levels[node], part, sizes, failing, gen, major)

    # -- every node at once ----------------------------------------------------------------

    def bounds(self, metric: str, hist, criterion: str) -> np.ndarray:
        """A lower bound of ``metric`` for every node (exact where suppression is 0)."""
        n = self.n
        generalization = self.column_tables.bound(metric, self.parts)
        if generalization is not None:
            return generalization
        if metric == "aecs":
            return n / np.maximum(_segment_sums(hist, hist.classes), 1.0)
        if metric == "discernibility":
            k_hist = hist if criterion == "k" else self.lattice.k_histograms
            return _segment_sums(k_hist, k_hist.keys.astype(np.float64) ** 2 * k_hist.classes)
        return np.zeros(self.levels.shape[0])

    def exact_all(self, metric: str, hist, criterion: str, threshold: int | tuple[int, int]) -> np.ndarray | None:
        """``metric`` of every node from the histograms alone, or None where it needs classes."""
        n, W = self.n, self.weight_sum
        if metric == "height":
            return self.heights.astype(np.float64)
        if criterion in ("k+l", "k+l+t"):  # the rows failing k or l (or t) are not in either histogram
            return None
        if metric not in ("precision", "aecs", "discernibility"):
            return None
        supp = hist.rows_below_all(threshold)
        if metric == "precision":
            return (n * self.parts["precision_all"] + supp * self.parts["free_precision"]) / (n * W)
        below_classes = _segment_sums(hist, np.where(hist.keys < threshold, hist.classes, 0))
        if metric == "aecs":
            kept = _segment_sums(hist, hist.classes) - below_classes
            return n / np.maximum(kept + (supp > 0), 1).astype(np.float64)
        if criterion != "k":
            return None
        squares = np.where(hist.keys >= threshold, hist.keys.astype(np.float64) ** 2 * hist.classes, 0.0)
        return _segment_sums(hist, squares) + float(n) * supp


def _segment_sums(hist, values: np.ndarray) -> np.ndarray:
    cum = np.concatenate([[0.0], np.cumsum(values, dtype=np.float64)])
    return cum[hist.offsets[1:]] - cum[hist.offsets[:-1]]


def tables(lattice: LatticeTable, weights: Mapping[str, float] | None = None) -> MetricTables:
    """The lattice's metric tables for ``weights`` (cached on the lattice)."""
    w = check_weights(weights, lattice.attributes)
    cache = lattice.__dict__.setdefault("_metric_tables", {})
    key = tuple(w.tolist())
    if key not in cache:
        cache[key] = MetricTables(lattice, w)
    return cache[key]


@dataclass(frozen=True)
class Choice:
    """The node a search chose: its id, its metric value, and how it was found."""

    node: int
    value: float
    evaluated: int
    optimality_gap: float


def _tie_tolerance(value: float) -> float:
    """How far two metric values may differ and still tie: the rounding of sums of the same terms
    in another order, not a difference of utility."""
    return 1e-12 * max(1.0, abs(value))


def best_node(tabs: MetricTables, metric: str, candidates: np.ndarray, hist, criterion: str,
              threshold: int | tuple[int, int],
              suppressed: np.ndarray, max_evaluations: int | None = None) -> Choice | None:
    """The candidate with the least ``metric`` (ties: lowest height, least suppression, lowest
    id), or None without candidates; see the module's text for the search."""
    ids = np.flatnonzero(candidates)
    if ids.size == 0:
        return None
    if metric == "classification" and tabs.target is None:
        raise ParameterError("metric 'classification' needs a target column: build the lattice with "
                             "the target as its sensitive attribute (--sensitive)")
    heights = tabs.heights
    exact = tabs.exact_all(metric, hist, criterion, threshold)
    if exact is not None:
        least = float(exact[ids].min())
        # values equal up to rounding (one metric summed in another order) are ties
        near = ids[exact[ids] <= least + _tie_tolerance(least)]
        best = int(near[np.lexsort((near, suppressed[near], heights[near]))[0]])
        return Choice(best, float(exact[best]), 0, 0.0)
    limit = MAX_EVALUATIONS if max_evaluations is None else max_evaluations
    bound = tabs.bounds(metric, hist, criterion)
    order = ids[np.lexsort((ids, suppressed[ids], heights[ids], bound[ids]))]
    best, best_key, evaluated = -1, None, 0
    gap = 0.0
    for v in order:
        v = int(v)
        if best_key is not None and bound[v] > best_key[0] + _tie_tolerance(best_key[0]):
            break
        if evaluated >= limit:
            gap = max(0.0, best_key[0] - float(bound[v])) if best_key is not None else math.inf
            break
        value = tabs.evaluate(v, criterion, threshold)[metric]
        if value is None:  # impossible: only "classification" lacks a value, without a target (refused above)
            raise AssertionError(f"metric {metric!r} has no value at node {v}")
        evaluated += 1
        key = (value, int(heights[v]), int(suppressed[v]), v)
        if best_key is None or value < best_key[0] - _tie_tolerance(best_key[0]) or (
                abs(value - best_key[0]) <= _tie_tolerance(best_key[0]) and key[1:] < best_key[1:]):
            best, best_key = v, key
    if best_key is None:  # no node was evaluated: only a limit below 1 stops before the first
        raise ParameterError(f"max_evaluations must be at least 1; got {max_evaluations!r}")
    return Choice(best, float(best_key[0]), evaluated, gap)


def node_metrics(lattice: LatticeTable, levels: Mapping[str, int] | Sequence[int], *, k: int | None = None,
                 models: Sequence = (), weights: Mapping[str, float] | None = None) -> dict[str, float | None]:
    """Every metric of one node of ``lattice``, its too-small (k) or too-uniform (naive l in
    ``models``) classes suppressed.

    Parameters
    ----------
    lattice : Lattice
        A lattice (built or opened from its file).
    levels : mapping of str to int, or sequence of int
        The node: one level per quasi-identifier.
    k : int, optional
        The k of k-anonymity: classes below it are suppressed.
    models : sequence of PrivacyModel, optional
        Instead of k, the one model the lattice's histograms count
        (:class:`~incrowd.privacy.DistinctL`): classes it refuses are suppressed.
    weights : mapping of str to float, optional
        A weight per quasi-identifier for ``loss``, ``entropy`` and ``precision`` (1 where left
        out).

    Returns
    -------
    dict
        ``{metric: value}`` for every name of :data:`METRICS`; ``classification`` is None on a
        lattice without a sensitive attribute (its target).
    """
    from ._histograms import check_criterion

    criterion, value = check_criterion(lattice, k, models)
    node = lattice.node_id(levels)
    return tables(lattice, weights).evaluate(node, criterion, value)


# -- the same metrics on a released table (a reference anyone can run on a file) -----------

def _released_parts(released: pd.DataFrame, hierarchies: Mapping[str, Hierarchy], n_rows: int | None,
                    levels: Mapping[str, int] | None):
    qis = list(hierarchies)
    missing = [a for a in qis if a not in released.columns]
    if missing:
        raise DataError(f"the released table has no column {name_list(missing)}")
    n = int(released.shape[0]) if n_rows is None else int(n_rows)
    if n < released.shape[0] or n < 1:
        raise ParameterError(f"n_rows must be at least the released rows ({released.shape[0]}) and 1; got {n_rows!r}")
    return qis, n, n - int(released.shape[0])


def _label_leaves(hierarchy: Hierarchy, level: int | None) -> dict[str, int]:
    """Published label -> leaves under it (at ``level``, or the lowest level holding it)."""
    out: dict[str, int] = {}
    span = range(hierarchy.depth) if level is None else [level]
    for h in span:
        leaves = np.bincount(hierarchy.code_map(h), minlength=hierarchy.labels[h].size)
        for label, count in zip(hierarchy.labels[h].tolist(), leaves.tolist()):
            out.setdefault(str(label), int(count))
    return out


def released_metrics(released: pd.DataFrame, hierarchies: Mapping[str, Hierarchy], *, n_rows: int | None = None,
                     levels: Mapping[str, int] | None = None, original: pd.DataFrame | None = None,
                     target: str | None = None, weights: Mapping[str, float] | None = None) -> dict[str, float | None]:
    """Every metric of a released table, computed row by row from the table itself.

    Parameters
    ----------
    released : pandas.DataFrame
        The published rows (suppressed rows removed), the quasi-identifiers as published labels.
    hierarchies : mapping of str to Hierarchy
        The quasi-identifiers and their hierarchies.
    n_rows : int, optional
        Rows of the input (the suppressed rows are ``n_rows - len(released)``); default: none
        suppressed.
    levels : mapping of str to int, optional
        The level of each quasi-identifier (needed for ``precision``, ``height`` and
        ``entropy``; a label's leaves are otherwise looked up at the lowest level holding it).
    original : pandas.DataFrame, optional
        The input rows in the released rows' order followed by the suppressed rows, needed for
        ``entropy`` (its value counts); the released rows are its first ``len(released)``.
    target : str, optional
        The target column of ``classification``, its values counted as ``publish`` counts a
        sensitive column's (:func:`incrowd.values.sensitive_codes`: a missing value is one
        value of its own, 1 and 1.0 are one value).
    weights : mapping of str to float, optional
        A weight per quasi-identifier.

    Returns
    -------
    dict
        ``{metric: value}`` for every name of :data:`METRICS`; a metric that needs what was not
        given (``levels``, ``original``, ``target``) is None.
    """
    import pandas as pd

    qis, n, s = _released_parts(released, hierarchies, n_rows, levels)
    w = check_weights(weights, qis)
    W = float(w.sum())
    key = [released[a].astype(str) for a in qis]
    sizes = released.groupby(key, sort=False).size().to_numpy() if len(released) else np.zeros(0, np.int64)
    cells = 0.0
    for j, a in enumerate(qis):
        h = hierarchies[a]
        leaves = _label_leaves(h, None if levels is None else levels[a])
        total = int(h.labels[0].size)
        per = released[a].astype(str).map(leaves)
        if per.isna().any():
            bad = released[a][per.isna()].iloc[0]
            raise DataError(f"column {a!r}: published value {bad!r} is not in its hierarchy")
        cells += w[j] * float(((per.to_numpy(np.float64) - 1) / (total - 1)).sum()) if total > 1 else 0.0
    out: dict[str, float | None] = {
        "loss": (cells + s * W) / (n * W),
        "discernibility": float(np.sum(sizes.astype(np.float64) ** 2) + float(n) * s),
        "aecs": n / (sizes.size + (1 if s else 0)),
        "entropy": None, "precision": None, "height": None, "classification": None,
    }
    if levels is not None:
        out["height"] = float(sum(levels[a] for a in qis))
        prec = sum(w[j] * (levels[a] / hierarchies[a].max_level if hierarchies[a].max_level else 0.0)
                   for j, a in enumerate(qis))
        free = sum(w[j] for j in range(len(qis))) - prec
        out["precision"] = ((n - s) * prec + s * (prec + free)) / (n * W)
        if original is not None:
            out["entropy"] = _released_entropy(released, original, hierarchies, levels, qis, w)
    if target is not None:
        penalty = 0
        if len(released):
            from ..values import sensitive_codes

            # the target's values as publish and the lattice count them: a missing value is one
            # value of its own (never dropped), 1 = 1.0
            pairs = pd.DataFrame({"c": released.groupby(key, sort=False).ngroup().to_numpy(),
                                  "t": sensitive_codes(released[target])[0]})
            per_pair = pairs.groupby(["c", "t"]).size().rename("n").reset_index()
            by_class = per_pair.groupby("c")["n"]
            top, size = by_class.max(), by_class.sum()
            tied = (per_pair["n"] == per_pair["c"].map(top)).groupby(per_pair["c"]).sum() > 1
            penalty = int(np.where(tied, size, size - top).sum())
        out["classification"] = float(penalty + s) / n
    return out


def _released_entropy(released, original, hierarchies, levels, qis, w) -> float:
    from ._cells import encode_cells

    n_released = int(released.shape[0])
    total = 0.0
    for j, a in enumerate(qis):
        h = hierarchies[a]
        # the cells met as the release met them (missing cells, 7 = 7.0, user-missing codes)
        codes = encode_cells(h, original[a].reset_index(drop=True)).astype(np.int64)
        gen = h.code_map(levels[a])[codes]
        count_orig = np.bincount(codes)[codes]
        count_gen = np.bincount(gen)[gen]
        total += w[j] * float(np.sum(-np.log2(count_orig / count_gen)))
        sup = gen[n_released:]
        if sup.size:
            c = np.bincount(sup)
            c = c[c > 0]
            total += w[j] * float(-np.sum(c * np.log2(c / sup.size)))
    return total


# -- per-cell levels: a value's level may differ between classes (local recoding) ---------

def cell_losses(hierarchy: Hierarchy, codes0: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Iyengar's LM cost of each cell, each published at its own level: (leaves under the
    published value - 1) / (leaves of the hierarchy - 1), from the cells' level-0 codes."""
    codes0 = np.asarray(codes0, dtype=np.int64)
    levels = np.asarray(levels, dtype=np.int64)
    total = int(hierarchy.labels[0].size)
    out = np.zeros(codes0.shape[0])
    if total <= 1:
        return out
    for level in np.unique(levels).tolist():
        at = levels == level
        code_map = hierarchy.code_map(int(level))
        leaves = np.bincount(code_map, minlength=hierarchy.labels[level].size)
        out[at] = (leaves[code_map[codes0[at]]] - 1) / (total - 1)
    return out


def cell_metrics(hierarchies: Sequence[Hierarchy], codes0: np.ndarray, levels: np.ndarray, class_of: np.ndarray,
                 n_rows: int, weights: np.ndarray | None = None) -> dict[str, float | None]:
    """The metrics of a release whose cells carry their own levels (``codes0`` and ``levels``:
    published rows x quasi-identifiers; ``class_of``: each published row's class; the rows of
    ``n_rows`` not published are suppressed). ``loss``, ``discernibility``, ``aecs`` and
    ``precision`` as :data:`METRICS` defines them; ``entropy``, ``height`` and
    ``classification`` are None (they assume one level per quasi-identifier, or a target)."""
    n_kept, m = codes0.shape
    n = int(n_rows)
    s = n - n_kept
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=np.float64)
    W = float(w.sum())
    cells = sum((w[j] * float(cell_losses(h, codes0[:, j], levels[:, j]).sum()) for j, h in enumerate(hierarchies)),
                0.0)
    prec = sum((w[j] * float(levels[:, j].sum()) / h.max_level for j, h in enumerate(hierarchies) if h.max_level),
               0.0)
    sizes = np.bincount(np.asarray(class_of, dtype=np.int64)) if n_kept else np.zeros(0, np.int64)
    sizes = sizes[sizes > 0]
    return {
        "loss": (cells + s * W) / (n * W),
        "discernibility": float(np.sum(sizes.astype(np.float64) ** 2) + float(n) * s),
        "entropy": None,
        "aecs": n / max(sizes.size + (1 if s else 0), 1),
        "precision": (prec + s * W) / (n * W),
        "height": None,
        "classification": None,
    }
