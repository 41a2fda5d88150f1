"""What an incremental release needs to look like its base input: the CSV framing (delimiter,
line end, byte-order mark), the Arrow types of the pass-through columns of a Parquet base, and a
statistical file's metadata (value labels, formats, measures, missing-value definitions, and
which pass-through columns hold user-missing codes, kept apart by the state since DuckDB keeps
no NaN payload).

Stored as one JSON value in the state's ``meta`` table. Pass-through CSV columns are stored as
their text (DuckDB VARCHAR), so together with the framing a release written as CSV repeats
each pass-through field byte for byte.
"""

from __future__ import annotations

import base64
from typing import Any, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from ..io import arrow_types as _arrow_types


def of_input(frame: pd.DataFrame, passthrough: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {k: v for k, v in frame.attrs.items() if k.startswith("csv_")}
    schema, _ = _arrow_types.remembered(frame)
    fields = [schema.field(name) for name in passthrough if schema is not None and name in schema.names]
    if fields:
        out["arrow_schema"] = base64.b64encode(pa.schema(fields).serialize().to_pybytes()).decode("ascii")
    statfile = frame.attrs.get("statfile")
    if isinstance(statfile, dict):
        out["statfile"] = {key: value for key, value in statfile.items()}
        columns = statfile.get("columns") or {}
        out["missing_codes"] = [c for c in passthrough if (columns.get(c) or {}).get("missing_codes")
                                and pd.api.types.is_float_dtype(frame[c].dtype)]
    return out


def missing_codes_of(passthrough: pd.DataFrame, layout: dict[str, Any]) -> pd.DataFrame:
    """Per pass-through column with user-missing codes, which code each cell was (-1: none)."""
    from ..io import code_indices

    return pd.DataFrame({f"missing_code:{c}": code_indices(passthrough[c].to_numpy())
                         for c in layout.get("missing_codes") or ()}, index=passthrough.index)


def with_missing_codes(passthrough: pd.DataFrame, codes: pd.DataFrame) -> pd.DataFrame:
    """``passthrough`` with each stored user-missing code put back into its NaN cell."""
    from ..io import tag_codes

    for name in codes.columns:
        column = name.removeprefix("missing_code:")
        index = codes[name].to_numpy(np.int64)
        values = passthrough[column].to_numpy(np.float64, copy=True)
        passthrough[column] = tag_codes(values, index >= 0, np.maximum(index, 0))
    return passthrough


def apply(release: pd.DataFrame, layout: dict[str, Any]) -> pd.DataFrame:
    """Set the attributes :func:`incrowd.io._tables.write_table` reads to reproduce the layout."""
    release.attrs.update({k: v for k, v in layout.items() if k.startswith("csv_")})
    if "statfile" in layout and "statfile" not in release.attrs:  # publish's own (recodes noted) stays
        from ..io import StatMeta

        release.attrs["statfile"] = StatMeta(layout["statfile"])
    if "arrow_schema" in layout:
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(layout["arrow_schema"])))
        # every stored column is a pass-through one: cast back whatever dtype DuckDB returned
        _arrow_types.remember(release, schema, {
            f.name: str(release[f.name].dtype) for f in schema if f.name in release.columns})
    return release



def with_statfile(layout: dict[str, Any], statfile: dict[str, Any] | None,
                  passthrough: pd.DataFrame) -> dict[str, Any]:
    """``layout`` with the statistical file's metadata ``statfile`` (the state's, with what the
    increment's ``passthrough`` columns added): a column whose first user-missing code came with
    the increment is now one whose codes the state keeps."""
    if statfile is None or statfile is layout.get("statfile"):
        return layout
    columns = statfile.get("columns") or {}
    kept = list(layout.get("missing_codes") or ())
    kept += [c for c in passthrough.columns if c not in kept and (columns.get(c) or {}).get("missing_codes")
             and pd.api.types.is_float_dtype(passthrough[c].dtype)]
    return {**layout, "statfile": statfile, "missing_codes": kept}
