"""Households in a release: the ``household`` column, the household-level quasi-identifiers and
the household check of the written file.

A household-level variable (urban or rural, the water source) is the same for every member of a
household. A blank in it is worth nothing when a housemate's row shows the value: an intruder
who sees the household id fills the blank in. So such a column is blanked for every member of a
household at once (with ``suppression = "cells"``), and generalized to one level for all rows
(the generalize-then-microaggregate strategy recodes a column the same way in every row). The
written file is checked for it: in each household-level column every household shows one value
(a blank is a value there), else the blank a housemate gives away is named and nothing is
written; the record says what filling the blanks in from housemates would do to k (nothing,
when the check holds).

Which columns are household-level: those flagged ``household_level = true`` (which must then be
the same for every member of each household in the file), and those the file holds the same for
every member of each household, unless flagged ``household_level = false``.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, VerificationError, cell_text, name_list
from ..privacy import sample_risk
from ..values import match_counts
from ._spec_keys import choices

#: what a release does with the household column
HOUSEHOLD_ID = choices("privacy", "household_id")


def parse_households(privacy: Mapping[str, Any], columns: Mapping[str, Any], source: str, *,
                     strategy: str) -> str:
    """``[privacy] household_id`` checked against the columns (one ``household`` column at most;
    ``household_level``, ``household_id`` and ``max_household_risk`` need one); returns it."""
    households = [c.name for c in columns.values() if c.role == "household"]
    if len(households) > 1:
        raise ParameterError(f"{source}: [columns] gives the role \"household\" to {name_list(households)}; a "
                             "release has one household id")
    household_id = privacy.get("household_id", "keep")
    if household_id not in HOUSEHOLD_ID:
        raise ParameterError(f"{source}: household_id must be one of {', '.join(HOUSEHOLD_ID)}; got {household_id!r}")
    flagged = [c.name for c in columns.values() if c.household_level]
    if not households:
        needs = [*(["household_id"] if "household_id" in privacy else []),
                 *(["max_household_risk"] if "max_household_risk" in privacy else []),
                 *(f"household_level of {name!r}" for name in flagged)]
        if needs:
            raise ParameterError(f"{source}: {needs[0]} needs a column with role \"household\" in [columns] (the "
                                 "household id)")
        return household_id
    if flagged and strategy != "generalize-then-microaggregate":
        raise ParameterError(f"{source}: household_level of {name_list(flagged)} needs the generalize-then-"
                             f"microaggregate strategy, which recodes a column the same way in every row; "
                             f"strategy {strategy!r} recodes each group on its own")
    return household_id


def column_household_level(entry: Any, role: str, name: str, source: str) -> bool | None:
    """A column entry's ``household_level``, checked (None where it is not given)."""
    if not isinstance(entry, Mapping) or "household_level" not in entry:
        return None
    flag = entry["household_level"]
    if not isinstance(flag, bool):
        raise ParameterError(f"{source}: column {name!r}: household_level must be true or false; got {flag!r}")
    if flag and role != "categorical":
        raise ParameterError(f"{source}: column {name!r}: only a categorical quasi-identifier takes "
                             "household_level (a column published unchanged has no blank to keep the same "
                             "for a household)")
    return flag


def household_level_columns(frame: pd.DataFrame, spec, categorical: list[str]) -> list[str]:
    """The categorical quasi-identifiers that are household-level in ``frame`` (see the module):
    a flagged column that differs within a household is a :class:`DataError` naming both rows."""
    name = spec.household
    if name is None:
        return []
    ids = pd.factorize(sample_risk.household_ids(frame[name], name))[0]
    out = []
    for column in categorical:
        flag = spec.columns[column].household_level if column in spec.columns else None
        if flag is False:
            continue
        codes = pd.factorize(frame[column].reset_index(drop=True), use_na_sentinel=False)[0]
        first = _first_of_household(ids, codes)
        differs = np.flatnonzero(codes != codes[first])
        if differs.size == 0:
            out.append(column)
        elif flag:
            row = int(differs[0])
            other = int(first[row])
            raise DataError(f"column {column!r} is household_level but differs within household "
                            f"{cell_text(frame[name].iloc[row])}: row {other + 1} holds "
                            f"{cell_text(frame[column].iloc[other])}, row {row + 1} holds "
                            f"{cell_text(frame[column].iloc[row])}; a household-level variable is the same for "
                            "every member (or set household_level = false)")
        if spec.strategy != "generalize-then-microaggregate" and column in out:
            raise ParameterError(f"column {column!r} is the same for every member of each household, so it is "
                                 "household-level, which needs the generalize-then-microaggregate strategy; set "
                                 "household_level = false to publish it as a person's variable")
    return out


def _first_of_household(ids: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per row, the position of its household's first row."""
    first = np.full(int(ids.max()) + 1 if ids.size else 0, -1, np.int64)
    order = np.arange(ids.size)[::-1]
    first[ids[order]] = order
    return first[ids]


def widen(blank: np.ndarray, ids: np.ndarray, columns: list[int]) -> np.ndarray:
    """``blank`` (rows x columns) with every blank of the household-level ``columns`` spread to
    all members of its household."""
    out = blank.copy()
    n_households = int(ids.max()) + 1 if ids.size else 0
    for j in columns:
        hit = np.bincount(ids, weights=blank[:, j], minlength=n_households) > 0
        out[:, j] |= hit[ids]
    return out


def household_codes(prep) -> np.ndarray:
    """Each row's household as a code 0, 1, ... (the spec's household column)."""
    name = prep.spec.household
    return pd.factorize(sample_risk.household_ids(prep.frame[name], name))[0].astype(np.int64)


def publish_id(table: pd.DataFrame, name: str, how: str) -> None:
    """The household column of ``table`` kept, renumbered 1, 2, ... in order of first appearance,
    or dropped, in place."""
    if how == "drop":
        del table[name]
    elif how == "renumber":
        table[name] = pd.factorize(table[name].reset_index(drop=True))[0].astype(np.int64) + 1


def household_verifier(name: str, columns: list[str], ids: np.ndarray | None, k: int, missing_matches: str):
    """The household check :class:`incrowd.io.Promise` runs on a release as read back: in every
    household-level column each household shows one value (a blank counted as a value); else a
    :class:`VerificationError` naming the housemate who gives a blank away. ``ids``: the
    households of the release's rows (read from the file's household column where it has one;
    these where the id is dropped)."""

    def check(table: pd.DataFrame, quasi_identifiers, what: str) -> dict[str, Any]:
        if name in table.columns:
            households = pd.factorize(table[name])[0].astype(np.int64)
        elif ids is not None and ids.size == table.shape[0]:
            households = np.asarray(ids, dtype=np.int64)
        else:
            raise VerificationError(f"{what} has no household column {name!r} and its rows cannot be matched to the "
                                    "input's households; nothing was written")
        if households.size == 0:
            return {"ok": True, "household": name, "household_level": list(columns), "recoverable_blanks": 0}
        filled = table[list(quasi_identifiers)].copy()
        recoverable: dict[str, int] = {}
        for column in columns:
            values = table[column]
            blank = _blank(values)
            known = pd.Series(np.where(blank, None, values.astype(object)), dtype=object)
            codes = pd.Series(np.where(blank, np.nan, pd.factorize(known, use_na_sentinel=True)[0]))
            # one value per household: a second one would give the first away (a finer recode)
            pairs = pd.DataFrame({"h": households, "c": codes}).dropna().drop_duplicates()
            split = np.flatnonzero(np.bincount(pairs["h"].to_numpy(np.int64), minlength=int(households.max()) + 1) > 1)
            if split.size:
                row = int(np.flatnonzero(households == split[0])[0])
                raise VerificationError(f"{what}: household-level column {column!r} shows more than one value in "
                                        f"the household of data row {row + 1}; nothing was written")
            first = codes.groupby(households).first()   # the household's value where a member shows it
            shown = first.reindex(households).to_numpy()
            gives = blank & ~np.isnan(shown)
            recoverable[column] = int(gives.sum())
            uniques = pd.factorize(known, use_na_sentinel=True)[1]
            filled[column] = np.where(gives, uniques.take(np.nan_to_num(shown, nan=0).astype(np.int64))
                                      if uniques.size else None, values.astype(object))
        if any(recoverable.values()):
            column = next(c for c, got in recoverable.items() if got)
            row = int(np.flatnonzero(_blank(table[column]) & (filled[column].notna().to_numpy()))[0])
            before = match_counts(_blanks_missing(table, quasi_identifiers), list(quasi_identifiers),
                                  missing_matches=missing_matches)
            after = match_counts(_blanks_missing(filled, quasi_identifiers), list(quasi_identifiers),
                                 missing_matches=missing_matches)
            below = int(((after < k) & (before >= k)).sum())
            raise VerificationError(
                f"{what}: the blank in household-level column {column!r}, data row {row + 1}, is shown by a "
                f"housemate ({sum(recoverable.values())} such blanks in all; filled in, {below} rows fall below "
                f"k={k}); nothing was written")
        return {"ok": True, "household": name, "household_level": list(columns),
                "recoverable_blanks": 0}

    return check


def _blank(values: pd.Series) -> np.ndarray:
    """A blank as the written file shows it: missing, or an empty text."""
    return (values.isna() | (values.astype(object) == "")).to_numpy()


def _blanks_missing(table: pd.DataFrame, columns) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(np.where(_blank(table[c]), None, table[c].astype(object)), dtype=object)
                         for c in columns})


__all__: list[str] = []
