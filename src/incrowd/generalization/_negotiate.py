"""Negotiation: answer (k, l, t or several, v_max, max suppression) exactly, or with relaxations.

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

k alone or l alone is answered from the histograms by the compiled search: both are monotone
under generalization and suppression, so a node's suppression is read, never computed. Every
other request is one search over a list of models (:func:`_search_classes`): k and l together
(a class fails when it fails either, as in ``publish``), t (with k, l, both or alone: a class
farther than t from the whole table's sensitive values, with publish's distance over the values
and order the lattice keeps, :attr:`LatticeTable.sensitive_order`) and any other privacy model
of :mod:`incrowd.privacy` (``models``). Where a model is not monotone a coarser class may fail
where its parts pass, so each candidate node's classes are computed from the bottom classes and
judged by every model; the rows failing k or l (the histograms) bound a node's suppression from
below and prune the nodes that cannot meet the limit. The ``k`` relaxation is split into ``k``
(l and t kept), ``l`` (k and t kept) and ``t`` (the least t some node of the sublattice meets
within the limit); with other models only the suppression and the height relax.

With a ``metric`` other than ``height`` (the default is ``loss``), each answer is instead the
node with the least metric among the same candidates (ties: lowest height, least suppression,
lowest id): :mod:`._utility_metrics` defines the metrics and the search.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from .._native import sensitive_counts
from .._runtime import compiled_so_far
from .._runtime import lazy as _lazy
from ..exceptions import ParameterError
from ..privacy import CodedColumn, Judge, PrivacyModel
from ..privacy import emd as _emd
from ._histograms import Histograms, check_criterion, criterion_histograms
from ._search_plain import FIELDS, search_kernel
from ._utility_metrics import DEFAULT_METRIC, MAX_EVALUATIONS, MetricTables, best_node, check_metric, tables

if TYPE_CHECKING:
    from ._table import LatticeTable

# l's model loads where a request asks for l
distinct_l = _lazy.function("incrowd.privacy", "DistinctL")

RELAXATIONS = ("max_suppression", "height", "k")
"""The three ways a negotiation relaxes a request it cannot meet: more suppression, a greater
height, or a lower threshold (for several thresholds: each threshold with the others kept)."""
#: why a lattice file cannot answer t-closeness
NO_T = ("t cannot be negotiated on this lattice: its file was written before lattices kept the sensitive "
        "values and their order that t-closeness's distance needs; rebuild it with 'incrowd lattice build "
        "DATA --qi ... --sensitive COLUMN -o LATTICE' (k and l still work on it)")


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
    criterion : {"k", "l", "k+l", "t", "k+t", "l+t", "k+l+t"}
        The privacy model.
    value : int or float
        Its threshold (the first of k, l, t given).
    classes : int
        Equivalence classes after suppression.
    metrics : dict or None
        Every utility metric of the node (:data:`~incrowd.generalization.METRICS`).
    thresholds : dict or None
        For several thresholds or t: ``{"k": k, "l": l, "t": t}`` (those given).
    models : tuple of PrivacyModel
        The other privacy models met (``request``'s ``models`` in :meth:`to_dict`: their
        descriptions).
    """

    levels: dict[str, int]
    height: int
    suppressed: int
    criterion: str
    value: int | float
    classes: int
    #: every utility metric of the node (:data:`~incrowd.generalization.METRICS`)
    metrics: dict | None = None
    #: for "k+l": {"k": k, "l": l}
    thresholds: dict | None = None
    #: the privacy models met beside k, l and t (incrowd.privacy)
    models: tuple = ()

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
        The nearest answers when one of :data:`RELAXATIONS` is relaxed (for several
        thresholds: the suppression, the height, and each threshold with the others kept).
    criterion : {"k", "l", "k+l", "t", "k+t", "l+t", "k+l+t"}
        The privacy model asked for.
    value : int or float
        Its threshold (the first of k, l, t given).
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
        For several thresholds or t: ``{"k": k, "l": l, "t": t}`` (those given).
    models : tuple of PrivacyModel
        The other privacy models met (``request``'s ``models`` in :meth:`to_dict`: their
        descriptions).
    """

    status: str
    exact: Node | None
    relaxations: dict[str, Node | None]
    criterion: str
    value: int | float
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
    #: the privacy models met beside k, l and t (incrowd.privacy)
    models: tuple = ()

    def request(self) -> tuple[int | None, list[PrivacyModel]]:
        """``(k, models)`` as asked (thresholds read back as their models): what
        :meth:`LatticeTable.suppressed_all` takes to count each node's suppression for it.

        Returns
        -------
        tuple
        """
        from ..privacy import models_from_spec  # the registry loads every model (pandas): only when asked

        given = dict(self.thresholds) if self.thresholds else {self.criterion: self.value}
        k = given.pop("k", None)
        return (None if k is None else int(k)), [*models_from_spec(given), *self.models]

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
                        **({"models": {m.key: m.describe() for m in self.models}} if self.models else {}),
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


def negotiate(lattice: LatticeTable, *, k: int | None = None,
              max_levels: Mapping[str, int] | None = None,
              max_suppression: int | float | str = 0,
              runtime_histogram: bool = False, metric: str = DEFAULT_METRIC,
              weights: Mapping[str, float] | None = None,
              models: Sequence[PrivacyModel] = ()) -> Negotiation:
    """Answer a request on ``lattice``.

    ``max_levels`` maps attributes to their highest tolerable level (v_max); attributes left out
    may go to their top level. ``max_suppression`` is a count, a fraction, or a string such as
    ``"1%"``. ``runtime_histogram`` (partial lattices): compute v_max's histogram now when the
    lattice lacks it. ``metric`` (one of :data:`~incrowd.generalization.METRICS`, default
    ``"loss"``) is what an answer minimizes; ``"height"`` gives the lowest node. ``weights``
    maps quasi-identifiers to weights of ``loss``, ``entropy`` and ``precision``.

    ``models`` are the privacy models asked for beside k. Distinct l
    (:class:`~incrowd.privacy.DistinctL`) and t (:class:`~incrowd.privacy.TCloseness`) are
    thresholds of the lattice's histograms and distances: with both k and l a class is
    suppressed when it has fewer than k rows or fewer than l distinct sensitive values, as
    :func:`incrowd.publish` does: each node's suppression is then computed from the lattice's
    bottom classes (the two histograms only bound it), and the relaxations are the suppression,
    the height, the largest k with l kept and the largest l with k kept. t (alone or with k, l
    or both) also suppresses a class whose sensitive values lie farther than t (earth mover's
    distance, ordered for numbers, equal for text, as :func:`incrowd.publish` measures it) from
    the whole table's; its relaxation is the least t some node meets, the others kept. A
    lattice file written before lattices kept the sensitive values' order refuses t with the
    way to rebuild it.

    Parameters
    ----------
    lattice : LatticeTable
        The lattice to search (a :class:`~incrowd.generalization.Lattice` built or opened).
    k : int or None, default None
        The k of k-anonymity asked for.
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
    models : sequence of PrivacyModel, default ()
        The privacy models (:mod:`incrowd.privacy`) met with k, each on the lattice's sensitive
        attribute: distinct l and t as said above; entropy or recursive l, (alpha, k), beta,
        delta-disclosure, average risk (k-map from the weights is not available on a lattice):
        a class any of them refuses is suppressed, a model of the whole release judges the
        classes left. Their relaxations are the suppression and the height.

    Returns
    -------
    Negotiation
        The exact answer (or None) and the relaxed answers.
    """
    l, t, models = _thresholds(models)
    models = _lattice_models(lattice, models)
    if t is not None or models:
        return _search_classes(lattice, k, l, t, max_levels, max_suppression, runtime_histogram, metric, weights,
                            models)
    if k is None and l is None:
        raise ParameterError("give k (k-anonymity), l (naive l-diversity) or both")
    if k is not None and l is not None:
        return _search_classes(lattice, k, l, t, max_levels, max_suppression, runtime_histogram, metric, weights,
                            models)
    criterion, value = _criterion(lattice, k, l)
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


def _k_and_l_bounds(k_hist: Histograms, l_hist: Histograms, k: int, l: int, n: int):
    """Per node, the least and the most rows failing k or l: the classes failing either are the
    union of those failing k and those failing l."""
    k_rows, l_rows = k_hist.rows_below_all(k), l_hist.rows_below_all(l)
    return np.maximum(k_rows, l_rows), np.minimum(k_rows + l_rows, n)


def suppressed_k_and_l(lattice: LatticeTable, k: int, l: int) -> np.ndarray:
    """Rows failing k or l at every node, in id order; -1 where a partial lattice lacks the node."""
    _criterion(lattice, k, None)
    _criterion(lattice, None, l)
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


#: nodes whose classes a negotiation with t keeps at once
_FACTS_KEPT = 64


def check_t(t) -> float:
    """t of t-closeness, checked: a number in (0, 1] (the earth mover's distance lies in [0, 1])."""
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(t)) or not 0 < t <= 1:
        raise ParameterError(f"t must be a number in (0, 1]; got {t!r}")
    return float(t)


def _checked_request(lattice: LatticeTable, k, l, t) -> float:
    """t checked, and k and l where given, against a lattice that can answer t; returns t."""
    t = check_t(t)
    _check_t_lattice(lattice)
    if k is not None:
        _criterion(lattice, k, None)
    if l is not None:
        _criterion(lattice, None, l)
    return t


def _check_t_lattice(lattice: LatticeTable) -> None:
    if lattice.sensitive is None:
        raise ParameterError("t-closeness needs a lattice built with a sensitive attribute (--sensitive)")
    if lattice.sensitive_order is None:
        raise ParameterError(NO_T)


def _search_classes(lattice: LatticeTable, k, l, t, max_levels, max_suppression, runtime_histogram: bool,
                 metric: str, weights, models: Sequence[PrivacyModel] = ()) -> Negotiation:
    """:func:`negotiate` with t or more models (and k, l or both): a class fails when it has
    fewer than k rows, fewer than l distinct sensitive values, lies farther than t from the
    whole table's sensitive values (publish's rule and distance) or a model refuses it; a node
    fails when a model of the whole release refuses the classes it keeps.

    A coarser class may fail t (or another model) where its parts pass, so suppression is no
    longer monotone in the lattice: the rows failing k or l (the histograms) only bound a node's
    suppression from below, and a node's classes are computed from the bottom classes, lazily:
    in the order of height (metric ``height``) or of the metric's lower bound, stopping as the
    search without t does (:func:`~._utility_metrics.best_node`)."""
    if t is not None:
        t = _checked_request(lattice, k, l, t)
    else:
        if k is not None:
            _criterion(lattice, k, None)
        if l is not None:
            _criterion(lattice, None, l)
    given = {name: value for name, value in (("k", k), ("l", l)) if value is not None}
    kk, ll = int(given.get("k", 1)), int(given.get("l", 0))  # 1 and 0: never fail
    # without t a distance of 0 never fails: the thresholds keep their (k, l, t) shape
    tt = t if t is not None else math.inf
    metric = check_metric(metric)
    tabs = tables(lattice, weights)
    (vmax_vector, limit, n, within, arrays, vmax, k_hist, l_hist, materialized,
     runtime_seconds) = _sublattice(lattice, max_levels, max_suppression, runtime_histogram,
                                    "t-closeness needs a lattice built with a sensitive attribute (--sensitive)",
                                    need_sensitive=t is not None or l is not None)
    # the rows failing k or l: a lower bound of the rows failing k, l, t or a model
    low = k_hist.rows_below_all(kk)
    if l_hist is not None:
        low = np.maximum(low, l_hist.rows_below_all(ll))
    heights = arrays.heights
    in_sub = np.all(arrays.levels <= vmax_vector, axis=1) & materialized
    nodes = _NodeClasses(lattice, tabs, t is not None, models)
    evaluated = nodes.evaluated
    facts, failing = nodes.facts, nodes.failing

    def rows_at(v: int, thr: tuple) -> int:
        return nodes.rows(v, thr)

    supp = np.full(lattice.n_nodes, -1, np.int64)

    def supp_of(v: int) -> int:
        if supp[v] < 0:
            supp[v] = rows_at(v, (kk, ll, tt))
        return int(supp[v])

    search = {"gap": 0.0}
    bound = None if metric == "height" else tabs.bounds(metric, k_hist, "k+l+t")

    def choose(candidates: np.ndarray, thr: tuple, rows_of, exact: bool = False, cap: int = within) -> tuple[int, int]:
        """(node, its suppression) with the least metric among ``candidates`` suppressing at
        most ``cap`` rows (ties: lowest height, least suppression, lowest id), (-1, -1) when
        none; ``rows_of`` gives a node's suppression at ``thr``."""
        ids = np.flatnonzero(candidates)
        if metric == "height":
            for h in np.unique(heights[ids]):
                level = ids[heights[ids] == h]
                rows = np.array([rows_of(int(v)) for v in level], np.int64)
                ok = rows <= cap
                if ok.any():
                    pick = np.lexsort((level[ok], rows[ok]))[0]
                    return int(level[ok][pick]), int(rows[ok][pick])
            return -1, -1
        lower = bound if bound is not None else np.zeros(heights.size)
        order = ids[np.lexsort((ids, heights[ids], lower[ids]))]
        best, best_key = -1, None  # type: int, tuple[float, int, int, int] | None
        here = 0  # nodes whose metric this search computed
        for v in order.tolist():
            if best_key is not None and lower[v] > best_key[0] + _tie(best_key[0]):
                break
            if here >= MAX_EVALUATIONS:
                if exact:
                    search["gap"] = max(0.0, best_key[0] - float(lower[v])) if best_key is not None else math.inf
                break
            rows = rows_of(v)
            if rows > cap:
                continue
            got = tabs.evaluate(v, "k+l+t", thr, failing(v, thr))[metric]
            if got is None:  # impossible: t needs the sensitive column, classification's target
                raise AssertionError(f"metric {metric!r} has no value at node {v}")
            value = float(got)
            evaluated["metric"] += 1
            here += 1
            key: tuple[float, int, int, int] = (value, int(heights[v]), rows, v)
            if best_key is None or value < best_key[0] - _tie(best_key[0]) or (
                    abs(value - best_key[0]) <= _tie(best_key[0]) and key[1:] < best_key[1:]):
                best, best_key = v, key
        return (best, best_key[2]) if best_key is not None else (-1, -1)

    def node(found: tuple[int, int], thr: tuple) -> Node | None:
        node_id, rows = found
        if node_id < 0:
            return None
        bad = failing(node_id, thr)
        reached = {**{name: value for name, value in zip(("k", "l"), thr) if name in given},
                   **({"t": thr[2]} if t is not None else {})}
        return Node(lattice.level_dict(node_id), int(heights[node_id]), int(rows), criterion,
                    next(iter(reached.values()), 0), int((~bad).sum()), tabs.evaluate(node_id, "k+l+t", thr, bad),
                    reached)

    criterion = "+".join([*given, *(["t"] if t is not None else []), *(m.key for m in models)])
    t1 = time.perf_counter()
    exact = node(choose(in_sub & (low <= within), (kk, ll, tt), supp_of, exact=True), (kk, ll, tt))
    visited = {"exact": evaluated["count"]}
    relaxations: dict[str, Node | None] = {"max_suppression": None, "height": None,
                                           **({} if models else {name: None for name in given}),
                                           **({"t": None} if t is not None and not models else {})}
    asked = [*given, *(["t"] if t is not None else [])]
    if exact is None:
        before = evaluated["count"]

        def sub_facts(v: int):
            """A sublattice node's classes, its suppression kept on the way."""
            got = facts(v)
            supp_of(v)
            return got[:3]

        # relaxing each threshold reads every node of the sublattice: one pass, which also gives
        # each its suppression; with more models, whose parameters do not relax alone, the
        # suppression of each node is read instead
        if models:
            relaxed = {}
            for v in np.flatnonzero(in_sub).tolist():
                supp_of(v)
        else:
            relaxed = _relax_with_t(asked, sub_facts, kk, ll, tt, in_sub, within)
        # the least suppression of the sublattice, nodes suppressing every row left out
        known = in_sub & (supp < n)
        if known.any():
            least = int(supp[known].min())
            relaxations["max_suppression"] = node(
                choose(in_sub & (supp == least), (kk, ll, tt), lambda v: int(supp[v]), cap=least), (kk, ll, tt))
        visited["max_suppression"] = evaluated["count"] - before
        before = evaluated["count"]
        relaxations["height"] = node(choose(materialized & (low <= within), (kk, ll, tt), supp_of), (kk, ll, tt))
        visited["height"] = evaluated["count"] - before
        for name, (thr, meets) in relaxed.items():
            before = evaluated["count"]
            if thr is not None:
                relaxations[name] = node(choose(meets, thr, lambda v, at=thr: rows_at(v, at)), thr)
            visited[name] = evaluated["count"] - before
    seconds = time.perf_counter() - t1
    thresholds = {**given, **({"t": t} if t is not None else {})}
    return Negotiation(
        status="exact" if exact is not None else "relaxed", exact=exact, relaxations=relaxations,
        criterion=criterion, value=next(iter(thresholds.values())), max_levels=lattice.level_dict(vmax),
        max_suppression=limit, n_rows=n, visited=visited, seconds=seconds, partial=lattice.is_partial,
        runtime_histogram_seconds=runtime_seconds, max_suppression_given=str(max_suppression), metric=metric,
        metric_evaluated=int(evaluated["metric"]), optimality_gap=search["gap"], thresholds=thresholds,
        models=tuple(models),
    )


def _thresholds(models: Sequence[PrivacyModel]) -> tuple[int | None, float | None, list[PrivacyModel]]:
    """(distinct l, t, the other models) of a request: the one place a negotiation tells the
    thresholds its histograms and distances answer (with relaxations of their own) from the
    models its classes' judge answers."""
    l = t = None
    others = []
    for model in models:
        # by key: a lattice file's negotiation loads neither pandas nor t's hierarchy code
        if not isinstance(model, PrivacyModel) or model.column is not None or getattr(model, "hierarchy", None):
            others.append(model)
        elif model.key == "l":
            if l is not None:
                raise ParameterError("models: give distinct l once")
            l = int(model.checked().number())
        elif model.key == "t":
            if t is not None:
                raise ParameterError("models: give t once")
            t = float(model.checked().number())
        else:
            others.append(model)
    return l, t, others


def _criterion(lattice: LatticeTable, k: int | None, l: int | None) -> tuple[str, int]:
    """:func:`check_criterion` of k alone or of distinct l alone."""
    return check_criterion(lattice, k, [] if l is None else [distinct_l(l)])


def suppressed_at_every_node(lattice: LatticeTable, k: int | None, models: Sequence[PrivacyModel]) -> np.ndarray:
    """Rows to suppress at every node, in id order; -1 where a partial lattice lacks the node
    (:meth:`LatticeTable.suppressed_all`)."""
    l, t, others = _thresholds(models)
    if others:
        return suppressed_with_models(lattice, k, l, t, others)
    if t is not None:
        return suppressed_with_t(lattice, k, l, t)
    if k is not None and l is not None:
        return suppressed_k_and_l(lattice, k, l)
    criterion, value = _criterion(lattice, k, l)
    return np.where(lattice.materialized, criterion_histograms(lattice, criterion).rows_below_all(value), -1)


def _lattice_models(lattice: LatticeTable, models: Sequence[PrivacyModel]) -> list[PrivacyModel]:
    """The models beyond k, l and t asked of a lattice, checked: k goes by its own argument, and
    a model of the sensitive values needs a lattice that kept their order."""
    out = list(models)
    for model in out:
        if not isinstance(model, PrivacyModel):
            raise ParameterError(f"models must be privacy models of incrowd.privacy; got {model!r}")
        if model.key == "k":
            raise ParameterError("give k as negotiate's k=, not among models")
        if model.key in ("l", "t"):
            raise ParameterError(f"{model.describe()}: a lattice has one sensitive attribute, and t's hierarchical "
                                 "distance is met by publish; give l or t without a column or hierarchy")
        if model.key == "differential_privacy":
            raise ParameterError("differential_privacy is met by publish (SafePub's random sample and search by the "
                                 "exponential mechanism), not by judging a lattice's classes")
        if model.needs_sensitive:
            _check_t_lattice(lattice)
    return out


class _NodeClasses:
    """The classes of lattice nodes, computed from the bottom classes and judged by k, l, t and
    the models: the last nodes' kept while a search returns to them (answers, their metrics),
    a bounded cache, as a node holds arrays the size of its classes."""

    def __init__(self, lattice: LatticeTable, tabs: MetricTables, with_t: bool, models: Sequence[PrivacyModel]):
        self.tabs, self.with_t = tabs, with_t
        self.judge = _ModelJudge(lattice, tabs, models)
        self.cache: dict[int, tuple] = {}
        self.evaluated = {"count": 0, "metric": 0}

    def facts(self, v: int):
        """(class sizes, distinct values, distances, refused by a model) of node v's classes."""
        if v not in self.cache:
            if len(self.cache) >= _FACTS_KEPT:
                del self.cache[next(iter(self.cache))]
            class_of, _, sizes, distinct, _, distance = self.tabs.node_facts(v, False, self.with_t)
            if distinct is None:
                distinct = np.full(sizes.size, np.iinfo(np.int64).max)
            if distance is None:
                distance = np.zeros(sizes.size)
            self.cache[v] = (sizes, distinct, distance, self.judge.refused(class_of, sizes))
            self.evaluated["count"] += 1
        return self.cache[v]

    def failing(self, v: int, thr: tuple) -> np.ndarray:
        """Per class of node v: whether it is suppressed at thresholds ``thr`` (k, l, t)."""
        sizes, distinct, distance, refused = self.facts(v)
        bad = self.tabs.failing(sizes, distinct, "k+l+t", thr, distance) | refused[0]
        if refused[1] is not None and self.judge.release_refuses(refused[1], ~bad):
            bad = np.ones(sizes.size, dtype=bool)  # a release its models refuse is no answer
        return bad

    def rows(self, v: int, thr: tuple) -> int:
        return int(self.facts(v)[0][self.failing(v, thr)].sum())


def suppressed_with_models(lattice: LatticeTable, k: int | None, l: int | None, t: float | None,
                           models: Sequence[PrivacyModel]) -> np.ndarray:
    """Rows failing k, l, t (those given) or a model at every node, in id order; -1 where a
    partial lattice lacks the node."""
    models = _lattice_models(lattice, models)
    if t is not None:
        t = _checked_request(lattice, k, l, t)
    threshold = (1 if k is None else int(k), 0 if l is None else int(l), math.inf if t is None else t)
    nodes = _NodeClasses(lattice, tables(lattice), t is not None, models)
    out = np.full(lattice.n_nodes, -1, np.int64)
    for v in np.flatnonzero(lattice.materialized).tolist():
        out[v] = nodes.rows(v, threshold)
    return out


class _ModelJudge:
    """The models judging a lattice node's classes, built from its bottom classes."""

    def __init__(self, lattice: LatticeTable, tabs: MetricTables, models: Sequence[PrivacyModel]):
        self.judge: Judge | None = None
        if not models:
            return
        columns, pairs = [], []
        if tabs.target is not None and lattice.sensitive_order is not None and tabs.reference is not None:
            columns.append(CodedColumn(str(lattice.sensitive), tuple(lattice.sensitive_order), bool(tabs.ordered),
                                       tabs.reference, bool(tabs.missing >= 0)))
            pairs.append((np.arange(tabs.counts.size, dtype=np.int64), tabs.target, tabs.counts))
        self.judge = Judge(models, columns, tabs.counts, pairs, None)

    def refused(self, class_of: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, dict | None]:
        """(per class: refused by a model, the statistics a model of the whole release reads)."""
        if self.judge is None:
            return np.zeros(sizes.size, dtype=bool), None
        stats = self.judge.stats(class_of, int(sizes.size))
        return self.judge.failing_classes(stats, int(sizes.size)), stats

    def release_refuses(self, stats: dict, keep: np.ndarray) -> bool:
        return self.judge is not None and self.judge.release_fails(stats, keep) is not None


def suppressed_with_t(lattice: LatticeTable, k: int | None, l: int | None, t: float) -> np.ndarray:
    """Rows failing k, l or t at every node, in id order (k and l when given); -1 where a
    partial lattice lacks the node."""
    t = _checked_request(lattice, k, l, t)
    threshold = (1 if k is None else int(k), 0 if l is None else int(l), t)
    tabs = tables(lattice)
    out = np.full(lattice.n_nodes, -1, np.int64)
    nodes = np.flatnonzero(lattice.materialized).tolist()
    fast = _compiled_rows(tabs, threshold)
    for v in nodes:
        out[v] = fast(tabs.levels[v]) if fast is not None else tabs.suppression(v, "k+l+t", threshold)[0]
    return out


def _compiled_rows(tabs: MetricTables, threshold: tuple):
    """Rows failing (k, l, t) at a level vector, by publish's compiled node kernels
    (:func:`~._node_classes.node_classes`, :func:`incrowd._native.sensitive_counts`: the same flags and
    distances as the numpy lines, tested equal), for every node at once (the web's view); None
    where a key or the distance's numerator could pass int64, or an ordered column has over
    1024 values (the numpy lines judge those, as in publish)."""
    ref = tabs.reference
    if ref is None or tabs.target is None:
        return None
    n_ref, m = int(ref.sum()), int(ref.size)
    if m * n_ref * n_ref >= 2**62 or (tabs.ordered and m > 1024):
        return None
    sizes = [c.sizes for c in tabs.columns]
    bound = 1
    for per_level in sizes:
        bound *= max(per_level)
    if bound >= 2**62:
        return None
    from ._node_classes import node_classes

    maps = [c.maps[level] for c in tabs.columns for level in range(len(c.maps))]
    table = np.zeros((len(maps), max((x.size for x in maps), default=1)), np.int64)
    for i, code_map in enumerate(maps):
        table[i, : code_map.size] = code_map
    row0 = np.concatenate([[0], np.cumsum([len(c.maps) for c in tabs.columns])[:-1]]).astype(np.int64)
    widths = np.array([w for per_level in sizes for w in per_level], np.int64)
    codes0 = np.ascontiguousarray(tabs.bottom, dtype=np.int64)
    first_key = np.zeros(codes0.shape[0], np.int64)
    pair_b = np.arange(codes0.shape[0], dtype=np.int64)  # one (bottom class, value) pair per row
    value = np.ascontiguousarray(tabs.target, dtype=np.int64)
    counts = np.ascontiguousarray(tabs.counts, dtype=np.int64)
    reference = np.ascontiguousarray(ref, dtype=np.int64)
    k, l, t = threshold

    def rows(levels: np.ndarray) -> int:
        map_rows = row0 + levels
        class_of, _, n_classes = node_classes(codes0, first_key, table, map_rows, widths[map_rows])
        size = np.bincount(class_of, weights=counts, minlength=n_classes).astype(np.int64)
        fail = size < k
        distinct = np.zeros(n_classes, np.int64)
        distance = np.zeros(n_classes)
        sensitive_counts(class_of, n_classes, pair_b, value, counts, reference, tabs.ordered, tabs.missing >= 0,
                         True, distinct, distance)
        if l:
            fail |= distinct < l
        fail |= _emd.exceeds(distance, t)
        return int(size[fail].sum())

    return rows


def _relax_with_t(names, facts, k: int, l: int, t: float, in_sub: np.ndarray, within: int) -> dict:
    """Relax each of ``names`` (k, l, t), the others kept: the largest k (or l) >= 2, or the
    least t, some node of the sublattice meets within the limit; per name, ((k, l, t) relaxed,
    the nodes that may meet it) or (None, None). A class failing a kept threshold is suppressed
    whatever the relaxed one. One pass over the sublattice for every name."""
    reach = {name: np.full(in_sub.size, np.inf if name == "t" else 0.0) for name in names}
    for v in np.flatnonzero(in_sub).tolist():
        sizes, distinct, distance = facts(v)
        far = _emd.exceeds(distance, t)
        for name in names:
            if name == "k":
                held = (distinct < l) | far
                reach[name][v] = _largest(sizes[~held], sizes[~held], int(sizes[held].sum()), within)
            elif name == "l":
                held = (sizes < k) | far
                reach[name][v] = _largest(distinct[~held], sizes[~held], int(sizes[held].sum()), within)
            else:
                held = (sizes < k) | (distinct < l)
                reach[name][v] = _least_t(distance[~held], sizes[~held], int(sizes[held].sum()), within)
    out: dict[str, tuple] = {}
    for name, got in reach.items():
        if name == "t":
            least = float(got.min(initial=np.inf))
            if not math.isfinite(least):
                out[name] = (None, None)
                continue
            # the least t kept in (0, 1]: a node meets it when its classes within t fit the limit
            least = max(least, float(np.nextafter(0.0, 1.0)))
            out[name] = ((k, l, least), in_sub & (got <= least + 2 * _emd.TOLERANCE))
            continue
        top = int(got.max(initial=0))
        if top < 2:
            out[name] = (None, None)
            continue
        out[name] = ((top, l, t) if name == "k" else (k, top, t), in_sub & (got >= top))
    return out


def _least_t(distance: np.ndarray, rows: np.ndarray, base: int, within: int) -> float:
    """The least t at which ``base`` plus the rows of the classes farther than t stay within
    ``within`` (inf: none): one of the distances, as a class fails t only beyond its own."""
    if base > within:
        return math.inf
    if distance.size == 0:  # every class already fails k or l
        return 0.0
    order = np.argsort(distance, kind="stable")
    d, r = distance[order], rows[order]
    values, starts = np.unique(d, return_index=True)
    above = np.concatenate([np.cumsum(r[::-1])[::-1], [0]])[np.append(starts[1:], d.size)]  # rows beyond each
    ok = base + above <= within
    if not ok.any():  # unreachable: at the largest distance no class is beyond it
        return math.inf
    return float(values[ok][0]) if values.size else 0.0


def _tie(value: float) -> float:
    return 1e-12 * max(1.0, abs(value))


def _sublattice(lattice: LatticeTable, max_levels, max_suppression, runtime_histogram: bool, no_sensitive: str,
                need_sensitive: bool = True):
    """What a search with l or t starts from: v_max (as a level vector and a node id), the
    suppression limit in rows (``within``: never every row), the node arrays, and the k and l
    histograms with v_max's added when ``runtime_histogram`` asks and a partial lattice lacks
    it (``runtime_seconds`` its time, else None). ``no_sensitive``: the error without l
    histograms (the callers' checks refuse such a lattice first)."""
    vmax_vector = lattice.level_vector(dict(max_levels or {}), default="top")
    limit = max_suppression_count(max_suppression, lattice.n_rows)
    n = lattice.n_rows
    within = min(limit, n - 1)  # a node suppressing every row is never an answer
    arrays = _arrays(lattice)
    vmax = int(np.dot(vmax_vector, arrays.strides))
    k_hist, l_hist = lattice.k_histograms, lattice.l_histograms
    if l_hist is None and need_sensitive:
        raise ParameterError(no_sensitive)
    materialized = lattice.materialized
    runtime_seconds = None
    t0 = time.perf_counter()
    if runtime_histogram and not materialized[vmax]:
        _, k_part, l_part = lattice.node_histograms(vmax)
        k_hist = _with_node(k_hist, vmax, k_part)
        l_hist = _with_node(l_hist, vmax, l_part) if l_hist is not None else None
        materialized = materialized.copy()
        materialized[vmax] = True
        runtime_seconds = time.perf_counter() - t0
    return vmax_vector, limit, n, within, arrays, vmax, k_hist, l_hist, materialized, runtime_seconds
