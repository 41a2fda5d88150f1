"""MDAV "generic" (paper 003 Algorithm 1): two fixed-size groups per round around P and Q."""

from __future__ import annotations

from ._base import MicroaggregationEstimator
from ._mdav_kernel import mdav_labels


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
        return mdav_labels(Z, k)
