"""A proven lower bound on the information loss of any k-partition: :func:`lower_bound`."""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import neumaier_add
from ._knn import knn_scan, use_scan

#: candidate partners per row (nearest neighbours); rows farther away enter the bound through
#: the distance to the last candidate, which keeps it valid for any number
_CANDIDATES_PER_K = 10
_ITERATIONS = 300
# measured on Adult (9,953 distinct rows of 3 columns) and Credit Card (30,000 x 24) at k = 3
# and 10: no one step suits both (Adult climbs furthest at 1.0, Credit Card at 0.05 and stalls
# at 1.0), so both ascents run and the higher bound is kept; 10k candidates instead of 3k
# raised both by 1-7 %
_STEPS = (1.0, 0.05)
#: up to this many distinct rows every other row is a candidate (memory: 24 bytes per pair)
_ALL_ROWS_MAX = 5000
# measured on Census, Tarragona and EIA at k = 3, 5, 10: with every row a candidate, steps of
# 0.4 to 2.5 mean row terms climb much faster than 0.015 (1.0: IL/L 1.21-1.37 after 1,000
# rounds, 1.17-1.36 after 3,000), and the rounds are cheap on files of a few thousand rows
_STEP_ALL_ROWS = 1.0
# the pair multipliers' step, same unit: on Census and Tarragona at k = 3 and 10 (1,000 rounds),
# 0.1 to 100 raised L by 0.1-0.8 % on Census and 1 to 20 by 4-11 % on Tarragona; 10 is near the
# best on both
_STEP_PAIRS = 10.0
_ITERATIONS_ALL_ROWS = 1000


@njit(cache=True)
def _kept(keep_v, keep_j, cnt, v, j):
    """Offer (v, j) to the ascending buffer of the smallest values (capacity len(keep_v), cnt
    held); returns the new count. A full buffer drops its largest value for a smaller one."""
    if cnt == keep_v.shape[0]:
        if v >= keep_v[cnt - 1]:
            return cnt
        cnt -= 1
    pos = cnt
    while pos > 0 and keep_v[pos - 1] > v:
        keep_v[pos] = keep_v[pos - 1]
        keep_j[pos] = keep_j[pos - 1]
        pos -= 1
    keep_v[pos] = v
    keep_j[pos] = j
    return cnt + 1


@njit(cache=True)
def _row_terms(d2, nbr, far2, w, u, mu, lo, k, grad, rec_i, rec_t, rec_w):
    """b_i(u, mu) for every distinct row (see :func:`lower_bound`), summed with the rows'
    counts ``w``; returns (the sum, the number of pairs recorded). A subgradient in u goes to
    ``grad`` (summed over copies); each pair chosen (row i, position t in its list, weight
    w_i / s) to ``rec_*`` for the pair multipliers.

    A row's other copies come first (distance 0), then its candidates nearest first, each
    offered once per copy; since u_j <= max(u) and mu[i, t] >= lo[i], a candidate offers at
    least d2 / 2 - max(u) + lo[i]: once that is no lower than the largest of the 2k - 2 values
    kept, no later candidate can enter and the scan stops (the kept values are exactly the
    smallest)."""
    n, M = d2.shape
    h = 2 * k - 1
    umax = u.max()
    keep_v = np.empty(h - 1)
    # kept partners as j * (M + 1) + t + 1 (t = -1: a copy of the row itself; -1: stand-in)
    keep_j = np.empty(h - 1, np.int64)
    stride = np.int64(M + 1)
    total = 0.0
    comp = 0.0
    grad[:] = 0.0
    nrec = 0
    for i in range(n):
        cnt = 0
        for _c in range(min(w[i] - 1, h - 1)):
            cnt = _kept(keep_v, keep_j, cnt, -u[i], i * stride)
        for t in range(M):
            j = nbr[i, t]
            if j < 0:
                continue
            half = 0.5 * d2[i, t]
            if cnt == h - 1 and half - umax + lo[i] >= keep_v[cnt - 1]:
                break
            v = half - u[j] + mu[i, t]
            for _c in range(min(w[j], h - 1)):
                if cnt == h - 1 and v >= keep_v[cnt - 1]:
                    break
                cnt = _kept(keep_v, keep_j, cnt, v, j * stride + t + 1)
        # rows outside the candidates: at squared distance >= far2[i], u_j <= max(u) and no
        # pair multiplier; the value is offered 2k - 2 times in their place
        vfar = 0.5 * far2[i] - umax
        for _t in range(h - 1):
            if cnt == h - 1 and vfar >= keep_v[cnt - 1]:
                break
            cnt = _kept(keep_v, keep_j, cnt, vfar, -1)
        acc = -u[i]
        best = np.inf
        best_s = k
        for s in range(2, h + 1):
            acc += keep_v[s - 2]
            if s >= k:
                val = acc / s
                if val < best:
                    best = val
                    best_s = s
        b = w[i] * (u[i] + best)
        # Neumaier-compensated sum: the bound is compared with SSE of the same magnitude
        total, comp = neumaier_add(total, comp, b)
        grad[i] += w[i] * (1.0 - 1.0 / best_s)
        for t in range(best_s - 1):
            code = keep_j[t]
            if code >= 0:
                grad[code // stride] -= w[i] / best_s
                pos = code % stride - 1
                if pos >= 0 and nrec < rec_i.shape[0]:
                    rec_i[nrec] = i
                    rec_t[nrec] = pos
                    rec_w[nrec] = w[i] / best_s
                    nrec += 1
    return total + comp, nrec


@njit(cache=True)
def _ascent(d2, nbr, rev, far2, w, k, iterations, c, c_pair):
    """Subgradient ascent on the multipliers u (one per distinct row, shared by its copies)
    with steps c / sqrt(1 + t) along the mean subgradient of a row's copies, and, when
    ``c_pair`` > 0, on the pair multipliers (mu[i, t] = -mu[j, rev[i, t]] for j = nbr[i, t])
    with steps c_pair / sqrt(1 + t); returns the best bound met (every evaluation is a valid
    bound, so the best one is)."""
    n, M = d2.shape
    u = np.zeros(n)
    grad = np.zeros(n)
    mu = np.zeros((n, M))
    lo = np.zeros(n)
    cap = n * (2 * k - 2) if c_pair > 0 else 0
    rec_i = np.empty(cap, np.int64)
    rec_t = np.empty(cap, np.int64)
    rec_w = np.empty(cap)
    best, nrec = _row_terms(d2, nbr, far2, w, u, mu, lo, k, grad, rec_i, rec_t, rec_w)
    for it in range(iterations):
        step = c / np.sqrt(1.0 + it)
        for i in range(n):
            u[i] += step * grad[i] / w[i]
        # the pair (i, j) gains w_i / s_i for each pick of j by i, and loses what j's picks of
        # i give; mu stays antisymmetric, so it cancels in every partition
        pstep = c_pair / np.sqrt(1.0 + it)
        for r in range(nrec):
            i = rec_i[r]
            t = rec_t[r]
            j = nbr[i, t]
            back = rev[i, t]
            mu[i, t] += pstep * rec_w[r]
            mu[j, back] -= pstep * rec_w[r]
            if mu[j, back] < lo[j]:
                lo[j] = mu[j, back]
        val, nrec = _row_terms(d2, nbr, far2, w, u, mu, lo, k, grad, rec_i, rec_t, rec_w)
        if val > best:
            best = val
    return best


def _all_pairs(Z):
    """Every other row of each row, nearest first: (squared distances, computed exactly as
    the candidates' are, and row ids), in blocks of rows to bound the scratch memory."""
    n = Z.shape[0]
    d2 = np.empty((n, n - 1))
    nbr = np.empty((n, n - 1), np.int32)
    block = max(1, 2_000_000 // max(1, n * Z.shape[1]))
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        D = ((Z[None, :, :] - Z[lo:hi, None, :]) ** 2).sum(axis=2)
        D[np.arange(hi - lo), np.arange(lo, hi)] = np.inf  # the row itself sorts last
        order = np.argsort(D, axis=1, kind="stable")[:, : n - 1]
        nbr[lo:hi] = order
        d2[lo:hi] = np.take_along_axis(D, order, axis=1)
    return d2, nbr


def _reverse(nbr):
    """rev[i, t]: the position of row i in the list of row nbr[i, t] (every row lists every
    other row)."""
    n, M = nbr.shape
    pos = np.empty((n, n), np.int32)
    pos[np.arange(n)[:, None], nbr] = np.arange(M, dtype=np.int32)[None, :]
    return np.ascontiguousarray(pos[nbr, np.arange(n)[:, None]])


def _nearest(Z, M):
    """The M nearest other rows of each row, nearest first: (squared distances recomputed
    exactly from the rows, row ids, and for each row a squared distance no row outside its
    candidates is nearer than)."""
    n = Z.shape[0]
    if use_scan(n, Z.shape[1]):
        approx, nbr = knn_scan(Z, M)
        # the scan's distances round (~1e-16 of the squared norms); a row outside the
        # candidates is at least this far, with room for that rounding
        norms = np.einsum("ij,ij->i", Z, Z)
        last = approx[:, -1] - 1e-9 * (norms + norms.max())
    else:
        from scipy.spatial import cKDTree

        dist, idx = cKDTree(Z).query(Z, k=M + 1)
        dist = np.asarray(dist).reshape(n, M + 1)
        idx = np.asarray(idx, np.int64).reshape(n, M + 1)
        # drop each row itself (among duplicates it may not come first)
        own = idx == np.arange(n)[:, None]
        drop = np.where(own.any(axis=1), own.argmax(axis=1), M)
        keep = np.ones_like(own)
        keep[np.arange(n), drop] = False
        nbr = idx[keep].reshape(n, M)
        # the tree's distances are rounded through a square root
        last = dist[:, -1] ** 2 * (1 - 1e-12)
    nbr = np.ascontiguousarray(nbr, dtype=np.int32)
    d2 = np.ascontiguousarray(((Z[nbr] - Z[:, None, :]) ** 2).sum(axis=2))
    far2 = np.minimum(d2.max(axis=1), np.maximum(last, 0.0))
    return d2, nbr, far2


def _distinct(Z):
    """The distinct rows of Z in order of first appearance, and how many times each occurs
    (Z itself and counts of 1 when no row repeats)."""
    _, first, counts = np.unique(Z, axis=0, return_index=True, return_counts=True)
    if first.shape[0] == Z.shape[0]:
        return Z, np.ones(Z.shape[0], np.int64)
    order = np.argsort(first)
    return np.ascontiguousarray(Z[first[order]]), counts[order].astype(np.int64)


def _standardized(data):
    from ..values import Standardizer
    from ._base import as_quasi_identifier_matrix

    values, names = as_quasi_identifier_matrix(data)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant column is reported by the methods, not here
        scaler = Standardizer.fit(values, names)
    return scaler.transform(values)


def _candidates(Y: np.ndarray, k: int):
    """``(d2, nbr, rev, far2, runs, iterations)``: each distinct row's candidate partners (squared
    distances, ids, the reverse lists for the pair multipliers, the stand-in distance beyond
    them), the ascent's (step, pair step) runs and its default number of iterations."""
    P = Y.shape[0]
    if P <= _ALL_ROWS_MAX:
        # every other row is a candidate: no stand-in values at max(u), which would otherwise
        # cap the ascent (a row priced high anywhere lowers every row's stand-ins)
        d2, nbr = _all_pairs(Y)
        # with and without the pair multipliers: they raised L by 1-11 % on Census, Tarragona
        # and EIA, and lowered it by 0.1 % on Gaussian noise (300 x 4), so both run
        return (d2, nbr, _reverse(nbr), np.full(P, np.inf), [(_STEP_ALL_ROWS, _STEP_PAIRS), (_STEP_ALL_ROWS, 0.0)],
                _ITERATIONS_ALL_ROWS)
    d2, nbr, far2 = _nearest(Y, min(P - 1, max(_CANDIDATES_PER_K * k, 2 * k)))
    # no pair multipliers: a pair need not be listed both ways
    return d2, nbr, np.empty((P, 0), np.int32), far2, [(step, 0.0) for step in _STEPS], _ITERATIONS


def lower_bound(data, k: int, *, iterations: int | None = None) -> float:
    """A number L with L <= SSE_opt / SST for ``data`` at this ``k``: no k-partition (any method,
    any group sizes) has an information loss below L.

    ``data``: a DataFrame (every column a quasi-identifier) or a numeric array, standardized
    exactly as the methods do before they measure information loss (mean 0, population
    variance 1 per column). ``iterations``: rounds of the subgradient ascent below (more can
    only raise L; default 1,000 up to 5,000 distinct rows, 300 above). So ``information_loss / L - 1``
    is how far a result can at most be from the best possible partition.

    The argument.

    1. Some optimal k-partition has every group of k..2k-1 rows: a group of 2k or more rows can
       be split into two groups of at least k rows without raising the SSE.
    2. For a group G of s rows, SSE(G) = (1/(2s)) sum_{i in G} sum_{j in G} d_ij^2, where d_ij is
       the distance between rows i and j. For any numbers u (one per row),
       sum_{i in G} (u_i - (1/s) sum_{j in G} u_j) = 0, so
       SSE(G) = sum_{i in G} (1/s) sum_{j in G} (d_ij^2 / 2 - u_j + u_i) = sum_{i in G} t_i(G).
    3. Hence SSE of a partition = sum over rows i of t_i(group of i) >= sum_i b_i(u), with
       b_i(u) = u_i + min over s in [k, 2k-1] and over sets S of s-1 other rows of
       (1/s) (-u_i + sum_{j in S} (d_ij^2 / 2 - u_j)).
       The inner minimum takes the s-1 smallest values v_ij = d_ij^2/2 - u_j.
    4. Pair multipliers: for any mu with mu_ij = -mu_ji, the sum over a group G of
       (1/s) sum_{i != j in G} mu_ij is 0, so v_ij = d_ij^2/2 - u_j + mu_ij keeps step 3 valid.
       A row that picks j when j does not pick it back is priced up; mu ascends with u.
    5. Up to 5,000 distinct rows every other row is looked at, nearest first, until
       d_ij^2/2 - max(u) + min_j mu_ij reaches the (2k-2)-th smallest value so far (no farther
       row can enter). Above, mu = 0 and only the 10k nearest neighbours of row i are looked at;
       any other row j is at squared distance >= D_i (that of the last neighbour) and has
       u_j <= max(u), so its v_ij is at least D_i / 2 - max(u), and that value is offered
       2k - 2 times in its place: the minimum can only go down, the bound stays valid.
    6. Identical rows share one multiplier (a choice of u, so the bound stays valid) and are
       handled as one row with a count: its other copies are its nearest candidates, at
       distance 0, and its term counts once per copy. Without that, a row with many copies
       would find only copies among its 10k nearest, and its stand-in would sit at -max(u).
    7. L(u, mu) = sum_i b_i / SST is thus a lower bound for every u and mu (a Lagrangian bound
       of the set-partitioning formulation; u = mu = 0 gives the per-row nearest-neighbour
       bound). L is concave in (u, mu); a subgradient ascent raises it (two ascents: up to 5,000
       distinct rows with and without mu, above with a long and a short step), and the best
       value met is returned.
       The sum is compensated and L is lowered by a relative 1e-9 to absorb rounding.

    Parameters
    ----------
    data : pandas.DataFrame or array_like of shape (n_rows, n_columns)
        The quasi-identifiers (every column).
    k : int
        The smallest group size.
    iterations : int or None, default None
        Rounds of the subgradient ascent (None: 1,000 up to 5,000 distinct rows, 300 above).

    Returns
    -------
    float
        The bound L, in [0, 1].
    """
    from ._base import check_int, check_k

    Z = _standardized(data)
    n = Z.shape[0]
    k = check_k(k, n)
    iterations = None if iterations is None else check_int(iterations, "iterations", 0, 100_000)
    total = float((Z * Z).sum())  # SST: Z has mean 0
    if total == 0.0:
        return 0.0
    Y, w = _distinct(Z)
    P = Y.shape[0]
    if P == 1:  # one distinct row (values equal up to rounding): every grouping loses nothing
        return 0.0
    d2, nbr, rev, far2, runs, default_iterations = _candidates(Y, k)
    iterations = default_iterations if iterations is None else iterations
    # the per-row nearest-neighbour bound (u = 0)
    bound = base = _ascent(d2, nbr, rev, far2, w, k, 0, 0.0, 0.0)
    if iterations > 0:
        # the steps in units of the mean row term (a step per row, its own term, lets the sparse
        # rows' multipliers grow, which lowers every row's bound through max(u))
        unit = base / n
        bound = max(_ascent(d2, nbr, rev, far2, w, k, iterations, step * unit, pair_step * unit)
                    for step, pair_step in runs)
    return max(0.0, float(bound) / total * (1.0 - 1e-9))
