"""The release specification: privacy targets, one role per column, how missing values are met.

Given as a TOML file (or TOML text) or as the same structure as a Python dict::

    [privacy]
    k = 5
    l = 2                 # optional: distinct l-diversity of every sensitive attribute
    t = 0.3               # optional: t-closeness (earth mover's distance) of every sensitive attribute
    max_suppression = "1%"
    strategy = "generalize-then-microaggregate"   # or "joint"
    method = "mdav"       # any microaggregation method; its parameters in [method_params]

    [columns]
    respondent = "identifier"
    age = "numeric"
    sex = { role = "categorical", hierarchy = "hierarchies/sex.csv" }
    hours = { role = "categorical", intervals = [5, 10, 20] }   # nested bins, then "*"
    native-country = { role = "categorical" }     # no hierarchy: a value or "*"
    income = "sensitive"
    level = { role = "sensitive", ordered = ["low", "mid", "high"] }   # an ordinal's order for t
    # every other column: "other" (passes through unchanged)

    [missing]
    numeric = "error"     # or "separate"

Every mistake is refused with a message that names the key, the column or the TOML line.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..exceptions import DataError, ParameterError, name_list

ROLES = ("identifier", "numeric", "categorical", "sensitive", "other")
PUBLISH_STRATEGIES = ("generalize-then-microaggregate", "joint")
MISSING_NUMERIC = ("error", "separate")
_SECTIONS = ("privacy", "columns", "missing", "method_params", "levels")
_PRIVACY_KEYS = ("k", "l", "t", "max_suppression", "strategy", "method", "refine", "max_seconds",
                 "random_state")


@dataclass(frozen=True)
class ColumnSpec:
    """One column's role; a categorical column may name its hierarchy file (else it is flat:
    its own value or ``*``); a sensitive column may say it is ordered for t-closeness."""

    name: str
    role: str
    hierarchy: Path | None = None
    ordered: bool | tuple | None = None   # a tuple: the values in their order
    intervals: tuple[float, ...] | None = None


@dataclass(frozen=True)
class ReleaseSpec:
    k: int
    l: int | None = None
    t: float | None = None
    max_suppression: int | float | str = 0
    strategy: str = "generalize-then-microaggregate"
    method: str = "mdav"
    method_params: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, ColumnSpec] = field(default_factory=dict)
    missing_numeric: str = "error"
    levels: dict[str, int] | None = None
    refine: bool = True
    max_seconds: float | None = None
    random_state: int | None = 0
    source: str = field(default="the spec", compare=False)

    def names(self, role: str) -> list[str]:
        return [c.name for c in self.columns.values() if c.role == role]

    @property
    def quasi_identifiers(self) -> list[str]:
        return [c.name for c in self.columns.values() if c.role in ("numeric", "categorical")]

    def to_dict(self) -> dict[str, Any]:
        columns: dict[str, Any] = {}
        for c in self.columns.values():
            if c.hierarchy is None and c.ordered is None and c.intervals is None:
                columns[c.name] = c.role
            else:
                entry: dict[str, Any] = {"role": c.role}
                if c.hierarchy is not None:
                    entry["hierarchy"] = str(c.hierarchy)
                if c.ordered is not None:
                    entry["ordered"] = c.ordered if isinstance(c.ordered, bool) else list(c.ordered)
                if c.intervals is not None:
                    entry["intervals"] = list(c.intervals)
                columns[c.name] = entry
        privacy: dict[str, Any] = {"k": self.k, "max_suppression": self.max_suppression,
                                   "strategy": self.strategy, "method": self.method}
        if self.l is not None:
            privacy["l"] = self.l
        if self.t is not None:
            privacy["t"] = self.t
        if self.strategy == "joint":
            privacy["refine"] = self.refine
        out: dict[str, Any] = {"privacy": privacy, "columns": columns,
                               "missing": {"numeric": self.missing_numeric}}
        if self.method_params:
            out["method_params"] = dict(self.method_params)
        if self.levels:
            out["levels"] = dict(self.levels)
        return out


def load_spec(spec: str | os.PathLike | Mapping[str, Any] | ReleaseSpec,
              base_dir: str | os.PathLike | None = None) -> ReleaseSpec:
    """A :class:`ReleaseSpec` from a TOML file path, TOML text, a dict, or a spec (returned as is).

    Relative hierarchy paths are read from ``base_dir``: by default the TOML file's folder, or the
    working directory for a dict or text.
    """
    if isinstance(spec, ReleaseSpec):
        return spec
    if isinstance(spec, Mapping):
        return _from_dict(spec, Path(base_dir) if base_dir is not None else Path.cwd(), "the spec")
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and _is_file_name(spec)):
        from ..io._atomic import read_input_bytes

        path = Path(spec)
        source = f"spec file {str(path)!r}"
        try:
            text = read_input_bytes(path, "spec file").decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DataError(f"{source} is not UTF-8 text: {exc}") from None
        root = Path(base_dir) if base_dir is not None else path.resolve().parent
        return _from_dict(_parse_toml(text, source), root, source)
    if isinstance(spec, str):
        root = Path(base_dir) if base_dir is not None else Path.cwd()
        return _from_dict(_parse_toml(spec, "the spec"), root, "the spec")
    raise ParameterError(f"spec must be a TOML file, TOML text or a dict; got {type(spec).__name__}")


def _is_file_name(text: str) -> bool:
    """A one-line string names a file unless it reads as TOML (``k = 5``, ``[privacy]``); one
    that exists or ends in .toml always does."""
    if "\n" in text:
        return False
    return text.lower().endswith(".toml") or os.path.exists(text) or not re.search(r"[=\[]", text)


#: deeper than any spec needs (section, column, its table, a list of widths), far below
#: Python's stack
_MAX_DEPTH = 8


def _check_depth(raw: Any, source: str) -> None:
    # a loop, not recursion: the point is to refuse what would exhaust the stack (a dict that
    # contains itself included) before anything walks it recursively
    stack = [(raw, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise ParameterError(f"{source} nests too deeply (tables or lists more than {_MAX_DEPTH} "
                                 "levels inside one another); a release spec is a few flat tables")
        if isinstance(value, Mapping):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend((v, depth + 1) for v in value)


def _parse_toml(text: str, source: str) -> dict[str, Any]:
    import tomllib

    try:
        # a byte order mark is how some editors start UTF-8 text, not part of the TOML
        return tomllib.loads(text.removeprefix("\ufeff"))
    except RecursionError:
        raise DataError(f"{source} nests too deeply (arrays or tables inside one another beyond "
                        "what can be read); a release spec is a few flat tables") from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = re.search(r"line (\d+)", message)
        where = f"line {line.group(1)}: " if line else ""
        if "overwrite" in message and line:
            key = _key_on_line(text, int(line.group(1)))
            if key:
                raise DataError(f"{source} is not valid TOML: {where}{key!r} is given twice (a column "
                                "has one role; a key is set once)") from None
        raise DataError(f"{source} is not valid TOML: {where}{message}") from None


def _key_on_line(text: str, number: int) -> str | None:
    lines = text.splitlines()
    if not 1 <= number <= len(lines):
        return None
    m = re.match(r'\s*("([^"]+)"|\'([^\']+)\'|([A-Za-z0-9_\-.]+))\s*=', lines[number - 1])
    if not m:
        return None
    return m.group(2) or m.group(3) or m.group(4)


def _from_dict(raw: Mapping[str, Any], root: Path, source: str) -> ReleaseSpec:
    if not isinstance(raw, Mapping):
        raise ParameterError(f"{source}: expected a table of sections {list(_SECTIONS)}")
    _check_depth(raw, source)
    unknown = [s for s in raw if s not in _SECTIONS]
    if unknown:
        raise ParameterError(f"{source}: unknown section(s) {name_list(unknown)}; known: {', '.join(_SECTIONS)}")
    privacy = _table(raw, "privacy", source)
    bad = [key for key in privacy if key not in _PRIVACY_KEYS]
    if bad:
        raise ParameterError(f"{source}: unknown key(s) {name_list(bad)} in [privacy]; known: {', '.join(_PRIVACY_KEYS)}")
    if "k" not in privacy:
        raise ParameterError(f"{source}: [privacy] needs k (every published class has at least k rows)")
    k = privacy["k"]
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise ParameterError(f"{source}: k must be an integer >= 2; got {k!r}")
    l = privacy.get("l")
    if l is not None and (isinstance(l, bool) or not isinstance(l, int) or l < 2):
        raise ParameterError(f"{source}: l must be an integer >= 2 (distinct sensitive values per class); got {l!r}")
    t = privacy.get("t")
    if t is not None:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not 0 < t <= 1:
            raise ParameterError(f"{source}: t must be a number in (0, 1] (earth mover's distance); got {t!r}")
        t = float(t)
    strategy = privacy.get("strategy", PUBLISH_STRATEGIES[0])
    if strategy not in PUBLISH_STRATEGIES:
        raise ParameterError(f"{source}: strategy must be one of {', '.join(PUBLISH_STRATEGIES)}; got {strategy!r}")
    method = privacy.get("method", "mdav")
    from .._methods import METHOD_NAMES

    if not isinstance(method, str) or method not in METHOD_NAMES:
        raise ParameterError(f"{source}: unknown method {method!r}; known methods: {', '.join(METHOD_NAMES)}")
    max_suppression = privacy.get("max_suppression", 0)
    if isinstance(max_suppression, bool) or not isinstance(max_suppression, (int, float, str)):
        raise ParameterError(f"{source}: max_suppression must be a count, a fraction or a percentage "
                             f"such as \"1%\"; got {max_suppression!r}")
    refine = privacy.get("refine", True)
    if not isinstance(refine, bool):
        raise ParameterError(f"{source}: refine must be true or false; got {refine!r}")
    max_seconds = privacy.get("max_seconds")
    if max_seconds is not None and (isinstance(max_seconds, bool) or not isinstance(max_seconds, (int, float))
                                    or not max_seconds > 0):
        raise ParameterError(f"{source}: max_seconds must be a positive number; got {max_seconds!r}")
    random_state = privacy.get("random_state", 0)
    if random_state is not None and (isinstance(random_state, bool) or not isinstance(random_state, int)
                                     or not 0 <= random_state <= 2**32 - 1):
        raise ParameterError(f"{source}: random_state must be an integer in [0, {2**32 - 1}]; got {random_state!r}")
    columns = _columns(_table(raw, "columns", source), root, source)
    if not any(c.role in ("numeric", "categorical") for c in columns.values()):
        raise ParameterError(f"{source}: [columns] names no quasi-identifier (role \"numeric\" or \"categorical\")")
    if (l is not None or t is not None) and not any(c.role == "sensitive" for c in columns.values()):
        raise ParameterError(f"{source}: l and t need a column with role \"sensitive\" in [columns]")
    missing = _table(raw, "missing", source)
    bad = [key for key in missing if key != "numeric"]
    if bad:
        raise ParameterError(f"{source}: unknown key(s) {name_list(bad)} in [missing]; known: numeric")
    missing_numeric = missing.get("numeric", "error")
    if missing_numeric not in MISSING_NUMERIC:
        raise ParameterError(f"{source}: missing.numeric must be one of {', '.join(MISSING_NUMERIC)}; "
                             f"got {missing_numeric!r}")
    method_params = dict(_table(raw, "method_params", source))
    levels_raw = raw.get("levels")
    levels = None
    if levels_raw is not None:
        if not isinstance(levels_raw, Mapping):
            raise ParameterError(f"{source}: [levels] maps categorical columns to a level")
        levels = {}
        for name, level in levels_raw.items():
            if name not in columns or columns[name].role != "categorical":
                raise ParameterError(f"{source}: [levels] names {name!r}, which is not a categorical column")
            if isinstance(level, bool) or not isinstance(level, int) or level < 0:
                raise ParameterError(f"{source}: level of {name!r} must be an integer >= 0; got {level!r}")
            levels[name] = level
    return ReleaseSpec(k=k, l=l, t=t, max_suppression=max_suppression, strategy=strategy, method=method,
                       method_params=method_params, columns=columns, missing_numeric=missing_numeric,
                       levels=levels, refine=refine, max_seconds=max_seconds, random_state=random_state,
                       source=source)


def _table(raw: Mapping[str, Any], name: str, source: str) -> Mapping[str, Any]:
    value = raw.get(name, {})
    if not isinstance(value, Mapping):
        raise ParameterError(f"{source}: [{name}] must be a table of keys")
    return value


def _columns(raw: Mapping[str, Any], root: Path, source: str) -> dict[str, ColumnSpec]:
    out: dict[str, ColumnSpec] = {}
    for name, value in raw.items():
        hierarchy = None
        ordered = None
        intervals = None
        role: Any
        if isinstance(value, str):
            role = value
        elif isinstance(value, Mapping):
            extra = [key for key in value if key not in ("role", "hierarchy", "ordered", "intervals")]
            if extra:
                raise ParameterError(f"{source}: column {name!r}: unknown key(s) {name_list(extra)}; known: role, "
                                     "hierarchy, intervals, ordered")
            if "intervals" in value:
                widths = value["intervals"]
                if not isinstance(widths, (list, tuple)) or not widths:
                    raise ParameterError(f"{source}: column {name!r}: intervals must be a list of positive "
                                         f"widths, each a multiple of the one before (e.g. [5, 10, 20]); got {widths!r}")
                from ..generalization._hierarchy import check_widths

                try:
                    check_widths(list(widths), str(name))
                except ParameterError as exc:
                    raise ParameterError(f"{source}: {exc}") from None
                if "hierarchy" in value:
                    raise ParameterError(f"{source}: column {name!r}: give a hierarchy file or intervals, not both")
                intervals = tuple(float(w) for w in widths)
            role = value.get("role")
            if "hierarchy" in value:
                if not isinstance(value["hierarchy"], str):
                    raise ParameterError(f"{source}: column {name!r}: hierarchy must be a file path")
                hierarchy = root / value["hierarchy"]
            if "ordered" in value:
                ordered = value["ordered"]
                if isinstance(ordered, (list, tuple)):
                    if (not ordered or len(set(map(repr, ordered))) != len(ordered)
                            or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in ordered)):
                        raise ParameterError(f"{source}: column {name!r}: ordered must list each value once, "
                                             f"in order (e.g. ordered = [\"low\", \"mid\", \"high\"]); got {ordered!r}")
                    ordered = tuple(ordered)
                elif not isinstance(ordered, bool):
                    raise ParameterError(f"{source}: column {name!r}: ordered must be true, false or the values in "
                                         "order (e.g. ordered = [\"low\", \"mid\", \"high\"])")
        elif isinstance(value, (list, tuple)):
            raise ParameterError(f"{source}: column {name!r} is given {len(value)} roles {name_list(value)}; "
                                 "a column has one role")
        else:
            raise ParameterError(f"{source}: column {name!r}: give a role ({', '.join(ROLES)}) or a table "
                                 "with role = ...")
        if role not in ROLES:
            raise ParameterError(f"{source}: column {name!r}: unknown role {role!r}; roles: {', '.join(ROLES)}")
        if (hierarchy is not None or intervals is not None) and role != "categorical":
            raise ParameterError(f"{source}: column {name!r}: only a categorical column takes a hierarchy "
                                 "or intervals")
        if ordered is not None and role != "sensitive":
            raise ParameterError(f"{source}: column {name!r}: only a sensitive column takes ordered")
        out[str(name)] = ColumnSpec(str(name), role, hierarchy, ordered, intervals)
    return out


def check_columns(spec: ReleaseSpec, columns: list[str]) -> dict[str, str]:
    """Role of every data column ("other" where the spec is silent); an unknown column in the
    spec is a DataError naming it."""
    unknown = [name for name in spec.columns if name not in columns]
    if unknown:
        raise DataError(f"{spec.source} names column(s) {name_list(unknown)} that the data does not have; the data "
                        f"has {name_list(columns)}")
    return {c: (spec.columns[c].role if c in spec.columns else "other") for c in columns}
