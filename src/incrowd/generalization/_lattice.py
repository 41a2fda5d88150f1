"""The lattice of full-domain generalization schemes and each node's suppression histograms.

A node is a level vector (one level per quasi-identifier); its id is the level vector read as a
mixed-radix number with the first attribute most significant, so ids sort like level vectors.
Height = sum of levels. Histograms per node (slides 004, "Histograms"):

- class sizes: how many equivalence classes have each size. Rows suppressed for k = rows in
  classes smaller than k.
- with a sensitive attribute, distinct sensitive values per class: how many classes (and rows)
  have each count. Rows suppressed for naive l-diversity = rows in classes with fewer than l.
  A missing sensitive value is never a distinct value (publish's rule): a class of only
  missing values counts 0.

Build: values are dictionary-encoded once, DuckDB groups the data once at the bottom node, and
every other node is rolled up from a finer node's classes along a spanning tree of the lattice
(node v comes from v minus one level in its first non-zero attribute), so each step works on
grouped counts, never raw rows. A partial lattice computes only the nodes ranked highest by
Lambda(v) = sum_i log2(gamma_i) * mu_i (slides 004, "Important nodes").
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import numpy as np

from .._runtime import compiled_so_far
from .._runtime import lazy as _lazy
from ..exceptions import DataError, ParameterError, name_list
from ._hierarchy import Hierarchy, check_labels, interval_hierarchy, load_hierarchies
from ._histograms import Histograms, check_criterion, criterion_histograms
from ._limits import (
    DEFAULT_MAX_MEMORY,
    DEFAULT_MAX_NODES,
    cancel_check,
    check_max_nodes,
    check_memory,
    check_nodes,
    count_bottom_classes,
    parse_size,
)
from ._node_tables import generalize_table, rollup
from ._table import LatticeTable, _as_level, _histogram_parts, code_map_table, node_levels  # noqa: F401

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = _lazy.module("pandas")  # only building and saving need pandas, not opening a file


class Lattice(LatticeTable):
    """Generalization lattice over ``attributes`` with per-node histograms.

    Build with :meth:`build`, store with :meth:`save`, reopen with :meth:`open`, ask with
    :meth:`negotiate`; :meth:`suppressed` and :meth:`histogram` read single nodes. The table
    itself (levels, ids, histograms, the bottom classes) is :class:`LatticeTable`, which the
    negotiation, the lattice file and the histograms read without naming this builder.

    Made by :meth:`build` or :meth:`open`, not constructed directly.

    Attributes
    ----------
    attributes : tuple of str
        The quasi-identifiers, in the order of the level vectors.
    hierarchies : dict of str to Hierarchy
        One per attribute.
    n_rows : int
        Rows of the data.
    sensitive : str or None
        The sensitive attribute of the l histograms.
    sensitive_values : int
        Its distinct values.
    sensitive_order : tuple or None
        Those values in code order (t's order); None in a lattice file written before t could
        be negotiated.
    sensitive_ordered : bool or None
        Whether t's distance takes them ordered (numbers) or equal (text), as ``publish`` does.
    sensitive_missing : bool
        Whether the sensitive attribute has missing values (one missing value, the last code:
        never a distinct value for l, one category for t, as ``publish`` counts it).
    materialized : numpy.ndarray of bool
        Per node, whether its histograms were computed (all of them in a full lattice).
    n_classes : numpy.ndarray
        Per node, its equivalence classes.
    k_histograms, l_histograms : Histograms
        Per node, the class sizes and (with ``sensitive``) the distinct sensitive values.
    score : numpy.ndarray
        Per node, its Lambda score (the order of a partial build).
    level_scores : pandas.DataFrame
        Per attribute and level, the scores Lambda is made of.
    bottom_codes, bottom_counts : numpy.ndarray
        The classes of the bottom node and their sizes.
    fraction : float
        The share of nodes built (1.0: the full lattice).
    timings : dict of str to float
        Seconds per phase of the build.
    source : str
        What it was built from, for messages.
    """

    # -- single-node look-ups --------------------------------------------------------------

    def histogram(self, levels: Mapping[str, int] | Sequence[int]) -> dict:
        """Class-size histogram ``{size: classes}`` and, with a sensitive attribute,
        ``{distinct values: (classes, rows)}`` of one node."""
        node = self.node_id(levels)
        if not self.materialized[node]:
            raise ParameterError(
                f"node {self.level_dict(node)} is not in this partial lattice; build the full "
                "lattice or negotiate with runtime_histogram=True"
            )
        keys, classes, _ = self.k_histograms.segment(node)
        out: dict[str, dict] = {"class_sizes": {int(s): int(c) for s, c in zip(keys, classes)}}
        if self.l_histograms is not None:
            keys, classes, rows = self.l_histograms.segment(node)
            out["distinct_sensitive"] = {int(d): (int(c), int(r)) for d, c, r in zip(keys, classes, rows)}
        return out

    def suppressed(self, levels: Mapping[str, int] | Sequence[int], *, k: int | None = None,
                   models: Sequence = ()) -> int:
        """Rows to suppress at a node so the rest is k-anonymous (or meets the one model of
        ``models`` the histograms count: naive l-diversity)."""
        criterion, value = check_criterion(self, k, models)
        node = self.node_id(levels)
        if not self.materialized[node]:
            raise ParameterError(f"node {self.level_dict(node)} is not in this partial lattice")
        return criterion_histograms(self, criterion).below(node, value)[0]

    def suppressed_all(self, *, k: int | None = None, models: Sequence = ()) -> np.ndarray:
        """Rows to suppress at every node, in id order; -1 where a partial lattice lacks the node.
        A class fails when it has fewer than k rows or a model of ``models``
        (:mod:`incrowd.privacy`) refuses it (as in :meth:`negotiate`)."""
        from ._negotiate import suppressed_at_every_node

        return suppressed_at_every_node(self, k, models)

    def negotiate(self, *, k: int | None = None,
                  max_levels: Mapping[str, int] | None = None,
                  max_suppression: int | float | str = 0, runtime_histogram: bool = False,
                  metric: str = "loss", weights: Mapping[str, float] | None = None,
                  models: Sequence = ()):
        """Answer a request; see :func:`incrowd.generalization.negotiate`."""
        from ._negotiate import negotiate

        return negotiate(self, k=k, max_levels=max_levels, max_suppression=max_suppression,
                         runtime_histogram=runtime_histogram, metric=metric, weights=weights, models=models)

    # -- persistence -----------------------------------------------------------------------

    def save(self, path, *, inputs=()) -> object:
        """Write the lattice file atomically; never over its source data file (nor over
        ``inputs``, files or folders)."""
        from ._store import save_lattice

        return save_lattice(self, path, inputs=inputs)

    @classmethod
    def open(cls, path) -> Lattice:
        from ._store import load_lattice

        return load_lattice(path, cls)

    def describe(self) -> dict:
        return {
            "attributes": list(self.attributes),
            "levels": {a: self.hierarchies[a].max_level for a in self.attributes},
            "nodes": self.n_nodes,
            "materialized_nodes": int(self.materialized.sum()),
            "partial": self.is_partial,
            "fraction": self.fraction,
            "rows": self.n_rows,
            "sensitive": self.sensitive,
            "sensitive_values": self.sensitive_values if self.sensitive else None,
            # t's distance over the sensitive values; None: no sensitive attribute, or a lattice
            # file from before t could be negotiated (rebuild it for t)
            "sensitive_distance": (None if self.sensitive_ordered is None
                                   else "ordered" if self.sensitive_ordered else "equal"),
            "sensitive_missing": bool(self.sensitive_missing) if self.sensitive else None,
            "bottom_classes": int(self.n_classes[0]) if self.materialized[0] else None,
            "seconds": dict(self.timings),
            "compile_seconds": float(self.timings.get("compile", 0.0)),
        }

    # -- building --------------------------------------------------------------------------

    @classmethod
    def build(cls, data: pd.DataFrame, quasi_identifiers: Sequence[str] | str, *,
              hierarchies: Mapping[str, Hierarchy] | str | None = None,
              intervals: Mapping[str, Sequence[float]] | None = None,
              sensitive: str | None = None, fraction: float = 1.0,
              progress: Callable[[int, int], None] | None = None,
              source: str = "", max_nodes: int | None = DEFAULT_MAX_NODES,
              max_memory: int | str | None = DEFAULT_MAX_MEMORY, cancel=None,
              sensitive_order: Sequence | None = None) -> Lattice:
        """Build the lattice of ``quasi_identifiers`` over ``data``.

        ``hierarchies``: a folder of ARX-style files or a mapping attribute -> :class:`Hierarchy`;
        ``intervals``: attribute -> widths for numeric columns without a file; ``fraction`` < 1
        builds a partial lattice of the top ``fraction`` of nodes by Lambda (plus the top node);
        ``progress(done, total)`` is called as nodes are computed. ``sensitive`` is encoded as
        ``publish`` encodes a sensitive column (:func:`incrowd.values.sensitive_codes`): its
        values in t's order and whether t's distance is ordered (numbers) or equal (text) are
        kept, so the lattice can answer k, l and t. ``sensitive_order`` gives the order of a
        text sensitive column (t's ordered distance), as ``ordered = [...]`` does in a
        ``publish`` spec. A missing sensitive value (empty cell, the NA vocabulary, system
        missing) is one missing value, never a distinct value for l and one category for t.

        Before any data are encoded, a build computing more than ``max_nodes`` nodes, or whose
        estimated memory (nodes and bottom classes) exceeds ``max_memory`` (bytes or "8G"), is
        refused with a :class:`ParameterError`; None lifts a limit. ``cancel`` (a
        ``threading.Event`` or a callable returning True to stop) is checked between nodes: the
        build then raises :class:`BuildCancelled`.
        """
        t0, c0 = time.perf_counter(), compiled_so_far()
        max_nodes = check_max_nodes(max_nodes)
        max_memory = parse_size(max_memory, "max_memory")
        stop = cancel_check(cancel)
        qis, hier = resolve_hierarchies(data, quasi_identifiers, hierarchies, intervals, sensitive)
        check_fraction(fraction)
        if sensitive_order is not None and sensitive is None:
            raise ParameterError("sensitive_order needs sensitive: name the sensitive column it orders")
        if data.shape[0] == 0:
            raise DataError("the data has no rows")
        depths = [hier[a].depth for a in qis]
        check_nodes(depths, fraction, max_nodes)
        if max_memory is not None:
            classes = count_bottom_classes(data, qis + ([sensitive] if sensitive is not None else []))
            check_memory(depths, fraction, classes, max_memory, n_rows=int(data.shape[0]),
                         sensitive=sensitive is not None)
        stop()
        from ._cells import encode_cells  # missing cells and codes met as publish meets them

        codes0 = np.column_stack([encode_cells(hier[a], data[a]) for a in qis]).astype(np.int32)
        n_sensitive = 0
        order = ordered = None
        missing = False
        if sensitive is not None:
            s_codes, order, ordered, missing = sensitive_codes(data[sensitive], sensitive_order)
            n_sensitive = len(order)
            codes0 = np.column_stack([codes0, s_codes.astype(np.int32)])
        t1, c1 = time.perf_counter(), compiled_so_far()
        stop()
        bottom_codes, bottom_counts = _group_bottom(codes0)
        del codes0
        t2, c2 = time.perf_counter(), compiled_so_far()
        # each phase without numba compiling; the compile time goes apart, in "compile"
        return cls.from_bottom(qis, hier, bottom_codes, bottom_counts, n_rows=int(data.shape[0]),
                               sensitive=sensitive, sensitive_values=n_sensitive, fraction=fraction,
                               progress=progress, source=source, sensitive_order=order, sensitive_ordered=ordered,
                               sensitive_missing=missing,
                               timings={"encode": (t1 - t0) - (c1 - c0), "group_bottom": (t2 - t1) - (c2 - c1),
                                        "compile": c2 - c0}, started=t0,
                               max_nodes=max_nodes, max_memory=max_memory, cancel=cancel)

    @classmethod
    def from_bottom(cls, qis: Sequence[str], hier: Mapping[str, Hierarchy], bottom_codes: np.ndarray,
                    bottom_counts: np.ndarray, *, n_rows: int, sensitive: str | None = None,
                    sensitive_values: int = 0, fraction: float = 1.0,
                    progress: Callable[[int, int], None] | None = None, source: str = "",
                    timings: Mapping[str, float] | None = None, started: float | None = None,
                    max_nodes: int | None = DEFAULT_MAX_NODES,
                    max_memory: int | str | None = DEFAULT_MAX_MEMORY, cancel=None,
                    sensitive_order: Sequence | None = None, sensitive_ordered: bool | None = None,
                    sensitive_missing: bool = False) -> Lattice:
        """The lattice from the bottom node's classes (level-0 codes, sorted, with row counts; the
        sensitive code last when there is one): every other node is rolled up from them, so this
        is where a partitioned build (``incrowd.distributed``) joins the single-machine one.
        Limits and ``cancel`` as in :meth:`build`, checked before any node is computed.
        ``sensitive_order`` (the sensitive values in code order) and ``sensitive_ordered`` (t's
        distance), when the codes follow :func:`incrowd.values.sensitive_codes`, let the
        lattice answer t; ``sensitive_missing``: the code ``sensitive_values`` is the missing
        value, never a distinct value for l."""
        t2, c2 = time.perf_counter(), compiled_so_far()
        t0 = started if started is not None else t2
        stop = cancel_check(cancel)
        n_sensitive = sensitive_values
        m = len(qis)
        depths = np.array([hier[a].depth for a in qis], dtype=np.int64)
        check_nodes(depths.tolist(), fraction, check_max_nodes(max_nodes))
        check_memory(depths.tolist(), fraction, int(bottom_codes.shape[0]), parse_size(max_memory, "max_memory"),
                     n_rows=int(n_rows), sensitive=sensitive is not None, encoding=False)
        level_scores = _level_scores(qis, hier, bottom_codes, bottom_counts, m, int(n_rows), stop)
        score = _node_scores(depths, level_scores)
        n_nodes = int(np.prod(depths))
        if fraction >= 1:
            chosen = np.ones(n_nodes, dtype=bool)
        else:
            chosen = _top_nodes(score, fraction)
        t3, c3 = time.perf_counter(), compiled_so_far()
        stop()
        missing_code = int(n_sensitive) if sensitive is not None and sensitive_missing else -1
        parts = _compute_nodes(hier, qis, depths, bottom_codes, bottom_counts, chosen,
                               sensitive is not None, progress, stop, missing_code)
        t4, c4 = time.perf_counter(), compiled_so_far()
        n_classes = np.full(n_nodes, -1, dtype=np.int64)
        k_parts: list = [None] * n_nodes
        l_parts: list = [None] * n_nodes
        for node, (classes, k_part, l_part) in parts.items():
            n_classes[node] = classes
            k_parts[node] = k_part
            l_parts[node] = l_part
        lattice = cls(
            attributes=tuple(qis), hierarchies=dict(hier), n_rows=int(n_rows), sensitive=sensitive,
            sensitive_values=n_sensitive, materialized=chosen, n_classes=n_classes,
            k_histograms=Histograms.from_parts(k_parts),
            l_histograms=Histograms.from_parts(l_parts) if sensitive is not None else None,
            score=score, level_scores=level_scores, bottom_codes=bottom_codes,
            bottom_counts=bottom_counts, fraction=float(fraction), source=source,
            sensitive_order=None if sensitive is None or sensitive_order is None else tuple(sensitive_order),
            sensitive_ordered=None if sensitive is None or sensitive_order is None else bool(sensitive_ordered),
            sensitive_missing=missing_code >= 0,
        )
        before = dict(timings or {})
        compile_seconds = float(before.pop("compile", 0.0)) + (compiled_so_far() - c2)
        lattice.timings = {
            **before, "rank_nodes": (t3 - t2) - (c3 - c2),
            "histograms": (t4 - t3) - (c4 - c3),
            "total": time.perf_counter() - t0 - compile_seconds,
            "compile": compile_seconds,
        }
        return lattice



def sensitive_codes(column: pd.Series, order: Sequence | None = None) -> tuple[np.ndarray, list, bool, bool]:
    """(code per row, the values in code order, whether t's distance takes them ordered, whether
    a value is missing): the column as ``publish`` encodes a sensitive column
    (:func:`incrowd.values.sensitive_codes`; ``order`` as ``ordered = [...]`` in its spec,
    None: by the values), so l and t count the values as it does. A missing value has the code
    len(values), which the l histograms never count as a distinct value."""
    from ..values import sensitive_codes as encode

    codes, values, ordered, _, missing = encode(column, None if order is None else list(order))
    return codes, values, ordered, missing


def check_fraction(fraction) -> float:
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise ParameterError(f"fraction (share of lattice nodes to build) must be in (0, 1]; got {fraction!r}")
    return float(fraction)


def resolve_hierarchies(data: pd.DataFrame, quasi_identifiers, hierarchies, intervals, sensitive):
    """Check the QI and sensitive columns and return (QI list, attribute -> Hierarchy)."""
    columns = [str(c) for c in data.columns]
    if isinstance(quasi_identifiers, str):
        qis = [q.strip() for q in quasi_identifiers.split(",") if q.strip()]
    else:
        qis = [str(q) for q in (quasi_identifiers or [])]
    if not qis:
        raise ParameterError("name at least one quasi-identifier column")
    if len(set(qis)) != len(qis):
        raise ParameterError(f"quasi-identifiers must be distinct; got {name_list(qis)}")
    for q in qis:
        if q not in columns:
            raise DataError(f"unknown quasi-identifier column {q!r}; the data has columns {name_list(columns)}")
    if sensitive is not None:
        if sensitive not in columns:
            raise DataError(f"unknown sensitive column {sensitive!r}; the data has columns {name_list(columns)}")
        if sensitive in qis:
            raise ParameterError(f"column {sensitive!r} cannot be both quasi-identifier and sensitive")
    intervals = dict(intervals or {})
    for a in intervals:
        if a not in qis:
            raise ParameterError(f"interval widths given for {a!r}, which is not a quasi-identifier ({name_list(qis)})")
    given: dict[str, Hierarchy] = {}
    if isinstance(hierarchies, Mapping):
        given = dict(hierarchies)
        for a in qis:
            if a in given:
                check_labels(given[a])
    need = [q for q in qis if q not in given and q not in intervals]
    if need:
        if hierarchies is None or isinstance(hierarchies, Mapping):
            raise ParameterError(
                f"no hierarchy for quasi-identifier(s) {need}: give a hierarchy folder or interval widths"
            )
        given.update(load_hierarchies(hierarchies, need))
    for a, widths in intervals.items():
        given[a] = interval_hierarchy(data[a], widths, a)
    return qis, {q: given[q] for q in qis}


def _group_bottom(codes0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bottom node's classes: one DuckDB GROUP BY over the encoded rows."""
    import duckdb

    names = [f"c{j}" for j in range(codes0.shape[1])]
    frame = pd.DataFrame({name: codes0[:, j] for j, name in enumerate(names)})
    con = duckdb.connect()
    try:
        con.register("codes", frame)
        cols = ", ".join(names)
        grouped = con.execute(
            f"SELECT {cols}, COUNT(*)::BIGINT AS n FROM codes GROUP BY {cols} ORDER BY {cols}"
        ).fetchnumpy()
    finally:
        con.close()
    codes = np.column_stack([np.asarray(grouped[n], dtype=np.int32) for n in names])
    return np.ascontiguousarray(codes), np.asarray(grouped["n"], dtype=np.int64)


def _level_scores(qis, hier, bottom_codes, bottom_counts, m, n_rows, stop=lambda: None) -> pd.DataFrame:
    """gamma (average class size) and mu (relative importance) of every attribute level.

    gamma(A^h): group with A at level h and every other QI at level 0 (slides 004, "Crux & main
    techniques"); mu(A^h) = gamma(A^h) / gamma(A^(h-1)) and mu(A^0) = 1 / mu(A^1).
    """
    qi_codes = np.ascontiguousarray(bottom_codes[:, :m])
    maps, offsets = code_map_table(hier, qis)
    records = []
    for j, a in enumerate(qis):
        gammas = []
        for h in range(hier[a].depth):
            stop()
            levels = np.zeros(m, dtype=np.int64)
            levels[j] = h
            codes, _ = generalize_table(qi_codes, bottom_counts, maps, offsets, levels, m)
            gammas.append(n_rows / codes.shape[0])
        mus = [gammas[h] / gammas[h - 1] for h in range(1, len(gammas))]
        mus.insert(0, 1.0 / mus[0] if mus else 1.0)
        for h, (g, mu) in enumerate(zip(gammas, mus)):
            records.append((a, h, int(round(n_rows / g)), g, mu))
    return pd.DataFrame(records, columns=["attribute", "level", "classes", "average_class_size",
                                          "relative_importance"])


def _node_scores(depths: np.ndarray, level_scores: pd.DataFrame) -> np.ndarray:
    """Lambda(v) = sum over attributes of log2(gamma) * mu at v's level."""
    levels = node_levels(depths)
    total = np.zeros(levels.shape[0])
    for j, (_, block) in enumerate(level_scores.groupby("attribute", sort=False)):
        block = block.sort_values("level")
        per_level = np.log2(block["average_class_size"].to_numpy()) * block["relative_importance"].to_numpy()
        total += per_level[levels[:, j]]
    return total


def _top_nodes(score: np.ndarray, fraction: float) -> np.ndarray:
    """The ceil(fraction * n) best nodes by Lambda (ties to the lower id), plus the top node,
    which always has an answer for k <= n, so a height relaxation never comes back empty."""
    n = score.size
    count = max(1, math.ceil(fraction * n))
    order = np.lexsort((np.arange(n), -score))
    chosen = np.zeros(n, dtype=bool)
    chosen[order[:count]] = True
    chosen[n - 1] = True
    return chosen


def _compute_nodes(hier, qis, depths, bottom_codes, bottom_counts, chosen, with_sensitive, progress,
                   stop=lambda: None, missing: int = -1):
    """Histograms of the chosen nodes: a depth-first walk of the spanning tree for the full
    lattice (each node rolled up from its tree parent's classes), straight from the bottom
    classes for a partial one."""
    m = len(qis)
    n_nodes = int(chosen.size)
    total = int(chosen.sum())
    parts: dict[int, tuple] = {}
    strides = np.array([int(np.prod(depths[i + 1:])) for i in range(m)], dtype=np.int64)
    if total < n_nodes:
        maps, offsets = code_map_table(hier, qis)
        levels = node_levels(depths)
        for done, node in enumerate(np.flatnonzero(chosen).tolist()):
            stop()
            codes, counts = generalize_table(bottom_codes, bottom_counts, maps, offsets, levels[node], m)
            parts[int(node)] = _histogram_parts(codes, counts, m, with_sensitive, missing)
            if progress is not None:
                progress(done + 1, total)
        return parts
    parents = [hier[a].parents for a in qis]
    # stack entries: (node id, level vector, table to roll up from, column to lift or -1)
    stack: list[tuple[int, tuple[int, ...], np.ndarray, np.ndarray, int]] = [
        (0, (0,) * m, bottom_codes, bottom_counts, -1)
    ]
    done = 0
    while stack:
        stop()
        node, lv, codes, counts, column = stack.pop()
        if column >= 0:
            codes, counts = rollup(codes, counts, column, parents[column][lv[column] - 1])
        parts[node] = _histogram_parts(codes, counts, m, with_sensitive, missing)
        done += 1
        if progress is not None and (done % 64 == 0 or done == n_nodes):
            progress(done, n_nodes)
        first_nonzero = next((i for i in range(m) if lv[i] > 0), m - 1)
        for i in range(first_nonzero, -1, -1):
            if lv[i] + 1 < depths[i]:
                child = lv[:i] + (lv[i] + 1,) + lv[i + 1:]
                stack.append((node + int(strides[i]), child, codes, counts, i))
    return parts
