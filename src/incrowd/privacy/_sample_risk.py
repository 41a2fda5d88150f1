"""Re-identification risk of a sample survey, as sdcMicro 5.8.0 measures it.

- :func:`frequencies`: ``fk`` (rows sharing a row's key combination in the sample) and ``Fk``
  (the sum of their weights: the combination's estimated size in the population), as
  ``freqCalc``, missing key values included (see there).
- :func:`individual_risk`: the Benedetti-Franconi risk of each row, as ``indivRisk`` (its
  default ``method="approx"``).
- :func:`global_risk`: the sum, mean and percentage of the individual risks, as ``measure_risk``.
- :func:`household_risk`: the risk that at least one member of a row's household is
  re-identified, as ``measure_risk`` with ``hid``.

Every function is linear or n log n in the rows (factorizing, ``np.unique``, grouped sums); the
only loop (in :func:`incrowd.values.wildcard_counts`) is over the pairs of missing-value
patterns present among the distinct key combinations (none for a table without missing keys).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, cell_text


def key_codes(data: pd.DataFrame, quasi_identifiers: Sequence[str]) -> np.ndarray:
    """The key values as integer codes, one column per key, ``-1`` where the value is missing.

    Values compare as :func:`incrowd.values.sensitive_keys` compares them: numbers as numbers
    (the text ``1.0`` and the number 1 are one value), text without trailing blanks, the NA
    vocabulary (an empty cell, ``NA``, ...) and system missing values as missing; a statistical
    file's user-missing code (SPSS 98 "refused") is a value of its own.
    """
    n = int(data.shape[0])
    codes = np.empty((n, len(quasi_identifiers)), dtype=np.int64)
    for j, name in enumerate(quasi_identifiers):
        codes[:, j] = _column_codes(data[name])
    return codes


def _column_codes(column: pd.Series) -> np.ndarray:
    return column_keys(column)[0]


def column_keys(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, values)``: a key column's codes as :func:`key_codes` gives them and, for each
    code, the value it stands for as values compare (a float, text without trailing blanks, a
    user-missing code as the file holds it). Codes are numbered within the column, values are
    not: two parts of one file give their rows the same values, so their keys can be matched
    across the parts (a distributed count of fk)."""
    from ..values import sensitive_keys

    if isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(object)
    if pd.api.types.is_float_dtype(column.dtype) and column.attrs.get("statfile"):
        keys, _ = sensitive_keys(column)  # user-missing codes hide behind NaN here
        codes, values = pd.factorize(keys, use_na_sentinel=True)
        return codes.astype(np.int64), np.asarray(values, dtype=object)
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        numbers = column.to_numpy(dtype=np.float64, na_value=np.nan)
        codes, values = pd.factorize(numbers, use_na_sentinel=True)
        return codes.astype(np.int64), np.asarray(values, dtype=object)
    # factorize the cells first, then canonicalize the (few) distinct values
    factor, uniques = pd.factorize(column, use_na_sentinel=True)
    canon, _ = sensitive_keys(pd.Series(np.asarray(uniques, dtype=object), dtype=object))
    canon_codes, values = pd.factorize(canon, use_na_sentinel=True)
    out = np.full(len(factor), -1, dtype=np.int64)
    present = factor >= 0
    out[present] = canon_codes.astype(np.int64)[factor[present]]
    return out, np.asarray(values, dtype=object)


def row_ids(matrix: np.ndarray) -> np.ndarray:
    """One id per distinct row of a non-negative integer matrix (equal rows, equal ids)."""
    from ..values import radix_rows

    return radix_rows(matrix)


def frequencies(codes: np.ndarray, weights: np.ndarray | None = None,
                counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(fk, Fk)`` of every row, as sdcMicro 5.8.0's ``freqCalc`` (``alpha = 1``).

    ``codes``: the key codes (:func:`key_codes`, ``-1`` missing); ``weights``: the sampling
    weights (all 1 when ``None``, so that ``Fk = fk``).

    Missing key values match as in ``freqCalc``: a missing value matches any value. A row is
    counted in the frequency of every row it is compatible with (equal wherever both have a
    value), with two exceptions ``freqCalc`` makes: a row whose keys are all missing gets the
    whole sample (``fk = n``, ``Fk`` = the sum of all weights), and, with two or more keys, a row
    without missing keys does not count the rows whose keys are all missing. The counting is
    :func:`incrowd.values.wildcard_counts` (the one definition, local suppression's too).

    ``counts``: where each row of ``codes`` is a key combination carried by that many rows
    (``weights`` then their weight sums): the fk and Fk of the combinations.
    """
    from ..values import wildcard_counts

    n = codes.shape[0]
    rows = np.ones(n) if counts is None else np.asarray(counts, dtype=np.float64)
    w = rows if weights is None else np.asarray(weights, dtype=np.float64)
    both = wildcard_counts(codes, np.column_stack([rows, w]))
    return both[:, 0], both[:, 1]


def individual_risk(fk: np.ndarray, Fk: np.ndarray | None = None) -> np.ndarray:
    """Each row's re-identification risk, as sdcMicro 5.8.0's ``indivRisk`` (``method="approx"``).

    Without weights (``Fk`` None) the risk is ``1 / fk``. With weights, ``pk = fk / Fk`` and
    (Benedetti and Franconi's negative-binomial model, approximated as in sdcMicro):

    - ``fk = 1``: ``pk / (1 - pk) * log(1 / pk)``;
    - ``fk = 2``: ``pk / (1 - pk) - (pk / (1 - pk))**2 * log(1 / pk)``;
    - ``fk > 2``: ``pk / (fk - (1 - pk))``;
    - ``fk = Fk`` (the combination's whole population is in the sample): ``1 / fk``.

    With weights of 1 or more (``Fk >= fk``) every risk is in [0, 1].

    Where ``pk`` is within 0.001 of 1 the ``fk = 1`` and ``fk = 2`` formulas are evaluated
    by their power series in ``q = 1 - pk``: the closed forms cancel there (sdcMicro's
    ``fk = 2`` risk at a weight of 1 + 2e-16 is 1.5, where the limit is 1/2); elsewhere the
    closed forms are sdcMicro's, digit for digit.
    """
    fk = np.asarray(fk, dtype=np.float64)
    if Fk is None:
        return 1.0 / fk
    Fk = np.asarray(Fk, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pk = fk / Fk
        odds = pk / (1.0 - pk)
        log_inv = np.log(1.0 / pk)
        rk = np.zeros_like(fk)
        rk = np.where(fk > 2, pk / (fk - (1.0 - pk)), rk)
        rk = np.where(fk == 2, odds - odds**2 * log_inv, rk)
        rk = np.where(fk == 1, odds * log_inv, rk)
        q = 1.0 - pk
        near = np.abs(q) < _SERIES_BELOW
        if near.any():
            rk = np.where(near & (fk == 1), _series(q, lambda k: 1.0 / k), rk)
            rk = np.where(near & (fk == 2), _series(q, lambda k: 1.0 / (k * (k + 1))), rk)
        rk = np.where(fk == Fk, 1.0 / fk, rk)
    return rk


#: |1 - pk| below which indivRisk's fk = 1 and fk = 2 formulas are summed as series
_SERIES_BELOW = 1e-3


def _series(q: np.ndarray, coefficient) -> np.ndarray:
    """(1 - q) * sum over k >= 1 of coefficient(k) q**(k - 1): the fk = 1 risk
    (p / q) log(1 / p) with coefficient 1/k, the fk = 2 risk with 1/(k (k + 1)); nine terms
    leave an error below |q|**9 < 1e-27."""
    total = np.zeros_like(q)
    for k in range(9, 0, -1):
        total = total * q + coefficient(k)
    return (1.0 - q) * total


def global_risk(risk: np.ndarray, counts: np.ndarray | None = None) -> dict[str, float]:
    """``measure_risk``'s global figures from the individual risks: the expected number of
    re-identifications (their sum), the global risk (their mean) and its percentage.
    ``counts``: how many rows carry each risk (one each when None), where the risks are those of
    the key combinations."""
    risk = np.asarray(risk, dtype=np.float64)
    if counts is None:
        expected, rows = float(risk.sum()), risk.size
    else:
        expected, rows = float((risk * counts).sum()), int(np.sum(counts))
    mean = expected / rows if rows else float("nan")
    return {"global_risk": mean, "global_risk_percent": 100.0 * mean, "expected_reidentifications": expected}


def household_risk(risk: np.ndarray, household: pd.Series | np.ndarray) -> np.ndarray:
    """Each row's household risk, as ``measure_risk`` with ``hid``: the probability that at
    least one member of its household is re-identified, ``1 - prod(1 - risk)`` over the members
    (rows with equal household id)."""
    ids = pd.factorize(pd.Series(household), use_na_sentinel=True)[0]
    survive = pd.Series(1.0 - np.asarray(risk, dtype=np.float64))
    return 1.0 - survive.groupby(ids, sort=False).transform("prod").to_numpy()


def sampling_weights(column: pd.Series, name: str) -> np.ndarray:
    """A weight column as positive finite numbers, or a :class:`DataError` naming the first row
    that is not one (rows counted from 1)."""
    from ..io import NA_VALUES

    if pd.api.types.is_bool_dtype(column.dtype):
        raise DataError(f"weight column {name!r} holds true/false values; give the sampling weights (numbers)")
    if pd.api.types.is_numeric_dtype(column.dtype):
        values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        # parse each distinct text once: a million rows hold a few thousand weights
        factor, uniques = pd.factorize(column, use_na_sentinel=True)
        text = pd.Series(np.asarray(uniques, dtype=object))
        text = text.where(~text.map(lambda v: isinstance(v, str) and v.strip() in NA_VALUES))
        parsed = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        values = np.full(len(factor), np.nan)
        values[factor >= 0] = parsed[factor[factor >= 0]]
    bad = ~(values >= 1.0) | ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        cell, coded = column.iloc[row], user_missing_text(column, row, name)
        if coded is not None:
            said = f"{coded} is not a weight (a sampling weight is the number of people a respondent stands for)"
        elif cell.strip() in NA_VALUES if isinstance(cell, str) else bool(pd.isna(cell)):
            said = "the weight is missing (every row needs the number of people it stands for)"
        elif 0 < values[row] < 1:
            said = (f"{_shown(cell, values[row])} is below 1 (a sampling weight counts the people a respondent "
                    "stands for, the respondent included; below 1 the risks exceed 1)")
        else:
            said = (f"{_shown(cell, values[row])} is not a positive number (a sampling weight is the number of "
                    "people a respondent stands for)")
        raise DataError(f"weight column {name!r}, row {row + 1}: {said}")
    with np.errstate(over="ignore"):
        total = float(values.sum())
    if not np.isfinite(total):
        raise DataError(f"weight column {name!r}: the weights add up to more than {np.finfo(np.float64).max:.4g} "
                        "people; give each row the number of people it stands for")
    return values


def household_ids(column: pd.Series, name: str) -> pd.Series:
    """A household column, or a :class:`DataError` naming its first missing cell."""
    from ..io import NA_VALUES

    missing = column.isna().to_numpy()
    if not pd.api.types.is_numeric_dtype(column.dtype):
        missing = missing | column.astype(object).map(lambda v: isinstance(v, str) and v.strip() in NA_VALUES).to_numpy(bool)
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        coded = user_missing_text(column, row, name)
        # a user-missing id ("not stated") says the household is unknown: its rows are no household
        said = "the household id is missing" if coded is None else f"{coded} is not a household id"
        raise DataError(f"household column {name!r}, row {row + 1}: {said} (every row needs its household)")
    return column.reset_index(drop=True)


def user_missing_text(column: pd.Series, row: int, name: str) -> str | None:
    """Cell ``row`` (0-based) of a column read from a statistical file as the file holds it when it
    is a user-missing code: ``-9 (user-missing, 'Refused')``; None for any other cell. The reader
    gives such a cell as NaN, which a message must not show: the file holds -9."""
    from ..io import code_indices

    if not pd.api.types.is_float_dtype(column.dtype):
        return None
    index = int(code_indices(np.asarray([column.iloc[row]], dtype=np.float64))[0])
    if index < 0:
        return None
    meta = column.attrs.get("statfile")
    info = ((meta.get("columns") or {}).get(str(name)) or {}) if isinstance(meta, dict) else {}
    codes = list(info.get("missing_codes") or ())
    if index >= len(codes):
        return "a user-missing code"
    code = codes[index]
    label = next((str(t) for c, t in info.get("value_labels") or () if _same_code(c, code)), None)
    shown = "." + code if isinstance(code, str) else _number_text(float(code))  # Stata's .a, SPSS's -9
    return f"{shown} (user-missing{', ' + repr(label) if label is not None else ''})"


def _same_code(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return str(a) == str(b)
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def _number_text(number: float) -> str:
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)


def _shown(cell, value: float) -> str:
    """A weight cell for a message: text that reads as a number as written (' 0.5' as 0.5), other
    text quoted, a number as Python writes it (never numpy's repr)."""
    if isinstance(cell, str):
        return cell.strip() if np.isfinite(value) else repr(cell)
    return cell_text(cell)


def check_threshold(threshold: float) -> float:
    """The risk threshold as a float in (0, 1], or a :class:`ParameterError`."""
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        raise ParameterError(f"threshold must be a number in (0, 1]; got {cell_text(threshold)}") from None
    if not 0 < value <= 1:
        raise ParameterError(f"threshold must be in (0, 1]; got {cell_text(threshold)}")
    return value


__all__: list[str] = []
