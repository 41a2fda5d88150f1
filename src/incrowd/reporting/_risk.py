"""Disclosure-risk measures of a release against its original.

Every function takes plain numpy arrays / pandas frames whose rows are aligned by position
(row i of the release is row i of the original) and returns a JSON-ready dict (or float).
Each docstring names the definition it implements.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, name_list
from ..privacy import attribute_disclosure_of_classes

__all__ = ["class_risk", "drisk", "drisk_rmd", "record_linkage", "attribute_disclosure"]


# ---------------------------------------------------------------------------------------------
# shared helpers


def _class_codes(frame: pd.DataFrame) -> np.ndarray:
    """Class number of every row: rows with equal values in all columns share one; a missing
    value is a value of its own, and so is each user-missing code (the release's verifier
    counts classes the same way)."""
    from ..values import class_ids

    return class_ids(frame)


def _numeric_pair(original, masked, name_a: str = "original", name_b: str = "masked"):
    x = _as_matrix(original, name_a)
    xm = _as_matrix(masked, name_b)
    if x.shape != xm.shape:
        raise DataError(f"{name_a} and {name_b} must have the same shape (rows aligned by position); "
                        f"got {x.shape} and {xm.shape}")
    return x, xm


def _as_matrix(a, name: str) -> np.ndarray:
    if isinstance(a, pd.DataFrame):
        bad = [c for c in a.columns if not (pd.api.types.is_numeric_dtype(a[c]) and not pd.api.types.is_bool_dtype(a[c]))]
        if bad:
            raise DataError(f"{name}: column(s) {bad} are not numeric; this measure needs numeric quasi-identifiers")
        a = a.to_numpy(dtype=np.float64, na_value=np.nan)
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{name} must hold numbers only; this measure needs numeric quasi-identifiers") from None
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise DataError(f"{name} must be a 2-D table of numbers; got {arr.ndim} dimensions")
    return arr


def _no_missing(x: np.ndarray, name: str) -> None:
    if not np.isfinite(x).all():
        row = int(np.flatnonzero(~np.isfinite(x).all(axis=1))[0])
        raise DataError(f"{name} has a missing or infinite value in row {row}; this measure needs complete numeric rows")


# ---------------------------------------------------------------------------------------------
# 1. equivalence classes and re-identification risk (ARX's attacker models)


def _risk_summary(per_record: np.ndarray, threshold: float) -> dict:
    n = per_record.shape[0]
    if n == 0:
        return {"highest": 0.0, "average": 0.0, "records_at_risk": 0.0}
    return {
        "highest": float(per_record.max()),
        "average": float(per_record.mean()),
        "records_at_risk": float(np.count_nonzero(per_record > threshold) / n),
    }


def class_risk(release_qis: pd.DataFrame, *, k: int | None = None, population_sizes=None,
               threshold: float = 0.2) -> dict:
    """Equivalence classes of the release and re-identification risk under ARX's three
    attacker models.

    A class is a set of rows with equal values in every column of ``release_qis`` (a missing
    value is a value of its own, ``dropna=False``). Returned fields:

    * ``class_size_histogram``: ``{size: number of classes of that size}`` (keys are ints);
      ``n_records``, ``n_classes``, ``smallest_class``, ``largest_class``;
    * ``records_below_k``: records in classes smaller than ``k`` (0 when ``k`` is None);
    * ``prosecutor``: risk of record i is ``1 / f_i`` with ``f_i`` the size of its class in the
      release (ARX ``RiskModelSampleRisks``: ``getHighestRisk`` = 1/smallest class,
      ``getAverageRisk`` = 1/average class size = n_classes/n). ``highest``, ``average`` (mean
      over records = n_classes/n) and ``records_at_risk`` = share of records with risk strictly
      above ``threshold`` (ARX's "records at risk" for a risk threshold);
      ``records_affected_by_highest``: share of records in the smallest classes
      (``getFractionOfRecordsAffectedByHighestRisk``);
    * ``journalist``: with ``population_sizes`` (``population_sizes[i]`` = size of record i's
      class in the population, at least its size in the release and equal within a class) the
      risk of record i is ``1 / F_i`` (ARX's journalist model with a population table); without
      one the journalist model equals the prosecutor model (ARX does the same when the
      release is the population) and ``population_table`` is False;
    * ``marketer``: expected share of records re-identified, ``n_classes / n`` without a
      population table (ARX ``getEstimatedMarketerRisk`` = 1/average class size) and
      ``sum over classes f_j / F_j / n`` with one.

    Raises ``ParameterError`` for a threshold outside [0, 1], ``k`` < 1 or population sizes of
    the wrong length, below the class size, or differing within a class.
    """
    if not isinstance(release_qis, pd.DataFrame):
        raise ParameterError(f"release_qis must be a pandas DataFrame; got {type(release_qis).__name__}")
    _check_threshold_k(threshold, k)
    return class_risk_of_classes(_class_codes(release_qis), k=k, population_sizes=population_sizes,
                                 threshold=threshold)


def _check_threshold_k(threshold, k) -> None:
    if not (isinstance(threshold, (int, float)) and 0.0 <= float(threshold) <= 1.0):
        raise ParameterError(f"threshold must be a number in [0, 1]; got {threshold!r}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ParameterError(f"k must be a positive integer or None; got {k!r}")


def class_risk_of_classes(codes: np.ndarray, *, k: int | None = None, population_sizes=None,
                          threshold: float = 0.2, matches: np.ndarray | None = None) -> dict:
    """:func:`class_risk` of a release whose classes are numbered already (``codes``: each
    row's class, as :func:`_class_codes` numbers them): a report groups the release once.

    ``matches``: each row's fk where a blank matches any value (``missing_matches="any"``,
    :func:`incrowd.values.match_counts`, sdcMicro's ``freqCalc`` with NA keys): a class
    (rows of equal values) then counts as large as the rows its rows match, every risk is
    ``1 / fk`` and the marketer risk is the mean of ``1 / fk`` (n_classes / n when classes
    partition the rows)."""
    _check_threshold_k(threshold, k)
    n = int(codes.shape[0])
    if matches is None:
        sizes = np.bincount(codes) if n else np.zeros(0, dtype=np.int64)
    else:
        matches = np.asarray(matches, dtype=np.int64).reshape(-1)
        if matches.shape[0] != n:
            raise ParameterError(f"matches must hold one count per release record ({n}); got {matches.shape[0]}")
        sizes = np.zeros(int(codes.max()) + 1 if n else 0, dtype=np.int64)
        sizes[codes] = matches  # rows of equal values match the same rows
    rec_size = sizes[codes] if n else np.zeros(0, dtype=np.int64)
    prosecutor = 1.0 / rec_size if n else np.zeros(0)
    pros = _risk_summary(prosecutor, float(threshold))
    smallest = int(sizes.min()) if n else 0
    pros["records_affected_by_highest"] = float(np.count_nonzero(rec_size == smallest) / n) if n else 0.0
    out = _class_figures(sizes, n, k, threshold, pros,
                         int(np.count_nonzero(rec_size < k)) if k is not None and n else 0)
    if population_sizes is None:
        marketer = (float(prosecutor.mean()) if matches is not None else sizes.shape[0] / n) if n else 0.0
        return _without_population(out, pros, marketer)
    pop = np.asarray(population_sizes, dtype=np.float64).reshape(-1)
    if pop.shape[0] != n:
        raise ParameterError(f"population_sizes must hold one size per release record ({n}); got {pop.shape[0]}")
    if n:
        if not np.isfinite(pop).all():
            raise ParameterError("population_sizes must be finite numbers")
        low = np.flatnonzero(pop < rec_size)
        if low.size:
            i = int(low[0])
            raise ParameterError(f"population_sizes[{i}] = {pop[i]:g} is below the size of its class "
                                 f"in the release ({int(rec_size[i])})")
        pmin = np.full(sizes.shape[0], np.inf)
        np.minimum.at(pmin, codes, pop)
        diff = np.flatnonzero(pop != pmin[codes])
        if diff.size:
            i = int(diff[0])
            raise ParameterError(f"population_sizes must be equal within a class; record {i} has {pop[i]:g}, "
                                 f"another record of its class {pmin[codes[i]]:g}")
    journalist = 1.0 / pop if n else np.zeros(0)
    out["journalist"] = {**_risk_summary(journalist, float(threshold)), "population_table": True}
    # sum_j f_j / F_j / n, as a sum over records of 1/F_i / n
    out["marketer"] = {"risk": float(journalist.sum() / n) if n else 0.0, "population_table": True}
    return out


def class_risk_of_sizes(sizes: np.ndarray, *, k: int | None = None, threshold: float = 0.2) -> dict:
    """:func:`class_risk_of_classes` from the classes' sizes alone (no population table, a
    blank matching itself): what the Dask backend's report has, the release's classes counted
    partition by partition. The per-record figures are sums over the classes (a class of f rows
    holds f records of risk 1 / f), so they agree with the per-record ones to float rounding."""
    _check_threshold_k(threshold, k)
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    if n == 0:
        return class_risk_of_classes(np.zeros(0, dtype=np.int64), k=k, threshold=threshold)
    smallest = int(sizes.min())
    at_risk = 1.0 / sizes > float(threshold)
    pros = {"highest": float(1.0 / smallest), "average": float(sizes.shape[0] / n),
            "records_at_risk": float(sizes[at_risk].sum() / n),
            "records_affected_by_highest": float(sizes[sizes == smallest].sum() / n)}
    out = _class_figures(sizes, n, k, threshold, pros, int(sizes[sizes < k].sum()) if k is not None else 0)
    return _without_population(out, pros, sizes.shape[0] / n)


def _class_figures(sizes: np.ndarray, n: int, k: int | None, threshold: float, pros: dict, below_k: int) -> dict:
    per_size, count = np.unique(sizes, return_counts=True)
    return {
        "n_records": n,
        "n_classes": int(sizes.shape[0]),
        "class_size_histogram": {int(s): int(c) for s, c in zip(per_size, count)},
        "smallest_class": int(sizes.min()) if n else 0,
        "largest_class": int(sizes.max()) if n else 0,
        "k": None if k is None else int(k),
        "records_below_k": below_k,
        "threshold": float(threshold),
        "prosecutor": pros,
    }


def _without_population(out: dict, pros: dict, marketer: float) -> dict:
    out["journalist"] = {**pros, "population_table": False,
                         "note": "no population table: the journalist model equals the prosecutor model"}
    out["marketer"] = {"risk": float(marketer), "population_table": False}
    return out


# ---------------------------------------------------------------------------------------------
# 2. sdcMicro dRisk


def drisk(original, masked, k: float = 0.05) -> float:
    """sdcMicro's ``dRisk`` (SDID, Mateo-Sanz, Sebe and Domingo-Ferrer, PSD 2004), exactly as
    ``dRiskWORK`` in sdcMicro 5.8.0 ``R/dRisk.R`` lines 77-92:

    * ``sds`` = sample standard deviation (n - 1) of each column of the MASKED data, missing
      values left out (``apply(xm, 2, sd, na.rm = TRUE)``);
    * the interval of record i, column j is ``[xm_ij - k * sds_j, xm_ij + k * sds_j]`` (closed);
    * a record counts as at risk when its original value lies inside the interval on EVERY
      column (``rowSums(x < mi | x > ma, na.rm = TRUE) == 0``); a comparison with a missing
      value counts as inside, as R's ``na.rm`` does;
    * the result is the share of records at risk (``mean(w)``).

    sdcMicro cuts a longer masked table to the original's rows; here both must have the same
    shape (``DataError`` otherwise).
    """
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k < 0:
        raise ParameterError(f"k must be a finite number >= 0; got {k!r}")
    x, xm = _numeric_pair(original, masked)
    n = x.shape[0]
    if n == 0:
        return 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        cnt = np.count_nonzero(~np.isnan(xm), axis=0)
        sds = np.full(xm.shape[1], np.nan)
        ok = cnt > 1
        if ok.any():
            sds[ok] = np.nanstd(xm[:, ok], axis=0, ddof=1)
    half = k * sds
    at_risk = np.ones(n, dtype=bool)
    # column by column keeps the working memory at one column of n booleans
    for j in range(x.shape[1]):
        lo = xm[:, j] - half[j]
        hi = xm[:, j] + half[j]
        outside = (x[:, j] < lo) | (x[:, j] > hi)
        at_risk &= ~outside
    return float(np.count_nonzero(at_risk) / n)


# ---------------------------------------------------------------------------------------------
# 3. sdcMicro dRiskRMD


def _scale(a: np.ndarray) -> np.ndarray:
    # R's scale(): centre by the column mean, divide by the sample sd (n - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a - a.mean(axis=0)) / a.std(axis=0, ddof=1)


def _nearest_other(points: np.ndarray, rows: np.ndarray, bound: float) -> np.ndarray:
    """Distance from each point in ``rows`` to its nearest OTHER point (R's ``dist`` with the
    diagonal removed), exact up to ``bound`` and ``inf`` beyond it. Columns that are missing
    throughout are left out and the distance scaled up by sqrt(p / p_used), as R's ``dist``
    does for missing values."""
    p = points.shape[1]
    used = ~np.isnan(points).all(axis=0)
    pts = points[:, used]
    if pts.shape[1] == 0 or points.shape[0] < 2:
        return np.full(rows.shape[0], np.inf)
    if np.isnan(pts).any():
        raise DataError("the scaled masked data has missing values; dRiskRMD needs complete rows")
    from scipy.spatial import cKDTree

    scale = math.sqrt(p / pts.shape[1])
    tree = cKDTree(pts)
    # only "nearer than k2 or not" matters: a bounded search prunes almost everything, where
    # an unbounded nearest-neighbour search in many dimensions visits most of the tree; the
    # bound is widened a little so that a distance of exactly k2 is still returned
    limit = np.nextafter(bound / scale, np.inf) * (1 + 1e-9) if math.isfinite(bound) else np.inf
    d, _ = tree.query(pts[rows], k=2, workers=-1, distance_upper_bound=limit)
    # the second order statistic includes the point itself at distance 0: it is the distance to
    # the nearest other point, 0 for a duplicate
    return d[:, 1] * scale


#: robustbase's fitted small-sample factors (``.MCDcnp2`` and ``.MCDcnp2.rew``, robustbase 0.95):
#: for p > 2 the two columns (alpha = 1/2, then 0.875) of ``coeffqpkwad*`` as (a, b, c) pairs;
#: for p = 1 and 2 the fitted (log constant, power) of ``1 - exp(const) / n^power``
_CNP2: dict[str, dict[str | int, Any]] = {
    "raw": {"p>2": (((-1.42764571687802, 1.26263336932151, 2.0), (-1.06141115981725, 1.28907991440387, 3.0)),
                    ((-0.455179464070565, 1.11192541278794, 2.0), (-0.294241208320834, 1.09649329149811, 3.0))),
            2: ((0.673292623522027, 0.691365864961895), (0.446537815635445, 1.06690782995919)),
            1: ((0.262024211897096, 0.604756680630497), (-0.351584646688712, 1.01646567502486))},
    "rew": {"p>2": (((-1.02842572724793, 1.67659883081926, 2.0), (-0.26800273450853, 1.35968562893582, 3.0)),
                    ((-0.544482443573914, 1.25994483222292, 2.0), (-0.343791072183285, 1.25159004257133, 3.0))),
            2: ((3.11101712909049, 1.91401056721863), (0.79473550581058, 1.10081930350091)),
            1: ((1.11098143415027, 1.5182890270453), (-0.66046776772861, 0.88939595831888))},
}


def _mcd_cons(p: int, alpha: float) -> float:
    """robustbase ``.MCDcons``: the consistency factor of an MCD scatter on a share ``alpha`` of
    normal data, ``alpha / P(chi2_(p+2) <= chi2_p quantile of alpha)``."""
    from scipy import special

    return float(alpha / special.gammainc(p / 2 + 1, _chi2_ppf(alpha, p) / 2))


def _chi2_ppf(q: float, p: int) -> float:
    """``scipy.stats.chi2.ppf(q, p)``, which is this very expression (importing ``scipy.stats``
    costs most of a second in a fresh process)."""
    from scipy import special

    return float(2 * special.gammaincinv(p / 2, q))


def _mcd_cnp2(p: int, n: int, alpha: float, kind: str) -> float:
    """robustbase ``.MCDcnp2`` (``kind = "raw"``) and ``.MCDcnp2.rew`` (``"rew"``): the
    small-sample factor, from the fitted curves, interpolated in alpha between 1/2 and 0.875.
    robustbase uses simulated values instead for n up to about 60 (its ``MCDcnp2s`` tables);
    those are not reproduced here."""
    table = _CNP2[kind]

    def fp(which: int) -> float:
        if p > 2:
            (a1, b1, c1), (a2, b2, c2) = table["p>2"][which]
            y = np.log([-a1 / p ** b1, -a2 / p ** b2])
            A = np.array([[1.0, -math.log(c1 * p * p)], [1.0, -math.log(c2 * p * p)]])
            const, power = np.linalg.solve(A, y)
            return 1.0 - math.exp(const) / n ** power
        const, power = table[p][which]
        return 1.0 - math.exp(const) / n ** power

    f500, f875 = fp(0), fp(1)
    if alpha <= 0.875:
        f = f500 + (f875 - f500) / 0.375 * (alpha - 0.5)
    else:
        f = f875 + (1 - f875) / 0.125 * (alpha - 0.875)
    return 1.0 / f


def _mcd_h(n: int, p: int, alpha: float) -> int:
    # robustbase h.alpha.n
    n2 = (n + p + 1) // 2
    return int(math.floor(2 * n2 - n + 2 * (n - n2) * alpha))


def _mcd_covariance(xs: np.ndarray, random_state: int, support_fraction, max_rows: int,
                    refine_rows: int = 100_000) -> np.ndarray:
    """robustbase ``covMcd``'s reweighted scatter: the raw MCD (the h rows of least scatter)
    found by scikit-learn's FAST-MCD (as ``_mcd`` reproduces it), then robustbase's corrections:
    the raw scatter (n - 1 divisor) times ``.MCDcons(p, h/n) * .MCDcnp2(p, n, alpha)``; rows within the 0.975 chi2
    quantile of it reweighted, their scatter (n - 1) times ``.MCDcons(p, share kept) *
    .MCDcnp2.rew(p, n, alpha)``."""
    from ._mcd import fast_mcd

    n, p = xs.shape
    alpha = 0.5 if support_fraction is None else float(support_fraction)
    h = min(max(_mcd_h(n, p, alpha), p + 1), n)
    column = _column_equal_in(xs, h)
    if column is not None:
        # h rows on one hyperplane (a column equal in all of them): any h of them have a scatter
        # of determinant 0, so the MCD's is singular (robustbase's exact fit, its first check);
        # FAST-MCD's random starts may miss it on a small file. Said without searching: on Adult
        # (capital-gain 0 in 91 % of the rows) the search cost most of the report
        raise np.linalg.LinAlgError(f"column {column} is equal in at least {h} rows: the MCD scatter is singular")
    if n <= max_rows:
        # (h + 1/2) / n: scikit-learn truncates fraction * n to the support size
        sub = xs[fast_mcd(xs, (h + 0.5) / n, random_state)[2]]
    else:
        sub = _mcd_large(xs, random_state, h, max_rows, refine_rows)
    loc = sub.mean(axis=0)
    cov = np.cov(sub, rowvar=False, ddof=1).reshape(p, p) * (_mcd_cons(p, h / n) * _mcd_cnp2(p, n, alpha, "raw"))
    if h == n:
        return cov
    keep = _sq_mahalanobis(xs, loc, cov) < _chi2_ppf(0.975, p)
    cov = np.cov(xs[keep], rowvar=False, ddof=1).reshape(p, p)
    kept = int(keep.sum())
    if kept != n:
        cov = cov * (_mcd_cons(p, kept / n) * _mcd_cnp2(p, n, alpha, "rew"))
    return cov


def _column_equal_in(xs: np.ndarray, h: int) -> int | None:
    """The first column that holds one value in at least ``h`` rows, or None."""
    for j in range(xs.shape[1]):
        _, counts = np.unique(xs[:, j], return_counts=True)
        if counts.max(initial=0) >= h:
            return j
    return None


def _mcd_large(xs: np.ndarray, random_state: int, h: int, max_rows: int, refine_rows: int) -> np.ndarray:
    """The raw MCD support (its rows) of a table above ``max_rows`` rows: FAST-MCD on a random
    sample, then concentration steps on up to ``refine_rows`` rows."""
    from ._mcd import fast_mcd

    n, p = xs.shape
    rng = np.random.default_rng(random_state)
    rows = np.sort(rng.choice(n, size=max_rows, replace=False))
    hs = min(max(int(round(h * max_rows / n)), p + 1), max_rows)
    loc, cov, start_support = fast_mcd(xs[rows], (hs + 0.5) / max_rows, random_state)
    # C-steps on at most refine_rows rows (10^5 rows pin a scatter down to well under 1 %)
    if n > refine_rows:
        xr = xs[np.sort(rng.choice(n, size=refine_rows, replace=False))]
        hr = min(max(int(round(h * refine_rows / n)), p + 1), refine_rows)
    else:
        xr, hr = xs, h
    best_det, best = np.inf, xs[rows][start_support]
    for _ in range(100):
        dist = _sq_mahalanobis(xr, loc, cov)
        sub = xr[np.argpartition(dist, hr - 1)[:hr]]
        new_loc = sub.mean(axis=0)
        new_cov = np.cov(sub, rowvar=False, ddof=0).reshape(p, p)
        sign, logdet = np.linalg.slogdet(new_cov)
        if sign <= 0 or logdet >= best_det - 1e-12:
            break
        best_det, loc, cov, best = logdet, new_loc, new_cov, sub
    return best


def _sq_mahalanobis(xs: np.ndarray, loc: np.ndarray, cov: np.ndarray) -> np.ndarray:
    # z = L^-1 (x - loc) for every row, as one matrix product
    a = np.linalg.inv(np.linalg.cholesky(cov)).T
    z = xs @ a
    z -= loc @ a
    return np.einsum("ij,ij->i", z, z)


def _rmd_risks(xs: np.ndarray, xms: np.ndarray, cov: np.ndarray, k: float, k2: float) -> dict:
    """risk1, risk2 and their weighted forms: the masked records inside their original's
    interval of k robust Mahalanobis distances (and, for risk2, with no other masked record
    within k2)."""
    n = xs.shape[0]
    centred = xs - xs.mean(axis=0)
    # the inverse times the rows, as R's mahalanobis() computes it: on an ill-conditioned
    # scatter a solve() would round differently from sdcMicro in the 9th digit
    md = np.einsum("ij,ij->i", centred @ np.linalg.inv(cov), centred)
    rmd = np.sqrt(np.maximum(md, 0.0)) * 0.05
    lo = xs - k * rmd[:, None]
    hi = xs + k * rmd[:, None]
    with np.errstate(invalid="ignore"):
        inside = ((xms > lo) & (xms < hi)).any(axis=1)
    w1 = np.flatnonzero(inside)
    if w1.size:
        nearest = _nearest_other(xms, w1, float(k2))
        w2 = w1[nearest > k2]
    else:
        w2 = w1
    return {
        "risk1": float(w1.size / n),
        "risk2": float(w2.size / n),
        "wrisk1": float(w1.size * rmd[w1].sum() / n),
        "wrisk2": float(w2.size * rmd[w2].sum() / n),
        "k": float(k),
        "k2": float(k2),
    }


def _rmd_pair(original, masked) -> tuple[np.ndarray, np.ndarray]:
    """The numeric original and masked tables dRiskRMD compares: no missing value, more rows
    than columns + 1, and a spread in every original column."""
    x, xm = _numeric_pair(original, masked)
    _no_missing(x, "original")
    _no_missing(xm, "masked")
    n, p = x.shape
    if n <= p + 1:
        raise DataError(f"dRiskRMD needs more rows than columns + 1 for a robust covariance; got {n} rows and {p} columns")
    const = np.flatnonzero(x.std(axis=0) == 0)
    if const.size:
        raise DataError(f"original column {int(const[0])} is constant; dRiskRMD needs a spread in every column")
    return x, xm


def _rmd_covariance(xs: np.ndarray, covariance, random_state, support_fraction, max_rows) -> np.ndarray:
    """The robust (MCD) covariance of the scaled original, or the one given; refused where it is
    singular."""
    p = xs.shape[1]
    cov = None
    if covariance is not None:
        cov = np.asarray(covariance, dtype=np.float64)
        if cov.shape != (p, p) or not np.isfinite(cov).all():
            raise ParameterError(f"covariance must be a finite {p} x {p} matrix; got shape {cov.shape}")
    else:
        try:
            with warnings.catch_warnings():
                # scikit-learn warns about rank and determinant; the singular case is reported below
                warnings.simplefilter("ignore", UserWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                cov = _mcd_covariance(xs, random_state, support_fraction, max_rows)
        except (np.linalg.LinAlgError, ValueError):  # ValueError: most rows equal, a zero support scatter
            cov = None
    eig = np.linalg.eigvalsh(cov) if cov is not None else np.zeros(1)
    if cov is None or not eig[0] > 1e-12 * max(eig[-1], 1e-300):
        # sdcMicro stops when solve() fails on an exactly singular scatter and, near it, gives
        # figures that swing with the MCD's random subsets: neither is a measure
        raise DataError("the robust covariance of the original columns is singular (a column is a linear "
                        "combination of others, or most rows lie on a hyperplane); dRiskRMD needs "
                        "linearly independent columns: leave one of the dependent columns out")
    return cov


def drisk_rmd(original, masked, k: float = 0.7, k2: float = 0.05, *, random_state: int = 0,
              mcd_support_fraction: float | None = None, mcd_max_rows: int = 5000,
              covariance=None) -> dict:
    """sdcMicro's ``dRiskRMD`` (RMDID1/RMDID2, Templ and Meindl, PSD 2008), as
    ``dRiskRMDWORK`` in sdcMicro 5.8.0 ``R/dRiskRMD.R`` lines 107-172:

    1. ``x`` = original and ``xm`` = masked, EACH scaled by its own column means and sample sds
       (R ``scale``);
    2. ``rmd_i = 0.05 * sqrt(MD_i)`` with ``MD_i`` the squared Mahalanobis distance of scaled
       original row i from the column means (about 0) under the MCD scatter of the scaled
       original (``robustbase::covMcd(x)$cov``);
    3. record i is at risk (RMDID1) when on ANY column the scaled masked value lies in the open
       interval ``(x_ij - k * rmd_i, x_ij + k * rmd_i)``;
    4. a record at risk stays at risk for RMDID2 when its nearest other masked record (Euclidean,
       scaled masked data) is farther than ``k2``;
    5. with w1 / w2 the records of 3 / 4: ``risk1 = |w1| / n``, ``risk2 = |w2| / n``,
       ``wrisk1 = |w1| * sum(rmd[w1]) / n``, ``wrisk2 = |w2| * sum(rmd[w2]) / n`` (sdcMicro's
       weighting, a count times a sum, kept as written).

    Defaults: ``k = 0.7`` is what sdcMicro's microaggregation summary passes
    (``R/microaggregation.R`` line 1026); ``dRiskRMD``'s own default is ``k = 0.01``.

    The scatter is robustbase ``covMcd``'s (alpha = 1/2, h = (n + p + 1) // 2): the raw MCD
    (the h rows whose scatter has the least determinant) from scikit-learn 1.9's FAST-MCD (reproduced
    step for step in ``incrowd.reporting._mcd``, without importing scikit-learn), then
    robustbase's corrections exactly: the raw scatter (n - 1 divisor) times the consistency
    factor ``.MCDcons(p, h/n)`` and the small-sample factor ``.MCDcnp2(p, n, 1/2)``; the rows
    within the 0.975 chi-square quantile of it reweighted, their scatter (n - 1) times
    ``.MCDcons(p, share kept) * .MCDcnp2.rew(p, n, 1/2)``. robustbase's own fitted factors for
    n up to about 60 (its simulated ``MCDcnp2s`` tables) are not reproduced. Up to
    ``mcd_max_rows`` rows the raw MCD is scikit-learn's on all rows; above, FAST-MCD runs on a
    random sample of ``mcd_max_rows`` rows (``random_state``) and its raw estimate starts
    concentration steps (C-steps, Rousseeuw and Van Driessen 1999) on up to 100,000 rows until
    the determinant stops falling; the corrections and the reweighting use all rows.

    When h rows or more hold one value of a column (h rows on a hyperplane: robustbase's "exact
    fit", found by its first check, the h-th order statistic of a column's absolute deviation from
    its median being 0), the MCD scatter is singular and the measure is withheld without a
    search, as sdcMicro stops there.

    ``covariance`` replaces the MCD by a given scatter matrix of the scaled original (p x p),
    e.g. robustbase's ``covMcd(scale(x))$cov``, to reproduce one sdcMicro run to the digit.

    Agreement with sdcMicro: its MCD starts from random subsets, so its own figures move with
    the seed; incrowd's fall inside the range sdcMicro gives over 20 seeds
    (``tests/data/sdcmicro_drisk_rmd.json``, ``bench/peers/drisk_rmd_seeds.py``). On Census
    (10 columns without PTOTVAL, PEARNVAL, ERNVAL, whose scatter is singular; MDAV k = 3)
    wrisk1 spreads over 37028.70 .. 37064.16 at k = 0.7 (0.1 %) and incrowd gives 37064.157;
    risk1, risk2 and wrisk2 do not move with the seed and agree exactly. On 10,000 Adult rows
    (age, education-num, hours-per-week; MDAV k = 5) sdcMicro gives the same figures for
    every seed and incrowd's equal them (risk1 0.9973 and 0.8514 at k = 0.7 and 0.01). The
    tolerance stated: inside sdcMicro's range over seeds, widened by 1e-6 relative (Census's
    scatter is ill-conditioned: the last digits move with rounding). The nearest other masked
    record is found with a k-d
    tree instead of R's full distance matrix (same distances, n log n instead of n^2 memory).
    """
    if isinstance(mcd_max_rows, bool) or not isinstance(mcd_max_rows, (int, np.integer)) or mcd_max_rows < 100:
        raise ParameterError(f"mcd_max_rows must be an integer >= 100; got {mcd_max_rows!r}")
    for name, v in (("k", k), ("k2", k2)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ParameterError(f"{name} must be a finite number >= 0; got {v!r}")
    x, xm = _rmd_pair(original, masked)
    xs = _scale(x)
    xms = _scale(xm)
    cov = _rmd_covariance(xs, covariance, random_state, mcd_support_fraction, mcd_max_rows)
    return _rmd_risks(xs, xms, cov, k, k2)


# ---------------------------------------------------------------------------------------------
# 4. record linkage


def _standardize_by_original(x: np.ndarray, xm: np.ndarray):
    mean = x.mean(axis=0)
    sd = x.std(axis=0, ddof=1) if x.shape[0] > 1 else np.ones(x.shape[1])
    # a constant original column carries no identifying spread; scale 1 keeps it finite
    sd = np.where(sd > 0, sd, 1.0)
    return (x - mean) / sd, (xm - mean) / sd


def _distance_linkage(xs: np.ndarray, xms: np.ndarray, rows: np.ndarray, rel_tol: float,
                      block_q: int = 256, block_x: int = 32768) -> np.ndarray:
    """Credit of each masked row in ``rows``: 1/t when its own original is among the t originals
    at the nearest Euclidean distance d (all within ``d * (1 + rel_tol)``), else 0.

    Every masked row is compared with ALL originals. Squared distances in the expanded form
    ``|q|^2 + |x|^2 - 2 q.x`` (matrix products) find the candidates within a relative 1e-6 of
    the running minimum plus a margin for the form's rounding; the candidates' distances are
    then recomputed from the differences and the ties judged on those.
    """
    n = xs.shape[0]
    xn = np.einsum("ij,ij->i", xs, xs)
    xn_max = float(xn.max()) if n else 0.0
    out = np.empty(rows.shape[0])
    for a in range(0, rows.shape[0], block_q):
        qi = rows[a:a + block_q]
        q = xms[qi]
        m = qi.shape[0]
        qn = np.einsum("ij,ij->i", q, q)
        slack = 1e-9 * (qn + xn_max + 1.0)
        best = np.full(m, np.inf)
        cand_r, cand_c = [], []
        for b in range(0, n, block_x):
            g = q @ xs[b:b + block_x].T
            g *= -2.0
            g += xn[b:b + block_x]  # squared distance minus |q|^2
            best = np.minimum(best, g.min(axis=1) + qn)
            thr = best * (1.0 + 1e-6) + slack - qn
            r, c = np.nonzero(g <= thr[:, None])
            cand_r.append(r)
            cand_c.append(c + b)
        r = np.concatenate(cand_r)
        c = np.concatenate(cand_c)
        diff = q[r] - xs[c]
        d = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        dmin = np.full(m, np.inf)
        np.minimum.at(dmin, r, d)
        tie = d <= dmin[r] * (1.0 + rel_tol)
        t = np.bincount(r[tie], minlength=m)
        own = np.bincount(r[tie & (c == qi[r])], minlength=m)
        out[a:a + m] = own / t
    return out


# a k-d tree finds nearest neighbours in about log n steps while the dimension is small next to
# log2 n; past about 8 columns a query visits most of the tree, and the blocked scan is faster
TREE_COLUMNS = 8


def _tree_linkage(xs: np.ndarray, xms: np.ndarray, rows: np.ndarray, rel_tol: float) -> np.ndarray:
    """The credit of :func:`_distance_linkage` (same ties), from a k-d tree over the distinct
    original rows: n log n instead of n^2.

    Equal original rows are one point of the tree carrying their count (they are tied at every
    distance), and equal masked rows (a microaggregated group) one query: the nearest points
    and the tie ball depend on the query's values alone, the credit on them and the row's own
    original. A query whose widened tie ball (the nearest distance times
    ``(1 + rel_tol)(1 + 1e-9)``) holds one distinct point is settled at once; the few whose ball
    holds more get those candidates' distances recomputed from the differences and the ties
    judged on them, as the blocked scan does.
    """
    from scipy.spatial import cKDTree

    inverse, first = _distinct_rows(xs)
    unique = xs[first]
    counts = np.bincount(inverse, minlength=first.size)
    tree = cKDTree(unique)
    own = inverse[rows]
    query_of, query_first = _distinct_rows(xms[rows])
    q = xms[rows][query_first]
    d, nearest = tree.query(q, k=1, workers=-1)
    radius = np.nextafter(d * (1.0 + rel_tol) * (1.0 + 1e-9), np.inf)
    inside = tree.query_ball_point(q, radius, return_length=True, workers=-1)
    nearest_of_row = nearest[query_of]
    out = np.where(own == nearest_of_row, 1.0 / counts[nearest_of_row], 0.0)
    crowded = np.flatnonzero(inside > 1)
    if crowded.size:
        share = np.zeros(q.shape[0])
        tied_pairs = []  # query * (distinct originals) + tied original, one per tie
        for i, cand in zip(crowded, tree.query_ball_point(q[crowded], radius[crowded], workers=-1)):
            cand = np.asarray(cand, dtype=np.int64)
            diff = unique[cand] - q[i]
            dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
            tied = cand[dist <= dist.min() * (1.0 + rel_tol)]
            share[i] = 1.0 / counts[tied].sum()
            tied_pairs.append(i * first.size + tied)
        at = np.flatnonzero(np.isin(query_of, crowded))
        own_tied = np.isin(query_of[at] * first.size + own[at], np.concatenate(tied_pairs))
        out[at] = np.where(own_tied, share[query_of[at]], 0.0)
    return out


def _distinct_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct-row number of each row, the first row of each): hashed column by column, O(n p),
    where ``np.unique(axis=0)`` sorts the rows. Numbered in order of first appearance."""
    key = np.zeros(x.shape[0], dtype=np.int64)
    for j in range(x.shape[1]):
        codes, uniques = pd.factorize(x[:, j])
        # key and codes are dense, below n: their pair fits an int64 and is renumbered densely
        key = pd.factorize(key * max(len(uniques), 1) + codes)[0].astype(np.int64)
    return key, first_rows(key)


def first_rows(codes: np.ndarray) -> np.ndarray:
    """The first row of each code, for codes numbered 0, 1, ... in order of first appearance
    (as ``pandas.factorize`` numbers them): a row holds a code first where it exceeds every
    code before it. One pass, where ``np.unique(return_index=True)`` sorts."""
    codes = np.asarray(codes)
    if codes.size == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.empty(codes.size, dtype=bool)
    new[0] = True
    new[1:] = codes[1:] > np.maximum.accumulate(codes)[:-1]
    return np.flatnonzero(new)


def _linkage_credit(xs: np.ndarray, xms: np.ndarray, rows: np.ndarray, rel_tol: float) -> np.ndarray:
    if xs.shape[1] <= TREE_COLUMNS:
        return _tree_linkage(xs, xms, rows, rel_tol)
    return _distance_linkage(xs, xms, rows, rel_tol)


def _assignment_share(xs: np.ndarray, xms: np.ndarray) -> float:
    from scipy.optimize import linear_sum_assignment
    from scipy.spatial.distance import cdist

    cost = cdist(xms, xs)
    rows, cols = linear_sum_assignment(cost)
    return float(np.count_nonzero(rows == cols) / xs.shape[0])


def record_linkage(original, masked, *, max_assignment: int = 5000, sample: int = 2000,
                   random_state: int = 0, repeats: int = 20, global_linkage: bool = True,
                   tie_tolerance: float = 1e-12, max_exact: int | None = None,
                   distance_sample: int = 1000) -> dict:
    """Distance-based and global record linkage of the masked records to the original ones.

    Both tables are standardized with the ORIGINAL's column means and sample sds (a constant
    original column gets scale 1).

    * ``distance_based`` (Domingo-Ferrer and Torra's distance-based record linkage, as in
      sdcMicro's and the SDC literature's DBRL): each masked record is linked to its nearest
      original record (Euclidean); the figure is the share of masked records whose nearest is
      their own row. Ties are shared: a masked record whose nearest distance d is reached by t
      original records (all within ``d * (1 + tie_tolerance)``) counts 1/t when its own row is
      among them, 0 otherwise. Every masked record is compared with ALL originals: with at
      most 8 columns through a k-d tree over the distinct original rows (``scipy.spatial.cKDTree``,
      n log n: a million rows in seconds), with more by blocks of matrix products (n^2 distance
      evaluations; a k-d tree visits most of itself in that many dimensions). For n <=
      ``max_exact`` every masked record is linked (``distance_method = "exact"``); ``max_exact``
      None (the default) means every n with at most 8 columns and n <= 20,000 with more. Above
      it, a random sample of ``distance_sample`` masked records (``random_state``), each still
      against all n originals, gives an unbiased estimate with a 95 % normal confidence interval
      (``distance_ci95``, ``distance_method = "sampled"``).
    * ``global`` (when ``global_linkage``): the one-to-one assignment of masked to original
      records minimizing the total Euclidean distance (``scipy.optimize.linear_sum_assignment``,
      the Hungarian problem); the figure is the share of masked records assigned to their own
      row. sdcMicro 5.8.0 itself has no record-linkage function; this follows the global
      (assignment) linkage of the SDC literature. For n <= ``max_assignment`` it is solved on all
      rows (``method = "exact"``); above, on ``repeats`` random samples of ``sample`` rows
      (same rows of both tables) with a 95 % confidence interval of the mean share over the
      samples (t quantile, ``method = "sampled"``). A sample is an easier linkage problem than
      the whole table (fewer candidates per record), so the sampled share is an upper
      estimate of the full-table share. Ties in the assignment are not shared.
    """
    for name, v, lo in (("max_assignment", max_assignment, 0), ("sample", sample, 2), ("repeats", repeats, 2),
                        ("max_exact", 0 if max_exact is None else max_exact, 0),
                        ("distance_sample", distance_sample, 2)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ParameterError(f"{name} must be an integer >= {lo}; got {v!r}")
    if not (isinstance(tie_tolerance, (int, float)) and 0 <= tie_tolerance < 1e-3):
        raise ParameterError(f"tie_tolerance must be a number in [0, 1e-3); got {tie_tolerance!r}")
    x, xm = _numeric_pair(original, masked)
    _no_missing(x, "original")
    _no_missing(xm, "masked")
    n = x.shape[0]
    if n == 0:
        raise DataError("record linkage needs at least one record")
    xs, xms = _standardize_by_original(x, xm)
    rng = np.random.default_rng(random_state)
    if max_exact is None:
        max_exact = n if x.shape[1] <= TREE_COLUMNS else 20000
    if n <= max_exact:
        credit = _linkage_credit(xs, xms, np.arange(n), float(tie_tolerance))
        out = {"n_records": int(n), "distance_based": float(credit.sum() / n), "distance_method": "exact",
               "distance_rows": int(n)}
    else:
        m = min(int(distance_sample), n)
        rows = np.sort(rng.choice(n, size=m, replace=False))
        credit = _linkage_credit(xs, xms, rows, float(tie_tolerance))
        share = float(credit.mean())
        half = float(1.959963984540054 * credit.std(ddof=1) / math.sqrt(m))
        out = {"n_records": int(n), "distance_based": share, "distance_method": "sampled",
               "distance_rows": int(m), "distance_ci95": [max(0.0, share - half), min(1.0, share + half)]}
    out["tie_tolerance"] = float(tie_tolerance)
    if not global_linkage:
        return out
    if n <= max_assignment:
        out["global"] = {"share": _assignment_share(xs, xms), "method": "exact", "rows": int(n)}
    else:
        out["global"] = _sampled_assignment(xs, xms, rng, int(sample), int(repeats), int(random_state))
    return out


def _sampled_assignment(xs: np.ndarray, xms: np.ndarray, rng: np.random.Generator, sample: int, repeats: int,
                        random_state: int) -> dict:
    """The global linkage's share over ``repeats`` random samples of ``sample`` rows (the same
    rows of both tables), with a 95 % confidence interval of the mean (t quantile)."""
    from scipy.stats import t as student_t

    n = xs.shape[0]
    m = min(sample, n)
    shares = []
    for _ in range(repeats):
        rows = np.sort(rng.choice(n, size=m, replace=False))
        shares.append(_assignment_share(xs[rows], xms[rows]))
    s = np.asarray(shares)
    mean = float(s.mean())
    half = float(student_t.ppf(0.975, s.size - 1) * s.std(ddof=1) / math.sqrt(s.size))
    return {"share": mean, "method": "sampled", "rows": int(m), "repeats": repeats,
            "ci95": [mean - half, mean + half], "random_state": random_state}


# ---------------------------------------------------------------------------------------------
# 5. attribute disclosure


def attribute_disclosure(release: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: Sequence[str],
                         reference: pd.DataFrame | None = None) -> dict:
    """Attribute disclosure per sensitive column, over the classes of equal quasi-identifier
    values (a missing value is a value of its own in the quasi-identifiers; sensitive values
    count as :func:`incrowd.values.sensitive_keys` says, as in the release's verifiers):

    the figures of distinct l-diversity, entropy l-diversity and t-closeness per column, and the
    share of records in classes with a single sensitive value, as
    :func:`incrowd.privacy.attribute_disclosure_of_classes` defines them.

    Returns ``{column: {...}}``.
    """
    if not isinstance(release, pd.DataFrame):
        raise ParameterError(f"release must be a pandas DataFrame; got {type(release).__name__}")
    qis = list(quasi_identifiers)
    sens = [sensitive] if isinstance(sensitive, str) else list(sensitive)
    missing = [c for c in [*qis, *sens] if c not in release.columns]
    if missing:
        raise DataError(f"unknown column(s) {name_list(missing)}; release has {name_list(release.columns)}")
    if reference is not None:
        absent = [c for c in sens if c not in reference.columns]
        if absent:
            raise DataError(f"unknown column(s) {name_list(absent)} in the reference; it has {name_list(reference.columns)}")
    return attribute_disclosure_of_classes(release, _class_codes(release[qis]), sens, reference)
