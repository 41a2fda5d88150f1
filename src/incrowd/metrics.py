"""Utility and privacy measures: SSE, SST, information loss, group sizes, k-anonymity,
l-diversity, t-closeness.

Information loss follows Thaeter & Reischuk (2021, Def. 4; 2018, Def. 1.5): IL = SSE / SST where SSE is the
sum of squared distances of the rows to their group centroid and SST the sum of squared
distances to the global centroid, both on standardized quasi-identifiers. IL lies in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd
from numba import njit

from ._runtime import small as _small
from .exceptions import DataError, ParameterError, name_list
from .values import group_means, standardize

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "sse",
    "sst",
    "information_loss",
    "group_sizes",
    "group_size_stats",
    "GroupSizeStats",
    "verify_k_anonymity",
    "KAnonymityReport",
    "verify_l_diversity",
    "LDiversityReport",
    "verify_t_closeness",
    "TClosenessReport",
    "match_counts",
]


def _as_2d(X) -> np.ndarray:
    arr = np.asarray(X, dtype=np.float64)
    return arr[:, None] if arr.ndim == 1 else arr


def _check_labels(labels, n_rows: int) -> np.ndarray:
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.shape[0] != n_rows:
        raise ParameterError(f"labels must be one group id per row ({n_rows} rows); got shape {lab.shape}")
    if lab.size and (lab.min() < 0 or not np.issubdtype(lab.dtype, np.integer)):
        raise ParameterError("labels must be non-negative integers")
    return lab.astype(np.int64, copy=False)


def sse(X: ArrayLike, labels: ArrayLike) -> float:
    """Sum of squared distances of each row to its group's centroid (in the units of X).

    Parameters
    ----------
    X : array_like of shape (n_rows, n_columns)
        The quasi-identifier values, one row per record.
    labels : array_like of shape (n_rows,)
        The group id of each row.

    Returns
    -------
    float
        The within-group sum of squares.
    """
    Xa = _as_2d(X)
    lab = _check_labels(labels, Xa.shape[0])
    counts = np.bincount(lab)
    dense = lab if counts.all() else np.unique(lab, return_inverse=True)[1]  # ids 0..g-1 already: no sort
    centroids = group_means(Xa, dense)
    return _deviations(Xa, dense, centroids)


def sst(X: ArrayLike) -> float:
    """Sum of squared distances of each row to the global centroid (in the units of X).

    Parameters
    ----------
    X : array_like of shape (n_rows, n_columns)
        The quasi-identifier values, one row per record.

    Returns
    -------
    float
        The total sum of squares.
    """
    Xa = _as_2d(X)
    return _deviations(Xa, np.zeros(Xa.shape[0], np.int64), Xa.mean(axis=0)[None, :])


def _deviations(X, group, centers) -> float:
    if _small.prefer_numpy(*X.shape):
        return float(_small.squared_deviations(X, group, centers))
    return float(_squared_deviations(X, group, centers))


@njit(cache=True)
def _squared_deviations(X, group, centers):
    """Sum over rows of ||x - centers[group[x]]||^2, streamed (no n x m temporaries: SSE of a
    large file would otherwise need three copies of it), compensated (Neumaier) over rows."""
    total = 0.0
    comp = 0.0
    for i in range(X.shape[0]):
        row = 0.0
        c = group[i]
        for j in range(X.shape[1]):
            d = X[i, j] - centers[c, j]
            row += d * d
        t = total + row
        if abs(total) >= abs(row):
            comp += (total - t) + row
        else:
            comp += (row - t) + total
        total = t
    return total + comp


def information_loss(X: ArrayLike, labels: ArrayLike, *, standardized: bool = False) -> float:
    """IL = SSE/SST on standardized data (X is standardized here unless ``standardized``).

    Returns 0.0 for data whose quasi-identifiers are all constant (nothing can be lost).

    Parameters
    ----------
    X : array_like of shape (n_rows, n_columns)
        The quasi-identifier values, one row per record.
    labels : array_like of shape (n_rows,)
        The group id of each row.
    standardized : bool, default False
        True when ``X`` is standardized already (mean 0, population variance 1 per column).

    Returns
    -------
    float
        SSE/SST, in [0, 1].
    """
    Xa = _as_2d(X)
    Z = Xa if standardized else standardize(Xa)[0]
    total = sst(Z)
    if total == 0.0:
        return 0.0
    return sse(Z, labels) / total


@dataclass(frozen=True)
class GroupSizeStats:
    """Sizes of the groups of a clustering.

    Attributes
    ----------
    n_groups : int
        Number of groups.
    min, max : int
        The smallest and the largest group size.
    mean : float
        The mean group size.
    histogram : dict of int to int
        Groups per size.
    """

    n_groups: int
    min: int
    max: int
    mean: float
    histogram: dict[int, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "n_groups": self.n_groups,
            "min": self.min,
            "max": self.max,
            "mean": self.mean,
            "histogram": {str(s): c for s, c in self.histogram.items()},
        }


def group_sizes(labels: ArrayLike) -> np.ndarray:
    """Size of each group, indexed by group id (ids need not be dense; absent ids are dropped).

    Parameters
    ----------
    labels : array_like of shape (n_rows,)
        The group id of each row.

    Returns
    -------
    numpy.ndarray
        The size of each group present, in the order of the group ids.
    """
    lab = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(lab)
    return counts[counts > 0]


def group_size_stats(labels: ArrayLike) -> GroupSizeStats:
    """The sizes of the groups of a clustering, summarized.

    Parameters
    ----------
    labels : array_like of shape (n_rows,)
        The group id of each row.

    Returns
    -------
    GroupSizeStats
        The number of groups, the smallest, largest and mean size, and groups per size.
    """
    sizes = group_sizes(labels)
    values, counts = np.unique(sizes, return_counts=True)
    return GroupSizeStats(
        n_groups=int(sizes.size),
        min=int(sizes.min()),
        max=int(sizes.max()),
        mean=float(sizes.mean()),
        histogram={int(v): int(c) for v, c in zip(values, counts)},
    )


@dataclass(frozen=True)
class KAnonymityReport:
    """Outcome of checking a published table: truthy when it is k-anonymous.

    Attributes
    ----------
    k : int
        The k checked.
    ok : bool
        Every class holds at least k rows.
    n_rows : int
        Rows of the table.
    n_classes : int
        Classes of equal quasi-identifier values.
    min_class_size : int
        Rows of the smallest class.
    n_rows_in_small_classes : int
        Rows in classes below k.
    """

    k: int
    ok: bool
    n_rows: int
    n_classes: int
    min_class_size: int
    n_rows_in_small_classes: int

    def __bool__(self) -> bool:
        return self.ok

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def verify_k_anonymity(table: pd.DataFrame | np.ndarray, quasi_identifiers: Sequence[str] | None, k: int, *,
                       missing_matches: str = "itself") -> KAnonymityReport:
    """Check the published table itself: every combination of QI values occurs >= k times.

    ``table`` is a DataFrame (``quasi_identifiers`` names columns; None means all columns) or a
    2-D array (every column is a quasi-identifier). Missing values count as a value of their own,
    and so does each user-missing code of a statistical file (:func:`class_ids`). With
    ``missing_matches="any"`` a missing value matches every value instead (sdcMicro's
    ``kAnon``): every row must match at least k rows (:func:`match_counts`); ``n_classes`` then
    counts distinct rows and ``min_class_size`` is the fewest matches of a row.

    Parameters
    ----------
    table : pandas.DataFrame or numpy.ndarray
        The published table.
    quasi_identifiers : sequence of str or None
        The quasi-identifier columns of a DataFrame (None: every column).
    k : int
        The smallest class size promised.
    missing_matches : {"itself", "any"}, default "itself"
        Whether a missing value is a value of its own or matches every value (see above).

    Returns
    -------
    KAnonymityReport
        Truthy when the table is k-anonymous; the smallest class and the rows in classes below k.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be a positive integer; got {k!r}")
    if isinstance(table, pd.DataFrame):
        cols = list(table.columns) if quasi_identifiers is None else list(quasi_identifiers)
        missing = [c for c in cols if c not in table.columns]
        if missing:
            raise DataError(f"unknown quasi-identifier column(s) {name_list(missing)}; table has {name_list(table.columns)}")
        frame = table[cols]
    else:
        arr = _as_2d(table)
        frame = pd.DataFrame(arr)
    n = int(frame.shape[0])
    if n == 0:
        return KAnonymityReport(int(k), True, 0, 0, 0, 0)
    if missing_matches != "itself":
        counts = match_counts(frame, missing_matches=missing_matches)
        low = counts < k
        return KAnonymityReport(k=int(k), ok=not bool(low.any()), n_rows=n,
                                n_classes=int(np.unique(class_ids(frame)).size), min_class_size=int(counts.min()),
                                n_rows_in_small_classes=int(low.sum()))
    sizes = np.bincount(class_ids(frame))
    small = sizes < k
    return KAnonymityReport(
        k=int(k),
        ok=not bool(small.any()),
        n_rows=n,
        n_classes=int(sizes.size),
        min_class_size=int(sizes.min()),
        n_rows_in_small_classes=int(sizes[small].sum()),
    )


@dataclass(frozen=True)
class LDiversityReport:
    """Outcome of checking a published table for naive l-diversity: truthy when every class of
    equal quasi-identifier values holds at least l distinct sensitive values.

    Attributes
    ----------
    l : int
        The l checked.
    ok : bool
        Every class holds at least l distinct sensitive values.
    n_rows : int
        Rows of the table.
    n_classes : int
        Classes of equal quasi-identifier values.
    min_distinct : int
        The fewest distinct sensitive values of a class.
    n_rows_in_poor_classes : int
        Rows in classes with fewer than l distinct values.
    """

    l: int
    ok: bool
    n_rows: int
    n_classes: int
    min_distinct: int
    n_rows_in_poor_classes: int

    def __bool__(self) -> bool:
        return self.ok

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def verify_l_diversity(table: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str,
                       l: int) -> LDiversityReport:
    """Check the published table itself: every QI class has >= l distinct ``sensitive`` values.

    In the quasi-identifiers a missing value is a value of its own (:func:`class_ids`). In the
    sensitive column values count as :func:`sensitive_keys` says: a missing value (the NA
    vocabulary, system missing) is never a distinct value, so it never makes a class diverse; a
    user-missing code is a value of its own; numbers compare as numbers; trailing blanks do
    not make another value.

    Parameters
    ----------
    table : pandas.DataFrame
        The published table.
    quasi_identifiers : sequence of str
        The quasi-identifier columns.
    sensitive : str
        The sensitive column.
    l : int
        The fewest distinct sensitive values promised per class.

    Returns
    -------
    LDiversityReport
        Truthy when every class is l-diverse; the poorest class and the rows in poor classes.
    """
    if isinstance(l, bool) or not isinstance(l, (int, np.integer)) or l < 1:
        raise ParameterError(f"l must be a positive integer; got {l!r}")
    cols = list(quasi_identifiers)
    missing = [c for c in [*cols, sensitive] if c not in table.columns]
    if missing:
        raise DataError(f"unknown column(s) {name_list(missing)}; table has {name_list(table.columns)}")
    n = int(table.shape[0])
    if n == 0:
        return LDiversityReport(int(l), True, 0, 0, 0, 0)
    classes = class_ids(table[cols]) if cols else np.zeros(n, dtype=np.int64)
    n_classes = int(classes.max()) + 1
    keys, _ = sensitive_keys(table[sensitive])
    values, _ = pd.factorize(keys, use_na_sentinel=True)
    present = values >= 0
    m = int(values.max()) + 1 if present.any() else 1
    pairs = np.unique(classes[present] * m + values[present])
    distinct = np.bincount(pairs // m, minlength=n_classes)
    sizes = np.bincount(classes, minlength=n_classes)
    poor = distinct < l
    return LDiversityReport(
        l=int(l), ok=not bool(poor.any()), n_rows=n, n_classes=int(distinct.size),
        min_distinct=int(distinct.min()), n_rows_in_poor_classes=int(sizes[poor].sum()),
    )


@dataclass(frozen=True)
class TClosenessReport:
    """Outcome of checking a published table for t-closeness: truthy when the distribution of
    the sensitive values in every class of equal quasi-identifier values lies within earth
    mover's distance t of the reference distribution.

    Attributes
    ----------
    t : float
        The t checked.
    ok : bool
        Every class lies within distance t of the reference.
    n_rows : int
        Rows of the table.
    n_classes : int
        Classes of equal quasi-identifier values.
    max_distance : float
        The largest distance of a class from the reference.
    n_rows_in_far_classes : int
        Rows in classes farther than t.
    ordered : bool
        True when the ordered distance was used, False for the equal distance.
    """

    t: float
    ok: bool
    n_rows: int
    n_classes: int
    max_distance: float
    n_rows_in_far_classes: int
    ordered: bool = False

    def __bool__(self) -> bool:
        return self.ok

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _check_t(t) -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)) or not 0 < t <= 1:
        raise ParameterError(f"t must be a number in (0, 1]; got {t!r}")
    return float(t)


def _default_order(dtype):
    """Ordered distance for numbers, an ordered categorical's own order, equal otherwise."""
    if isinstance(dtype, pd.CategoricalDtype):
        return list(dtype.categories) if dtype.ordered else False
    return bool(pd.api.types.is_numeric_dtype(dtype))


# ---------------------------------------------------------------------------------------------
# What counts as a value: one definition for the release, its verifiers and the report


def class_ids(frame: pd.DataFrame) -> np.ndarray:
    """Class number of every row: rows with equal values in every column share one.

    A missing value is a value of its own, and so is each user-missing code of a statistical
    file (SPSS 8 "don't know" and 9 "refused", Stata ``.a``), apart from system missing and
    from each other: the file shows them as values, so a reader tells them apart."""
    from .io import code_indices

    n = int(frame.shape[0])
    if frame.shape[1] == 0:
        return np.zeros(n, dtype=np.int64)
    parts = {}
    for j in range(frame.shape[1]):
        column = frame.iloc[:, j]
        parts[f"v{j}"] = column.reset_index(drop=True)
        if pd.api.types.is_float_dtype(column.dtype):
            index = code_indices(column.to_numpy(dtype=np.float64, na_value=np.nan))
            if (index >= 0).any():  # the code a NaN stands for, as a column of its own
                parts[f"u{j}"] = pd.Series(index)
    keys = pd.DataFrame(parts)
    if keys.shape[1] == 1:
        codes, _ = pd.factorize(keys.iloc[:, 0], use_na_sentinel=False)
        return np.asarray(codes, dtype=np.int64)
    return keys.groupby(list(keys.columns), dropna=False, sort=False).ngroup().to_numpy(np.int64)


def user_missing_codes(column: pd.Series) -> tuple[np.ndarray, list] | None:
    """(code index per cell or -1, the codes) of a column read from a statistical file."""
    from .io import code_indices

    if not pd.api.types.is_float_dtype(column.dtype):
        return None
    index = code_indices(column.to_numpy(dtype=np.float64, na_value=np.nan))
    if not (index >= 0).any():
        return None
    meta = column.attrs.get("statfile")
    columns = (meta.get("columns") or {}) if isinstance(meta, dict) else {}
    info = columns.get(str(column.name)) or {}
    return index, list(info.get("missing_codes") or ())


def _canonical(value):
    """A sensitive value as it counts: numbers (and text that reads as a finite number) as
    floats, text without its trailing blanks, the NA vocabulary as missing (None)."""
    from .io import NA_VALUES

    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        return None if np.isnan(number) else number
    if isinstance(value, str):
        text = value.rstrip(" ")
        if text in NA_VALUES:
            return None
        try:
            number = float(text)
        except ValueError:
            return text
        return number if np.isfinite(number) else text
    return value


def sensitive_keys(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, user_missing)``: each cell's value as l and t count it (an object array, None
    where missing) and whether it is a statistical file's user-missing code.

    - The NA vocabulary (:data:`incrowd.io._na_values.NA_VALUES`: an empty cell, ``NA``,
      ``N/A``, ...) and system missing values are missing: one missing value, never a
      distinct value for l; for t, one category of its own.
    - A user-missing code (SPSS 98 declared missing, Stata ``.a``) is a value of its own,
      the code as the file holds it (98.0; ``'a'``), as pyreadstat reads it with
      ``user_missing=True``.
    - Numbers compare as numbers (``1``, ``1.0`` and 1 are one value).
    - Values that differ only by trailing blanks are one value (``pos`` and ``pos ``): SPSS
      and SAS strip them when they write, and counting them once never overstates diversity.
    """
    series = column.astype(object) if isinstance(column.dtype, pd.CategoricalDtype) else column
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        numbers = series.to_numpy(dtype=np.float64, na_value=np.nan)
        keys = numbers.astype(object)
        keys[np.isnan(numbers)] = None
    else:
        factor, uniques = pd.factorize(series, use_na_sentinel=True)
        canon = np.empty(len(uniques) + 1, dtype=object)
        canon[:-1] = [_canonical(v) for v in uniques]
        canon[-1] = None  # the factor's -1 (missing) picks the last entry
        keys = canon[factor]
    user = np.zeros(len(keys), dtype=bool)
    coded = user_missing_codes(column)
    if coded is not None:
        index, codes = coded
        user = index >= 0
        for j in np.unique(index[user]).tolist():
            keys[index == j] = _canonical(codes[j]) if j < len(codes) else f"user-missing code {j + 1}"
    return keys, user


def _sort_key(value):
    if isinstance(value, float):
        return (0, value, "")
    if isinstance(value, str):
        return (1, 0.0, value)
    return (2, 0.0, repr(value))


def sensitive_order(keys: np.ndarray, user: np.ndarray, ordered, column: str, *, strict: bool = False) -> list:
    """The distinct present keys of a column, in the order t's distance takes them.

    ``ordered``: False (equal distance: numbers, then text, each sorted), True (numbers in their
    order, then text sorted; with ``strict`` a text value that is not a user-missing code is a
    ParameterError: text has no order of its own) or a list giving the order: every present
    value must be in it (a DataError names the first that is not), except user-missing codes,
    which come after the listed values unless listed themselves."""
    present = ~pd.isna(keys)
    distinct = pd.unique(keys[present]).tolist()
    coded = set(keys[present & user].tolist())
    if isinstance(ordered, (bool, np.bool_)):
        if ordered and strict:
            text = [v for v in distinct if not isinstance(v, float) and v not in coded]
            if text:
                shown = sorted(map(str, text))[:3]
                raise ParameterError(
                    f"sensitive column {column!r} holds text ({', '.join(repr(v) for v in shown)}), which has no "
                    f"order of its own: give its values in order, e.g. ordered = {_toml_list(shown)} in its "
                    "entry of [columns], or ordered = false for the equal distance")
        if ordered:
            kinds = {isinstance(v, float) for v in distinct if v not in coded}
            if len(kinds) > 1:  # numbers and text have no order between them
                raise TypeError("numbers and text")
        return sorted(distinct, key=_sort_key)
    raw = list(ordered)
    if len(set(map(repr, raw))) != len(raw):
        raise ParameterError(f"ordered for column {column!r} lists a value twice: {raw}")
    # spellings of one value ("1" and "1.0", "pos" and "pos ") take the first one's place
    given = list(dict.fromkeys(_canonical(v) for v in raw))
    position = {v: i for i, v in enumerate(given)}
    unknown = [v for v in distinct if v not in position and v not in coded]
    if unknown:
        row = int(np.flatnonzero(present & (keys == unknown[0]) & ~user)[0]) if present.any() else 0
        raise DataError(f"column {column!r}: value {unknown[0]!r} is not in the order given ({list(ordered)}), "
                        f"data row {row + 1}; add it to ordered where it belongs")
    listed = [v for v in given if v in set(distinct)]
    return listed + sorted((v for v in distinct if v not in position), key=_sort_key)


def _toml_list(values) -> str:
    return "[" + ", ".join('"' + str(v).replace('"', '\\"') + '"' for v in values) + "]"


def sensitive_codes(column: pd.Series, ordered=None) -> tuple[np.ndarray, list, bool, np.ndarray, bool]:
    """A release's sensitive column as codes, the one rule ``publish`` and a lattice share:
    ``(codes, values, ordered, counts, missing)``.

    Values as :func:`sensitive_keys` counts them, in :func:`sensitive_order`'s order (strict:
    ``ordered = True`` on text is refused); ``ordered`` None takes the ordered distance when
    every value that is not a user-missing code is a number. ``codes`` are 0..len(values)-1 in
    that order, then (when ``missing``) len(values) for the missing value, which is never a
    distinct value for l; ``counts`` the rows of each code (t's reference over the column).

    Parameters
    ----------
    column : pandas.Series
        The sensitive column.
    ordered : bool, sequence or None, default None
        The distance: ordered (True, or the values in their order), equal (False), or by the
        values (None).

    Returns
    -------
    tuple
        ``(codes, values, ordered, counts, missing)`` as above.
    """
    name = str(column.name)
    keys, user = sensitive_keys(column)
    present = ~pd.isna(keys)
    if ordered is None:
        plain = keys[present & ~user]
        ordered = bool(plain.size) and all(isinstance(v, float) for v in plain)
    order = sensitive_order(keys, user, ordered if isinstance(ordered, (bool, np.bool_)) else list(ordered), name,
                            strict=True)
    position = {v: i for i, v in enumerate(order)}
    factor, uniques = pd.factorize(keys, use_na_sentinel=True)
    lookup = np.array([position[v] for v in uniques] + [len(order)], dtype=np.int64)
    codes = lookup[factor]
    missing = bool((~present).any())
    counts = np.bincount(codes, minlength=len(order) + int(missing))
    return codes, order, bool(ordered), counts, missing


def _encode_sensitive(values: pd.Series, reference: pd.Series, ordered, column: str):
    """``(codes, reference_codes, m, ordered, missing)``: the values as codes ``0..m-1`` over
    the m distinct values of the reference (as :func:`sensitive_keys` counts them), in
    :func:`sensitive_order`'s order; a missing value is one value of its own, after all others
    (``missing`` says whether the reference holds it: code m-1 then)."""
    if ordered is None:
        ordered = _default_order(values.dtype)
    is_ordered = True if not isinstance(ordered, (bool, np.bool_)) else bool(ordered)
    ref_keys, ref_user = sensitive_keys(reference)
    keys, _ = sensitive_keys(values)
    try:
        order = sensitive_order(ref_keys, ref_user, ordered, column)
    except TypeError:
        raise DataError(f"column {column!r}: its values cannot be sorted for the ordered distance; "
                        "give their order as a list (ordered=[...]) or use ordered=False") from None
    n_present = len(order)
    ref_missing = pd.isna(ref_keys)
    missing = bool(ref_missing.any())
    m = n_present + int(missing)
    position = {v: i for i, v in enumerate(order)}

    def codes_of(cells: np.ndarray) -> np.ndarray:
        factor, uniques = pd.factorize(cells, use_na_sentinel=True)
        lookup = np.array([position.get(k, -1) for k in uniques] + [n_present], dtype=np.int64)
        return lookup[factor]

    ref_codes = codes_of(ref_keys)
    codes = codes_of(keys)
    bad = np.flatnonzero((codes < 0) | ((codes == n_present) & (not missing)))
    if bad.size:
        raise DataError(f"column {column!r}: value {values.iloc[bad[0]]!r} (row {bad[0]}) does not occur "
                        "in the reference distribution")
    return codes, ref_codes, m, is_ordered, missing


def verify_t_closeness(table: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str, t: float, *,
                       ordered: bool | Sequence[Any] | None = None,
                       reference: pd.Series | np.ndarray | None = None) -> TClosenessReport:
    """Check the published table itself: in every class of equal quasi-identifier values the
    ``sensitive`` values lie within earth mover's distance ``t`` of the reference distribution.

    The distances are ARX's (Li, Li and Venkatasubramanian, 2007), over the m distinct values of
    the reference:

    * ordered (numeric and ordinal values): ``1/(m-1) * sum_i |sum_{j<=i} (q_j - p_j)|`` with
      the values sorted; 0 when the reference holds one value;
    * equal (nominal values): ``1/2 * sum_i |q_i - p_i|``.

    ``ordered=None`` takes the ordered distance for numeric columns (and pandas ordered
    categoricals, in their category order) and the equal distance otherwise; ``True``/``False``
    force one; a list of values gives an ordinal order (``["low", "mid", "high"]``; values the
    reference does not take are left out of m).

    ``reference`` (a Series or array of sensitive values) is the distribution the classes are
    compared with; by default the table's own column. A release that suppressed rows should pass
    the ORIGINAL column here: measured against the published rows alone, the reference would
    move towards the classes that were kept. Every published value must occur in the reference.

    Missing values count as a value of their own, in the quasi-identifiers (as in
    :func:`verify_k_anonymity`) and in the sensitive column: the NA vocabulary and system
    missing values together are one category, the last in the order. Sensitive values count
    as :func:`sensitive_keys` says (numbers as numbers, trailing blanks ignored, each
    user-missing code a value of its own, placed by :func:`sensitive_order`).
    A class passes when its distance is at most ``t + 1e-12``: the distance is computed from
    integer counts with one rounding, so a class exactly at t passes and the tolerance only
    absorbs that rounding. Raises ``ParameterError`` for t outside (0, 1] and ``DataError`` for
    unknown columns or published values absent from the reference.

    pycanon's ``anonymity.t_closeness`` uses the same two distances (ordered for numeric columns,
    equal for text) with the table's own column as reference and gives the same largest
    distance, except that it leaves rows with a missing quasi-identifier out of every class,
    divides by zero when the column takes one value, and cannot take another reference.

    Parameters
    ----------
    table : pandas.DataFrame
        The published table.
    quasi_identifiers : sequence of str
        The quasi-identifier columns.
    sensitive : str
        The sensitive column.
    t : float
        The largest distance promised, in (0, 1].
    ordered : bool, sequence or None, default None
        The distance: ordered (True, or a list of the values in their order), equal (False) or
        by the column's type (None).
    reference : pandas.Series, numpy.ndarray or None, default None
        The sensitive values whose distribution the classes are compared with (None: the
        table's own column).

    Returns
    -------
    TClosenessReport
        Truthy when every class is t-close; the largest distance and the rows in far classes.
    """
    from . import _emd

    t = _check_t(t)
    cols = list(quasi_identifiers)
    missing = [c for c in [*cols, sensitive] if c not in table.columns]
    if missing:
        raise DataError(f"unknown column(s) {name_list(missing)}; table has {name_list(table.columns)}")
    if reference is None:
        ref = table[sensitive]
    elif isinstance(reference, pd.Series):
        ref = reference.reset_index(drop=True)
    else:
        arr = np.asarray(reference)
        if arr.ndim != 1:
            raise ParameterError(f"reference must be a 1-D array of {sensitive!r} values; got shape {arr.shape}")
        ref = pd.Series(arr)
    if ordered is None:
        ordered = _default_order(table[sensitive].dtype)
    n = int(table.shape[0])
    if n == 0:
        return TClosenessReport(t, True, 0, 0, 0.0, 0, bool(ordered) if isinstance(ordered, (bool, np.bool_)) else True)
    if len(ref) == 0:
        raise DataError(f"the reference distribution of column {sensitive!r} is empty")
    codes, ref_codes, m, is_ordered, _ = _encode_sensitive(table[sensitive], ref, ordered, sensitive)
    if cols:
        classes = class_ids(table[cols])
    else:
        classes = np.zeros(n, dtype=np.int64)
    n_classes = int(classes.max()) + 1
    distance = _emd.emd_by_class(classes, codes, n_classes, np.bincount(ref_codes, minlength=m), is_ordered)
    far = _emd.exceeds(distance, t)
    sizes = np.bincount(classes, minlength=n_classes)
    return TClosenessReport(
        t=t, ok=not bool(far.any()), n_rows=n, n_classes=n_classes, max_distance=float(distance.max()),
        n_rows_in_far_classes=int(sizes[far].sum()), ordered=is_ordered,
    )


#: how a missing quasi-identifier value matches others: "itself" (a value of its own) or "any"
#: (sdcMicro's wildcard: it matches every value)
MISSING_MATCHES = ("itself", "any")


def radix_rows(codes: np.ndarray) -> np.ndarray:
    """One int64 key per row of a non-negative code matrix (equal rows, equal keys), renumbered
    densely before a digit would carry it past int64."""
    n = codes.shape[0]
    key = np.zeros(n, dtype=np.int64)
    for j in range(codes.shape[1]):
        width = int(codes[:, j].max(initial=0)) + 1
        if key.max(initial=0) >= 2**62 // width:
            key = pd.factorize(key)[0].astype(np.int64)
        key = key * width + codes[:, j]
    return key


def wildcard_counts(codes: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """sdcMicro's ``fk`` (and, with weights, ``Fk``) with missing values, as 5.8.0's
    ``freqCalc`` (``alpha = 1``) counts them, of every row of an integer code matrix (``-1`` for
    a missing value).

    Row j counts for row i when, in every column, their values are equal or either is missing
    (the row itself included). Two rules of ``R/freqCalc.r`` are kept: a row missing in EVERY
    column gets the whole sample, and, with two or more columns, it does not count for a row
    missing in no column (``addAllNAtoKeys`` is off there; with one column ``freqCalc`` adds the
    missing rows to every value). This is the one definition: local suppression counts k with
    it and the sample risk (:func:`incrowd.risk`) takes ``fk`` and ``Fk`` from it.

    ``weights``: what each row counts for, ``(n,)`` or ``(n, c)`` for several sums in one pass
    (the sampling weights give ``Fk``; counts of distinct rows give the rows' ``fk``). The
    result has the weights' shape, ``int64`` for integer weights (or none: each row counts 1),
    ``float64`` otherwise. Work: linear in the rows (hashing), then one grouping of the distinct
    rows per pair of missing patterns present.
    """
    codes = np.asarray(codes, dtype=np.int64)
    n, p = codes.shape
    integral = weights is None or np.issubdtype(np.asarray(weights).dtype, np.integer)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    flat = w.ndim == 1
    w = w.reshape(n, -1)
    out = _wildcard_sums(codes, w)
    out = out[:, 0] if flat else out
    return out.astype(np.int64) if integral else out


def _wildcard_sums(codes: np.ndarray, w: np.ndarray) -> np.ndarray:
    n, p = codes.shape
    c = w.shape[1]
    if n == 0:
        return np.zeros((0, c))
    if p == 0:
        return np.broadcast_to(w.sum(axis=0), (n, c)).copy()
    # the distinct combinations with their weight sums; -1 (missing) is shifted to 0
    shifted = codes + 1
    inverse, combo = pd.factorize(radix_rows(shifted))  # hashing: linear, where sorting is n log n
    m = combo.shape[0]
    first = np.zeros(m, dtype=np.int64)
    first[inverse[::-1]] = np.arange(n - 1, -1, -1)
    keys = codes[first]
    weight = np.stack([np.bincount(inverse, weights=w[:, j], minlength=m) for j in range(c)], axis=1)
    missing: np.ndarray = np.asarray(keys < 0)
    if not missing.any():
        return weight[inverse]
    bits = missing.astype(np.int64) @ (1 << np.arange(p, dtype=np.int64)) if p < 63 else \
        pd.factorize(radix_rows(missing.astype(np.int64)))[0].astype(np.int64)
    every = np.asarray(missing.all(axis=1))
    out = np.zeros((m, c))
    members = [np.flatnonzero(bits == b) for b in np.unique(bits)]
    for rows_a in members:
        if every[rows_a[0]]:
            out[rows_a] = w.sum(axis=0)  # freqCalc: a row missing everywhere gets the whole sample
            continue
        none_a = not missing[rows_a[0]].any()
        for rows_b in members:
            if p > 1 and none_a and every[rows_b[0]]:
                continue  # freqCalc's complete keys leave out the all-missing ones
            shared = np.flatnonzero(~(missing[rows_a[0]] | missing[rows_b[0]]))
            if shared.size == 0:
                out[rows_a] += weight[rows_b].sum(axis=0)
                continue
            # one key over both sets of combinations, so that equal values get equal keys
            where, uniq = pd.factorize(radix_rows(shifted[first[np.concatenate([rows_a, rows_b])]][:, shared]))
            on_a, on_b = where[:rows_a.size], where[rows_a.size:]
            for j in range(c):
                out[rows_a, j] += np.bincount(on_b, weights=weight[rows_b, j], minlength=uniq.size)[on_a]
    return out[inverse]


def quasi_identifier_codes(frame: pd.DataFrame, *, empty_is_missing: bool = False) -> np.ndarray:
    """Integer codes (n, columns) of a frame's values, ``-1`` for a missing value; with
    ``empty_is_missing`` an empty text value is missing too (a CSV file read back as text holds
    ``""`` where the table in memory held a missing value). A user-missing code of a
    statistical file (read as a NaN that stands for its code) is a value of its own, as
    :func:`class_ids` counts it: the file shows it, so it never matches any value."""
    from .io import code_indices

    out = np.empty(frame.shape, dtype=np.int64)
    for j in range(frame.shape[1]):
        column = frame.iloc[:, j]
        try:  # codes in the values' order, so that the order of the rows does not number them
            codes, _ = pd.factorize(column, use_na_sentinel=True, sort=True)
        except TypeError:  # values of several types that do not compare
            codes, _ = pd.factorize(column, use_na_sentinel=True)
        codes = np.asarray(codes, dtype=np.int64)
        if empty_is_missing and not pd.api.types.is_numeric_dtype(column.dtype):
            codes[np.asarray(column.astype(object) == "", dtype=bool)] = -1
        if pd.api.types.is_float_dtype(column.dtype):
            index = code_indices(column.to_numpy(dtype=np.float64, na_value=np.nan))
            coded = index >= 0
            if coded.any():  # after every value's code, one per user-missing code
                codes[coded] = codes.max(initial=-1) + 1 + index[coded]
        out[:, j] = codes
    return out


def match_counts(table: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None, *,
                 missing_matches: str = "itself") -> np.ndarray:
    """How many rows share each row's quasi-identifier values (the row itself included).

    Parameters
    ----------
    table : pandas.DataFrame
        The rows.
    quasi_identifiers : sequence of str, optional
        The columns compared (all when None).
    missing_matches : {"itself", "any"}
        ``"itself"``: a missing value is a value of its own (the size of the row's class, as
        :func:`verify_k_anonymity` counts it). ``"any"``: sdcMicro's wildcard, a missing value
        (or an empty text value) matches every value, as sdcMicro's ``freqCalc`` and ``kAnon``
        count it (:func:`wildcard_counts`).

    Returns
    -------
    numpy.ndarray
        One count per row, in row order.
    """
    if missing_matches not in MISSING_MATCHES:
        raise ParameterError(f"missing_matches must be one of {', '.join(MISSING_MATCHES)}; got {missing_matches!r}")
    cols = list(table.columns) if quasi_identifiers is None else list(quasi_identifiers)
    absent = [c for c in cols if c not in table.columns]
    if absent:
        raise DataError(f"unknown quasi-identifier column(s) {name_list(absent)}; table has {name_list(table.columns)}")
    frame = table[cols]
    if missing_matches == "itself":
        ids = class_ids(frame)
        return np.bincount(ids)[ids] if ids.size else np.zeros(0, dtype=np.int64)
    return wildcard_counts(quasi_identifier_codes(frame, empty_is_missing=True))
