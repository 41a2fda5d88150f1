"""Compile an increment's kernels before the state file's writer lock is taken.

On a fresh install numba compiles ``adjoin`` on the first add (the 2mdav strategy's MDAV is
the compiled extension's: nothing to compile): many seconds during which another writer would
wait on the lock, longer than the default --wait. Compiling ahead for the exact argument types
the locked call will pass (numba picks a specialization by dtype, dimensions and memory layout)
leaves only the algorithm under the lock.
"""

from __future__ import annotations

import numpy as np

from ._kernels import adjoin


def warm_add(points: np.ndarray | None, Z: np.ndarray, strategy: str, k: int) -> None:
    """Compile, or load from numba's cache, what adding the standardized rows ``Z`` to a state
    holding ``points`` calls: the same types as ``_add_locked`` passes, on no data."""
    import numba

    m = Z.shape[1]
    P_old = points if points is not None else np.empty((0, m))
    # labels, sums, sumsq and sizes are fresh C-ordered arrays in _add_locked; the ints and the
    # flag are Python scalars there
    args = (P_old, Z, np.empty(1, np.int64), np.zeros((1, m)), np.zeros((1, m)),
            np.zeros(1, np.int64), 0, int(k), False, 0)
    adjoin.compile(tuple(numba.typeof(a) for a in args))
