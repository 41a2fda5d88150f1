"""Negotiation: answer (k, l or both, v_max, max suppression) exactly, or with three relaxations.

Exact answer: among the nodes of v_max's sublattice whose suppression is within the limit, the
lowest height, ties to the lowest suppression, then to the smallest level vector. When there is
none (slides 004, "Approximate Solutions"):

- ``max_suppression``: keep k and v_max, take the least suppression the sublattice allows (then
  lowest height, then level vector);
- ``height``: keep k and the limit, take the lowest height anywhere in the lattice (ties: least
  suppression, then level vector);
- ``k`` (or ``l``): keep v_max and the limit, take the largest k (or l) >= 2 some node of the
  sublattice meets, and the lowest node meeting it.

Each relaxation may have no solution (``None``). A node that would suppress every row publishes
nothing, so it is never an answer (the limit is at most n_rows - 1).

k and l together (a class fails when it fails either, as in ``publish``) are answered the same
way from each node's classes, computed from the lattice's bottom classes where the two
histograms do not settle its suppression; the ``k`` relaxation is then split into ``k`` (l
kept) and ``l`` (k kept).

With a ``metric`` other than ``height`` (the default is ``loss``), each answer is instead the
node with the least metric among the same candidates (ties: lowest height, least suppression,
lowest id): :mod:`._utility_metrics` defines the metrics and the search.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

import numpy as np

from .._runtime import compiled_so_far
from ..exceptions import ParameterError
from ._histograms import Histograms, check_criterion, criterion_histograms
from ._search_plain import FIELDS, search_kernel
from ._utility_metrics import DEFAULT_METRIC, MetricTables, best_node, check_metric, tables

if TYPE_CHECKING:
    from ._table import LatticeTable

RELAXATIONS = ("max_suppression", "height", "k")
#: why a lattice cannot answer t-closeness
NO_T = ("t cannot be negotiated on a lattice: it keeps the sensitive attribute as codes, without the "
        "values and their order that t-closeness's distance needs; ask publish for t ([privacy] t)")


@dataclass(frozen=True)
class Node:
    """One generalization scheme with its suppression for a privacy threshold.

    Attributes
    ----------
    levels : dict of str to int
        The generalization level of each attribute.
    height : int
        The sum of the levels.
    suppressed : int
        Rows to suppress at this node.
    criterion : {"k", "l", "k+l"}
        The privacy model.
    value : int
        Its threshold (k for "k+l").
    classes : int
        Equivalence classes after suppression.
    metrics : dict or None
        Every utility metric of the node (:data:`~incrowd.generalization.METRICS`).
    thresholds : dict or None
        For "k+l": ``{"k": k, "l": l}``.
    """

    levels: dict[str, int]
    height: int
    suppressed: int
    criterion: str
    value: int
    classes: int
    #: every utility metric of the node (:data:`~incrowd.generalization.METRICS`)
    metrics: dict | None = None
    #: for "k+l": {"k": k, "l": l}
    thresholds: dict | None = None

    def to_dict(self) -> dict:
        out = {"levels": dict(self.levels), "height": self.height, "suppressed": self.suppressed,
               **(dict(self.thresholds) if self.thresholds else {self.criterion: self.value}),
               "classes": self.classes}
        if self.metrics is not None:
            out["metrics"] = dict(self.metrics)
        return out


@dataclass(frozen=True)
class Negotiation:
    """The answer to one request: ``status`` is "exact" or "relaxed".

    Attributes
    ----------
    status : {"exact", "relaxed"}
        Whether the request was met as asked.
    exact : Node or None
        The answer to the request as asked (None: no node meets it).
    relaxations : dict of str to Node or None
        The nearest answers when one of :data:`RELAXATIONS` is relaxed (for "k+l": the
        suppression, the height, k with l kept, or l with k kept).
    criterion : {"k", "l", "k+l"}
        The privacy model asked for.
    value : int
        Its threshold (k for "k+l").
    max_levels : dict of str to int
        The highest tolerable level of each attribute.
    max_suppression : int
        Rows that may be suppressed.
    n_rows : int
        Rows of the data.
    visited : dict of str to int
        Nodes looked at, per phase of the search.
    seconds : float
        Time of the search, without compiling.
    partial : bool
        Whether the lattice is partial.
    runtime_histogram_seconds : float or None
        Time spent computing a missing histogram, when asked.
    compile_seconds : float
        Time numba spent compiling (or loading) the search kernel.
    max_suppression_given : str or None
        ``max_suppression`` as the caller gave it (e.g. ``"5%"``).
    metric : str
        What the answers minimize.
    metric_evaluated : int
        Nodes whose classes the search computed for the metric.
    optimality_gap : float
        How far the exact answer's value may be from the optimum (0: optimal).
    thresholds : dict or None
        For "k+l": ``{"k": k, "l": l}``.
    """

    status: str
    exact: Node | None
    relaxations: dict[str, Node | None]
    criterion: str
    value: int
    max_levels: dict[str, int]
    max_suppression: int
    n_rows: int
    visited: dict[str, int]
    seconds: float
    partial: bool
    runtime_histogram_seconds: float | None = None
    #: numba compiling (or loading) the search kernel for this call, left out of ``seconds``
    compile_seconds: float = 0.0
    #: max_suppression as the caller gave it (e.g. "5%"), beside the row count it was read as
    max_suppression_given: str | None = None
    #: the metric the answers minimize, the nodes whose classes the search computed, and how far
    #: the exact answer's value may be from the optimum (0: optimal; see _utility_metrics)
    metric: str = "height"
    metric_evaluated: int = 0
    optimality_gap: float = 0.0
    #: for "k+l": {"k": k, "l": l}
    thresholds: dict | None = None

    @property
    def nodes_visited(self) -> int:
        return int(sum(self.visited.values()))

    def to_dict(self) -> dict:
        relax = {name: (node.to_dict() if node is not None else None) for name, node in self.relaxations.items()}
        if self.criterion == "l":
            relax["l"] = relax["k"]
        return {
            "status": self.status,
            "exact": self.exact.to_dict() if self.exact is not None else None,
            "relaxations": relax,
            "request": {**(dict(self.thresholds) if self.thresholds else {self.criterion: self.value}),
                        "max_levels": dict(self.max_levels),
                        "max_suppression": self.max_suppression, "rows": self.n_rows,
                        "max_suppression_given": self.max_suppression_given},
            "nodes_visited": self.nodes_visited,
            "visited": dict(self.visited),
            "seconds": self.seconds,
            "partial_lattice": self.partial,
            "runtime_histogram_seconds": self.runtime_histogram_seconds,
            "compile_seconds": self.compile_seconds,
            "metric": self.metric, "metric_evaluated": self.metric_evaluated,
            "optimality_gap": self.optimality_gap,
        }


_PERCENT = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*%\s*$")
_COUNT = re.compile(r"^\s*[0-9]+\s*$")
_FRACTION = re.compile(r"^\s*([0-9]*\.[0-9]*)\s*$")


def max_suppression_count(value: int | float | str, n_rows: int) -> int:
    """Rows that may be suppressed: an int is a count, a float a fraction of the rows, a string
    ``"1%"``, ``"0.01"`` or ``"301"``. A fraction rounds down (the limit is never exceeded).

    A string is read in exactly one of three forms: digits only (a row count), a number with a
    decimal point (a fraction) or a number followed by ``%``. Anything else, exponent notation
    such as ``1e3`` included (a count? a fraction?), is refused with the forms that are read.

    Parameters
    ----------
    value : int, float or str
        The limit as given.
    n_rows : int
        Rows of the data.

    Returns
    -------
    int
        The most rows that may be suppressed.
    """
    allowed = (f"max_suppression must be a whole row count in [0, n_rows={n_rows}] (e.g. 300), a "
               f"fraction in [0, 1] with a decimal point (e.g. 0.05) or a percentage in [0%, 100%] "
               f"(e.g. 5%); got {value!r}")
    if isinstance(value, bool) or value is None:
        raise ParameterError(allowed)
    if isinstance(value, (int, np.integer)):
        if not 0 <= value <= n_rows:
            raise ParameterError(allowed)
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or not 0 <= value <= 1:
            raise ParameterError(allowed)
        return int(math.floor(value * n_rows + 1e-9))
    if isinstance(value, str):
        m = _PERCENT.match(value)
        if m:
            pct = float(m.group(1))
            if not 0 <= pct <= 100:
                raise ParameterError(allowed)
            return int(math.floor(pct / 100 * n_rows + 1e-9))
        if _COUNT.match(value):
            return max_suppression_count(int(value), n_rows)
        m = _FRACTION.match(value)
        if m and m.group(1) != ".":
            fraction = float(m.group(1))
            if not 0 <= fraction <= 1:
                raise ParameterError(f"{allowed} (a number with a decimal point is a fraction)")
            return int(math.floor(fraction * n_rows + 1e-9))
        if re.match(r"^\s*[-+]?[0-9.]+[eE]", value):
            raise ParameterError(f"{allowed}: exponent notation is not read, as it cannot say "
                                 "whether a count or a fraction is meant")
    raise ParameterError(allowed)


class _SearchArrays:
    """Arrays the kernel reads, derived once per lattice."""

    def __init__(self, lattice: LatticeTable):
        self.levels = np.ascontiguousarray(lattice.levels)
        self.strides = lattice.strides
        self.heights = self.levels.sum(axis=1)
        self.h_order = np.lexsort((np.arange(self.heights.size), self.heights)).astype(np.int64)
        counts = np.bincount(self.heights, minlength=int(self.heights.max()) + 1)
        self.h_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def _arrays(lattice: LatticeTable) -> _SearchArrays:
    cached = lattice.__dict__.get("_search_arrays")
    if cached is None:
        cached = _SearchArrays(lattice)
        lattice.__dict__["_search_arrays"] = cached
    return cached


def _with_node(hist: Histograms, node: int, part) -> Histograms:
    """A copy of ``hist`` with ``node``'s (empty) segment filled by ``part``."""
    keys, classes, rows = part
    a, b = int(hist.offsets[node]), int(hist.offsets[node + 1])
    offsets = hist.offsets.copy()
    offsets[node + 1:] += keys.size - (b - a)
    return Histograms(offsets,
                      np.concatenate([hist.keys[:a], keys, hist.keys[b:]]),
                      np.concatenate([hist.classes[:a], classes, hist.classes[b:]]),
                      np.concatenate([hist.rows[:a], rows, hist.rows[b:]]))


def negotiate(lattice: LatticeTable, *, k: int | None = None, l: int | None = None,
              max_levels: Mapping[str, int] | None = None,
              max_suppression: int | float | str = 0,
              runtime_histogram: bool = False, metric: str = DEFAULT_METRIC,
              weights: Mapping[str, float] | None = None, t: float | None = None) -> Negotiation:
    """Answer a request on ``lattice``.

    ``max_levels`` maps attributes to their highest tolerable level (v_max); attributes left out
    may go to their top level. ``max_suppression`` is a count, a fraction, or a string such as
    ``"1%"``. ``runtime_histogram`` (partial lattices): compute v_max's histogram now when the
    lattice lacks it. ``metric`` (one of :data:`~incrowd.generalization.METRICS`, default
    ``"loss"``) is what an answer minimizes; ``"height"`` gives the lowest node. ``weights``
    maps quasi-identifiers to weights of ``loss``, ``entropy`` and ``precision``.

    With both ``k`` and ``l`` a class is suppressed when it has fewer than k rows or fewer than
    l distinct sensitive values, as :func:`incrowd.publish` does: each node's suppression is
    then computed from the lattice's bottom classes (the two histograms only bound it), and the
    relaxations are the suppression, the height, the largest k with l kept and the largest l
    with k kept. ``t`` is refused: the lattice keeps the sensitive values as codes, without the
    values and their order that t-closeness's distance needs.

    Parameters
    ----------
    lattice : LatticeTable
        The lattice to search (a :class:`~incrowd.generalization.Lattice` built or opened).
    k : int or None, default None
        The k of k-anonymity asked for.
    l : int or None, default None
        The l of naive l-diversity asked for (the lattice's sensitive attribute).
    max_levels : mapping of str to int or None, default None
        The highest tolerable level of each attribute.
    max_suppression : int, float or str, default 0
        Rows that may be suppressed: a count, a fraction or ``"1%"``.
    runtime_histogram : bool, default False
        Compute a missing histogram of a partial lattice now.
    metric : str, default "loss"
        What an answer minimizes.
    weights : mapping of str to float or None, default None
        Weights of the quasi-identifiers in ``loss``, ``entropy`` and ``precision``.
    t : float or None, default None
        t-closeness: refused with a :class:`~incrowd.exceptions.ParameterError` (see above).

    Returns
    -------
    Negotiation
        The exact answer (or None) and the relaxed answers.
    """
    if t is not None:
        raise ParameterError(NO_T)
    if k is None and l is None:
        raise ParameterError("give k (k-anonymity), l (naive l-diversity) or both")
    if k is not None and l is not None:
        return _negotiate_k_and_l(lattice, k, l, max_levels, max_suppression, runtime_histogram, metric, weights)
    criterion, value = check_criterion(lattice, k, l)
    metric = check_metric(metric)
    if metric == "classification" and lattice.sensitive is None:
        raise ParameterError("metric 'classification' needs a target column: build the lattice with "
                             "the target as its sensitive attribute (--sensitive)")
    metric_tables = tables(lattice, weights)
    vmax_vector = lattice.level_vector(dict(max_levels or {}), default="top")
    limit = max_suppression_count(max_suppression, lattice.n_rows)
    arrays = _arrays(lattice)
    vmax = int(np.dot(vmax_vector, arrays.strides))
    hist = criterion_histograms(lattice, criterion)
    materialized = lattice.materialized
    runtime_seconds = None
    t0 = time.perf_counter()
    if runtime_histogram and not materialized[vmax]:
        _, k_part, l_part = lattice.node_histograms(vmax)
        hist = _with_node(hist, vmax, k_part if criterion == "k" else l_part)
        materialized = materialized.copy()
        materialized[vmax] = True
        runtime_seconds = time.perf_counter() - t0
    args = (vmax, value, limit, lattice.n_rows, arrays.levels, arrays.strides, arrays.heights,
            arrays.h_order, arrays.h_offsets, materialized, hist.offsets, hist.keys, hist.cum_rows,
            not bool(materialized.all()))
    negotiate_kernel = search_kernel(lattice.n_nodes)
    known = len(negotiate_kernel.signatures)
    c0 = compiled_so_far()
    t1 = time.perf_counter()
    out = negotiate_kernel(*args)
    compile_seconds = compiled_so_far() - c0
    if len(negotiate_kernel.signatures) > known:
        # that call loaded (or compiled) the kernel for these argument types: time the answer,
        # not the loading
        t1 = time.perf_counter()
        out = negotiate_kernel(*args)
    got = dict(zip(FIELDS, (int(x) for x in out)))
    search = {"evaluated": 0, "gap": 0.0}
    if metric != "height":
        _by_metric(got, metric_tables, metric, hist, criterion, value, limit, vmax_vector, materialized,
                   lattice.n_rows, search)

    def node(node_id: int, supp: int, threshold: int) -> Node | None:
        if node_id < 0:
            return None
        below_rows, below_classes = hist.below(node_id, threshold)
        a, b = int(hist.offsets[node_id]), int(hist.offsets[node_id + 1])
        total_classes = int(hist.cum_classes[b - 1]) if b > a else 0
        values = metric_tables.evaluate(node_id, criterion, threshold)
        return Node(lattice.level_dict(node_id), int(arrays.heights[node_id]), supp, criterion,
                    threshold, total_classes - below_classes, values)

    exact = node(got["exact"], got["exact_supp"], value)
    if exact is not None:
        relaxations: dict[str, Node | None] = {name: None for name in RELAXATIONS}
        visited = {"exact": got["exact_visited"]}
    else:
        relaxations = {
            "max_suppression": node(got["r_supp"], got["r_supp_supp"], value),
            "height": node(got["r_height"], got["r_height_supp"], value),
            "k": node(got["r_t"], got["r_t_supp"], got["r_t_value"]) if got["r_t_value"] >= 2 else None,
        }
        visited = {"exact": got["exact_visited"], "max_suppression": got["r_supp_visited"],
                   "height": got["r_height_visited"], "k": got["r_t_visited"]}
    seconds = time.perf_counter() - t1
    return Negotiation(
        status="exact" if exact is not None else "relaxed", exact=exact, relaxations=relaxations,
        criterion=criterion, value=value, max_levels=lattice.level_dict(vmax),
        max_suppression=limit, n_rows=lattice.n_rows, visited=visited, seconds=seconds,
        partial=lattice.is_partial, runtime_histogram_seconds=runtime_seconds,
        compile_seconds=compile_seconds, max_suppression_given=str(max_suppression),
        metric=metric, metric_evaluated=int(search["evaluated"]), optimality_gap=search["gap"],
    )


def _by_metric(got: dict, tabs: MetricTables, metric: str, hist: Histograms, criterion: str, value: int,
               limit: int, vmax_vector: np.ndarray, materialized: np.ndarray, n_rows: int, search: dict) -> None:
    """Replace each answer of the lowest-node search by the least-``metric`` node among the same
    candidates: the exact answer's (v_max's sublattice within the limit), the max-suppression
    relaxation's (the sublattice's least suppression), the height relaxation's (the whole
    lattice within the limit) and the k relaxation's (the sublattice within the limit at the
    largest k it allows)."""
    within = min(limit, n_rows - 1)  # a node suppressing every row is never an answer
    in_sub = np.all(tabs.levels <= vmax_vector, axis=1) & materialized
    supp = hist.rows_below_all(value)

    def choose(prefix: str, candidates: np.ndarray, threshold: int, rows: np.ndarray) -> None:
        choice = best_node(tabs, metric, candidates, hist, criterion, threshold, rows)
        if choice is None:
            return
        got[prefix] = choice.node
        got[prefix + "_supp"] = int(rows[choice.node])
        search["evaluated"] += choice.evaluated
        if prefix == "exact":
            search["gap"] = choice.optimality_gap

    if got["exact"] >= 0:
        choose("exact", in_sub & (supp <= within), value, supp)
        return
    if got["r_supp"] >= 0:
        choose("r_supp", in_sub & (supp == got["r_supp_supp"]), value, supp)
    if got["r_height"] >= 0:
        choose("r_height", materialized & (supp <= within), value, supp)
    if got["r_t"] >= 0:
        t_star = got["r_t_value"]
        rows = hist.rows_below_all(t_star)
        choose("r_t", in_sub & (rows <= within), t_star, rows)


def _negotiate_k_and_l(lattice: LatticeTable, k, l, max_levels, max_suppression, runtime_histogram: bool,
                       metric: str, weights) -> Negotiation:
    """:func:`negotiate` for k and l together: a class fails when it fails either.

    The rows failing "k or l" at a node lie between the larger of the two histograms' counts
    and their sum; where those meet the node's suppression is read from them, elsewhere its
    classes are computed from the bottom classes, only for the nodes a bound does not settle.
    Suppression never grows going up (classes merge; a union of passing classes passes both),
    which the relaxations' candidates rely on as the single-criterion search does."""
    check_criterion(lattice, k, None)
    check_criterion(lattice, None, l)
    k, l = int(k), int(l)
    metric = check_metric(metric)  # l needs the sensitive attribute: "classification" has its target
    tabs = tables(lattice, weights)
    vmax_vector = lattice.level_vector(dict(max_levels or {}), default="top")
    limit = max_suppression_count(max_suppression, lattice.n_rows)
    n = lattice.n_rows
    within = min(limit, n - 1)  # a node suppressing every row is never an answer
    arrays = _arrays(lattice)
    vmax = int(np.dot(vmax_vector, arrays.strides))
    k_hist, l_hist = lattice.k_histograms, lattice.l_histograms
    if l_hist is None:  # check_criterion refused l on a lattice without a sensitive attribute
        raise ParameterError("l needs a lattice built with a sensitive attribute")
    materialized = lattice.materialized
    runtime_seconds = None
    t0 = time.perf_counter()
    if runtime_histogram and not materialized[vmax]:
        _, k_part, l_part = lattice.node_histograms(vmax)
        k_hist, l_hist = _with_node(k_hist, vmax, k_part), _with_node(l_hist, vmax, l_part)
        materialized = materialized.copy()
        materialized[vmax] = True
        runtime_seconds = time.perf_counter() - t0
    low, high = _k_and_l_bounds(k_hist, l_hist, k, l, n)
    supp = np.where(low == high, low, -1)
    evaluated = {"count": 0}

    def settle(mask: np.ndarray) -> None:
        for v in np.flatnonzero(mask & (supp < 0)):
            supp[v] = tabs.suppression(int(v), "k+l", (k, l))[0]
            evaluated["count"] += 1

    in_sub = np.all(arrays.levels <= vmax_vector, axis=1) & materialized
    heights = arrays.heights
    search = {"evaluated": 0, "gap": 0.0}

    def choose(candidates: np.ndarray, kl: tuple[int, int], rows: np.ndarray, exact: bool = False) -> int:
        ids = np.flatnonzero(candidates)
        if ids.size == 0:
            return -1
        if metric == "height":
            return int(ids[np.lexsort((ids, rows[ids], heights[ids]))[0]])
        choice = best_node(tabs, metric, candidates, k_hist, "k+l", kl, rows)
        if choice is None:  # not reached: candidates are not empty
            return -1
        search["evaluated"] += choice.evaluated
        if exact:
            search["gap"] = choice.optimality_gap
        return choice.node

    def node(node_id: int, kl: tuple[int, int], rows: int) -> Node | None:
        if node_id < 0:
            return None
        _, classes = tabs.suppression(node_id, "k+l", kl)
        return Node(lattice.level_dict(node_id), int(heights[node_id]), int(rows), "k+l", kl[0], classes,
                    tabs.evaluate(node_id, "k+l", kl), {"k": kl[0], "l": kl[1]})

    t1 = time.perf_counter()
    settle(in_sub & (low <= within))
    exact_id = choose(in_sub & (supp >= 0) & (supp <= within), (k, l), supp, exact=True)
    visited = {"exact": evaluated["count"]}
    relaxations: dict[str, Node | None] = {"max_suppression": None, "height": None, "k": None, "l": None}
    exact = node(exact_id, (k, l), int(supp[exact_id])) if exact_id >= 0 else None
    if exact is None:
        before = evaluated["count"]
        if in_sub.any():  # the least suppression of the sublattice, nodes suppressing every row left out
            settle(in_sub & (low <= high[in_sub].min()))
            known = in_sub & (supp >= 0) & (supp < n)
            if known.any():
                least = int(supp[known].min())
                relaxations["max_suppression"] = node(choose(known & (supp == least), (k, l), supp), (k, l), least)
        visited["max_suppression"] = evaluated["count"] - before
        before = evaluated["count"]
        settle(materialized & (low <= within))
        anywhere = choose(materialized & (supp >= 0) & (supp <= within), (k, l), supp)
        relaxations["height"] = node(anywhere, (k, l), int(supp[anywhere])) if anywhere >= 0 else None
        visited["height"] = evaluated["count"] - before
        for name in ("k", "l"):
            answer, count = _relax_one(tabs, name, k, l, in_sub, within, choose)
            relaxations[name] = None if answer is None else node(*answer)
            visited[name] = count
    seconds = time.perf_counter() - t1
    return Negotiation(
        status="exact" if exact is not None else "relaxed", exact=exact, relaxations=relaxations,
        criterion="k+l", value=k, max_levels=lattice.level_dict(vmax), max_suppression=limit, n_rows=n,
        visited=visited, seconds=seconds, partial=lattice.is_partial, runtime_histogram_seconds=runtime_seconds,
        max_suppression_given=str(max_suppression), metric=metric,
        metric_evaluated=int(search["evaluated"]), optimality_gap=search["gap"], thresholds={"k": k, "l": l},
    )


def _k_and_l_bounds(k_hist: Histograms, l_hist: Histograms, k: int, l: int, n: int):
    """Per node, the least and the most rows failing k or l: the classes failing either are the
    union of those failing k and those failing l."""
    k_rows, l_rows = k_hist.rows_below_all(k), l_hist.rows_below_all(l)
    return np.maximum(k_rows, l_rows), np.minimum(k_rows + l_rows, n)


def suppressed_k_and_l(lattice: LatticeTable, k: int, l: int) -> np.ndarray:
    """Rows failing k or l at every node, in id order; -1 where a partial lattice lacks the node."""
    check_criterion(lattice, k, None)
    check_criterion(lattice, None, l)
    l_hist = lattice.l_histograms
    if l_hist is None:  # check_criterion refused l on a lattice without a sensitive attribute
        raise ParameterError("l needs a lattice built with a sensitive attribute")
    low, high = _k_and_l_bounds(lattice.k_histograms, l_hist, int(k), int(l), lattice.n_rows)
    out = np.where(lattice.materialized, low, -1)
    tabs = tables(lattice)
    for v in np.flatnonzero(lattice.materialized & (low != high)):
        out[v] = tabs.suppression(int(v), "k+l", (int(k), int(l)))[0]
    return out


def _largest(keys: np.ndarray, rows: np.ndarray, base: int, within: int) -> int:
    """The largest threshold t such that ``base`` plus the rows of the classes whose key is
    below t stay within ``within`` (0: none; the classes with the largest key survive it)."""
    if base > within or keys.size == 0:
        return 0
    order = np.argsort(keys, kind="stable")
    values, starts = np.unique(keys[order], return_index=True)
    below = np.concatenate([[0], np.cumsum(rows[order])])[starts]  # rows with a key below each value
    ok = base + below <= within
    return int(values[ok].max()) if ok.any() else 0


def _relax_one(tabs: MetricTables, name: str, k: int, l: int, in_sub: np.ndarray, within: int, choose):
    """Relax k (l kept) or l (k kept): the largest threshold >= 2 some node of the sublattice
    meets within the limit, and the node chosen among those meeting it; (answer or None, nodes
    visited)."""
    best = np.zeros(in_sub.size, np.int64)
    ids = np.flatnonzero(in_sub)
    for v in ids:
        _, _, sizes, distinct, _ = tabs.class_facts(int(v), with_majority=False)
        if name == "k":
            held = distinct < l
            best[v] = _largest(sizes[~held], sizes[~held], int(sizes[held].sum()), within)
        else:
            held = sizes < k
            best[v] = _largest(distinct[~held], sizes[~held], int(sizes[held].sum()), within)
    top = int(best.max(initial=0))
    if top < 2:
        return None, int(ids.size)
    kl = (top, l) if name == "k" else (k, top)
    meets = in_sub & (best >= top)
    rows = np.zeros(in_sub.size, np.int64)
    for v in np.flatnonzero(meets):
        rows[v] = tabs.suppression(int(v), "k+l", kl)[0]
    chosen = choose(meets, kl, rows)
    return (chosen, kl, int(rows[chosen])), int(ids.size + meets.sum())
