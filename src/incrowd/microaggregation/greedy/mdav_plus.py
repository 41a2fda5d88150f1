"""MDAV+ (Thaeter & Reischuk (2018), section 2, after Solanas et al. 2006)."""

from __future__ import annotations

from .._base import MicroaggregationEstimator
from ._vmdav_fast import mdav_plus_best_labels


class MDAVPlus(MicroaggregationEstimator):
    """MDAV with one group per round around a fixed global centroid.

    Each round groups the unassigned row farthest from the centroid of the whole data with its
    k-1 nearest unassigned rows; fewer than k leftovers each join the group with the nearest
    centroid, so every group has between k and 2k-1 rows. Deterministic: ``random_state`` has
    no effect. In up to five columns the neighbour searches go through a grid index, with the
    same groups.

    Parameters
    ----------
    k : int, default 5
        The smallest group size: every group has at least k rows.
    random_state : None
        Accepted for a uniform interface; the method is deterministic and ignores it.
    """

    def _labels(self, Z, k, rng):
        return mdav_plus_best_labels(Z, k)
