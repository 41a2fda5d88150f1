"""SUDA2: special uniques of a sample, scored as sdcMicro 5.8.0's ``suda2`` scores them.

A *minimal sample unique* (MSU) of record r is a set S of key variables on which r has no
missing value, such that no other record carries r's values on all of S (r is unique on S)
while r is unique on no proper subset of S. A missing value matches nothing, as in sdcMicro
(whose C++ search never makes an item of a missing value): a record is never unique through
a variable it lacks, and another record missing a variable of S does not share r's values on S.

With M key variables, record r scores ``sum over its MSUs S of (M - |S|)!`` (Elliot et al.,
"SUDA: A Program for Detecting Special Uniques"; sdcMicro's default ``original_scores=TRUE``;
with ``original_scores=False`` an MSU weighs ``(2^(M-|S|) - 1) |S|! (M-|S|)! / M!``, as in the
IHSN's original implementation, which sdcMicro keeps as its ``original_scores=FALSE``),
and its DIS score is ``1 / (1 + (U/dis - U) / (score^Q * sum_s score_s^-Q))`` with
``Q = 1 + (8 - M)/20``, U the sample uniques and ``dis = U f / (U f + P (1 - f))`` from the
sampling fraction f (``dis_fraction``) and the records P in pairs (classes of two).

What sdcMicro does that a reader would not guess, and this module does the same so the figures
agree to the last digit:

- U counts only the sample uniques that are alone in their bucket of the C++ code's 16-bit hash
  of the record's values (a unique sharing a bucket with any other record is not counted), so
  the DIS score is NaN where U is 0 while some record has an MSU;
- ``dis``, Q and ``U/dis - U`` are computed in single precision;
- with fewer than three keys, constant columns are added (so M is 3 in the weights and in Q).

The search (after Manning, Haglin & Keane, "A recursive search algorithm for statistical
disclosure assessment", 2008, the algorithm behind sdcMicro's SUDA2) refines groups of equal
values one variable at a time, depth first over a prefix tree of variable sets ordered so that
every subset of a set comes before it. A group is followed further only while it has two or
more records, the new variable splits it, and one of its records is unique on the group's
variables plus all later ones without an MSU inside the group's variables (only such a record
can have an MSU further down); a record found unique leaves the group. Time is linear in the
records each node of the tree still holds: a file without full-key uniques costs one grouping.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._native import counting_order, dis_scores, msu_search, record_hashes
from .._runtime import cancel as _cancel
from ..exceptions import BuildCancelled, ParameterError, WorkBudgetExceeded

__all__ = ["suda2"]

#: sdcMicro's ``missing`` default: the number R's wrapper writes into missing cells
_R_MISSING = -999
#: the masks of variable subsets are int64 bit sets
_MAX_KEYS = 62
#: steps (records visited, MSUs compared) a search may take; the search is exponential in the
#: keys; this many take seconds to a minute on one core, as busy as it is. 0 lifts the bound
WORK_BUDGET = 200_000_000


def suda2(keys: pd.DataFrame, *, missing=None, dis_fraction: float = 0.01,
          original_scores: bool = True, max_size: int | None = None,
          work_budget: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-record SUDA score and DIS score, as sdcMicro 5.8.0's ``suda2`` computes them.

    Parameters
    ----------
    keys : pandas.DataFrame
        One column per key variable (quasi-identifier), one row per record. Numbers with
        integer values are used as they are (sdcMicro's hash sees them); other columns are
        categories, coded 1, 2, ... in sorted order (a category column: in its own order), as
        R codes a factor; numbers with fractions too, each value its own. The search is
        exponential in the number of columns at worst, as sdcMicro's is.
    missing : scalar, optional
        A value that stands for "missing" in every key column, besides NaN/None (sdcMicro's
        ``missing``, default -999 there). A missing value matches no other value.
    dis_fraction : float, default 0.01
        Sampling fraction for the DIS score (sdcMicro's ``DisFraction``), in (0, 1].
    original_scores : bool, default True
        sdcMicro's ``original_scores``: True weighs an MSU of size s by ``(M - s)!`` (Elliot et
        al.); False by ``(2^(M - s) - 1) s! (M - s)! / M!``, as the IHSN's original
        implementation did (:func:`msu_weights`).
    max_size : int, optional
        The largest MSU searched (in keys; default: all keys). Larger MSUs are not found and
        add nothing to the scores; each MSU found is still weighed among all M keys. sdcMicro
        has no such bound: its figures are those with ``max_size`` unset.
    work_budget : int, optional
        The most steps (records visited, MSUs compared) the search may take; default
        :data:`WORK_BUDGET`, 0 for no bound. A search whose estimate (rows unique on all keys
        times the key sets searched) exceeds it is refused before it starts, and one that
        reaches it is stopped: both raise :class:`~incrowd.exceptions.WorkBudgetExceeded`.

    Returns
    -------
    score : numpy.ndarray
        SUDA score per record (``suda2()$score``): 0 for a record without MSUs.
    dis_score : numpy.ndarray
        DIS-SUDA score per record (``suda2()$disScore``).

    Raises
    ------
    WorkBudgetExceeded
        The search would take, or took, more than ``work_budget`` steps.
    BuildCancelled
        Run under a cancel token (a web job) that was cancelled: the search stops within
        65,536 steps.
    """
    largest, budget = _checked_options(keys, dis_fraction, original_scores, max_size, work_budget)
    n, keys_given = keys.shape
    if n == 0:
        return np.zeros(0), np.zeros(0)
    codes, raw = _three_keys_at_least(*_encode(keys, missing))  # one row per variable
    m = codes.shape[0]
    # most values first: groups split early, and the sets with most supersets hold fewest records
    cards = codes.max(axis=1).astype(np.int64) + 1
    order = np.argsort(-cards, kind="stable")
    codes = codes[order]
    suffix = _suffix_classes(codes)
    full = suffix[0]  # class number on all keys, in lexicographic order of the records' codes
    sizes = np.bincount(full)
    weights = msu_weights(m, bool(original_scores))
    score = np.zeros(n)
    candidates = int(np.count_nonzero(sizes == 1))
    if candidates:  # no record is unique on a subset unless unique on all keys
        estimate = candidates * key_sets(keys_given, largest)
        if budget and estimate > budget:
            raise WorkBudgetExceeded(_over_budget(keys_given, largest, candidates, budget, estimate))
        rows, counts = _msu_search(codes, cards[order], suffix, full, sizes, min(largest, m), budget)
        if counts is None:
            raise WorkBudgetExceeded(_over_budget(keys_given, largest, candidates, budget))
        score[rows] = counts.astype(np.float64) @ weights
    return score, _dis_scores(score, raw, full, sizes, m, float(dis_fraction))


def _three_keys_at_least(codes: np.ndarray, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The keys' codes and values, with constant keys added up to three, as sdcMicro's wrapper
    adds them: its C++ search needs three variables."""
    pad, n = 3 - codes.shape[0], codes.shape[1]
    if pad <= 0:
        return codes, raw
    return (np.vstack([codes, np.zeros((pad, n), dtype=np.int32)]),
            np.vstack([raw, np.ones((pad, n), dtype=np.int64)]))


def _checked_options(keys, dis_fraction, original_scores, max_size, work_budget) -> tuple[int, int]:
    """(the largest MSU searched, the work budget) of a valid call; a ``ParameterError`` naming
    the parameter otherwise."""
    if not isinstance(keys, pd.DataFrame):
        raise ParameterError(f"keys must be a pandas DataFrame; got {type(keys).__name__}")
    if isinstance(dis_fraction, bool) or not isinstance(dis_fraction, (int, float, np.floating, np.integer)) \
            or not (0.0 < float(dis_fraction) <= 1.0):
        raise ParameterError(f"dis_fraction must be a number in (0, 1]; got {dis_fraction!r}")
    if not isinstance(original_scores, (bool, np.bool_)):
        raise ParameterError(f"original_scores must be true or false; got {original_scores!r}")
    m = keys.shape[1]
    if m == 0:
        raise ParameterError("keys has no columns; suda2 needs at least one key variable")
    if m > _MAX_KEYS:
        raise ParameterError(f"keys has {m} columns; suda2 takes at most {_MAX_KEYS} key variables")
    largest = m if max_size is None else _count("max_size", max_size, 1)
    budget = WORK_BUDGET if work_budget is None else _count("work_budget", work_budget, 0)
    return largest, budget


def key_sets(m: int, max_size: int) -> int:
    """How many sets of 1 to ``max_size`` of ``m`` keys there are: the nodes SUDA2 may visit."""
    return sum(math.comb(m, s) for s in range(1, min(m, max_size) + 1))


def _count(name: str, value, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ParameterError(f"{name} must be a whole number of at least {least}; got {value!r}")
    return int(value)


def _over_budget(m: int, largest: int, candidates: int, budget: int, estimate: int | None = None) -> str:
    """The one line that says SUDA2 did not run, why, and what to do instead."""
    largest = min(largest, m)
    # a smaller largest MSU whose estimate fits; where the search itself reached the budget,
    # its estimate was too low, so at most half the size that did
    below = largest if estimate is not None else max(1, largest // 2 + 1)
    fits = [s for s in range(1, below) if candidates * key_sets(m, s) <= budget]
    sizes = f"MSUs of up to {largest} of {m} keys, {candidates:,} rows unique on all keys"
    if estimate is None:
        why = f"reached its work budget of {_steps(budget)} steps before it finished ({sizes})"
    else:
        why = f"would take about {_steps(estimate)} steps ({sizes}), over its work budget of {_steps(budget)}"
    smaller = f", or search smaller MSUs (--suda-max-size {fits[-1]} or less)" if fits else ""
    return f"SUDA2 {why}; leave it out (--no-suda), give fewer keys{smaller}"


def _steps(count: int) -> str:
    return f"{count:,}" if count < 10**12 else f"{float(count):.3g}"


def msu_weights(m: int, original_scores: bool = True) -> np.ndarray:
    """What an MSU of each size 1..m adds to a record's SUDA score, as sdcMicro's C++ code
    (``g_ab`` in ``Suda2.h``) sets it: ``(m - s)!`` with ``original_scores`` (Elliot et al.),
    else ``(2^(m - s) - 1) s! (m - s)! / m!`` (the IHSN implementation's; 0 for s = m). Each
    weight is the exact rational rounded once to float64."""
    from fractions import Fraction

    if original_scores:
        return np.array([math.factorial(m - s) for s in range(1, m + 1)], dtype=np.float64)
    return np.array([float(Fraction((2 ** (m - s) - 1) * math.factorial(s) * math.factorial(m - s),
                                    math.factorial(m))) for s in range(1, m + 1)], dtype=np.float64)


def _encode(keys: pd.DataFrame, missing) -> tuple[np.ndarray, np.ndarray]:
    """(codes, raw), one row per variable: dense codes 0.. with -1 for missing, and the integer
    each cell has in sdcMicro's matrix (its hash reads them)."""
    miss_raw = _R_MISSING
    if _is_number(missing) and float(missing) == int(missing):
        miss_raw = int(missing)
    n, m = keys.shape
    code_rows = np.empty((m, n), dtype=np.int32)
    raw_rows = np.empty((m, n), dtype=np.int64)
    for j in range(m):
        codes, raw = _encode_column(keys.iloc[:, j], missing)
        miss = codes < 0
        if miss.any():
            # a genuine -999 must not meet the missing cells in the hash's view either
            fill = miss_raw if missing is not None or not np.any(raw[~miss] == miss_raw) else int(raw[~miss].min()) - 1
            raw = np.where(miss, fill, raw)
        code_rows[j] = codes
        raw_rows[j] = raw
    return code_rows, raw_rows


def _encode_column(column: pd.Series, missing) -> tuple[np.ndarray, np.ndarray]:
    """Dense codes (-1 missing) and sdcMicro's integers of one column."""
    if pd.api.types.is_numeric_dtype(column.dtype) and not isinstance(column.dtype, pd.CategoricalDtype):
        x = column.to_numpy(dtype=np.float64, na_value=np.nan)
        miss = np.isnan(x)
        if _is_number(missing):
            miss |= x == float(missing)
        ok = x[~miss]
        if np.all(ok == np.floor(ok)) and np.all(np.abs(ok) < 2**31):
            raw = np.where(miss, 0, x).astype(np.int64)
            codes, _ = pd.factorize(raw)
            codes = np.where(miss, -1, codes)
            return codes, raw
        # non-integer numbers: categories in sorted order (R would truncate them to integers)
        codes, _ = pd.factorize(np.where(miss, np.nan, x), sort=True)
        return codes, codes.astype(np.int64) + 1
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy(np.int64)
        uniques = column.cat.categories
    else:
        try:
            codes, uniques = pd.factorize(column, sort=True)
        except TypeError:  # values of mixed types have no order: first-seen order then
            codes, uniques = pd.factorize(column)
        codes = np.asarray(codes, dtype=np.int64)
    if missing is not None:
        hit: np.ndarray | list[int] = np.flatnonzero(np.asarray(uniques == missing, dtype=bool)) if len(uniques) else []
        if len(hit):  # the missing code leaves the levels, as NA does in R
            h = int(hit[0])
            codes = np.where(codes == h, -1, np.where(codes > h, codes - 1, codes))
    return codes, codes + 1


def _is_number(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(x)


def _msu_search(codes: np.ndarray, cards: np.ndarray, suffix: np.ndarray, full: np.ndarray, sizes: np.ndarray,
                largest: int, budget: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(the records in lexicographic order, their MSU counts per size); counts None where the
    search reached ``budget``."""
    # records in lexicographic order: a group's records lie near each other in memory
    rows = counting_order(full, sizes)
    flag = _cancel.stop_flag()
    counts, status, _work = msu_search(
        np.take(codes, rows, axis=1), np.maximum(cards, 1), np.take(suffix, rows, axis=1), largest,
        np.zeros(1, np.uint8) if flag is None else flag, budget)
    if status == 1:
        raise BuildCancelled("the computation was cancelled")
    return rows, None if status == 2 else counts


def _dis_scores(score: np.ndarray, raw: np.ndarray, full: np.ndarray, sizes: np.ndarray, m: int,
                dis_fraction: float) -> np.ndarray:
    """DIS-SUDA scores, with sdcMicro's counts and single-precision steps."""
    buckets = record_hashes(raw)
    alone = np.bincount(buckets, minlength=1 << 16)[buckets] == 1
    uniques = int(np.count_nonzero((sizes[full] == 1) & alone))
    pairs = 2 * int(np.count_nonzero(sizes == 2))
    f32 = np.float32
    f = f32(dis_fraction)
    u = f32(uniques)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        dis = (u * f) / (u * f + f32(pairs) * (f32(1.0) - f))
        q = float(f32(1.0) + (f32(8.0) - f32(m)) / f32(20.0))
        odds = float(u / dis - u)
    return dis_scores(score, q, odds)


def msu_counts(codes: np.ndarray) -> np.ndarray:
    """Number of minimal sample uniques of each size per record: ``out[r, s-1]`` MSUs of s keys.

    ``codes`` holds dense value codes, one column per variable (0, 1, ..., -1 for missing).
    """
    codes = np.ascontiguousarray(np.asarray(codes, dtype=np.int32).T)
    m, n = codes.shape
    cards = np.maximum(codes.max(axis=1).astype(np.int64) + 1, 1) if n else np.ones(m, dtype=np.int64)
    return msu_search(codes, cards, _suffix_classes(codes), m, np.zeros(1, np.uint8), 0)[0]


def _suffix_classes(codes: np.ndarray) -> np.ndarray:
    """``out[s, r]``: class number of record r on variables s..m-1 (``codes[variable, record]``;
    a missing value a value of its own), numbered in lexicographic order of the codes;
    ``out[m]`` is 0."""
    m, n = codes.shape
    out = np.zeros((m + 1, n), dtype=np.int32)
    gid = np.zeros(n, dtype=np.int64)
    span = 1
    for s in range(m - 1, -1, -1):
        gid, uniques = pd.factorize((codes[s].astype(np.int64) + 1) * span + gid, sort=True)
        span = max(len(uniques), 1)
        out[s] = gid
    return out
