"""A table's equivalence classes as the models read them, and the check of a whole table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, name_list
from ..values import class_ids, match_counts, sensitive_codes
from ._model import ClassStats, PrivacyModel


def class_stats(frame: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str | None = None, *,
                ordered: Any = None, reference: pd.Series | None = None, population: pd.DataFrame | None = None,
                weight: str | None = None, missing_matches: str = "itself") -> ClassStats:
    """The classes of ``frame`` over ``quasi_identifiers`` (a missing value is a value of its own,
    :func:`incrowd.values.class_ids`) and the counts of ``sensitive`` in each, as ``publish``
    counts them (:func:`incrowd.values.sensitive_codes`: numbers compare as numbers, a missing
    value is one code after every present one).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    quasi_identifiers : sequence of str
        The quasi-identifier columns.
    sensitive : str, optional
        The sensitive column to count (None: class sizes only).
    ordered : bool, sequence or None, default None
        The column's order for t: True, False, the values in order, or None (ordered when every
        value is a number).
    reference : pandas.Series, optional
        The distribution the classes are compared with (t, beta, delta): the input's column
        before rows were suppressed; default the table's own column. Every value of the table
        must occur in it.
    population : pandas.DataFrame, optional
        The population table (k-map, delta-presence): the quasi-identifier columns, one row per
        person of the population, generalized as the table is; its rows with equal values are
        counted as a class. Every row of the table must be one of its records.
    weight : str, optional
        The sampling-weight column (k-map's estimators, population uniqueness): each class's
        weights are summed.
    missing_matches : {"itself", "any"}, default "itself"
        ``"any"``: a missing quasi-identifier value (or an empty text) matches every value, as
        sdcMicro counts k; the rows each class matches are in ``matches``.

    Returns
    -------
    ClassStats
    """
    cols = list(quasi_identifiers)
    absent = [c for c in [*cols, *([sensitive] if sensitive is not None else [])] if c not in frame.columns]
    if absent:
        raise DataError(f"unknown column(s) {name_list(absent)}; the table has {name_list(frame.columns)}")
    n = int(frame.shape[0])
    ids = class_ids(frame[cols]) if cols else np.zeros(n, dtype=np.int64)
    n_classes = int(ids.max()) + 1 if n else 0
    sizes = np.bincount(ids, minlength=n_classes).astype(np.int64)
    first = np.unique(ids, return_index=True)[1].astype(np.int64)  # class numbers run 0..n_classes-1
    extra: dict[str, Any] = {}
    if population is not None:
        extra["population"], extra["population_only"] = _population_counts(frame, cols, population, ids, sizes)
    if weight is not None:
        extra["weights"] = np.bincount(ids, weights=_weights(frame, weight), minlength=n_classes)
    if missing_matches != "itself" and cols and n:
        extra["matches"] = _matches(frame, cols, ids, n_classes, missing_matches)
    if sensitive is None:
        return ClassStats(sizes=sizes, first_rows=first, **extra)
    column = frame[sensitive].reset_index(drop=True)
    if reference is None:
        codes, values, is_ordered, table_counts, missing = sensitive_codes(column, ordered)
    else:
        # one code space for both: the reference's values and the table's, in one order
        ref = pd.Series(reference).reset_index(drop=True)
        both = pd.concat([ref, column], ignore_index=True).rename(sensitive)
        both.attrs = column.attrs  # a statistical file's user-missing codes
        all_codes, values, is_ordered, _, missing = sensitive_codes(both, ordered)
        codes = all_codes[len(ref):]
        table_counts = np.bincount(all_codes[:len(ref)], minlength=len(values) + int(missing))
        unmatched = np.flatnonzero(table_counts[codes] == 0)
        if unmatched.size:
            row = int(unmatched[0])
            cell = column.iloc[row]
            shown = "a missing value" if pd.isna(cell) else f"value {_plain(cell)!r}"
            raise DataError(f"column {sensitive!r}: {shown} (data row {row + 1}) does not occur in the reference "
                            "distribution")
    width = max(int(table_counts.size), 1)
    counts = np.bincount(ids * width + codes, minlength=n_classes * width).reshape(n_classes, width)
    return ClassStats(sizes=sizes, counts=counts.astype(np.int64), table_counts=np.asarray(table_counts, np.int64),
                      missing=missing, ordered=is_ordered, values=tuple(values), first_rows=first, column=sensitive,
                      **extra)


def _matches(frame: pd.DataFrame, cols: list[str], ids: np.ndarray, n_classes: int,
             missing_matches: str) -> np.ndarray:
    """The rows each class's rows match with a missing value matching any value (equal rows match
    alike: the fewest of a class's rows is its figure)."""
    counts = match_counts(frame, cols, missing_matches=missing_matches)
    matches = np.full(n_classes, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(matches, ids, counts.astype(np.int64))
    return matches


def _population_counts(frame: pd.DataFrame, cols: list[str], population: pd.DataFrame, ids: np.ndarray,
                       sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per class of the table, the population's records with its values; and the sizes of the
    population's classes no row of the table falls in."""
    absent = [c for c in cols if c not in population.columns]
    if absent:
        raise DataError(f"the population table lacks the quasi-identifier column(s) {name_list(absent)}")
    n = int(frame.shape[0])
    both = pd.concat([frame[cols].reset_index(drop=True), population[cols].reset_index(drop=True)],
                     ignore_index=True)
    joint = class_ids(both) if cols else np.zeros(both.shape[0], dtype=np.int64)
    in_population = np.bincount(joint[n:], minlength=int(joint.max()) + 1 if joint.size else 0)
    # every row of a class shares its joint class: the first row's stands for the class
    class_joint = np.zeros(sizes.size, dtype=np.int64)
    class_joint[ids] = joint[:n]
    counts = in_population[class_joint].astype(np.int64)
    short = np.flatnonzero(counts < sizes)
    if short.size:
        row = int(np.flatnonzero(ids == short[0])[0])
        shown = ", ".join(f"{c}={_plain(frame[c].iloc[row])!s}" for c in cols)
        raise DataError(f"data row {row + 1} ({shown}): its class has {int(sizes[short[0]])} row(s) but the population "
                        f"table only {int(counts[short[0]])} record(s) with these values; the data must be a subset "
                        "of the population")
    seen = np.zeros(in_population.size, dtype=bool)
    seen[joint[:n]] = True
    return counts, in_population[~seen & (in_population > 0)].astype(np.int64)


def _weights(frame: pd.DataFrame, weight: str) -> np.ndarray:
    """The weight column as floats; a missing, non-numeric or non-positive weight is refused
    naming its row."""
    if weight not in frame.columns:
        raise DataError(f"unknown weight column {weight!r}; the table has {name_list(frame.columns)}")
    values = pd.to_numeric(frame[weight].reset_index(drop=True), errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(~np.isfinite(values) | (values <= 0))
    if bad.size:
        row = int(bad[0])
        raise DataError(f"weight column {weight!r}: data row {row + 1} holds {_plain(frame[weight].iloc[row])!r}; "
                        "a sampling weight is a positive number")
    return values


@dataclass(frozen=True)
class Failure:
    """A model a table does not meet: how many classes fail it and the first of them.

    Attributes
    ----------
    model : PrivacyModel
        The model, with the column it was checked on.
    n_classes : int
        Classes that fail.
    n_rows : int
        Rows in those classes.
    row : int
        The first data row (1-based) of the first failing class.
    values : dict
        That class's quasi-identifier values.
    figure : str or None
        For a release whose classes pass but which fails as a whole (a global model, or the
        population classes of delta-presence): its figure and the bound ("average risk 0.2 >
        0.05"); then ``n_classes`` and ``n_rows`` are 0, ``row`` is 0 and ``values`` is empty.
    """

    model: PrivacyModel
    n_classes: int
    n_rows: int
    row: int
    values: dict
    figure: str | None = None

    def __str__(self) -> str:
        if self.figure is not None:
            return f"not {self.model.describe()}: {self.figure}"
        shown = ", ".join(f"{k}={'(missing)' if pd.isna(v) else v!s}" for k, v in self.values.items())
        return (f"not {self.model.describe()}: {self.n_classes} class(es) of {self.n_rows} row(s) fail, the first "
                f"at data row {self.row} ({shown})")


def _plain(value: Any) -> Any:
    """A cell as Python holds it (1.5, not a numpy scalar), for messages and records."""
    return value.item() if isinstance(value, np.generic) else value


def _columns_of(model: PrivacyModel, sensitive: Sequence[str]) -> list[str | None]:
    if not model.needs_sensitive:
        return [None]
    if model.column is not None:
        return [model.column]
    if not sensitive:
        raise ParameterError(f"{model.key} needs a sensitive column: give one the role \"sensitive\" or name it "
                             f"with column = in {model.key}'s entry")
    return list(sensitive)


def check_table(frame: pd.DataFrame, quasi_identifiers: Sequence[str], models: Sequence[PrivacyModel], *,
                sensitive: Sequence[str] = (), ordered: Mapping[str, Any] | None = None,
                reference: Mapping[str, pd.Series] | None = None, population: pd.DataFrame | None = None,
                weight: str | None = None, missing_matches: str = "itself") -> list[Failure]:
    """Check a whole table (a release as read back) against ``models``: one :class:`Failure` per
    model and sensitive column it does not meet, in the order given; empty when it meets all.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    quasi_identifiers : sequence of str
        The quasi-identifier columns: their equal values make a class.
    models : sequence of PrivacyModel
        The models to meet.
    sensitive : sequence of str, default ()
        The columns with the ``sensitive`` role: a model without a column of its own protects
        each of them.
    ordered : mapping, optional
        Per sensitive column, its order for t (see :func:`class_stats`).
    reference : mapping, optional
        Per sensitive column, the distribution to compare the classes with (see :func:`class_stats`).
    population : pandas.DataFrame, optional
        The population table of k-map and delta-presence (see :func:`class_stats`).
    weight : str, optional
        The sampling-weight column of k-map's estimators and population uniqueness.
    missing_matches : {"itself", "any"}, default "itself"
        How a missing quasi-identifier value matches when k is counted (see :func:`class_stats`).

    Returns
    -------
    list of Failure
        Empty when the table meets every model.
    """
    failures: list[Failure] = []
    cache: dict[str | None, ClassStats] = {}
    cols = list(quasi_identifiers)
    for model in models:
        for column in _columns_of(model, sensitive):
            if column not in cache:
                order = (ordered or {}).get(column) if column is not None else None
                base = (reference or {}).get(column) if column is not None else None
                cache[column] = class_stats(frame, cols, column, ordered=order, reference=base,
                                            population=population, weight=weight,
                                            missing_matches=missing_matches)
            stats = cache[column]
            named = model if column is None or model.column == column else model.on(column)
            ok = np.asarray(model.classes_ok(stats), dtype=bool)
            if ok.all():
                if not model.release_ok(stats):
                    failures.append(Failure(model=named, n_classes=0, n_rows=0, row=0, values={},
                                            figure=model.release_figure(stats)))
                continue
            bad = np.flatnonzero(~ok)
            first = int(stats.first_rows[bad].min())
            failures.append(Failure(
                model=named,
                n_classes=int(bad.size), n_rows=int(stats.sizes[bad].sum()), row=first + 1,
                values={c: _plain(frame[c].iloc[first]) for c in cols}))
    return failures
