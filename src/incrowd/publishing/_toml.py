"""A release specification as TOML text that :func:`incrowd.publishing.load_spec` reads back to the
same specification (the web page's "spec to copy", and the starting spec ``--example-spec``
prints)."""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from ..exceptions import ParameterError

_SECTION_ORDER = ("privacy", "columns", "missing", "method_params", "levels")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:  # TOML forbids raw control characters
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else _toml_string(name)


#: deeper than any spec needs, far below Python's stack (a value nested deeper, or one that
#: contains itself, would otherwise end in a RecursionError)
_MAX_DEPTH = 8


def toml_value(value: Any, where: str, depth: int = 0) -> str:
    """``value`` as TOML writes it inline (a table as ``{ value = 2, column = "income" }``); ``where`` names it in
    the error of a value TOML cannot hold."""
    if depth > _MAX_DEPTH:
        raise ParameterError(f"{where}: the spec nests too deeply (lists or tables more than {_MAX_DEPTH} "
                             "levels inside one another)")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, where, depth + 1) for v in value if v is not None) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{toml_key(str(k))} = {toml_value(v, where, depth + 1)}"
                                for k, v in value.items() if v is not None) + " }"
    raise ParameterError(f"{where}: {value!r} cannot be written as TOML")


def spec_to_toml(spec: Mapping[str, Any]) -> str:
    """The release specification dict as TOML text that :func:`incrowd.publishing.load_spec` reads
    back to the same specification (keys whose value is None are left out: TOML has no null)."""
    sections = [s for s in _SECTION_ORDER if s in spec] + [s for s in spec if s not in _SECTION_ORDER]
    blocks = []
    for section in sections:
        table = spec[section]
        if table is None:
            continue
        if isinstance(table, (list, tuple)) and all(isinstance(t, Mapping) for t in table):
            # an array of tables (the [[perturb]] steps), each a block of its own, in order
            blocks += ["\n".join([f"[[{toml_key(str(section))}]]"]
                                 + [f"{toml_key(str(key))} = {toml_value(value, f'[[{section}]] {key}')}"
                                    for key, value in step.items() if value is not None]) for step in table]
            continue
        if not isinstance(table, Mapping):
            raise ParameterError(f"the spec: [{section}] must be a table of keys")
        lines = [f"[{toml_key(str(section))}]"]
        lines += [f"{toml_key(str(key))} = {toml_value(value, f'[{section}] {key}')}"
                  for key, value in table.items() if value is not None]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
