"""The incremental publication object: anonymize a base early, adjoin increments, publish once.

The incremental thesis (sections 3.2.4, 3.2.6, 4.2; Table 4.1). The base is microaggregated with any method
of the library; each increment is adjoined by one strategy:

- ``2mdav``: MDAV on the increment alone, its groups added to the base's (an increment of
  fewer than k rows cannot form a group: its rows join their nearest groups, and the report
  says so);
- ``nn``: every new row joins the group with the nearest centroid, which is then updated;
- ``nn-split-mid``: as ``nn``, and a group is split by MDAV as soon as it reaches 2k rows;
- ``nn-split-end``: as ``nn``, then every group of more than 2k-1 rows is split by MDAV.

``inertial=True`` weights the squared distance to a group of n_q rows by n_q/(n_q+1), the SSE
growth of adjoining the row with the centroid updated (section 3.2.6).

All distances are taken in the base's standardization, which is stored with the state and
applied to every increment.
"""

from __future__ import annotations

import numbers
import os
import time
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._runtime import __version__, compile_clock
from ..exceptions import DataError, DataWarning, IncrowdError, ParameterError, VerificationError
from ..io import (
    Promise,
    Verification,
    check_output_path,
    in_memory,
    is_stdout,
    mark_changed,
    numeric_matrix,
    resolve_roles,
)
from ..microaggregation import check_k, group_size_stats, make_estimator, mdav_labels, microaggregate
from ..privacy import KAnonymity, KAnonymityReport, ReleaseCheck, verify_k_anonymity
from ..values import Standardizer
from . import _agreement, _fingerprint, _layout, _mixed, _state
from ._kernels import NO_SPLIT, SPLIT_END, SPLIT_MID, adjoin
from ._lock import DEFAULT_WAIT, check_wait, state_lock
from ._state import State
from ._warm import warm_add

#: strategy name -> split mode of the nearest-centroid kernel (2mdav has its own path)
STRATEGIES: dict[str, int | None] = {
    "2mdav": None,
    "nn": NO_SPLIT,
    "nn-split-mid": SPLIT_MID,
    "nn-split-end": SPLIT_END,
}
_SPLITTING = ("nn-split-mid", "nn-split-end")


def _as_frame(data, what: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        frame = data
    else:
        arr = np.asarray(data)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise DataError(f"{what} must be a DataFrame or a 2-D array; got {arr.ndim}-D")
        frame = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])
    if frame.shape[0] == 0:
        raise DataError(f"the {what} has no rows")
    return frame


def _group_stats(Z: np.ndarray, labels: np.ndarray, n_groups: int):
    sizes = np.bincount(labels, minlength=n_groups).astype(np.int64)
    sums = np.zeros((n_groups, Z.shape[1]))
    sumsq = np.zeros((n_groups, Z.shape[1]))
    np.add.at(sums, labels, Z)
    np.add.at(sumsq, labels, Z * Z)
    return sizes, sums, sumsq


def _new_state_file(path: str | os.PathLike, overwrite: bool) -> Path:
    """The path of a state file to create: an existing one only when ``overwrite`` says so."""
    target = Path(path)
    if target.exists() and not overwrite:
        raise DataError(
            f"state file {str(target)!r} already exists; choose another name or overwrite it "
            "explicitly (overwrite=True, CLI --force)"
        )
    return target


def _check_base_options(k: int | None, keep_points: Any) -> None:
    if k is None:
        raise ParameterError("k is required (or a release specification, spec=, that names it)")
    if not isinstance(keep_points, (bool, np.bool_)):
        raise ParameterError(f"keep_points must be True or False; got {keep_points!r}")


def _warn_labelled_passthrough(frame: pd.DataFrame, passthrough: Sequence[str]) -> None:
    """Warn (at ``from_base``'s caller) that labelled columns pass through unprotected without a spec."""
    labelled = [c for c in passthrough if ((frame.attrs.get("statfile") or {}).get("columns") or {})
                .get(c, {}).get("value_labels")]
    if labelled:
        warnings.warn(
            f"column(s) {', '.join(labelled)} carry value labels and pass through unchanged: the releases are "
            "k-anonymous over the numeric quasi-identifiers only; give a release specification (CLI --spec, "
            "API spec=) to protect categorical columns too", DataWarning, stacklevel=3)


def _check_not_adjoined(seen_keys: pd.DataFrame, keys: pd.DataFrame) -> None:
    """Refuse an increment holding an identifier value the state already holds."""
    if keys.shape[1] == 0:
        return
    several = keys.shape[1] > 1
    seen = pd.MultiIndex.from_frame(seen_keys) if several else pd.Index(seen_keys.iloc[:, 0])
    new = pd.MultiIndex.from_frame(keys) if several else pd.Index(keys.iloc[:, 0])
    again = new.isin(seen)
    if again.any():
        pos = int(np.flatnonzero(again)[0])
        raise DataError(
            f"identifier value {new[pos]!r} (increment data row {pos + 1}) is already in "
            f"the state; {int(again.sum())} row(s) of this increment were adjoined before"
        )


def _check_unique_keys(keys: pd.DataFrame, what: str) -> None:
    if keys.shape[1] == 0:
        return
    dup = keys.duplicated(keep="first")
    if dup.any():
        pos = int(np.flatnonzero(dup.to_numpy())[0])
        value = keys.iloc[pos].tolist()
        raise DataError(
            f"identifier value {value if len(value) > 1 else value[0]!r} occurs more than once "
            f"in the {what} (data row {pos + 1}); row keys must be unique"
        )


def _check_random_state(random_state) -> Any:
    # The state file stores the seed as JSON, so it must be an int (or None).
    if random_state is None:
        return None
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise ParameterError(
            f"random_state must be an integer seed or None for an incremental state; got {random_state!r}"
        )
    return int(random_state)


@dataclass
class IncrementalRelease:
    """The combined release, verified k-anonymous (what
    :meth:`IncrementalMicroaggregation.publish` returns).

    Attributes
    ----------
    table : pandas.DataFrame
        The released rows: base rows first, then each increment in order.
    verification : Verification
        What was verified about ``table``, and where (:class:`incrowd.Verification`): on the
        written file when it was written.
    _summary : dict
        What :meth:`summary` returns.
    """

    table: pd.DataFrame
    verification: Verification
    _summary: dict[str, Any]

    def summary(self) -> dict[str, Any]:
        """What the CLI's ``--json`` prints for this release.

        Returns
        -------
        dict
            JSON-ready: the state file, k, the method, rows and groups, the distortions D0, D+
            and DT, the times, ``k_anonymous``, ``min_class_size`` and ``verification`` (with
            ``compare=True`` the one-shot figures too).
        """
        return self._summary


class IncrementalMicroaggregation:
    """Anonymization state on disk: created from base data, reopened, fed increments, published.

    Create with :meth:`from_base` (runs the base microaggregation and writes the state file),
    reopen with :meth:`open`, adjoin late rows with :meth:`add`, and write the release with
    :meth:`publish`. Every change is saved to the file before the call returns, so a process
    may stop between any two calls; another process picks up from the file.

    Parameters
    ----------
    state : State
        The state as read from the file.
    path : pathlib.Path
        The state file.
    """

    def __init__(self, state: State | _mixed.MixedState, path: Path):
        # a MixedState (made by a release specification) goes only where ``_mixed`` says so
        self._state: State = state  # type: ignore[assignment]
        self.path = path

    @property
    def _mixed(self) -> bool:
        """Whether the state was made by a release specification (numeric and categorical QIs)."""
        return isinstance(self._state, _mixed.MixedState)

    def _refresh(self) -> None:
        """Continue from the file as it is now (called with the writer lock held): another
        process may have replaced it since this object read it; its checksum tells."""
        held = self._state.checksum
        if held is None or _state.stored_checksum(self.path) != held:
            self._state = _mixed.load(self.path) if self._mixed else _state.load(self.path)  # type: ignore[assignment]

    # ------------------------------------------------------------------ creation and reopening

    @classmethod
    def from_base(
        cls,
        data,
        path: str | os.PathLike,
        k: int | None = None,
        method: str = "mdav",
        *,
        quasi_identifiers: Sequence[str] | str | None = None,
        identifiers: Sequence[str] | str | None = None,
        keep_points: bool = True,
        random_state=None,
        overwrite: bool = False,
        wait: float = DEFAULT_WAIT,
        spec=None,
        base_dir: str | os.PathLike | None = None,
        **params,
    ) -> IncrementalMicroaggregation:
        """Microaggregate the base data with ``method`` and store the state in ``path``.

        With ``spec`` (a release specification as :func:`incrowd.publish` takes it: a TOML file,
        TOML text, a dict or a :class:`~incrowd.publishing.ReleaseSpec`; relative hierarchy paths
        from ``base_dir``), the base is published as ``publish`` publishes it, over numeric and
        categorical quasi-identifiers together, and the state records the spec, its hierarchy
        files' digests and the chosen generalization node: every later release is k-anonymous
        over all quasi-identifiers together and keeps a statistical file's metadata. The spec
        names the roles, k and the method (``quasi_identifiers``, ``identifiers`` and the
        method's parameters are then not given; ``k``, when given, must be the spec's).

        ``identifiers`` (dropped from the release) serve as row keys and must be unique;
        without them rows are keyed by their number. ``keep_points=False`` stores no
        quasi-identifier value of any row: the nn-split strategies and the one-shot comparison
        are then unavailable. An existing file is kept unless ``overwrite``. The file is written
        holding its writer lock; another writer holding it longer than ``wait`` seconds makes
        this raise :class:`~incrowd.StateLockedError`.
        """
        target = _new_state_file(path, overwrite)
        wait = check_wait(wait)
        if spec is not None:
            return cls._from_spec(data, target, spec, base_dir, k, method, quasi_identifiers, identifiers,
                                  params, overwrite, wait)
        _check_base_options(k, keep_points)
        seed = _check_random_state(random_state)
        frame = _as_frame(data, "base data")
        make_estimator(method, 2, seed, **params)  # unknown method or parameter: fail first
        roles = resolve_roles(frame, quasi_identifiers, identifiers)
        qis, ids = list(roles.quasi_identifiers), list(roles.identifiers)
        X = numeric_matrix(frame, qis)
        check_k(k, X.shape[0])
        keys = frame[ids].reset_index(drop=True)
        _check_unique_keys(keys, "base data")
        result = microaggregate(frame, k, method, quasi_identifiers=qis, identifiers=ids,
                                random_state=seed, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # microaggregate has warned about constant columns
            scaler = Standardizer.fit(X, qis)
        Z = scaler.transform(X)
        labels = np.asarray(result.labels, dtype=np.int64)
        print_key = None if ids else _fingerprint.new_key()
        prints = None if ids else _fingerprint.fingerprints(X, frame[list(roles.other)], print_key)
        sizes, sums, sumsq = _group_stats(Z, labels, result.n_groups)
        base_sse = ((Z - (sums / sizes[:, None])[labels]) ** 2).sum(axis=0)  # around the centroids
        state = State(
            k=int(result.k), method=method, params=result.params, random_state=seed,
            quasi_identifiers=qis, identifiers=ids, passthrough_columns=list(roles.other),
            column_order=[str(c) for c in frame.columns],
            mean=scaler.mean, scale=scaler.scale, sizes=sizes, sums=sums, sumsq=sumsq,
            labels=labels, batch=np.zeros(labels.shape[0], np.int64), keys=keys,
            passthrough=frame[list(roles.other)].reset_index(drop=True),
            points=Z if keep_points else None, base_sse=base_sse,
            batches=[{
                "batch": 0, "kind": "base", "rows": int(labels.shape[0]), "method": method,
                "seconds": float(result.seconds), "compile_seconds": float(result.compile_seconds),
                "groups": int(result.n_groups),
                "information_loss": float(result.information_loss),
            }],
            incrowd_version=__version__, fingerprints=prints, fingerprint_key=print_key,
            layout=_layout.of_input(frame, list(roles.other)),
        )
        _warn_labelled_passthrough(frame, roles.other)
        return cls._created(state, target, wait, overwrite, _state.save_and_read)

    @classmethod
    def _created(cls, state, target: Path, wait: float, overwrite: bool, save) -> IncrementalMicroaggregation:
        """The session of a new state file, written by ``save`` under the writer lock; refused
        when another process created the file meanwhile and ``overwrite`` is False."""
        with state_lock(target, wait):
            if target.exists() and not overwrite:  # created by another process meanwhile
                raise DataError(
                    f"state file {str(target)!r} already exists; choose another name or overwrite "
                    "it explicitly (overwrite=True, CLI --force)"
                )
            return cls(save(state, target), target)

    @classmethod
    def _from_spec(cls, data, target: Path, spec, base_dir, k, method, quasi_identifiers, identifiers,
                   params, overwrite: bool, wait: float) -> IncrementalMicroaggregation:
        from ..publishing import load_spec

        release_spec = load_spec(spec, base_dir)
        for given, what in ((quasi_identifiers, "quasi_identifiers (--qi)"), (identifiers, "identifiers (--id)"),
                            (params or None, "method parameters")):
            if given is not None:
                raise ParameterError(f"{what} and a release specification both given; the spec names the "
                                     "roles and the method's parameters")
        if k is not None and k != release_spec.k:
            raise ParameterError(f"k={k!r} differs from the spec's k={release_spec.k}; give one of them")
        if method != "mdav" and method != release_spec.method:
            raise ParameterError(f"method {method!r} differs from the spec's method {release_spec.method!r}; "
                                 "the spec names the method")
        _mixed.check_supported(release_spec)
        frame = _as_frame(data, "base data")
        ids = release_spec.names("identifier")
        _check_unique_keys(frame[[c for c in ids if c in frame.columns]].reset_index(drop=True), "base data")
        state = _mixed.create(frame, release_spec, layout_columns=[
            c for c in frame.columns if c not in release_spec.quasi_identifiers and c not in ids])
        return cls._created(state, target, wait, overwrite, _mixed.save)

    @classmethod
    def open(cls, path: str | os.PathLike) -> IncrementalMicroaggregation:
        """Reopen a state file written by :meth:`from_base` (in this or another process)."""
        target = Path(path)
        if _mixed.is_mixed(target):
            return cls(_mixed.load(target), target)
        return cls(_state.load(target), target)

    # ------------------------------------------------------------------ properties

    @property
    def k(self) -> int:
        return self._state.k

    @property
    def method(self) -> str:
        return self._state.method

    @property
    def n_rows(self) -> int:
        return self._state.n_rows

    @property
    def n_groups(self) -> int:
        return self._state.n_groups

    @property
    def labels(self) -> np.ndarray:
        return self._state.labels.copy()

    @property
    def batches(self) -> list[dict[str, Any]]:
        return [dict(b) for b in self._state.batches]

    @property
    def quasi_identifiers(self) -> list[str]:
        return list(self._state.quasi_identifiers)

    def original_and_release(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(the rows as they arrived, the combined release), row for row, for the risk and utility
        report. The original quasi-identifiers come back from the stored standardized values (a
        rounding step from the input's own); the state must keep them (keep_points)."""
        if self._mixed:
            original, release, _ = self.report_inputs()
            return original, release
        st = self._state
        if not st.keep_points:
            raise ParameterError(
                f"the report needs the rows' values, but the state file {str(self.path)!r} was built "
                "without them (keep_points=False)")
        release, _ = self.release()
        original = release.copy()
        values = Standardizer(st.mean, st.scale).inverse_transform(st.points)
        for j, name in enumerate(st.quasi_identifiers):
            original[name] = values[:, j]
        return original, release

    def report_inputs(self) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
        """(the rows as they arrived, the combined release, the options of :func:`incrowd.report`):
        what the risk and utility report of the release is made from.

        Returns
        -------
        tuple of (pandas.DataFrame, pandas.DataFrame, dict)
            The original rows, the release, and the report's options (quasi-identifiers, k,
            and with a specification its roles, hierarchies and the rows the release keeps).
        """
        if self._mixed:
            result, frame = _mixed.release(self._state)
            return frame, result.table, result.report_options()
        original, release = self.original_and_release()
        return original, release, {"quasi_identifiers": list(self.quasi_identifiers), "k": self.k}

    def describe(self) -> dict[str, Any]:
        """What the state file holds (format, roles, groups, batches, tables)."""
        return {"path": str(self.path), **self._state.describe()}

    # ------------------------------------------------------------------ increments

    def _increment_frame(self, data) -> pd.DataFrame:
        st = self._state
        frame = _as_frame(data, "increment")
        columns = [str(c) for c in frame.columns]
        missing = [c for c in st.column_order if c not in columns]
        extra = [c for c in columns if c not in st.column_order]
        if missing or extra or len(set(columns)) != len(columns):
            parts = []
            if missing:
                parts.append(f"missing {missing}")
            if extra:
                parts.append(f"not in the base {extra}")
            if len(set(columns)) != len(columns):
                parts.append("duplicated column names")
            raise DataError(
                "the increment's columns differ from the base's: " + "; ".join(parts)
                + f" (the base has {st.column_order})"
            )
        return frame[st.column_order].reset_index(drop=True)

    def add(self, data, strategy: str = "nn-split-end", *, inertial: bool = False,
            k: int | None = None, wait: float = DEFAULT_WAIT,
            allow_duplicates: bool = False, spec=None,
            base_dir: str | os.PathLike | None = None) -> dict[str, Any]:
        """Adjoin late rows with ``strategy`` and save the state; returns the batch report.

        A state made by a release specification adjoins each late row to a group of its class
        (the groups whose generalized categorical values cover its own and whose missing pattern
        is its own), nearest by ``strategy`` as for numeric rows; a row whose class has no group
        waits until k rows of its class wait, which then form groups (a release suppresses the
        rows still waiting, within the spec's max_suppression). ``spec``, when given, must be
        the state's own.

        ``k``, when given, must equal the state's k (a guard against mixing up files).
        Nothing is saved if anything fails. The whole read-adjoin-write holds the state file's
        writer lock and starts from the file as it is then, so increments that other processes
        added since this object was opened are kept; another writer holding the lock longer
        than ``wait`` seconds makes this raise :class:`~incrowd.StateLockedError`.

        Without identifiers, a row whose values (quasi-identifiers and other columns) equal a
        row already in the state is taken for the same record added again, and the increment is
        refused; ``allow_duplicates=True`` says such rows are different people and adjoins them.
        Rows repeated within the increment itself are accepted.

        The release is written with the state's metadata, so an increment read from a
        statistical file whose value labels contradict the state's (a code labelled otherwise),
        whose missing-value definitions or measures differ, or that holds a column as another
        type than the state's (codes as text) raises :class:`~incrowd.exceptions.DataError`
        naming the column; value labels of codes the state has not met join the state's.
        """
        if not isinstance(strategy, str) or strategy not in STRATEGIES:
            raise ParameterError(f"unknown strategy {strategy!r}; known strategies: {', '.join(STRATEGIES)}")
        if not isinstance(inertial, (bool, np.bool_)):
            raise ParameterError(f"inertial must be True or False; got {inertial!r}")
        if not isinstance(allow_duplicates, (bool, np.bool_)):
            raise ParameterError(f"allow_duplicates must be True or False; got {allow_duplicates!r}")
        wait = check_wait(wait)
        if self._mixed:
            with state_lock(self.path, wait):
                self._refresh()
                return self._add_mixed(data, strategy, bool(inertial), k, spec, base_dir, bool(allow_duplicates))
        if spec is not None:
            raise ParameterError(f"state file {str(self.path)!r} was made without a release specification "
                                 "(numeric quasi-identifiers only); add to it without one")
        self._warm(data, strategy)
        with state_lock(self.path, wait):
            self._refresh()
            return self._add_locked(data, strategy, bool(inertial), k, bool(allow_duplicates))

    def _add_mixed(self, data, strategy: str, inertial: bool, k: int | None, spec, base_dir,
                   allow_duplicates: bool = False) -> dict[str, Any]:
        st: Any = self._state
        if k is not None and k != st.k:
            raise ParameterError(
                f"k={k!r} differs from the state's k={st.k} (state file {str(self.path)!r}); "
                "an increment is adjoined with the k of its base"
            )
        _mixed.check_spec(st, spec, self.path, base_dir)
        frame, statfile = _agreement.reconcile(st.statfile, st.rows, self._increment_frame(data))
        st = replace(st, statfile=statfile)
        ids = st.identifiers
        keys = frame[ids].reset_index(drop=True)
        _check_unique_keys(keys, "increment")
        if ids:
            seen = pd.MultiIndex.from_frame(st.rows[ids]) if len(ids) > 1 else pd.Index(st.rows[ids[0]])
            new = pd.MultiIndex.from_frame(keys) if len(ids) > 1 else pd.Index(keys.iloc[:, 0])
            again = new.isin(seen)
            if again.any():
                pos = int(np.flatnonzero(again)[0])
                value = new[pos].item() if hasattr(new[pos], "item") else new[pos]
                raise DataError(
                    f"identifier value {value!r} (increment data row {pos + 1}) is already in "
                    f"the state; {int(again.sum())} row(s) of this increment were adjoined before"
                )
        elif not allow_duplicates:
            self._refuse_mixed_duplicates(frame)
        new_state, report = _mixed.add(st, frame, strategy, inertial)
        self._state = _mixed.save(new_state, self.path)  # type: ignore[assignment]
        return dict(report)

    def _refuse_mixed_duplicates(self, frame: pd.DataFrame) -> None:
        """A mixed state keeps its rows whole, so a row already in it (the same file added twice)
        is found by hashing every column of both with one fresh key, as a numeric state's
        stored fingerprints find it."""
        st: Any = self._state
        columns = [c for c in st.rows.columns if c in frame.columns]
        key = _fingerprint.new_key()
        empty = np.empty((0, 0))
        seen = _fingerprint.fingerprints(empty.reshape(st.rows.shape[0], 0), st.rows[columns], key)
        prints = _fingerprint.fingerprints(empty.reshape(frame.shape[0], 0), frame[columns].reset_index(drop=True), key)
        self._refuse_repeated(np.isin(prints, seen))

    def _warm(self, data, strategy: str) -> None:
        """Compile the kernels this add needs before taking the writer lock (a first compile
        takes longer than a writer waits by default). A malformed increment is left for the
        locked pass to report, in its usual words."""
        st = self._state
        try:
            frame = self._increment_frame(data)
            Z = Standardizer(st.mean, st.scale).transform(numeric_matrix(frame, st.quasi_identifiers))
        except IncrowdError:
            return
        if Z.shape[0]:
            with compile_clock():  # a clock also lets the CLI's compile notice see this compile
                warm_add(st.points, Z, strategy, st.k)

    def _duplicates(self, X: np.ndarray, frame: pd.DataFrame, allow: bool) -> tuple[np.ndarray | None, int]:
        """The increment's fingerprints and how many of its rows are already in the state."""
        st = self._state
        if st.identifiers:
            return None, 0
        if st.fingerprints is None:
            warnings.warn(
                f"state file {str(self.path)!r} keeps no row fingerprints (written by an older "
                "incrowd), so rows already in it cannot be recognised", DataWarning, stacklevel=3)
            return None, 0
        prints = _fingerprint.fingerprints(X, frame[st.passthrough_columns], st.fingerprint_key)
        again = np.isin(prints, st.fingerprints)
        if not allow:
            self._refuse_repeated(again)
        return prints, int(again.sum())

    def _refuse_repeated(self, again: np.ndarray) -> None:
        """One line for the increment rows already in the state (``again`` marks them)."""
        count = int(again.sum())
        if count:
            first = int(np.flatnonzero(again)[0])
            raise DataError(
                f"{count} row(s) of the increment are already in state file {str(self.path)!r} "
                f"(first: increment data row {first + 1}); the same record adjoined twice makes "
                "groups of copies that hide no one. If these rows are different people with equal "
                "values, pass --allow-duplicates (API allow_duplicates=True)"
            )

    def _check_add(self, strategy: str, k: int | None) -> None:
        """Refuse an increment the state cannot adjoin: another k, or a splitting strategy on a
        state kept without the rows' values."""
        st = self._state
        if k is not None and k != st.k:
            raise ParameterError(
                f"k={k!r} differs from the state's k={st.k} (state file {str(self.path)!r}); "
                "an increment is adjoined with the k of its base"
            )
        if strategy in _SPLITTING and not st.keep_points:
            raise ParameterError(
                f"strategy {strategy!r} splits cells and needs the rows' values, but the state "
                f"file {str(self.path)!r} was built without them (keep_points=False); use 'nn' "
                "or '2mdav'"
            )

    def _add_locked(self, data, strategy: str, inertial: bool, k: int | None,
                    allow_duplicates: bool) -> dict[str, Any]:
        st = self._state
        self._check_add(strategy, k)
        frame, statfile = _agreement.reconcile(st.layout.get("statfile"), st.passthrough,
                                               self._increment_frame(data))
        layout = _layout.with_statfile(st.layout, statfile, frame[st.passthrough_columns])
        X = numeric_matrix(frame, st.quasi_identifiers)
        Z = Standardizer(st.mean, st.scale).transform(X)  # overflow-safe at the float64 limit
        keys = frame[st.identifiers].reset_index(drop=True)
        _check_unique_keys(keys, "increment")
        _check_not_adjoined(st.keys, keys)
        prints, n_duplicates = self._duplicates(X, frame, allow_duplicates)

        n_old, n_new, g0, m = st.n_rows, Z.shape[0], st.n_groups, Z.shape[1]
        cap = g0 + (n_old + n_new) // st.k + 1
        sizes = np.zeros(cap, np.int64)
        sums = np.zeros((cap, m))
        sumsq = np.zeros((cap, m))
        sizes[:g0], sums[:g0], sumsq[:g0] = st.sizes, st.sums, st.sumsq
        labels = np.empty(n_old + n_new, np.int64)
        labels[:n_old] = st.labels
        note = None
        splits = 0
        with compile_clock() as clock:
            start = time.perf_counter()
            if strategy == "2mdav" and n_new >= st.k:
                new_labels = mdav_labels(Z, st.k) + g0
                labels[n_old:] = new_labels
                n_groups = int(new_labels.max()) + 1
                s, su, sq = _group_stats(Z, new_labels - g0, n_groups - g0)
                sizes[g0:n_groups], sums[g0:n_groups], sumsq[g0:n_groups] = s, su, sq
            else:
                if strategy == "2mdav":
                    note = (f"the increment has {n_new} row(s), fewer than k={st.k}: they were "
                            "adjoined to their nearest groups instead of forming a group of their own")
                P_old = st.points if st.points is not None else np.empty((0, m))
                mode = NO_SPLIT if strategy == "2mdav" else STRATEGIES[strategy]
                n_groups, splits = adjoin(P_old, Z, labels, sums, sumsq, sizes, g0, st.k,
                                          bool(inertial), mode)
                n_groups, splits = int(n_groups), int(splits)
            elapsed = time.perf_counter() - start
        # the algorithm's time; compiling (normally done before the lock) is reported apart
        seconds = max(elapsed - clock.seconds, 0.0)
        sizes, sums, sumsq = sizes[:n_groups].copy(), sums[:n_groups].copy(), sumsq[:n_groups].copy()
        if sizes.min() < st.k or labels.min() < 0:
            raise IncrowdError("internal error: an increment left a row unassigned or a group below k")
        batch_no = int(st.batch.max()) + 1
        report = {
            "batch": batch_no, "kind": "increment", "rows": int(n_new), "strategy": strategy,
            "inertial": bool(inertial), "seconds": float(seconds),
            "compile_seconds": float(clock.seconds),
            "groups_before": int(g0), "groups_after": int(n_groups), "splits": splits,
            "note": note,
        }
        if n_duplicates:
            report["duplicates_allowed"] = n_duplicates
        new_state = State(
            k=st.k, method=st.method, params=st.params, random_state=st.random_state,
            quasi_identifiers=st.quasi_identifiers, identifiers=st.identifiers,
            passthrough_columns=st.passthrough_columns, column_order=st.column_order,
            mean=st.mean, scale=st.scale, sizes=sizes, sums=sums, sumsq=sumsq, labels=labels,
            batch=np.concatenate([st.batch, np.full(n_new, batch_no, np.int64)]),
            keys=pd.concat([st.keys, keys], ignore_index=True),
            passthrough=pd.concat([st.passthrough, frame[st.passthrough_columns]], ignore_index=True),
            points=None if st.points is None else np.concatenate([st.points, Z]),
            base_sse=st.base_sse, batches=st.batches + [report],
            created=st.created, incrowd_version=__version__, layout=layout,
            fingerprints=None if prints is None else np.concatenate([st.fingerprints, prints]),
            fingerprint_key=st.fingerprint_key,
        )
        # Continue from what the file holds (not the in-memory copy), so this process and one
        # that reopens the file publish byte-identical releases (dtypes come back from DuckDB).
        self._state = _state.save_and_read(new_state, self.path)
        return dict(report)

    # ------------------------------------------------------------------ publishing

    def release(self) -> tuple[pd.DataFrame, KAnonymityReport]:
        """The combined release (identifiers dropped, QIs replaced by group centroids in the
        original units, other columns unchanged; base rows first, then each increment in
        order) and its k-anonymity check. Raises VerificationError if the check fails."""
        if self._mixed:
            result, _ = _mixed.release(self._state)
            qis = [c for c in self._state.quasi_identifiers if c in result.table.columns]
            return result.table, verify_k_anonymity(result.table, qis, self.k)
        st = self._state
        published = Standardizer(st.mean, st.scale).inverse_transform(st.centroids())[st.labels]
        out = pd.DataFrame(index=pd.RangeIndex(st.n_rows))
        for name in st.column_order:
            if name in st.identifiers:
                continue
            if name in st.quasi_identifiers:
                out[name] = published[:, st.quasi_identifiers.index(name)]
            else:
                out[name] = st.passthrough[name].array  # .to_numpy() would turn Int64 into float
        _layout.apply(out, st.layout)
        mark_changed(out, st.quasi_identifiers)  # their value labels and missing codes no longer hold
        check = verify_k_anonymity(out, st.quasi_identifiers, st.k)
        if not check.ok:
            raise VerificationError(
                f"the combined release is not {st.k}-anonymous (smallest class "
                f"{check.min_class_size}); nothing was written"
            )
        return out, check

    def distortion(self) -> dict[str, float]:
        """D0, D+, DT (the incremental thesis, section 3.2.4) in the release's own standardization.

        SSE and SST are taken on the quasi-identifiers standardized over all rows (base and
        increments), as a one-shot run would; with SST = m*n this gives DT = SSE/SST (the
        release's information loss), D0 = SSE of the base partition over its rows / (m*n0),
        and D+ = (SSE_T - SSE_0) / (m*n+), so that DT = (1-nu) D0 + nu D+ exactly.
        """
        if self._mixed:
            raise ParameterError("D0, D+ and DT are measured for a state of numeric quasi-identifiers only; "
                                 f"state file {str(self.path)!r} was made by a release specification")
        st = self._state
        n = st.n_rows
        n0 = int(np.count_nonzero(st.batch == 0))
        total = st.sums.sum(axis=0)
        total_sq = st.sumsq.sum(axis=0)
        var = np.maximum(total_sq / n - (total / n) ** 2, 0.0)
        live = var > 1e-12 * np.maximum(total_sq / n, 1.0)  # constant columns add nothing
        sse_cols = st.sumsq - st.sums**2 / st.sizes[:, None]
        sse_t = float((np.maximum(sse_cols.sum(axis=0), 0.0)[live] / var[live]).sum())
        sse_0 = float((st.base_sse[live] / var[live]).sum())
        m_eff = int(live.sum())
        n_plus = n - n0
        if m_eff == 0:
            return {"D0": 0.0, "D_plus": 0.0, "DT": 0.0, "nu": n_plus / n}
        return {
            "D0": sse_0 / (m_eff * n0),
            "D_plus": (sse_t - sse_0) / (m_eff * n_plus) if n_plus else 0.0,
            "DT": sse_t / (m_eff * n),
            "nu": n_plus / n,
        }

    def publish(self, output: str | os.PathLike | None = None, *, compare: bool = False,
                sep: str | None = None, then=None, spec=None,
                base_dir: str | os.PathLike | None = None) -> IncrementalRelease:
        """Verify the combined release k-anonymous and write it atomically to ``output``, verified
        again on the written file (read back as its format's reader gives it) before it replaces
        ``output``; ``then(report)`` runs after that verification and before the rename.

        ``compare=True`` also microaggregates all rows at once with the base method (needs the
        state's points) and reports D, delta = DT/D - 1 and the relative times tau0, tau+.

        A state made by a release specification publishes as ``publish`` does: k-anonymous over
        all quasi-identifiers together (rows still waiting for their class suppressed, within
        the spec's max_suppression), generalized columns of a statistical file as labelled codes,
        the file's labels, formats, measures and user-missing codes kept. ``spec``, when given,
        must be the state's own.
        """
        if self._mixed:
            return self._publish_mixed(output, compare, sep, then, spec, base_dir)
        if spec is not None:
            raise ParameterError(f"state file {str(self.path)!r} was made without a release specification "
                                 "(numeric quasi-identifiers only); publish it without one")
        st = self._state
        if compare and not st.keep_points:
            raise ParameterError(
                f"compare needs the rows' values, but the state file {str(self.path)!r} was "
                "built without them (keep_points=False)"
            )
        if output is not None and not is_stdout(output):
            check_output_path(output, inputs=(self.path,))  # fail before the work
        release, check = self.release()
        qis = tuple(st.quasi_identifiers)
        promise = Promise(qis, ReleaseCheck((KAnonymity(st.k),)), finite=qis)
        verification = in_memory(promise, k_anonymity=check.to_dict())
        dist = self.distortion()
        sizes = group_size_stats(st.labels)
        n0 = int(np.count_nonzero(st.batch == 0))
        t0 = float(st.batches[0]["seconds"])
        t_plus = float(sum(b["seconds"] for b in st.batches[1:]))
        report: dict[str, Any] = {
            "state": str(self.path),
            "k": st.k,
            "method": st.method,
            "params": st.params,
            "quasi_identifiers": st.quasi_identifiers,
            "identifiers_dropped": st.identifiers,
            "rows": st.n_rows,
            "rows_base": n0,
            "rows_increment": st.n_rows - n0,
            "nu": dist["nu"],
            "groups": st.n_groups,
            "min_group_size": sizes.min,
            "max_group_size": sizes.max,
            "batches": st.batches,
            "D0": dist["D0"],
            "D_plus": dist["D_plus"],
            "DT": dist["DT"],
            "information_loss": dist["DT"],
            "information_loss_percent": 100.0 * dist["DT"],
            "seconds_base": t0,
            "seconds_increment": t_plus,
            "k_anonymous": bool(check.ok),
            "min_class_size": check.min_class_size,
            "verification": verification,
            **st.distinct_summary(),
        }
        report.update(self._against_one_shot(dist["DT"], t0, t_plus) if compare else {})
        if output is not None:
            from ..io import write_release

            def verified(record: Verification) -> None:
                nonlocal verification
                verification = record  # the release is the file: its numbers, from here on
                report.update(min_class_size=record["k_anonymity"]["min_class_size"],
                              verified_on=record["verified_on"], read_back_as=record["read_back_as"],
                              verification=record, output=str(output))
                if then is not None:
                    then(report)

            write_release(release, output, promise, sep=sep, inputs=(self.path,), then=verified)
        return IncrementalRelease(table=release, verification=verification, _summary=report)

    def _against_one_shot(self, distortion: float, t0: float, t_plus: float) -> dict[str, Any]:
        """All rows microaggregated at once with the base method: its loss D, delta = DT/D - 1
        and the relative times tau0, tau+."""
        st = self._state
        original = pd.DataFrame(Standardizer(st.mean, st.scale).inverse_transform(st.points),
                                columns=st.quasi_identifiers)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the base run has reported constant columns
            one_shot = microaggregate(original, st.k, st.method, random_state=st.random_state, **st.params)
        d = float(one_shot.information_loss)
        one_shot_seconds = float(one_shot.seconds)
        return {
            "D": d,
            "delta": distortion / d - 1.0 if d > 0 else None,
            "seconds_one_shot": one_shot_seconds,
            "tau0": t0 / one_shot_seconds if one_shot_seconds > 0 else None,
            "tau_plus": t_plus / one_shot_seconds if one_shot_seconds > 0 else None,
        }

    def _publish_mixed(self, output, compare: bool, sep, then, spec, base_dir) -> IncrementalRelease:
        st = self._state
        if compare:
            raise ParameterError("compare is for a state of numeric quasi-identifiers only; state file "
                                 f"{str(self.path)!r} was made by a release specification")
        _mixed.check_spec(st, spec, self.path, base_dir)
        if output is not None and not is_stdout(output):
            check_output_path(output, inputs=(self.path,))  # fail before the work
        result, _ = _mixed.release(st)
        n0 = int(np.count_nonzero(st.batch == 0))
        summary = {
            "state": str(self.path), "kind": _mixed.KIND, **result.summary(),
            "quasi_identifiers": st.quasi_identifiers, "rows": st.n_rows, "rows_base": n0,
            "rows_increment": st.n_rows - n0, "nu": (st.n_rows - n0) / st.n_rows, "groups": st.n_groups,
            "waiting": int(np.count_nonzero(st.labels < 0)), "batches": st.batches,
            "k_anonymous": True,
        }
        if output is not None:
            def verified() -> None:
                summary.update(verification=result.verification, min_class_size=result.summary()["min_class_size"],
                               classes=result.summary()["classes"], output=str(output),
                               verified_on=result.verification["verified_on"],
                               read_back_as=result.verification.get("read_back_as"))
                if then is not None:
                    then(summary)

            result.write(output, sep=sep, inputs=(self.path,), then=verified)
        return IncrementalRelease(table=result.table, verification=result.verification, _summary=summary)


__all__ = ["IncrementalMicroaggregation", "IncrementalRelease", "STRATEGIES"]
