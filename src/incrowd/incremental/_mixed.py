"""Incremental releases of mixed files: a base published as ``publish`` would, late rows adjoined
so that every release stays k-anonymous over all quasi-identifiers together.

The state records the release specification (the spec's dict, and a digest of each hierarchy
file it names) and the generalization node ``publish`` chose for the base. A class is the set of
rows with the same generalized categorical values at that node and the same missing pattern of
the numeric quasi-identifiers; the groups live inside classes, as in the base release. A late
row joins a group of its own class (whose generalized values cover its own): the nearest by the
joint distance, which inside one class is the numeric distance (the categorical part, the node's
levels over each hierarchy's top, is the same for every group of the class), as the numeric
strategies adjoin rows (:func:`._kernels.adjoin`). A row whose class has no group yet waits;
once k rows of one class wait they form groups with the spec's method, as the base's classes do.
A release suppresses the rows still waiting, within the spec's ``max_suppression``.

The release is built, verified and written by the code of ``publish`` (its table, its checks,
its recode of generalized columns as labelled codes), so a release of a .sav or .dta keeps the
file's value labels, formats, measures and user-missing codes exactly as ``publish`` writes them.

The file holds, besides ``meta`` and ``contents``:

- ``rows``: every row as it arrived, all columns (``col:`` + name); for a column of a statistical
  file with user-missing codes, ``missing_code:`` + name holds which code each missing cell was
  (DuckDB keeps no NaN payload);
- ``members``: per row, its batch and its group (-1: waiting, suppressed from the releases).
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._runtime import __version__, compile_clock
from ..exceptions import DataError, IncrowdError, ParameterError
from ..io import StatMeta, code_indices, damaged, read_database, tag_codes, write_database
from . import _integrity, _layout
from ._kernels import NO_SPLIT, SPLIT_END, SPLIT_MID, adjoin

KIND = "mixed"
_WHAT = "state file"
_MODES = {"nn": NO_SPLIT, "nn-split-mid": SPLIT_MID, "nn-split-end": SPLIT_END, "2mdav": NO_SPLIT}


@dataclass
class MixedState:
    """The state of an incremental release made by a specification."""

    spec: dict[str, Any]            # ReleaseSpec.to_dict()
    digests: dict[str, str]         # categorical QI -> sha256 of its hierarchy file
    levels: dict[str, int]          # the base's generalization node
    column_order: list[str]
    rows: pd.DataFrame              # every row as it arrived
    labels: np.ndarray              # (n,) group, -1 waiting
    batch: np.ndarray               # (n,) 0 = base
    batches: list[dict[str, Any]] = field(default_factory=list)
    statfile: dict[str, Any] | None = None
    layout: dict[str, Any] = field(default_factory=dict)
    created: str = ""
    incrowd_version: str = ""
    checksum: str | None = None

    @property
    def n_rows(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_groups(self) -> int:
        return int(np.unique(self.labels[self.labels >= 0]).size)

    @property
    def k(self) -> int:
        return int(self.spec["privacy"]["k"])

    @property
    def method(self) -> str:
        return str(self.spec["privacy"].get("method", "mdav"))

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.names("numeric", "categorical")

    @property
    def identifiers(self) -> list[str]:
        return self.names("identifier")

    def release_spec(self):
        from ..publishing import load_spec

        return load_spec(self.spec)

    def names(self, *roles: str) -> list[str]:
        out = []
        for name, entry in self.spec["columns"].items():
            role = entry if isinstance(entry, str) else entry["role"]
            if role in roles:
                out.append(name)
        return out

    def frame(self) -> pd.DataFrame:
        """Every row, with the input's metadata (a statistical file's labels and missing codes)."""
        out = self.rows.copy()
        if self.statfile is not None:
            out.attrs["statfile"] = StatMeta(self.statfile)
        out.attrs.update({k: v for k, v in self.layout.items() if k.startswith("csv_")})
        return out

    def describe(self) -> dict[str, Any]:
        waiting = int(np.count_nonzero(self.labels < 0))
        return {
            "format": "incrowd.incremental-state", "format_version": 1, "kind": KIND,
            "incrowd_version": self.incrowd_version, "created": self.created,
            "k": self.k, "method": self.spec["privacy"].get("method", "mdav"),
            "params": dict(self.spec.get("method_params") or {}),
            "quasi_identifiers": self.names("numeric", "categorical"),
            "numeric": self.names("numeric"), "categorical": self.names("categorical"),
            "identifiers": self.names("identifier"),
            "passthrough_columns": [c for c in self.column_order
                                    if c not in self.names("numeric", "categorical", "identifier")],
            "levels": dict(self.levels), "spec": self.spec,
            "rows": self.n_rows, "groups": self.n_groups, "waiting": waiting,
            "keeps_points": True, "batches": self.batches,
            "min_distinct_records": None, "groups_below_k_distinct": None,
            "tables": dict(_contents()),
        }


def _contents() -> list[tuple[str, str]]:
    return [
        ("meta", "format, version, the release specification and its hierarchy files' digests, the "
                 "base's generalization node, the input's metadata, batches with strategy and timings"),
        ("rows", "every row as it arrived, all columns (and which user-missing code each missing "
                 "cell of a statistical file was)"),
        ("members", "per row: release row number, batch (0 = base), group (-1: waiting for a class, "
                    "suppressed from the releases)"),
    ]


# ---------------------------------------------------------------------------------------------
# the specification


def _digests(spec) -> dict[str, str]:
    out = {}
    for column in spec.columns.values():
        if column.role == "categorical" and column.hierarchy is not None:
            out[column.name] = hashlib.sha256(Path(column.hierarchy).read_bytes()).hexdigest()
    return out


def check_supported(spec) -> None:
    """What an incremental release does not do yet, refused before any work."""
    if spec.strategy != "generalize-then-microaggregate":
        raise ParameterError(f"{spec.source}: an incremental release uses strategy "
                             f"\"generalize-then-microaggregate\"; got strategy = {spec.strategy!r}")
    if spec.suppression != "rows":
        raise ParameterError(f"{spec.source}: an incremental release suppresses rows; set suppression = "
                             "\"rows\" in [privacy]")
    if spec.perturb:
        raise ParameterError(f"{spec.source}: an incremental release does not apply [[perturb]] steps; publish "
                             "them with incrowd publish, or remove them from the spec")


def _canonical(spec_dict: dict[str, Any]) -> str:
    return json.dumps(spec_dict, sort_keys=True, default=str)


def _first_difference(ours: dict, theirs: dict) -> str:
    """The first key where two specs differ, with both values ("[privacy] k: 4, the state's 3")."""
    sections = ["privacy", "columns", *sorted((set(ours) | set(theirs)) - {"privacy", "columns"})]
    for section in sections:
        a, b = ours.get(section) or {}, theirs.get(section) or {}
        for key in [*a, *(key for key in b if key not in a)]:
            if a.get(key) != b.get(key):
                return f"[{section}] {key}: {json.dumps(b.get(key))}, the state's {json.dumps(a.get(key))}"
    return "?"


def check_spec(state: MixedState, given, path: Path, base_dir=None) -> None:
    """``given`` (a spec as :func:`incrowd.publishing.load_spec` takes it, or None) is the spec the
    state was built with, and the hierarchy files it names are unchanged since."""
    if given is not None:
        from ..publishing import load_spec

        theirs = json.loads(_canonical(load_spec(given, base_dir).to_dict()))
        ours = json.loads(_canonical(state.spec))
        if theirs != ours:
            raise ParameterError(f"the spec differs from the one state file {str(path)!r} was built with "
                                 f"({_first_difference(ours, theirs)}); an incremental release keeps its base's "
                                 "spec: give the same spec, or none")
    spec = state.release_spec()
    for name, digest in state.digests.items():
        file = Path(spec.columns[name].hierarchy)
        if not file.is_file():
            raise DataError(f"hierarchy file {str(file)!r} of column {name!r} (recorded in state file "
                            f"{str(path)!r}) is not found")
        if hashlib.sha256(file.read_bytes()).hexdigest() != digest:
            raise DataError(f"hierarchy file {str(file)!r} of column {name!r} changed since the base of state "
                            f"file {str(path)!r} was made; an incremental release keeps its hierarchies")


# ---------------------------------------------------------------------------------------------
# classes and groups


def _classes(prep, levels: dict[str, int]) -> np.ndarray:
    """Class id per row: the generalized categorical codes at the node and the missing pattern."""
    keys = [prep.pattern]
    for name in prep.categorical:
        keys.append(prep.hierarchies[name].code_map(int(levels[name]))[prep.codes0[name]])
    frame = pd.DataFrame({str(i): key for i, key in enumerate(keys)})
    return frame.groupby(list(frame.columns), sort=False).ngroup().to_numpy(np.int64)


def _form_groups(prep, rows: np.ndarray, class_of: np.ndarray, first_id: int, labels: np.ndarray) -> int:
    """Groups of the spec's method over ``rows`` inside each class, as the base's classes are
    microaggregated; returns the next free group id."""
    from types import SimpleNamespace

    from ..publishing import microaggregate_classes

    if rows.size == 0:
        return first_id
    keep = np.zeros(prep.n, bool)
    keep[rows] = True
    local = microaggregate_classes(prep, SimpleNamespace(keep=keep, class_of=class_of))
    labels[rows] = local[rows] + first_id
    return int(labels[rows].max()) + 1


def _adjoin_class(P_old: np.ndarray, P_new: np.ndarray, old: np.ndarray, new: np.ndarray, labels: np.ndarray,
                  k: int, inertial: bool, mode: int, first_id: int) -> tuple[int, int]:
    """Rows ``new`` (values ``P_new``) join the groups of rows ``old`` (one class), nearest
    centroid first, as the numeric strategies adjoin; returns (next free group id, splits)."""
    ids, local_old = np.unique(labels[old], return_inverse=True)
    g0 = ids.size
    n_old, n_new = old.size, new.size
    if P_old.shape[1] == 0:  # no numeric value to be near to: the smallest group takes the row
        sizes = np.bincount(local_old, minlength=g0)
        for r in new:
            q = int(np.argmin(sizes))
            labels[r] = ids[q]
            sizes[q] += 1
        return first_id, 0
    m = P_old.shape[1]
    cap = g0 + (n_old + n_new) // k + 1
    sizes = np.zeros(cap, np.int64)
    sums = np.zeros((cap, m))
    sumsq = np.zeros((cap, m))
    sizes[:g0] = np.bincount(local_old, minlength=g0)
    np.add.at(sums, local_old, P_old)
    np.add.at(sumsq, local_old, P_old * P_old)
    local = np.empty(n_old + n_new, np.int64)
    local[:n_old] = local_old
    n_groups, splits = adjoin(P_old, P_new, local, sums, sumsq, sizes, g0, k, inertial, mode)
    n_groups = int(n_groups)
    # a split keeps one half under the old id; ids past the old ones are new groups
    mapping = np.concatenate([ids, np.arange(first_id, first_id + n_groups - g0)])
    labels[old] = mapping[local[:n_old]]
    labels[new] = mapping[local[n_old:]]
    return first_id + n_groups - g0, int(splits)


def assign(prep, labels: np.ndarray, levels: dict[str, int], k: int, strategy: str,
           inertial: bool) -> dict[str, int]:
    """Adjoin every waiting row (label -1) of ``prep``: join a group of its class, nearest
    first, or form groups with the other waiting rows of its class once they are k; the rest
    wait. ``labels`` is changed in place; returns the counts."""
    class_of = _classes(prep, levels)
    waiting = labels < 0
    next_id = int(labels.max()) + 1 if (~waiting).any() else 0
    joined = splits = 0
    forming: list[np.ndarray] = []
    order = np.argsort(class_of, kind="stable")
    bounds = np.flatnonzero(np.diff(class_of[order])) + 1
    for members in np.split(order, bounds):
        new = members[waiting[members]]
        if new.size == 0:
            continue
        old = members[~waiting[members]]
        if old.size == 0 or (strategy == "2mdav" and new.size >= k):
            if new.size >= k:
                forming.append(new)
            continue
        present = np.flatnonzero(prep.pattern_masks[int(prep.pattern[members[0]])])
        # the class's present columns hold no NaN
        P_old = np.ascontiguousarray(prep.Z[np.ix_(old, present)])
        P_new = np.ascontiguousarray(prep.Z[np.ix_(new, present)])
        next_id, s = _adjoin_class(P_old, P_new, old, new, labels, k, inertial, _MODES[strategy], next_id)
        joined += int(new.size)
        splits += s
    formed_rows = np.concatenate(forming) if forming else np.empty(0, np.int64)
    before = next_id
    next_id = _form_groups(prep, formed_rows, class_of, next_id, labels)
    _check_groups(labels, class_of, k)
    return {"joined": joined, "formed": int(formed_rows.size), "new_groups": next_id - before,
            "splits": splits, "waiting": int(np.count_nonzero(labels < 0))}


def _check_groups(labels: np.ndarray, class_of: np.ndarray, k: int) -> None:
    """The invariant every release rests on: groups of k or more rows, each inside one class."""
    kept = labels >= 0
    if not kept.any():
        return
    sizes = np.bincount(labels[kept])
    spread = pd.Series(class_of[kept]).groupby(labels[kept]).nunique()
    if (sizes[sizes > 0] < k).any() or (spread > 1).any():
        raise IncrowdError("internal error: a group below k or across two classes")


def _renumbered(labels: np.ndarray) -> np.ndarray:
    out = labels.copy()
    kept = labels >= 0
    out[kept] = np.unique(labels[kept], return_inverse=True)[1].ravel()
    return out


# ---------------------------------------------------------------------------------------------
# base, add, release


def prepared_frame(frame: pd.DataFrame, spec):
    from ..publishing import prepare

    return prepare(frame, spec)


def create(frame: pd.DataFrame, spec, *, layout_columns: list[str]) -> MixedState:
    """The base: the rows published as ``publish`` publishes them; its node and groups kept."""
    from ..publishing import publish

    check_supported(spec)
    frame = frame.reset_index(drop=True)
    with compile_clock() as clock:
        start = time.perf_counter()
        result = publish(frame, spec)
        summary = result.summary()
        levels = {name: int(level) for name, level in (summary.get("levels") or {}).items()}
        # the groups: rows of one class (the node's generalized values and the missing pattern)
        # published with the same numeric values
        class_of = _classes(prepared_frame(frame, spec), levels)
        kept = result.kept_rows
        keys = pd.DataFrame({"class": class_of[kept]})
        for name in spec.names("numeric"):
            keys[name] = result.table[name].to_numpy(np.float64)
        group = keys.groupby(list(keys.columns), dropna=False, sort=False).ngroup().to_numpy(np.int64)
        labels = np.full(frame.shape[0], -1, np.int64)
        labels[kept] = group
        _check_groups(labels, class_of, spec.k)
        elapsed = time.perf_counter() - start
    statfile = frame.attrs.get("statfile")
    return MixedState(
        spec=json.loads(_canonical(spec.to_dict())), digests=_digests(spec), levels=levels,
        column_order=[str(c) for c in frame.columns], rows=frame, labels=labels,
        batch=np.zeros(frame.shape[0], np.int64),
        batches=[{"batch": 0, "kind": "base", "rows": int(frame.shape[0]), "method": spec.method,
                  "seconds": max(elapsed - clock.seconds, 0.0), "compile_seconds": float(clock.seconds),
                  "groups": int(np.unique(group).size), "suppressed": int(result.suppressed),
                  "levels": levels, "information_loss": float(summary.get("numeric_information_loss") or 0.0)}],
        statfile=dict(statfile) if isinstance(statfile, dict) else None,
        layout={key: value for key, value in _layout.of_input(frame, layout_columns).items()
                if key not in ("statfile", "missing_codes")},  # kept whole in their own entry
        incrowd_version=__version__,
    )


def add(state: MixedState, frame: pd.DataFrame, strategy: str, inertial: bool) -> tuple[MixedState, dict]:
    """The state with ``frame``'s rows adjoined (and the rows still waiting retried)."""
    from ..publishing import prepare

    spec = state.release_spec()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few late rows are often constant: said of the whole, if at all
        prepare(frame, spec.for_increment())
    rows = pd.concat([state.rows, frame], ignore_index=True)
    combined = state.frame()
    combined = pd.concat([combined, frame], ignore_index=True)
    combined.attrs = state.frame().attrs
    with compile_clock() as clock:
        start = time.perf_counter()
        prep = prepare(combined, spec)
        labels = np.concatenate([state.labels, np.full(frame.shape[0], -1, np.int64)])
        waiting_before = int(np.count_nonzero(state.labels < 0))
        counts = assign(prep, labels, state.levels, spec.k, strategy, inertial)
        elapsed = time.perf_counter() - start
    labels = _renumbered(labels)
    batch_no = int(state.batch.max()) + 1
    report = {"batch": batch_no, "kind": "increment", "rows": int(frame.shape[0]), "strategy": strategy,
              "inertial": bool(inertial), "seconds": max(elapsed - clock.seconds, 0.0),
              "compile_seconds": float(clock.seconds), "groups_before": state.n_groups,
              "groups_after": int(np.unique(labels[labels >= 0]).size), "splits": counts["splits"],
              "waiting_before": waiting_before, "joined": counts["joined"], "formed": counts["formed"],
              "waiting": counts["waiting"],
              "note": (f"{counts['waiting']} row(s) wait for k rows of their class; a release suppresses "
                       "them" if counts["waiting"] else None)}
    new = replace(state, rows=rows, labels=labels,
                  batch=np.concatenate([state.batch, np.full(frame.shape[0], batch_no, np.int64)]),
                  batches=state.batches + [report], incrowd_version=__version__, checksum=None)
    return new, report


def release(state: MixedState):
    """The combined release as ``publish`` makes it (a :class:`incrowd.publishing.PublishResult`,
    verified in memory), and the frame of every row it was made from."""
    from ..publishing import (
        PublishResult,
        check_full_suppression,
        release_promise,
        release_summary,
        release_table,
        release_verification,
    )

    frame = state.frame()
    with compile_clock() as clock:
        start = time.perf_counter()
        prep = prepared_frame(frame, state.release_spec())
        groups = _with_sensitive(prep, state)
        _check_waiting(prep, groups, state.labels)
        levels_per_row = {a: np.full(prep.n, state.levels[a], np.int64) for a in prep.categorical}
        keep = groups >= 0
        fully = check_full_suppression(prep, levels_per_row, keep)
        table = release_table(prep, groups, levels_per_row, keep)
        _layout.apply(table, state.layout)
        verification = release_verification(prep, table)
        seconds = time.perf_counter() - start
    extra = {"levels": dict(state.levels), "fully_suppressed": fully}
    summary = release_summary(prep, groups, levels_per_row, keep, verification, extra,
                              max(seconds - clock.seconds, 0.0), clock.seconds)
    result = PublishResult(table=table, suppressed=int((~keep).sum()), kept_rows=np.flatnonzero(keep),
                           spec=prep.spec, _summary=summary, hierarchies=dict(prep.data_hierarchies),
                           promise=release_promise(prep, table))
    return result, frame


def _with_sensitive(prep, state: MixedState) -> np.ndarray:
    """The state's groups with l and t enforced as ``publish`` enforces them on its groups: a
    group whose sensitive values fail merges with the nearest group of its class (the node's
    generalized values and the missing pattern), and what still fails is suppressed. The state
    keeps its own groups; t compares with all rows of the state, the input of this release."""
    from ..publishing import enforce_sensitive

    return enforce_sensitive(prep, state.labels.copy(), _classes(prep, state.levels))


def _check_waiting(prep, groups: np.ndarray, waiting_groups: np.ndarray) -> None:
    from ..publishing import check_suppression

    try:
        check_suppression(prep, groups)
    except ParameterError as exc:
        waiting = int((waiting_groups < 0).sum())
        failing = int((groups < 0).sum()) - waiting
        what = [f"{waiting} row(s) wait for k={prep.spec.k} rows of their class"] if waiting else []
        if failing:
            models = "l, t or another privacy model of the spec" if prep.spec.models else "l or t"
            what.append(f"{failing} row(s) are in groups that fail {models} within their class")
        raise ParameterError(f"{' and '.join(what)} and would be suppressed: {exc}; add more rows, or raise "
                             "max_suppression in the spec") from None


# ---------------------------------------------------------------------------------------------
# the file


def _meta(state: MixedState) -> dict[str, Any]:
    import datetime as _dt

    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    return {"format": "incrowd.incremental-state", "format_version": 1, "kind": KIND,
            "incrowd_version": state.incrowd_version, "created": state.created or now, "saved": now,
            "spec": state.spec, "hierarchy_digests": state.digests, "levels": state.levels,
            "column_order": state.column_order, "batches": state.batches, "statfile": state.statfile,
            "layout": state.layout}


def _missing_columns(state: MixedState) -> list[str]:
    columns = (state.statfile or {}).get("columns") or {}
    return [c for c in state.column_order if (columns.get(c) or {}).get("missing_codes")
            and pd.api.types.is_float_dtype(state.rows[c].dtype)]


def _tables(state: MixedState) -> dict[str, pd.DataFrame]:
    rows = state.rows.reset_index(drop=True).add_prefix("col:")
    for name in _missing_columns(state):
        rows[f"missing_code:{name}"] = code_indices(state.rows[name].to_numpy())
    rows.insert(0, "row", np.arange(state.n_rows))
    members = pd.DataFrame({"row": np.arange(state.n_rows), "batch": state.batch, "group_id": state.labels})
    return {"rows": rows, "members": members}


def save(state: MixedState, path: Path) -> MixedState:
    """Write the state atomically (with its checksum); returns it as a later :func:`load` reads it."""
    frames = {"contents": pd.DataFrame(_contents(), columns=["table_name", "holds"]), **_tables(state)}
    seen: dict[str, Any] = {}

    def finish(con) -> dict[str, str]:
        meta, tables = _read(con)
        seen["meta"], seen["tables"] = meta, tables
        entry = {_integrity.CHECKSUM_KEY: _integrity.content_checksum(meta, tables)}
        seen["meta"] = {**meta, **entry}
        return entry

    write_database(Path(path), _meta(state), frames, _WHAT, finish=finish)
    return _assemble(seen["meta"], seen["tables"])


def _read(con) -> tuple[dict, dict[str, pd.DataFrame]]:
    meta = {key: json.loads(value) for key, value in con.execute("SELECT key, value FROM meta").fetchall()}
    return meta, {"rows": con.execute("SELECT * FROM rows ORDER BY row").df(),
                  "members": con.execute("SELECT * FROM members ORDER BY row").df()}


def _assemble(meta: dict, tables: dict[str, pd.DataFrame]) -> MixedState:
    raw = tables["rows"]
    order = list(meta["column_order"])
    rows = pd.DataFrame({name: raw[f"col:{name}"] for name in order})
    for name in order:
        code = f"missing_code:{name}"
        if code in raw.columns:
            index = raw[code].to_numpy(np.int64)
            values = rows[name].to_numpy(np.float64, copy=True)
            rows[name] = tag_codes(values, index >= 0, np.maximum(index, 0))
    members = tables["members"]
    return MixedState(
        spec=meta["spec"], digests=dict(meta.get("hierarchy_digests") or {}),
        levels={k: int(v) for k, v in (meta.get("levels") or {}).items()}, column_order=order, rows=rows,
        labels=members["group_id"].to_numpy(np.int64), batch=members["batch"].to_numpy(np.int64),
        batches=list(meta["batches"]), statfile=meta.get("statfile"), layout=dict(meta.get("layout") or {}),
        created=str(meta.get("created", "")), incrowd_version=str(meta.get("incrowd_version", "")),
        checksum=meta.get(_integrity.CHECKSUM_KEY),
    )


def is_mixed(path) -> bool:
    """Whether ``path`` is a state file made by a specification (False on any doubt: the
    ordinary reader then says what is wrong with the file)."""
    import duckdb

    try:
        if not Path(path).is_file():  # a FIFO would block the open; the ordinary reader names it
            return False
        with open(path, "rb") as fh:
            if fh.read(12)[8:12] != b"DUCK":  # DuckDB's magic bytes: a data file is never opened as one
                return False
        con = duckdb.connect(str(path), read_only=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'kind'").fetchone()
        finally:
            con.close()
        return row is not None and json.loads(row[0]) == KIND
    except Exception:
        return False


def load(path) -> MixedState:
    p = Path(path)

    def read(con, meta):
        return meta, _read(con)[1]

    meta, tables = read_database(p, what=_WHAT, file_format="incrowd.incremental-state", version=1,
                                 rebuild="rebuild the state with 'incrowd incremental base'",
                                 needed=lambda meta: {"rows", "members"}, read=read)
    try:
        state = _assemble(meta, tables)
        labels = state.labels
        sizes = np.bincount(labels[labels >= 0]) if (labels >= 0).any() else np.zeros(0, np.int64)
        if state.rows.shape[0] != labels.shape[0] or (sizes[sizes > 0] < state.k).any():
            raise ValueError("its groups do not match its rows or hold fewer than k rows")
    except (KeyError, ValueError, TypeError) as exc:
        raise damaged(_WHAT, p, f"{type(exc).__name__}: {exc}") from exc
    _integrity.check_checksum(meta, tables, p)
    return state


def stored_checksum(path) -> str | None:
    from ._state import stored_checksum as _stored

    return _stored(path)
