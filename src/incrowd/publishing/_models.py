"""The privacy models of ``[privacy]`` beyond k, l and t (:data:`incrowd.privacy.MODELS`: entropy
and recursive l, (alpha, k), delta-disclosure, beta-likeness, k-map, average risk, population
uniqueness, ...) in publish's search, in the release and in its verification.

The search judges each node's classes with every model: a class a model refuses is suppressed
with those failing k, l or t (:func:`failing_classes`); a model of the whole release (average
risk, population uniqueness) then judges the classes left, and a node whose release it refuses
is not an answer (:func:`release_fails`). No model needs code here: each reads the
:class:`~incrowd.privacy.ClassStats` of a node, built from the bottom classes the search groups.

Inside a class the numeric quasi-identifiers are microaggregated into groups of at least k rows:
a group is a part of its class, and a model that its class meets may refuse a part (entropy l
of a part can be lower than its class's). :func:`enforce` then merges every group of such a
class back into the class, which the search judged and found to pass; a model of the whole
release is judged on the groups, and when it refuses them every class becomes one group again.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pandas as pd

from ..exceptions import VerificationError
from ..privacy import ClassStats, PrivacyModel, check_table

if TYPE_CHECKING:
    from ._prepare import Prepared


def _columns(prep: Prepared, model: PrivacyModel) -> list[int | None]:
    """The sensitive columns (their index in ``prep.sensitive``) a model reads; [None] for one
    that reads none."""
    if not model.needs_sensitive:
        return [None]
    names = [s.name for s in prep.sensitive]
    return [names.index(model.column)] if model.column is not None else list(range(len(names)))


def stats_of(prep: Prepared, class_of: np.ndarray, n_classes: int, rows: np.ndarray,
             pairs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], weights: np.ndarray | None,
             column: int | None) -> ClassStats:
    """The classes of units (bottom classes or rows) mapped to classes by ``class_of``:
    ``rows`` rows per unit, ``pairs`` per sensitive column (unit, code, rows), ``weights`` the
    sampling weights per unit."""
    sizes = np.bincount(class_of, weights=rows, minlength=n_classes).astype(np.int64)
    first = np.zeros(n_classes, np.int64)
    w = None if weights is None else np.bincount(class_of, weights=weights, minlength=n_classes)
    if column is None:
        return ClassStats(sizes=sizes, first_rows=first, weights=w)
    s = prep.sensitive[column]
    unit, code, count = pairs[column]
    m = s.n_values
    counts = np.bincount(class_of[unit] * m + code, weights=count, minlength=n_classes * m)
    return ClassStats(sizes=sizes, counts=counts.reshape(n_classes, m).astype(np.int64),
                      table_counts=np.asarray(s.reference_counts, np.int64), missing=bool(s.missing),
                      ordered=bool(s.ordered), values=tuple(s.values), first_rows=first, column=s.name, weights=w)


class Judge:
    """The models of a spec judging the classes of one grouping of units."""

    def __init__(self, prep: Prepared, rows: np.ndarray,
                 pairs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], weights: np.ndarray | None):
        self.prep, self.rows, self.pairs, self.weights = prep, rows, pairs, weights
        self.models = [(model, column) for model in prep.spec.models for column in _columns(prep, model)]

    def __bool__(self) -> bool:
        return bool(self.models)

    def stats(self, class_of: np.ndarray, n_classes: int) -> dict[int | None, ClassStats]:
        needed = {column for _, column in self.models}
        return {column: stats_of(self.prep, class_of, n_classes, self.rows, self.pairs, self.weights, column)
                for column in needed}

    def failing_classes(self, stats: dict[int | None, ClassStats], n_classes: int) -> np.ndarray:
        """Per class: True when a model refuses it."""
        bad = np.zeros(n_classes, dtype=bool)
        for model, column in self.models:
            bad |= ~np.asarray(model.classes_ok(stats[column]), dtype=bool)
        return bad

    def release_fails(self, stats: dict[int | None, ClassStats], keep: np.ndarray) -> str | None:
        """What a model of the whole release refuses in the classes ``keep`` (one bool per class),
        or None when every model accepts them."""
        kept = {column: _subset(s, keep) for column, s in stats.items()}
        for model, column in self.models:
            if not model.release_ok(kept[column]):
                return f"not {model.describe()}: {model.release_figure(kept[column])}"
        return None


def _subset(stats: ClassStats, keep: np.ndarray) -> ClassStats:
    return replace(stats, sizes=stats.sizes[keep], first_rows=stats.first_rows[keep],
                   counts=None if stats.counts is None else stats.counts[keep],
                   weights=None if stats.weights is None else stats.weights[keep])


def row_judge(prep: Prepared) -> Judge:
    """A judge whose units are the rows of the table."""
    ones = np.ones(prep.n, dtype=np.int64)
    index = np.arange(prep.n, dtype=np.int64)
    return Judge(prep, ones, [(index, s.codes.astype(np.int64), ones) for s in prep.sensitive], prep.weights)


def enforce(prep: Prepared, groups: np.ndarray, blocks: np.ndarray | None) -> np.ndarray:
    """``groups`` (a group id per row, -1 suppressed) with every group of a class that a model
    refuses in part merged into one group per class (``blocks``: the class of each row, the
    search's classes; None: nothing to merge back into)."""
    judge = row_judge(prep)
    kept = groups >= 0
    if not judge or blocks is None or not kept.any():
        return groups
    _, local = np.unique(groups[kept], return_inverse=True)
    local = local.ravel().astype(np.int64)
    n_groups = int(local.max()) + 1
    of_row = np.full(prep.n, -1, np.int64)
    of_row[kept] = local
    sub = Judge(prep, judge.rows[kept], [(_renumber(kept, u), c, r) for u, c, r in _kept_pairs(judge, kept)],
                None if judge.weights is None else judge.weights[kept])
    stats = sub.stats(local, n_groups)
    failing = sub.failing_classes(stats, n_groups)
    merge_all = sub.release_fails(stats, np.ones(n_groups, dtype=bool)) is not None
    if not failing.any() and not merge_all:
        return groups
    block_of_group = np.zeros(n_groups, np.int64)
    block_of_group[local] = blocks[kept]
    merged_blocks = np.unique(block_of_group[failing]) if not merge_all else np.unique(block_of_group)
    out = groups.copy()
    # a merged class takes an id past every group's, so that it never joins an untouched group
    base = int(groups.max()) + 1
    rows = kept & np.isin(blocks, merged_blocks)
    out[rows] = base + blocks[rows]
    return out


def _kept_pairs(judge: Judge, kept: np.ndarray):
    for unit, code, count in judge.pairs:
        keep = kept[unit]
        yield unit[keep], code[keep], count[keep]


def _renumber(kept: np.ndarray, unit: np.ndarray) -> np.ndarray:
    position = np.cumsum(kept) - 1
    return position[unit]


def verifier(prep: Prepared):
    """The models' check of a release as read back (:class:`incrowd.io.Promise`'s
    ``models_check``): a record of the models met, or a :class:`VerificationError` naming the
    first one a class (or the release) fails; None without models."""
    spec = prep.spec
    if not spec.models:
        return None
    names = [s.name for s in prep.sensitive]
    ordered = {s.name: list(s.values) if s.ordered else False for s in prep.sensitive}
    population = float(prep.weights.sum()) if prep.weights is not None else None

    def check(table: pd.DataFrame, quasi_identifiers, what: str, reference: pd.DataFrame | None) -> dict[str, Any]:
        base = {name: reference[name] for name in names} if reference is not None else None
        failures = check_table(table, list(quasi_identifiers), spec.models, sensitive=names, ordered=ordered,
                               reference=base, weight=spec.weight)
        if failures:
            raise VerificationError(f"{what} is {failures[0]}; nothing was written")
        return {"ok": True, "models": [m.describe() for m in spec.models],
                **({"population_estimate": population} if population is not None else {})}

    return check
