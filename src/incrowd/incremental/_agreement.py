"""An increment must mean what its state's rows mean: the same type per column, and where both
come from statistical files, no code labelled otherwise, the same missing-value definitions and
the same measures. The release is written with the state's metadata alone, so an increment that
read otherwise would be published under the base's words (women under "male") without a sign.

What an increment may bring: a code the state has no value label for, with its label (it joins
the state's labels, so every later release labels it), and a user-missing code the state has not
met yet under the same definition. Its user-missing cells carry the index of their code in the
increment's own list (see :mod:`incrowd.io._statfiles`); they are renumbered into the state's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataError
from ..io import StatMeta, code_indices, short_label, tag_codes

_TYPE_WORDS = {"string": "text", "double": "numbers"}
#: the statistical formats a state may hold the labels of (the names of the format registry)
_STATISTICAL = ("spss", "stata", "sas7bdat", "xport")


def reconcile(state_meta: dict[str, Any] | None, state_rows: pd.DataFrame,
              frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any] | None]:
    """``frame`` (the increment, with its own ``attrs["statfile"]`` if read from a statistical
    file) checked against the state's metadata and the columns of ``state_rows`` (those the
    state keeps as they arrived); returns the increment with its
    user-missing cells numbered as the state numbers them, and the state's metadata with what
    the increment adds (new value labels, newly met user-missing codes). Raises
    :class:`~incrowd.exceptions.DataError` naming the column at the first contradiction."""
    theirs = frame.attrs.get("statfile")
    ours_columns = ((state_meta or {}).get("columns") or {})
    their_columns = ((theirs or {}).get("columns") or {}) if isinstance(theirs, dict) else {}
    for name in state_rows.columns:
        _check_type(str(name), ours_columns.get(name), their_columns.get(name) if their_columns else None,
                    state_rows[name], frame[name], (state_meta or {}).get("format"))
    if not isinstance(state_meta, dict) or not their_columns:
        return frame, state_meta
    same_format = state_meta.get("format") == theirs.get("format")
    merged = {name: dict(info) for name, info in ours_columns.items()}
    out = frame.copy()
    for name in state_rows.columns:
        info, other = ours_columns.get(name), their_columns.get(name)
        if info is None or other is None:
            continue
        merged[name]["value_labels"] = _labels(name, info, other)
        if not merged[name]["value_labels"]:
            del merged[name]["value_labels"]
        _check_missing(name, info, other)
        if same_format and info.get("measure") and other.get("measure") \
                and info["measure"] != other["measure"]:
            raise DataError(f"column {name!r} has measure {other['measure']!r} in the increment and "
                            f"{info['measure']!r} in the state; an increment keeps the state's measures")
        codes = _renumbered_codes(name, info, other, out)
        if codes:
            merged[name]["missing_codes"] = codes
    meta = StatMeta({**state_meta, "columns": merged})
    out.attrs["statfile"] = meta  # the increment's cells now read as the state's
    return out, meta


# ---------------------------------------------------------------------------------------------
# types


def _kind(series: pd.Series) -> str | None:
    """"string" or "double" as a statistical file would store the column's values; None when
    it holds no value to tell by."""
    present = series.dropna()
    if present.empty:
        return None
    if pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_datetime64_any_dtype(series.dtype) \
            or pd.api.types.is_timedelta64_dtype(series.dtype):
        return "double"
    return "string" if any(isinstance(v, str) for v in present.tolist()) else "double"


def _check_type(name: str, ours: dict | None, theirs: dict | None, state_column: pd.Series,
                column: pd.Series, state_format: str | None) -> None:
    if ours and ours.get("type") in _TYPE_WORDS:
        expected = ours["type"]
    elif pd.api.types.is_numeric_dtype(state_column.dtype) and not pd.api.types.is_bool_dtype(state_column.dtype):
        expected = "double"
    else:
        return  # a column the state keeps as text (a CSV's pass-through columns) tells no type
    given = _kind(column) or (theirs or {}).get("type")
    if given not in _TYPE_WORDS or given == expected:
        return
    shown = ""
    if given == "string":
        values = column.tolist()
        first = next((i for i, v in enumerate(values) if isinstance(v, str)), None)
        if first is not None:
            shown = f" (data row {first + 1}: {values[first]!r})"
    # a file without a statistical file's types (CSV) holds every code as text
    hint = (f"give it in the base's format, {short_label(state_format)}" if theirs is None and ours
            and state_format in _STATISTICAL else "recode it as the base is coded")
    raise DataError(f"column {name!r} holds {_TYPE_WORDS[given]} in the increment{shown} but "
                    f"{_TYPE_WORDS[expected]} in the state; an increment keeps the state's column types ({hint})")


# ---------------------------------------------------------------------------------------------
# value labels, missing-value definitions, user-missing codes


def _code(code):
    """A code as compared across files: numbers by value (1 = 1.0), text as text."""
    if isinstance(code, (bool, np.bool_)) or not isinstance(code, (int, float, np.integer, np.floating)):
        return str(code)
    return float(code)


def _shown(code) -> str:
    if isinstance(code, float) and code.is_integer():
        return str(int(code))
    return repr(code) if isinstance(code, str) else str(code)


def _labels(name: str, ours: dict, theirs: dict) -> list:
    """The state's value labels of ``name`` and those only the increment has; a code labelled
    otherwise is refused."""
    mine = {_code(code): (code, text) for code, text in ours.get("value_labels") or ()}
    out = list(ours.get("value_labels") or ())
    for code, text in theirs.get("value_labels") or ():
        known = mine.get(_code(code))
        if known is None:
            out.append([code, text])
            mine[_code(code)] = (code, text)
        elif str(known[1]) != str(text):
            raise DataError(f"column {name!r}: code {_shown(code)} is labelled {str(text)!r} in the increment "
                            f"and {str(known[1])!r} in the state; an increment keeps the state's value labels "
                            "(recode or relabel the increment as the base is coded)")
    return out


def _definition(info: dict) -> str:
    missing = info.get("missing") or {}
    if "ranges" in missing:
        parts = [_shown(lo) if lo == hi else f"{_shown(lo)} to {_shown(hi)}" for lo, hi in missing["ranges"]]
        return ", ".join(parts)
    if "codes" in missing:
        return ", ".join(f".{c}" for c in missing["codes"])
    return "none"


def _check_missing(name: str, ours: dict, theirs: dict) -> None:
    def normal(info: dict):
        missing = info.get("missing") or {}
        if "ranges" in missing:
            return ("ranges", sorted((float(lo), float(hi)) for lo, hi in missing["ranges"]))
        return ("codes", sorted(str(c) for c in missing.get("codes") or ()))

    a, b = normal(ours), normal(theirs)
    if a != b and (a[1] or b[1]):
        raise DataError(f"column {name!r} declares user-missing values {_definition(theirs)} in the increment "
                        f"and {_definition(ours)} in the state; an increment keeps the state's missing-value "
                        "definitions")


def _renumbered_codes(name: str, ours: dict, theirs: dict, frame: pd.DataFrame) -> list | None:
    """Renumber the increment's user-missing cells of ``name`` (in ``frame``) into the state's
    list of codes, extended by the codes only the increment holds; returns that list (None when
    the increment holds no user-missing code in ``name``)."""
    their_codes = list(theirs.get("missing_codes") or ())
    if not their_codes or not pd.api.types.is_float_dtype(frame[name].dtype):
        return None
    codes = list(ours.get("missing_codes") or ())
    position = {_code(c): i for i, c in enumerate(codes)}
    for code in their_codes:
        if _code(code) not in position:
            position[_code(code)] = len(codes)
            codes.append(code)
    mapping = np.array([position[_code(c)] for c in their_codes], np.int64)
    values = frame[name].to_numpy(np.float64, copy=True)
    index = code_indices(values)
    tagged = index >= 0
    if tagged.any():
        frame[name] = tag_codes(values, tagged, mapping[np.maximum(index, 0)])
    return codes
