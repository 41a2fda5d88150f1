"""A node's classes straight from the bottom classes: what ``publish``'s node search asks of
every node it looks at.

The grouping runs in the compiled extension (``incrowd._native``), not in numba: a search with k
alone runs nothing else compiled, so a one-shot ``incrowd publish`` never pays numba's start-up.
"""

from __future__ import annotations

import numpy as np

from .._native import node_groups


def node_classes(codes0, first_key, maps, map_rows, widths):
    """One node's classes from the bottom classes, numbered as ``np.unique`` numbers their keys.

    Bottom class r's key is the radix number (``first_key[r]``, then column j's code
    ``maps[map_rows[j], codes0[r, j]]`` as a digit of base ``widths[j]``); the caller makes
    sure it fits an int64. The keys are grouped by hashing, then only the distinct keys are
    sorted, so ids follow the key order and the first member of each class is its first bottom
    class. Returns (class of each bottom class, first bottom class of each class, class count).
    """
    gid, keys, first = node_groups(codes0, first_key, maps, map_rows, widths)
    order = np.argsort(keys)
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    return rank[gid], first[order], int(order.size)
