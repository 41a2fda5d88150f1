"""Is this state file what incrowd wrote? Invariants checked on every open, plus a checksum.

A state file is an ordinary DuckDB file that anyone can edit. An edit that contradicts the
file's own content (k=1 or 5.7, group sums that are not the sums of the members, renamed
quasi-identifiers, NaN in the standardization, a batch log that does not match the rows) would
otherwise publish a release whose guarantee is false, or fail later with a traceback; each is
refused on open with a message that says what is wrong. An edit that keeps every invariant
(a changed pass-through value, a shifted mean) is caught by the content checksum: sha256 over
the meta entries and the data tables as DuckDB returns them, stored in ``meta`` on every write.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from pathlib import Path
from typing import Any, Mapping, TypeGuard

import numpy as np
import pandas as pd

from ..exceptions import DataError

CHECKSUM_KEY = "checksum"
_ALGORITHM = "sha256"
_INCREMENT_STRATEGIES = ("2mdav", "nn", "nn-split-mid", "nn-split-end")


def modified(path: Path, why: str) -> DataError:
    return DataError(f"state file {str(path)!r} was modified outside incrowd: {why}")


def content_checksum(meta: Mapping[str, Any], tables: Mapping[str, pd.DataFrame | None]) -> str:
    """sha256 of the meta entries (but the checksum) and the tables, row order as stored."""
    h = hashlib.sha256()
    body = {key: value for key, value in meta.items() if key != CHECKSUM_KEY}
    h.update(json.dumps(body, sort_keys=True, allow_nan=True).encode())
    for name in sorted(tables):
        frame = tables[name]
        if frame is None:
            continue
        layout = [name, list(frame.shape), [str(c) for c in frame.columns], [str(t) for t in frame.dtypes]]
        h.update(b"\x00" + json.dumps(layout).encode())
        for column in frame.columns:
            _hash_column(h, frame[column])
    return f"{_ALGORITHM}:{h.hexdigest()}"


def check_checksum(meta: Mapping[str, Any], tables: Mapping[str, pd.DataFrame | None], path: Path) -> None:
    """The stored checksum is present and matches the content.

    Every incrowd that writes state format version 1 (the only one it reads) stores a checksum,
    so a file of that format without one had it removed: deleting the row must not turn an edit
    into a warning. A later format version that drops or changes the checksum says so here.
    """
    stored = meta.get(CHECKSUM_KEY)
    if stored is None:
        raise modified(path, f"it has no content checksum, which every incrowd writing state format "
                             f"version {meta.get('format_version')!r} stores, so an edit cannot be ruled "
                             "out; rebuild the state with 'incrowd incremental base'")
    if stored != content_checksum(meta, tables):
        raise modified(path, "its content does not match its checksum (checksum mismatch)")


def _hash_column(h, col: pd.Series) -> None:
    if isinstance(col.dtype, np.dtype) and col.dtype.kind in "biuf":
        h.update(np.ascontiguousarray(col.to_numpy()).tobytes())
        return
    # text and anything else: null mask, lengths and the concatenated text, so no separator
    # inside a value can make two different columns hash alike
    values = col.to_numpy(dtype=object, na_value=None)
    null = pd.isna(values)
    text = ["" if v is None else str(v) for v in values]
    h.update(null.tobytes())
    h.update(np.fromiter(map(len, text), np.int64, len(text)).tobytes())
    h.update("".join(text).encode("utf-8", "surrogatepass"))


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _finite_list(value, m: int) -> bool:
    return (isinstance(value, list) and len(value) == m
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value))


def check_meta(meta: Mapping[str, Any], path: Path) -> None:
    """Invariants of the meta entries alone, checked before they are converted."""
    k = meta.get("k")
    if not _is_int(k) or k < 2:
        raise modified(path, f"k is {k!r}, must be an integer >= 2")
    roles = {}
    for key in ("quasi_identifiers", "identifiers", "passthrough_columns", "column_order"):
        value = meta.get(key)
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise modified(path, f"{key} is {value!r}, must be a list of column names")
        roles[key] = value
    qis = roles["quasi_identifiers"]
    if not qis:
        raise modified(path, "there are no quasi-identifiers")
    named = qis + roles["identifiers"] + roles["passthrough_columns"]
    if sorted(named) != sorted(roles["column_order"]) or len(set(named)) != len(named):
        raise modified(
            path, f"the column roles (quasi-identifiers {qis}, identifiers {roles['identifiers']}, "
                  f"others {roles['passthrough_columns']}) do not partition the columns "
                  f"{roles['column_order']}")
    m = len(qis)
    for key in ("mean", "scale", "base_sse"):
        if not _finite_list(meta.get(key), m):
            raise modified(path, f"{key} is {meta.get(key)!r}, must be {m} finite number(s), one per "
                                 "quasi-identifier")
    if any(v <= 0 for v in meta["scale"]):
        raise modified(path, f"scale is {meta['scale']!r}, must be positive")
    if any(v < 0 for v in meta["base_sse"]):
        raise modified(path, f"base_sse is {meta['base_sse']!r}, must not be negative")
    if not isinstance(meta.get("method"), str) or not isinstance(meta.get("params"), dict):
        raise modified(path, "method or params are malformed")
    if meta.get("random_state") is not None and not _is_int(meta.get("random_state")):
        raise modified(path, f"random_state is {meta.get('random_state')!r}, must be an integer or null")
    if not isinstance(meta.get("keeps_points"), bool):
        raise modified(path, f"keeps_points is {meta.get('keeps_points')!r}, must be true or false")
    if meta.get("fingerprints", False) not in (True, False):
        raise modified(path, f"fingerprints is {meta.get('fingerprints')!r}, must be true or false")
    if meta.get("fingerprints"):
        fp_key = meta.get("fingerprint_key")
        if not isinstance(fp_key, str) or len(fp_key.encode()) != 16 or roles["identifiers"]:
            raise modified(path, "the row fingerprints' key is malformed")
    _check_batch_log(meta.get("batches"), meta["method"], path)


def _check_batch_log(batches, method: str, path: Path) -> None:
    if not isinstance(batches, list) or not batches:
        raise modified(path, "the batch log is not a non-empty list")
    for i, entry in enumerate(batches):
        where = f"batch log entry {i}"
        if not isinstance(entry, dict):
            raise modified(path, f"{where} is not an object")
        if entry.get("batch") != i or not _is_int(entry.get("batch")):
            raise modified(path, f"{where} has batch number {entry.get('batch')!r}, expected {i}")
        kind = "base" if i == 0 else "increment"
        if entry.get("kind") != kind:
            raise modified(path, f"{where} has kind {entry.get('kind')!r}, expected {kind!r}")
        rows = entry.get("rows")
        if not _is_int(rows) or rows < 1:
            raise modified(path, f"{where} has rows {rows!r}, must be a positive integer")
        seconds = entry.get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
                or seconds < 0:
            raise modified(path, f"{where} has seconds {seconds!r}, must be a finite number >= 0")
        if i == 0 and entry.get("method") != method:
            raise modified(path, f"{where} has method {entry.get('method')!r}, the state's is {method!r}")
        if i > 0 and entry.get("strategy") not in _INCREMENT_STRATEGIES:
            raise modified(path, f"{where} has strategy {entry.get('strategy')!r}")


def check_columns(meta: Mapping[str, Any], tables: Mapping[str, pd.DataFrame | None], path: Path) -> None:
    """The tables' columns are the ones the meta entries name (no renamed or missing column)."""
    m = len(meta["quasi_identifiers"])
    expected = {
        "groups": ["group_id", "size"] + [f"sum_{j}" for j in range(m)] + [f"sumsq_{j}" for j in range(m)],
        "members": ["row", "batch", "group_id"] + [f"key:{c}" for c in meta["identifiers"]]
                   + (["fingerprint"] if meta.get("fingerprints") else []),
        "passthrough": ["row"] + [f"col:{c}" for c in meta["passthrough_columns"]]
                       + [f"missing_code:{c}" for c in (meta.get("layout") or {}).get("missing_codes") or ()],
        "points": ["row"] + [f"z_{j}" for j in range(m)],
    }
    for name, want in expected.items():
        frame = tables.get(name)
        if frame is None:
            continue
        have = [str(c) for c in frame.columns]
        if sorted(have) != sorted(want):
            raise modified(path, f"table {name!r} has columns {have}, expected {want} from the "
                                 "quasi-identifiers and column roles in meta")
        key = "group_id" if name == "groups" else "row"
        if not np.array_equal(frame[key].to_numpy(), np.arange(frame.shape[0])):
            raise modified(path, f"table {name!r}: column {key!r} is not numbered 0..{frame.shape[0] - 1}")


def check_state(state, path: Path) -> None:
    """Cross-checks between the assembled tables: groups, members, points and the batch log."""
    n, g = state.n_rows, state.n_groups
    m = len(state.quasi_identifiers)
    if n == 0 or g == 0:
        raise modified(path, "no rows or no groups")
    if state.labels.min() < 0 or state.labels.max() >= g:
        raise modified(path, "a row belongs to a group that does not exist")
    if not np.array_equal(np.bincount(state.labels, minlength=g), state.sizes):
        raise modified(path, "group sizes disagree with the member rows")
    if state.sizes.min() < state.k:
        raise modified(path, f"a group has fewer than k={state.k} rows")
    if state.passthrough.shape[0] != n or state.keys.shape[0] != n:
        raise modified(path, "row counts of the tables disagree")
    if not (np.isfinite(state.sums).all() and np.isfinite(state.sumsq).all()):
        raise modified(path, "a group sum is not a finite number")
    # SSE of each group, sum of squares minus n * centroid^2, cannot be negative
    sse = state.sumsq - state.sums ** 2 / state.sizes[:, None]
    if (sse < -1e-6 * (state.sumsq + 1.0)).any():
        raise modified(path, "group sums and sums of squares contradict each other")
    if state.points is not None:
        if state.points.shape != (n, m) or not np.isfinite(state.points).all():
            raise modified(path, "the points table does not match the member rows")
        for j in range(m):
            z = state.points[:, j]
            want = np.bincount(state.labels, weights=z, minlength=g)
            want_sq = np.bincount(state.labels, weights=z * z, minlength=g)
            scale = np.bincount(state.labels, weights=np.abs(z), minlength=g) + 1.0
            if (np.abs(state.sums[:, j] - want) > 1e-8 * scale).any() \
                    or (np.abs(state.sumsq[:, j] - want_sq) > 1e-8 * (want_sq + 1.0)).any():
                raise modified(path, "group sums disagree with the member rows")
    if state.batch.min() < 0 or state.batch.max() >= len(state.batches):
        raise modified(path, "a row belongs to a batch that is not in the batch log")
    counts = np.bincount(state.batch, minlength=len(state.batches))
    logged = np.array([b["rows"] for b in state.batches])
    if not np.array_equal(counts, logged):
        raise modified(path, f"the batch log says {logged.tolist()} rows per batch, the members "
                             f"table holds {counts.tolist()}")
