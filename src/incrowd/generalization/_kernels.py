"""numba kernel of the sensitive attributes' figures per class.

A node's working table and its histograms (:mod:`._node_tables`) run on the compiled extension.
``publish``'s node search (:mod:`incrowd.publishing._gtm`) reads two more: a node's classes
straight from the bottom classes (:func:`._node_classes.node_classes`, on the compiled extension:
a search without l or t runs no numba at all) and, in one pass over the (bottom class, sensitive
value) pairs, each class's distinct values and distance (:func:`sensitive_counts`), which the
privacy models judge.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def sensitive_counts(class_of, n_classes, pair_b, pair_val, pair_cnt, reference, ordered, missing, with_t,
                     distinct_out, distance):
    """One sensitive column's figures per class, from the bottom classes' (bottom class, value,
    rows) pairs: ``distinct_out[c]`` the distinct values of class c (with ``missing`` the last
    code is never a distinct value), and with ``with_t`` ``distance[c]`` its earth mover's
    distance to ``reference``.

    The distance is :func:`incrowd.privacy._emd.emd_pairs`'s: the same integer numerator (the caller
    makes sure it fits an int64) over the same denominator, one float division.
    """
    m = reference.size
    n_pairs = pair_b.size
    start = np.zeros(n_classes + 1, np.int64)
    for p in range(n_pairs):
        start[class_of[pair_b[p]] + 1] += 1
    for c in range(n_classes):
        start[c + 1] += start[c]
    fill = start[:n_classes].copy()
    order = np.empty(n_pairs, np.int64)
    for p in range(n_pairs):
        c = class_of[pair_b[p]]
        order[fill[c]] = p
        fill[c] += 1
    n_ref = np.int64(0)
    r_cum = np.empty(m, np.int64)
    for i in range(m):
        n_ref += reference[i]
        r_cum[i] = n_ref
    scratch = np.zeros(m, np.int64)
    with_t = with_t and m > 1
    for c in range(n_classes):
        distinct = 0
        s = np.int64(0)
        for e in range(start[c], start[c + 1]):
            p = order[e]
            v = pair_val[p]
            if scratch[v] == 0 and not (missing and v == m - 1):
                distinct += 1
            scratch[v] += pair_cnt[p]
            s += pair_cnt[p]
        distinct_out[c] = distinct
        if with_t and s > 0:
            num = np.int64(0)
            if ordered:
                cum = np.int64(0)
                for i in range(m - 1):
                    cum += scratch[i]
                    num += abs(cum * n_ref - r_cum[i] * s)
                den = s * n_ref * (m - 1)
            else:
                for e in range(start[c], start[c + 1]):
                    v = pair_val[order[e]]
                    if scratch[v] != 0:  # a value met twice (two bottom classes) counts once
                        r = reference[v]
                        num += abs(scratch[v] * n_ref - r * s) - r * s
                        scratch[v] = 0
                num += s * n_ref
                den = 2 * s * n_ref
            distance[c] = num / den
        elif with_t:
            distance[c] = 0.0
        for e in range(start[c], start[c + 1]):
            scratch[pair_val[order[e]]] = 0
    return distinct_out, distance
