"""What every perturbation method shares: the interface a method file implements, its declared
parameters and their checks, and the registry that finds every method file of this package.

A method is one public module of ``incrowd.perturbation`` holding one :class:`Method` subclass
with a ``key``; nothing else names it: :data:`METHODS` is read from the package's files, so a
new method is one new file."""

from __future__ import annotations

import importlib
import math
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import numpy as np
import pandas as pd

from ..exceptions import ParameterError


@dataclass(frozen=True)
class Param:
    """One parameter of a method: what it takes (as a user reads it), its value when left out
    (``REQUIRED``: none), the check of a given value and what it means."""

    kind: str
    default: Any
    check: Callable[[Any], bool]
    meaning: str
    choices: tuple[str, ...] = ()
    #: what a form asks for where the check alone cannot say: ``file``, a file the user uploads
    #: (the step names it by its file name)
    input: str = ""

    def describe(self, name: str) -> dict[str, Any]:
        """JSON-ready: ``name``, what it takes, its default (None where it is required or has
        none), whether it is required, what it means, its choices and the form's ``input``
        (``choice``, ``boolean``, ``columns``, ``number``, ``text`` or ``file``)."""
        required = self.default is REQUIRED
        default = None if required else self.default
        return {"name": name, "kind": self.kind, "default": list(default) if isinstance(default, tuple) else default,
                "required": required, "meaning": self.meaning, "choices": list(self.choices),
                "input": self.input or _input(self)}


#: a parameter's default that says it must be given
REQUIRED = object()
#: the keys every step takes besides its method's own
STEP_KEYS = ("columns", "method", "random_state", "strata")


def _accepts(check: Callable[[Any], bool], *values: Any) -> bool:
    for value in values:
        try:
            if check(value):
                return True
        except Exception:  # a check written for one kind of value may fail on another: not accepted
            continue
    return False


def _input(param: Param) -> str:
    """What a form asks for, read off the parameter's check, so that a method declares only its
    check: one of its ``choices``, a yes or no, a list of column names, a number, or text."""
    if param.choices:
        return "choice"
    if isinstance(param.default, bool) or (_accepts(param.check, True) and not _accepts(param.check, 1, 0)):
        return "boolean"
    if _accepts(param.check, ["a", "b"]):
        return "columns"
    if _accepts(param.check, 0.5, 1, 2, 50, -1):
        return "number"
    return "text"


def is_number(lo: float = -math.inf, hi: float = math.inf, *, open_lo: bool = False,
              open_hi: bool = False) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        return (value > lo if open_lo else value >= lo) and (value < hi if open_hi else value <= hi)
    return check


def is_integer(lo: int) -> Callable[[Any], bool]:
    return lambda value: not isinstance(value, bool) and isinstance(value, int) and value >= lo


def is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def is_names(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value)
            and len(set(value)) == len(value))


def is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def one_of(*words: str) -> Callable[[Any], bool]:
    return lambda value: value in words


@dataclass
class Outcome:
    """What a method did to the rows it was given: the columns' new values (row order kept)
    and its own figures (summed over strata where they are counts)."""

    values: dict[str, np.ndarray]
    details: dict[str, Any]


class Method:
    """One perturbation method. A subclass sets ``key`` (the spec's ``method``), ``sdcmicro``
    (its counterpart there), ``data`` (the columns it takes: ``"numeric"``, ``"categorical"``
    or ``"any"``), ``draws`` (whether it takes ``random_state``) and ``params``, and implements
    :meth:`apply` on the rows of one stratum."""

    key: ClassVar[str] = ""
    sdcmicro: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    data: ClassVar[str] = "numeric"
    draws: ClassVar[bool] = False
    params: ClassVar[dict[str, Param]] = {}
    #: other words a step's ``method`` may give for this method, each with the parameter value it
    #: sets (microaggregation: the name of any incrowd microaggregation method)
    aliases: ClassVar[dict[str, dict[str, Any]]] = {}

    def __init__(self, columns: list[str], values: Mapping[str, Any]):
        self.columns = list(columns)
        self.values = dict(values)

    def __eq__(self, other: object) -> bool:
        # two steps alike in method, columns and parameters (what the spec gave, not what a run
        # learnt of the data) are the same step
        return (type(other) is type(self) and isinstance(other, Method) and other.columns == self.columns
                and _given(other.values) == _given(self.values))

    __hash__ = None  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("values", {})
        if name in values:
            return values[name]
        raise AttributeError(name)

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """JSON-ready: the method and each of its own parameters as a form shows it (what the web's
        step editor is built from, so that a new method file needs no page of its own). A
        parameter named like a step key (``method``) is set by the step, not by a box."""
        return {"key": cls.key, "summary": cls.summary, "sdcmicro": cls.sdcmicro, "data": cls.data,
                "draws": cls.draws,
                "params": [param.describe(name) for name, param in cls.params.items() if name not in STEP_KEYS]}

    def other_columns(self) -> list[str]:
        """The columns it reads besides those it changes (predictors, the household id, ...)."""
        return []

    def changed_columns(self) -> list[str]:
        """The columns whose values it changes."""
        return list(self.columns)

    def check(self, frame: pd.DataFrame, where: str) -> None:
        """Checks of the parameters against the data, before any row changes (one clear error).
        By default none: a numeric method reads its columns through :func:`numbers`, which names
        the column and the row of a cell that is not a number, and the steps work on a copy, so a
        refused step leaves the input as it was."""

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        if not self.by_column:
            raise NotImplementedError
        return self.apply_columns({name: numbers(frame, name, self.key) for name in self.columns})

    #: whether the method changes each column on its own from its values alone, drawing nothing
    #: (then :meth:`apply_column` is its whole work, and a column needs no table around it)
    by_column: ClassVar[bool] = False

    def apply_column(self, x: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """A ``by_column`` method's new values of one column from its values as float64 (a copy
        it may write into), and its figures (counts)."""
        raise NotImplementedError

    def code_column(self, old: np.ndarray) -> tuple[np.ndarray | None, int, dict[str, Any]] | None:
        """A ``by_column`` method's whole work on one column kept in its own type (``old``: the
        input's numbers, never written into), in as few passes over it as the method allows:
        the new column as the step writes it (None where no cell changed), how many cells
        changed and its figures. None where the method has no such path for this type: then
        :meth:`apply_column` works on float64 and the step converts back."""
        return None

    def apply_columns(self, columns: Mapping[str, np.ndarray]) -> Outcome:
        """A ``by_column`` method on each of ``columns`` (float64 copies), its counts added up."""
        values: dict[str, np.ndarray] = {}
        figures: list[dict[str, Any]] = []
        for name, x in columns.items():
            values[name], one = self.apply_column(x)
            figures.append(one)
        return Outcome(values, added(figures))


def added(figures: list[dict[str, Any]]) -> dict[str, Any]:
    """Several columns' figures of one step, each count added up."""
    out: dict[str, Any] = {}
    for one in figures:
        for key, count in one.items():
            out[key] = out.get(key, 0) + count
    return out


def _given(values: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if not key.startswith("_")}


def check_params(cls: type[Method], given: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``given`` checked against ``cls.params``, with the defaults filled in: one error naming
    the step, the key and what is allowed."""
    unknown = [key for key in given if key not in cls.params]
    if unknown:
        known = ", ".join(cls.params) or "none"
        raise ParameterError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} for method "
                             f"{cls.key!r}; its keys: {known}")
    out: dict[str, Any] = {}
    for name, param in cls.params.items():
        if name not in given:
            if param.default is REQUIRED:
                raise ParameterError(f"{where}: method {cls.key!r} needs {name} ({param.kind}: {param.meaning})")
            out[name] = param.default
            continue
        value = given[name]
        if not param.check(value):
            allowed = " | ".join(f'"{c}"' for c in param.choices) if param.choices else param.kind
            raise ParameterError(f"{where}: {name} must be {allowed}; got {value!r}")
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


_METHODS: dict[str, type[Method]] = {}


def methods() -> dict[str, type[Method]]:
    """Every method of this package by key, found in its public modules (read once)."""
    if not _METHODS:
        package = importlib.import_module(__name__.rpartition(".")[0])
        found: dict[str, type[Method]] = {}
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, Method) and value.key and value.__module__ == module.__name__:
                    found[value.key] = value
        _METHODS.update(dict(sorted(found.items())))
    return _METHODS


def numbers(frame: pd.DataFrame, name: str, where: str) -> np.ndarray:
    """A numeric column as float64 (a copy: a missing cell's NaN keeps its bits, so a
    user-missing code rides along); a CSV's text is read as numbers, the NA vocabulary as
    missing; any other text is one clear error naming the column and the row."""
    column = frame[name]
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "fiu":
        return np.array(column.to_numpy(), dtype=np.float64)
    from ..exceptions import DataError
    from ..io import column_numbers

    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        return column.to_numpy(dtype=np.float64, copy=True, na_value=np.nan)
    return np.array(column_numbers(column, lambda position, count: DataError(
        f"{where}: column {name!r} is not numeric: row {position + 1} holds {str(column.iloc[position])!r} "
        f"({count} cell(s) that are not numbers); this method changes amounts")), dtype=np.float64)
