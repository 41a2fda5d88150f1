"""Reading and writing tables, column roles, and standardization of quasi-identifiers.

Roles: *identifiers* are dropped from every output; *quasi-identifiers* are aggregated; every
other column passes through unchanged and in its place. Row order is always preserved.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, name_list
from . import _arrow_types, _compression, _csv_text, _statfiles
from ._atomic import atomic_output, check_input_file, is_stdout, write_csv_stdout
from ._csv_text import NA_VALUES, Parse

PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_DELIMITERS = ",;\t|"


def table_format(path: str | os.PathLike) -> str:
    """'parquet', a statistical format ('spss', 'stata', 'sas7bdat', 'xport') or 'csv', decided by
    the file name (``.csv.gz``, ``.csv.xz`` ... and any other name are CSV).

    Parameters
    ----------
    path : str or os.PathLike
        The file's name (the file need not exist).

    Returns
    -------
    str
        The format's name.
    """
    if _compression.strip_suffix(Path(path).name.lower()).endswith(PARQUET_SUFFIXES):
        return "parquet"
    return _statfiles.format_of(path) or "csv"


def sniff_text(head: str) -> str:
    lines = [ln for ln in head.splitlines() if ln.strip()][:50]
    if not lines:
        return ","
    try:
        return csv.Sniffer().sniff("\n".join(lines), delimiters=CSV_DELIMITERS).delimiter
    except csv.Error:
        # The sniffer gives up on single-column files and on ragged quoting; count instead.
        counts = {d: lines[0].count(d) for d in CSV_DELIMITERS}
        best = max(counts, key=counts.get)
        return best if counts[best] > 0 else ","


def _head_bytes(path: Path, n_bytes: int = 64 * 1024) -> tuple[bytes, bytes | None]:
    """(first bytes of the content, whole decompressed content or None for a plain file).

    The head holds at least the whole first line: the header of a wide file can be longer than
    ``n_bytes``, and a header cut short would name a column that is not there."""
    kind = _compression.detect(path)
    if kind is not None:
        content = _compression.read_bytes(path, kind)
        return content[:max(n_bytes, content.find(b"\n") + 1)], content
    try:
        with open(path, "rb") as fh:
            parts = [fh.read(n_bytes)]
            while b"\n" not in parts[-1]:
                parts.append(fh.read(n_bytes))
                if not parts[-1]:
                    break
            return b"".join(parts), None
    except OSError as exc:
        raise DataError(f"cannot read input file {str(path)!r}: {exc.strerror or exc}") from exc


def sniff_delimiter(path: str | os.PathLike) -> str:
    """The delimiter of a CSV file among ``, ; TAB |`` (a single-column file gives ',').

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file (plain or compressed).

    Returns
    -------
    str
        The delimiter.
    """
    head, _ = _head_bytes(Path(path))
    return sniff_text(head.decode("utf-8", errors="replace"))


def read_table(path: str | os.PathLike, *, sep: str | None = None, parse: Parse = None) -> pd.DataFrame:
    """Read a CSV (any of ``, ; TAB |``; plain or compressed .gz, .bz2, .xz, .zst), Parquet, SPSS
    (.sav, .zsav), Stata (.dta) or SAS (.sas7bdat, .xpt) file.

    CSV columns come back as the file's text (no NA guessing), so a column nobody changes is
    written back byte-identical by :func:`write_table`. ``parse`` names the columns to read as
    numbers (a list, a function of the header's names, or True for every column that parses),
    with only :data:`NA_VALUES` read as missing. Parquet columns keep their Arrow types, and a
    named pandas index becomes an ordinary column. Column names must be unique. A statistical
    file gives its raw codes, user-defined missing values as missing, and its labels and
    missing-value definitions in ``attrs["statfile"]`` (see :mod:`incrowd.io._statfiles`).

    Raises :class:`DataError` for a missing, unreadable, damaged or empty file.

    Parameters
    ----------
    path : str or os.PathLike
        The file; its name picks the format (:func:`table_format`).
    sep : str or None, default None
        A CSV's delimiter (None: detected, :func:`sniff_delimiter`).
    parse : None, bool, sequence of str or callable, default None
        The CSV columns to read as numbers (None: none, every column is text).

    Returns
    -------
    pandas.DataFrame
        The table, with how it was read in ``attrs`` (so :func:`write_table` writes it back alike).
    """
    p = Path(path)
    if p.is_dir():
        if not any(f.suffix in (".parquet", ".pq") for f in p.rglob("*") if f.is_file()):
            raise DataError(f"input {str(p)!r} is a directory without .parquet files; expected a CSV "
                            "or Parquet file, or a Parquet dataset folder")
        frame = _arrow_types.read_parquet(p, what="Parquet dataset")
        if frame.shape[0] == 0:
            raise DataError(f"Parquet dataset {str(p)!r} has no data rows")
        return frame
    check_input_file(p, "input file")
    if p.stat().st_size == 0:
        raise DataError(f"input file {str(p)!r} is empty (0 bytes)")
    fmt = table_format(p)
    if fmt == "parquet":
        frame = _arrow_types.read_parquet(p, what="Parquet file")
    elif fmt in _statfiles.NAMES:
        kind = _compression.detect(p)
        frame = _statfiles.read(p, None if kind is None else io.BytesIO(_compression.read_bytes(p, kind)))
    else:
        head, content = _head_bytes(p)
        text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
        delimiter = sep if sep is not None else sniff_text(text)
        header = _csv_text.header_names(text, delimiter, str(p))
        source = p if content is None else io.BytesIO(content)
        try:
            frame = _csv_text.read(source, sep=delimiter, parse=parse, path=str(p), names=header)
        except pd.errors.EmptyDataError as exc:
            raise DataError(f"input file {str(p)!r} is empty (no header row)") from exc
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            record = _csv_text.unclosed_quote(exc)
            if record is not None:
                raise DataError(f"cannot parse CSV file {str(p)!r}: the quoted field opened in record "
                                f"{record} (the header is record 1) is never closed; every quote that "
                                "opens a field must close it") from None
            raise DataError(f"cannot parse CSV file {str(p)!r}: {exc}") from exc
        frame.attrs.update(_csv_text.layout(head, delimiter))
    if frame.shape[0] == 0:
        raise DataError(f"input file {str(p)!r} has a header but no data rows")
    return frame


def write_table(frame: pd.DataFrame, path: str | os.PathLike, *, sep: str | None = None,
                inputs: Sequence[str | os.PathLike] = (),
                verify: Callable[[str | bytes], None] | None = None) -> Path:
    """Write atomically: a temporary file in the target directory, then a rename.

    A reader never sees a half-written file, and a failure leaves any earlier file intact.
    ``path="-"`` writes CSV to standard output. Only a regular file (or a link to one) is
    replaced; ``inputs`` (files or folders the table was made from) are never overwritten.
    A CSV keeps the layout ``frame`` was read with (delimiter, line end); text columns are
    written as they are, quoted only where needed. ``.gz``, ``.bz2``, ``.xz`` (and ``.zst``
    with ``zstandard``) compress. A Parquet column still of the type it was read with keeps
    its Arrow type. ``.sav``/``.zsav``, ``.dta`` and ``.xpt`` write SPSS, Stata and SAS transport
    files with the labels and missing-value definitions of ``attrs["statfile"]`` that still hold.

    ``verify`` is called with the complete temporary file's path (with standard output: the
    bytes about to be written) before it replaces ``path``; what it raises leaves nothing
    written (see :func:`incrowd.io._written.write_release`).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    path : str or os.PathLike
        The file to write; its name picks the format, ``"-"`` is standard output.
    sep : str or None, default None
        A CSV's delimiter (None: the one ``frame`` was read with, else ``,``).
    inputs : sequence of str or os.PathLike, default ()
        Files and folders the table was made from, which are never overwritten.
    verify : callable or None, default None
        Called with the temporary file's path (or the bytes for standard output) before the
        rename; what it raises leaves nothing written.

    Returns
    -------
    pathlib.Path
        The path written.
    """
    delimiter = sep if sep is not None else frame.attrs.get("csv_sep", ",")
    if is_stdout(path):
        content = _csv_text.render(frame, sep=delimiter)
        if verify is not None:
            verify(content)
        write_csv_stdout(content)
        return Path(path)
    target = Path(path)
    fmt = table_format(target)
    _statfiles.check_writable(target)
    with atomic_output(target, inputs=inputs) as tmp_name:
        if fmt == "parquet":
            _arrow_types.write_parquet(frame, tmp_name)
        elif fmt in _statfiles.NAMES:
            _statfiles.write(frame, tmp_name, fmt, os.fspath(path))
        else:
            kind = _compression.by_name(target)
            _csv_text.write(frame, tmp_name, sep=delimiter,
                            compression=None if kind is None else _compression.pandas_compression(kind))
        if verify is not None:
            verify(tmp_name)
    return target


# ---------------------------------------------------------------------------------------------
# Column roles


def _as_name_list(value: str | Sequence[str] | None, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    try:
        return [str(v) for v in value]
    except TypeError as exc:
        raise ParameterError(f"{what} must be a list of column names; got {value!r}") from exc


@dataclass(frozen=True)
class ColumnRoles:
    """Which columns are quasi-identifiers, which are identifiers, and the rest (passed on).

    Attributes
    ----------
    quasi_identifiers : tuple of str
        The quasi-identifier columns.
    identifiers : tuple of str
        The identifier columns (dropped from a release).
    other : tuple of str
        Every other column (passed on unchanged).
    """

    quasi_identifiers: tuple[str, ...]
    identifiers: tuple[str, ...]
    other: tuple[str, ...]


def resolve_roles(
    frame: pd.DataFrame,
    quasi_identifiers: str | Sequence[str] | None = None,
    identifiers: str | Sequence[str] | None = None,
) -> ColumnRoles:
    """Check the named columns exist and split the frame's columns into roles.

    ``quasi_identifiers=None`` means every column that is not an identifier.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    quasi_identifiers : str, sequence of str or None, default None
        The quasi-identifier columns (a comma-separated string or a list).
    identifiers : str, sequence of str or None, default None
        The identifier columns.

    Returns
    -------
    ColumnRoles
        The columns by role.
    """
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        dup = sorted({c for c in columns if columns.count(c) > 1})
        raise DataError(f"column names must be unique; duplicated: {name_list(dup)}")
    ids = _as_name_list(identifiers, "identifiers")
    qis = _as_name_list(quasi_identifiers, "quasi_identifiers")
    for role, names in (("identifier", ids), ("quasi-identifier", qis)):
        for name in names:
            if name not in columns:
                raise DataError(
                    f"unknown {role} column {name!r}; the data has columns {name_list(columns)}"
                )
    both = sorted(set(ids) & set(qis))
    if both:
        raise DataError(f"columns {both} are named both identifier and quasi-identifier")
    if not qis:
        qis = [c for c in columns if c not in ids]
    if not qis:
        raise DataError("no quasi-identifier columns: every column is an identifier")
    if len(set(qis)) != len(qis):
        raise DataError(f"quasi-identifiers must be distinct; got {name_list(qis)}")
    other = [c for c in columns if c not in qis and c not in ids]
    return ColumnRoles(tuple(qis), tuple(ids), tuple(other))


def column_numbers(column: pd.Series, refuse) -> np.ndarray:
    """A column as float64, NaN where missing. Text (a CSV read without parsing) counts only the
    documented NA vocabulary as missing; any other cell that is not a number is refused:
    ``refuse(position, count)`` returns the error to raise (position 0-based).

    Parameters
    ----------
    column : pandas.Series
        The column.
    refuse : callable
        ``refuse(position, count)`` gives the error to raise for the first cell that is not a
        number (0-based position) and the count of such cells.

    Returns
    -------
    numpy.ndarray
        The values as float64, NaN where missing.
    """
    if pd.api.types.is_bool_dtype(column.dtype):
        values = column.astype(np.float64)
    elif pd.api.types.is_numeric_dtype(column.dtype):
        values = column
    elif isinstance(column.dtype, pd.StringDtype) or pd.api.types.infer_dtype(column, skipna=True) == "string":
        return _text_numbers(column, refuse)
    else:
        na = column.isna() | column.isin(NA_VALUES)
        values = pd.to_numeric(column.where(~na), errors="coerce")
        bad = values.isna() & ~na
        if bad.any():
            raise refuse(int(np.flatnonzero(bad.to_numpy())[0]), int(bad.sum()))
    # nullable and Arrow-backed columns: a missing value becomes NaN
    return np.asarray(pd.Series(values).to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)


def _text_numbers(column: pd.Series, refuse) -> np.ndarray:
    """:func:`column_numbers` of a column of text: each distinct text parsed once (a column of
    ages holds a hundred of them in a million rows), then every row looked up by its code.
    Text is equal only to the same text, so a distinct text parses as each of its rows would."""
    codes, distinct = pd.factorize(column, use_na_sentinel=True)
    texts = pd.Series(distinct, dtype=column.dtype)
    if (codes < 0).any():
        # a missing cell makes the parse one of floats, as it did the whole column's ("-0"
        # beside a missing cell is -0.0, alone 0)
        texts = pd.concat([texts, pd.Series([None], dtype=column.dtype)], ignore_index=True)
    na = texts.isna() | texts.isin(NA_VALUES)
    values = pd.to_numeric(texts.where(~na), errors="coerce").iloc[:len(distinct)]
    na = na.iloc[:len(distinct)]
    bad = (values.isna() & ~na).to_numpy()
    if bad.any():
        # -1 (a missing cell) looks up the last entry: a missing cell is never refused
        rows = np.append(bad, False)[codes]
        raise refuse(int(np.flatnonzero(rows)[0]), int(rows.sum()))
    numbers = np.asarray(pd.Series(values).to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
    return np.append(numbers, np.nan)[codes]


def numeric_matrix(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """The named columns as a float64 (n, m) array, or a DataError naming column and row.

    Rows are reported 1-based, counting data rows only (header excluded), which is the line
    number in a CSV file minus one.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    columns : sequence of str
        The columns to read as numbers.

    Returns
    -------
    numpy.ndarray of shape (n_rows, len(columns))
        The values as float64.
    """
    out = np.empty((frame.shape[0], len(columns)), dtype=np.float64)
    for j, name in enumerate(columns):
        col = frame[name]
        arr = column_numbers(col, lambda pos, count, name=name, col=col: DataError(
            f"quasi-identifier column {name!r} must be numeric; data row {pos + 1} "
            f"holds {col.iloc[pos]!r} ({count} non-numeric value(s) in all)"))
        bad = ~np.isfinite(arr)
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            # an infinity is a value, not a missing one: each kind is named and counted apart
            same = np.isnan(arr) if np.isnan(arr[pos]) else np.isinf(arr)
            what = "a missing value" if np.isnan(arr[pos]) else f"an infinite value {float(arr[pos])!r}"
            raise DataError(
                f"quasi-identifier column {name!r} has {what} in data row {pos + 1} "
                f"({int(same.sum())} such row(s) in all); remove or impute them first"
            )
        out[:, j] = arr
    return out


# ---------------------------------------------------------------------------------------------
# Standardization
