"""What counts as a value: one definition for the release, its verifiers and the report.

A row's class (:func:`class_ids`: equal values in every column, a missing value a value of its
own, each user-missing code of a statistical file one too); the values of a sensitive column
(:func:`sensitive_keys`, :func:`sensitive_order`, :func:`sensitive_codes`: numbers compare as
numbers, trailing blanks make no other value, a missing value is never a present one).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError
from ..io import NA_VALUES, code_indices


def class_ids(frame: pd.DataFrame) -> np.ndarray:
    """Class number of every row: rows with equal values in every column share one.

    A missing value is a value of its own, and so is each user-missing code of a statistical
    file (SPSS 8 "don't know" and 9 "refused", Stata ``.a``), apart from system missing and
    from each other: the file shows them as values, so a reader tells them apart."""
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
