"""The lattice file: one DuckDB database, written whole to a temporary name and renamed.

Tables (``contents`` repeats this in words inside the file):

- ``meta``: key/JSON value pairs (format, version, attributes, rows, sensitive attribute, build
  timings, fraction of nodes built; with a sensitive attribute its distinct values in code
  order, whether t's distance takes them ordered, what t-closeness needs, and whether it has
  missing values, the code after them)
- ``hierarchy``: attribute, level, code, label, parent code (the encoded hierarchies)
- ``nodes``: node id, one level column per attribute, height, materialized, classes, Lambda score
- ``k_histogram``: node id, class size, classes, rows
- ``l_histogram``: node id, distinct sensitive values, classes, rows (with a sensitive attribute)
- ``level_scores``: gamma and mu of every attribute level (the partial lattice's ranking)
- ``bottom``: the bottom node's classes as level-0 codes with their row counts, so a missing
  node's histogram can be computed later without the data
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from .._runtime import lazy as _lazy
from ..io import damaged, read_database, write_database
from ._hierarchy import Hierarchy
from ._histograms import ColumnsFrame, Histograms

if TYPE_CHECKING:
    import pandas as pd

    from ._table import LatticeTable
else:
    pd = _lazy.module("pandas")  # only building and saving need pandas, not opening a file

_T = TypeVar("_T", bound="LatticeTable")  # the class that opens a file, a LatticeTable

FORMAT = "incrowd.lattice"
FORMAT_VERSION = 1
_WHAT = "lattice file"

CONTENTS = [
    ("meta", "format, version, attributes, rows, sensitive attribute (its values in code order, "
             "whether t's distance is ordered, whether it has missing values), build timings"),
    ("hierarchy", "encoded hierarchies: attribute, level, code, label, parent code"),
    ("nodes", "every lattice node: id, levels, height, materialized, classes, Lambda score"),
    ("k_histogram", "per node: class size -> number of classes and rows"),
    ("l_histogram", "per node: distinct sensitive values -> classes and rows"),
    ("level_scores", "average class size (gamma) and relative importance (mu) of each level"),
    ("bottom", "bottom-node classes (level-0 codes) and their row counts"),
]


def _histogram_frame(hist: Histograms, key: str) -> pd.DataFrame:
    node = np.repeat(np.arange(hist.offsets.size - 1), np.diff(hist.offsets))
    return pd.DataFrame({"node_id": node, key: hist.keys, "classes": hist.classes, "rows": hist.rows})


def _frames(lattice: LatticeTable) -> dict[str, pd.DataFrame]:
    records = []
    for a in lattice.attributes:
        h = lattice.hierarchies[a]
        for level in range(h.depth):
            parent = h.parents[level] if level < h.depth - 1 else np.full(h.labels[level].size, -1)
            for code, label in enumerate(h.labels[level].tolist()):
                records.append((a, level, code, str(label), int(parent[code])))
    hierarchy = pd.DataFrame(records, columns=["attribute", "level", "code", "label", "parent"])
    levels = lattice.levels
    nodes = pd.DataFrame({"node_id": np.arange(lattice.n_nodes)})
    for j, a in enumerate(lattice.attributes):
        nodes[f"level:{a}"] = levels[:, j]
    nodes["height"] = levels.sum(axis=1)
    nodes["materialized"] = lattice.materialized
    nodes["classes"] = lattice.n_classes
    nodes["score"] = lattice.score
    width = lattice.bottom_codes.shape[1]
    bottom = pd.DataFrame({f"c{j}": lattice.bottom_codes[:, j] for j in range(width)})
    bottom["rows"] = lattice.bottom_counts
    frames = {
        "contents": pd.DataFrame(CONTENTS, columns=["table_name", "holds"]),
        "hierarchy": hierarchy,
        "nodes": nodes,
        "k_histogram": _histogram_frame(lattice.k_histograms, "class_size"),
        "level_scores": lattice.level_scores,
        "bottom": bottom,
    }
    if lattice.l_histograms is not None:
        frames["l_histogram"] = _histogram_frame(lattice.l_histograms, "distinct_values")
    return frames


def save_lattice(lattice: LatticeTable, path: str | os.PathLike, *, inputs=()) -> Path:
    """Write the lattice file atomically; an existing file is replaced only on success.

    The data file it was built from (and ``inputs``) are never replaced.
    """
    from .._runtime import __version__

    meta = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "incrowd_version": __version__,
        "attributes": list(lattice.attributes), "rows": lattice.n_rows,
        "sensitive": lattice.sensitive, "sensitive_values": lattice.sensitive_values,
        "fraction": lattice.fraction, "timings": lattice.timings, "source": lattice.source,
        "hierarchy_sources": {a: lattice.hierarchies[a].source for a in lattice.attributes},
    }
    if lattice.sensitive is not None and lattice.sensitive_order is not None:
        # the values as l and t count them (numbers as floats, text, user-missing codes):
        # JSON keeps each one's type
        meta["sensitive_order"] = list(lattice.sensitive_order)
        meta["sensitive_ordered"] = bool(lattice.sensitive_ordered)
    if lattice.sensitive is not None:
        # the code after the values is the missing value, never a distinct value for l; a file
        # without this key reads as having none (files from before missing values were kept)
        meta["sensitive_missing"] = bool(lattice.sensitive_missing)
    # the source is a display name where the data came from memory or the web: compare it only
    # where it names a file
    source = [lattice.source] if lattice.source and os.path.isfile(lattice.source) else []
    return write_database(Path(path), meta, _frames(lattice), _WHAT, inputs=[*source, *inputs])


def _histograms(columns, key: str, n_nodes: int) -> Histograms:
    """``columns``: the table as column name -> array, in any row order."""
    node = np.asarray(columns["node_id"], np.int64)
    keys, classes, rows = (np.asarray(columns[c], np.int64) for c in (key, "classes", "rows"))
    # incrowd writes the rows by node, then key; DuckDB keeps that order when read back without
    # ORDER BY (sorting 700,000 rows was a quarter of opening the 8-QI Adult lattice), and where
    # a file is not in that order it is sorted here
    step, key_step = np.diff(node), np.diff(keys)
    if not ((step > 0) | ((step == 0) & (key_step > 0))).all():
        order = np.lexsort((keys, node))
        node, keys, classes, rows = node[order], keys[order], classes[order], rows[order]
    counts = np.bincount(node, minlength=n_nodes)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    return Histograms(offsets, keys, classes, rows)


def _needed(meta: dict) -> set[str]:
    return {"hierarchy", "nodes", "k_histogram", "level_scores", "bottom"} | (
        {"l_histogram"} if meta.get("sensitive") else set())


def _read_tables(con, meta: dict):
    return (
        meta,
        con.execute("SELECT * FROM hierarchy ORDER BY attribute, level, code").fetchnumpy(),
        con.execute("SELECT * FROM nodes ORDER BY node_id").fetchnumpy(),
        con.execute("SELECT * FROM k_histogram").fetchnumpy(),
        con.execute("SELECT * FROM l_histogram").fetchnumpy() if meta.get("sensitive") else None,
        con.execute("SELECT * FROM level_scores").fetchnumpy(),
        con.execute("SELECT * FROM bottom").fetchnumpy(),
    )


def _sensitive_order(meta: dict) -> tuple | None:
    """The sensitive values in code order, or None (no sensitive attribute, or a file written
    before t could be negotiated)."""
    order = meta.get("sensitive_order")
    if not meta.get("sensitive") or order is None:
        return None
    if not isinstance(order, list) or len(order) != int(meta.get("sensitive_values") or 0) \
            or not isinstance(meta.get("sensitive_ordered"), bool):
        raise ValueError("the sensitive values stored do not match the count of them")
    return tuple(order)


def load_lattice(path: str | os.PathLike, lattice_class: type[_T]) -> _T:
    """Read a lattice file, refusing other formats, versions and damaged files clearly.

    ``lattice_class`` is the builder's class (a :class:`LatticeTable`), passed in by its ``open``
    so that this module does not import the module that calls it."""
    p = Path(path)
    meta, hierarchy, nodes, k_hist, l_hist, level_scores, bottom = read_database(
        p, what=_WHAT, file_format=FORMAT, version=FORMAT_VERSION,
        rebuild="rebuild it with 'incrowd lattice build'", needed=_needed, read=_read_tables)
    try:
        attributes = tuple(meta["attributes"])
        sources = meta.get("hierarchy_sources", {})
        hierarchies = {}
        for a in attributes:
            mine = hierarchy["attribute"] == a
            block_levels, block_labels, block_parents = (hierarchy[c][mine] for c in ("level", "label", "parent"))
            depth = int(block_levels.max()) + 1
            labels, parents = [], []
            for level in range(depth):
                at = block_levels == level
                labels.append(np.asarray(block_labels[at], object))
                if level < depth - 1:
                    parents.append(np.asarray(block_parents[at], np.int32))
            hierarchies[a] = Hierarchy(a, tuple(labels), tuple(parents), sources.get(a, f"lattice file {str(p)!r}"))
        n_nodes = len(nodes["node_id"])
        width = sum(1 for c in bottom if c.startswith("c"))
        lattice = lattice_class(
            attributes=attributes, hierarchies=hierarchies, n_rows=int(meta["rows"]),
            sensitive=meta.get("sensitive"), sensitive_values=int(meta.get("sensitive_values") or 0),
            materialized=np.require(np.asarray(nodes["materialized"], bool), bool, ["C", "W"]),
            n_classes=np.asarray(nodes["classes"], np.int64),
            k_histograms=_histograms(k_hist, "class_size", n_nodes),
            l_histograms=_histograms(l_hist, "distinct_values", n_nodes) if l_hist is not None else None,
            score=np.asarray(nodes["score"], np.float64), level_scores=ColumnsFrame(level_scores),
            bottom_codes=np.ascontiguousarray(
                np.column_stack([np.asarray(bottom[f"c{j}"], np.int32) for j in range(width)])),
            bottom_counts=np.asarray(bottom["rows"], np.int64),
            fraction=float(meta.get("fraction", 1.0)), timings=dict(meta.get("timings", {})),
            source=meta.get("source", ""),
            sensitive_order=_sensitive_order(meta),
            sensitive_ordered=bool(meta["sensitive_ordered"]) if _sensitive_order(meta) is not None else None,
            sensitive_missing=bool(meta.get("sensitive")) and meta.get("sensitive_missing", False) is True,
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise damaged(_WHAT, p, f"{type(exc).__name__}: {exc}") from exc
    if lattice.n_nodes != n_nodes:
        raise damaged(_WHAT, p, f"{n_nodes} nodes stored, the hierarchies give {lattice.n_nodes}")
    return lattice
