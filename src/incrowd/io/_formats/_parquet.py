"""Parquet files (.parquet, .pq): the existing reader, writer and read-back."""

from __future__ import annotations

from . import Format, register_format

FORMAT = register_format(Format(
    name="parquet", title="Parquet", suffixes=(".parquet", ".pq"), mime_types=("application/vnd.apache.parquet",),
    reader=".._tables:read_table", writer=".._tables:write_table", read_back=".._written:read_back",
    compressible=False,
))
