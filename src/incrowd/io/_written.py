"""A release is verified on the file as its format stores it, before the file is put in place.

The table in memory is not what a user gets: a CSV holds text (``1`` and ``1.0`` are two
values there), an SPSS or Stata file holds its user-missing codes (8 and 9, ``.a``) where
memory holds NaN, SPSS and SAS strip trailing blanks. So every release is written to its
temporary file (see :func:`incrowd.io._atomic.atomic_output`), read back through the reader a user
would use for that format, and k (over all quasi-identifiers together, missing as a value of
its own), l and t are verified on THAT with the verifiers of :mod:`incrowd.metrics`. A failure
raises :class:`VerificationError` naming the class that failed; the temporary is removed, so
nothing is written and an earlier file at the path stays. Standard output cannot be read back:
the bytes about to be written are parsed back instead.

Readers: CSV as text (incrowd's own reader, every column text, no NA guessing, decompressed
first), Parquet through Arrow (``pyarrow.parquet.read_table``), SPSS/Stata/SAS transport through
pyreadstat with user-missing codes kept as the codes the file holds.
"""

from __future__ import annotations

import io
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import IncrowdError, VerificationError

#: how each written format is read back (what the verification record says)
READERS = {
    "csv": "CSV as text",
    "parquet": "Parquet through Arrow",
    "spss": "SPSS through pyreadstat, user-missing codes as stored",
    "stata": "Stata through pyreadstat, user-missing codes as stored",
    "xport": "SAS transport through pyreadstat",
}

@dataclass(frozen=True)
class Promise:
    """What a release promises, to be verified on the written file.

    ``k`` (None where only l was asked) over all ``quasi_identifiers`` together; ``l`` and ``t``
    in each ``sensitive`` column; ``ordered``: per sensitive column, the order the in-memory
    verifier used (a list of in-memory values, True for their sorted order, False for the equal
    distance); ``reference``: the input's sensitive columns as read (t's reference distribution,
    written and read back in the release's format so both sides are compared as the file holds
    them); ``finite``: columns whose values must be finite numbers or missing in the file (group
    means of an input that had no infinity)."""

    quasi_identifiers: tuple[str, ...]
    k: int | None
    l: int | None = None
    t: float | None = None
    sensitive: tuple[str, ...] = ()
    ordered: Mapping[str, Any] = field(default_factory=dict)
    reference: pd.DataFrame | None = None
    finite: tuple[str, ...] = ()
    #: how a missing quasi-identifier value matches when k is counted: "itself" (a value of its
    #: own) or "any" (sdcMicro's wildcard; a release made by local suppression that way)
    missing_matches: str = "itself"
    #: the release's risk targets (``max_individual_risk``, ...: the bound per name), and the
    #: check that measures them on a table as read back, ``(table, quasi_identifiers, what)``
    #: to a record (given by the publishing layer, which owns the risk measures)
    risk_targets: Mapping[str, float] = field(default_factory=dict)
    risk_check: Callable[..., dict[str, Any]] | None = field(default=None, compare=False, repr=False)
    #: the privacy models beyond k, l and t (their one-line descriptions), and their check of a
    #: table as read back, ``(table, quasi_identifiers, what, reference)`` to a record (given by
    #: the publishing layer: the models live above io)
    models: tuple[str, ...] = ()
    models_check: Callable[..., dict[str, Any]] | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The promise as a verification record states it (what was asked, not the data).

        Returns
        -------
        dict
            ``quasi_identifiers`` (a list), ``k``, ``l``, ``t`` (None where not asked) and
            ``sensitive`` (a list).
        """
        out: dict[str, Any] = {"quasi_identifiers": list(self.quasi_identifiers), "k": self.k, "l": self.l, "t": self.t,
               "sensitive": list(self.sensitive)}
        if self.missing_matches != "itself":
            out["missing_matches"] = self.missing_matches  # a blank matched any value when k was counted
        if self.risk_targets:
            out["risk_targets"] = dict(self.risk_targets)
        if self.models:
            out["privacy_models"] = list(self.models)
        return out


class Verification(dict):
    """What was verified about a release, and where: the ``verification`` of every result.

    A dict (JSON-ready, as the CLI's ``--json`` and the report print it) of:

    - ``promise``: what the release promises (``quasi_identifiers``, ``k``, ``l``, ``t``,
      ``sensitive``; None where not asked);
    - ``k_anonymity``: the k verifier's record (:meth:`incrowd.metrics.KAnonymityReport.to_dict`);
    - ``risk_targets`` where the release has risk targets: the weight column and, per target,
      its bound and the value reached (``target``, ``achieved``);
    - ``l_diversity`` and ``t_closeness`` where asked: the l and t verifiers' records, per
      sensitive column for :func:`incrowd.publish` (one record for
      :func:`incrowd.generalization.generalize`, which has one sensitive column);
    - ``verified_on``: ``"table in memory"``, or ``"written file"`` once the release was
      written and verified there (then ``read_back_as`` names the reader and ``seconds`` the
      time reading back and verifying took).

    ``ok`` (also its truth value) says whether every verified measure held: a result is only
    returned when it does.

    Parameters
    ----------
    *args, **kwargs : Any
        As for :class:`dict`.
    """

    @property
    def ok(self) -> bool:
        """True when something was verified and every verified measure (k, and l and t per
        sensitive column) held."""
        records = list(self._records())
        return bool(records) and all(bool(record.get("ok")) for record in records)

    @property
    def min_class_size(self) -> int | None:
        """The size of the release's smallest equivalence class (None when k was not verified)."""
        got = self.get("k_anonymity")
        return None if got is None else int(got["min_class_size"])

    def __bool__(self) -> bool:
        return self.ok

    def _records(self):
        if "k_anonymity" in self:
            yield self["k_anonymity"]
        if "risk_targets" in self:
            yield self["risk_targets"]
        for name in ("l_diversity", "t_closeness"):
            got = self.get(name) or {}
            # one record (generalize) or one per sensitive column (publish)
            yield from ([got] if "ok" in got else got.values())


def in_memory(promise: Promise, **records: Any) -> Verification:
    """The verification record of a table verified in memory: ``promise`` and the verifiers'
    ``records`` (``k_anonymity=...``, ...)."""
    return Verification(promise=promise.to_dict(), **records, verified_on="table in memory")


def _format_of(path: str | os.PathLike) -> str:
    from ._atomic import is_stdout
    from ._tables import table_format

    return "csv" if is_stdout(path) else table_format(path)


def _csv_text(content: bytes, sep: str, shown: str) -> pd.DataFrame:
    from . import _csv_text

    head = content[:64 * 1024].decode("utf-8", errors="replace").lstrip("\ufeff")
    names = _csv_text.header_names(head, sep, shown)
    return _csv_text.read(io.BytesIO(content), sep=sep, parse=None, path=shown, names=names)


def read_back(source: str | bytes, fmt: str, *, sep: str = ",", shown: str = "") -> pd.DataFrame:
    """The written file (a path, or the bytes of a CSV about to go to standard output) as a
    user's reader for ``fmt`` gives it."""
    from . import _compression, _statfiles
    from ._arrow_types import read_parquet

    if isinstance(source, bytes):
        return _csv_text(source, sep, shown)
    if fmt == "parquet":
        return read_parquet(Path(source), what="written Parquet file")
    if fmt in _statfiles.WRITE_FORMATS:
        return _statfiles.read_raw(source, fmt)
    kind = _compression.detect(Path(source))
    content = _compression.read_bytes(Path(source), kind) if kind is not None else Path(source).read_bytes()
    return _csv_text(content, sep, shown)


def _reference_as_written(reference: pd.DataFrame, fmt: str, sep: str, shown: str) -> pd.DataFrame:
    """The input's sensitive columns written as the release was and read back the same way."""
    from . import _arrow_types, _csv_text, _statfiles

    reference = reference.reset_index(drop=True)
    if fmt == "csv":
        return read_back(_csv_text.render(reference, sep=sep), "csv", sep=sep, shown=shown)
    with tempfile.TemporaryDirectory(prefix="incrowd-reference-") as folder:
        path = os.path.join(folder, "reference")
        if fmt == "parquet":
            _arrow_types.write_parquet(reference, path)
        else:
            _statfiles.write(reference, path, fmt, shown)
        return read_back(path, fmt, sep=sep, shown=shown)


def _describe(values: Sequence[Any]) -> str:
    return "(" + ", ".join("missing" if _is_missing(v) else repr(_plain(v)) for v in values) + ")"


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _is_missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _key(values) -> tuple:
    return values if isinstance(values, tuple) else (values,)


def _classes(frame: pd.DataFrame, qis: list[str]):
    return frame.groupby(qis, dropna=False, sort=False)


def _file_order(mem: pd.Series, file: pd.Series, ordered) -> list | bool:
    """The in-memory order of a sensitive column, carried to the values the file holds.

    A value the file writes differently (a number as text) takes its in-memory place; values
    the file holds where memory had a missing one (user-missing codes) come last, in order."""
    if ordered is False or ordered is None:
        return False
    if not isinstance(ordered, (bool, np.bool_)):
        # a list is already in the values as incrowd.metrics.sensitive_keys counts them (numbers
        # as numbers, no trailing blanks, user-missing codes as the file holds them), which is
        # how the verifiers read the file's cells too: mapping text back would sort "10" < "2"
        return list(ordered)
    present = ~mem.isna().to_numpy()
    try:
        order = sorted(pd.unique(mem[present]))
    except TypeError:
        return True  # the in-memory verifier refused these already
    pairs = pd.DataFrame({"m": mem.astype(object).to_numpy(), "f": file.astype(object).to_numpy()}).drop_duplicates()
    file_present = pairs[~pairs["f"].isna()]
    out: list = []
    seen: set = set()

    def add(values) -> None:
        try:
            values = sorted(values)
        except TypeError:
            values = list(values)
        for v in values:
            if v not in seen:
                seen.add(v)
                out.append(v)

    for value in order:
        add(file_present.loc[file_present["m"].map(lambda m, value=value: not _is_missing(m) and m == value), "f"])
    add(file_present["f"])
    return out


def verify_frame(table: pd.DataFrame, promise: Promise, *, what: str,
                 reference: pd.DataFrame | None = None) -> Verification:
    """Verify ``promise`` on ``table`` (a release as read back); ``what`` names it in errors.

    ``reference``: the input's sensitive columns as the file writes them (for t)."""
    from ..metrics import verify_k_anonymity, verify_l_diversity, verify_t_closeness

    qis = list(promise.quasi_identifiers)
    absent = [c for c in [*qis, *promise.sensitive, *promise.finite] if c not in table.columns]
    if absent:
        raise VerificationError(f"{what} has no column {absent[0]!r}; nothing was written")
    out = Verification(promise=promise.to_dict())
    for name in promise.finite:
        text = table[name]
        numbers = pd.to_numeric(text.where(~text.isna()), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.flatnonzero(np.isinf(numbers))
        if bad.size:
            raise VerificationError(
                f"{what} holds {text.iloc[bad[0]]!r} in column {name!r}, data row {bad[0] + 1} ({bad.size} "
                "infinite value(s) in all), though the input has none; nothing was written")
    if promise.k is not None:
        got = verify_k_anonymity(table, qis, promise.k, missing_matches=promise.missing_matches)
        out["k_anonymity"] = got.to_dict()
        if not got and promise.missing_matches != "itself":
            from ..metrics import match_counts

            counts = match_counts(table, qis, missing_matches=promise.missing_matches)
            row = int(np.argmin(counts))
            raise VerificationError(
                f"{what} is not {promise.k}-anonymous over {qis} with a missing value matching any value: "
                f"data row {row + 1} {_describe(tuple(table[qis].iloc[row]))} matches {int(counts[row])} row(s) "
                f"({got.n_rows_in_small_classes} rows match fewer than k); nothing was written")
        if not got:
            sizes = _classes(table, qis).size()
            values = _key(sizes.idxmin())
            raise VerificationError(
                f"{what} is not {promise.k}-anonymous over {qis}: the class {_describe(values)} holds "
                f"{int(sizes.min())} row(s) ({got.n_rows_in_small_classes} rows in classes below k); "
                "nothing was written")
    for name in promise.sensitive:
        if promise.l is not None:
            diverse = verify_l_diversity(table, qis, name, promise.l)
            out.setdefault("l_diversity", {})[name] = diverse.to_dict()
            if not diverse:
                from ..metrics import class_ids, sensitive_keys

                # the poorest class as the verifier counts values (a missing one never counts)
                classes = class_ids(table[qis]) if qis else np.zeros(table.shape[0], dtype=np.int64)
                keys, _ = sensitive_keys(table[name])
                distinct = pd.Series(keys, dtype=object).groupby(classes).nunique(dropna=True)
                rows = classes == distinct.idxmin()
                values = tuple(table.loc[rows, qis].iloc[0]) if qis else ()
                shown = _describe(pd.unique(table.loc[rows, name])[:5])
                raise VerificationError(
                    f"{what} is not {promise.l}-diverse in {name!r}: the class {_describe(values)} holds "
                    f"{int(distinct.min())} distinct value(s) {shown}; nothing was written")
        if promise.t is not None:
            ref = (reference if reference is not None else table)[name]
            order = _file_order(promise.reference[name] if promise.reference is not None else table[name],
                                ref, promise.ordered.get(name, False))
            try:
                close = verify_t_closeness(table, qis, name, promise.t, ordered=order, reference=ref)
            except IncrowdError as exc:
                raise VerificationError(f"{what}: column {name!r} cannot be compared with the input's "
                                        f"distribution ({exc}); nothing was written") from None
            out.setdefault("t_closeness", {})[name] = close.to_dict()
            if not close:
                far = _farthest(table, qis, name, promise.t, order, ref)
                raise VerificationError(
                    f"{what} is not {promise.t}-close in {name!r}: the class {_describe(far)} lies at "
                    f"distance {close.max_distance:.6g} from the input's distribution; nothing was written")
    if promise.risk_check is not None:
        out["risk_targets"] = promise.risk_check(table, qis, what)
    if promise.models_check is not None:
        out["privacy_models"] = promise.models_check(table, qis, what, reference)
    return out


def _farthest(table: pd.DataFrame, qis: list[str], name: str, t: float, order, ref) -> tuple:
    """The quasi-identifier values of the class farthest from the reference (only on failure)."""
    from ..metrics import verify_t_closeness

    best, where = -1.0, ()
    for values, rows in _classes(table, qis):
        got = verify_t_closeness(rows, [], name, t, ordered=order, reference=ref)
        if got.max_distance > best:
            best, where = got.max_distance, _key(values)
    return where


def verify_written(source: str | bytes, frame: pd.DataFrame, promise: Promise, *, fmt: str, sep: str,
                   shown: str) -> Verification:
    """Read ``source`` back as ``fmt`` and verify ``promise`` on it; ``frame`` is what was written."""
    what = "standard output" if isinstance(source, bytes) else f"the written file {shown!r}"
    try:
        table = read_back(source, fmt, sep=sep, shown=shown)
    except MemoryError:
        raise
    except Exception as exc:  # pyreadstat and pyarrow raise their own types: the user needs one line
        raise VerificationError(f"{what} cannot be read back as {READERS[fmt]} ({exc}); nothing was written") from None
    written = [str(c) for c in frame.columns]
    if [str(c) for c in table.columns] != written or table.shape[0] != frame.shape[0]:
        raise VerificationError(
            f"{what} reads back as {table.shape[0]} rows of columns {[str(c) for c in table.columns][:10]}, "
            f"not the {frame.shape[0]} rows of {written[:10]} written; nothing was written")
    reference = None
    if (promise.t is not None or promise.models_check is not None) and promise.reference is not None \
            and promise.sensitive:
        reference = _reference_as_written(promise.reference[list(promise.sensitive)], fmt, sep, shown)
    record = verify_frame(table, promise, what=what, reference=reference)
    record["verified_on"] = "written file"
    record["read_back_as"] = READERS[fmt]
    return record


def write_release(frame: pd.DataFrame, path: str | os.PathLike, promise: Promise, *, sep: str | None = None,
                  inputs: Sequence[str | os.PathLike] = (),
                  then: Callable[[dict[str, Any]], None] | None = None) -> Verification:
    """Write ``frame`` to ``path`` (as :func:`incrowd.io._tables.write_table`), verified on the file.

    The file is read back from its temporary and ``promise`` verified there before it replaces
    ``path``; ``then(record)`` (e.g. writing the release's report) runs after the verification and
    before the rename, so a failure of either leaves nothing new. Returns the verification
    record (``verified_on``: ``"written file"``; ``seconds``: the read-back and verification)."""
    from ._tables import write_table

    fmt = _format_of(path)
    delimiter = sep if sep is not None else frame.attrs.get("csv_sep", ",")
    record = Verification()

    def check(source: str | bytes) -> None:
        t0 = time.perf_counter()
        record.update(verify_written(source, frame, promise, fmt=fmt, sep=delimiter, shown=os.fspath(path)))
        # what reading back and verifying took, said apart from the release's own seconds
        record["seconds"] = time.perf_counter() - t0
        if then is not None:
            then(record)

    write_table(frame, path, sep=delimiter, inputs=inputs, verify=check)
    return record


def generalization_promise(result) -> Promise:
    """What a :class:`~incrowd.generalization.GeneralizationResult` promises: k and naive l."""
    return Promise(quasi_identifiers=tuple(result.levels), k=result.k, l=result.l,
                   sensitive=(result.sensitive,) if result.l is not None and result.sensitive else ())


def verified_as_written(result, record: dict[str, Any]) -> None:
    """A :class:`~incrowd.generalization.GeneralizationResult` updated in place with the written
    file's numbers (its verification record's keys and shapes kept: one sensitive column)."""
    if not record:
        return
    verification = result.verification
    if "k_anonymity" in record:
        verification["k_anonymity"] = record["k_anonymity"]
        result.classes = int(record["k_anonymity"]["n_classes"])
        result.min_class_size = int(record["k_anonymity"]["min_class_size"])
    for got in (record.get("l_diversity") or {}).values():
        verification["l_diversity"] = got
    verification["verified_on"] = record["verified_on"]
    verification["read_back_as"] = record["read_back_as"]


__all__ = ["Promise", "READERS", "Verification", "generalization_promise", "in_memory", "read_back",
           "verified_as_written", "verify_frame", "verify_written", "write_release"]
