"""MDAV "generic" (Rodriguez-Hoyos et al. (2020), Algorithm 1): two fixed-size groups per round around P and Q."""

from __future__ import annotations

import numpy as np

from ..._native import mdav_labels, mdav_tree_labels
from ..._runtime import lazy as _lazy
from ..._runtime import small as _small
from ...exceptions import ParameterError
from .._base import MicroaggregationEstimator

# numba's fast exact kernel and its thread tuner, loaded by the first file too large for the scan
_fast_labels = _lazy.function("incrowd.microaggregation.mdav._mdav_large", "fast_exact_labels")


def mdav_exact_labels(Z, k):
    """The groups of the plain scan (the compiled extension's ``mdav_labels``), exactly: on up to
    ``TREE_MAX_COLUMNS`` columns by the extension's k-d tree (``mdav_tree_labels``) from
    ``TREE_FROM`` rows, by the scan below, and on one column more by the tree from
    ``TREE_FIVE_COLUMNS_FROM`` rows; otherwise, where box bounds prune little, by the
    scan on a small file or where numba has not started and the scan costs less than its
    start-up, else by numba's ``_mdav_fast`` (screened passes)."""
    if Z.size and not np.abs(Z).max() < 1e15:
        return mdav_labels(Z, k)  # the fast kernels' error bounds assume this range
    if 1 <= Z.shape[1] <= TREE_MAX_COLUMNS:
        return mdav_tree_labels(Z, k)[0] if Z.shape[0] >= TREE_FROM else mdav_labels(Z, k)
    if Z.shape[1] == TREE_MAX_COLUMNS + 1 and Z.shape[0] >= TREE_FIVE_COLUMNS_FROM:
        return mdav_tree_labels(Z, k)[0]
    if Z.shape[0] < SCAN_BELOW or (not _small.jit_runtime_loaded()
                                   and _small.mdav_work(Z.shape[0], Z.shape[1], k) <= SCAN_WORK):
        return mdav_labels(Z, k)
    return _fast_labels(Z, k)


# below this many rows the plain scan costs at most a few milliseconds more than the screened
# kernel (k = 5, 1 to 8 columns: even at 1,000 rows, 2x at 2,000, 2-3.5x at 5,000: 10-15 ms
# against 4 ms) and needs no numba. Publish microaggregates each generalization class apart, and
# classes are mostly this small (Adult's largest of 2,598 has 3,350 rows)
SCAN_BELOW = 4096
# Up to this much work (``mdav_work``'s unit, about 0.4 ns each for the scan here: 50,000 x 15 at
# k = 10 is 5.8e9, about 2.2 s) the scan costs less than starting numba (0.6 s) for the fast
# kernel, so a process that has not started numba scans
SCAN_WORK = 1.5e9
# Up to this many columns the compiled tree beats the screened kernel (k = 3, 100,000 rows, CPU
# seconds: 0.2 against 0.8 at 3 columns, 0.4 against 0.6 to 0.8 at 4; at 5 it is even, 0.8 to 0.9
# against 0.7 to 1.0, from 6 on 1.5 to 6 times slower, Gaussian or Adult's numeric columns) and
# grows more slowly: its rounds read a few leaves, not every live row
TREE_MAX_COLUMNS = 4
# On five columns the tree grows more slowly than the screened kernel and overtakes it on larger
# files (CPU seconds, k = 3: even at 100,000 rows, above; at 250,000 rows 4.1 against 4.7 s on
# Gaussian columns, 2.9 against 5.8 s on Adult's numeric columns)
TREE_FIVE_COLUMNS_FROM = 250_000
# From this many rows the tree (compiled, no numba to start) beats the scan (k = 5, Gaussian:
# at 2,000 rows 1.5 against 2.6 ms on 3 columns, even on 4; at 4,096 rows 2.5 to 7 times faster)
TREE_FROM = 2048


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
