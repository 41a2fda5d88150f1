"""MDAV "generic" (Rodriguez-Hoyos et al. (2020), Algorithm 1): two fixed-size groups per round around P and Q."""

from __future__ import annotations

import numba
import numpy as np

from ..._runtime import small as _small
from ...exceptions import ParameterError
from .._adaptive import new_tuner, next_fit
from .._base import MicroaggregationEstimator
from ._mdav_fast import PARALLEL_FROM, mdav_fast_labels
from ._mdav_kernel import mdav_labels
from ._screen import PARALLEL_LOCK

# one per process, used under PARALLEL_LOCK: what one fit learnt about the machine serves the next
_TUNER = new_tuner()


def mdav_exact_labels(Z, k):
    """The groups of the plain scan kernel (``_mdav_kernel.mdav_labels``), exactly, faster
    (``_mdav_fast``; a k-d tree was tried too, and lost to it at 3 columns and to the scan at 6
    and 15: its box bounds prune little beyond a few dimensions)."""
    if Z.size and not np.abs(Z).max() < 1e15:
        return mdav_labels(Z, k)  # the fast kernel's error bounds assume this range
    if _small.prefer_numpy_mdav(Z.shape[0], Z.shape[1], k):
        return _small.mdav_labels(Z, k)
    if Z.shape[0] < SCAN_BELOW:
        return mdav_labels(Z, k)
    narrow = Z.shape[0] >= NARROW_FROM and bool(np.ptp(Z, axis=0).max() <= NARROW_MAX_RANGE)
    if (Z.shape[0] < PARALLEL_FROM or numba.get_num_threads() < 2
            or not PARALLEL_LOCK.acquire(blocking=False)):
        # small, one thread, or another thread holds the threads: the serial variant
        return mdav_fast_labels(Z, k, -1, 1, narrow)[0]
    try:
        return mdav_fast_labels(Z, k, PARALLEL_FROM, numba.get_num_threads(), narrow, next_fit(_TUNER))[0]
    finally:
        PARALLEL_LOCK.release()


# below this many rows the plain scan costs at most a few milliseconds more than the screened
# kernel (k = 5, 1 to 8 columns: even at 1,000 rows, 2x at 2,000, 2-3.5x at 5,000: 10-15 ms
# against 4 ms) and compiles in a fraction of its time (about 2 s against 8). Publish
# microaggregates each generalization class apart, and classes are mostly this small (Adult's
# largest of 2,598 has 3,350 rows): a first release then waits about 5 s less for the compiler,
# for about 10 ms more work
SCAN_BELOW = 4096

# int8 codes halve the bytes a pass streams, which pays once the codes no longer fit in the
# cache (below, the two are even). Their step is 1/127 of the half range, so a standardized column with a wide
# range (heavy tails: more rows inside the bars, each decided in float64) keeps int16 codes.
NARROW_FROM = 500_000
NARROW_MAX_RANGE = 16.0


class MDAV(MicroaggregationEstimator):
    """Maximum Distance to Average Vector, the de facto standard fixed-size method.

    While at least 2k rows remain: C = centroid of the remaining rows, P = the row farthest from
    C, a group of P and its k-1 nearest; Q = the remaining row farthest from P, a group of Q and
    its k-1 nearest. Then k..2k-1 remaining rows form one group and fewer than k join the last
    group. Ties go to the lowest row index. Deterministic: ``random_state`` has no effect.

    Attributes set by ``fit``: ``labels_``, ``n_groups_``, ``group_sizes_``, ``centroids_`` (in
    original units), ``information_loss_`` (SSE/SST on standardized data), ``seconds_``.

    ``dtype="float32"`` (Rodriguez-Hoyos et al.'s (2020) fifth technique) clusters the standardized data rounded to
    float32, as a single-precision implementation would see it, and reports what that changed
    against float64: ``groups_changed_`` (the partitions differ) and ``rows_regrouped_`` (rows
    whose group is not exactly a float64 group). The published groups are the float32 ones.

    Parameters
    ----------
    k : int, default 5
        The smallest group size: every group has at least k rows.
    dtype : {"float64", "float32"}, default "float64"
        The precision the standardized data are clustered in (see above).
    random_state : None
        Accepted for a uniform interface; the method is deterministic and ignores it.
    """

    def __init__(self, k: int = 5, *, dtype: str = "float64", random_state=None):
        super().__init__(k, random_state=random_state)
        self.dtype = dtype

    def _check_params(self) -> None:
        if self.dtype not in ("float64", "float32"):
            raise ParameterError(f"dtype must be 'float64' or 'float32'; got {self.dtype!r}")

    def _labels(self, Z, k, rng):
        labels = mdav_exact_labels(Z, k)
        if self.dtype == "float64":
            return labels
        single = mdav_exact_labels(np.ascontiguousarray(Z.astype(np.float32), dtype=np.float64), k)
        self.rows_regrouped_ = rows_regrouped(single, labels)
        self.groups_changed_ = self.rows_regrouped_ > 0
        return single


def rows_regrouped(labels: np.ndarray, reference: np.ndarray) -> int:
    """Rows whose group under ``labels`` is not exactly one of the groups of ``reference``."""
    def groups(lab):
        order = np.argsort(lab, kind="stable")
        bounds = np.flatnonzero(np.diff(lab[order])) + 1
        return [tuple(g) for g in np.split(order, bounds)]

    known = set(groups(reference))
    return int(sum(len(g) for g in groups(labels) if g not in known))
