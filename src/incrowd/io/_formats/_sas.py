"""SAS files (.sas7bdat): the existing reader, writer and read-back."""

from __future__ import annotations

from . import Format, register_format

FORMAT = register_format(Format(
    name="sas7bdat", title="SAS", suffixes=(".sas7bdat",), mime_types=(),
    reader=".._statfiles:read", writer=None, read_back=None,
    compressible=False, statistical=True,
))
