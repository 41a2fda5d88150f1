"""Utility measures of a release against its original, one dict of named figures per call.

Rows are aligned by position (row i of the release is row i of the original). Every function
returns a JSON-ready dict: plain floats, ints, lists and ``None`` where a figure is undefined
(a constant column's correlation, an eigenvalue ratio over a zero eigenvalue).
"""

from __future__ import annotations

import warnings
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError
from ..publishing import categorical_ncp
from ._align import cell_text, column_cells, file_value_labels, user_missing_codes

SUPPRESSED_LABEL = "*"


def _number(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def _numeric_matrix(values, names: Sequence[str], what: str) -> np.ndarray:
    if isinstance(values, pd.DataFrame):
        columns = list(values.columns)
        bad = [c for c in columns if not _is_number(values[c])]
        if bad:
            raise DataError(f"{what} column {bad[0]!r} is not numeric; numeric utility needs numbers")
        values = values.to_numpy(np.float64)
    arr = np.asarray(values)
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.ndim != 2:
        raise ParameterError(f"{what} must be a table (rows x columns); got {arr.ndim} dimensions")
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64, copy=False)
    for j in range(arr.shape[1]):
        try:
            arr[:, j].astype(np.float64)
        except (TypeError, ValueError):
            name = names[j] if j < len(names) else f"column {j + 1}"
            raise DataError(f"{what} column {name!r} is not numeric; numeric utility needs numbers") from None
    return arr.astype(np.float64)


def _check_pair(original, masked, names) -> tuple[np.ndarray, np.ndarray, list[str]]:
    names = list(names)
    X = _numeric_matrix(original, names, "original")
    Y = _numeric_matrix(masked, names, "release")
    if X.shape != Y.shape:
        raise DataError(f"original has shape {X.shape} and release {Y.shape}; rows and columns must align")
    if len(names) != X.shape[1]:
        raise ParameterError(f"names has {len(names)} entries for {X.shape[1]} columns")
    if np.isinf(X).any() or np.isinf(Y).any():
        raise DataError("numeric utility needs finite values (NaN marks a missing one)")
    return X, Y, names


def information_loss_pairwise(original: np.ndarray, masked: np.ndarray) -> float:
    """IL = SSE/SST on data standardized with the original's mean and population sd.

    SSE = sum over cells of (z_original - z_release)^2, SST = sum of z_original^2, the same
    standardization as :func:`incrowd.microaggregation.information_loss` (Thaeter & Reischuk
    (2021), Def. 4, Thaeter & Reischuk (2018) Def. 1.5): for a microaggregated release, where
    each row is published as its group mean, the two agree. A constant original column gets
    scale 1 (as the microaggregation does); a cell missing on either side is left out of SSE, one
    missing in the original out of SST. 0 when every original column is constant.
    """
    X = np.asarray(original, dtype=np.float64)
    Y = np.asarray(masked, dtype=np.float64)
    if X.size == 0:
        return 0.0
    if np.isfinite(X).all() and np.isfinite(Y).all():
        from ..values import Standardizer

        with warnings.catch_warnings():  # a constant column is reported by the report itself
            warnings.simplefilter("ignore")
            st = Standardizer.fit(X)
        Zx = st.transform(X)
        sst = float(np.einsum("ij,ij->", Zx, Zx))
        if sst == 0.0:
            return 0.0
        D = Zx
        D -= st.transform(Y)  # in place: two n x m temporaries, not four
        return float(np.einsum("ij,ij->", D, D)) / sst
    else:
        mean = np.nanmean(X, axis=0)
        sd = np.nanstd(X, axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        Zx, Zy = (X - mean) / sd, (Y - mean) / sd
    present = ~np.isnan(Zx)
    sst = float(np.sum(np.where(present, Zx, 0.0) ** 2))
    if sst == 0.0:
        return 0.0
    both = present & ~np.isnan(Zy)
    sse = float(np.sum(np.where(both, Zx - Zy, 0.0) ** 2))
    return sse / sst


def information_loss_all_rows(original: np.ndarray, released: np.ndarray, kept: np.ndarray,
                              names: Sequence[str]) -> dict:
    """IL over ALL original rows, the release summary's ``numeric_information_loss``:
    SSE/SST with every column standardized by the original's mean and sd over all rows; a
    published cell loses its squared difference from the original, a suppressed row its squared
    distance from the mean (all of it). Cells missing on either side are left out.

    Parameters
    ----------
    original : every original row's numeric quasi-identifiers (n x p, NaN missing)
    released : the release's values of the same columns, one row per ``kept`` position
    kept : the original row of each release row
    names : the column names

    Returns
    -------
    dict
        ``il_all_rows`` (0 nothing lost, 1 as if every row were published as the mean) and
        ``il_column_share``: per column its share of the SSE (sums to 1 when anything is lost).
    """
    X = np.asarray(original, dtype=np.float64)
    Y = np.asarray(released, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(X, axis=0)
        sd = np.nanstd(X, axis=0)
    sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
    Z = (X - mean) / sd
    present = ~np.isnan(Z)
    sst = np.where(present, Z, 0.0) ** 2
    lost = sst.copy()  # a suppressed row loses all of it
    D = Z[kept] - (Y - mean) / sd
    lost[kept] = np.where(np.isnan(D), 0.0, D) ** 2
    sse_col = lost.sum(axis=0)
    total_sst, total_sse = float(sst.sum()), float(sse_col.sum())
    share = {str(c): (float(v / total_sse) if total_sse > 0 else 0.0) for c, v in zip(names, sse_col)}
    return {"il_all_rows": total_sse / total_sst if total_sst > 0 else 0.0, "il_column_share": share}


def il1s(original: np.ndarray, masked: np.ndarray) -> float:
    """sdcMicro's IL1s: sum over cells of |x - xm| / (sd(x) * sqrt(2)).

    As ``dUtility(x, xm, method = "IL1s")`` computes it (sdcMicro 5.8.0, R/dUtility.R lines
    112-119; Mateo-Sanz, Sebe, Domingo-Ferrer, PSD 2004): ``sd`` is R's sample standard deviation
    (n - 1) of the original column, missing values are left out, and the sum is not divided by
    the number of cells (see :func:`numeric_utility`'s ``il1s_mean`` for that). A constant
    original column gives 0/0 or x/0 there; here such a column is left out (its cells carry no
    spread to scale by) rather than turning the figure into NaN or infinity, and so is one whose
    spread underflows (values near 1e-200 apart: a standard deviation of 0).
    """
    X = np.asarray(original, dtype=np.float64)
    Y = np.asarray(masked, dtype=np.float64)
    if X.shape[0] > 1 and not (np.isnan(X).any() or np.isnan(Y).any()):
        sd = X.std(axis=0, ddof=1)
        # a spread too small for its square to be a double (sd 0 although max > min) scales nothing
        spread = (X.max(axis=0) > X.min(axis=0)) & np.isfinite(sd) & (sd > 0)
        A = np.abs(X[:, spread] - Y[:, spread])
        return float(np.sum(A.sum(axis=0) / (sd[spread] * np.sqrt(2.0))))
    total = 0.0
    for j in range(X.shape[1]):
        x = X[:, j]
        sd = np.nanstd(x, ddof=1) if np.count_nonzero(~np.isnan(x)) > 1 else np.nan
        if not (np.isfinite(sd) and sd > 0 and np.nanmax(x) > np.nanmin(x)):
            continue
        total += float(np.nansum(np.abs(x - Y[:, j]) / (sd * np.sqrt(2.0))))
    return total


def il1(original: np.ndarray, masked: np.ndarray) -> float:
    """sdcMicro's IL1: 100 * sum over cells of |x - xm| / |x|.

    As ``dUtility(x, xm, method = "IL1")`` computes it (sdcMicro 5.8.0, R/dUtility.R lines
    95-103): a cell whose original value is 0 gives Inf (or NaN when unchanged) there, and both
    are dropped from the sum.
    """
    X = np.asarray(original, dtype=np.float64)
    Y = np.asarray(masked, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # overflow: inf, dropped as R drops it
        a = 100.0 * np.abs(X - Y) / np.abs(X)
    return float(np.sum(a[np.isfinite(a)]))


def covariance(X: np.ndarray) -> np.ndarray:
    """Sample covariance matrix (n - 1), pairwise-complete where values are missing (as R's
    ``var(x, use = "pairwise.complete.obs")`` and pandas' ``DataFrame.cov``); NaN where fewer
    than two pairs exist. Without missing values numpy's (BLAS) product does the work."""
    if X.shape[0] < 2:
        return np.full((X.shape[1], X.shape[1]), np.nan)
    if not np.isnan(X).any():
        C = X - X.mean(axis=0)
        return (C.T @ C) / (X.shape[0] - 1)
    return pd.DataFrame(X).cov(min_periods=2).to_numpy()


def correlation(X: np.ndarray, cov: np.ndarray | None = None) -> np.ndarray:
    """Pearson correlation matrix, pairwise-complete as :func:`covariance`; NaN for a constant
    column (exactly constant: max == min). ``cov``: ``covariance(X)``, when computed already."""
    if X.shape[0] < 2:
        return np.full((X.shape[1], X.shape[1]), np.nan)
    if np.isnan(X).any():
        return pd.DataFrame(X).corr(min_periods=2).to_numpy()
    return correlation_of(covariance(X) if cov is None else cov, X.max(axis=0) > X.min(axis=0))


def correlation_of(C: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """The correlation matrix of a covariance matrix ``C`` (no missing values), NaN for a column
    without ``spread`` (max == min)."""
    sd = np.where(spread, np.sqrt(np.diag(C)), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        R = C / np.outer(sd, sd)
    R = np.clip(R, -1.0, 1.0)
    np.fill_diagonal(R, np.where(np.isfinite(sd), 1.0, np.nan))
    return R


def _r_scaled_covariance(X: np.ndarray) -> np.ndarray:
    """R's ``var(scale(x), use = "pairwise.complete.obs")``: columns centred and divided by their
    sample sd (missing values left out), then pairwise-complete sample covariances. Without
    missing values that is the correlation matrix (equal up to rounding)."""
    if not np.isnan(X).any():
        return correlation(X)
    mean = np.nanmean(X, axis=0)
    sd = np.nanstd(X, axis=0, ddof=1)
    # R's mean refines its sum, so an all-equal column is exactly constant there (sd 0, then NA);
    # numpy's may leave a rounding spread behind, which must not pass for a real one
    constant = ~(np.nanmax(X, axis=0) > np.nanmin(X, axis=0)) if X.shape[0] else np.ones(X.shape[1], bool)
    sd = np.where(constant, np.nan, sd)
    with np.errstate(divide="ignore", invalid="ignore"):
        Z = (X - mean) / sd
    return covariance(Z)


def _eigenvalues(original: np.ndarray, masked: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Eigenvalues (decreasing) of both sides' ``var(scale(.))``; None where one is undefined."""
    X = np.asarray(original, dtype=np.float64)
    Y = np.asarray(masked, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        C1, C2 = _r_scaled_covariance(X), _r_scaled_covariance(Y)
    return _eigen_pair(C1, C2)


def _eigen_pair(C1: np.ndarray, C2: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    if not (np.isfinite(C1).all() and np.isfinite(C2).all()):
        return None
    return np.sort(np.linalg.eigvalsh(C1))[::-1], np.sort(np.linalg.eigvalsh(C2))[::-1]


def singular_tolerance(e1: np.ndarray) -> float:
    """Below this an eigenvalue of the original is zero to working precision (the tolerance of
    ``numpy.linalg.matrix_rank``: largest eigenvalue * dimension * machine epsilon)."""
    return float(np.max(np.abs(e1)) * e1.size * np.finfo(np.float64).eps) if e1.size else 0.0


def eigen_difference(original: np.ndarray, masked: np.ndarray) -> float | None:
    """sdcMicro's eigenvalue measure: sum_i |e1_i - e2_i| / e1_i.

    As ``dUtility(x, xm, method = "eigen")`` computes it (sdcMicro 5.8.0, R/dUtility.R lines
    120-128): e1 and e2 are the eigenvalues, in decreasing order, of ``var(scale(x))`` and
    ``var(scale(xm))``, i.e. of the correlation matrices of the original and of the release
    (each standardized with its own mean and sample sd; pairwise-complete observations). Where R
    fails (a constant column, so a correlation is undefined) it returns NA; here ``None``.

    Also ``None`` where the original's correlation matrix is singular to working precision (an
    eigenvalue below :func:`singular_tolerance`, e.g. a column that is the sum of others): the
    term over that eigenvalue divides rounding noise by rounding noise, so R's figure depends on
    the last bits of its arithmetic (Census gives 0.26 in R for what numpy computes as 6.2, and a
    negative "difference" at k = 5). :func:`eigen_difference_nonsingular` is the sum over the
    other eigenvalues.
    """
    return _eigen_from(_eigenvalues(original, masked))


def _eigen_from(pair) -> float | None:
    if pair is None:
        return None
    e1, e2 = pair
    if e1.size == 0 or e1[-1] <= singular_tolerance(e1):
        return None
    d = float(np.sum(np.abs(e1 - e2) / e1))
    return d if np.isfinite(d) else None


def eigen_difference_nonsingular(original: np.ndarray, masked: np.ndarray) -> tuple[float | None, int]:
    """(sdcMicro's eigen sum over the eigenvalues of the original above
    :func:`singular_tolerance`, how many were left out). Equals :func:`eigen_difference` when
    none is left out."""
    return _eigen_nonsingular_from(_eigenvalues(original, masked))


def _eigen_nonsingular_from(pair) -> tuple[float | None, int]:
    if pair is None:
        return None, 0
    e1, e2 = pair
    keep = e1 > singular_tolerance(e1)
    d = float(np.sum(np.abs(e1[keep] - e2[keep]) / e1[keep]))
    return (d if np.isfinite(d) else None), int(np.count_nonzero(~keep))


def _off_diagonal_summary(A: np.ndarray, B: np.ndarray) -> dict:
    p = A.shape[0]
    iu = np.triu_indices(p, 1)
    diff = np.abs(B[iu] - A[iu])
    diff = diff[np.isfinite(diff)]
    return {
        "max_abs_diff": _number(diff.max()) if diff.size else None,
        "mean_abs_diff": _number(diff.mean()) if diff.size else None,
        "original": [[_number(v) for v in row] for row in A],
        "release": [[_number(v) for v in row] for row in B],
    }


def _per_qi(X: np.ndarray, Y: np.ndarray, names: list[str], cov_x: np.ndarray, cov_y: np.ndarray) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if not (np.isnan(X).any() or np.isnan(Y).any()):  # the covariance pass has the variances already
            return per_qi_figures(X.mean(axis=0), Y.mean(axis=0), np.diag(cov_x), np.diag(cov_y), names)
        return per_qi_figures(np.nanmean(X, axis=0), np.nanmean(Y, axis=0), np.nanvar(X, axis=0, ddof=1),
                              np.nanvar(Y, axis=0, ddof=1), names)


def per_qi_figures(means_x: np.ndarray, means_y: np.ndarray, var_x: np.ndarray, var_y: np.ndarray,
                   names: list[str]) -> dict:
    """``per_qi`` of :func:`numeric_utility` from each column's means and sample variances."""
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for j, name in enumerate(names):
            mx, my, vx, vy = means_x[j], means_y[j], var_x[j], var_y[j]
            out[name] = {
                "mean_original": _number(mx), "mean_release": _number(my),
                "mean_diff": _number(my - mx),
                "mean_rel_diff": _number((my - mx) / abs(mx)) if mx != 0 else None,
                "var_original": _number(vx), "var_release": _number(vy),
                "var_diff": _number(vy - vx),
                "var_rel_diff": _number((vy - vx) / vx) if vx != 0 else None,
            }
    return out


def numeric_utility(original: np.ndarray, masked: np.ndarray, names: list[str]) -> dict:
    """Utility of a numeric release (``masked``) against the ``original``, rows aligned.

    - ``il``: SSE/SST on the original's standardization (:func:`information_loss_pairwise`);
    - ``il1s``: sdcMicro's IL1s (R/dUtility.R, :func:`il1s`); ``il1s_mean``: the same divided by
      the number of cells (sdcMicro's former "IL1old" normalization, comparable across sizes);
    - ``il1``: sdcMicro's IL1 in percent (:func:`il1`);
    - ``eigen``: sdcMicro's eigenvalue measure on the correlation matrices
      (:func:`eigen_difference`), ``None`` where undefined or where the original's correlation
      matrix is singular; ``eigen_nonsingular`` the same sum over the original's eigenvalues
      that are not zero to working precision, ``eigen_dropped`` how many were left out;
    - ``per_qi``: per column the means and sample variances (n - 1) of both, their difference
      (release - original) and relative difference (over |original|; ``None`` when that is 0);
    - ``covariance`` and ``correlation``: both matrices (sample covariance; Pearson correlation,
      ``None`` for a constant column's entries) and the max and mean absolute difference of their
      off-diagonal entries (upper triangle; ``None`` with a single column).

    Missing values (NaN) are left out cell by cell (pairwise for the matrices).
    """
    X, Y, names = _check_pair(original, masked, names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cov_x, cov_y = covariance(X), covariance(Y)
        cor_x, cor_y = correlation(X, cov_x), correlation(Y, cov_y)
    value = il1s(X, Y)
    if np.isnan(X).any() or np.isnan(Y).any():
        eigen_pair = _eigenvalues(X, Y)
    else:  # R's var(scale(x)) is the correlation matrix, computed above
        eigen_pair = _eigen_pair(cor_x, cor_y)
    cells = int(np.count_nonzero(~np.isnan(X) & ~np.isnan(Y)))
    return numeric_figures(int(X.shape[0]), names, information_loss_pairwise(X, Y), value, cells, il1(X, Y),
                           eigen_pair, _per_qi(X, Y, names, cov_x, cov_y), (cov_x, cov_y), (cor_x, cor_y))


def numeric_figures(rows: int, names: list[str], il: float, il1s_sum: float, cells: int, il1_sum: float,
                    eigen_pair, per_qi: dict, covariances: tuple, correlations: tuple) -> dict:
    """:func:`numeric_utility`'s dict from its parts (also as the Dask backend combines them from
    the partitions' sums)."""
    eig_ns, eig_dropped = _eigen_nonsingular_from(eigen_pair)
    return {
        "n_rows": rows,
        "quasi_identifiers": names,
        "il": il,
        "il1s": il1s_sum,
        "il1s_mean": il1s_sum / cells if cells else 0.0,
        "il1": il1_sum,
        "eigen": _eigen_from(eigen_pair),
        "eigen_nonsingular": eig_ns,
        "eigen_dropped": eig_dropped,
        "per_qi": per_qi,
        "covariance": _off_diagonal_summary(*covariances),
        "correlation": _off_diagonal_summary(*correlations),
    }


# --- categorical quasi-identifiers -----------------------------------------------------------

def _as_labels(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(the values as the strings a hierarchy file holds, missing mask)."""
    from ..generalization import value_labels

    missing = column.isna().to_numpy()
    out = np.empty(column.size, dtype=object)
    if (~missing).any():
        # numbers held as objects (a release column with its suppressed rows filled in) are
        # spelled as numbers, as the hierarchy holds them: 2.0 is '2'
        out[~missing] = value_labels(column[~missing].reset_index(drop=True).infer_objects())
    return out, missing


def _by_value(dtype) -> bool:
    """Whether equal values of this dtype always spell alike, so that a column can be spelled
    once per distinct value (text, integers, booleans; floats by their bits, as -0.0 is 0.0 to
    a hash but not to ``repr``). Objects (a mix of types: 1 and True are one hash key but two
    spellings), categoricals and nullable types are spelled row by row."""
    return isinstance(dtype, pd.StringDtype) or (isinstance(dtype, np.dtype) and dtype.kind in "biuf")


def _coded_labels(column: pd.Series, as_objects: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(code per row, -1 where missing; each code's label; each code's value, or None): see
    :func:`_coded_cells`; a labelled file's user-missing cells are values (:func:`_with_user_missing`)."""
    return _with_user_missing(column, *_coded_cells(column, as_objects))


def _coded_cells(column: pd.Series, as_objects: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(code per row, -1 where missing; each code's label as :func:`_as_labels` spells it; each
    code's value in the column's dtype, or None where the column is spelled row by row).

    Where the dtype allows (:func:`_by_value`) only the distinct values are spelled, not every
    row: the spelling of a column depends on the set of its values (a float column of whole
    numbers is spelled as integers), which its distinct values share. Two codes may carry one
    label (7 and 7.0 in an object column). ``as_objects``: spell as the column turned into
    Python objects would be (a release column with its suppressed rows filled in)."""
    from ..generalization import value_labels

    if _by_value(column.dtype):
        if column.dtype.kind == "f":
            values = column.to_numpy(np.float64)
            present = ~np.isnan(values)
            codes = np.full(values.size, -1, dtype=np.int64)
            found, bits = pd.factorize(values[present].view(np.int64))
            codes[present] = found
            distinct = np.asarray(bits, dtype=np.int64).view(np.float64)
        else:
            # a missing cell is code -1
            codes, distinct = pd.factorize(column, use_na_sentinel=True)
            codes = np.asarray(codes, dtype=np.int64)
            distinct = np.asarray(distinct, dtype=object) if isinstance(column.dtype, pd.StringDtype) else \
                np.asarray(distinct)
        spelled = value_labels(pd.Series(distinct, dtype=column.dtype)) if len(distinct) else np.zeros(0, object)
        return codes, np.asarray(spelled, dtype=object), distinct
    labels, missing = _as_labels(column.astype(object) if as_objects else column)
    codes = np.full(column.shape[0], -1, dtype=np.int64)
    found, spelled = pd.factorize(labels[~missing])
    codes[~missing] = found
    return codes, np.asarray(spelled, dtype=object), None


def _with_user_missing(column: pd.Series, codes: np.ndarray, spelled: np.ndarray, distinct: np.ndarray | None
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`_coded_labels` with a labelled file's user-missing cells (SPSS 9 "Not stated", read
    as a NaN carrying its code: :mod:`incrowd.io`) as the values they are, spelled as the code, not
    as missing: the file shows them, publish treats them as values, and a blank is another thing."""
    found = user_missing_codes(column)
    if found is None:
        return codes, spelled, distinct
    index, missing_codes = found
    used = [int(i) for i in np.unique(index[index >= 0])]
    from ..generalization import value_labels

    numbers = [missing_codes[i] for i in used if not isinstance(missing_codes[i], str)]
    # spelled with the column's values, as a float column of whole numbers spells 9.0 as '9'
    present = distinct if distinct is not None else np.zeros(0)
    both = value_labels(pd.Series(np.concatenate([np.asarray(present, dtype=np.float64),
                                                  np.asarray(numbers, dtype=np.float64)]), dtype=np.float64))
    by_code = dict(zip(numbers, list(both)[len(present):]))
    codes = codes.copy()
    extra_words: list[str] = []
    extra_values: list[float] = []
    for i in used:
        code = missing_codes[i]
        codes[index == i] = len(spelled) + len(extra_words)
        extra_words.append(f".{code}" if isinstance(code, str) else str(by_code[code]))
        extra_values.append(np.nan if isinstance(code, str) else float(code))
    spelled = np.concatenate([np.asarray(spelled, dtype=object), np.asarray(extra_words, dtype=object)])
    if distinct is not None:
        distinct = np.concatenate([np.asarray(distinct, dtype=np.float64), np.asarray(extra_values)])
    return codes, spelled, distinct


class _Vocabulary:
    """The labels of both sides of one column as one set of numbers: equal text, equal number."""

    def __init__(self, *labels: np.ndarray) -> None:
        extra = np.asarray([SUPPRESSED_LABEL, MISSING_SHOWN], dtype=object)
        ids, self.words = pd.factorize(np.concatenate([*(np.asarray(x, dtype=object) for x in labels), extra]))
        ids = np.asarray(ids, dtype=np.int64)
        self.star, self.missing = int(ids[-2]), int(ids[-1])
        self.maps, at = [], 0
        for x in labels:
            self.maps.append(ids[at:at + len(x)])
            at += len(x)

    def of(self, side: int, codes: np.ndarray, missing_as: int) -> np.ndarray:
        """Per row, the number of its label (``missing_as`` where the code is -1)."""
        return np.append(self.maps[side], missing_as)[codes]

    def word(self, i) -> str:
        return str(self.words[int(i)])


#: how the frequency tables show an original cell that is missing
MISSING_SHOWN = "(missing)"


def _published_levels(hierarchy, original: pd.Series, distinct: tuple[np.ndarray, np.ndarray] | None,
                      published: np.ndarray, vocabulary: _Vocabulary, rows: np.ndarray, name: str,
                      labels: Mapping[str, str] | None = None, one_level: bool = False
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the given rows, as distinct (original, published) pairs: ``(pair of each row, level of
    each pair, the original's level-0 code of each pair)``; the level is the lowest one whose
    label of the original value is the published label (-1 where none is: a suppressed cell).
    ``published``: the published label of every row as a number of ``vocabulary``;
    ``distinct`` (the original's code per row and its distinct values, where :func:`_by_value`
    allows): each distinct value meets the hierarchy once. ``labels`` (a labelled file's codes,
    spelled as the published values are, to their value labels): a published code meets the
    hierarchy by its spelling or by its label, as the release was written from either. A label
    that reads at several levels is one node, the highest its rows need; ``one_level`` (the
    release generalized the column to one level, as publish's generalize-then-microaggregate
    does): the highest any row of the column needs."""
    from ..generalization import encode_cells  # missing cells as the release met them

    pub = published[rows]
    size = max(len(vocabulary.words), 1)
    level0 = None
    if distinct is not None and not original.attrs.get("statfile"):
        # how a cell meets level 0 depends on its value and on the set of values met (a missing
        # cell's row): the distinct values of these rows are that set
        row_codes, values = distinct
        row_codes = row_codes[rows]
        used = np.flatnonzero(np.bincount(row_codes, minlength=len(values)))
        try:
            encoded = encode_cells(hierarchy, pd.Series(values[used], dtype=original.dtype, name=original.name))
        except DataError:
            encoded = None  # said again below, naming the row as it stands in the file
        if encoded is not None:
            level0 = np.zeros(len(values), dtype=np.int64)
            level0[used] = encoded
            original_key = row_codes.astype(np.int64)
    if level0 is None:
        original_key = np.asarray(encode_cells(hierarchy, original[rows].reset_index(drop=True)), dtype=np.int64)
    # resolved once per distinct (original, published) pair, not once per row; hashed, not
    # sorted: each pair's level is resolved alone, so their order does not matter
    inverse, pairs = pd.factorize(original_key * size + pub, sort=False)
    pairs = np.asarray(pairs, dtype=np.int64)
    pair_code0 = pairs // size if level0 is None else level0[pairs // size]
    pair_pub = np.asarray(vocabulary.words, dtype=object)[pairs % size].astype(str)
    pair_label = np.array([labels.get(p, p) for p in pair_pub], dtype=object).astype(str) if labels else pair_pub
    pair_level = np.full(pairs.size, -1, dtype=np.int64)
    for L in range(hierarchy.depth):
        at_level = hierarchy.labels[L].astype(str)[hierarchy.code_map(L)[pair_code0]]
        pair_level[(pair_level < 0) & ((at_level == pair_pub) | (at_level == pair_label))] = L
    # one published label is one node of the hierarchy: where its rows need different levels
    # (the group "Child" over Child and Grandchild, named as one of its values), every row of it
    # is at the highest, as far as the original's ancestor there still carries that label; with
    # one level per column, every label is at the highest level any row needs
    pair_word = np.zeros(pairs.size, dtype=np.int64) if one_level else pairs % size
    found = pair_level >= 0
    if one_level:
        # a blanked cell reads as the top "*": the column's level is the one its published
        # values need, unless "*" is all it publishes (the column generalized to its top)
        valued = found & (pair_pub != SUPPRESSED_LABEL) & (pair_label != SUPPRESSED_LABEL)
        found = valued if valued.any() else found
    if found.any():
        highest = np.full(size, -1, dtype=np.int64)
        np.maximum.at(highest, pair_word[found], pair_level[found])
        wanted = np.where(found, highest[pair_word], -1)
        for L in np.unique(wanted[wanted > pair_level]):
            at = (wanted == L) & (wanted > pair_level)
            label = hierarchy.labels[int(L)].astype(str)[hierarchy.code_map(int(L))[pair_code0[at]]]
            carries = (label == pair_pub[at]) | (label == pair_label[at])
            pair_level[np.flatnonzero(at)[carries]] = L
    inverse = np.asarray(inverse).ravel()
    stray = (pair_level < 0) & (pair_pub != SUPPRESSED_LABEL) & (pair_label != SUPPRESSED_LABEL)
    if stray.any():
        raise _not_a_generalization(int(np.flatnonzero(stray[inverse])[0]), hierarchy, original, pub, vocabulary,
                                    rows, name, labels)
    return inverse, pair_level, pair_code0


def _not_a_generalization(i: int, hierarchy, original: pd.Series, pub: np.ndarray, vocabulary: _Vocabulary,
                          rows: np.ndarray, name: str, labels: Mapping[str, str] | None) -> DataError:
    """The error naming the row (the ``i``-th of ``rows``) whose published value no level of the
    hierarchy gives for its original."""
    word = vocabulary.word(pub[i])
    label = (labels or {}).get(word)
    # a labelled file's code is shown with its label: the curator recognises the band, not the code
    shown = f"{word!r} (labelled {label!r})" if label is not None and label != word else repr(word)
    return DataError(
        f"column {name!r}, data row {int(rows[i]) + 1}: published value {shown} is not a "
        f"generalization of the original {cell_text(original.iloc[int(rows[i])])!r} in hierarchy "
        f"{hierarchy.source}"
    )


def _spelled_labels(labels: Mapping | None) -> dict[str, str] | None:
    """A column's value labels keyed by their codes spelled as :func:`_as_labels` spells values."""
    if not labels:
        return None
    from ..generalization import value_labels as spell

    codes = list(labels)
    return dict(zip(spell(pd.Series(codes, dtype=object).infer_objects()), (str(labels[c]) for c in codes)))


def categorical_utility(original: pd.DataFrame, release: pd.DataFrame, hierarchies: Mapping | None,
                        suppressed: np.ndarray | None, value_labels: Mapping[str, Mapping] | None = None,
                        one_level: bool = False) -> dict:
    """Utility of a generalized (and suppressed) release of categorical quasi-identifiers.

    ``original`` and ``release`` hold the same rows in the same order, suppressed rows included
    (``suppressed``: one boolean per row, True where the whole row was withheld); the columns
    assessed are the release's. A cell published as ``*`` or missing is a suppressed cell.

    - ``suppressed_rows``, ``suppressed_share``: rows withheld, over all rows;
    - ``changed_share``: per column the share of PUBLISHED rows whose value differs from the
      original (a suppressed cell counts as changed; a withheld row is counted once, in
      ``suppressed_share``, not in every column): a column published unchanged has 0;
    - ``suppressed_cells``: per column the published rows whose cell is suppressed;
    - ``frequencies``: per column the most frequent values, counted in the original (all rows)
      and in the release (published rows), the rest summed in one row;
    - ``height`` (with a hierarchy for the column): mean over the published rows of the level of
      the published label over the hierarchy's top level (a suppressed cell counts as the top);
      the level is the lowest one at which the original value's ancestor is the published label;
      ``mean_height`` averages the columns that have one;
    - ``ncp``: normalized certainty penalty (Xu, Wang, Pei, Wang, Shi, Fu, "Utility-based
      anonymization using local recoding", KDD 2006, Sect. 2.2): a published value u costs
      card(u)/|A|, where card(u) is the number of original (level-0) values u covers and |A| the
      number of level-0 values of the hierarchy; 0 when card(u) = 1 (ungeneralized); a
      suppressed cell costs 1. Averaged over the published rows per column (a column published
      unchanged has 0), then over columns (``mean_ncp``). A column without hierarchy costs 0
      unchanged and 1 suppressed; where it was recoded otherwise its NCP is ``None`` (the
      coverage of the new value is unknown: give its hierarchy) and it is left out of the mean.
      ``mean_ncp_columns`` names the columns the mean covers, ``ncp_undefined`` the others.
      ``value_labels`` (per column, a labelled file's codes to their labels): a generalized
      group stored as a new code is read as its label.
      ``mean_ncp_all_rows``: the same mean with every withheld row costing 1 in every column,
      over all rows (the release summary's ``categorical_ncp``: the NCP of a column with a
      hierarchy is that of :func:`incrowd.publishing.categorical_ncp`). Rows whose original value
      is missing are left out of height and NCP; a labelled file's user-missing code (9 "Not
      stated") is a value, not missing, on both sides. A published label is one node of the
      hierarchy, the highest its rows need; ``one_level`` (a release of one level per column,
      publish's generalize-then-microaggregate): the highest any row of the column needs.
    """
    if not isinstance(original, pd.DataFrame) or not isinstance(release, pd.DataFrame):
        raise ParameterError("original and release must be DataFrames")
    n = len(original)
    if len(release) != n:
        raise DataError(f"original has {n} rows and release {len(release)}; rows must align")
    missing_cols = [c for c in release.columns if c not in original.columns]
    if missing_cols:
        raise DataError(f"release column {missing_cols[0]!r} is not in the original")
    _check_hierarchies(hierarchies, release.columns)
    withheld = np.zeros(n, dtype=bool) if suppressed is None else np.asarray(suppressed, dtype=bool).ravel()
    if withheld.size != n:
        raise ParameterError(f"suppressed must hold one flag per row ({n}); got {withheld.size}")
    # a withheld row's cells are never read: it counts once, in suppressed_share
    published = {name: _coded_labels(release[name].reset_index(drop=True))[:2] for name in release.columns}
    return _categorical(original, published, hierarchies, withheld, value_labels, one_level)


def categorical_utility_of_release(original: pd.DataFrame, release: pd.DataFrame, kept: np.ndarray,
                                   hierarchies: Mapping | None,
                                   value_labels: Mapping[str, Mapping] | None = None,
                                   one_level: bool = False, suppression: str = "rows") -> dict:
    """:func:`categorical_utility` of a release that holds only the published rows, ``kept``
    giving the original row of each (every column of ``release`` is measured): the same figures
    as on the release with its withheld rows filled in as missing, without building it.

    ``suppression``: "cells" for a release made by local suppression, where a suppressed cell
    is a blank (missing where the original had a value) and a ``*`` is a generalization (a
    column at its hierarchy's top), as publish's summary counts ``suppressed_cells``; with
    "rows" a ``*`` is a suppressed cell too. Height and NCP cost both alike."""
    published, withheld = _published_codes(original, release, kept)
    return _categorical(original, published, hierarchies, withheld, value_labels, one_level, suppression)


def categorical_tallies_of_release(original: pd.DataFrame, release: pd.DataFrame, kept: np.ndarray,
                                   value_labels: Mapping[str, Mapping] | None = None,
                                   suppression: str = "rows") -> dict:
    """The counts :func:`categorical_utility_of_release`'s figures (but height and NCP) are made
    of, to be summed over the parts of a file (:func:`categorical_of_tallies`): ``n_rows``,
    ``suppressed_rows``, ``published_rows``, per column ``changed`` and ``suppressed_cells``
    (counts) and ``counts`` (each value's rows before and after, and the value labels)."""
    published, withheld = _published_codes(original, release, kept)
    return _categorical(original, published, None, withheld, value_labels, suppression=suppression, tallies=True)


def categorical_of_tallies(tallies: Sequence[dict]) -> dict:
    """:func:`categorical_utility_of_release`'s figures but height and NCP, from the tallies of
    a file's parts, in the parts' order (a value's first appearance orders equal counts)."""
    n = sum(t["n_rows"] for t in tallies)
    withheld = sum(t["suppressed_rows"] for t in tallies)
    published = sum(t["published_rows"] for t in tallies)
    columns = list(tallies[0]["changed"]) if tallies else []

    def summed(parts: list[pd.Series]) -> pd.Series:
        return pd.concat(parts).groupby(level=0, sort=False).sum()

    return {
        "n_rows": int(n),
        "suppressed_rows": int(withheld),
        "suppressed_share": float(withheld / n) if n else 0.0,
        "changed_share": {c: float(sum(t["changed"][c] for t in tallies) / published) if published else 0.0
                          for c in columns},
        "suppressed_cells": {c: int(sum(t["suppressed_cells"][c] for t in tallies)) for c in columns},
        "frequencies": {c: _frequency_rows(summed([t["counts"][c][0] for t in tallies]),
                                           summed([t["counts"][c][1] for t in tallies]), tallies[0]["counts"][c][2])
                        for c in columns},
    }


def _published_codes(original: pd.DataFrame, release: pd.DataFrame, kept: np.ndarray) -> tuple[dict, np.ndarray]:
    n = len(original)
    kept = np.asarray(kept, dtype=np.int64)
    withheld = np.ones(n, dtype=bool)
    withheld[kept] = False
    published = {}
    for name in release.columns:
        codes, labels, _ = _coded_labels(release[name].reset_index(drop=True), as_objects=True)
        full = np.full(n, -1, dtype=np.int64)
        full[kept] = codes
        published[name] = (full, labels)
    return published, withheld


def _categorical(original: pd.DataFrame, published: Mapping[str, tuple[np.ndarray, np.ndarray]],
                 hierarchies: Mapping | None, withheld: np.ndarray, value_labels: Mapping[str, Mapping] | None,
                 one_level: bool = False, suppression: str = "rows", tallies: bool = False) -> dict:
    """:func:`categorical_utility` from each column's published labels as codes (per original
    row, -1 where missing or withheld) and their labels. Every row-wise step works on numbers;
    text is compared once per distinct label. ``tallies``: the counts of
    :func:`categorical_tallies_of_release` instead (no hierarchy costs)."""
    n = len(original)
    hierarchies = dict(hierarchies or {})
    _check_hierarchies(hierarchies, published)
    published_rows = ~withheld
    n_published = int(published_rows.sum())

    from .._runtime import check_cancelled

    changed: dict[str, float] = {}
    changed_rows: dict[str, int] = {}
    counted: dict[str, tuple] = {}
    height: dict[str, float | None] = {}
    ncp: dict[str, float | None] = {}
    ncp_all: dict[str, float | None] = {}
    cells: dict[str, int] = {}
    frequencies: dict[str, list[dict]] = {}
    original_labels = file_value_labels(original, list(published))
    for name, (pub_codes, pub_labels) in published.items():
        check_cancelled()  # a web job stops between columns (seconds each at a million rows)
        orig_col = original[name].reset_index(drop=True)
        orig_codes, orig_labels, orig_values = _coded_labels(orig_col)
        known = _spelled_labels(original_labels.get(name)) or {}
        released = _spelled_labels((value_labels or {}).get(name))
        # a labelled file's code and its label are one value: a release held in memory may spell
        # an unchanged code by its label (publish writes it back as the code)
        named = np.asarray([known.get(str(w), str(w)) for w in orig_labels], dtype=object)
        words = _Vocabulary(orig_labels, pub_labels, named)
        orig_missing = orig_codes < 0
        orig = words.of(0, orig_codes, -1)
        orig_named = words.of(2, orig_codes, -1)
        # a missing published cell is a suppressed one
        pub = words.of(1, pub_codes, words.star)
        same = (orig == pub) | (~orig_missing & (orig_named == pub)) | (orig_missing & (pub_codes < 0))
        # a withheld row is counted once, in suppressed_share, not as a change of every column
        changed_rows[name] = int(np.count_nonzero(~same & published_rows))
        changed[name] = float(changed_rows[name] / n_published) if n_published else 0.0
        # "*" is a suppressed cell, also as a labelled file writes it: a new code labelled "*"
        starred = [i for i, w in enumerate(words.words) if (released or {}).get(str(w)) == SUPPRESSED_LABEL]
        is_star = (pub == words.star) | (np.isin(pub, starred) if starred else False)
        # local suppression blanks a cell; its "*" is a column generalized to its top, not blanked
        blanked = pub_codes < 0 if suppression == "cells" else is_star
        cells[name] = int(np.count_nonzero(published_rows & ~orig_missing & blanked))
        # a cell missing before and after is missing in both tables (only changed cells were suppressed)
        shown = np.where(orig_missing & (pub_codes < 0), words.missing, pub)
        counted[name] = _label_counts(np.where(orig_missing, words.missing, orig), shown[published_rows], words,
                                      {**known, **(released or {})} or None)
        if tallies:
            continue
        frequencies[name] = _frequency_rows(*counted[name])
        rows = np.flatnonzero(published_rows & ~orig_missing)
        h = hierarchies.get(name)
        if h is not None:
            pair, level, code0 = _published_levels(h, orig_col, None if orig_values is None else (orig_codes, orig_values),
                                                   pub, words, rows, name, released, one_level)
            height[name], ncp[name], ncp_all[name] = _hierarchy_costs(h, name, pair, level, code0, rows, orig_missing,
                                                                      published_rows)
        else:
            ncp[name], ncp_all[name] = _costs_without_hierarchy(same[rows], is_star[rows],
                                                                float(np.count_nonzero(withheld & ~orig_missing)))
    common = {"n_rows": int(n), "suppressed_rows": int(withheld.sum())}
    if tallies:
        return {**common, "published_rows": n_published, "changed": changed_rows, "suppressed_cells": cells,
                "counts": counted}
    return {**common, "suppressed_share": float(withheld.mean()) if n else 0.0, "changed_share": changed,
            "suppressed_cells": cells, **_cost_figures(height, ncp, ncp_all), "frequencies": frequencies}


def _cost_figures(height: dict, ncp: dict, ncp_all: dict) -> dict:
    covered = [c for c, v in ncp.items() if v is not None]
    covered_all = [c for c, v in ncp_all.items() if v is not None]
    defined_h = [v for v in height.values() if v is not None]
    return {
        "height": height,
        "mean_height": float(np.mean(defined_h)) if defined_h else None,
        "ncp": ncp,
        "mean_ncp": float(np.mean([ncp[c] for c in covered])) if covered else None,
        "mean_ncp_columns": covered,
        "ncp_undefined": [c for c in ncp if ncp[c] is None],
        "mean_ncp_all_rows": float(np.mean([ncp_all[c] for c in covered_all])) if covered_all else None,
    }


def _hierarchy_costs(h, name: str, pair: np.ndarray, level: np.ndarray, code0: np.ndarray, rows: np.ndarray,
                     orig_missing: np.ndarray, published_rows: np.ndarray) -> tuple[float | None, ...]:
    """(mean height, NCP over the published rows, NCP over all rows) of a column with a
    hierarchy, from each (original, published) pair's level (:func:`_published_levels`)."""
    top = h.max_level
    cell_suppressed = level < 0
    # each pair's figures, then every row's by indexing: the row-wise sums are unchanged
    lv = np.where(cell_suppressed, top, level)[pair]
    height = float(np.mean(lv / top)) if rows.size and top > 0 else (0.0 if rows.size else None)
    # costed by publish's own NCP (its release summary's categorical_ncp), row by row:
    # a suppressed cell as published above the top level, a withheld row as suppressed
    row_level = np.where(cell_suppressed, top + 1, level)[pair]
    row_code0 = np.asarray(code0, dtype=np.int64)[pair]
    ncp = categorical_ncp({name: h}, {name: row_code0}, {name: row_level},
                          np.ones(rows.size, dtype=bool)) if rows.size else None
    valued = np.flatnonzero(~orig_missing)
    at = np.searchsorted(valued, rows)
    all_level = np.zeros(valued.size, dtype=np.int64)
    all_code0 = np.zeros(valued.size, dtype=np.int64)
    all_level[at], all_code0[at] = row_level, row_code0
    ncp_all = categorical_ncp({name: h}, {name: all_code0}, {name: all_level},
                              published_rows[valued]) if valued.size else None
    return height, ncp, ncp_all


def _costs_without_hierarchy(kept_same: np.ndarray, kept_supp: np.ndarray,
                             cost_withheld: float) -> tuple[float | None, float | None]:
    """(NCP over the published rows, NCP over all rows) of a column without a hierarchy:
    unchanged costs 0, suppressed 1, any other recoding is unknown (None)."""
    counted = kept_same.size
    total = None if np.any(~kept_same & ~kept_supp) else float(np.count_nonzero(kept_supp))
    # None when nothing is published (or the recoding is unknown): there is no value to cost
    ncp = total / counted if total is not None and counted else None
    everyone = counted + cost_withheld
    ncp_all = (total + cost_withheld) / everyone if total is not None and everyone else None
    return ncp, ncp_all


def _check_hierarchies(hierarchies: Mapping | None, columns) -> None:
    unknown = [c for c in (hierarchies or {}) if c not in set(columns)]
    if unknown:
        raise ParameterError(f"hierarchy given for column {unknown[0]!r}, which the release does not have")


def _label_counts(before: np.ndarray, after: np.ndarray, words: _Vocabulary,
                  labels: Mapping[str, str] | None = None) -> tuple[pd.Series, pd.Series, Mapping[str, str] | None]:
    """(rows per value before, after, ``labels``): ``before`` (all original rows) and ``after``
    (published rows) hold each row's label as a number of ``words``, the original's missing cells
    as :data:`MISSING_SHOWN`. ``labels`` (a labelled file's codes, spelled, to their value
    labels): a code and its label are one value, counted in one row, whichever of the two a side
    holds: a recoded column whose groups are written as labels keeps its unchanged codes."""
    shown = _labels_counted(labels)

    def counts(values: np.ndarray) -> pd.Series:
        # numbered in order of first appearance, then one bincount: text only per distinct label
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        per = pd.Series(np.bincount(codes, minlength=len(uniques)),
                        index=[shown.get(w, w) for w in (words.word(u) for u in uniques)])
        return per.groupby(level=0, sort=False).sum()

    return counts(before), counts(after), labels


def _labels_counted(labels: Mapping[str, str] | None) -> dict[str, str]:
    # a code labelled "*" (a group published above every value) stays a row apart from the
    # blanked cells, "*", and so does "(missing)"
    return {code: label for code, label in (labels or {}).items() if label not in (SUPPRESSED_LABEL, MISSING_SHOWN)}


def _frequency_rows(before_counts: pd.Series, after_counts: pd.Series, shown_labels: Mapping[str, str] | None,
                    top: int = 12, number: type = int) -> list[dict]:
    """The most frequent values before and after (:func:`_label_counts`), as counts (``number``:
    ``float`` for weighted totals); the rest summed in one row."""
    # a label's first code names its row
    code_of: dict[str, str] = {}
    for code, label in _labels_counted(shown_labels).items():
        code_of.setdefault(label, code)
    both = before_counts.add(after_counts, fill_value=0).sort_values(ascending=False, kind="stable")
    listed = list(both.index[:top])
    rows = []
    for key in listed:
        row: dict = {"value": code_of.get(key, key), "original": number(before_counts.get(key, 0)),
                     "release": number(after_counts.get(key, 0))}
        if key in code_of and code_of[key] != key:
            row["label"] = key
        rows.append(row)
    for row in rows:
        hidden = (shown_labels or {}).get(row["value"])
        if hidden is not None and "label" not in row and hidden != row["value"]:
            row["label"] = hidden
    if len(both) > top:
        rest = [v for v in both.index[top:]]
        rows.append({"value": f"({len(rest)} other values)",
                     "original": number(before_counts.reindex(rest).fillna(0).sum()),
                     "release": number(after_counts.reindex(rest).fillna(0).sum())})
    return rows


def weighted_frequencies(original: pd.DataFrame, release: pd.DataFrame, kept: np.ndarray, columns: Sequence[str],
                         weights: np.ndarray | None = None, top: int = 12) -> dict[str, list[dict]]:
    """Per column, its values' weighted totals in the original (every row) and in the release
    (each published row weighted as its original row, ``kept``): the table an office compares
    before and after protection. ``weights``: one per original row (None: each row weighs 1).

    Rows as :func:`categorical_utility`'s ``frequencies``: ``value`` (the code as a reader writes
    it; a labelled file's user-missing code is a value), ``label`` where the file labels it (a
    code and its label are one value, whichever of the two a side holds, so a column recoded to
    labelled groups lines up with its codes), ``original`` and ``release`` (weighted totals; a
    blank or missing cell is "(missing)"), the ``top`` largest first and the rest summed in one
    row."""
    n = original.shape[0]
    w = np.ones(n) if weights is None else np.nan_to_num(np.asarray(weights, dtype=np.float64), nan=0.0)
    kept = np.asarray(kept, dtype=np.int64)
    labels = {**file_value_labels(original, columns), **file_value_labels(release, columns)}
    out: dict[str, list[dict]] = {}
    for name in columns:
        known = _spelled_labels(labels.get(name)) or {}
        shown = _labels_counted(known)
        before = _weighted_totals(original[name].reset_index(drop=True), w, shown)
        after = _weighted_totals(release[name].reset_index(drop=True), w[kept], shown)
        out[str(name)] = _frequency_rows(before, after, known, top, number=float)
    return out


def _weighted_totals(column: pd.Series, weight: np.ndarray, shown: Mapping[str, str]) -> pd.Series:
    """The weight per value (a labelled code counted under its label, as ``shown``)."""
    text = [MISSING_SHOWN if v is None or str(v).strip() == "" else cell_text(v) for v in column_cells(column)]
    return pd.Series(weight).groupby(pd.Index([shown.get(t, t) for t in text]), sort=False).sum()


# --- a model trained on the release ----------------------------------------------------------

def _design(frame: pd.DataFrame, features: Sequence[str], numeric: set[str], categories: dict | None,
            drop_first: bool = False):
    """Numeric features as they are, the others one-hot (categories learned from the training
    frame; a category unseen there gets all zeros). ``drop_first``: treatment coding, the first
    category (in sorted order) is the reference, as R's ``lm`` codes a factor."""
    learn = categories is None
    categories = {} if learn else categories
    blocks, names = [], []
    for f in features:
        if f in numeric:
            blocks.append(frame[f].to_numpy(np.float64)[:, None])
            names.append(f)
        else:
            values = frame[f].astype(str).to_numpy()
            if learn:
                categories[f] = sorted(set(values.tolist()))
            cats = categories[f][1:] if drop_first else categories[f]
            blocks.append((values[:, None] == np.asarray(cats, dtype=object)[None, :]).astype(np.float64))
            names.extend(f"{f}={c}" for c in cats)
    X = np.hstack(blocks) if blocks else np.zeros((len(frame), 0))
    return X, names, categories


def _is_number(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _numbers_where_they_parse(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns (a CSV read as text) whose present values all parse as numbers, as float64
    with the NA vocabulary missing: a column of ages is a number to model, not 70 classes."""
    from ._align import _as_numbers, _is_numeric

    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if not _is_number(column) and _is_numeric(column):
            out[name] = _as_numbers(column)
    return out


def _fit_regression(train: pd.DataFrame, test: pd.DataFrame, target, features, numeric) -> dict:
    X, names, cats = _design(train, features, numeric, None, drop_first=True)
    A = np.hstack([np.ones((X.shape[0], 1)), X])
    beta = np.linalg.lstsq(A, train[target].to_numpy(np.float64), rcond=None)[0]
    Xt, _, _ = _design(test, features, numeric, cats, drop_first=True)
    pred = np.hstack([np.ones((Xt.shape[0], 1)), Xt]) @ beta
    y = test[target].to_numpy(np.float64)
    ss_res = float(np.sum((y - pred) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    return {
        "coefficients": {"(intercept)": float(beta[0]), **{nm: float(b) for nm, b in zip(names, beta[1:])}},
        "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else None,
        "rmse": float(np.sqrt(ss_res / y.size)),
    }


def _fit_classifier(train: pd.DataFrame, test: pd.DataFrame, target, features, numeric, random_state) -> dict:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    X, _, cats = _design(train, features, numeric, None)
    # numeric features scaled with the training side's spread, so the solver converges alike
    # on a release and its original
    mean = X.mean(axis=0) if X.size else np.zeros(X.shape[1])
    sd = X.std(axis=0) if X.size else np.ones(X.shape[1])
    sd = np.where(sd > 0, sd, 1.0)
    y = train[target].astype(str).to_numpy()
    Xt, _, _ = _design(test, features, numeric, cats)
    classes = np.unique(y)
    if classes.size == 1:
        pred = np.full(len(test), classes[0], dtype=object)
    else:
        model = LogisticRegression(max_iter=1000, random_state=random_state)
        with warnings.catch_warnings():
            # scikit-learn's advice (convergence, many classes) is not the user's to act on:
            # the report states the task and the protocol
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", FutureWarning)
            model.fit((X - mean) / sd, y)
            pred = model.predict((Xt - mean) / sd)
    truth = test[target].astype(str).to_numpy()
    return {"accuracy": float(np.mean(pred == truth)), "classes_seen": int(classes.size)}


def _train_test_rows(n: int, test_size: float, random_state: int, max_train_rows: int | None,
                     max_test_rows: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, test rows) of ``n`` complete rows: a seeded random split, each part cut
    to its cap."""
    n_test = int(np.ceil(test_size * n))
    if n - n_test < 2 or n_test < 1:
        raise DataError(f"{n} complete row(s): too few to train and test a model")
    order = np.random.default_rng(random_state).permutation(n)
    test_rows, train_rows = order[:n_test], order[n_test:]
    if max_train_rows is not None:
        train_rows = train_rows[:max(int(max_train_rows), 2)]
    if max_test_rows is not None:
        test_rows = test_rows[:max(int(max_test_rows), 1)]
    return train_rows, test_rows


def _check_model_request(original, release, target: str, features: list[str], test_size: float) -> None:
    """Refuse tables that do not align or lack a column, and a test share outside (0, 1)."""
    if not isinstance(original, pd.DataFrame) or not isinstance(release, pd.DataFrame):
        raise ParameterError("original and release must be DataFrames")
    if len(original) != len(release):
        raise DataError(f"original has {len(original)} rows and release {len(release)}; rows must align")
    for col in [target, *features]:
        for side, frame in (("original", original), ("release", release)):
            if col not in frame.columns:
                raise DataError(f"column {col!r} is not in the {side}")
    if target in features:
        raise ParameterError(f"target {target!r} is also listed among the features")
    if not 0 < test_size < 1:
        raise ParameterError(f"test_size must lie strictly between 0 and 1; got {test_size!r}")


def model_utility(original: pd.DataFrame, release: pd.DataFrame, target: str, features: list[str], *,
                  random_state: int = 0, test_size: float = 0.3, task: str | None = None,
                  max_train_rows: int | None = 200_000, max_test_rows: int | None = 100_000) -> dict:
    """A model trained on the release beside the same model trained on the original.

    Protocol (the "train on the release, test on the original" comparison; Domingo-Ferrer &
    Torra's analysis-specific utility):

    1. Rows with a missing value in the target or a feature, in the original or the release,
       are dropped from both (they stay aligned by position).
    2. The rows are shuffled with ``numpy.random.default_rng(random_state)``; the first
       ``ceil(test_size * n)`` form the held-out test set, the rest the training set; the same
       row positions are used on both sides. Above ``max_train_rows`` / ``max_test_rows`` only
       the first that many of the shuffled rows are used (a seeded random sample: a report on a
       million rows must not spend its time fitting), ``None`` for all.
    3. Features: on each side a numeric column is used as it is, any other is one-hot encoded
       with the categories of that side's training rows (a test value unseen there encodes as
       all zeros). Test rows carry the ORIGINAL values, except that a feature the release
       publishes as labels (categorical, or a numeric column generalized to intervals) is given
       to the release's model as the release's label of the same test record: that is how an
       analyst holding the release would code a new record (the original value is not among
       its categories).
    4. ``task`` ``"regression"`` (default for a numeric target: numbers, or text whose present
       values all parse as numbers, the NA vocabulary missing, as a CSV column is read): ordinary least squares with an
       intercept (``numpy.linalg.lstsq``, minimum-norm where the design is rank deficient);
       categorical features in treatment coding (the first category in sorted order is the
       reference, so the coefficients read as R's ``lm`` gives them);
       ``"classification"`` (default otherwise): scikit-learn ``LogisticRegression``
       (lbfgs, ``max_iter=1000``) on features standardized with the training rows' mean and sd;
       a training side with a single class predicts it.
    5. One model is trained on the release's training rows, one on the original's; both predict
       the held-out test rows of the original, scored against the ORIGINAL target:
       R^2 and RMSE plus the coefficients side by side (regression), accuracy (classification).
    """
    features = list(features)
    _check_model_request(original, release, target, features, test_size)
    cols = [target, *features]
    original = _numbers_where_they_parse(original[cols])
    release = _numbers_where_they_parse(release[cols])
    numeric_target = _is_number(original[target]) and _is_number(release[target])
    task = task or ("regression" if numeric_target else "classification")
    if task not in ("regression", "classification"):
        raise ParameterError(f"task must be 'regression' or 'classification'; got {task!r}")
    if task == "regression" and not numeric_target:
        side = "original" if not _is_number(original[target]) else "release"
        raise DataError(f"target {target!r} is not numeric in the {side}; a regression needs numbers")
    orig = original[cols].reset_index(drop=True)
    rel = release[cols].reset_index(drop=True)
    keep = ~(orig.isna().any(axis=1) | rel.isna().any(axis=1)).to_numpy()
    orig, rel = orig[keep].reset_index(drop=True), rel[keep].reset_index(drop=True)
    train_rows, test_rows = _train_test_rows(len(orig), test_size, random_state, max_train_rows, max_test_rows)
    n_test = int(test_rows.size)
    numeric_orig = {f for f in features if _is_number(orig[f])}
    numeric_rel = {f for f in features if _is_number(rel[f])}
    test = orig.iloc[test_rows]
    test_rel = test.copy()
    for f in features:
        if f not in numeric_rel:
            test_rel[f] = rel[f].iloc[test_rows].to_numpy()
    out = {"task": task, "target": target, "features": features, "n_train": int(train_rows.size),
           "n_test": int(n_test), "random_state": int(random_state), "dropped_rows": int((~keep).sum())}
    if task == "regression":
        on_orig = _fit_regression(orig.iloc[train_rows], test, target, features, numeric_orig)
        on_rel = _fit_regression(rel.iloc[train_rows], test_rel, target, features, numeric_rel)
        names = list(dict.fromkeys([*on_orig["coefficients"], *on_rel["coefficients"]]))
        out["coefficients"] = {nm: {"original": on_orig["coefficients"].get(nm),
                                    "release": on_rel["coefficients"].get(nm)} for nm in names}
        out["r2"] = {"original": on_orig["r2"], "release": on_rel["r2"]}
        out["rmse"] = {"original": on_orig["rmse"], "release": on_rel["rmse"]}
    else:
        on_orig = _fit_classifier(orig.iloc[train_rows], test, target, features, numeric_orig, random_state)
        on_rel = _fit_classifier(rel.iloc[train_rows], test_rel, target, features, numeric_rel, random_state)
        truth = test[target].astype(str)
        out["accuracy"] = {"original": on_orig["accuracy"], "release": on_rel["accuracy"],
                           "majority_class": float(truth.value_counts().iloc[0] / truth.size)}
    return out
