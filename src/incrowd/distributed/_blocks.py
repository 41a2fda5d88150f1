"""Block functions the distributed MONA maps over row blocks and leaf parts.

Every function here is a pure function of numpy arrays (and plain Python values): this is the
seam another engine can call (Spark through ``mapInPandas`` with the blocks in row order, Ray
tasks); see docs/scale-out.md.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import numba
import numpy as np

from ..microaggregation.mondrian.mona import mona_part_labels
from ._kernels import project


def rows(X: np.ndarray) -> int:
    return int(X.shape[0])


def as_block(X) -> np.ndarray:
    """A row block as a C-ordered float64 matrix (from numpy or a pandas frame)."""
    values = X.to_numpy(dtype=np.float64) if hasattr(X, "to_numpy") else np.asarray(X, np.float64)
    return np.ascontiguousarray(values.reshape(values.shape[0], -1))


def standardize(X: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray((X - mean) / scale)  # Standardizer.transform, element for element


def zero_parts(X: np.ndarray) -> np.ndarray:
    return np.zeros(X.shape[0], np.int64)


def sorted_projections(Z, part, cut_ids, dirs) -> list[np.ndarray]:
    """Per part being cut: the sorted projections of its rows in this block."""
    out = []
    for p, (a, b, o) in zip(cut_ids, dirs):
        mask = part == p
        out.append(np.sort(project(Z[mask], a, b, o)))
    return out


def sample_between(sorted_list, lows, highs, per_block: int):
    """Per part: (count of values v with low < v <= high, up to ``per_block`` of them evenly spaced)."""
    out = []
    for vals, lo, hi in zip(sorted_list, lows, highs):
        i0 = np.searchsorted(vals, lo, side="right")
        i1 = np.searchsorted(vals, hi, side="right")
        count = int(i1 - i0)
        if count <= per_block:
            picks = vals[i0:i1]
        else:
            picks = vals[i0 + (np.arange(per_block) * count) // per_block]
        out.append((count, picks))
    return out


def counts_at(sorted_list, candidates):
    """Per part: (values < c, values <= c) for each candidate c."""
    return [(np.searchsorted(vals, c, side="left"), np.searchsorted(vals, c, side="right"))
            for vals, c in zip(sorted_list, candidates)]


def tie_keys(Z, part, p, pivot, direction, ancestors, row_offset):
    """Rows of part p whose projection equals the pivot: (global row index, the ancestors'
    projections, root first), the keys that order tied rows."""
    mask = part == p
    sub = Z[mask]
    tied = project(sub, *direction) == pivot
    keys = [project(sub[tied], *anc) for anc in ancestors]
    return np.flatnonzero(mask)[tied] + row_offset, keys


def split(Z, part, cut_ids, dirs, pivots, left_ties, left_ids, right_ids, row_offset):
    """New part ids: the rows of a part being cut go to its left child when their projection is
    below the pivot or they are among the tied rows chosen to go left."""
    out = part.copy()
    global_rows = np.arange(part.shape[0]) + row_offset
    for p, direction, pivot, ties, left, right in zip(cut_ids, dirs, pivots, left_ties, left_ids, right_ids):
        mask = part == p
        if not mask.any():
            continue
        proj = project(Z[mask], *direction)
        go_left = proj < pivot
        if ties.size:
            go_left |= (proj == pivot) & np.isin(global_rows[mask], ties)
        out[np.flatnonzero(mask)] = np.where(go_left, left, right)
    return out


def take_parts(Z, part, leaf_ids) -> dict:
    """This block's rows of each leaf part, in row order."""
    present = np.unique(part)
    return {int(p): np.ascontiguousarray(Z[part == p]) for p in leaf_ids if p in present}


def pick(pieces: dict, p: int):
    return pieces.get(int(p))


def local_mona(k, rule, limit, scale, unit, split_2k, max_rounds, ancestors, threads, *pieces):
    """MONA on one leaf part (its rows from every block, in block order = row order).

    ``threads``: the compiled threads this task may use (an int, or a mapping from worker
    address to int, as :func:`incrowd.distributed._mona.task_threads` gives; None keeps numba's
    count). Each Dask thread runs a task of its own, so a task that also spread its passes over
    every core would put several busy threads on each core. numba's count is per calling
    thread, so setting it here leaves the worker's other tasks alone."""
    Z = np.ascontiguousarray(np.concatenate([x for x in pieces if x is not None]))
    with compiled_threads(threads):
        labels, n_ona, rounds, converged = mona_part_labels(
            Z, k, rule, limit, scale, unit_diagonals=unit, split_2k=split_2k, max_rounds=max_rounds,
            ancestors=ancestors)
    return labels, n_ona, rounds, converged


@contextlib.contextmanager
def compiled_threads(threads) -> Iterator[None]:
    """numba's thread count for the calling thread while the block runs: ``threads`` an int, a
    mapping from worker address to int (:func:`incrowd.distributed._mona.task_threads`), or None
    (numba's count kept)."""
    wanted = _threads_here(threads)
    before = numba.get_num_threads()
    if wanted is not None:
        numba.set_num_threads(max(1, min(wanted, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]  # set at import, not typed
    try:
        yield
    finally:
        numba.set_num_threads(before)


def _threads_here(threads) -> int | None:
    if threads is None or isinstance(threads, int):
        return threads
    try:
        from distributed import get_worker

        address = get_worker().address
    except (ImportError, ValueError):  # not inside a Dask task: keep numba's count
        return None
    return threads.get(address)


def part_counts(part, leaf_ids) -> np.ndarray:
    index = {int(p): j for j, p in enumerate(leaf_ids)}
    values, counts = np.unique(part, return_counts=True)
    out = np.zeros(len(leaf_ids), np.int64)
    for v, c in zip(values, counts):
        out[index[int(v)]] = c
    return out


def label_slice(result, start: int, end: int, offset: int) -> np.ndarray:
    return result[0][start:end] + offset


def assemble(part, leaf_ids, *slices) -> np.ndarray:
    out = np.empty(part.shape[0], np.int64)
    for p, values in zip(leaf_ids, slices):
        out[part == p] = values
    return out


def group_sums(X, Z, labels):
    """Per group present in the block: (groups, row counts, sums of X, sums of Z, sum of |z|^2)."""
    groups, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    sx = np.zeros((groups.size, X.shape[1]))
    sz = np.zeros((groups.size, Z.shape[1]))
    np.add.at(sx, inverse, X)
    np.add.at(sz, inverse, Z)
    return groups, counts, sx, sz, float(np.einsum("ij,ij->", Z, Z))
