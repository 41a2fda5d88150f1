"""Generalization hierarchies: ARX-style CSV files, interval hierarchies, dictionary encoding.

A hierarchy file has one row per original value followed by its generalizations up to the top
(usually ``*``), no header, ``;``-separated as ARX writes them (``,`` and TAB are accepted too)::

    39;35-39;30-39;20-39;*

An empty first field is the row of an empty data cell (``;Unknown;*``): a missing value is a
value of its own. Level j of an attribute is column j. Values are dictionary-encoded once per level, so the rest of
the package works on ``int32`` codes and one parent array per level (ARX's ``int[value, level]``).
"""

from __future__ import annotations

import csv
import math
import os
import re
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from .._runtime import lazy as _lazy
from ..exceptions import DataError, ParameterError, name_list
from ..io import read_input_bytes
from ._hierarchy_files import arx_hierarchy_name, hierarchy_file_name, is_hierarchy_file

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = _lazy.module("pandas")  # only building and saving need pandas, not opening a file

_DELIMITERS = (";", ",", "\t")


@dataclass(frozen=True)
class Hierarchy:
    """One attribute's generalization levels, dictionary-encoded.

    ``labels[j]`` holds the distinct values of level j (index = code); ``parents[j]`` maps a
    code of level j to its code at level j + 1 (one array per level below the top).

    Attributes
    ----------
    attribute : str
        The column it generalizes.
    labels : tuple of numpy.ndarray
        The distinct values of each level (level 0 first).
    parents : tuple of numpy.ndarray
        The parent code of each code, per level below the top.
    source : str
        Where it came from (a file, intervals, flat), for messages.
    """

    attribute: str
    labels: tuple[np.ndarray, ...]
    parents: tuple[np.ndarray, ...]
    source: str

    @property
    def depth(self) -> int:
        """Number of levels, the original values included (max level = depth - 1)."""
        return len(self.labels)

    @property
    def max_level(self) -> int:
        return self.depth - 1

    def code_map(self, level: int) -> np.ndarray:
        """Level-0 code -> code at ``level`` (composed parent maps)."""
        self._check_level(level)
        mapping = np.arange(self.labels[0].size, dtype=np.int32)
        for j in range(level):
            mapping = self.parents[j][mapping]
        return mapping

    def encode(self, column: pd.Series) -> np.ndarray:
        """Level-0 codes of a data column; a value missing from the hierarchy is a DataError."""
        factor, uniques = factorize_labels(column)
        index = {label: code for code, label in enumerate(self.labels[0].tolist())}
        unique_codes = pd.Series(uniques).map(index)
        unknown = unique_codes.isna().to_numpy()
        if unknown.any():
            bad = np.flatnonzero(unknown)
            rows = np.flatnonzero(np.isin(factor, bad))
            distinct = [uniques[i] for i in bad]
            shown = ", ".join(repr(v) for v in distinct[:5]) + (", ..." if len(distinct) > 5 else "")
            raise DataError(
                f"column {self.attribute!r}, data row {rows[0] + 1}: value {uniques[factor[rows[0]]]!r} "
                f"is not in hierarchy {self.source}; {len(distinct)} distinct value(s) missing there "
                f"({shown}) in {rows.size} row(s)"
            )
        return unique_codes.to_numpy(np.int32)[factor]

    def generalize(self, codes0: np.ndarray, level: int) -> np.ndarray:
        """The labels at ``level`` of rows given by their level-0 codes."""
        return self.labels[level][self.code_map(level)[codes0]]

    def _check_level(self, level: int) -> None:
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= self.max_level:
            raise ParameterError(
                f"level of {self.attribute!r} must be an integer in [0, {self.max_level}]; got {level!r}"
            )


def value_labels(column: pd.Series) -> np.ndarray:
    """The data values as the strings a hierarchy file holds (integers without a '.0').

    A missing value is a DataError naming the column and the row: no hierarchy has a level-0
    entry for it, and dropping the row silently would change the published table.
    """
    name = column.name
    missing = column.isna().to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0]) + 1
        raise DataError(
            f"column {name!r} has a missing value in data row {row} ({int(missing.sum())} such "
            "row(s) in all); generalization needs a value in every row: fill or remove them first"
        )
    if pd.api.types.is_bool_dtype(column):
        return column.astype(str).to_numpy(object)
    if pd.api.types.is_integer_dtype(column):
        return column.astype(np.int64).astype(str).to_numpy(object)
    if pd.api.types.is_float_dtype(column):
        values = column.to_numpy(np.float64)
        if np.all(np.isfinite(values)) and np.all(values == np.round(values)) and np.all(np.abs(values) < 2**53):
            return values.astype(np.int64).astype(str).astype(object)
        return np.array([repr(float(v)) for v in values], dtype=object)
    return column.astype(str).to_numpy(object)


def factorize_labels(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(code per row, distinct values as hierarchy strings): only the distinct values are
    converted to text, which is what makes encoding a large column cheap."""
    missing = column.isna().to_numpy()
    if missing.any():
        value_labels(column)  # raises the missing-value error naming the row
    factor, uniques = pd.factorize(column, sort=False)
    labels = value_labels(pd.Series(uniques, name=column.name, dtype=column.dtype)).tolist()
    return factor.astype(np.int64), labels


def _sniff(first_line: str) -> str:
    for delimiter in _DELIMITERS:
        if delimiter in first_line:
            return delimiter
    return ";"


def hierarchy_from_rows(attribute: str, rows: Sequence[Sequence[str]], source: str,
                        row_numbers: Sequence[int] | None = None) -> Hierarchy:
    """Validate rows (value, generalization 1, ..., top) and encode them level by level.

    Errors name the source, the row and the value: rows of unequal depth, empty cells, and a
    value that maps to two different parents (the levels would not form a tree).
    """
    if not rows:
        raise DataError(f"hierarchy {source} is empty; expected one row per original value")
    numbers = list(row_numbers) if row_numbers is not None else list(range(1, len(rows) + 1))
    depth = len(rows[0])
    if depth < 2:
        raise DataError(
            f"hierarchy {source}, row {numbers[0]}: {depth} level; each row needs the original "
            "value followed by at least one generalization (e.g. 'Male;*')"
        )
    for number, row in zip(numbers, rows):
        if len(row) != depth:
            raise DataError(
                f"hierarchy {source}, row {number}: {len(row)} levels, expected {depth} as in row "
                f"{numbers[0]}; every value needs the same number of generalization levels"
            )
        for level, cell in enumerate(row):
            # an empty original value is the row of an empty data cell (';Unknown;*')
            if cell == "" and level > 0:
                raise DataError(f"hierarchy {source}, row {number}: level {level} is empty")
    table = np.array([list(r) for r in rows], dtype=object)
    labels: list[np.ndarray] = []
    codes_by_level: list[np.ndarray] = []
    for level in range(depth):
        codes, uniques = pd.factorize(table[:, level], sort=False)
        labels.append(np.asarray(uniques, dtype=object))
        codes_by_level.append(codes.astype(np.int32))
    # every level-0 value once: a repeated value with the same generalizations is harmless
    # (duplicate line), one with other generalizations is caught as two parents below
    parents: list[np.ndarray] = []
    for level in range(depth - 1):
        child, parent = codes_by_level[level], codes_by_level[level + 1]
        mapping = np.full(labels[level].size, -1, dtype=np.int32)
        first_row = np.full(labels[level].size, -1, dtype=np.int64)
        for r in range(child.size):
            c = child[r]
            if mapping[c] == -1:
                mapping[c] = parent[r]
                first_row[c] = r
            elif mapping[c] != parent[r]:
                value = labels[level][c]
                raise DataError(
                    f"hierarchy {source}: value {value!r} at level {level} has two parents, "
                    f"{labels[level + 1][mapping[c]]!r} (row {numbers[first_row[c]]}) and "
                    f"{labels[level + 1][parent[r]]!r} (row {numbers[r]}); a value must "
                    "generalize to one value only"
                )
        parents.append(mapping)
    hierarchy = Hierarchy(attribute, tuple(labels), tuple(parents), source)
    # each value's first row (factorize numbers the values 0.. in order, every one present)
    _, first_rows = np.unique(codes_by_level[0], return_index=True)
    check_labels(hierarchy, [numbers[r] for r in first_rows])
    return hierarchy


def check_labels(hierarchy: Hierarchy, row_numbers: Sequence[int] | None = None) -> None:
    """Refuse a generalized label that is also an original value it does not generalize.

    With ``red;blue`` and ``blue;red`` a published ``blue`` could be a red or a blue row, and
    ``generalize`` would print red rows as "blue": the release would lie about the data. A label
    equal to an original that maps to that very label (``red;red`` beside ``crimson;red``) is
    fine. ``row_numbers[i]`` names the row of level-0 value ``i`` in the source, when known.
    """
    originals = {label: code for code, label in enumerate(hierarchy.labels[0].tolist())}
    for level in range(1, hierarchy.depth):
        mapping = hierarchy.code_map(level)
        labels = hierarchy.labels[level]
        # a plain lookup: a hierarchy's few labels cost pandas' Series.map more to set up than to map
        others = np.array([originals.get(label, -1) for label in labels.tolist()], dtype=np.int64)
        used = np.zeros(labels.size, dtype=bool)
        used[mapping] = True  # a label no value reaches is never published
        reused = np.flatnonzero(used & (others >= 0) & (mapping[np.maximum(others, 0)] != np.arange(labels.size)))
        if reused.size:
            code = int(reused[0])
            label, other = labels[code], int(others[code])
            child = int(np.flatnonzero(mapping == code)[0])
            where = f", row {row_numbers[child]}" if row_numbers is not None else ""
            its_row = f" (row {row_numbers[other]})" if row_numbers is not None else ""
            raise DataError(
                f"hierarchy {hierarchy.source}{where}: level {level} of value "
                f"{hierarchy.labels[0][child]!r} is {label!r}, which is also an original value{its_row} "
                f"that generalizes to {hierarchy.labels[level][mapping[other]]!r}; a generalized "
                "label must not reuse another original value, or published rows would be mislabelled"
            )


def read_hierarchy(path: str | os.PathLike, attribute: str | None = None) -> Hierarchy:
    """Read and validate one ARX-style hierarchy file.

    Parameters
    ----------
    path : str or os.PathLike
        The hierarchy file (one row per value: the value, then its generalizations).
    attribute : str or None, default None
        The column it generalizes (None: named after the file).

    Returns
    -------
    Hierarchy
        The validated hierarchy.
    """
    p = Path(path)
    name = attribute if attribute is not None else p.stem
    source = f"file {str(p)!r}"
    try:
        text = read_input_bytes(p, "hierarchy file").decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"cannot read hierarchy file {str(p)!r}: {exc}") from exc
    lines = text.splitlines()
    numbered = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip() != ""]
    if not numbered:
        raise DataError(f"hierarchy {source} is empty; expected one row per original value")
    delimiter = _sniff(numbered[0][1])
    parsed = list(csv.reader([ln for _, ln in numbered], delimiter=delimiter))
    # ARX sometimes ends rows with a delimiter; a trailing empty cell is not a level
    rows = [row[:-1] if len(row) > 1 and row[-1] == "" else row for row in parsed]
    return hierarchy_from_rows(name, rows, source, [n for n, _ in numbered])


def _candidates(directory: Path, attribute: str) -> list[Path]:
    # not only regular files: a FIFO or folder named like the attribute's file is refused by
    # its kind when read, instead of being skipped as if the file were missing
    files = [f for f in directory.iterdir() if is_hierarchy_file(f)]
    exact = [f for f in files if f.stem == attribute]
    if exact:
        return exact
    arx = [f for f in files if f.stem.endswith(f"hierarchy_{attribute}")]
    if arx:
        return arx
    suffixed = [f for f in files if f.stem.endswith(f"_{attribute}")]
    if suffixed:
        return suffixed
    return _by_normalized_name(attribute, files)


def normalized_name(text: str) -> str:
    """A column's or a file's name as names are compared: case, spaces and punctuation ignored
    (``marital_status``, ``Marital-Status`` and ``marital status`` are one name)."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _by_normalized_name(attribute: str, files: Sequence[Path]) -> list[Path]:
    key = normalized_name(attribute)
    if not key:
        return []
    exact = [f for f in files if normalized_name(f.stem) == key]
    return exact or [f for f in files if normalized_name(f.stem).endswith("hierarchy" + key)]


def propose_hierarchy_files(columns: Sequence[str], files: Sequence[str | os.PathLike]) -> dict[str, Path]:
    """The hierarchy file of each column that has exactly one among ``files`` by name: the file
    named as the column, or ``<anything>hierarchy<column>`` (ARX's
    ``adult_hierarchy_marital-status.csv``), names compared by :func:`normalized_name`.

    Parameters
    ----------
    columns : sequence of str
        The data's column names.
    files : sequence of path-like
        The candidate hierarchy files (``.csv``).

    Returns
    -------
    dict
        Column name -> its file, for the columns with one match (none or several: left out).
    """
    paths = [Path(f) for f in files if is_hierarchy_file(f)]
    out: dict[str, Path] = {}
    for column in columns:
        found = _by_normalized_name(str(column), paths)
        if len(found) == 1:
            out[str(column)] = found[0]
    return out


def find_hierarchy_file(directory: str | os.PathLike, attribute: str) -> Path:
    """The file for ``attribute`` in ``directory``: the CSV file named as the attribute, or ARX's
    ``<dataset>_hierarchy_<attribute>`` (see ``_hierarchy_files``).

    Parameters
    ----------
    directory : str or os.PathLike
        The folder of hierarchy files.
    attribute : str
        The column.

    Returns
    -------
    pathlib.Path
        The hierarchy file.
    """
    d = Path(directory)
    if not d.is_dir():
        raise DataError(f"hierarchy folder {str(d)!r} does not exist or is not a folder")
    found = _candidates(d, attribute)
    if not found:
        names = sorted(f.name for f in d.iterdir() if is_hierarchy_file(f))
        raise DataError(
            f"no hierarchy file for attribute {attribute!r} in {str(d)!r} (looked for "
            f"'{hierarchy_file_name(attribute)}' and '{arx_hierarchy_name(attribute)}'); CSV files there: "
            f"{name_list(names)}"
        )
    if len(found) > 1:
        raise DataError(
            f"several hierarchy files could belong to attribute {attribute!r} in {str(d)!r}: "
            f"{sorted(f.name for f in found)}; rename all but one to '{hierarchy_file_name(attribute)}'"
        )
    return found[0]


def load_hierarchies(directory: str | os.PathLike, attributes: Sequence[str]) -> dict[str, Hierarchy]:
    """One validated hierarchy per attribute, found by name in ``directory``.

    Parameters
    ----------
    directory : str or os.PathLike
        The folder of hierarchy files.
    attributes : sequence of str
        The columns.

    Returns
    -------
    dict of str to Hierarchy
        One hierarchy per attribute.
    """
    return {a: read_hierarchy(find_hierarchy_file(directory, a), a) for a in attributes}


def _number(value) -> str:
    """A width or bound as a user wrote it: ``5``, ``0.5``, ``1e+20``, ``inf`` (never
    ``np.float64(...)`` or ``5.0``)."""
    if isinstance(value, Fraction):
        if value.denominator == 1 and abs(value) < 10**16:
            return str(int(value))
        try:
            value = float(value)
        except OverflowError:  # an integer width beyond float64, given through the API
            return str(value)
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value) if isinstance(value, (int, float)) else str(value)


def _numbers(values) -> str:
    try:
        return "[" + ", ".join(_number(v) for v in values) + "]"
    except TypeError:
        return repr(values)


def check_widths(widths: Sequence[float], name: str) -> list[Fraction]:
    """The interval widths as exact fractions of the decimals written (``0.3`` is three times
    ``0.1``), or a ParameterError: each width a positive, finite, normal float64 number and a
    whole multiple of the one before, checked exactly (``[3, 1e20]`` does not nest)."""
    shown = _numbers(widths)
    if not isinstance(widths, (list, tuple, np.ndarray)) or len(widths) == 0:
        raise ParameterError(f"interval widths for {name!r} must name at least one width; got {shown}")
    exact: list[Fraction] = []
    for w in widths:
        if (isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating))
                or (isinstance(w, (float, np.floating)) and not math.isfinite(w)) or not w > 0):
            raise ParameterError(f"interval widths for {name!r} must be positive numbers; got {shown}")
        if isinstance(w, (int, np.integer)):
            exact.append(Fraction(int(w)))
            continue
        if float(w) < sys.float_info.min:
            raise ParameterError(f"interval width {_number(w)} for {name!r} is subnormal (below "
                                 f"{sys.float_info.min!r}, where float64 loses precision): too small to bin by; "
                                 f"got {shown}")
        exact.append(Fraction(repr(float(w))))  # the shortest decimal that reads back as w
    for (a, b), (ea, eb) in zip(zip(widths, widths[1:]), zip(exact, exact[1:])):
        if eb <= ea or (eb / ea).denominator != 1:
            raise ParameterError(
                f"interval widths for {name!r} must each be a multiple of the one before (so bins "
                f"nest): {_number(b)} is not a multiple of {_number(a)}; got {shown}"
            )
    return exact


def _check_bins(exact: list[Fraction], low, high, integral: bool, name: str, shown: str) -> None:
    """Refuse a width whose bins over the data's range [low, high] cannot be written as float64
    numbers: a bound beyond the largest float64, or (for non-integer bins, computed in float64)
    more bins than float64 can count exactly or bins narrower than its spacing there. The check
    is exact (fractions), so it cannot overflow itself."""
    biggest = Fraction(sys.float_info.max)
    widest = exact[-1]
    origin = math.floor(Fraction(low) / widest) * widest
    span = Fraction(high) - origin
    for w in exact:
        top = origin + (math.floor(span / w) + 1) * w
        if -origin > biggest or top > biggest:
            raise ParameterError(
                f"interval width {_number(w if top > biggest else widest)} for {name!r} is too large for the "
                f"data's range ({_number(low)} to {_number(high)}): its bins reach beyond the largest "
                f"float64 number; got {shown}")
        if not integral and (span / w > 2**53 or w < Fraction(math.ulp(float(max(-origin, top))))):
            raise ParameterError(
                f"interval width {_number(w)} for {name!r} is too small for the data's range ({_number(low)} "
                f"to {_number(high)}): float64 cannot tell its bins apart there; choose a wider one; got {shown}")


def interval_hierarchy(column: pd.Series, widths: Sequence[float], attribute: str | None = None) -> Hierarchy:
    """A hierarchy of nested intervals for a numeric column: level j groups values into bins of
    ``widths[j-1]``, the top level is ``*``.

    Each width must be a multiple of the one before, so every bin lies inside one bin of the next
    level (a value never gets two parents). All bins start at a multiple of the widest width at or
    below the minimum. Integer data get inclusive labels like ``35-39`` (ARX's style), computed
    exactly; other data get half-open ``[35, 40)``. Widths whose bins float64 cannot hold over the
    data's range are refused by name (see :func:`check_widths`).

    Parameters
    ----------
    column : pandas.Series
        The numeric column.
    widths : sequence of float
        The bin width of each level above 0, each a multiple of the one before.
    attribute : str or None, default None
        The column's name (None: the Series' name).

    Returns
    -------
    Hierarchy
        The interval hierarchy.
    """
    name = attribute if attribute is not None else str(column.name)
    source = f"intervals {_numbers(widths)} for column {name!r}"
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        raise DataError(f"interval hierarchy needs a numeric column; column {name!r} has dtype {column.dtype}")
    exact = check_widths(widths, name)
    shown = _numbers(widths)
    labels0 = value_labels(column)
    values = column.to_numpy(np.float64)
    infinite = np.isinf(values)
    if infinite.any():
        at = int(np.flatnonzero(infinite)[0])
        raise DataError(f"column {name!r} has an infinite value ({_number(values[at])}) in data row {at + 1} "
                        f"({int(infinite.sum())} such row(s) in all); intervals need a finite number in every row")
    distinct_labels, first = np.unique(labels0, return_index=True)
    distinct_values = values[first]
    integral = (all(w.denominator == 1 for w in exact)
                and bool(np.all(distinct_values == np.round(distinct_values))))
    rows: list[list[str]] = []
    if integral:
        # Python integers: exact for any width and value (float64 loses the '- 1' of a bin's
        # inclusive end beyond 2**53)
        points = [int(v) for v in column.to_numpy()[first]]
        ints = [int(w) for w in exact]
        _check_bins(exact, min(points), max(points), True, name, shown)
        origin = (min(points) // ints[-1]) * ints[-1]
        for label, value in zip(distinct_labels.tolist(), points):
            row = [label]
            for w in ints:
                lo = origin + ((value - origin) // w) * w
                row.append(f"{lo}-{lo + w - 1}")
            row.append("*")
            rows.append(row)
        return hierarchy_from_rows(name, rows, source)
    ws = [float(w) for w in exact]
    _check_bins(exact, float(distinct_values.min()), float(distinct_values.max()), False, name, shown)
    low = math.floor(float(distinct_values.min()) / ws[-1]) * ws[-1]
    for label, x in zip(distinct_labels.tolist(), distinct_values.tolist()):
        row = [label]
        for width in ws:
            start = low + math.floor((x - low) / width) * width
            row.append(f"[{start:g}, {start + width:g})")
        row.append("*")
        rows.append(row)
    return hierarchy_from_rows(name, rows, source)


_PAIR = re.compile(r"^\s*([^=]+?)\s*=\s*(.*?)\s*$")


def parse_assignments(text: str | Mapping[str, object] | None, what: str) -> dict[str, str]:
    """``"age=2,education=1"`` -> ``{"age": "2", "education": "1"}``; a mapping passes through.

    A part without ``=`` continues the value before it, so interval widths read naturally:
    ``"age=5,10,20,hours-per-week=10,20"`` -> ``{"age": "5,10,20", "hours-per-week": "10,20"}``.

    Parameters
    ----------
    text : str, mapping or None
        The assignments as given.
    what : str
        The option's name, for the error message.

    Returns
    -------
    dict of str to str
        The value of each name (empty for None).
    """
    if text is None:
        return {}
    if isinstance(text, Mapping):
        return {str(k): v for k, v in text.items()}
    out: dict[str, str] = {}
    last: str | None = None
    for part in (p for p in str(text).split(",") if p.strip()):
        m = _PAIR.match(part)
        if m is None:
            if last is None:
                raise ParameterError(
                    f"{what}: expected attribute=value pairs separated by commas; got {text!r}"
                )
            out[last] += "," + part.strip()
            continue
        name, value = m.group(1), m.group(2)
        if name in out:
            raise ParameterError(f"{what}: attribute {name!r} is named twice in {text!r}")
        if value == "":
            raise ParameterError(f"{what}: attribute {name!r} has no value in {text!r}")
        out[name] = value
        last = name
    if not out:
        raise ParameterError(f"{what}: expected attribute=value pairs separated by commas; got {text!r}")
    return out
