"""V-MDAV, variable group size MDAV (Thaeter & Reischuk (2018), section 2, after Solanas et al. 2006)."""

from __future__ import annotations

from .._base import MicroaggregationEstimator, check_real
from ._vmdav_fast import vmdav_best_labels


class VMDAV(MicroaggregationEstimator):
    """MDAV+ whose groups may grow towards 2k-1 rows when the data suggest it.

    After a group G is formed, the unassigned row x closest to any member of G (squared
    distance d_in) joins G while ``d_in < gamma * d_out`` and G has fewer than 2k-1 rows, d_out
    being x's squared distance to its nearest unassigned neighbour (infinite when x is the last
    one). Fewer than k leftovers at the end join the group with the nearest centroid.
    ``gamma=0`` is MDAV+; Solanas et al. suggest 0.2 for scattered and 1.1 for clustered data.
    Deterministic: ``random_state`` has no effect. In up to five columns the neighbour searches go
    through a grid index, with the same groups.

    Parameters
    ----------
    k : int, default 5
        The smallest group size: every group has at least k rows.
    gamma : float, default 0.2
        The growth threshold: a row joins a group while ``d_in < gamma * d_out``; 0 is MDAV+.
    random_state : None
        Accepted for a uniform interface; the method is deterministic and ignores it.
    """

    def __init__(self, k: int = 5, *, gamma: float = 0.2, random_state=None):
        super().__init__(k, random_state=random_state)
        self.gamma = gamma

    def _check_params(self) -> None:
        check_real(self.gamma, "gamma", 0.0)

    def _labels(self, Z, k, rng):
        return vmdav_best_labels(Z, k, float(self.gamma))
