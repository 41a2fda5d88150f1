"""MDAV's exact groups on a large file: numba's fast kernel (``_mdav_fast``), on several threads
where the file is large enough and the threads are free."""

from __future__ import annotations

import numba
import numpy as np

from .._adaptive import new_tuner, next_fit
from ._mdav_fast import PARALLEL_FROM, mdav_fast_labels
from ._screen import PARALLEL_LOCK

# one per process, used under PARALLEL_LOCK: what one fit learnt about the machine serves the next
_TUNER = new_tuner()

# int8 codes halve the bytes a pass streams, which pays once the codes no longer fit in the
# cache (below, the two are even). Their step is 1/127 of the half range, so a standardized column with a wide
# range (heavy tails: more rows inside the bars, each decided in float64) keeps int16 codes.
NARROW_FROM = 500_000
NARROW_MAX_RANGE = 16.0


def fast_exact_labels(Z: np.ndarray, k: int) -> np.ndarray:
    """The groups of the plain scan, by the fast exact kernel (Z within +-1e15)."""
    narrow = Z.shape[0] >= NARROW_FROM and bool(np.ptp(Z, axis=0).max() <= NARROW_MAX_RANGE)
    if (Z.shape[0] < PARALLEL_FROM or numba.get_num_threads() < 2
            or not PARALLEL_LOCK.acquire(blocking=False)):
        # small, one thread, or another thread holds the threads: the serial variant
        return mdav_fast_labels(Z, k, -1, 1, narrow)[0]
    try:
        return mdav_fast_labels(Z, k, PARALLEL_FROM, numba.get_num_threads(), narrow, next_fit(_TUNER))[0]
    finally:
        PARALLEL_LOCK.release()
