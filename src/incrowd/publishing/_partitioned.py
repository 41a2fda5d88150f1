"""Generalize-then-microaggregate on a partitioned file, as pure functions of one part each
(the Dask backend runs them, :mod:`incrowd.distributed`), giving the in-process release.

1. :func:`part_facts`: what a part tells of the whole file (its rows, the exact sums of its
   numeric QIs, its missing patterns, how its categorical QIs meet their hierarchies, its
   sensitive values); :func:`whole_of` combines them;
2. :func:`part_bottom`: the part's bottom classes and the exact sums of its squared deviations;
   :func:`search` combines the bottoms and runs publish's own search (:func:`_gtm.choose`) on
   them, with :func:`scaled` giving the whole file's scale;
3. :func:`part_pieces`: each row's class at the chosen node (-1: suppressed, :func:`part_classes`),
   from the rows' bottom classes that :func:`part_bottom` left with the part, and its rows to
   publish split by class, prepared (as :func:`part_bottom` prepared them), each with its
   position in the part;
4. :func:`release_classes`: whole classes (rows of each class together, in file order)
   microaggregated as :func:`publish` does them, not prepared again, l and t enforced inside
   each class; per part, its published rows' positions and numbers (the groups' means);
5. :func:`part_release`: a part's published table, in the part's order (the release keeps the
   file's order as :func:`publish` does), from the part itself and what every class's release
   gave it: the categorical QIs generalized row by row, the numbers placed.

Only numbers travel with the rows of a class (no text: a class may hold a quarter of a file),
so a part is prepared with the whole file's standardization (exactly rounded sums:
:func:`_prepare.sum_partials`), pattern ids, matches and sensitive codes
(:class:`_prepare.Whole`), and the part's text is read again where its release is written.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, cell_text
from ..generalization import match_mode, max_suppression_count, qi_labels
from ..privacy import sample_risk
from ..values import sensitive_codes
from . import _gtm, _risk_targets
from ._households import household_codes, household_level_columns, household_verifier, publish_id
from ._prepare import (
    Prepared,
    Whole,
    _hierarchy,
    _numeric,
    check_distinct,
    exact_mean,
    exact_scale,
    joined,
    pattern_keys,
    pattern_order,
    prepare,
    squared_deviations,
    sum_partials,
    with_whole,
)
from ._release import _enforce_sensitive, _table, suppression_refusal
from ._spec import ReleaseSpec, check_columns


def part_facts(frame: pd.DataFrame, spec: ReleaseSpec) -> dict[str, Any]:
    """What the part tells of the whole file (:func:`whole_of`)."""
    roles = check_columns(spec, [str(c) for c in frame.columns])
    numeric = [c for c, r in roles.items() if r == "numeric"]
    X = _numeric(frame, numeric, spec.missing_numeric, whole=False)
    sums = []
    for j in range(X.shape[1]):
        column = X[~np.isnan(X[:, j]), j]
        sums.append((int(column.size), sum_partials(column)))
    match = {}
    for c in (c for c, r in roles.items() if r == "categorical"):
        labels, user = qi_labels(frame[c])
        requested = getattr(spec.columns[c], "match", None)
        match[c] = match_mode(_hierarchy(frame[c], spec.columns[c], c), frame[c], labels, user, requested) \
            if frame.shape[0] else None
    values = {c: frame[c].drop_duplicates() for c, r in roles.items() if r == "sensitive"}
    for c, v in values.items():
        v.attrs = dict(frame[c].attrs)
    households = None
    level: list[str] = []
    if spec.household is not None:
        households = sample_risk.household_ids(frame[spec.household], spec.household).drop_duplicates()
        level = household_level_columns(frame, spec, [c for c, r in roles.items() if r == "categorical"])
    return {"rows": int(frame.shape[0]), "numeric": numeric, "sums": sums,
            "patterns": np.unique(pattern_keys(X)).tolist() if X.shape[1] else [], "match": match,
            "sensitive": values, "households": households, "household_level": level}


def split_household(facts: list[dict[str, Any]], names: list[str], column: str) -> str | None:
    """The line refusing a household whose rows lie in two parts (``names``: the parts'), or None.
    A household is published, checked and measured as one: its members' risks multiply, and a
    blank in a household-level column is judged against the housemates' rows."""
    ids = [f["households"] for f in facts]
    if not ids or all(i is None for i in ids):
        return None
    both = pd.concat([pd.Series(i) for i in ids], ignore_index=True)
    part = np.repeat(np.arange(len(ids)), [len(i) for i in ids])
    if pd.api.types.is_numeric_dtype(both.dtype):
        # a census's numbered households: sorted, an id met twice stands beside itself (half
        # the CPU of hashing them, and the usual answer is that none is)
        values = np.sort(both.to_numpy())
        if not (values[1:] == values[:-1]).any():
            return None
    twice = both.duplicated(keep="first").to_numpy()
    if not twice.any():
        return None
    first = int(np.flatnonzero(twice)[0])
    where = [names[p] for p in part[(both == both.iloc[first]).to_numpy()]]
    return (f"household {cell_text(both.iloc[first])} (column {column!r}) has rows in {where[0]} and {where[1]}; "
            "each household must lie in one partition: write the partitions by the household column (all of a "
            "household's rows in one file), or publish the file in one process")


def whole_of(spec: ReleaseSpec, facts: list[dict[str, Any]]) -> Whole:
    """The whole file's facts but its scale (:func:`scaled` adds it)."""
    rows = sum(f["rows"] for f in facts)
    if rows == 0:
        raise DataError("the data has no rows")
    if spec.k > rows:
        raise ParameterError(f"k={spec.k} is larger than the number of rows ({rows})")
    numeric = facts[0]["numeric"]
    mean = np.zeros(len(numeric))
    present = []
    for j, name in enumerate(numeric):
        count = sum(f["sums"][j][0] for f in facts)
        if count == 0:
            raise DataError(f"numeric column {name!r} has no value in any row")
        partials = [f["sums"][j][1] for f in facts]
        if any(p is None for p in partials):
            raise DataError(f"numeric column {name!r} holds values too large to sum exactly; publish it in one "
                            "process")
        mean[j] = exact_mean([x for p in partials for x in p], count)
        present.append(count)
    patterns = pattern_order({v for f in facts for v in f["patterns"]}, len(numeric)) if numeric else ()
    match: dict[str, str] = {}
    for f in facts:
        for name, mode in f["match"].items():
            if mode is not None and match.setdefault(name, mode) != mode:
                raise DataError(f"column {name!r} meets its hierarchy by {match[name]} in one partition and by "
                                f"{mode} in another; set its match in the spec")
    sensitive = {}
    for name in (facts[0]["sensitive"] if facts else {}):
        distinct = pd.concat([f["sensitive"][name] for f in facts], ignore_index=True)
        distinct.attrs = dict(facts[0]["sensitive"][name].attrs)
        _, order, ordered, _, missing = sensitive_codes(distinct.drop_duplicates(), spec.columns[name].ordered)
        check_distinct(spec, name, len(order))
        sensitive[name] = (order, ordered, np.zeros(len(order) + int(missing), np.int64), missing)
    # a column is household-level in the file where it is in every part (a flagged one that is
    # not was refused by its part)
    level = [c for c in (facts[0]["household_level"] if facts else []) if all(c in f["household_level"] for f in facts)]
    return Whole(rows, mean, np.ones(len(numeric)), tuple(present), tuple(patterns), match, sensitive, tuple(level))


def part_bottom(frame: pd.DataFrame, spec: ReleaseSpec, whole: Whole):
    """The part's bottom classes, its sensitive values' rows, the exact sums of its squared
    deviations from the whole file's means, each row's bottom class (its number in the part's
    bottom classes), the prepared rows without the frame (both what :func:`part_pieces` reads,
    so that the part is prepared once on its way to the release), and with risk targets its
    bottom classes' weights and missing cells (:func:`_risk_targets.bottom_risk`; else None)."""
    prep = prepare(frame, spec, whole)
    deviations = [sum_partials(squared_deviations(prep.X[~np.isnan(prep.X[:, j]), j], whole.mean[j]))
                  for j in range(prep.X.shape[1])]
    counts = {s.name: np.bincount(s.codes, minlength=s.n_values) for s in prep.sensitive}
    # the search sums the classes; each row's class (8 bytes a row) and prepared values stay
    # with the part, a billion-row file's 2,000 partitions would send the client 8 GB of it;
    # the frame is read again where the rows are split, cheaper to read than to hold
    bottom = _gtm.bottom_counts(prep)
    risk: tuple | None = _risk_targets.bottom_risk(prep, bottom) if spec.risk_targets else None
    if risk is not None and "max_household_risk" in spec.risk_targets:
        # a household's risk multiplies its members': the judge reads each row's household and
        # bottom class (16 bytes a row to the client, with this target only)
        risk = (*risk, household_codes(prep), bottom.of_row)
    # (the standardized values wait for the whole file's scale: :func:`with_whole` makes them)
    return (dataclasses.replace(bottom, of_row=np.zeros(0, np.int64)), deviations, counts, bottom.of_row,
            dataclasses.replace(prep, frame=frame.iloc[:0], Z=prep.Z[:0]), risk)


def scaled(whole: Whole, pieces: list) -> Whole:
    """``whole`` with its scale (and its sensitive columns' rows per value) from the parts'
    :func:`part_bottom`: a constant column gets scale 1, as in one process."""
    scale = np.ones(whole.mean.size)
    for j in range(whole.mean.size):
        deviations = [p[1][j] for p in pieces]
        std = exact_scale(float(whole.mean[j]), None if any(d is None for d in deviations) else
                          [x for d in deviations for x in d], whole.present[j])
        if std is None and not all(d == [] for d in deviations):
            raise DataError("a numeric quasi-identifier's values are too large or too small to standardize "
                            "exactly; publish the file in one process")
        scale[j] = 1.0 if std is None else std
    sensitive = {name: (order, ordered, sum(p[2][name] for p in pieces), missing)
                 for name, (order, ordered, _, missing) in whole.sensitive.items()}
    return dataclasses.replace(whole, scale=scale, sensitive=sensitive)


def search(spec: ReleaseSpec, whole: Whole, bottoms: list, *, max_nodes: int | None,
           max_memory: int | None, risks: list | None = None,
           fits: Callable[[_gtm.GtmChoice, list[np.ndarray]], ParameterError | None] | None = None
           ) -> tuple[_gtm.GtmChoice, list[np.ndarray], Prepared]:
    """Publish's search on the combined bottom classes: the node, per part the file's number of
    each of its bottom classes, and the prepared file without rows (what the summary reads).
    ``risks``: with risk targets, each part's :func:`part_bottom` weights and missing cells, which
    judge the nodes as one process does. ``fits``: the release's judgement of a node that passes
    on its classes (as :func:`_gtm.choose` asks it), given the node and the parts' numbers."""
    names = list(spec.columns)
    empty = pd.DataFrame({c: pd.Series([], dtype=object) for c in names})
    prep = prepare(empty, spec, whole)
    prep.rows = whole.rows
    bottom, maps = _gtm.combine_bottoms(prep, bottoms)
    judge = None
    if spec.risk_targets:
        # the search's judge is the in-process one (it is looked up on the bottom classes), fed
        # with the file's weights, which no part holds alone
        judge = bottom.__dict__["risk_judge"] = _risk_targets.combined_judge(prep, bottom, risks or [], maps)
    # the rows' weights as the models' judge sums them per bottom class (whose rows, here, are the
    # bottom classes themselves); the prepared file has no rows, so no weights without targets
    prep.weights = None if judge is None else judge.weight
    _gtm.check_spec_nodes(spec, max_nodes)
    choice = _gtm.choose(prep, max_nodes=max_nodes, max_memory=max_memory, bottom=bottom,
                         fits=None if fits is None else (lambda node: fits(node, maps)))
    return choice, maps, prep


def part_classes(of_row: np.ndarray, number: np.ndarray, choice: _gtm.GtmChoice) -> np.ndarray:
    """Each row's class at the chosen node, -1 where its class is suppressed, from its bottom
    class (``of_row``: :func:`part_bottom`'s last item; ``number``: each bottom class's number
    in the file). The bottom classes are the level-0 codes and missing patterns, which the
    whole file's scale does not change."""
    bottom = number[of_row]
    return np.where(choice.keep[bottom], choice.class_of[bottom], -1)


def part_pieces(frame: pd.DataFrame, bottom, whole: Whole, number: np.ndarray, choice: _gtm.GtmChoice,
                where: np.ndarray, n_out: int) -> list[tuple[dict[str, Any], np.ndarray, np.ndarray]]:
    """The part's published rows, prepared (:meth:`Prepared.rows_of`), with their classes and
    their positions in the part, one piece per output partition (``where``: each class's);
    ``frame``: the part as read,
    ``bottom``: its :func:`part_bottom`, ``whole``: the whole file's facts with its scale
    (:func:`scaled`)."""
    prep = with_whole(bottom[4], whole, frame)
    classes = part_classes(bottom[3], number, choice)
    kept = np.flatnonzero(classes >= 0)
    out = where[classes[kept]]
    pieces = []
    for b in range(n_out):
        rows = kept[out == b]
        pieces.append((prep.rows_of(rows, carried_columns(prep.spec)), classes[rows], rows))
    return pieces


def carried_columns(spec: ReleaseSpec) -> list[str]:
    """The columns a class's rows carry to their grouping: where the risk targets judge the
    groups (:func:`group_keys`), the sampling weight and the categorical QIs (whose missing
    cells the keys read as the risk measures read them); none else, the rest is read again by
    :func:`part_release`."""
    if not spec.risk_targets or spec.weight is None:
        return []
    return [spec.weight, *(c for c, column in spec.columns.items() if column.role == "categorical")]


def _template(spec: ReleaseSpec, whole: Whole) -> Prepared:
    """The file's columns prepared without rows, with the whole file's facts (what
    :func:`joined` fills with a class task's rows)."""
    return prepare(pd.DataFrame({c: pd.Series([], dtype=object) for c in spec.columns}), spec, whole)


def class_groups(pieces: list[tuple[Any, ...]], spec: ReleaseSpec, whole: Whole, levels: dict[str, int]):
    """Whole classes' rows (``pieces``: :func:`part_pieces`'s, one per part, holding every row of
    each of their classes, in file order), prepared as one process prepares them, and their
    groups: by the spec's method inside each class, l and t enforced inside each class (a group
    below l merges with its class's nearest, as in one process; -1 where none is left)."""
    prep = joined(_template(spec, whole), [p[0] for p in pieces])
    class_of = np.concatenate([p[1] for p in pieces])
    choice = _gtm.GtmChoice(dict(levels), class_of, np.ones(prep.n, bool), 0, 0)
    return prep, _enforce_sensitive(prep, _gtm.microaggregate_classes(prep, choice), class_of)


def release_classes(pieces: list[tuple[Any, ...]], spec: ReleaseSpec, whole: Whole,
                    levels: dict[str, int], grouped=None) -> list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """Whole classes' rows (:func:`class_groups`) as published, per part they came from: the
    positions in the part of its published rows, their numeric QIs as published (the groups'
    means; rows x numeric QIs) and, in a cell release, their blanked cells (rows x categorical
    QIs: a cell release's pieces carry them as a fourth item,
    :func:`_partitioned_cells.part_cell_pieces`). ``grouped``: the prepared rows and their
    groups, where :func:`class_groups` made them already (the groups above a risk target then
    set -1). :func:`part_release` makes each part's published table from them."""
    prep, groups = grouped if grouped is not None else class_groups(pieces, spec, whole, levels)
    keep = groups >= 0
    numbers = prep.released_numbers(groups, keep)
    blank = np.concatenate([p[3] for p in pieces]) if spec.suppression == "cells" else None
    part = np.repeat(np.arange(len(pieces)), [p[2].size for p in pieces])[keep]
    position = np.concatenate([p[2] for p in pieces])[keep]
    order = np.argsort(part, kind="stable")
    bounds = np.searchsorted(part[order], np.arange(len(pieces) + 1))
    rows = np.flatnonzero(keep)[order]
    return [(position[order[a:b]], numbers[rows[a:b]], None if blank is None else blank[rows[a:b]])
            for a, b in zip(bounds[:-1], bounds[1:])]


def part_codes(bottom) -> Prepared:
    """What a part's release reads of its prepared rows (``bottom``: its :func:`part_bottom`):
    the categorical QIs' codes, kept with the part until its release is written (its text is
    read again there: a class task carries numbers only)."""
    prep = bottom[4]
    return dataclasses.replace(prep, X=prep.X[:0], Z=prep.Z[:0], pattern=prep.pattern[:0], missing0={},
                               weights=None, sensitive=[])


def part_release(frame: pd.DataFrame, codes: Prepared, spec: ReleaseSpec, levels: dict[str, int],
                 back: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]]) -> pd.DataFrame:
    """A part's published table in the part's order (``frame``: the part as read; ``codes``: its
    :func:`part_codes`), from every class task's published rows of it (``back``:
    :func:`release_classes`'s item for the part, from each class task that published some):
    its rows at those positions, the numeric QIs those numbers, the categorical QIs generalized
    to ``levels`` (a row's generalized value depends on the row alone), the cells blanked; the
    other columns as read. ``spec``: the spec the table is published with."""
    prep = dataclasses.replace(codes, frame=frame, spec=spec)
    n = prep.n
    keep = np.zeros(n, bool)
    numbers = np.full((n, len(prep.numeric)), np.nan)
    blank = np.zeros((n, len(prep.categorical)), bool) if spec.suppression == "cells" else None
    for position, published, cells in back:
        keep[position] = True
        numbers[position] = published
        if blank is not None and cells is not None:
            blank[position] = cells
    levels_per_row = {a: np.full(n, levels[a], np.int64) for a in prep.categorical}
    cells_of = None if blank is None else {a: blank[:, j] for j, a in enumerate(prep.categorical)}
    table = _table(prep, None, levels_per_row, keep, cells=cells_of, numbers=numbers)
    for name in cells_of or ():
        if table[name].dtype == object and table[name].isna().all():
            # a part whose column is all blank keeps the column's type: written as objects that
            # are all missing, Parquet would store it untyped, a type the other parts do not have
            table[name] = table[name].astype(frame[name].dtype)
    return table


def group_keys(prep: Prepared, groups: np.ndarray, levels: dict[str, int]) -> dict[str, Any]:
    """What the groups above a risk target are decided from (:func:`suppress_group_keys`), of
    one class task's groups (``prep`` and ``groups``: its :func:`class_groups`): per group its
    number there, its categorical codes (-1 where published missing), its published means, its
    rows and the sum of their sampling weights; and the rows that are in no group. A group's
    rows lie in one class, so they show one key."""
    ids, first, group_of = np.unique(groups, return_index=True, return_inverse=True)
    group_of = group_of.ravel()
    weight = prep.spec.weight
    assert weight is not None  # the spec refuses risk targets without a weight column
    w = sample_risk.sampling_weights(prep.frame[weight].reset_index(drop=True), weight)
    codes = np.column_stack(_risk_targets.categorical_keys(
        prep, {a: np.full(prep.n, levels[a], np.int64) for a in prep.categorical}))
    numbers = prep.released_numbers(groups, groups >= 0)
    mine = ids >= 0
    return {"group": ids[mine], "codes": codes[first[mine]], "numbers": numbers[first[mine]],
            "rows": np.bincount(group_of, minlength=ids.size)[mine],
            "weight": np.bincount(group_of, weights=w, minlength=ids.size)[mine], "out": int((groups < 0).sum())}


def suppress_group_keys(spec: ReleaseSpec, numeric: list[str], rows: int, tasks: list[dict[str, Any] | None]
                        ) -> tuple[list[np.ndarray], int, ParameterError | None]:
    """The groups above a risk target over a partitioned file's class tasks (``tasks``: their
    :func:`group_keys`, None where one published nothing; ``rows``: the file's), decided by the
    in-process steps (:func:`_risk_targets.suppress_keys`, a group a unit): per task the
    numbers of its groups suppressed, the rows suppressed in all, and the refusal (None where
    the release goes ahead), as one process's :func:`_risk_targets.group_suppression` and its
    check of ``max_suppression`` give them."""
    got = [t for t in tasks if t is not None]
    held = sum(int(t["rows"].sum()) for t in got)
    m = sum(1 for c in spec.columns.values() if c.role == "categorical")
    codes = np.concatenate([t["codes"] for t in got] or [np.zeros((0, m), np.int64)])
    numbers = np.concatenate([t["numbers"] for t in got] or [np.zeros((0, len(numeric)))])
    keys = np.column_stack([codes, *[pd.factorize(numbers[:, j], use_na_sentinel=True)[0].astype(np.int64)
                                     for j in range(len(numeric))]]) if got else np.zeros((0, 0), np.int64)
    size = np.concatenate([t["rows"] for t in got] or [np.zeros(0)]).astype(np.float64)
    w = np.concatenate([t["weight"] for t in got] or [np.zeros(0)])
    task = np.repeat(np.arange(len(got)), [t["group"].size for t in got])
    number = np.arange(size.size, dtype=np.int64)
    # the rows of suppressed classes and of groups l or t left out: one unit, suppressed already
    keys = np.vstack([keys, np.full((1, keys.shape[1]), -1, np.int64)])
    size, w = np.append(size, rows - held), np.append(w, 0.0)
    groups = np.append(number, -1)
    limit = max_suppression_count(spec.max_suppression, rows)
    if (groups >= 0).any():
        groups, refusal = _risk_targets.suppress_keys(spec.risk_targets, keys, w, groups, numeric,
                                                      spec.max_suppression, limit, rows=size)
    else:
        refusal = None
    out = groups[:-1] < 0
    suppressed = int(size[:-1][out].sum()) + rows - held
    if refusal is None:
        refusal = suppression_refusal(spec, suppressed, rows)
    local, i = [], 0
    for t in tasks:
        if t is None:
            local.append(np.zeros(0, np.int64))
            continue
        local.append(t["group"][out[task == i]])
        i += 1
    return local, suppressed, refusal


def publish_households(table: pd.DataFrame, spec: ReleaseSpec, offset: int = 0) -> np.ndarray:
    """A part's published rows' households (codes 0, 1, ... in order of first appearance), the
    household column then published as the spec says, in place: renumbered from ``offset`` + 1
    (the households the parts before it published: a household lies in one part, so the
    numbers run on as one process gives them), or dropped."""
    name = str(spec.household)
    codes = pd.factorize(table[name].reset_index(drop=True))[0].astype(np.int64)
    publish_id(table, name, spec.household_id)
    if spec.household_id == "renumber":
        table[name] += offset
    return codes


def part_household_check(spec: ReleaseSpec, whole: Whole, codes: np.ndarray):
    """The household check of a written part (:func:`._households.household_verifier`): a
    household lies in one part, so its housemates are all there."""
    return household_verifier(str(spec.household), list(whole.household_level), codes, spec.k, spec.missing_matches)
