"""What an incremental release needs to look like its base input: the CSV framing (delimiter,
line end, byte-order mark) and the Arrow types of the pass-through columns of a Parquet base.

Stored as one JSON value in the state's ``meta`` table. Pass-through CSV columns are stored as
their text (DuckDB VARCHAR), so together with the framing a release written as CSV repeats
each pass-through field byte for byte.
"""

from __future__ import annotations

import base64
from typing import Any, Sequence

import pandas as pd
import pyarrow as pa

from ..io import arrow_types as _arrow_types


def of_input(frame: pd.DataFrame, passthrough: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in frame.attrs.items() if k.startswith("csv_")}
    schema, _ = _arrow_types.remembered(frame)
    fields = [schema.field(name) for name in passthrough if schema is not None and name in schema.names]
    if fields:
        out["arrow_schema"] = base64.b64encode(pa.schema(fields).serialize().to_pybytes()).decode("ascii")
    return out


def apply(release: pd.DataFrame, layout: dict[str, Any]) -> pd.DataFrame:
    """Set the attributes :func:`incrowd.io._tables.write_table` reads to reproduce the layout."""
    release.attrs.update({k: v for k, v in layout.items() if k.startswith("csv_")})
    if "arrow_schema" in layout:
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(layout["arrow_schema"])))
        # every stored column is a pass-through one: cast back whatever dtype DuckDB returned
        _arrow_types.remember(release, schema, {
            f.name: str(release[f.name].dtype) for f in schema if f.name in release.columns})
    return release
