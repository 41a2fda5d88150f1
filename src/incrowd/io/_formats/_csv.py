"""CSV files (.csv): the existing reader, writer and read-back."""

from __future__ import annotations

from . import Format, register_format

FORMAT = register_format(Format(
    name="csv", title="CSV", suffixes=(".csv",), mime_types=("text/csv",),
    reader=".._tables:read_table", writer=".._tables:write_table", read_back=".._written:read_back",
    compressible=True,
    note="delimiter , ; TAB or | sniffed; .gz, .bz2, .xz ok, .zst with zstandard",
))
