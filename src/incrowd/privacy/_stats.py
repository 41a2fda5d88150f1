"""A table's equivalence classes as the models read them, and the check of a whole table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, name_list
from ..metrics import class_ids, sensitive_codes
from ._model import ClassStats, PrivacyModel


def class_stats(frame: pd.DataFrame, quasi_identifiers: Sequence[str], sensitive: str | None = None, *,
                ordered: Any = None, reference: pd.Series | None = None) -> ClassStats:
    """The classes of ``frame`` over ``quasi_identifiers`` (a missing value is a value of its own,
    :func:`incrowd.metrics.class_ids`) and the counts of ``sensitive`` in each, as ``publish``
    counts them (:func:`incrowd.metrics.sensitive_codes`: numbers compare as numbers, a missing
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
    if sensitive is None:
        return ClassStats(sizes=sizes, first_rows=first)
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
                      missing=missing, ordered=is_ordered, values=tuple(values), first_rows=first, column=sensitive)


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
    """

    model: PrivacyModel
    n_classes: int
    n_rows: int
    row: int
    values: dict

    def __str__(self) -> str:
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
                reference: Mapping[str, pd.Series] | None = None) -> list[Failure]:
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
                cache[column] = class_stats(frame, cols, column, ordered=order, reference=base)
            stats = cache[column]
            ok = np.asarray(model.classes_ok(stats), dtype=bool)
            if ok.all():
                continue
            bad = np.flatnonzero(~ok)
            first = int(stats.first_rows[bad].min())
            failures.append(Failure(
                model=model if column is None or model.column == column else model.on(column),
                n_classes=int(bad.size), n_rows=int(stats.sizes[bad].sum()), row=first + 1,
                values={c: _plain(frame[c].iloc[first]) for c in cols}))
    return failures
