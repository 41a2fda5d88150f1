"""How rows match on their quasi-identifiers: as equal values (a missing value a value of its
own), or with a missing value matching any value (sdcMicro's wildcard), counted per row."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, name_list
from ..io import code_indices
from ._sensitive import class_ids

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
        :func:`incrowd.privacy.verify_k_anonymity` counts it). ``"any"``: sdcMicro's wildcard, a missing value
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
