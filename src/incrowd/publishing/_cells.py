"""``suppression = "cells"``: the rows of the chosen node's classes below k keep their row, with
single categorical cells blanked (:func:`incrowd.generalization.local_suppression`) instead of
the row removed.

Local suppression runs on the categorical codes at the chosen levels, apart within each
missing pattern of the numeric columns (the pattern is part of what a published row shows, so
rows of two patterns never match). A pattern with fewer than k rows cannot reach k by blanking
categorical cells: its rows are suppressed as whole rows, as with ``suppression = "rows"``.
With ``missing_matches = "itself"`` the resulting classes (a blank a value of its own) have k
rows or more, and the numeric columns are microaggregated inside them as usual.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..exceptions import ParameterError
from ..generalization import local_suppression, max_suppression_count
from ._households import household_codes, widen
from ._risk_targets import blank_for_targets


def suppress_cells(prep, choice) -> dict[str, np.ndarray]:
    """Blank cells for ``choice`` (a :class:`~incrowd.publishing._gtm.GtmChoice`, updated in
    place: every row kept but those of too small patterns, classes with the blanks); returns the
    blanked cells per categorical column (booleans per row)."""
    spec = prep.spec
    names = list(prep.categorical)
    n, k = prep.n, spec.k
    codes = np.column_stack([prep.hierarchies[a].code_map(choice.levels[a])[prep.codes0[a]].astype(np.int64)
                             for a in names])
    if spec.missing_matches == "any":
        # a missing input cell published as it is matches any value, as a blank does; a
        # user-missing code does not: the file shows it, and its verifier counts it as a value
        for j, a in enumerate(names):
            if choice.levels[a] == 0:
                codes[prep.missing0[a], j] = -1
    importance = None if not spec.importance else [spec.importance[a] for a in names]
    keep = np.ones(n, dtype=bool)

    def suppressed(forced: np.ndarray) -> np.ndarray:
        """The cells blanked for k and the targets, ``forced`` blanked before."""
        blank = forced.copy()
        given = np.where(forced, -1, codes)
        used = importance
        for p in np.unique(prep.pattern):
            rows = np.flatnonzero(prep.pattern == p)
            if rows.size < k:
                keep[rows] = False
                continue
            mask, used = pattern_blanks(given[rows], names, k, importance, spec.missing_matches)
            blank[rows] |= mask
        if spec.risk_targets:
            # the spec refuses risk targets with numeric quasi-identifiers here: one pattern, all rows kept
            blank = blank_for_targets(prep, choice.levels, codes, blank, np.asarray(used))
        return blank

    blank = suppressed(np.zeros(codes.shape, dtype=bool))
    if prep.household_level:
        # a blank a housemate's row fills in protects nothing: blank the household, then meet k
        # and the targets again around it (blanks only grow, so this ends)
        ids = household_codes(prep)
        columns = [names.index(a) for a in prep.household_level]
        while True:
            wider = widen(blank, ids, columns)
            if np.array_equal(wider, blank):
                break
            blank = suppressed(wider)
    check_cell_limit(spec, int(blank.sum()), n * len(names))
    codes[blank] = -1
    key = np.column_stack([prep.pattern.astype(np.int64), codes])
    choice.class_of = np.unique(key, axis=0, return_inverse=True)[1].ravel().astype(np.int64)
    choice.keep = keep
    choice.suppressed = int((~keep).sum())
    return {a: blank[:, j] for j, a in enumerate(names)}


def pattern_blanks(codes: np.ndarray, names: list[str], k: int, importance, missing_matches: str
                   ) -> tuple[np.ndarray, list[int]]:
    """Local suppression of one missing pattern's rows (``codes``: their categorical codes at
    the chosen levels, -1 missing): the blanked cells, and the importance it used per column."""
    got = local_suppression(pd.DataFrame(codes, columns=names).replace(-1, np.nan), names, k,
                            importance=importance, missing_matches=missing_matches)
    return got.mask, [got.importance[a] for a in names]


def check_cell_limit(spec, blanked: int, total: int) -> None:
    """``max_suppressed_cells`` against ``blanked`` cells of ``total`` (rows times categorical
    quasi-identifiers): one line, nothing published, when the release needs more."""
    if spec.max_suppressed_cells is None:
        return
    try:
        limit = max_suppression_count(spec.max_suppressed_cells, total)
    except ParameterError:
        raise ParameterError(f"max_suppressed_cells must be a whole cell count in [0, {total}] (rows times "
                             "categorical quasi-identifiers), a fraction in [0, 1] with a decimal point or a "
                             f"percentage; got {spec.max_suppressed_cells!r}") from None
    if blanked > limit:
        aims = f"k={spec.k}" + "".join(f", {key}={value:g}" for key, value in spec.risk_targets.items())
        raise ParameterError(f"local suppression needs {blanked} cells for {aims}, more than "
                             f"max_suppressed_cells={spec.max_suppressed_cells!r} ({limit} cells); nothing is "
                             "published")


def blank_cells(table: pd.DataFrame, cells: dict[str, np.ndarray]) -> None:
    """Set the blanked cells of ``table`` (one row per input row) missing, in place; a column of
    whole numbers stays whole numbers (a nullable integer column), so a CSV shows ``1``, not
    ``1.0``, beside the blanks."""
    for name, blank in cells.items():
        if not blank.any():
            continue
        column = table[name]
        if pd.api.types.is_integer_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
            column = column.astype("Int64")
        elif not (pd.api.types.is_float_dtype(column.dtype) or column.dtype == object):
            column = column.astype(object)
        table[name] = column.mask(pd.Series(blank, index=table.index))
