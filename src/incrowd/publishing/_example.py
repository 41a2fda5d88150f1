"""A starting release specification from a file's columns and types, for the curator to edit.

The guesses are plain and said in comments: a column whose every value is distinct is an
identifier (a column of numbers only when its name says so, e.g. "id"); a column of numbers
with many distinct values is numeric; anything else is categorical (flat: a value or "*",
until a hierarchy file is named). Sensitive columns cannot be guessed: the spec says where to
mark them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..io._csv_text import NA_VALUES
from ._toml import toml_key

#: a column of numbers with at most this many distinct values is proposed as categorical
_FEW_VALUES = 15


def _guess(column: pd.Series) -> tuple[str, str]:
    values = column.dropna()
    if not pd.api.types.is_numeric_dtype(column.dtype):
        values = values[~values.isin(NA_VALUES)]
    distinct = int(values.nunique())
    n = int(values.shape[0])
    numbers = pd.to_numeric(values, errors="coerce")
    numeric = n > 0 and not numbers.isna().any()
    name = str(column.name).lower()
    id_like = name in ("id", "ident", "identifier", "respondent", "record") or name.endswith(("_id", "-id", " id"))
    if n > 1 and distinct == n and (not numeric or id_like):
        return "identifier", f"every value is distinct ({distinct} values)"
    if numeric and distinct > _FEW_VALUES:
        return "numeric", f"numbers, {distinct} distinct values"
    return "categorical", f"{distinct} distinct values" + (" (numbers: a code?)" if numeric else "")


def example_spec(data: pd.DataFrame) -> dict[str, Any]:
    """The spec as a dict (the structure :func:`incrowd.publish` takes)."""
    columns = {str(c): _guess(data[c])[0] for c in data.columns}
    return {
        "privacy": {"k": 5, "max_suppression": "1%", "strategy": "generalize-then-microaggregate",
                    "method": "mdav"},
        "columns": columns,
        "missing": {"numeric": "error"},
    }


def example_toml(data: pd.DataFrame, source: str = "the data") -> str:
    """The spec as commented TOML text, ready to edit and pass to ``incrowd publish --spec``."""
    has_missing = any(_has_missing(data[c]) for c in data.columns)
    lines = [
        f"# A starting release specification for {source} ({data.shape[0]} rows, {data.shape[1]} columns).",
        "# Check every role below: the guesses come from the values' types only.",
        "",
        "[privacy]",
        "k = 5                     # every published class holds at least k rows",
        "# l = 2                   # distinct sensitive values per class (needs a \"sensitive\" column)",
        "# t = 0.3                 # t-closeness: earth mover's distance per class, in (0, 1]",
        "max_suppression = \"1%\"    # rows that may be left out",
        "strategy = \"generalize-then-microaggregate\"   # or \"joint\"",
        "method = \"mdav\"           # microaggregation method for the numeric columns",
        "",
        "[columns]",
        "# roles: identifier (dropped), numeric, categorical (add hierarchy = \"file.csv\"),",
        "#        sensitive (protected by l and t), other (passes through unchanged)",
    ]
    for c in data.columns:
        role, why = _guess(data[c])
        lines.append(f"{toml_key(str(c))} = \"{role}\"".ljust(40) + f"# {why}")
    lines += [
        "",
        "[missing]",
        "numeric = \"error\"         # or \"separate\": publish rows by their missing pattern"
        + ("  (this file has missing values)" if has_missing else ""),
        "",
    ]
    return "\n".join(lines)


def _has_missing(column: pd.Series) -> bool:
    if column.isna().any():
        return True
    return not pd.api.types.is_numeric_dtype(column.dtype) and bool(column.isin(NA_VALUES).any())
