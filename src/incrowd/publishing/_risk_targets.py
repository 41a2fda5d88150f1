"""Releases that meet a risk target: ``[privacy] max_individual_risk``, ``max_global_risk`` and
``max_expected_reidentifications``, measured as :func:`incrowd.risk` measures a file (sdcMicro
5.8.0's ``freqCalc``, ``indivRisk`` and ``measure_risk``) over the release's quasi-identifiers,
each row weighted by the column with role ``"weight"``.

The generalization search meets them beside k, l and t (:mod:`incrowd.publishing._gtm`): at a
node, the classes below k (or failing l or t) go first; then every row whose individual risk is
above ``max_individual_risk`` is suppressed too (counted against ``max_suppression``; again
until none is left above, since with missing key values one row's removal can raise another's
risk); the node is feasible when the suppression stays within the limit and the rows left meet
``max_global_risk`` (the mean of their individual risks) and ``max_expected_reidentifications``
(their sum). The global figures are those of the published file: a suppressed row is not in it,
and no row is suppressed for their sake alone (generalizing meets them). With numeric
quasi-identifiers the published keys are the microaggregation groups' means, finer than the
classes: a node that passes on its classes is judged again on its groups
(:func:`group_suppression`, through the release's own steps) before the search takes it. With
``suppression = "cells"`` the node is chosen for k alone, and more cells are blanked until the
targets hold (:func:`blank_for_targets`). The written file is verified the same way
(:func:`verifier`) before it is put in place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ..exceptions import ParameterError, VerificationError
from ..privacy import sample_risk
from ._households import household_codes

#: the spec keys, in the order the summary shows them
RISK_TARGETS = ("max_individual_risk", "max_global_risk", "max_expected_reidentifications", "max_household_risk")
#: what each target bounds, as the summary of :func:`incrowd.risk` names it
_MEASURE = {"max_individual_risk": "highest_individual_risk", "max_global_risk": "global_risk",
            "max_expected_reidentifications": "expected_reidentifications",
            "max_household_risk": "highest_household_risk"}
#: the written file's figures are sums in another order than the search's: a relative slack of
#: this much is rounding, not risk
RELATIVE_SLACK = 1e-9


def parse_risk_targets(privacy: Mapping[str, Any], columns: Mapping[str, Any], source: str, *,
                       strategy: str, suppression: str) -> dict[str, float]:
    """The risk targets of [privacy], checked: numbers in (0, 1] (the expected number of
    re-identifications: any positive number), with a weight column, the generalize-then-
    microaggregate strategy and row suppression."""
    out: dict[str, float] = {}
    for key in RISK_TARGETS:
        if key not in privacy:
            continue
        value = privacy[key]
        what = ("a positive number (re-identifications expected in the population)"
                if key == "max_expected_reidentifications" else "a number in (0, 1] (a probability)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ParameterError(f"{source}: {key} must be {what}; got {value!r}")
        if value <= 0 or (key != "max_expected_reidentifications" and value > 1):
            raise ParameterError(f"{source}: {key} must be {what}; got {value!r}")
        out[key] = float(value)
    if not out:
        return out
    named = ", ".join(out)
    if not any(getattr(c, "role", None) == "weight" for c in columns.values()):
        raise ParameterError(f"{source}: {named} needs a column with role \"weight\" in [columns] (the survey "
                             "weights the population risk is estimated from; without them a row's risk is 1/k "
                             "at most, which k bounds)")
    if strategy != "generalize-then-microaggregate":
        raise ParameterError(f"{source}: {named} is met by the generalize-then-microaggregate search; "
                             f"strategy {strategy!r} does not take it")
    if suppression == "cells" and any(getattr(c, "role", None) == "numeric" for c in columns.values()):
        raise ParameterError(f"{source}: {named} with suppression = \"cells\" needs every quasi-identifier "
                             "categorical (a numeric column's published means are keys no blank can widen); "
                             "use suppression = \"rows\"")
    return out


def figures(risk: np.ndarray, rows: np.ndarray) -> dict[str, float]:
    """The three measures of a release whose distinct classes have individual risks ``risk``
    and ``rows`` rows each (rows of 0 are not published)."""
    present = rows > 0
    total = float(rows[present].sum())
    expected = float(np.dot(risk[present], rows[present]))
    return {"max_individual_risk": float(risk[present].max()) if present.any() else 0.0,
            "max_global_risk": expected / total if total else 0.0,
            "max_expected_reidentifications": expected}


def _met(targets: Mapping[str, float], got: Mapping[str, float], slack: float = 0.0) -> dict[str, bool]:
    return {key: got[key] <= limit * (1.0 + slack) for key, limit in targets.items()}


@dataclass
class NodeJudge:
    """Judges the nodes of one search: which classes a node suppresses for the targets, and
    whether what it publishes meets them; keeps the best figures reached for the refusal."""

    targets: dict[str, float]
    quasi_identifiers: list[str]
    #: per bottom class: its weight (the sum of its rows' weights)
    weight: np.ndarray
    #: per bottom class and categorical QI: published missing at level 0
    missing0: dict[str, np.ndarray]
    #: per bottom class and numeric QI: published missing (its missing pattern)
    numeric_missing: np.ndarray
    #: per row: its household (codes 0, 1, ...) and its bottom class, where the targets hold
    #: ``max_household_risk``
    households: np.ndarray | None = None
    of_row: np.ndarray | None = None
    #: per target, the lowest value a node reached with its suppression within the limit
    best: dict[str, tuple[float, dict[str, int]]] = field(default_factory=dict)
    #: per target that suppresses rows (``max_individual_risk``, ``max_household_risk``), the
    #: lowest highest risk of a node before its risky rows went (for the refusal when
    #: suppressing them passes the limit at every node)
    best_before: dict[str, tuple[float, dict[str, int]]] = field(default_factory=dict)
    judged: int = 0

    def judge(self, hierarchies, bottom_codes: Mapping[str, np.ndarray], levels: Mapping[str, int],
              class_of: np.ndarray, n_classes: int, bad: np.ndarray,
              sizes: np.ndarray, within: int | None = None) -> tuple[np.ndarray, bool]:
        """(per class: suppressed, with the rows above ``max_individual_risk`` added; whether
        the rows left meet every target)."""
        from ..values import wildcard_counts

        rows = np.where(bad, 0, sizes).astype(np.int64)
        Fk_class = np.bincount(class_of, weights=self.weight, minlength=n_classes)
        codes = self._codes(hierarchies, bottom_codes, levels, class_of, n_classes)
        bad = bad.copy()
        limit = self.targets.get("max_individual_risk")
        households, row_class = self.households, None
        if households is not None and self.of_row is not None:
            row_class = class_of[self.of_row]
        first = True
        while True:
            keep = rows > 0
            fk: np.ndarray
            Fk: np.ndarray
            if codes is None:  # no published cell is missing: a class is its own key
                fk, Fk = sizes.astype(np.float64), Fk_class
            else:
                both = np.zeros((n_classes, 2))
                both[keep] = wildcard_counts(codes[keep], np.column_stack([rows[keep], Fk_class[keep]]).astype(np.float64))
                fk, Fk = both[:, 0], both[:, 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                risk = np.where(keep, sample_risk.individual_risk(np.maximum(fk, 1.0), np.maximum(Fk, 1e-300)), 0.0)
            if first:
                before = {"max_individual_risk": figures(risk, rows)["max_individual_risk"]}
                if households is not None and row_class is not None:
                    before["max_household_risk"] = float(_household_risk(risk[row_class], households).max(initial=0.0))
                for key, top in before.items():
                    if key not in self.best_before or top < self.best_before[key][0]:
                        self.best_before[key] = (top, dict(levels))
                first = False
            above = keep & (risk > limit) if limit is not None else np.zeros(n_classes, bool)
            if not above.any() and row_class is not None:
                above = self._household_classes(risk, row_class, n_classes)
            if not above.any():
                break
            bad |= above
            rows[above] = 0
            if codes is None and row_class is None:
                risk[above] = 0.0
                break  # without missing cells a class's risk is its own: none other moved
        self.judged += 1
        got = figures(risk, rows)
        if households is not None and row_class is not None:
            got["max_household_risk"] = float(_household_risk(risk[row_class], households).max(initial=0.0))
        if within is not None and int(sizes[bad].sum()) > within:
            return bad, False
        self._remember(got, levels)
        return bad, bool(rows.sum()) and all(_met(self.targets, got).values())

    def _household_classes(self, risk: np.ndarray, row_class: np.ndarray, n_classes: int) -> np.ndarray:
        """The classes to suppress for ``max_household_risk``: in each household above it, the
        class of its riskiest member (a whole class goes, so k holds, and with it every row of
        that key, in any household)."""
        assert self.households is not None
        out = np.zeros(n_classes, bool)
        out[row_class[_riskiest_of_households_above(risk[row_class], self.households,
                                                    self.targets["max_household_risk"])]] = True
        return out

    def _codes(self, hierarchies, bottom_codes, levels, class_of, n_classes) -> np.ndarray | None:
        """Per class, the published key as codes (-1 missing), or None when nothing published
        is missing. A numeric QI is its class's id (the class's group means; rows of two classes
        never share one), or -1 where the class's pattern leaves it missing."""
        at0 = [a for a in self.missing0 if levels[a] == 0 and self.missing0[a].any()]
        if not at0 and not self.numeric_missing.any():
            return None
        first = np.zeros(n_classes, np.int64)
        first[class_of] = np.arange(class_of.size)
        cols = []
        for a in self.missing0:
            code = hierarchies[a].code_map(levels[a])[bottom_codes[a][first]].astype(np.int64)
            if levels[a] == 0:
                code = np.where(self.missing0[a][first], -1, code)
            cols.append(code)
        ids = np.arange(n_classes, dtype=np.int64)
        for j in range(self.numeric_missing.shape[1]):
            cols.append(np.where(self.numeric_missing[first, j], -1, ids))
        return np.column_stack(cols) if cols else np.zeros((n_classes, 0), np.int64)

    def _remember(self, got: Mapping[str, float], levels: Mapping[str, int]) -> None:
        for key in self.targets:
            if key not in self.best or got[key] < self.best[key][0]:
                self.best[key] = (got[key], dict(levels))

    def refusal(self, max_suppression, limit: int) -> ParameterError:
        """The error when no node meets the targets: the target missed and the best value reached."""
        missed = [key for key in self.targets if key in self.best and self.best[key][0] > self.targets[key]]
        if missed:  # nodes kept within the limit, and a global target stayed above its bound
            key = missed[0]
            value, levels = self.best[key]
            lever = ("" if "max_individual_risk" in self.targets else
                     ", set max_individual_risk too (the rows it suppresses lower the mean and the sum)")
            return ParameterError(
                f"no generalization meets {key}={self.targets[key]:g}: the best reached is {value:.6g} "
                f"(at {_at(levels)}); raise {key} or k{lever}, or give coarser hierarchies; nothing is published")
        keys = [key for key in ("max_individual_risk", "max_household_risk")
                if key in self.targets and key in self.best_before]
        measure = {"max_individual_risk": "risk", "max_household_risk": "household risk"}
        lowest = "; ".join(f"the lowest highest {measure[key]} of a node is {self.best_before[key][0]:.6g} "
                           f"(at {_at(self.best_before[key][1])})" for key in keys)
        return ParameterError(
            f"no generalization meets {' and '.join(f'{key}={self.targets[key]:g}' for key in keys)} within "
            f"max_suppression={max_suppression!r} ({limit} rows): {lowest}, and suppressing the rows above the "
            f"{'targets' if len(keys) > 1 else 'target'} passes the limit at every node; allow more suppression, "
            f"raise {' or '.join(keys)} or k, or give coarser hierarchies; nothing is published")


def _household_risk(risk: np.ndarray, households: np.ndarray) -> np.ndarray:
    """Per household (codes 0, 1, ...), ``1 - prod(1 - risk)`` over its members, as
    :func:`incrowd.risk` measures it; a member whose row is not published has a risk of 0."""
    with np.errstate(divide="ignore"):
        survive = np.bincount(households, weights=np.log1p(-risk), minlength=int(households.max(initial=-1)) + 1)
    return 1.0 - np.exp(survive)


def _at(levels: Mapping[str, int]) -> str:
    return ", ".join(f"{a}={v}" for a, v in levels.items()) or "the only node"


def judged(prep, bottom, levels: Mapping[str, int], class_of: np.ndarray, n_classes: int, bad: np.ndarray,
           sizes: np.ndarray, within: int | None) -> np.ndarray:
    """The search's feasibility hook: a node's suppressed classes (``bad``, from k, l and t) with
    the classes above ``max_individual_risk`` added, or every class where the rows left miss a
    target (so the node suppresses more than any limit and is never the answer). Unchanged
    without risk targets, or where ``bad`` alone passes ``within`` already."""
    if not prep.spec.risk_targets or prep.spec.suppression == "cells":
        return bad  # with cells, blanks meet the targets after the node is chosen (blank_for_targets)
    if within is not None and int(sizes[bad].sum()) > within:
        return bad
    judge = bottom.__dict__.get("risk_judge")
    if judge is None:
        judge = bottom.__dict__["risk_judge"] = node_judge(prep, bottom)
    out, ok = judge.judge(prep.hierarchies, bottom.codes, levels, class_of, n_classes, bad, sizes, within)
    return out if ok else np.ones_like(bad)


def refuse(prep, bottom, limit: int) -> None:
    """Raise the risk targets' refusal when nodes within the limit were judged and none met them."""
    judge = bottom.__dict__.get("risk_judge")
    if judge is not None and judge.judged:
        raise judge.refusal(prep.spec.max_suppression, limit)


def check_target_weights(column: pd.Series, name: str) -> None:
    """The weight column the targets are measured with, as :func:`incrowd.risk` reads it: a
    :class:`DataError` naming the first row whose weight is below 1 (or not a number)."""

    sample_risk.sampling_weights(column.reset_index(drop=True), name)


def node_judge(prep, bottom) -> NodeJudge | None:
    """The judge of a search over ``bottom`` (the rows grouped by their level-0 codes), or None
    when the spec sets no risk target."""
    spec = prep.spec
    targets = dict(getattr(spec, "risk_targets", None) or {})
    if not targets:
        return None
    weight, missing0 = bottom_risk(prep, bottom)
    households = household_codes(prep) if "max_household_risk" in targets else None
    return _judge_of(prep, bottom, weight, missing0, households)


def bottom_risk(prep, bottom) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """What the judge reads of ``bottom``'s rows: per bottom class its weight (the sum of its
    rows' sampling weights) and, per categorical QI, whether its level-0 cell is missing as the
    written file's verifier reads a cell (the NA vocabulary, system missing)."""
    weight = prep.spec.weight
    w = sample_risk.sampling_weights(prep.frame[weight].reset_index(drop=True), weight)
    n_bottom = int(bottom.counts.size)
    first = np.zeros(n_bottom, np.int64)
    first[bottom.of_row[::-1]] = np.arange(bottom.of_row.size - 1, -1, -1)
    level0 = sample_risk.key_codes(prep.frame.iloc[first].reset_index(drop=True), list(prep.categorical))
    return (np.bincount(bottom.of_row, weights=w, minlength=n_bottom),
            {a: level0[:, j] < 0 for j, a in enumerate(prep.categorical)})


def combined_judge(prep, bottom, parts: list, maps: list[np.ndarray]) -> NodeJudge | None:
    """The judge of a search over a partitioned file's bottom classes (:func:`_gtm.combine_bottoms`):
    ``parts``: each part's :func:`bottom_risk`, ``maps``: each part's bottom classes' numbers in
    the file. The weights add up as the rows do; a bottom class's cells are its level-0 codes,
    so any part holding it tells whether they are missing."""
    targets = dict(getattr(prep.spec, "risk_targets", None) or {})
    if not targets:
        return None
    n_bottom = int(bottom.counts.size)
    weight = np.bincount(np.concatenate([np.asarray(m, np.int64) for m in maps] or [np.zeros(0, np.int64)]),
                         weights=np.concatenate([p[0] for p in parts] or [np.zeros(0)]), minlength=n_bottom)
    missing0 = {a: np.zeros(n_bottom, bool) for a in prep.categorical}
    for part, number in zip(parts, maps):
        for a in prep.categorical:
            missing0[a][number] = part[1][a]
    judge = _judge_of(prep, bottom, weight, missing0, None)
    if "max_household_risk" in targets:
        # each part's households numbered after the parts' before it (a household lies in one
        # part), each row's bottom class as the file numbers it
        offsets = np.cumsum([0] + [int(p[2].max(initial=-1)) + 1 for p in parts])
        judge.households = np.concatenate([p[2] + o for p, o in zip(parts, offsets)] or [np.zeros(0, np.int64)])
        judge.of_row = np.concatenate([np.asarray(m, np.int64)[p[3]] for p, m in zip(parts, maps)]
                                      or [np.zeros(0, np.int64)])
    return judge


def _judge_of(prep, bottom, weight: np.ndarray, missing0: dict[str, np.ndarray],
              households: np.ndarray | None) -> NodeJudge:
    n_bottom = int(bottom.counts.size)
    masks = np.asarray([prep.pattern_masks[int(p)] for p in bottom.pattern], dtype=bool).reshape(n_bottom, -1) \
        if prep.numeric else np.zeros((n_bottom, 0), bool)
    return NodeJudge(dict(prep.spec.risk_targets), [*prep.numeric, *prep.categorical], weight, missing0,
                     ~masks[:, :len(prep.numeric)], households=households,
                     of_row=None if households is None else bottom.of_row)


def written_keys(table: pd.DataFrame, quasi_identifiers: list[str], weight: str) -> pd.DataFrame:
    """A written part's published keys as :func:`incrowd.risk` compares them (a number as a
    number, text without trailing blanks, None where the cell is missing), with ``rows`` and
    ``weight`` (the sum of their sampling weights): what :func:`check_written_risk` adds up."""
    qis = list(quasi_identifiers)
    keys = written_row_keys(table, qis, weight)
    if not qis:
        return keys[["rows", "weight"]].sum().to_frame().T
    return keys.groupby(qis, dropna=False, sort=False)[["rows", "weight"]].sum().reset_index()


def written_row_keys(table: pd.DataFrame, quasi_identifiers: list[str], weight: str) -> pd.DataFrame:
    """:func:`written_keys` row by row (``rows`` 1 and the row's weight): with
    ``max_household_risk``, each row's risk is multiplied with its housemates'."""
    qis = list(quasi_identifiers)
    w = sample_risk.sampling_weights(table[weight].reset_index(drop=True), weight)
    keys = pd.DataFrame(index=pd.RangeIndex(table.shape[0]))
    for q in qis:
        codes, values = sample_risk.column_keys(table[q].reset_index(drop=True))
        keys[q] = pd.Series(np.where(codes >= 0, values[np.maximum(codes, 0)] if values.size else None, None),
                            dtype=object)
    keys["rows"], keys["weight"] = 1, w
    return keys


def check_written_risk(targets: Mapping[str, float], weight: str, parts: list[pd.DataFrame],
                       quasi_identifiers: list[str], households: list[pd.DataFrame] | None = None) -> dict[str, Any]:
    """The risk targets over a release written in parts, from each part's :func:`written_keys`
    (a key may span parts: its rows and weights add up, and a missing cell matches any value
    across parts, as :func:`incrowd.risk` measures the whole file): the record
    :func:`verifier` gives, or a :class:`VerificationError` naming the target missed."""
    household_rows = None
    if households is not None:
        # the rows themselves (:func:`written_row_keys`, with each row's ``household``): a
        # household's risk multiplies its members' as :func:`incrowd.risk` does
        household_rows = pd.concat(households, ignore_index=True)
        parts = [household_rows]
    table, codes = _union_keys(parts, quasi_identifiers, ["rows", "weight"])
    rows = table["rows"].to_numpy(np.float64)
    fk, Fk = sample_risk.frequencies(codes, table["weight"].to_numpy(np.float64), counts=rows)
    risk = sample_risk.individual_risk(fk, Fk) if rows.size else np.zeros(0)
    got = figures(risk, rows)
    if household_rows is not None:
        qis = list(quasi_identifiers)
        key = household_rows.groupby(qis, dropna=False, sort=False).ngroup().to_numpy() if qis \
            else np.zeros(household_rows.shape[0], np.int64)
        household = sample_risk.household_risk(risk[key], household_rows["household"].to_numpy())
        got["max_household_risk"] = float(household.max()) if household.size else 0.0
    return _verified(targets, weight, got, "the written release")


def written_matches(parts: list[pd.DataFrame], quasi_identifiers: list[str]) -> np.ndarray:
    """The rows each published key of a release written in parts matches where a missing cell
    matches any value (``missing_matches = "any"``), as :func:`check_written_risk` counts fk:
    ``parts``, the parts' keys with their ``rows`` (:func:`._release.written_classes`)."""
    table, codes = _union_keys(parts, quasi_identifiers, ["rows"])
    fk, _ = sample_risk.frequencies(codes, counts=table["rows"].to_numpy(np.float64))
    return fk


def _union_keys(parts: list[pd.DataFrame], quasi_identifiers: list[str], sums: list[str]
                ) -> tuple[pd.DataFrame, np.ndarray]:
    """The parts' keys added up (a key may span parts; ``sums``: the columns added) and their
    codes, -1 where a cell is missing."""
    qis = list(quasi_identifiers)
    table = pd.concat(parts, ignore_index=True)
    if qis and table.shape[0]:
        table = table.groupby(qis, dropna=False, sort=False)[sums].sum().reset_index()
    codes = np.column_stack([pd.factorize(table[q], use_na_sentinel=True)[0] for q in qis]).astype(np.int64) \
        if qis else np.zeros((table.shape[0], 0), np.int64)
    return table, codes


def _verified(targets: Mapping[str, float], weight: str, got: Mapping[str, float], what: str,
              where: Callable[[str], str] = lambda key: "") -> dict[str, Any]:
    """The record of a release whose measures are ``got``, or a :class:`VerificationError`
    naming the first target missed (``where``: the row that reaches it, if known)."""
    for key, ok in _met(targets, got, RELATIVE_SLACK).items():
        if not ok:
            raise VerificationError(f"{what} does not meet {key}={targets[key]:g}: it reaches "
                                    f"{got[key]:.6g}{where(key)}; nothing was written")
    return {"ok": True, "weight": weight,
            "targets": {key: {"target": limit, "achieved": got[key], "measure": _MEASURE[key]}
                        for key, limit in targets.items()}}


def suppress_groups(prep, groups: np.ndarray, levels_per_row: Mapping[str, np.ndarray]) -> np.ndarray:
    """:func:`group_suppression`'s groups, or its refusal raised."""
    groups, refusal = group_suppression(prep, groups, levels_per_row)
    if refusal is not None:
        raise refusal
    return groups


def group_suppression(prep, groups: np.ndarray,
                      levels_per_row: Mapping[str, np.ndarray]) -> tuple[np.ndarray, ParameterError | None]:
    """With numeric quasi-identifiers a published key is a microaggregation group (its means),
    a part of the node's class, so the risk of the released keys is higher than the class's
    that the search weighed: the groups whose rows are above ``max_individual_risk`` are
    suppressed too (whole groups, so k holds), again until none is left above; then, while a
    household is above ``max_household_risk``, the group of its riskiest member. A global target
    (``max_global_risk``, ``max_expected_reidentifications``) the groups miss is refused in one
    line naming the levers: as with categorical keys, no row goes for it alone (suppressing the
    riskiest rows barely moves a mean of like risks; a larger k or coarser keys do).
    ``groups``: the group of each row, -1 for a suppressed row. Returns the groups and None, or
    the refusal (a target missed, or the groups' suppression past ``max_suppression``): the
    search (:func:`_gtm.choose`) judges its nodes by it, the release raises it."""
    targets = prep.spec.risk_targets
    if not targets or not prep.numeric or not (groups >= 0).any():
        return groups, None
    weight = prep.spec.weight
    w = sample_risk.sampling_weights(prep.frame[weight].reset_index(drop=True), weight)
    cols = categorical_keys(prep, levels_per_row)
    # a numeric key as the file shows it: its group's mean (groups of equal means are one key)
    released = prep.released_numbers(groups, groups >= 0)
    for j in range(len(prep.numeric)):
        cols.append(pd.factorize(released[:, j], use_na_sentinel=True)[0].astype(np.int64))
    households = household_codes(prep) if "max_household_risk" in targets else None
    from ..generalization import max_suppression_count

    return suppress_keys(targets, np.column_stack(cols), w, groups, list(prep.numeric), prep.spec.max_suppression,
                         max_suppression_count(prep.spec.max_suppression, prep.n), households)


def categorical_keys(prep, levels_per_row: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Per categorical QI, each row's published code (-1 where published missing), as
    :func:`group_suppression` compares keys."""
    n = prep.n
    missing0 = sample_risk.key_codes(prep.frame.reset_index(drop=True), list(prep.categorical)) < 0
    cols = []
    for j, a in enumerate(prep.categorical):
        level, code = levels_per_row[a], np.zeros(n, np.int64)
        for L in np.unique(level):
            rows = level == L
            if L <= prep.hierarchies[a].max_level:  # above: one label ("*") in every row
                code[rows] = prep.hierarchies[a].code_map(int(L))[prep.codes0[a][rows]]
        cols.append(np.where((level == 0) & missing0[:, j], -1, code))
    return cols


def suppress_keys(targets: Mapping[str, float], codes: np.ndarray, w: np.ndarray, groups: np.ndarray,
                  numeric: list[str], max_suppression, allowed: int, households: np.ndarray | None = None,
                  rows: np.ndarray | None = None) -> tuple[np.ndarray, ParameterError | None]:
    """:func:`group_suppression`'s steps over units of the file: its rows (``rows`` None), or
    with ``rows`` units of that many rows each whose rows show one key (a partitioned file's
    microaggregation groups, ``w`` then their weight sums). ``codes``: each unit's published key
    (-1 missing), ``groups``: its group (-1 suppressed), ``allowed``: ``max_suppression`` in rows."""
    limit = targets.get("max_individual_risk")
    from ..values import wildcard_counts

    size = np.ones(groups.size) if rows is None else np.asarray(rows, dtype=np.float64)
    before = int(size[groups < 0].sum())
    groups = groups.copy()
    missed: list[str] = []
    while True:
        keep = np.flatnonzero(groups >= 0)
        if keep.size == 0:
            break
        both = wildcard_counts(codes[keep], np.column_stack([size[keep], w[keep]]))
        risk = sample_risk.individual_risk(both[:, 0], both[:, 1])
        above, reason = (risk > limit if limit is not None else np.zeros(keep.size, bool)), "max_individual_risk"
        if not above.any() and households is not None:
            # a suppressed member is not in the file: its risk is 0 in its household's
            above = _riskiest_of_households_above(risk, households[keep], targets["max_household_risk"])
            reason = "max_household_risk"
        if not above.any():
            refusal = _global_refusal(numeric, targets, risk, size[keep])
            if refusal is not None:
                return groups, refusal
            break
        if reason not in missed:
            missed.append(reason)
        groups[np.isin(groups, np.unique(groups[keep[above]]))] = -1
    suppressed = int(size[groups < 0].sum())
    if suppressed > allowed and suppressed > before:
        named = " and ".join(f"{key}={targets[key]:g}" for key in missed)
        return groups, ParameterError(
            f"the groups of the numeric quasi-identifiers ({', '.join(numeric)}) above {named} "
            f"hold {suppressed - before} rows more, {suppressed} suppressed in all, more than "
            f"max_suppression={max_suppression!r} ({allowed} rows); raise {' or '.join(missed)} or k, "
            "or allow more suppression; nothing is published")
    return groups, None


def _global_refusal(numeric: list[str], targets: Mapping[str, float], risk: np.ndarray,
                    rows: np.ndarray) -> ParameterError | None:
    """The global targets over the rows left (``risk``: their individual risks with the numeric
    keys' groups as released, ``rows``: the rows of each): one error naming the first one missed
    and the levers."""
    got = figures(risk, rows)
    for key in ("max_global_risk", "max_expected_reidentifications"):
        if key in targets and got[key] > targets[key] * (1.0 + RELATIVE_SLACK):
            return ParameterError(
                f"the numeric quasi-identifiers ({', '.join(numeric)}) are published as their "
                f"microaggregation groups' means, finer keys than the node's classes, and "
                f"with them the release reaches {key}={got[key]:.6g}, above {targets[key]:g}; raise k (larger "
                f"groups) or {key}, or give {'them' if len(numeric) > 1 else 'it'} a hierarchy and the "
                "role categorical; nothing is published")
    return None


def _riskiest_of_households_above(risk: np.ndarray, households: np.ndarray, limit: float) -> np.ndarray:
    """Per row: whether it is the riskiest member (ties: each) of a household above ``limit``
    (``households``: each row's household code)."""
    size = int(households.max(initial=-1)) + 1
    household = _household_risk(risk, households)
    over = household > limit
    if not over.any():
        return np.zeros(risk.size, bool)
    riskiest = np.zeros(size)
    np.maximum.at(riskiest, households, risk)
    return over[households] & (risk > 0) & (risk >= riskiest[households])


def blank_for_targets(prep, levels: Mapping[str, int], codes: np.ndarray, blank: np.ndarray,
                      importance: np.ndarray) -> np.ndarray:
    """With ``suppression = "cells"``: the cells blanked for k (``blank``, rows x categorical
    QIs) and more, until every target holds as the written file's check measures it (sdcMicro's
    ``indivRisk``, a blank matching any value). ``codes``: the categorical QIs' codes at
    ``levels``; ``importance``: per column, 1 = the most important, blanked last.

    While a row is above ``max_individual_risk`` (else, while a global target is missed, the
    rows of the highest risk), each distinct published key among those rows gets one more
    blank, in every row holding it (a whole class moves, so k holds with either meaning of a
    blank): in the column whose blank makes the key match the most weight, the least important
    column among equals."""
    weight = prep.spec.weight
    names = list(prep.categorical)
    base = codes.copy()
    for j, a in enumerate(names):
        if levels[a] == 0:  # missing as published; a user-missing code is a value
            base[prep.missing0[a], j] = -1
    households = None
    if "max_household_risk" in prep.spec.risk_targets:
        households = household_codes(prep)

    def measure(shown: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
        # measured as the written file is: the keys' codes (a blank missing) and the weight
        frame = pd.DataFrame(np.where(shown < 0, np.nan, shown), columns=names)
        frame[weight] = prep.frame[weight].to_numpy()
        got = measured(frame, names, weight, households)
        return got, got.pop("_risk")

    return _more_blanks(prep.spec.risk_targets, base, blank, np.asarray(prep.weights, dtype=np.float64),
                        importance, measure, households)


def blank_kinds_for_targets(targets: Mapping[str, float], base: np.ndarray, blank: np.ndarray, rows: np.ndarray,
                            weight: np.ndarray, importance: np.ndarray) -> np.ndarray:
    """:func:`blank_for_targets` on a file given as its kinds of rows: ``base`` (kinds x
    categorical QIs: the codes at the node, -1 where published missing), ``blank`` (the cells
    blanked for k), ``rows`` and ``weight`` (each kind's rows and the sum of their sampling
    weights). Rows of one kind show one key whatever is blanked, so they are blanked together:
    the blanks of each kind, as one process gives them to each of its rows. A partitioned file's
    client decides the blanks so, from the parts' counts (no process holds the rows)."""
    rows = np.asarray(rows, dtype=np.float64)

    def measure(shown: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
        fk, Fk = sample_risk.frequencies(shown, weight, counts=rows)
        risk = sample_risk.individual_risk(fk, Fk) if rows.size else np.zeros(0)
        return figures(risk, rows), risk

    return _more_blanks(targets, base, blank, weight, importance, measure, None, rows)


def _more_blanks(targets: Mapping[str, float], base: np.ndarray, blank: np.ndarray, w: np.ndarray,
                 importance: np.ndarray, measure: Callable[[np.ndarray], tuple[dict[str, Any], np.ndarray]],
                 households: np.ndarray | None, rows: np.ndarray | None = None) -> np.ndarray:
    """:func:`blank_for_targets`' steps over rows (``rows`` None) or kinds of rows (``rows``:
    each one's rows): ``measure`` gives the figures and each one's risk of what is shown."""
    blank = blank.copy()
    m = base.shape[1]
    order = np.argsort(-np.asarray(importance), kind="stable")  # the least important first among equals
    limit = targets.get("max_individual_risk")
    while True:
        shown = np.where(blank, -1, base)
        got, risk = measure(shown)
        missed = [key for key, ok in _met(targets, got).items() if not ok]
        if not missed:
            return blank
        open_rows = (shown >= 0).any(axis=1)
        if limit is not None and got["max_individual_risk"] > limit:
            work = risk > limit
        elif missed == ["max_household_risk"] and households is not None:
            # the riskiest member of each household above the target
            above = sample_risk.household_risk(risk, households) > targets["max_household_risk"]
            riskiest = pd.Series(risk).groupby(households).transform("max").to_numpy()
            work = above & (risk >= riskiest)
        else:  # a global target: the riskiest rows that can still be blanked, a hundredth at a time
            cut = (np.quantile(risk[open_rows], 0.99) if rows is None else
                   counted_quantile(risk[open_rows], rows[open_rows], 0.99)) if open_rows.any() else np.inf
            work = risk >= cut
        work &= open_rows
        if not work.any():
            key = missed[0]
            raise ParameterError(f"cell suppression cannot meet {key}={targets[key]:g}: with every key cell of "
                                 f"its riskiest rows blanked it reaches {got[key]:.6g}; raise {key}, or give coarser "
                                 "hierarchies; nothing is published")
        keys, key_of = np.unique(shown, axis=0, return_inverse=True)
        key_of = key_of.ravel()
        key_weight = np.bincount(key_of, weights=w, minlength=keys.shape[0])
        for u in np.unique(key_of[work]):
            row = keys[u]
            same = (keys == row) | (keys < 0) | (row < 0)
            mismatches = m - same.sum(axis=1)
            best, best_weight = -1, -1.0
            for c in order:
                if row[c] < 0:
                    continue
                matched = float(key_weight[(mismatches == 0) | ((mismatches == 1) & ~same[:, c])].sum())
                if matched > best_weight:
                    best, best_weight = int(c), matched
            blank[key_of == u, best] = True


def counted_quantile(values: np.ndarray, counts: np.ndarray, q: float) -> float:
    """``np.quantile(np.repeat(values, counts), q)`` (its default, linear method), without
    making the repeated array: numpy's virtual index and interpolation, on the two values
    around it."""
    counts = np.asarray(counts, dtype=np.int64)
    order = np.argsort(values, kind="stable")
    values, ends = np.asarray(values, dtype=np.float64)[order], np.cumsum(counts[order])
    n = int(ends[-1])
    # numpy's linear method: alpha = beta = 1
    virtual = n * q + (1 + q * (1 - 1 - 1)) - 1
    below = math.floor(virtual)
    gamma = virtual - below
    lo, hi = min(max(below, 0), n - 1), min(max(below + 1, 0), n - 1)
    a = values[np.searchsorted(ends, lo, side="right")]
    b = values[np.searchsorted(ends, hi, side="right")]
    diff = b - a
    if a == b:
        return float(a)
    return float(b - diff * (1 - gamma)) if gamma >= 0.5 else float(a + diff * gamma)


def measured(table: pd.DataFrame, quasi_identifiers, weight: str,
             households: np.ndarray | None = None) -> dict[str, Any]:
    """The measures of a table as :func:`incrowd.risk` computes them (the highest household risk
    with ``households``, each row's household)."""

    w = sample_risk.sampling_weights(table[weight].reset_index(drop=True), weight)
    fk, Fk = sample_risk.frequencies(sample_risk.key_codes(table, list(quasi_identifiers)), w)
    risk = sample_risk.individual_risk(fk, Fk)
    out = {"max_individual_risk": float(risk.max()) if risk.size else 0.0,
           "max_global_risk": float(risk.mean()) if risk.size else 0.0,
           "max_expected_reidentifications": float(risk.sum()), "_risk": risk}
    if households is not None:
        household = sample_risk.household_risk(risk, households)
        out["max_household_risk"] = float(household.max()) if household.size else 0.0
    return out


def verifier(targets: Mapping[str, float], weight: str, household: str | None = None,
             ids: np.ndarray | None = None):
    """The check :class:`incrowd.io.Promise` runs on a release as read back: a record of each
    target and the value reached, or a :class:`VerificationError` naming the target missed.
    ``household``: the household column (its ``ids`` per row where the release drops it)."""
    targets = dict(targets)

    def check(table: pd.DataFrame, quasi_identifiers, what: str) -> dict[str, Any]:
        if weight not in table.columns:
            raise VerificationError(f"{what} has no weight column {weight!r} to measure the risk with; "
                                    "nothing was written")
        households = None
        if "max_household_risk" in targets:
            households = pd.factorize(table[household])[0] if household in table.columns else ids
        got = measured(table, quasi_identifiers, weight, households)
        risk = got.pop("_risk")
        return _verified(targets, weight, got, what,
                         lambda key: f" (data row {int(np.argmax(risk)) + 1})" if key == "max_individual_risk" else "")

    return check


__all__: list[str] = []
