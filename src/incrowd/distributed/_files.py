"""MONA from a Parquet dataset to a Parquet dataset, partition by partition: no machine holds
the table. The output folder appears (one rename) only after every written file was read back
and the groups counted: each row carries its group's centroid and every group has >= k rows."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, VerificationError
from ..io import is_stdout, numeric_matrix, resolve_roles, suffix, sweep_stale, temp_path
from ..microaggregation import check_distributed_method, make_estimator
from ._io import frames_of
from ._io import head as columns_of
from ._mona import mona


def _qi_block(frame: pd.DataFrame, index: int, qis: list[str]) -> np.ndarray:
    try:
        return numeric_matrix(frame, qis)
    except DataError as exc:
        raise DataError(f"partition {index}: {exc} (rows count within the partition)") from None


def _same_or_inside(target: Path, folder) -> bool:
    real, base = os.path.realpath(target), os.path.realpath(folder)
    return real == base or os.path.commonpath([real, base]) == base


def _groups(labels: np.ndarray) -> np.ndarray:
    return np.unique(labels)


def _write_block(frame, labels, groups, centroids, qis, ids, path) -> tuple[np.ndarray, np.ndarray]:
    """Write one partition's published rows, read them back, and count rows per group."""
    out = frame.drop(columns=list(ids))
    rows = centroids[np.searchsorted(groups, labels)]
    for j, name in enumerate(qis):
        out[name] = rows[:, j]
    out.to_parquet(path, index=False)
    back = pd.read_parquet(path, columns=list(qis)).to_numpy(np.float64)
    if back.shape != rows.shape or not np.array_equal(back, rows):
        raise VerificationError(f"{path}: the written rows differ from the group centroids")
    return np.unique(labels, return_counts=True)


def microaggregate_dataset(input_path: str | os.PathLike, output_path: str | os.PathLike, k: int,
                           method: str = "mona", *, client, quasi_identifiers: Sequence[str] | None = None,
                           identifiers: Sequence[str] | None = None, part_rows: int = 1_000_000,
                           **params) -> dict[str, Any]:
    """Microaggregate a Parquet dataset (or file) with MONA / MONA 2D on ``client``'s workers
    and write a Parquet dataset folder, one file per input partition, rows in input order."""
    check_distributed_method(method)
    estimator = make_estimator(method, k, None, **params)
    estimator._check_params()
    if is_stdout(output_path):
        raise DataError("a Parquet dataset folder cannot go to standard output ('-'); name a folder")
    target = Path(output_path)
    if os.path.exists(input_path) and (_same_or_inside(target, input_path)):
        raise DataError(f"output {str(target)!r} is inside the input {str(input_path)!r}; choose an "
                        "output outside it")
    if target.exists() or target.is_symlink():
        raise DataError(f"output {str(target)!r} already exists; a dataset folder is never overwritten: "
                        "remove it or choose another name")
    if not target.parent.is_dir():
        raise DataError(f"output directory {str(target.parent)!r} does not exist")
    frames = frames_of(client, input_path)
    roles = resolve_roles(columns_of(client, frames), quasi_identifiers, identifiers)
    qis, ids = list(roles.quasi_identifiers), list(roles.identifiers)
    blocks = [client.submit(_qi_block, f, i, qis) for i, f in enumerate(frames)]
    result = mona(blocks, k, client=client, rho=float(estimator.rho),
                  diagonals=getattr(estimator, "diagonals", None), split_2k=bool(estimator.split_2k),
                  max_rounds=int(estimator.max_rounds), part_rows=part_rows, collect_labels=False,
                  keep_label_blocks=True)
    sweep_stale(target)
    staging = temp_path(target)
    staging.mkdir()
    try:
        groups = client.gather([client.submit(_groups, lab) for lab in result.label_blocks])
        writes = [client.submit(_write_block, f, lab, g, result.centroids[g], qis, ids,
                                str(staging / f"part-{i:05d}{suffix('parquet')}"))
                  for i, (f, lab, g) in enumerate(zip(frames, result.label_blocks, groups))]
        counts = np.zeros(result.n_groups, np.int64)
        for g, c in client.gather(writes):
            counts[g] += c
        if counts.sum() != result.n_rows or counts.min() < k:
            raise VerificationError(f"the written dataset is not {k}-anonymous (smallest group "
                                    f"{int(counts.min())}); nothing was written")
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {
        "method": result.method, "k": k, "rho": result.rho, "quasi_identifiers": qis,
        "identifiers_dropped": ids, "rows": result.n_rows, "groups": result.n_groups,
        "min_group_size": int(counts.min()), "max_group_size": int(counts.max()),
        "information_loss": result.information_loss,
        "information_loss_percent": 100 * result.information_loss,
        "k_anonymous": True, "partitions": len(frames), "leaf_parts": result.leaf_parts,
        "distributed_cuts": result.distributed_cuts, "seconds": result.seconds,
        "output": str(target),
    }
