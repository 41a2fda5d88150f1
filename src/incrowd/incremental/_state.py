"""The anonymization state that lives between the base run and the increments: one DuckDB file.

What the file holds (table ``contents`` says the same in words):

- ``meta``: format name and version, the incrowd version that wrote it, k, base method and its
  parameters, column roles, the standardization (mean and scale per quasi-identifier), the
  batches adjoined so far with their strategy and timings;
- ``groups``: per group, its size and the per-column sums and sums of squares of the
  standardized quasi-identifiers (centroids and SSE follow from them);
- ``members``: per row, its row number in the release, its batch, its group, and its key (the
  identifier columns' values when the data has identifiers, else the row number alone);
- ``passthrough``: the columns that are neither identifiers nor quasi-identifiers, which the
  release publishes unchanged (for a column of a statistical file with user-missing codes,
  ``missing_code:`` + name says which code each missing cell was: DuckDB keeps no NaN payload);
- ``points`` (only with ``keep_points``): the standardized quasi-identifier values of every row.
  They are needed to split cells (nn-split-mid, nn-split-end) and to compare with a one-shot
  run; without them the file holds no quasi-identifier value of any single row.

A file is always written whole to a temporary name and renamed into place, so a process killed
at any moment leaves either the old state or the new one, never a mixture. ``meta`` also holds a
content checksum; on open, the file's invariants and the checksum are checked
(:mod:`._integrity`), so a file edited outside incrowd is refused, never used.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataError
from ..io import damaged, read_database, write_database
from . import _integrity, _layout

FORMAT = "incrowd.incremental-state"
FORMAT_VERSION = 1
_TABLES = ("meta", "contents", "groups", "members", "passthrough", "points")
_WHAT = "state file"


@dataclass
class State:
    """In-memory form of the state file; the arrays are indexed by group id and row number."""

    k: int
    method: str
    params: dict[str, Any]
    random_state: Any
    quasi_identifiers: list[str]
    identifiers: list[str]
    passthrough_columns: list[str]
    column_order: list[str]  # the base input's columns, identifiers included
    mean: np.ndarray
    scale: np.ndarray
    sizes: np.ndarray  # (G,) int64
    sums: np.ndarray  # (G, m) standardized
    sumsq: np.ndarray  # (G, m) standardized
    labels: np.ndarray  # (n,) group of each row, release order
    batch: np.ndarray  # (n,) 0 = base, 1.. = increments
    keys: pd.DataFrame  # identifier columns per row (no columns when the data has none)
    passthrough: pd.DataFrame  # pass-through columns per row
    points: np.ndarray | None  # (n, m) standardized QIs, or None
    base_sse: np.ndarray  # (m,) per-column SSE of the base partition (standardized, base rows)
    batches: list[dict[str, Any]] = field(default_factory=list)
    created: str = ""
    incrowd_version: str = ""
    # how the base input was framed, so the release looks like it (see _layout.py)
    layout: dict[str, Any] = field(default_factory=dict)
    # (n,) keyed hash per row of its published values, when rows have no identifiers; None with
    # identifiers, and in files written before incrowd kept them
    fingerprints: np.ndarray | None = None
    fingerprint_key: str | None = None
    checksum: str | None = None  # as stored in the file this state was read from

    def distinct_records(self) -> np.ndarray | None:
        """Distinct records per group: rows with identifiers are distinct people; without, rows
        with equal fingerprints are copies of one record. None when the file cannot tell."""
        if self.identifiers:
            return self.sizes.copy()
        if self.fingerprints is None:
            return None
        from ._fingerprint import distinct_per_group

        return distinct_per_group(self.labels, self.fingerprints, self.n_groups)

    def distinct_summary(self) -> dict[str, Any]:
        counts = self.distinct_records()
        if counts is None:
            return {"min_distinct_records": None, "groups_below_k_distinct": None}
        return {"min_distinct_records": int(counts.min()),
                "groups_below_k_distinct": int(np.count_nonzero(counts < self.k))}

    @property
    def n_rows(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_groups(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def keep_points(self) -> bool:
        return self.points is not None

    def centroids(self) -> np.ndarray:
        return self.sums / self.sizes[:, None]

    def contents(self) -> list[tuple[str, str]]:
        rows = [
            ("meta", "format, version, k, method and parameters, column roles, standardization "
                     "(mean, scale), batches with strategy and timings"),
            ("groups", "per group: size, per-column sums and sums of squares of the standardized "
                       "quasi-identifiers"),
            ("members", "per row: release row number, batch (0 = base), group, and the "
                        "identifier values as row key"
                        + ("" if self.identifiers else " (none: the data has no identifiers)")
                        + ("; a keyed hash of each row's published values, to recognise a record "
                           "added twice" if self.fingerprints is not None else "")),
            ("passthrough", "the columns published unchanged: "
                            + (", ".join(self.passthrough_columns) or "none")),
        ]
        if self.keep_points:
            rows.append(("points", "standardized quasi-identifier values of every row (kept to "
                                   "split cells and to compare with a one-shot run)"))
        return rows

    def describe(self) -> dict[str, Any]:
        """What the file holds, JSON-ready."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "incrowd_version": self.incrowd_version,
            "created": self.created,
            "k": self.k,
            "method": self.method,
            "params": self.params,
            "quasi_identifiers": self.quasi_identifiers,
            "identifiers": self.identifiers,
            "passthrough_columns": self.passthrough_columns,
            "rows": self.n_rows,
            "groups": self.n_groups,
            "keeps_points": self.keep_points,
            "batches": self.batches,
            **self.distinct_summary(),
            "tables": {name: text for name, text in self.contents()},
        }


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _meta_dict(state: State) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "incrowd_version": state.incrowd_version,
        "created": state.created or _now(),
        "saved": _now(),
        "k": state.k,
        "method": state.method,
        "params": state.params,
        "random_state": state.random_state,
        "quasi_identifiers": state.quasi_identifiers,
        "identifiers": state.identifiers,
        "passthrough_columns": state.passthrough_columns,
        "column_order": state.column_order,
        "mean": state.mean.tolist(),
        "scale": state.scale.tolist(),
        "base_sse": state.base_sse.tolist(),
        "keeps_points": state.keep_points,
        "batches": state.batches,
        "layout": state.layout,
        "fingerprints": state.fingerprints is not None,
        **({"fingerprint_key": state.fingerprint_key} if state.fingerprints is not None else {}),
    }


def _numbered(prefix: str, values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({f"{prefix}{j}": values[:, j] for j in range(values.shape[1])})


def save(state: State, path: str | os.PathLike) -> Path:
    """Write the whole state to ``path`` atomically (temporary file, then rename)."""
    return _write(state, path, _checksum_entry)


def save_and_read(state: State, path: str | os.PathLike) -> State:
    """:func:`save`, returning the state as a later :func:`load` of the file reads it.

    The tables are read back from the new file before it is renamed into place (the checksum
    needs them anyway), so the caller continues with DuckDB's dtypes without opening it again.
    """
    seen: dict[str, Any] = {}

    def finish(con) -> dict[str, str]:
        meta, seen["tables"] = _read_back(con)
        seen["entry"] = {_integrity.CHECKSUM_KEY: _integrity.content_checksum(meta, _named(seen["tables"]))}
        seen["meta"] = {**meta, **seen["entry"]}
        return seen["entry"]

    _write(state, path, finish)
    return _assemble(seen["meta"], *seen["tables"])


def stored_checksum(path: str | os.PathLike) -> str | None:
    """The checksum in a state file's meta (None when absent or unreadable): which version of
    the file a writer holds, compared cheaply before it decides to read the file again."""
    import duckdb

    try:
        con = duckdb.connect(str(path), read_only=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = ?", [_integrity.CHECKSUM_KEY]).fetchone()
        finally:
            con.close()
        return None if row is None else json.loads(row[0])
    except Exception:  # any doubt means: read the file again
        return None


def _write(state: State, path: str | os.PathLike, finish) -> Path:
    groups = pd.concat(
        [pd.DataFrame({"group_id": np.arange(state.n_groups), "size": state.sizes}),
         _numbered("sum_", state.sums), _numbered("sumsq_", state.sumsq)], axis=1)
    members = pd.concat(
        [pd.DataFrame({"row": np.arange(state.n_rows), "batch": state.batch,
                       "group_id": state.labels}),
         state.keys.reset_index(drop=True).add_prefix("key:")], axis=1)
    if state.fingerprints is not None:
        members["fingerprint"] = state.fingerprints
    passthrough = pd.concat(
        [pd.DataFrame({"row": np.arange(state.n_rows)}),
         state.passthrough.reset_index(drop=True).add_prefix("col:"),
         _layout.missing_codes_of(state.passthrough.reset_index(drop=True), state.layout)], axis=1)
    frames = {
        "contents": pd.DataFrame(state.contents(), columns=["table_name", "holds"]),
        "groups": groups, "members": members, "passthrough": passthrough,
    }
    if state.points is not None:
        frames["points"] = pd.concat([pd.DataFrame({"row": np.arange(state.n_rows)}),
                                      _numbered("z_", state.points)], axis=1)
    return write_database(Path(path), _meta_dict(state), frames, _WHAT, finish=finish)


def _read_back(con):
    meta = {key: json.loads(value) for key, value in con.execute("SELECT key, value FROM meta").fetchall()}
    return meta, _read_tables(con, meta)[1:]


def _checksum_entry(con) -> dict[str, str]:
    # computed on the tables as DuckDB returns them, exactly as load() will see them
    meta, tables = _read_back(con)
    return {_integrity.CHECKSUM_KEY: _integrity.content_checksum(meta, _named(tables))}


def _named(tables) -> dict[str, pd.DataFrame | None]:
    return dict(zip(("groups", "members", "passthrough", "points"), tables))


def _damaged(path: Path, why: str) -> DataError:
    return damaged(_WHAT, path, why)


def _needed(meta: dict) -> set[str]:
    return {"groups", "members", "passthrough"} | ({"points"} if meta.get("keeps_points") else set())


def _read_tables(con, meta: dict):
    return (
        meta,
        con.execute("SELECT * FROM groups ORDER BY group_id").df(),
        con.execute("SELECT * FROM members ORDER BY row").df(),
        con.execute("SELECT * FROM passthrough ORDER BY row").df(),
        con.execute("SELECT * FROM points ORDER BY row").df() if meta.get("keeps_points") else None,
    )


def load(path: str | os.PathLike) -> State:
    """Read a state file, refusing other formats, other versions and damaged files clearly."""
    p = Path(path)
    meta, groups, members, passthrough, points_frame = read_database(
        p, what=_WHAT, file_format=FORMAT, version=FORMAT_VERSION,
        rebuild="rebuild the state with 'incrowd incremental base'", needed=_needed, read=_read_tables)
    tables = _named((groups, members, passthrough, points_frame))
    try:
        _integrity.check_meta(meta, p)
        _integrity.check_columns(meta, tables, p)
        state = _assemble(meta, groups, members, passthrough, points_frame)
    except (KeyError, ValueError, TypeError) as exc:
        if isinstance(exc, DataError):
            raise
        raise _damaged(p, f"{type(exc).__name__}: {exc}") from exc
    _integrity.check_state(state, p)
    _integrity.check_checksum(meta, tables, p)
    return state


def _assemble(meta, groups, members, passthrough, points_frame) -> State:
    qis = list(meta["quasi_identifiers"])
    m = len(qis)
    sums = groups[[f"sum_{j}" for j in range(m)]].to_numpy(np.float64)
    sumsq = groups[[f"sumsq_{j}" for j in range(m)]].to_numpy(np.float64)
    ids = list(meta["identifiers"])
    keys = members[[f"key:{c}" for c in ids]].copy()
    keys.columns = ids
    others = list(meta["passthrough_columns"])
    pt = passthrough[[f"col:{c}" for c in others]].copy()
    pt.columns = others
    pt = _layout.with_missing_codes(pt, passthrough[[c for c in passthrough.columns
                                                     if str(c).startswith("missing_code:")]])
    points = None
    if points_frame is not None:
        points = np.ascontiguousarray(points_frame[[f"z_{j}" for j in range(m)]].to_numpy(np.float64))
    return State(
        k=int(meta["k"]),
        method=str(meta["method"]),
        params=dict(meta["params"]),
        random_state=meta["random_state"],
        quasi_identifiers=qis,
        identifiers=ids,
        passthrough_columns=others,
        column_order=list(meta["column_order"]),
        mean=np.asarray(meta["mean"], dtype=np.float64),
        scale=np.asarray(meta["scale"], dtype=np.float64),
        sizes=groups["size"].to_numpy(np.int64),
        sums=np.ascontiguousarray(sums),
        sumsq=np.ascontiguousarray(sumsq),
        labels=members["group_id"].to_numpy(np.int64),
        batch=members["batch"].to_numpy(np.int64),
        keys=keys,
        passthrough=pt,
        points=points,
        base_sse=np.asarray(meta["base_sse"], dtype=np.float64),
        batches=list(meta["batches"]),
        created=str(meta["created"]),
        incrowd_version=str(meta["incrowd_version"]),
        layout=dict(meta.get("layout") or {}),
        fingerprints=members["fingerprint"].to_numpy(np.int64) if meta.get("fingerprints") else None,
        fingerprint_key=meta.get("fingerprint_key") if meta.get("fingerprints") else None,
        checksum=meta.get(_integrity.CHECKSUM_KEY),
    )
