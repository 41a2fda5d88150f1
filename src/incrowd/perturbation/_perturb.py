"""The one-call run: ``perturb(frame, steps, strata=...)``, each step one method applied to its
columns in order, per stratum where strata are given, each draw from its own generator."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, name_list
from ._base import STEP_KEYS, Method, added, check_params, is_names, methods, numbers


@dataclass(frozen=True)
class Step:
    """One checked step: its method (with its parameters), its columns, its seed and whether
    it runs per stratum."""

    method: Method
    random_state: int | None = None
    strata: bool = True
    #: the step as given (what a spec writes back)
    given: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def key(self) -> str:
        return self.method.key


@dataclass
class StepReport:
    """What one step did: its method, columns, the cells it changed and its own figures
    (swaps, the realised PRAM matrix, ...)."""

    method: str
    columns: list[str]
    cells_changed: int
    details: dict[str, Any]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "columns": list(self.columns), "cells_changed": self.cells_changed,
                "seconds": self.seconds, **self.details, "line": self.line()}

    def line(self) -> str:
        """One line for a summary: the method, its columns, what changed."""
        figures = [f"{self.cells_changed} cells changed"]
        for key in ("households_swapped", "swap_rate", "groups", "top_coded", "bottom_coded", "swaps"):
            if key in self.details:
                value = self.details[key]
                figures.append(f"{key.replace('_', ' ')} {value:.4g}" if isinstance(value, float)
                               else f"{key.replace('_', ' ')} {value}")
        return f"{self.method} of {', '.join(self.columns)}: {'; '.join(figures)}"


@dataclass
class PerturbResult:
    """The perturbed table and what each step did (what :func:`perturb` returns).

    Attributes
    ----------
    table : pandas.DataFrame
        The input with the steps' columns perturbed (every other column as given, row order kept).
    steps : list of StepReport
        One report per step, in order.
    """

    table: pd.DataFrame
    steps: list[StepReport]

    def summary(self) -> list[dict[str, Any]]:
        """JSON-ready: one dict per step."""
        return [s.to_dict() for s in self.steps]


def check_steps(steps: Sequence[Mapping[str, Any] | Step], where: str = "perturb") -> list[Step]:
    """Steps as given (dicts: ``columns``, ``method``, the method's own keys, ``random_state``,
    ``strata``) checked: one error naming the step, the key and what is allowed."""
    if isinstance(steps, Mapping) or not isinstance(steps, Sequence):
        raise ParameterError(f"{where}: steps must be a list of steps, each a table with columns and method")
    out = []
    for i, raw in enumerate(steps, 1):
        out.append(raw if isinstance(raw, Step) else _checked(raw, f"{where} step {i}"))
    return out


def _checked(raw: Any, where: str) -> Step:
    """``_step(raw, where)``, remembered for a step whose method keeps nothing of a run (top and
    bottom coding, rounding): a loop that calls ``perturb`` with the same step checks it once.
    A step is the same only if every key holds a value of the same type and equal (``1`` is not
    ``True``), so a value a check refuses is never let through by an equal one checked before."""
    key = _frozen(raw)
    if key is not None:
        hit = _CHECKED.get(key)
        if hit is not None:
            return hit
    step = _step(raw, where)
    if key is not None and step.method.by_column and not step.method.draws:
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[key] = step
    return step


def _frozen(raw: Any) -> tuple | None:
    """A step as a key: each (name, type, value), a list of names as a tuple; None where a value
    cannot be a key (a table, a set, ...)."""
    if type(raw) is not dict:
        return None
    key = []
    for name, value in raw.items():
        if type(value) is list and all(type(v) is str for v in value):
            value = tuple(value)
        elif type(value) not in (str, int, float, bool, type(None)):
            return None
        key.append((name, type(value), value))
    return tuple(key)


#: checked steps of the stateless methods, by their ``_frozen`` key (a few: a loop repeats one)
_CHECKED: dict[tuple, Step] = {}
_CHECKED_MAX = 64


def _aliases() -> dict[str, tuple[type[Method], dict[str, Any]]]:
    """Every alias of a method's key, with the parameter values it sets (read once)."""
    if not _ALIASES:
        _ALIASES.update({word: (cls, fixed) for cls in methods().values() for word, fixed in cls.aliases.items()})
    return _ALIASES


_ALIASES: dict[str, tuple[type[Method], dict[str, Any]]] = {}


def _step(raw: Any, where: str) -> Step:
    registry = methods()
    if not isinstance(raw, Mapping):
        raise ParameterError(f"{where}: a step is a table with columns and method; got {raw!r}")
    method = raw.get("method")
    aliases = _aliases()
    if method not in registry and method not in aliases:
        raise ParameterError(f"{where}: method must be one of {', '.join(registry)}, or a microaggregation method "
                             f"({', '.join(aliases)}); got {method!r}")
    cls, fixed = (registry[method], {}) if method in registry else aliases[method]
    where = f"{where} ({method})"
    columns = raw.get("columns")
    if not is_names(columns) or not columns:
        raise ParameterError(f"{where}: columns must be a list of column names, each once, e.g. "
                             f"[\"income\", \"expend\"]; got {columns!r}")
    random_state = raw.get("random_state")
    if random_state is not None:
        if not cls.draws:
            raise ParameterError(f"{where}: random_state is for a method that draws; {method} draws nothing")
        if isinstance(random_state, bool) or not isinstance(random_state, int) or not 0 <= random_state < 2**32:
            raise ParameterError(f"{where}: random_state must be an integer in [0, {2**32 - 1}]; got {random_state!r}")
    strata = raw.get("strata", True)
    if not isinstance(strata, bool):
        raise ParameterError(f"{where}: strata must be true (per stratum, where strata are given) or false; "
                             f"got {strata!r}")
    own = {**{key: value for key, value in raw.items() if key not in STEP_KEYS}, **fixed}
    values = check_params(cls, own, where)
    return Step(cls(list(columns), values), random_state, strata, dict(raw))


def perturb(frame: pd.DataFrame, steps: Sequence[Mapping[str, Any] | Step], *,
            strata: str | Sequence[str] | None = None, random_state: int | None = 0) -> PerturbResult:
    """Apply ``steps`` to ``frame`` in order (each a method of :data:`METHODS` on its columns).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; it is not changed.
    steps : list of dict
        Each ``{"columns": [...], "method": KEY, ...its own keys}``, with ``random_state`` where
        the method draws and ``strata = False`` to run it over the whole table.
    strata : str, list of str or None, default None
        Columns whose combinations are the strata: each step runs in each stratum on its own.
    random_state : int or None, default 0
        The seed of a step that gives none (step i draws from ``[random_state, i]``).

    Returns
    -------
    PerturbResult
        The perturbed table and one report per step.
    """
    if not isinstance(frame, pd.DataFrame):
        raise ParameterError(f"perturb takes a pandas DataFrame; got {type(frame).__name__}")
    checked = check_steps(steps)
    strata_columns = [strata] if isinstance(strata, str) else list(strata or [])
    _check_columns(frame, checked, strata_columns)
    out = frame.copy(deep=not _COPY_ON_WRITE)
    parts = _strata(frame, strata_columns) if strata_columns else None
    reports = []
    for i, step in enumerate(checked, 1):
        seed = step.random_state if step.random_state is not None else (
            None if random_state is None else [random_state, i])
        # a seeded generator costs more than a whole top coding of a survey: made only for a step that draws
        rng = np.random.default_rng(seed) if step.method.draws else _NO_DRAWS
        reports.append(_run(out, step, parts if step.strata else None, rng, i))
    return PerturbResult(table=out, steps=reports)


#: the generator a step that draws nothing is given (it never reads it)
_NO_DRAWS = np.random.default_rng(0)

#: pandas 3 copies on write: a shallow copy shares the columns no step changes with the input
#: until either side writes into them, so the input is never changed and is not copied whole
_COPY_ON_WRITE = int(pd.__version__.split(".")[0]) >= 3


def _check_columns(frame: pd.DataFrame, steps: list[Step], strata: list[str]) -> None:
    present = frame.columns
    missing = [c for c in strata if c not in present]
    if missing:
        raise DataError(f"perturb: strata names column(s) {name_list(missing)} that the data does not have")
    for i, step in enumerate(steps, 1):
        where = f"perturb step {i} ({step.key})"
        named = step.method.changed_columns() + step.method.other_columns()
        missing = [c for c in named if c not in present]
        if missing:
            raise DataError(f"{where}: column(s) {name_list(missing)} are not in the data")
        both = [c for c in step.method.changed_columns() if c in strata]
        if both:
            raise ParameterError(f"{where}: {', '.join(map(repr, both))}: a column of the strata is not perturbed")
        step.method.check(frame, where)


def _strata(frame: pd.DataFrame, columns: list[str]) -> list[np.ndarray]:
    """The rows of each stratum (a missing value is a stratum of its own)."""
    if not columns:
        return [np.arange(len(frame))]
    codes = np.zeros(len(frame), np.int64)
    for name in columns:
        c, uniques = pd.factorize(frame[name], use_na_sentinel=False)
        codes = codes * (len(uniques) + 1) + c
    codes = np.unique(codes, return_inverse=True)[1].ravel()
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return np.split(order, bounds)


#: figures of a step that add up over strata
_COUNTS = ("swaps", "households_swapped", "households", "risky_households", "risky_swapped", "unmatched",
           "top_coded", "bottom_coded", "groups")


def _run(out: pd.DataFrame, step: Step, parts: list[np.ndarray] | None, rng: np.random.Generator,
         index: int) -> StepReport:
    """One step over the rows of each of ``parts`` (None: the whole table, in order)."""
    method = step.method
    changed = method.changed_columns()
    t0 = time.perf_counter()
    # read-only: a method reads its columns through copies and never writes into the frame it
    # is given, and a step replaces a column whole
    columns = {name: out[name] for name in changed}
    before = {name: column.to_numpy() for name, column in columns.items()}
    per_stratum: list[dict[str, Any]] = []
    where = f"perturb step {index} ({method.key})"
    whole_table = parts is None or (len(parts) == 1 and parts[0].size == len(out))
    if whole_table and method.by_column and all(_numeric(c.dtype) for c in columns.values()):
        # each column on its own, straight from its numbers: no frame read again, and a column
        # in which no cell changed is left as it is (the copy shares it with the input)
        cells, by_column = 0, []
        for name in changed:
            values, count, figures = _coded(method, before[name], columns[name].dtype)
            cells += count
            by_column.append(figures)
            if values is not None:
                _replace(out, name, values)
        return StepReport(method=method.key, columns=changed, cells_changed=cells,
                          details=added(by_column), seconds=time.perf_counter() - t0)
    if whole_table:
        # the whole table in order: the method's new columns are the step's, no copy of the input
        # columns nor of the frame
        outcome = method.apply(out, rng)
        new = {name: _fresh(outcome.values[name], before[name]) for name in changed}
        per_stratum.append(outcome.details)
    else:
        new = {name: np.array(before[name], dtype=object if before[name].dtype == object else None, copy=True)
               for name in changed}
        for rows in parts or []:
            if rows.size == 0:
                continue
            outcome = method.apply(out.iloc[rows], rng)
            for name, values in outcome.values.items():
                if values.dtype.kind == "f" and new[name].dtype.kind != "f":  # numbers into codes or text
                    new[name] = numbers(out, name, f"perturb step {index} ({method.key})")
                new[name][rows] = values
            per_stratum.append(outcome.details)
    details = _details(method, per_stratum)
    cells = 0
    for name in changed:
        old = before[name]
        values = _as_written(new[name], old, columns[name].dtype, partial(numbers, out, name, where))
        cells += _changed(old, values)
        _replace(out, name, values)
    return StepReport(method=method.key, columns=changed, cells_changed=cells, details=details,
                      seconds=time.perf_counter() - t0)


def _numeric(dtype: Any) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind in "fiu"


def _coded(method: Method, old: np.ndarray, dtype: Any) -> tuple[np.ndarray | None, int, dict[str, Any]]:
    """A ``by_column`` method on one numeric column (``old``, never written into): its new values
    as the step writes them (None where no cell changed), how many cells changed, its figures.
    The method's own path in the column's type where it has one, else float64 converted back."""
    fast = method.code_column(old)
    if fast is not None:
        return fast
    values, figures = method.apply_column(np.array(old, dtype=np.float64))
    values = _as_written(_fresh(values, old), old, dtype, lambda: old)
    return values, _changed(old, values), figures


def _as_written(values: np.ndarray, old: np.ndarray, dtype: Any, parsed: Callable[[], np.ndarray]) -> np.ndarray:
    """A method's new column (an array the step may write into) as the step writes it: a
    missing cell the input's own, numbers in the input's type, text where the input was text
    (``parsed``: the input read as numbers)."""
    if values.dtype.kind != "f":
        return values
    if old.dtype.kind == "f":
        # a missing cell stays the input's own (its NaN bits carry a user-missing code)
        gone = np.isnan(old)
        if gone.any():
            values[gone] = old[gone]
    if old.dtype.kind in "fiu":
        return _as_input_type(values, dtype)
    return _as_text(values, old, parsed())


def perturb_values(values: pd.Series | np.ndarray, method: str, *, random_state: int | None = 0,
                   **params: Any) -> pd.Series | np.ndarray:
    """One method on one column given alone: a 1-D array or a Series in, its new values out.

    The values are those of ``perturb`` on a table holding that column, with the step
    ``{"columns": [name], "method": method, **params}``, bit for bit (the same type kept, a
    missing cell kept, the same seed). A method that reads other columns (``shuffle``'s ``by``,
    ``record_swap``) needs the table: call :func:`perturb`.

    Parameters
    ----------
    values : pandas.Series or 1-D numpy.ndarray
        The column; it is not changed.
    method : str
        A key of :data:`METHODS` (or a microaggregation method), e.g. ``"top_code"``.
    random_state : int or None, default 0
        As :func:`perturb`'s for its one step (the step draws from ``[random_state, 1]``).
    **params
        The method's own parameters, e.g. ``value=90_000_000, replacement=0``.

    Returns
    -------
    pandas.Series or numpy.ndarray
        The new values, of the kind given (a Series keeps its index and name).
    """
    series = values if isinstance(values, pd.Series) else None
    old = series.to_numpy() if series is not None else np.asarray(values)
    if old.ndim != 1:
        raise ParameterError(f"perturb_values takes one column (a Series or a 1-D array); got {old.ndim} "
                             f"dimensions: give perturb a table")
    name = series.name if series is not None and isinstance(series.name, str) and series.name else "values"
    where = f"perturb_values ({method})"
    step = _checked({"columns": [name], "method": method, **params}, "perturb_values")
    other = step.method.other_columns()
    if other:
        raise ParameterError(f"{where}: the method reads other columns ({', '.join(map(repr, other))}): give perturb a table")
    dtype = series.dtype if series is not None else old.dtype

    def table() -> pd.DataFrame:
        return pd.DataFrame({name: series if series is not None else old}, copy=False)

    if step.method.by_column and _numeric(dtype):
        coded = _coded(step.method, old, dtype)[0]
        out = old.copy() if coded is None else coded
    else:
        frame = table()
        step.method.check(frame, where)
        rng = np.random.default_rng([random_state, 1] if random_state is not None else None) \
            if step.method.draws else _NO_DRAWS
        new = step.method.apply(frame, rng).values[name]
        out = _as_written(_fresh(new, old), old, dtype, lambda: numbers(table(), name, where))
    return pd.Series(out, index=series.index, name=series.name, copy=False) if series is not None else out


def _replace(out: pd.DataFrame, name: str, values: np.ndarray) -> None:
    """``out[name] = values``, by position where the name is one column's (the quicker way in)."""
    if values.dtype.kind not in "fiub":
        # through a Series, which keeps an object array's type where a frame's setitem infers one
        out[name] = pd.Series(values, index=out.index, name=name)
        return
    where = out.columns.get_loc(name)
    if isinstance(where, int):
        # a Series on the frame's own index goes in as it is, where an array is copied first; on
        # a short column the copy costs less than making the Series
        out.isetitem(where, values if len(values) < _WRAP_ROWS else
                     pd.Series(values, index=out.index, name=name, copy=False))
    else:
        out[name] = values


#: the rows from which a new column is set through a Series rather than copied (about 10 us each)
_WRAP_ROWS = 16_384


def _fresh(values: np.ndarray, old: np.ndarray) -> np.ndarray:
    """A method's new column as the step writes it: the input's type (numbers into a column
    of codes or text: float64), in an array of its own that the step may write into."""
    target = np.dtype(np.float64) if values.dtype.kind == "f" and old.dtype.kind != "f" else old.dtype
    out = values.astype(target, copy=False)
    if out is values and (not values.flags.writeable or np.may_share_memory(values, old)):
        out = values.copy()
    return out


def _details(method: Method, per_stratum: list[dict[str, Any]]) -> dict[str, Any]:
    """A step's figures over its strata: counts added up, any other figure the first
    stratum's, and the method's own merge of several strata."""
    if len(per_stratum) == 1:
        return dict(per_stratum[0])
    details: dict[str, Any] = {}
    for key in _COUNTS:
        if any(key in d for d in per_stratum):
            details[key] = int(sum(d.get(key, 0) for d in per_stratum))
    for d in per_stratum:
        for key, value in d.items():
            if key not in _COUNTS:
                details.setdefault(key, value)
    merge = getattr(method, "merge", None)
    if len(per_stratum) > 1 and merge is not None:
        details.update(merge(per_stratum))
    return details


def _as_input_type(values: np.ndarray, dtype: Any) -> np.ndarray:
    """Floats back in an integer column's type where every value is still a whole number."""
    if not isinstance(dtype, np.dtype) or dtype.kind not in "iu":
        return values
    if values.size == 0:  # no value to need a fraction: an empty column keeps its type
        return values.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = values.min(), values.max()  # NaN where a value is missing: never in range
    if lo >= info.min and hi <= info.max:
        whole = values.astype(dtype)
        if np.array_equal(whole, values):
            return whole
    return values


def _as_text(values: np.ndarray, old: np.ndarray, parsed: np.ndarray) -> np.ndarray:
    """A text column (a CSV read as text) written back as text: a cell the step left as it was
    keeps its own spelling, a missing one its NA word; a changed one is the number, whole
    numbers without a decimal point."""
    out = np.array(old, dtype=object, copy=True)
    for i in np.flatnonzero(~np.isnan(parsed) & (values != parsed)):
        v = float(values[i])
        out[i] = str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)
    return out


def _changed(old: np.ndarray, new: np.ndarray) -> int:
    """How many cells differ (a missing cell differs from a present one, not from another)."""
    if old.dtype.kind in "fiub" and new.dtype.kind in "fiub":
        # NaN differs from itself: the cells missing on both sides are looked for among the few
        # that differ, not over the whole column (== and != on NaN raise no warning)
        differs = old != new
        if old.dtype.kind == "f" and new.dtype.kind == "f":
            at = np.flatnonzero(differs)
            return int(at.size - np.count_nonzero(np.isnan(old[at]) & np.isnan(new[at])))
        return int(np.count_nonzero(differs))
    a, b = pd.isna(old), pd.isna(new)
    same = np.array([x == y for x, y in zip(old, new)], dtype=bool) if old.dtype == object or new.dtype == object \
        else np.asarray(old == new, dtype=bool)
    return int(np.count_nonzero(np.where(a | b, a != b, ~same)))
