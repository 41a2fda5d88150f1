"""Local suppression: blank single quasi-identifier cells, not whole rows, until k holds.

sdcMicro's ``localSuppression`` (5.8.0, ``R/localSuppression.R``) takes the records below k
by decreasing risk and, for each, blanks the value of the least important column in which it
differs from its nearest records, then counts again, until every record matches k. Here:

1. the rows are held as their distinct value combinations with a count, so one pass over the
   combinations (not the rows) prices every choice;
2. greedy: the combination with the fewest matches is fixed first; of its columns, the one
   whose blanking closes the most of the shortfall below k, over that record AND every other
   record below k that the blank makes it match, is blanked (ties: the least important column,
   as sdcMicro orders them); repeated until no record is below k;
3. minimality: every blank is restored again, the most important columns first, wherever the
   release stays k-anonymous without it.

Two meanings of a missing value (``missing_matches``): ``"any"`` is sdcMicro's wildcard (a
missing value matches every value; k is counted as sdcMicro's ``freqCalc``/``kAnon`` count it,
:func:`incrowd.values.wildcard_counts`); ``"itself"`` makes a missing value a value of its
own (classes as every other verifier of incrowd counts them), so a blanked record leaves its
class for the class of its values with that column missing, with its whole class.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .._native import match_combinations
from ..exceptions import DataError, ParameterError, VerificationError, name_list
from ..values import MISSING_MATCHES, class_ids, quasi_identifier_codes, wildcard_counts
from ._importance import check_importance

__all__ = ["local_suppression", "LocalSuppressionResult"]


@dataclass
class LocalSuppressionResult:
    """What :func:`local_suppression` returns.

    Attributes
    ----------
    table : pandas.DataFrame
        The input with the suppressed cells set missing (row order and other columns kept).
    suppressed : dict of str to int
        Cells suppressed per quasi-identifier (missing values of the input not counted).
    mask : numpy.ndarray
        (rows, quasi-identifiers) booleans: True where a cell was suppressed.
    k : int
        The k that holds.
    missing_matches : str
        How a missing value matched when k was counted (``"any"`` or ``"itself"``).
    importance : dict of str to int
        The importance used per column (1 = most important, suppressed last).
    min_matches : int
        The fewest rows a row matches in the result (at least k).
    seconds : float
        Time of the call.
    """

    table: pd.DataFrame
    suppressed: dict[str, int]
    mask: np.ndarray = field(repr=False)
    k: int = 2
    missing_matches: str = "any"
    importance: dict[str, int] = field(default_factory=dict)
    min_matches: int = 0
    seconds: float = 0.0

    @property
    def total(self) -> int:
        """Cells suppressed in all."""
        return int(sum(self.suppressed.values()))

    def summary(self) -> dict:
        """The JSON-ready facts.

        Returns
        -------
        dict
            ``k``, ``missing_matches``, ``suppressed_cells`` (the total), ``suppressed`` (per
            column), ``rows_touched``, ``importance``, ``min_matches`` and ``seconds``.
        """
        return {"k": self.k, "missing_matches": self.missing_matches, "suppressed_cells": self.total,
                "suppressed": dict(self.suppressed), "rows_touched": int(self.mask.any(axis=1).sum()),
                "importance": dict(self.importance), "min_matches": self.min_matches, "seconds": self.seconds}


def _importance(data: pd.DataFrame, qis: list[str], importance) -> np.ndarray:
    """sdcMicro's importance per column: 1 is the most important (suppressed last), m the
    least; by default the column with the fewest distinct values is the most important."""
    m = len(qis)
    if importance is None:
        distinct = np.array([data[c].nunique(dropna=True) for c in qis])
        order = np.argsort(distinct, kind="stable")
        out = np.empty(m, dtype=np.int64)
        out[order] = np.arange(1, m + 1)
        return out
    if not isinstance(importance, Mapping):
        values = list(importance)
        if len(values) != m:
            raise ParameterError(f"importance must give one number per quasi-identifier ({m}); got {len(values)}")
        importance = dict(zip(qis, values))
    return np.asarray(check_importance(importance, qis), dtype=np.int64)



class _Combos:
    """The distinct rows (value combinations, -1 = missing) with their row counts and, per
    combination, the rows in it; combinations are appended, never removed (count 0 = gone)."""

    def __init__(self, codes: np.ndarray):
        n, m = codes.shape
        # dense ids of equal rows first: a 1-D unique, far faster than np.unique over rows
        _, first, inv = np.unique(class_ids(pd.DataFrame(codes)), return_index=True, return_inverse=True)
        # the combinations in their lexicographic order: the greedy's ties then do not depend
        # on the order of the rows
        order = np.lexsort(codes[first].T[::-1]) if m else np.arange(first.size)
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        uniq = codes[first[order]]
        inv = rank[inv.ravel()]
        self.m = m
        self.U = np.empty((max(2 * uniq.shape[0], 16), m), dtype=np.int64)
        self.U[:uniq.shape[0]] = uniq
        self.size = uniq.shape[0]
        self.w = np.zeros(self.U.shape[0], dtype=np.int64)
        self.w[:self.size] = np.bincount(inv, minlength=self.size)
        #: matches per combination (kept by the wildcard passes only)
        self.fk = np.zeros(self.U.shape[0], dtype=np.int64)
        #: per combination: missing in every column / in none (sdcMicro's two special cases)
        self.every = np.zeros(self.U.shape[0], dtype=bool)
        self.complete = np.zeros(self.U.shape[0], dtype=bool)
        self.every[:self.size] = (uniq < 0).all(axis=1)
        self.complete[:self.size] = (uniq >= 0).all(axis=1)
        self.row_of = inv.astype(np.int64)
        order = np.argsort(inv, kind="stable")
        bounds = np.cumsum(self.w[:self.size])[:-1]
        self.members = [list(part) for part in np.split(order, bounds)]
        self.index = {uniq[i].tobytes(): i for i in range(self.size)}

    def find_or_add(self, row: np.ndarray) -> tuple[int, bool]:
        key = row.tobytes()
        got = self.index.get(key)
        if got is not None:
            return got, False
        if self.size == self.U.shape[0]:
            self.U = np.vstack([self.U, np.empty_like(self.U)])
            self.w = np.concatenate([self.w, np.zeros_like(self.w)])
            self.fk = np.concatenate([self.fk, np.zeros_like(self.fk)])
            self.every = np.concatenate([self.every, np.zeros_like(self.every)])
            self.complete = np.concatenate([self.complete, np.zeros_like(self.complete)])
        i = self.size
        self.U[i] = row
        self.every[i] = bool((row < 0).all())
        self.complete[i] = bool((row >= 0).all())
        self.size += 1
        self.index[key] = i
        self.members.append([])
        return i, True

    def move(self, row_index: int, dest: int) -> None:
        src = int(self.row_of[row_index])
        self.members[src].remove(row_index)
        self.members[dest].append(row_index)
        self.w[src] -= 1
        self.w[dest] += 1
        self.row_of[row_index] = dest


def _checked_request(data: pd.DataFrame, quasi_identifiers: Sequence[str] | str, k: int, missing_matches: str,
                     limit: int | None) -> list[str]:
    """The quasi-identifiers of a valid request; a ``ParameterError`` or ``DataError`` naming
    what is wrong otherwise."""
    if not isinstance(data, pd.DataFrame):
        raise ParameterError(f"data must be a pandas DataFrame; got {type(data).__name__}")
    qis = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers)
    if not qis:
        raise ParameterError("quasi_identifiers names no column")
    absent = [c for c in qis if c not in data.columns]
    if absent:
        raise DataError(f"unknown quasi-identifier column(s) {name_list(absent)}; data has {name_list(data.columns)}")
    if len(set(qis)) != len(qis):
        raise ParameterError(f"quasi_identifiers names a column twice: {name_list(qis)}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be a positive integer; got {k!r}")
    if missing_matches not in MISSING_MATCHES:
        raise ParameterError(f"missing_matches must be one of {', '.join(MISSING_MATCHES)}; got {missing_matches!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 0):
        raise ParameterError(f"limit must be a number of cells >= 0 or None; got {limit!r}")
    return qis


def local_suppression(data: pd.DataFrame, quasi_identifiers: Sequence[str] | str, k: int, *,
                      importance: Sequence[int] | Mapping[str, int] | None = None,
                      missing_matches: str = "any", limit: int | None = None) -> LocalSuppressionResult:
    """Suppress single quasi-identifier cells (set them missing) until every row matches at
    least ``k`` rows (itself included).

    Parameters
    ----------
    data : pandas.DataFrame
        The rows; every quasi-identifier is compared by value (categories, codes or labels).
    quasi_identifiers : sequence of str or str
        The key columns.
    k : int
        Every row must match at least k rows (k >= 1).
    importance : sequence of int or mapping of str to int, optional
        sdcMicro's importance: a number from 1 to m per quasi-identifier (in their order, or by
        name); 1 is the most important column, suppressed last, m the least important,
        suppressed first. By default, as sdcMicro: the fewer distinct values a column has, the
        more important it is.
    missing_matches : {"any", "itself"}
        ``"any"`` (sdcMicro's wildcard): a missing value matches every value, and k is counted
        as sdcMicro's ``kAnon`` counts it. ``"itself"``: a missing value is a value of its own,
        as in incrowd's k verifier.
    limit : int, optional
        The most cells that may be suppressed; needing more is a ``ParameterError``.

    Returns
    -------
    LocalSuppressionResult
        The table with suppressed cells missing, the count per column, the mask, and the fewest
        matches of a row (verified to be at least k with the same meaning of missing).
    """
    t0 = time.perf_counter()
    qis = _checked_request(data, quasi_identifiers, k, missing_matches, limit)
    k = int(k)
    n = int(data.shape[0])
    imp = _importance(data, qis, importance)
    if 0 < n < k:
        raise DataError(f"k={k} cannot hold: the data has only {n} rows")
    codes = quasi_identifier_codes(data[qis])
    start = codes.copy()
    if n:
        if missing_matches == "any":
            _greedy_any(codes, k, imp)
            _restore_any(codes, start, k, imp)
        else:
            _greedy_itself(codes, k, imp)
            _restore_itself(codes, start, k, imp)
    mask = (codes < 0) & (start >= 0)
    counts = _counts(codes, missing_matches)
    fewest = int(counts.min()) if n else 0
    if n and fewest < k:  # never expected: the greedy stops only when k holds
        raise VerificationError(f"local suppression left a row matching {fewest} rows, below k={k}")
    per_column = {c: int(mask[:, j].sum()) for j, c in enumerate(qis)}
    total = int(mask.sum())
    if limit is not None and total > limit:
        raise ParameterError(f"local suppression needs {total} cells for k={k}, more than the limit of {limit} "
                             "cells; raise the limit, lower k, or generalize first")
    table = data.copy()
    for j, c in enumerate(qis):
        if mask[:, j].any():
            table[c] = table[c].mask(pd.Series(mask[:, j], index=table.index))
    return LocalSuppressionResult(table=table, suppressed=per_column, mask=mask, k=k,
                                  missing_matches=missing_matches,
                                  importance={c: int(v) for c, v in zip(qis, imp)}, min_matches=fewest,
                                  seconds=time.perf_counter() - t0)


def _value_rank(codes: np.ndarray) -> np.ndarray:
    """Each row's place in the lexicographic order of the rows' values: rows are picked by it,
    so that the order of the input rows never changes the result."""
    order = np.lexsort(codes.T[::-1]) if codes.shape[1] else np.arange(codes.shape[0])
    rank = np.empty(codes.shape[0], dtype=np.int64)
    rank[order] = np.arange(codes.shape[0])
    return rank


def _pick(members: list, rank: np.ndarray) -> int:
    return max(members, key=lambda r: rank[r])


def _counts(codes: np.ndarray, missing_matches: str) -> np.ndarray:
    if missing_matches == "any":
        return wildcard_counts(codes)
    if codes.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    ids = class_ids(pd.DataFrame(codes))
    return np.bincount(ids)[ids]


# ---------------------------------------------------------------------------------------------
# missing matches any value (sdcMicro's wildcard)


def _matches(C: _Combos, src_row: np.ndarray, c: int, value: int) -> tuple[np.ndarray, np.ndarray]:
    """Per combination: does it match a record with values ``src_row``, and one with column
    ``c`` set to ``value`` (-1: blanked) instead? One comparison of every combination."""
    return match_combinations(C.U[:C.size], src_row, c, value)


def _delta(C: _Combos, match_src: np.ndarray, match_dest: np.ndarray, src_every: bool,
           dest_every: bool) -> np.ndarray:
    """Change of every combination's matches when one record moves (sdcMicro: with two or more
    columns a record missing everywhere counts for no record missing nowhere)."""
    size = C.size
    alive = C.w[:size] > 0
    before = match_src & alive
    after = match_dest & alive
    if src_every and C.m > 1:  # with one column freqCalc counts the missing for every value
        before &= ~C.complete[:size]
    if dest_every and C.m > 1:
        after &= ~C.complete[:size]
    return after.astype(np.int64) - before


def _own_matches(C: _Combos, match_dest: np.ndarray, dest_row: np.ndarray, n: int) -> int:
    """Matches of a combination holding the moved record (counts as they are after the move)."""
    if (dest_row < 0).all():
        return n
    size = C.size
    hit = match_dest & (C.w[:size] > 0)
    if (dest_row >= 0).all() and C.m > 1:
        hit &= ~C.every[:size]
    return int(C.w[:size][hit].sum())


def _apply_move(C: _Combos, row_index: int, c: int, value: int, n: int) -> None:
    """Move one record to its values with column ``c`` set to ``value``, keeping every
    combination's matches exact: a combination gains the record where it counts it now and
    loses it where it did."""
    src = int(C.row_of[row_index])
    src_row = C.U[src].copy()
    dest_row = src_row.copy()
    dest_row[c] = value
    dest, new = C.find_or_add(dest_row)
    size = C.size
    match_src, match_dest = _matches(C, src_row, c, value)
    C.fk[:size] += _delta(C, match_src, match_dest, bool(C.every[src]), bool(C.every[dest]))
    C.move(row_index, dest)
    if new or C.every[dest]:
        C.fk[dest] = _own_matches(C, match_dest, dest_row, n)
    C.fk[:size][C.every[:size]] = n


def _greedy_any(codes: np.ndarray, k: int, imp: np.ndarray) -> None:
    n, m = codes.shape
    C = _Combos(codes)
    C.fk[:C.size] = wildcard_counts(C.U[:C.size], C.w[:C.size])
    rank = _value_rank(codes)
    # prefer the least important column (highest importance number) among equal gains
    order = np.argsort(-imp, kind="stable")
    while True:
        size = C.size
        fk = C.fk
        w = C.w[:size]
        alive = w > 0
        low = np.flatnonzero(alive & (fk[:size] < k))
        if low.size == 0:
            break
        a = int(low[np.argmin(fk[low])])
        row = C.U[a]
        U = C.U[:size]
        eq = (U == row) | (U < 0) | (row < 0)
        mism = m - eq.sum(axis=1)
        base = alive & (mism == 0)
        w0 = int(w[base].sum())
        near = np.flatnonzero(alive & (mism == 1))
        near_col = np.argmin(eq[near], axis=1) if near.size else near
        short = np.minimum(np.maximum(k - fk[near], 0), 1) * w[near]
        present = np.flatnonzero(row >= 0)
        best, best_score = None, None
        for c in order:
            if row[c] < 0:
                continue
            if present.size == 1:
                score = (min(k, n) - fk[a], 0)  # the last value: the record then matches all
            else:
                gain_rows = near_col == c
                new_fk = w0 + int(w[near[gain_rows]].sum())
                score = (min(k, new_fk) - min(k, int(fk[a])) + int(short[gain_rows].sum()), 0)
            if best_score is None or score > best_score:
                best, best_score = int(c), score
        if present.size == 0 or best is None:  # cannot happen while n >= k: a record missing everywhere matches n
            raise VerificationError("local suppression found a record missing everywhere below k")
        _apply_move(C, _pick(C.members[a], rank), best, -1, n)
    _write_back(C, codes)


def _restore_any(codes: np.ndarray, start: np.ndarray, k: int, imp: np.ndarray) -> None:
    """Give every suppressed cell its value back where every record still matches k; again
    until none can be (a restored cell can make room for one refused before)."""
    while _restore_any_once(codes, start, k, imp):
        pass


def _restore_any_once(codes: np.ndarray, start: np.ndarray, k: int, imp: np.ndarray) -> int:
    n, m = codes.shape
    C = _Combos(codes)
    C.fk[:C.size] = wildcard_counts(C.U[:C.size], C.w[:C.size])
    rows, cols = np.nonzero((codes < 0) & (start >= 0))
    # the most important columns first (importance 1 restored first)
    # equal rows side by side: the order of the input rows does not change the result
    order = np.lexsort((rows, _value_rank(start)[rows], C.row_of[rows], imp[cols]))
    restored = 0
    for r, c in zip(rows[order], cols[order]):
        fk = C.fk
        src = int(C.row_of[r])
        src_row = C.U[src]
        value = int(start[r, c])
        size = C.size
        w = C.w[:size]
        match_src, match_dest = _matches(C, src_row, c, value)
        after = fk[:size] + _delta(C, match_src, match_dest, bool(C.every[src]), False)
        after[C.every[:size]] = n
        stay = w > 0
        if w[src] == 1:
            stay[src] = False  # the combination empties: no record left to hold to k
        if (after[stay] < k).any():
            continue
        dest_row = src_row.copy()
        dest_row[c] = value
        dest = C.index.get(dest_row.tobytes())
        if dest is None or C.w[dest] == 0:
            # the record alone in a new combination: its own matches, itself among them
            hit = match_dest & stay
            if (dest_row >= 0).all() and C.m > 1:
                hit &= ~C.every[:size]
            # the source combination keeps one record fewer; the record itself counts once
            if int(w[hit].sum()) - int(hit[src]) + 1 < k:
                continue
        _apply_move(C, int(r), int(c), value, n)
        restored += 1
    _write_back(C, codes)
    return restored


def _write_back(C: _Combos, codes: np.ndarray) -> None:
    codes[:] = C.U[C.row_of]


# ---------------------------------------------------------------------------------------------
# missing is a value of its own


def _greedy_itself(codes: np.ndarray, k: int, imp: np.ndarray) -> None:
    n, m = codes.shape
    C = _Combos(codes)
    rank = _value_rank(codes)
    order = np.argsort(-imp, kind="stable")
    while True:
        size = C.size
        w = C.w[:size]
        alive = w > 0
        low = np.flatnonzero(alive & (w < k))
        if low.size == 0:
            break
        a = int(low[np.argmin(w[low])])
        row = C.U[a].copy()
        present = np.flatnonzero(row >= 0)
        if present.size == 0:
            _fill_all_missing(C, a, k, rank)
            continue
        U = C.U[:size]
        eq = U == row
        mism = m - eq.sum(axis=1)
        near = np.flatnonzero(alive & (mism == 1) & (w < k))
        near_col = np.argmin(eq[near], axis=1) if near.size else near
        near_ok = U[near, near_col] >= 0 if near.size else near.astype(bool)
        best, best_score = None, None
        for c in order:
            if row[c] < 0:
                continue
            target = row.copy()
            target[c] = -1
            t = C.index.get(target.tobytes())
            b = int(C.w[t]) if t is not None else 0
            pooled = int(w[near[(near_col == c) & near_ok]].sum())
            score = (min(k, int(w[a]) + b + pooled), min(k, int(w[a]) + b))
            if best_score is None or score > best_score:
                best, best_score = int(c), score
        target = row.copy()
        target[best] = -1
        dest, _ = C.find_or_add(target)
        for r in list(C.members[a]):
            C.move(r, dest)
    _write_back(C, codes)


def _fill_all_missing(C: _Combos, a: int, k: int, rank: np.ndarray) -> None:
    """The class missing everywhere is below k: records of classes with rows to spare join it."""
    need = k - int(C.w[a])
    size = C.size
    spare = np.flatnonzero(C.w[:size] > k)
    for s in spare[np.argsort(-C.w[spare], kind="stable")]:
        while need > 0 and C.w[s] > k:
            C.move(_pick(C.members[s], rank), a)
            need -= 1
        if need == 0:
            return
    # no rows to spare: whole classes join it (a part left behind would fall below k), the
    # smallest that is enough, else the smallest ones
    while need > 0:
        size = C.size
        others = np.flatnonzero((C.w[:size] > 0) & (np.arange(size) != a))
        if others.size == 0:
            raise DataError(f"k={k} cannot be reached by local suppression: too few rows")
        enough = others[C.w[others] >= need]
        pick = int(enough[np.argmin(C.w[enough])]) if enough.size else int(others[np.argmin(C.w[others])])
        need -= int(C.w[pick])
        for r in list(C.members[pick]):
            C.move(r, a)


def _restore_itself(codes: np.ndarray, start: np.ndarray, k: int, imp: np.ndarray) -> None:
    while _restore_itself_once(codes, start, k, imp):
        pass


def _restore_itself_once(codes: np.ndarray, start: np.ndarray, k: int, imp: np.ndarray) -> int:
    n, m = codes.shape
    C = _Combos(codes)
    rows, cols = np.nonzero((codes < 0) & (start >= 0))
    # equal rows side by side: the order of the input rows does not change the result
    order = np.lexsort((rows, _value_rank(start)[rows], C.row_of[rows], imp[cols]))
    restored = 0
    for r, c in zip(rows[order], cols[order]):
        src = int(C.row_of[r])
        dest_row = C.U[src].copy()
        dest_row[c] = start[r, c]
        left = int(C.w[src]) - 1
        if 0 < left < k:
            continue
        dest = C.index.get(dest_row.tobytes())
        # a new combination (dest None) would hold 1 row: below k, which is >= 2 once a cell is suppressed
        if dest is None or int(C.w[dest]) + 1 < k:
            continue
        C.move(int(r), dest)
        restored += 1
    _write_back(C, codes)
    return restored
