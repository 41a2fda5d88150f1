"""MDAV "generic" with the groups of the plain scan, exactly, from a k-d tree over the live rows.

The scan (and ``_mdav_fast``, which screens it) makes passes over every live row in every round:
n / 2k rounds, so the work grows as n^2 / k whatever the data. On a few columns a tree answers
each of a round's other questions (the farthest live row from P; the k - 1 nearest
to P, to Q) from a few leaves: a few hundred rows read a round at any size (the time a round
still grows with the file, most likely as those reads miss the cache; see the perturbation guide):

* **Bounds without slack.** A node keeps the bounding box of its live rows (refreshed up the path
  when a row leaves). Rounding is monotone, so the box's nearest and farthest corners, put
  through the same float operations in the same order as ``row_sq_dist``, bound every row's
  computed distance from below and above exactly. A node is skipped only when its bound is
  strictly worse than the current k-th best, so rows at an equal distance are still seen and the
  scan's tie-break (the lowest row first) decides among them.
* **P** is found by ``_mdav_fast``'s own search (``find_p``: the radius walk from a double-double
  centroid): near the end of a fit the live rows are a ball whose surface is nearly all at the
  same distance from the centroid, so a box bound would visit most of the surface's leaves.

Used for files with up to ``mdav.TREE_MAX_COLUMNS`` columns: the boxes prune less with each
dimension (at 100,000 rows the tree took a third to a half of ``_mdav_fast``'s time at 1 to 3
columns, as much at 4, two to twelve times as much from 5 on).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import row_sq_dist
from ._mdav_fast import _FALLBACKS, _update_sum, find_p, p_search_state

_LEAF = 16


@njit(cache=True)
def _build(X, leaf):
    """The tree: rows in leaf order (``perm``), each node's range of perm, children (-1 for a
    leaf), parent, live count and box; ``leaf_of`` each row's leaf."""
    n, m = X.shape
    cap = 4 * (n // leaf + 2) + 1  # leaves hold more than leaf / 2 rows each
    lo = np.empty(cap, np.int64)
    hi = np.empty(cap, np.int64)
    left = np.full(cap, -1, np.int64)
    right = np.full(cap, -1, np.int64)
    parent = np.full(cap, -1, np.int64)
    perm = np.arange(n)
    leaf_of = np.empty(n, np.int64)
    stack = np.empty(cap, np.int64)
    lo[0] = 0
    hi[0] = n
    n_nodes = 1
    top = 1
    stack[0] = 0
    while top > 0:
        top -= 1
        v = stack[top]
        a = lo[v]
        b = hi[v]
        if b - a <= leaf:
            for t in range(a, b):
                leaf_of[perm[t]] = v
            continue
        widest = -1.0
        dim = 0
        for j in range(m):
            mn = X[perm[a], j]
            mx = mn
            for t in range(a + 1, b):
                x = X[perm[t], j]
                mn = min(mn, x)
                mx = max(mx, x)
            if mx - mn > widest:
                widest = mx - mn
                dim = j
        vals = np.empty(b - a)
        for t in range(a, b):
            vals[t - a] = X[perm[t], dim]
        order = np.argsort(vals)
        part = perm[a:b].copy()
        for t in range(b - a):
            perm[a + t] = part[order[t]]
        mid = (a + b) // 2
        for child, ca, cb in ((0, a, mid), (1, mid, b)):
            u = n_nodes
            n_nodes += 1
            lo[u] = ca
            hi[u] = cb
            parent[u] = v
            if child == 0:
                left[v] = u
            else:
                right[v] = u
            stack[top] = u
            top += 1
    count = np.zeros(n_nodes, np.int64)
    bmin = np.empty((n_nodes, m))
    bmax = np.empty((n_nodes, m))
    for v in range(n_nodes - 1, -1, -1):  # children come after their parent
        count[v] = hi[v] - lo[v]
        _refresh(X, perm, v, lo, hi, left, right, count, bmin, bmax, None)
    return perm, leaf_of, lo[:n_nodes], hi[:n_nodes], left[:n_nodes], right[:n_nodes], parent[:n_nodes], \
        count, bmin, bmax


@njit(cache=True)
def _refresh(X, perm, v, lo, hi, left, right, count, bmin, bmax, alive):
    """Node v's box from its live rows (a leaf) or its children's boxes."""
    m = X.shape[1]
    for j in range(m):
        bmin[v, j] = np.inf
        bmax[v, j] = -np.inf
    if left[v] < 0:
        for t in range(lo[v], hi[v]):
            r = perm[t]
            if alive is None or alive[r]:
                for j in range(m):
                    bmin[v, j] = min(bmin[v, j], X[r, j])
                    bmax[v, j] = max(bmax[v, j], X[r, j])
    else:
        for u in (left[v], right[v]):
            if count[u] > 0:
                for j in range(m):
                    bmin[v, j] = min(bmin[v, j], bmin[u, j])
                    bmax[v, j] = max(bmax[v, j], bmax[u, j])


@njit(cache=True, inline="always")
def _near_bound(bmin, bmax, v, q):
    """At most the computed distance from q of any row in node v's box (see the docstring)."""
    acc = 0.0
    for j in range(q.shape[0]):
        if q[j] < bmin[v, j]:
            diff = bmin[v, j] - q[j]
        elif q[j] > bmax[v, j]:
            diff = bmax[v, j] - q[j]
        else:
            diff = 0.0
        acc += diff * diff
    return acc


@njit(cache=True, inline="always")
def _far_bound(bmin, bmax, v, q):
    """At least the computed distance from q of any row in node v's box."""
    acc = 0.0
    for j in range(q.shape[0]):
        a = abs(bmin[v, j] - q[j])
        b = abs(bmax[v, j] - q[j])
        diff = max(a, b)
        acc += diff * diff
    return acc


@njit(cache=True, inline="always")
def _insert(buf_d, buf_r, filled, size, d, r, nearest):
    """Keep the best ``size`` (d, row): ascending d for nearest, descending for farthest, the lower
    row first on equal d."""
    if filled == size:
        wd = buf_d[size - 1]
        if (d > wd if nearest else d < wd) or (d == wd and r > buf_r[size - 1]):
            return filled
    pos = filled if filled < size else size - 1
    while pos > 0:
        pd = buf_d[pos - 1]
        if (pd < d if nearest else pd > d) or (pd == d and buf_r[pos - 1] < r):
            break
        buf_d[pos] = pd
        buf_r[pos] = buf_r[pos - 1]
        pos -= 1
    buf_d[pos] = d
    buf_r[pos] = r
    return filled + 1 if filled < size else filled


@njit(cache=True)
def _query(X, tree, alive, q, exclude, size, nearest, buf_d, buf_r, stack):
    """The ``size`` nearest (or farthest) live rows from point q, ``exclude`` skipped, sorted as
    the scan selects them; returns how many were found."""
    perm, _, lo, hi, left, right, _, count, bmin, bmax = tree
    filled = 0
    if size <= 0:
        return 0
    top = 1
    stack[0] = 0
    while top > 0:
        top -= 1
        v = stack[top]
        if count[v] == 0:
            continue
        if filled == size:
            if nearest:
                if _near_bound(bmin, bmax, v, q) > buf_d[size - 1]:
                    continue
            elif _far_bound(bmin, bmax, v, q) < buf_d[size - 1]:
                continue
        if left[v] < 0:
            for t in range(lo[v], hi[v]):
                r = perm[t]
                if alive[r] and r != exclude:
                    filled = _insert(buf_d, buf_r, filled, size, row_sq_dist(X, r, q), r, nearest)
            continue
        a = left[v]
        b = right[v]
        if nearest:
            first_a = _near_bound(bmin, bmax, a, q) <= _near_bound(bmin, bmax, b, q)
        else:
            first_a = _far_bound(bmin, bmax, a, q) >= _far_bound(bmin, bmax, b, q)
        # the more promising child is popped first
        stack[top] = b if first_a else a
        stack[top + 1] = a if first_a else b
        top += 2
    return filled


@njit(cache=True)
def _remove(X, tree, alive, r, labels, group, s_hi, s_lo, abs_sum):
    """Row r joins ``group`` and leaves the tree: the live counts and boxes up its path."""
    perm, leaf_of, lo, hi, left, right, parent, count, bmin, bmax = tree
    labels[r] = group
    alive[r] = False
    _update_sum(X[r], -1.0, s_hi, s_lo, abs_sum)
    v = leaf_of[r]
    while v >= 0:
        count[v] -= 1
        _refresh(X, perm, v, lo, hi, left, right, count, bmin, bmax, alive)
        v = parent[v]


@njit(cache=True)
def _take(X, tree, alive, seed, k, labels, group, s_hi, s_lo, abs_sum, buf_d, buf_r, stack, point):
    """``seed`` and its k - 1 nearest live rows form ``group``."""
    for j in range(X.shape[1]):
        point[j] = X[seed, j]
    found = _query(X, tree, alive, point, seed, k - 1, True, buf_d, buf_r, stack)
    _remove(X, tree, alive, seed, labels, group, s_hi, s_lo, abs_sum)
    for t in range(found):
        _remove(X, tree, alive, buf_r[t], labels, group, s_hi, s_lo, abs_sum)


@njit(cache=True)
def mdav_tree_labels(X, k):
    """Group id per row, equal to ``mdav_labels(X, k)`` (X within +-1e15, as for ``_mdav_fast``);
    returns (labels, exact centroids needed)."""
    n, m = X.shape
    labels = np.zeros(n, np.int64)
    if n < 2 * k:
        return labels, 0
    tree = _build(X, _LEAF)
    stack = np.empty(tree[2].shape[0] + 64, np.int64)
    alive = np.ones(n, np.bool_)
    buf_d = np.empty(max(k, 1))
    buf_r = np.empty(max(k, 1), np.int64)
    point = np.empty(m)
    s_hi, s_lo, abs_sum, abs_total, c, c0, exact_c, order, radius, p_cand, gamma, walk = p_search_state(X)
    n_live = n
    updates = n
    group = 0
    while n_live >= 2 * k:
        p = find_p(X, s_hi, s_lo, abs_sum, abs_total, n_live, updates, alive, c, c0, exact_c, order, radius,
                   p_cand, walk, gamma)
        _take(X, tree, alive, p, k, labels, group, s_hi, s_lo, abs_sum, buf_d, buf_r, stack, point)
        group += 1
        # Q: the live row farthest from P (``point`` still holds P's row)
        _query(X, tree, alive, point, -1, 1, False, buf_d, buf_r, stack)
        _take(X, tree, alive, buf_r[0], k, labels, group, s_hi, s_lo, abs_sum, buf_d, buf_r, stack, point)
        group += 1
        updates += 2 * k
        n_live -= 2 * k
    rest = group if n_live >= k else group - 1
    for i in range(n):
        if alive[i]:
            labels[i] = rest
    return labels, walk[_FALLBACKS]


def tree_exact_labels(Z: np.ndarray, k: int) -> np.ndarray:
    """The groups of the plain scan, by the tree kernel (Z within +-1e15)."""
    return mdav_tree_labels(Z, k)[0]
