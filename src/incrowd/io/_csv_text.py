"""CSV columns as the text the file holds, and back.

Columns that are not parsed are read as strings with no NA guessing (``NA``, ``null``, an empty
field all stay the text they are), and written back with minimal quoting in the input's
delimiter, line terminator and byte-order mark, so a column nobody changed comes out
byte-identical. Columns to be parsed (the quasi-identifiers) are parsed by pandas' C parser with
the NA vocabulary of :data:`NA_VALUES` only.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Callable, Sequence, Union

import numpy as np
import pandas as pd

from ..exceptions import DataError
from . import _compression
from ._na_values import NA_HELP, NA_VALUES  # noqa: F401  (data.py and the CLI read them from here)

#: which columns to parse as numbers: None (none), True (every column that parses), a list of
#: names, or a function of the header's names giving that list
Parse = Union[None, bool, Sequence[str], Callable[[list[str]], Sequence[str]]]

_BOM = b"\xef\xbb\xbf"


def header_names(head: str, sep: str, path: str) -> list[str]:
    """The first record's fields; a name given twice is a DataError naming it."""
    try:
        names = next(csv.reader(io.StringIO(head), delimiter=sep), [])
    except csv.Error as exc:
        raise DataError(f"cannot parse the header of CSV file {path!r}: {exc}") from exc
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DataError(
                f"CSV file {path!r} names column {name!r} more than once; column names must be "
                "unique (rename one of them)"
            )
        seen.add(name)
    return names


def layout(head: bytes, sep: str) -> dict:
    """What a writer needs to reproduce the file's framing: delimiter, line end, BOM."""
    end = head.find(b"\n")
    return {
        "csv_sep": sep,
        "csv_lineterminator": "\r\n" if end > 0 and head[end - 1:end] == b"\r" else "\n",
        "csv_bom": head.startswith(_BOM),
    }


def _parsed(parse: Parse, columns: list[str]) -> list[str] | bool:
    if parse is None or parse is False:
        return []
    if parse is True:
        return True
    names = parse(columns) if callable(parse) else parse
    return [c for c in names if c in columns]


def _read_arrow(source, sep: str, names: list[str], numeric: set[str]) -> pd.DataFrame | None:
    """pyarrow's multi-threaded reader (several times faster than pandas' on text columns), or
    None for anything it does not read exactly as pandas would: then pandas reads the file and
    gives the usual errors (ragged rows, a non-numeric quasi-identifier named by row, ...)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    types = {c: pa.float64() if c in numeric else pa.string() for c in names}
    try:
        table = pacsv.read_csv(
            pa.BufferReader(source.getbuffer()) if hasattr(source, "getbuffer") else str(source),
            parse_options=pacsv.ParseOptions(delimiter=sep, newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types=types, null_values=list(NA_VALUES), strings_can_be_null=False,
                quoted_strings_can_be_null=False),
        )
    except (pa.ArrowException, OSError, ValueError):
        return None
    if table.column_names != names or any(table.schema.field(c).type != t for c, t in types.items()):
        return None
    if _may_end_inside_quotes(source, table):
        return None
    return table.to_pandas()


def _may_end_inside_quotes(source, table) -> bool:
    """Whether the file may end inside a quoted field, which pyarrow takes for a complete last
    field (41 records read as one cell) and pandas refuses ("EOF inside string"). Such a field
    is the last column of the last row, and the file then ends with its opening quote and its
    value, quotes doubled; a closed field is followed by its closing quote. Only then does
    pandas read the file again, to judge."""
    if table.num_rows == 0 or not _last_is_text(table):
        return False
    value = table.column(table.num_columns - 1)[table.num_rows - 1].as_py()
    if value is None:
        return False
    suffix = b'"' + value.replace('"', '""').encode("utf-8", "surrogatepass")
    if hasattr(source, "getbuffer"):
        return bytes(source.getbuffer()[-len(suffix):]) == suffix
    with open(source, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        if size < len(suffix):
            return False
        fh.seek(size - len(suffix))
        return fh.read() == suffix


def _last_is_text(table) -> bool:
    import pyarrow as pa

    return table.num_columns > 0 and table.schema.field(table.num_columns - 1).type == pa.string()


def unclosed_quote(exc: Exception) -> int | None:
    """The record (1 = the header) where pandas found a quoted field that never closes, else None."""
    found = re.search(r"EOF inside string starting at row (\d+)", str(exc))
    return None if found is None else int(found.group(1)) + 1


def read(source, *, sep: str, parse: Parse, path: str, names: list[str]) -> pd.DataFrame:
    """Read ``source`` (a path or a bytes buffer) whose header is ``names``: parsed columns
    numeric, the rest as text."""
    if parse is not True:
        frame = _read_arrow(source, sep, names, set(_parsed(parse, names)))
        if frame is not None:
            return frame
    common = {"sep": sep, "encoding": "utf-8-sig"}
    if parse is None or parse is False:
        return pd.read_csv(source, dtype=str, keep_default_na=False, na_filter=False, **common)
    if parse is True:
        return pd.read_csv(source, na_values=list(NA_VALUES), keep_default_na=False, **common)
    columns = [str(c) for c in pd.read_csv(source, nrows=0, **common).columns]
    if hasattr(source, "seek"):
        source.seek(0)
    numeric = set(_parsed(parse, columns))
    return pd.read_csv(
        source, dtype={c: str for c in columns if c not in numeric},
        na_values={c: list(NA_VALUES) for c in numeric}, keep_default_na=False, **common)


# a quoted field (kept whole) or a record end
_RECORD_END = re.compile(r'("(?:[^"]|"")*")|\r\n')


def _has_bare_cr(frame: pd.DataFrame) -> bool:
    for name in frame.columns:
        col = frame[name]
        if isinstance(col.dtype, pd.StringDtype):
            if col.str.contains("\r", regex=False, na=False).any():
                return True
        elif col.dtype == object and col.astype(str).str.contains("\r", regex=False).any():
            return True
    return False



def _cells_as_text(column: pd.Series):
    """A column's cells as an Arrow string array of the text pandas' CSV writer gives them
    (float64 and int64 as numpy's ``str``, text as it is, a missing cell empty), or None where
    that writer would format it some other way (dates, booleans, objects that are not text)."""
    import pyarrow as pa

    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "fi" and dtype.itemsize == 8:
        values = column.to_numpy()
        # each distinct value formatted once; told apart by its bits, so -0.0 stays "-0.0"
        bits, where = np.unique(values.view(np.int64), return_inverse=True)
        distinct = bits.view(dtype)
        text = distinct.astype(str).astype(object)
        if dtype.kind == "f":
            text[np.isnan(distinct)] = ""
        return pa.array(text, type=pa.string()).take(pa.array(where.ravel()))
    if isinstance(dtype, pd.StringDtype) or (pd.api.types.is_object_dtype(dtype)
                                             and pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty")):
        try:
            return pa.array(column, type=pa.string(), from_pandas=True).fill_null("")
        except (pa.ArrowException, TypeError, ValueError, UnicodeError):
            return None  # text UTF-8 cannot spell
    return None


def _plain_bytes(frame: pd.DataFrame, sep: str, newline: str, encoding: str) -> tuple[bytes, Any] | None:
    """The CSV file of ``frame`` as (its BOM and header, its records in an Arrow buffer, which
    is written without a copy), byte for byte as pandas' writer (minimal quoting) writes it,
    where no cell and no name needs quoting and every column is one :func:`_cells_as_text`
    formats; else None.

    pandas writes row by row through Python's csv module; where nothing needs quoting a record
    is its cells joined by the delimiter, which Arrow's CSV writer joins a column at a time
    without quoting (and refuses where a cell holds a delimiter, a quote or a line end)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = list(frame.columns)
    if len(names) < 2 or not all(type(n) is str for n in names) or len(set(names)) < len(names):
        return None  # a record of one empty cell is quoted; names that are not text are formatted
    header = sep.join(names) + newline
    if header.count(sep) != len(names) - 1 or '"' in header or header.count("\n") != 1 or (
            header.count("\r") != newline.count("\r")):
        return None
    columns = []
    for name in names:
        cells = _cells_as_text(frame[name])
        if cells is None:
            return None
        columns.append(cells)
    body = pa.BufferOutputStream()
    try:
        table = pa.Table.from_arrays(columns, names=[str(i) for i in range(len(columns))])
        pacsv.write_csv(table, body, pacsv.WriteOptions(include_header=False, delimiter=sep, quoting_style="none",
                                                        eol=newline))
        start = (_BOM if encoding == "utf-8-sig" else b"") + header.encode("utf-8")
    except (pa.ArrowException, UnicodeError):
        return None  # a cell that needs quoting: pandas' writer quotes it
    return start, body.getvalue()


def render(frame: pd.DataFrame, *, sep: str) -> bytes:
    """The CSV bytes :func:`write` would write uncompressed (for standard output)."""
    newline = frame.attrs.get("csv_lineterminator", "\n")
    encoding = "utf-8-sig" if frame.attrs.get("csv_bom") else "utf-8"
    plain = _plain_bytes(frame, sep, newline, encoding)
    if plain is not None:
        return plain[0] + plain[1].to_pybytes()
    if newline == "\n" and _has_bare_cr(frame):
        # Python's csv writer quotes only the line terminator's characters, so a field holding
        # a carriage return would go out unquoted and split the record for every reader: write
        # with \r\n (which quotes it), then end records with \n outside the quoted fields.
        text = frame.to_csv(None, sep=sep, index=False, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
        return _RECORD_END.sub(lambda m: m.group(1) or "\n", text).encode(encoding)
    return frame.to_csv(None, sep=sep, index=False, quoting=csv.QUOTE_MINIMAL,
                        lineterminator=newline).encode(encoding)


def write(frame: pd.DataFrame, target, *, sep: str, compression: dict | None) -> None:
    """Minimal quoting in the layout the frame was read with (``frame.attrs``). Where nothing
    needs quoting, an uncompressed file is written by Arrow (:func:`_plain_bytes`),
    byte for byte what pandas' writer gives, several times faster."""
    newline = frame.attrs.get("csv_lineterminator", "\n")
    encoding = "utf-8-sig" if frame.attrs.get("csv_bom") else "utf-8"
    plain = _plain_bytes(frame, sep, newline, encoding) if compression is None else None
    if plain is not None:
        with open(target, "wb") as fh:
            fh.write(plain[0])
            fh.write(plain[1])
        return
    if newline == "\n" and _has_bare_cr(frame):
        with _compression.open_for_writing(target, None if compression is None else compression["method"]) as fh:
            fh.write(render(frame, sep=sep))
        return
    frame.to_csv(
        target, sep=sep, index=False, quoting=csv.QUOTE_MINIMAL, lineterminator=newline,
        encoding=encoding, compression=compression,
    )
