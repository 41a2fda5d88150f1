"""Lattice histograms from partitioned data: each partition groups its rows by level-0 codes,
the partial class tables are merged pairwise on the workers, and the single-machine code rolls
every node up from the merged bottom classes, so the lattice equals ``Lattice.build``'s."""

from __future__ import annotations

import time
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError
from ..generalization import (
    DEFAULT_MAX_MEMORY,
    DEFAULT_MAX_NODES,
    Hierarchy,
    Lattice,
    check_fraction,
    check_max_nodes,
    check_nodes,
    interval_hierarchy,
    load_hierarchies,
    parse_size,
    precheck_nodes,
    resolve_hierarchies,
    sensitive_codes,
    value_labels,
)
from ._io import frames_of
from ._io import head as columns_of


def _distinct(frame: pd.DataFrame, column: str) -> pd.Series:
    return pd.Series(pd.unique(frame[column]), name=column, dtype=frame[column].dtype)


def _first_appearance(frame: pd.DataFrame, column: str, index: int) -> list:
    """The partition's distinct sensitive values; system missing values as one None (the
    sensitive codes make it the missing value, as publish does)."""
    values = frame[column]
    missing = values.isna()
    return pd.unique(values[~missing]).tolist() + ([None] if missing.any() else [])


def _class_table(frame, index, qis, hierarchies, sensitive, sensitive_values, sensitive_code=None):
    """The partition's rows grouped by level-0 codes (sensitive code last: ``sensitive_code`` of
    its distinct value's position in ``sensitive_values``): (codes, counts)."""
    try:
        from ..generalization import encode_cells

        columns = [encode_cells(hierarchies[a], frame[a]) for a in qis]
    except DataError as exc:
        raise DataError(f"partition {index}: {exc} (row numbers count within the partition)") from None
    if sensitive is not None:
        at = pd.Index(sensitive_values).get_indexer(frame[sensitive])
        columns.append((at if sensitive_code is None else np.asarray(sensitive_code)[at]).astype(np.int32))
    if frame.shape[0] == 0:
        return np.zeros((0, len(columns)), np.int32), np.zeros(0, np.int64)
    codes = np.column_stack(columns).astype(np.int32)
    groups, counts = np.unique(codes, axis=0, return_counts=True)
    return groups, counts.astype(np.int64)


def _merge(a, b):
    codes = np.concatenate([a[0], b[0]])
    counts = np.concatenate([a[1], b[1]])
    if codes.shape[0] == 0:
        return codes, counts
    groups, inverse = np.unique(codes, axis=0, return_inverse=True)
    return groups, np.bincount(inverse.ravel(), weights=counts, minlength=groups.shape[0]).astype(np.int64)


def lattice_on_workers(data, quasi_identifiers: Sequence[str] | str, *, client,
                  hierarchies: Mapping[str, Hierarchy] | str | None = None,
                  intervals: Mapping[str, Sequence[float]] | None = None,
                  sensitive: str | None = None, fraction: float = 1.0, source: str = "",
                  max_nodes: int | None = DEFAULT_MAX_NODES, max_memory: int | str | None = DEFAULT_MAX_MEMORY,
                  cancel=None, sensitive_order: Sequence | None = None) -> Lattice:
    """:meth:`Lattice.build` over partitioned data (a dask dataframe, a Parquet dataset folder
    or a list of pandas frames in row order) on ``client``'s workers; the same lattice. The node
    limit is checked before any partition is read, the memory estimate once the bottom classes
    are merged, before any node is computed."""
    t0 = time.perf_counter()
    check_fraction(fraction)
    max_nodes = check_max_nodes(max_nodes)
    max_memory = parse_size(max_memory, "max_memory")
    names = ([q.strip() for q in quasi_identifiers.split(",") if q.strip()]
             if isinstance(quasi_identifiers, str) else [str(q) for q in quasi_identifiers or []])
    precheck_nodes(names, hierarchies, intervals, fraction, max_nodes)
    frames = frames_of(client, data)
    head = columns_of(client, frames)
    intervals = dict(intervals or {})
    given: dict[str, Hierarchy] = dict(hierarchies) if isinstance(hierarchies, Mapping) else {}
    for a, widths in intervals.items():
        if a not in head.columns:
            continue  # resolve_hierarchies names the unknown column
        distinct = pd.concat(client.gather([client.submit(_distinct, f, a) for f in frames]), ignore_index=True)
        distinct = pd.Series(pd.unique(distinct), name=a, dtype=head[a].dtype)
        value_labels(distinct)  # a missing value is named here, before any bin is built
        given[a] = interval_hierarchy(distinct, widths, a)
    need = [q for q in names if q not in given and q in head.columns]
    if need and hierarchies is not None and not isinstance(hierarchies, Mapping):
        given.update(load_hierarchies(hierarchies, need))
    qis, hier = resolve_hierarchies(head, names, given, {}, sensitive)
    check_nodes([hier[a].depth for a in qis], fraction, max_nodes)
    sensitive_values: list = []
    sensitive_code = order = ordered = None
    missing = False
    if sensitive is not None:
        seen = client.gather([client.submit(_first_appearance, f, sensitive, i) for i, f in enumerate(frames)])
        sensitive_values = list(dict.fromkeys(v for part in seen for v in part))
        # each distinct value's code as Lattice.build gives it (publish's rule: t's order), so the
        # lattice is the same and answers t
        sensitive_code, order, ordered, missing = sensitive_codes(
            pd.Series(sensitive_values, name=sensitive, dtype=head[sensitive].dtype), sensitive_order)
    t1 = time.perf_counter()
    tables = [client.submit(_class_table, f, i, qis, hier, sensitive, sensitive_values, sensitive_code)
              for i, f in enumerate(frames)]
    while len(tables) > 1:  # pairwise merges on the workers, in row order
        tables = [client.submit(_merge, tables[i], tables[i + 1]) if i + 1 < len(tables) else tables[i]
                  for i in range(0, len(tables), 2)]
    codes, counts = tables[0].result()
    n_rows = int(counts.sum())
    if n_rows == 0:
        raise DataError("the data has no rows")
    t2 = time.perf_counter()
    return Lattice.from_bottom(qis, hier, np.ascontiguousarray(codes, dtype=np.int32), counts, n_rows=n_rows,
                               sensitive=sensitive, sensitive_values=0 if order is None else len(order),
                               sensitive_order=order, sensitive_ordered=ordered, sensitive_missing=missing,
                               fraction=fraction,
                               source=source, timings={"encode": t1 - t0, "group_bottom": t2 - t1}, started=t0,
                               max_nodes=max_nodes, max_memory=max_memory, cancel=cancel)
