"""The verifiers of a published table: k-anonymity, distinct l-diversity and t-closeness, each
with its report (what held, the smallest class, the rows that fail).

They count values as :mod:`incrowd.values` says (a missing quasi-identifier value is a value of
its own, or matches any value where asked; a missing sensitive value is never a distinct value);
:class:`incrowd.privacy.ReleaseCheck` gives their records for every written release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, name_list
from ..values import class_ids, match_counts, sensitive_keys, sensitive_order
from . import _emd

__all__ = ["KAnonymityReport", "LDiversityReport", "TClosenessReport", "verify_k_anonymity", "verify_l_diversity",
           "verify_t_closeness"]


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
        arr = np.asarray(table, dtype=np.float64)
        arr = arr[:, None] if arr.ndim == 1 else arr  # one column of values
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
