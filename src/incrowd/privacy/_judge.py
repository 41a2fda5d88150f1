"""The models of a request judging the classes a search forms: the classes are unions of units
(a search's bottom classes, or rows), so a node's :class:`ClassStats` are sums over its units,
and every model reads them the same way whichever search asks."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from ..exceptions import ParameterError
from ._model import ClassStats, PrivacyModel


@dataclass(frozen=True)
class CodedColumn:
    """A sensitive column as codes: its name, its present values in code order, whether they are
    ordered, the whole table's count of each code (the reference of t, beta and delta) and
    whether the last code is the missing value."""

    name: str
    values: tuple
    ordered: bool
    reference_counts: np.ndarray
    missing: bool = False

    @property
    def n_values(self) -> int:
        return len(self.values) + int(self.missing)


#: per sensitive column, (unit, code, rows) triples
Pairs = Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]


class Judge:
    """The models judging the classes of one search: ``rows`` per unit, ``pairs`` per sensitive
    column in ``columns``, ``weights`` (the sampling weights summed per unit, or None)."""

    def __init__(self, models: Sequence[PrivacyModel], columns: Sequence[CodedColumn], rows: np.ndarray,
                 pairs: Pairs, weights: np.ndarray | None):
        self.columns, self.rows, self.pairs, self.weights = list(columns), rows, pairs, weights
        names = [c.name for c in self.columns]
        self.models: list[tuple[PrivacyModel, int | None]] = []
        for model in models:
            if not model.needs_sensitive:
                self.models.append((model, None))
            elif model.column is not None:
                if model.column not in names:
                    raise ParameterError(f"{model.key} names column {model.column!r}, which is not a sensitive column "
                                         f"here ({', '.join(names) or 'none'})")
                self.models.append((model, names.index(model.column)))
            elif not names:
                raise ParameterError(f"{model.key} needs a sensitive column")
            else:
                self.models.extend((model, i) for i in range(len(names)))

    def __bool__(self) -> bool:
        return bool(self.models)

    def stats(self, class_of: np.ndarray, n_classes: int,
              population: tuple[np.ndarray, np.ndarray] | None = None) -> dict[int | None, ClassStats]:
        """The classes' statistics for every column a model reads (None: none); ``population``:
        the population's records in each class and the sizes of its classes no unit falls in
        (k-map's and delta-presence's table, counted by the caller, who knows the node)."""
        out = {column: self._stats(class_of, n_classes, column) for column in {c for _, c in self.models}}
        if population is not None:
            out = {column: replace(s, population=population[0], population_only=population[1])
                   for column, s in out.items()}
        return out

    def _stats(self, class_of: np.ndarray, n_classes: int, column: int | None) -> ClassStats:
        sizes = np.bincount(class_of, weights=self.rows, minlength=n_classes).astype(np.int64)
        first = np.zeros(n_classes, np.int64)
        w = None if self.weights is None else np.bincount(class_of, weights=self.weights, minlength=n_classes)
        if column is None:
            return ClassStats(sizes=sizes, first_rows=first, weights=w)
        c = self.columns[column]
        unit, code, count = self.pairs[column]
        m = c.n_values
        counts = np.bincount(class_of[unit] * m + code, weights=count, minlength=n_classes * m)
        return ClassStats(sizes=sizes, counts=counts.reshape(n_classes, m).astype(np.int64),
                          table_counts=np.asarray(c.reference_counts, np.int64), missing=bool(c.missing),
                          ordered=bool(c.ordered), values=tuple(c.values), first_rows=first, column=c.name, weights=w)

    def failing_classes(self, stats: dict[int | None, ClassStats], n_classes: int) -> np.ndarray:
        """Per class: True when a model refuses it."""
        bad = np.zeros(n_classes, dtype=bool)
        for model, column in self.models:
            bad |= ~np.asarray(model.classes_ok(stats[column]), dtype=bool)
        return bad

    @property
    def floors(self) -> bool:
        """Whether a model bounds the rows its classes' parts fail (:meth:`PrivacyModel.split_floor`)."""
        return any(type(model).split_floor is not PrivacyModel.split_floor for model, _ in self.models)

    def floor_rows(self, stats: dict[int | None, ClassStats], n_classes: int) -> np.ndarray:
        """Per class, the fewest rows failing some model in any split of it: the largest of the
        models' floors (rows failing any model are at least those failing each)."""
        out = np.zeros(n_classes, np.int64)
        for model, column in self.models:
            got = model.split_floor(stats[column])
            if got is not None:
                np.maximum(out, np.asarray(got, dtype=np.int64), out=out)
        return out

    def release_fails(self, stats: dict[int | None, ClassStats], keep: np.ndarray) -> str | None:
        """What a model of the whole release refuses in the classes ``keep`` (one bool per class,
        those every model's class check passed), or None when every model accepts them."""
        # a model that judges each class alone accepts the classes it kept: only a model of the
        # whole release, or one whose classes read it, has more to say
        judging = [(m, c) for m, c in self.models
                   if type(m).release_ok is not PrivacyModel.release_ok or m.reads_release]
        if not judging:
            return None
        kept = {column: _subset(s, keep) for column, s in stats.items()}
        for model, column in judging:
            if not model.release_ok(kept[column]):
                return f"not {model.describe()}: {model.release_figure(kept[column])}"
        return None

    def subset(self, units: np.ndarray) -> Judge:
        """The same judge over the units ``units`` (a bool per unit), renumbered in order."""
        position = np.cumsum(units) - 1
        pairs = []
        for unit, code, count in self.pairs:
            keep = units[unit]
            pairs.append((position[unit[keep]], code[keep], count[keep]))
        out = Judge([], self.columns, self.rows[units], pairs, None if self.weights is None else self.weights[units])
        out.models = self.models
        return out


def _subset(stats: ClassStats, keep: np.ndarray) -> ClassStats:
    # a class left out of the release is, to the population, a class no published row falls in
    only = stats.population_only
    if stats.population is not None:
        only = np.concatenate([only if only is not None else np.zeros(0, np.int64), stats.population[~keep]])
    return replace(stats, sizes=stats.sizes[keep], first_rows=stats.first_rows[keep],
                   counts=None if stats.counts is None else stats.counts[keep],
                   weights=None if stats.weights is None else stats.weights[keep],
                   population=None if stats.population is None else stats.population[keep], population_only=only)
