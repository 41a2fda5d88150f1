"""SPSS files (.sav, .zsav): the existing reader, writer and read-back."""

from __future__ import annotations

from . import Format, register_format

FORMAT = register_format(Format(
    name="spss", title="SPSS", suffixes=(".sav", ".zsav"), mime_types=("application/x-spss-sav",),
    reader=".._statfiles:read", writer=".._statfiles:write", read_back=".._written:read_back",
    compressible=False, statistical=True,
))
