"""The raw Minimum Covariance Determinant of dRiskRMD: scikit-learn 1.9's FAST-MCD, step for step.

scikit-learn's ``MinCovDet`` (Rousseeuw and Van Driessen's FAST-MCD: C-steps from random
subsets, above 500 rows on subsets of about 300 rows, pooled into 1,500) gave the report's
robust scatter. Importing it costs about a second in a fresh process (scikit-learn and
``scipy.stats``), more than the measure itself on most files, and the report only needs its raw
estimate. This module is that algorithm as scikit-learn 1.9.1 writes it
(``sklearn/covariance/_robust_covariance.py``: ``_c_step``, ``select_candidates``,
``fast_mcd``; BSD-3-Clause), with the same random draws from ``numpy.random.RandomState`` and the
same floating-point operations in the same order, so that the support, location and scatter are
those ``MinCovDet(random_state=seed, support_fraction=f).fit(X)`` gives, bit for bit
(``tests/test_report_speed.py`` checks it against scikit-learn). Only the raw estimate is made:
the report applies robustbase's corrections itself (``_risk._mcd_covariance``).

Where the equality stops: on supports of p + 1 rows or fewer (a tiny file: h = 4 rows of 3
columns) the scatter is nearly or exactly singular, and the last bits of the two libraries'
inverses differ, which can break ties between subsets differently; when the best supports are
singular, many subsets tie at a zero determinant. On 1,179 random cases with supports of at
least p + 2 rows and a non-singular best support (rounded values, so with ties), every support,
location and scatter was equal bit for bit; the test draws from that domain. One case found
since, on a support of exactly p + 2 rows (7 rows, 3 columns, h = 5), has the same support and
location and a scatter that differs in its last bit (4e-18 of its largest entry), so the test
allows that on supports of p + 2 rows. In one dimension
scikit-learn 1.9.1 sometimes fails inside ``MinCovDet`` (an empty array) where this module
returns the shortest-half estimate.
"""

from __future__ import annotations

import math

import numpy as np

# The helpers below are numpy's and scipy's own steps without their argument checks (most of
# the time on 300-row subsets went to those): the same operations on the same arrays, so the
# same bits (the tests compare every result with scikit-learn's).

def _empirical_covariance(x: np.ndarray) -> np.ndarray:
    """``np.cov(x.T, bias=1)`` (scikit-learn's ``empirical_covariance``): centre by the mean,
    ``X @ X.T`` times ``1 / n``."""
    a = np.array(x.T, ndmin=2, dtype=np.float64)
    a -= a.mean(axis=1)[:, None]
    c = np.dot(a, a.T)
    c *= np.true_divide(1, a.shape[1])
    covariance = c.squeeze()
    if covariance.ndim == 0:
        covariance = np.array([[covariance]])
    return covariance


def _pinvh(a: np.ndarray) -> np.ndarray:
    """``scipy.linalg.pinvh(a)``: LAPACK ``dsyev`` (upper triangle), eigenvalues below
    ``max(|s|) * p * eps`` dropped."""
    from scipy.linalg import lapack

    p = a.shape[0]
    lwork = _LWORK.get(p)
    if lwork is None:
        lwork = _LWORK[p] = int(lapack.dsyev_lwork(p, lower=0)[0])
    s, u, info = lapack.dsyev(a, compute_v=1, lower=0, lwork=lwork, overwrite_a=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"the eigen decomposition failed (LAPACK dsyev info {info})")
    above = abs(s) > 0.0 + np.max(np.abs(s), initial=0.0) * (p * np.finfo(np.float64).eps)
    u = u[:, above]
    return (u * (1.0 / s[above])) @ u.T


_LWORK: dict[int, int] = {}


def _close(a: float, b: float) -> bool:
    """``np.allclose(a, b)`` on two numbers (equal infinities are close, NaN is not)."""
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-08 + 1e-05 * abs(b)


def _logdet(a: np.ndarray) -> float:
    sign, ld = np.linalg.slogdet(a)
    return ld if sign > 0 else -np.inf


def _c_step(x: np.ndarray, n_support: int, rng: np.random.RandomState, iterations: int,
            initial=None):
    pinvh = _pinvh
    dist = np.inf
    if initial is None:
        support_indices = rng.permutation(x.shape[0])[:n_support]
    else:
        location, covariance = initial
        precision = pinvh(covariance)
        centred = x - location
        dist = (np.dot(centred, precision) * centred).sum(1)
        support_indices = np.argpartition(dist, n_support - 1)[:n_support]
    support = x[support_indices]
    location = support.mean(0)
    covariance = _empirical_covariance(support)
    det = _logdet(covariance)
    if np.isinf(det):
        precision = pinvh(covariance)
    previous_det = np.inf
    previous = None
    while det < previous_det and iterations > 0 and not np.isinf(det):
        previous = (location, covariance, det, support_indices)
        previous_det = det
        precision = pinvh(covariance)
        centred = x - location
        dist = (np.dot(centred, precision) * centred).sum(axis=1)
        support_indices = np.argpartition(dist, n_support - 1)[:n_support]
        support = x[support_indices]
        location = support.mean(axis=0)
        covariance = _empirical_covariance(support)
        det = _logdet(covariance)
        iterations -= 1
    results = None
    if np.isinf(det):
        results = location, covariance, det, support_indices
    if _close(det, previous_det):
        results = location, covariance, det, support_indices
    elif det > previous_det:
        # the determinant grew (rounding): scikit-learn keeps the step before
        assert previous is not None
        results = previous
    if iterations == 0:
        results = location, covariance, det, support_indices
    if results is None:  # scikit-learn reuses the last results here; none exist on the first call
        results = location, covariance, det, support_indices
    location, covariance, det, support_indices = results
    return location, covariance, det, np.bincount(support_indices, minlength=x.shape[0]).astype(bool)


def _select(x: np.ndarray, n_support: int, trials, select: int, rng: np.random.RandomState,
            iterations: int = 30):
    if isinstance(trials, tuple):
        found = [_c_step(x, n_support, rng, iterations, initial=(trials[0][j], trials[1][j]))
                 for j in range(trials[0].shape[0])]
    else:
        found = [_c_step(x, n_support, rng, iterations) for _ in range(trials)]
    locations, covariances, dets, supports = zip(*found)
    best = np.argsort(dets)[:select]
    return np.asarray(locations)[best], np.asarray(covariances)[best], np.asarray(supports)[best]


def fast_mcd(x: np.ndarray, support_fraction: float, random_state: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The raw MCD of ``x`` (n x p, float64): (location, scatter with divisor n, support mask), as
    scikit-learn's ``MinCovDet(support_fraction=..., random_state=...)`` finds them (its
    ``raw_location_``, ``raw_covariance_``, ``raw_support_``). Raises ``ValueError`` where
    scikit-learn does: a support whose scatter is zero."""
    from .._runtime import check_cancelled

    x = np.asarray(x, dtype=np.float64)
    rng = np.random.RandomState(random_state)
    n, p = x.shape
    n_support = int(support_fraction * n)
    if p == 1:
        if n_support < n:
            ordered = np.sort(np.ravel(x))
            diff = ordered[n_support:] - ordered[:(n - n_support)]
            starts = np.where(diff == np.min(diff))[0]
            location = 0.5 * (ordered[n_support + starts] + ordered[starts]).mean()
            support = np.zeros(n, dtype=bool)
            support[np.argsort(np.abs(x - location), 0)[:n_support]] = True
            covariance = np.asarray([[np.var(x[support])]])
            location = np.array([location])
        else:
            support = np.ones(n, dtype=bool)
            covariance = np.asarray([[np.var(x)]])
            location = np.asarray([np.mean(x)])
    elif n > 500:
        n_subsets = n // 300
        subset_rows = n // n_subsets
        shuffle = rng.permutation(n)
        h_subset = int(np.ceil(subset_rows * (n_support / float(n))))
        best_per_subset = 10
        trials = max(10, 500 // n_subsets)
        all_locations = np.zeros((n_subsets * best_per_subset, p))
        all_covariances = np.zeros((n_subsets * best_per_subset, p, p))
        for i in range(n_subsets):
            check_cancelled()  # a web job stops between subsets
            low = i * subset_rows
            locs, covs, _ = _select(x[shuffle[low:low + subset_rows]], h_subset, trials, best_per_subset, rng,
                                    iterations=2)
            part = np.arange(i * best_per_subset, (i + 1) * best_per_subset)
            all_locations[part] = locs
            all_covariances[part] = covs
        merged_rows = min(1500, n)
        h_merged = int(np.ceil(merged_rows * (n_support / float(n))))
        selection = rng.permutation(n)[:merged_rows]
        locs, covs, supports = _select(x[selection], h_merged, (all_locations, all_covariances),
                                       10 if n > 1500 else 1, rng)
        if n < 1500:
            location, covariance = locs[0], covs[0]
            support = np.zeros(n, dtype=bool)
            support[selection] = supports[0]
        else:
            locs, covs, supports = _select(x, n_support, (locs, covs), 1, rng)
            location, covariance, support = locs[0], covs[0], supports[0]
    else:
        locs, covs, _ = _select(x, n_support, 30, 10, rng, iterations=2)
        locs, covs, supports = _select(x, n_support, (locs, covs), 1, rng)
        location, covariance, support = locs[0], covs[0], supports[0]
    if int(support.sum()) < n and np.allclose(covariance, 0):
        raise ValueError("the covariance matrix of the support data is equal to 0")
    return location, covariance, support
