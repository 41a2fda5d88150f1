"""MDAV* (Thaeter & Reischuk (2018), section 3, Thaeter & Reischuk (2021), Algorithm 1)."""

from __future__ import annotations

from .._base import MicroaggregationEstimator
from ._mdav_star_fast import mdav_star_best_labels


class MDAVStar(MicroaggregationEstimator):
    """MDAV with a marginal-cost decision between a new group and extending an old one.

    For the unassigned row x farthest from the global centroid: cost (1) = SSE of x with its
    k-1 nearest unassigned rows, per row; cost (2) = growth of SSE of clos(x) when x joins it
    plus SSE of the group around x's nearest unassigned neighbour y (in U - x), per k+1 rows.
    clos(x) is the group whose SSE grows least. A new group is made when (1) <= (2). Leftovers
    join clos(x) one after another. Option (2) is only weighed when a group exists and at least
    k rows would remain for y's group. Deterministic: ``random_state`` has no effect. In up to four
    columns the neighbour and clos(x) searches go through a grid index, in more through screened
    passes over integer codes of the rows and of the group centroids, with the same groups.

    Parameters
    ----------
    k, random_state
        As in :class:`MDAVPlus`.
    """

    def _labels(self, Z, k, rng):
        return mdav_star_best_labels(Z, k)
