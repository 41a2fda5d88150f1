"""SAS transport files (.xpt): the existing reader, writer and read-back."""

from __future__ import annotations

from . import Format, register_format

FORMAT = register_format(Format(
    name="xport", title="SAS transport", suffixes=(".xpt",), mime_types=("application/x-sas-xport",),
    reader=".._statfiles:read", writer=".._statfiles:write", read_back=".._written:read_back",
    compressible=False, statistical=True,
))
