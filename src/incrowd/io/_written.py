"""A release is verified on the file as its format stores it, before the file is put in place.

The table in memory is not what a user gets: a CSV holds text (``1`` and ``1.0`` are two
values there), an SPSS or Stata file holds its user-missing codes (8 and 9, ``.a``) where
memory holds NaN, SPSS and SAS strip trailing blanks. So every release is written to its
temporary file (see :func:`incrowd.io._atomic.atomic_output`), read back through the reader a user
would use for that format, and the release's privacy check (:class:`incrowd.privacy.ReleaseCheck`,
given by the caller inside the :class:`Promise`: this package knows no privacy model) runs on
THAT. A failure
raises :class:`VerificationError` naming the class that failed; the temporary is removed, so
nothing is written and an earlier file at the path stays. Standard output cannot be read back:
the bytes about to be written are parsed back instead.

Readers: CSV as text (incrowd's own reader, every column text, no NA guessing, decompressed
first), Parquet through Arrow (``pyarrow.parquet.read_table``), SPSS/Stata/SAS transport through
pyreadstat with user-missing codes kept as the codes the file holds.
"""

from __future__ import annotations

import copy
import io
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import VerificationError

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

    ``quasi_identifiers``: the columns whose equal values make a class; ``check``: the privacy
    check of the release (:class:`incrowd.privacy.ReleaseCheck`, built by the caller from its
    models), which this package runs on the table as read back without knowing the models: it
    raises :class:`~incrowd.exceptions.VerificationError` in one line, or returns its records;
    its ``columns`` must be in the file and its ``reference_columns`` (the input's columns a
    model compares with, or None) are written and read back as the release is, so both sides
    are compared as the file holds them. ``finite``: columns whose values must be finite
    numbers or missing in the file (group means of an input that had no infinity)."""

    quasi_identifiers: tuple[str, ...]
    check: Any = field(default=None, compare=False)
    finite: tuple[str, ...] = ()
    #: the release's risk targets (``max_individual_risk``, ...: the bound per name), and the
    #: check that measures them on a table as read back, ``(table, quasi_identifiers, what)``
    #: to a record (given by the publishing layer, which owns the risk measures)
    risk_targets: Mapping[str, float] = field(default_factory=dict)
    risk_check: Callable[..., dict[str, Any]] | None = field(default=None, compare=False, repr=False)
    #: the household check of a release with a household id, ``(table, quasi_identifiers, what)``
    #: to a record: no blank of a household-level column can be filled in from a housemate
    household_check: Callable[..., dict[str, Any]] | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The promise as a verification record states it (what was asked, not the data).

        Returns
        -------
        dict
            ``quasi_identifiers`` (a list), then what the check promises (the privacy models'
            parameters, ``models``: each in one line) and ``risk_targets`` where given.
        """
        out: dict[str, Any] = {"quasi_identifiers": list(self.quasi_identifiers)}
        if self.check is not None:
            out.update(self.check.to_dict())
        if self.risk_targets:
            out["risk_targets"] = dict(self.risk_targets)
        return out


class Verification(dict):
    """What was verified about a release, and where: the ``verification`` of every result.

    A dict (JSON-ready, as the CLI's ``--json`` and the report print it) of:

    - ``promise``: what the release promises (``quasi_identifiers`` and the privacy models,
      :meth:`incrowd.privacy.ReleaseCheck.to_dict`);
    - one record per privacy model, as :class:`incrowd.privacy.ReleaseCheck` gives them:
      ``k_anonymity`` (:meth:`incrowd.privacy.KAnonymityReport.to_dict`), and per sensitive
      column for :func:`incrowd.publish` the records of the models that read one (one record for
      :func:`incrowd.generalization.generalize`, which has one sensitive column);
    - ``risk_targets`` where the release has risk targets: the weight column and, per target,
      its bound and the value reached (``target``, ``achieved``);
    - ``households`` where the release has a household id: the household-level columns and
      ``recoverable_blanks`` (0: no blank can be filled in from a housemate);
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
        """True when something was verified and every verified measure (each model, per
        sensitive column where it reads one) held."""
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
        for name, got in self.items():
            if name == "promise" or not isinstance(got, dict):
                continue
            # one record, or one per sensitive column
            yield from ([got] if "ok" in got else (v for v in got.values() if isinstance(v, dict)))


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


def _infinite(column: pd.Series) -> np.ndarray:
    """Which cells of a column as read back hold an infinite number. Each distinct cell is
    parsed once (a column of group means holds a few thousand in a million rows), as the
    whole column would parse it: an infinity is one whatever else the column holds."""
    codes, distinct = pd.factorize(column, use_na_sentinel=True)
    values = pd.Series(distinct, dtype=column.dtype)
    numbers = pd.to_numeric(values.where(~values.isna()), errors="coerce").to_numpy(dtype=np.float64,
                                                                                   na_value=np.nan)
    # -1 (a missing cell) looks up the appended False
    return np.append(np.isinf(numbers), False)[codes]


def verify_frame(table: pd.DataFrame, promise: Promise, *, what: str,
                 reference: pd.DataFrame | None = None, population: pd.DataFrame | None = None) -> Verification:
    """Verify ``promise`` on ``table`` (a release as read back); ``what`` names it in errors.

    ``reference``: the input's columns the check compares with, as the file writes them;
    ``population``: the check's population table, as the file writes it."""
    qis = list(promise.quasi_identifiers)
    needed = list(promise.check.columns) if promise.check is not None else []
    absent = [c for c in [*qis, *needed, *promise.finite] if c not in table.columns]
    if absent:
        raise VerificationError(f"{what} has no column {absent[0]!r}; nothing was written")
    out = Verification(promise=promise.to_dict())
    for name in promise.finite:
        text = table[name]
        bad = np.flatnonzero(_infinite(text))
        if bad.size:
            raise VerificationError(
                f"{what} holds {text.iloc[bad[0]]!r} in column {name!r}, data row {bad[0] + 1} ({bad.size} "
                "infinite value(s) in all), though the input has none; nothing was written")
    if promise.check is not None:
        out.update(promise.check(table, qis, what=what, reference=reference,
                                 **({"population": population} if population is not None else {})))
    if promise.risk_check is not None:
        out["risk_targets"] = promise.risk_check(table, qis, what)
    if promise.household_check is not None:
        out["households"] = promise.household_check(table, qis, what)
    return out


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
    columns = promise.check.reference_columns if promise.check is not None else None
    if columns is not None and columns.shape[1]:
        reference = _reference_as_written(columns, fmt, sep, shown)
    population = getattr(promise.check, "population", None)
    if population is not None:
        # spelled as the release's columns: their labels and types written the same way
        population = population.reset_index(drop=True).copy()
        population.attrs = copy.deepcopy(frame.attrs)  # a statistical file's labels and recodes
        population = _reference_as_written(population, fmt, sep, shown)
    record = verify_frame(table, promise, what=what, reference=reference, population=population)
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


__all__ = ["Promise", "READERS", "Verification", "in_memory", "read_back", "verify_frame", "verify_written",
           "write_release"]
