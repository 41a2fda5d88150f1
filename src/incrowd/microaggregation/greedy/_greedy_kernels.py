"""Numba kernels of MDAV+, V-MDAV and MDAV* (Thaeter & Reischuk 2018, sections 2-3; 2021, Algorithm 1).

All three visit origins in decreasing distance from the fixed centroid of the whole data and
search neighbours among the unassigned rows, which live column-major in compacted slots (see
``_kernels``). Group ids are numbered in order of creation.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import helper, maybe_compact, nearest_alive, sq_dist_to, sse_of_slots
from ._fixed_center import (
    add_to_group,
    extension_accepts,
    nearest_centroid,
    next_origin,
    sse_growth_closest,
    visiting_order,
)

INF = np.inf


@helper
def _start(X, k):
    """What all three keep while they group: the visiting order, the unassigned rows' compacted
    slots, and each group's sums and size."""
    n, m = X.shape
    max_groups = n // k + 1
    # always a copy: compaction writes into it, and ascontiguousarray(X.T) of an F-ordered X is X
    return (visiting_order(X), X.T.copy(), np.arange(n), np.arange(n), np.ones(n, np.bool_),
            np.zeros((max_groups, m)), np.zeros(max_groups, np.int64))


@helper
def _group_around(X, r, g, sel, Xt, ids, alive, labels, sums, sizes):
    """Row r and its k-1 nearest unassigned rows (their slots in ``sel``) become group g."""
    add_to_group(X, r, g, labels, sums, sizes)
    for t in range(sel.shape[0]):
        add_to_group(X, ids[sel[t]], g, labels, sums, sizes)
        alive[sel[t]] = False


@helper
def _leftovers_to_nearest_centroid(X, labels, sums, sizes, n_groups):
    """Each unassigned row joins the group with the nearest centroid, all judged against the
    groups as they stand before any leftover joins (the paper's "each to its closest group")."""
    n = X.shape[0]
    target = np.full(n, -1, np.int64)
    for i in range(n):
        if labels[i] < 0:
            target[i] = nearest_centroid(X, i, sums, sizes, n_groups)
    for i in range(n):
        if target[i] >= 0:
            add_to_group(X, i, target[i], labels, sums, sizes)


@njit(cache=True)
def mdav_plus_labels(X, k):
    n = X.shape[0]
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    order, Xt, ids, slot_of, alive, sums, sizes = _start(X, k)
    d = np.empty(n)
    sel = np.empty(k - 1, np.int64)
    n_slots = n
    n_live = n
    g = 0
    pos = 0
    while n_live >= k:
        pos, r = next_origin(order, pos, labels)
        s = slot_of[r]
        sq_dist_to(Xt, n_slots, X[r], d)
        nearest_alive(d, alive, n_slots, s, -1, k - 1, sel)
        alive[s] = False
        _group_around(X, r, g, sel, Xt, ids, alive, labels, sums, sizes)
        g += 1
        n_live -= k
        n_slots = maybe_compact(Xt, ids, slot_of, alive, n_slots, n_live)
    _leftovers_to_nearest_centroid(X, labels, sums, sizes, g)
    return labels


@njit(cache=True)
def vmdav_labels(X, k, gamma):
    n = X.shape[0]
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    order, Xt, ids, slot_of, alive, sums, sizes = _start(X, k)
    d = np.empty(n)
    de = np.empty(n)
    mind = np.empty(n)  # distance of each unassigned slot to the closest member of the group
    sel = np.empty(k - 1, np.int64)
    n_slots = n
    n_live = n
    g = 0
    pos = 0
    while n_live >= k:
        pos, r = next_origin(order, pos, labels)
        s = slot_of[r]
        sq_dist_to(Xt, n_slots, X[r], d)
        nearest_alive(d, alive, n_slots, s, -1, k - 1, sel)
        alive[s] = False
        for i in range(n_slots):
            mind[i] = d[i]
        _group_around(X, r, g, sel, Xt, ids, alive, labels, sums, sizes)
        for t in range(k - 1):
            sq_dist_to(Xt, n_slots, X[ids[sel[t]]], de)
            for i in range(n_slots):
                if de[i] < mind[i]:
                    mind[i] = de[i]
        n_live -= k
        size = k
        # Extension: the unassigned row closest to the group joins while it is closer to the
        # group than gamma times its distance to its own nearest unassigned neighbour.
        while size < 2 * k - 1 and n_live > 0:
            e = -1
            d_in = 0.0
            for i in range(n_slots):
                if alive[i] and (e < 0 or mind[i] < d_in):
                    e = i
                    d_in = mind[i]
            sq_dist_to(Xt, n_slots, X[ids[e]], de)
            d_out = INF
            for i in range(n_slots):
                if alive[i] and i != e and de[i] < d_out:
                    d_out = de[i]
            if not extension_accepts(d_in, d_out, gamma):
                break
            add_to_group(X, ids[e], g, labels, sums, sizes)
            alive[e] = False
            n_live -= 1
            size += 1
            for i in range(n_slots):
                if de[i] < mind[i]:
                    mind[i] = de[i]
        g += 1
        n_slots = maybe_compact(Xt, ids, slot_of, alive, n_slots, n_live)
    _leftovers_to_nearest_centroid(X, labels, sums, sizes, g)
    return labels


@njit(cache=True, nogil=True)
def mdav_star_labels(X, k):
    n = X.shape[0]
    labels = np.full(n, -1, np.int64)
    if n < 2 * k:
        labels[:] = 0
        return labels
    order, Xt, ids, slot_of, alive, sums, sizes = _start(X, k)
    d = np.empty(n)
    members = np.empty(k, np.int64)
    members_nu = np.empty(k, np.int64)
    n_slots = n
    n_live = n
    g = 0
    pos = 0
    while n_live >= k:
        pos, r = next_origin(order, pos, labels)
        s = slot_of[r]
        sq_dist_to(Xt, n_slots, X[r], d)
        members[0] = s
        nearest_alive(d, alive, n_slots, s, -1, k - 1, members[1:])
        cost_new = sse_of_slots(Xt, members, k) / k
        extend = False
        clos = -1
        growth = 0.0
        # Option (2) needs an existing group and a full neighbourhood around nu in U - x_r.
        if g > 0 and n_live - 1 >= k:
            nu = members[1]
            sq_dist_to(Xt, n_slots, X[ids[nu]], d)
            members_nu[0] = nu
            nearest_alive(d, alive, n_slots, s, nu, k - 1, members_nu[1:])
            cost_nu = sse_of_slots(Xt, members_nu, k)
            clos, growth = sse_growth_closest(X, r, sums, sizes, g)
            extend = cost_new > (growth + cost_nu) / (k + 1)
        if extend:
            add_to_group(X, r, clos, labels, sums, sizes)
            alive[s] = False
            n_live -= 1
        else:
            for t in range(k):
                add_to_group(X, ids[members[t]], g, labels, sums, sizes)
                alive[members[t]] = False
            g += 1
            n_live -= k
        n_slots = maybe_compact(Xt, ids, slot_of, alive, n_slots, n_live)
    # Leftovers each join clos(x), judged one after another as the groups grow.
    for i in range(n):
        if labels[i] < 0:
            c, _ = sse_growth_closest(X, i, sums, sizes, g)
            add_to_group(X, i, c, labels, sums, sizes)
    return labels
