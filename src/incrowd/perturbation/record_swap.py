"""Targeted record swapping: households of high risk (and others, up to a rate) swap their
geography with a similar household of another area (sdcMicro's ``recordSwap``, the method of the
European 2021 census round)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError
from ._base import REQUIRED, Method, Outcome, Param, is_names, is_number, is_text


class RecordSwap(Method):
    key = "record_swap"
    sdcmicro = "recordSwap"
    summary = "swaps the geography of whole households, risky households first"
    data = "any"
    draws = True
    params = {
        "rate": Param("a number in [0, 1]", 0.05, is_number(0, 1),
                      "the share of households swapped (a swap moves two households; sdcMicro's swaprate)"),
        "hierarchy": Param("a list of column names", REQUIRED, lambda v: is_names(v) and len(v) > 0,
                           "the geographic columns, from the coarsest to the finest; they are swapped"),
        "similarity": Param("a list of column names", [], is_names,
                            "household-level columns a household and its donor must share (sdcMicro's similar)"),
        "risk_variables": Param("a list of column names", [], is_names,
                                "the columns counted with the geography for a household's risk"),
        "risk_threshold": Param("a number in (0, 1]", 0.5, is_number(0, 1, open_lo=True),
                                "a household whose risk (1 / the fewest records sharing a member's geography and "
                                "risk variables, at any level) reaches this is swapped first, whatever the rate"),
        "household": Param("a column name", None, lambda v: v is None or is_text(v),
                           "the household id (a spec's column with role \"household\" when left out)"),
    }

    def changed_columns(self) -> list[str]:
        return list(dict.fromkeys([*self.hierarchy, *self.columns]))

    def other_columns(self) -> list[str]:
        return list(dict.fromkeys([*self.similarity, *self.risk_variables,
                                   *([self.household] if self.household else [])]))

    def check(self, frame: pd.DataFrame, where: str) -> None:
        if not self.household:
            raise ParameterError(f"{where}: record_swap needs household, the household id column")
        hh = pd.factorize(frame[self.household], use_na_sentinel=False)[0]
        for name in [*self.changed_columns(), *self.similarity]:
            if not _constant_within(frame[name], hh):
                raise DataError(f"{where}: column {name!r} differs within a household of {self.household!r}; "
                                "record_swap moves whole households' values, so it swaps and matches "
                                "household-level columns only")

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        hh = pd.factorize(frame[self.household], use_na_sentinel=False)[0]
        H = int(hh.max()) + 1 if hh.size else 0
        first = np.full(H, -1, np.int64)
        first[hh[::-1]] = np.arange(hh.size)[::-1]  # each household's first row
        risk = _household_risk(frame, hh, H, self.hierarchy, self.risk_variables)
        area = _codes(frame.iloc[first], self.hierarchy)
        profile = _codes(frame.iloc[first], self.similarity)
        risky = risk >= self.risk_threshold
        target = self.rate * H / 2
        pairs = int(np.floor(target)) + int(rng.random() < target - np.floor(target))
        partner = _match(risk, risky, area, profile, pairs, rng)
        source = np.where(partner >= 0, partner, np.arange(H))
        rows = first[source[hh]]
        out = {name: frame[name].to_numpy()[rows] for name in self.changed_columns()}
        swapped = int((partner >= 0).sum())
        return Outcome(out, {"households": H, "households_swapped": swapped,
                             "risky_households": int(risky.sum()),
                             "risky_swapped": int((risky & (partner >= 0)).sum()),
                             "unmatched": int((risky & (partner < 0)).sum())})

    @staticmethod
    def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
        return {}


def _constant_within(column: pd.Series, hh: np.ndarray) -> bool:
    codes = pd.factorize(column, use_na_sentinel=False)[0]
    first = np.full(int(hh.max()) + 1 if hh.size else 0, -1, np.int64)
    first[hh[::-1]] = codes[::-1]
    return bool((first[hh] == codes).all())


def _codes(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """One code per row for the combination of ``names`` (0 for every row without names)."""
    codes = np.zeros(len(frame), np.int64)
    for name in names:
        c, uniques = pd.factorize(frame[name], use_na_sentinel=False)
        codes = codes * (len(uniques) + 1) + c
    return np.unique(codes, return_inverse=True)[1].ravel()


def _household_risk(frame: pd.DataFrame, hh: np.ndarray, H: int, hierarchy: list[str],
                    risk_variables: list[str]) -> np.ndarray:
    """Each household's risk: the largest, over its members and the hierarchy's levels, of one
    over the number of records sharing the member's geography down to that level and its risk
    variables (sdcMicro's counts rule)."""
    record = np.zeros(len(frame))
    for level in range(1, len(hierarchy) + 1):
        codes = _codes(frame, [*hierarchy[:level], *risk_variables])
        counts = np.bincount(codes)
        record = np.maximum(record, 1.0 / counts[codes])
    risk = np.zeros(H)
    np.maximum.at(risk, hh, record)
    return risk


def _match(risk: np.ndarray, risky: np.ndarray, area: np.ndarray, profile: np.ndarray, pairs: int,
           rng: np.random.Generator) -> np.ndarray:
    """Each household's partner (-1: not swapped). Households are taken risky first (the riskiest
    first), then drawn with a probability that grows with their risk, until every risky one is
    swapped and at least ``pairs`` swaps are made; each is matched with a household not yet
    swapped of its similarity profile and another area, drawn at random."""
    H = risk.size
    partner = np.full(H, -1, np.int64)
    # weighted sampling without replacement: the largest u^(1/w) first (Efraimidis and Spirakis)
    key = np.log(rng.random(H)) / np.maximum(risk, 1e-12)
    order = np.lexsort((-key, -np.where(risky, risk, 0.0)))
    # donors: per profile, the households in a random order, walked with a pointer
    shuffled = rng.permutation(H)
    by_profile = shuffled[np.argsort(profile[shuffled], kind="stable")]
    starts = np.searchsorted(profile[by_profile], np.arange(int(profile.max()) + 2 if H else 1))
    pointer = starts[:-1].copy()
    made = 0
    for h in order:
        if made >= pairs and not risky[h]:
            break
        if partner[h] >= 0:
            continue
        g = profile[h]
        i, end = pointer[g], starts[g + 1]
        while i < end and partner[by_profile[i]] >= 0:
            i += 1
        pointer[g] = i
        donor = -1
        for j in range(i, end):  # the first free household of another area (almost always the next)
            d = by_profile[j]
            if d != h and partner[d] < 0 and area[d] != area[h]:
                donor = d
                break
        if donor < 0:
            continue
        partner[h], partner[donor] = donor, h
        made += 1
    return partner
