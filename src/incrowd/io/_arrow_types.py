"""Parquet in and out with the Arrow types of the columns nobody changed.

pandas turns some Arrow types into others (an integer column with nulls becomes float64, a
named index leaves the columns). Reading keeps every physical column of the file as an ordinary
column (a named pandas index included), reads integers with nulls as nullable integers, and
remembers each column's Arrow type and the pandas dtype it was read as. Writing casts a column
back to its Arrow type when its dtype is still the one it was read as, so pass-through columns
come out type-identical while replaced columns (centroids, generalized labels) keep their own.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pandas as pd
import pyarrow as pa

from ..exceptions import DataError

_NULLABLE_INT = {
    pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
    pa.int64(): pd.Int64Dtype(), pa.uint8(): pd.UInt8Dtype(), pa.uint16(): pd.UInt16Dtype(),
    pa.uint32(): pd.UInt32Dtype(), pa.uint64(): pd.UInt64Dtype(),
}


def _check_unique(names: list[str], path: Path, what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DataError(f"{what} {str(path)!r} names column {name!r} more than once; column "
                            "names must be unique (rename one of them)")
        seen.add(name)


def read_parquet(path: Path, *, what: str) -> pd.DataFrame:
    import pyarrow.parquet as pq  # its file systems (ssl, cloud stores) cost a CSV reader 25 ms

    if path.is_file():
        try:  # pyarrow cannot read a file naming a column twice: say which name, before it tries
            _check_unique([str(n) for n in pq.read_schema(path).names], path, what)
        except DataError:
            raise
        except Exception:  # not Parquet at all: read_table below names the file
            pass
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises many types; the user needs the file named
        raise DataError(f"cannot read {what} {str(path)!r}: {exc}") from exc
    names = [str(n) for n in table.column_names]
    _check_unique(names, path, what)
    try:
        frame = table.to_pandas()
    except Exception as exc:  # e.g. pandas metadata naming an index column twice
        raise DataError(f"cannot read {what} {str(path)!r}: {exc}") from exc
    named = [n for n in frame.index.names if n is not None]
    if named:
        # a named pandas index is data (an id, a date): keep it as an ordinary column
        frame = frame.reset_index(level=named)
    frame = frame.reset_index(drop=True)
    # the file's physical order; unnamed index columns (__index_level_0__) are row numbers
    frame = frame[[n for n in names if n in frame.columns]]
    for name in frame.columns:
        column = table.column(name)
        if column.type in _NULLABLE_INT and column.null_count and frame[name].dtype.kind == "f":
            frame[name] = column.to_pandas(types_mapper=_NULLABLE_INT.get)
    remember(frame, pa.schema([table.schema.field(name) for name in frame.columns]),
             {name: str(frame[name].dtype) for name in frame.columns})
    return frame


def remember(frame: pd.DataFrame, schema: pa.Schema, dtypes: dict[str, str]) -> None:
    """Note the columns' Arrow types in ``frame.attrs`` (as text: pandas stores attrs as JSON)."""
    frame.attrs["arrow_schema"] = base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")
    frame.attrs["arrow_read_dtypes"] = dtypes


def remembered(frame: pd.DataFrame) -> tuple[pa.Schema | None, dict[str, str]]:
    text = frame.attrs.get("arrow_schema")
    if not text:
        return None, {}
    schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))
    return schema, dict(frame.attrs.get("arrow_read_dtypes") or {})


def _mixed(column: pd.Series) -> bool:
    if pd.api.types.infer_dtype(column, skipna=True) not in ("mixed", "mixed-integer"):
        return False  # one type (the usual case, decided without a Python call per cell)
    present = column.dropna()
    text = present.map(lambda v: isinstance(v, str))
    return bool(text.any()) and not bool(text.all())


def write_parquet(frame: pd.DataFrame, path: str) -> None:
    import pyarrow.parquet as pq

    schema, dtypes = remembered(frame)
    plain = frame.copy(deep=False)
    plain.attrs = {}  # reading bookkeeping, not data: keep it out of the file's metadata
    for name in plain.columns:
        if plain[name].dtype == object and _mixed(plain[name]):
            # text beside numbers (a label '*' beside codes): Arrow stores one type per
            # column, so the column is written as text throughout
            plain[name] = plain[name].map(lambda v: v if v is None or isinstance(v, str) or pd.isna(v) else str(v))
    table = pa.Table.from_pandas(plain, preserve_index=False)
    for i, name in enumerate(table.column_names):
        if schema is None or name not in schema.names:
            continue
        arrow_type = schema.field(name).type
        if str(frame[name].dtype) != dtypes.get(name) or table.schema.field(i).type == arrow_type:
            continue
        try:
            column = table.column(i).cast(arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue  # the values no longer fit the old type: they were changed, keep theirs
        table = table.set_column(i, pa.field(name, arrow_type), column)
    pq.write_table(table, path)
