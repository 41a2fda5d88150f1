"""Stata files (.dta): the existing reader, writer and read-back."""

from __future__ import annotations

from . import Format, register_format

FORMAT = register_format(Format(
    name="stata", title="Stata", suffixes=(".dta",), mime_types=("application/x-stata-dta",),
    reader=".._statfiles:read", writer=".._statfiles:write", read_back=".._written:read_back",
    compressible=False, statistical=True,
))
