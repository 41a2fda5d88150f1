"""Partitioned inputs: a Parquet dataset (a folder of files) is read lazily, one partition per
task; other inputs become row blocks of an in-memory table."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import DataError
from ..io import PARQUET_SUFFIXES, check_input_file, read_table, suffix


def is_parquet_dataset(path: str | os.PathLike) -> bool:
    p = Path(path)
    return p.is_dir() and any(f.suffix in PARQUET_SUFFIXES for f in p.rglob("*") if f.is_file())


def read_partitioned(path: str | os.PathLike, columns: list[str] | None = None):
    """A lazy dask dataframe over a Parquet file or dataset folder."""
    import dask.dataframe as dd

    p = Path(path)
    if p.is_dir() and not is_parquet_dataset(p):
        raise DataError(f"folder {str(p)!r} holds no {suffix('parquet')} files")
    if not p.is_dir():
        check_input_file(p, "input")
    return dd.read_parquet(str(p), columns=columns)


def block_count(client, n_rows: int, block_rows: int = 1_000_000) -> int:
    """Row blocks for an in-memory table: two per worker at least, at most ``block_rows`` rows
    each, never more blocks than rows."""
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    return max(1, min(n_rows, max(2 * workers, -(-n_rows // block_rows))))


def head(client, frames: list) -> pd.DataFrame:
    """The columns and dtypes of partitioned data (its first partition, no rows)."""
    return client.submit(_no_rows, frames[0]).result()


def _no_rows(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.head(0)


def frames_of(client, data) -> list:
    """Futures of pandas frames, in row order, that Dask can recompute."""
    if isinstance(data, (str, os.PathLike)):
        p = Path(data)
        if p.is_dir() or p.suffix in PARQUET_SUFFIXES:
            data = read_partitioned(p)
        else:
            data = read_table(p, parse=True)
    if hasattr(data, "to_delayed"):
        return client.compute(list(data.to_delayed()))
    if isinstance(data, pd.DataFrame):
        n_blocks = block_count(client, data.shape[0])
        bounds = np.linspace(0, data.shape[0], n_blocks + 1).astype(int)
        data = [data.iloc[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    if isinstance(data, (list, tuple)) and all(isinstance(f, pd.DataFrame) for f in data):
        return [client.submit(lambda f: f, frame, pure=False) for frame in data]
    raise DataError("data must be a dask dataframe, a Parquet dataset folder, a file or a list of pandas frames")
