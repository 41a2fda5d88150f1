"""MDAV "generic" (paper 003 Algorithm 1): two fixed-size groups per round around P and Q."""

from __future__ import annotations

import numpy as np

from ._base import MicroaggregationEstimator
from ._mdav_fast import mdav_fast_labels
from ._mdav_kernel import mdav_labels

def mdav_exact_labels(Z, k):
    """The groups of the plain scan kernel (``_mdav_kernel.mdav_labels``), exactly, faster
    (``_mdav_fast``; a k-d tree was tried too, and lost to it at 3 columns and to the scan at 6
    and 15: its box bounds prune little beyond a few dimensions)."""
    if Z.size and not np.abs(Z).max() < 1e15:
        return mdav_labels(Z, k)  # the fast kernel's float32 screen and error bounds assume this range
    return mdav_fast_labels(Z, k)[0]


class MDAV(MicroaggregationEstimator):
    """Maximum Distance to Average Vector, the de facto standard fixed-size method.

    While at least 2k rows remain: C = centroid of the remaining rows, P = the row farthest from
    C, a group of P and its k-1 nearest; Q = the remaining row farthest from P, a group of Q and
    its k-1 nearest. Then k..2k-1 remaining rows form one group and fewer than k join the last
    group. Ties go to the lowest row index. Deterministic: ``random_state`` has no effect.

    Attributes set by ``fit``: ``labels_``, ``n_groups_``, ``group_sizes_``, ``centroids_`` (in
    original units), ``information_loss_`` (SSE/SST on standardized data), ``seconds_``.
    """

    def _labels(self, Z, k, rng):
        return mdav_exact_labels(Z, k)
