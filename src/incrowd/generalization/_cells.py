"""A data column's cells as a hierarchy's level-0 values: one missing-value story for every
command that meets a hierarchy (``publish``, ``lattice build``, ``generalize``, ``report``).

- A cell matches the level-0 row of its own spelling; a number matches the row of the same
  number (``7`` = ``7.0``), so codes written either way in a hierarchy file meet.
- A missing cell (Parquet null, NaN, system missing), or a cell of the NA vocabulary
  (:data:`incrowd.io.NA_VALUES`) without a row of its own, takes the hierarchy's row for missing
  values (``NA``, an empty first field, ``?``, ..., in that order), unless two spellings the
  release shows apart would then share a row.
- A user-missing code of an SPSS or Stata file is a value of its own, named by its code (SPSS
  ``8``, Stata ``.a``) or, matched by label, by its value label.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..exceptions import DataError
from ._hierarchy import Hierarchy, factorize_labels

#: how a hierarchy file may spell the row for a missing cell (Parquet null, NaN, system
#: missing), in order of preference; ARX's Adult hierarchies use "?"
MISSING_ROWS = ("NA", "", "?", "NaN", "nan", "NULL", "null", "N/A", "None", "#N/A", ".")


def code_label(code) -> str:
    """A user-missing code as a hierarchy file names it: SPSS 8 as "8", Stata .a as ".a"."""
    if isinstance(code, str):
        return "." + code
    number = float(code)
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)


def qi_labels(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(label per cell as a hierarchy file writes it, None where missing; whether it is a
    user-missing code). Each user-missing code is a value of its own, labelled by its code: the
    written file shows the code, so a reader tells 8 from 9 and both from system missing."""
    from ..values import user_missing_codes

    labels = np.full(column.shape[0], None, dtype=object)
    present = ~column.isna().to_numpy()
    if present.any():
        factor, uniques = factorize_labels(column[present])
        labels[present] = np.asarray(uniques, dtype=object)[factor]
    user = np.zeros(column.shape[0], dtype=bool)
    coded = user_missing_codes(column)
    if coded is not None:
        index, codes = coded
        user = index >= 0
        for j in np.unique(index[user]):
            labels[index == j] = code_label(codes[j]) if j < len(codes) else f"user-missing code {j + 1}"
    return labels, user


def value_label_map(column: pd.Series) -> dict[str, str]:
    """The value labels of a column read from a statistical file, keyed by the code as a
    hierarchy file writes it ("7", a Stata extended missing value ".a"); {} when it has none."""
    meta = column.attrs.get("statfile")
    info = ((meta.get("columns") or {}).get(str(column.name)) or {}) if isinstance(meta, dict) else {}
    out: dict[str, str] = {}
    for code, text in info.get("value_labels") or ():
        try:
            out.setdefault(code_label(code), str(text))
        except (TypeError, ValueError):
            continue  # a code no cell can hold
    return out


def as_value_labels(column: pd.Series, labels: np.ndarray) -> np.ndarray:
    """Each cell's value label (its code where the code has none), None where missing."""
    by_code = value_label_map(column)
    factor, uniques = pd.factorize(labels, use_na_sentinel=True)
    spelled = np.asarray([by_code.get(v, v) for v in uniques] + [None], dtype=object)
    return spelled[factor]


def number_text(label) -> str | None:
    """A label that reads as a finite number, as a hierarchy file writes that number ("7.0"
    and "7" are both "7"); None for any other text."""
    if not isinstance(label, str):
        return None
    try:
        number = float(label)
    except ValueError:
        return None
    return code_label(number) if math.isfinite(number) else None


class Level0:
    """A hierarchy's level 0, found by spelling or, for numbers, by value (7 = 7.0)."""

    def __init__(self, hierarchy: Hierarchy) -> None:
        self.known = set(hierarchy.labels[0].tolist())
        self.numbers: dict[str, str] = {}
        for label in hierarchy.labels[0].tolist():
            number = number_text(label)
            if number is not None:
                self.numbers.setdefault(number, label)

    def find(self, label):
        if label in self.known:
            return label
        number = number_text(label)
        return None if number is None else self.numbers.get(number)


def first_unmatched(level0: Level0, labels: np.ndarray, user: np.ndarray):
    """(row, label) of the first cell that is a value or a user-missing code and is not in
    level 0 (missing cells are met by the hierarchy's row for missing values), or None."""
    from ..io import NA_VALUES

    factor, uniques = pd.factorize(labels, use_na_sentinel=True)
    for j, label in enumerate(uniques.tolist()):
        if label is None or level0.find(label) is not None:
            continue
        rows = np.flatnonzero(factor == j)
        if label in NA_VALUES and not user[rows].any():
            continue
        return int(rows[0]), label
    return None


def match_mode(hierarchy: Hierarchy, column: pd.Series, labels: np.ndarray, user: np.ndarray,
               requested: str | None = None) -> str:
    """"code" or "label": how a column meets its hierarchy's level 0. ``requested`` (the spec's
    ``match``) decides; else whichever of the codes and the value labels level 0 holds (codes
    first), and an error naming both when it holds neither."""
    name = str(column.name)
    by_code = value_label_map(column)
    if requested == "label" and not by_code:
        raise DataError(f"column {name!r} has match = \"label\" but no value labels (only a column read from an "
                        "SPSS or Stata file with value labels has them); remove match or set match = \"code\"")
    if requested is not None or not by_code:
        mode = requested or "code"
    else:
        mode = _found_mode(hierarchy, column, labels, user)
    if mode == "label":
        _check_distinct_labels(column, labels)
    return mode


def _found_mode(hierarchy: Hierarchy, column: pd.Series, labels: np.ndarray, user: np.ndarray) -> str:
    """The reading level 0 holds, when the spec does not say; both readings are taken as one
    only where they generalize every cell alike."""
    name = str(column.name)
    level0 = Level0(hierarchy)
    spelled = as_value_labels(column, labels)
    by_codes = first_unmatched(level0, labels, user)
    by_labels = first_unmatched(level0, spelled, user)
    if by_codes is None and by_labels is not None:
        return "code"
    if by_codes is None:
        differ = _readings_differ(hierarchy, level0, labels, spelled)
        if differ is None:
            return "code"
        raise DataError(
            f"column {name!r} meets hierarchy {hierarchy.source} both by code and by value label, and the two "
            f"readings generalize it differently (code {differ[0]} is the row {differ[1]!r}, its value label "
            f"{differ[2]!r} the row {differ[3]!r}); set match = \"code\" or \"label\" in [columns] to say which "
            "level 0 is written in")
    if by_labels is None:
        return "label"
    raise DataError(
        f"column {name!r} meets hierarchy {hierarchy.source} neither by code nor by value label: data row "
        f"{by_codes[0] + 1} holds code {by_codes[1]} and data row {by_labels[0] + 1} value label {by_labels[1]!r}, "
        "and its level 0 (the first field of each row) has neither; write level 0 in the file's codes or in its "
        "value labels, and set match = \"code\" or \"label\" in [columns] to choose")


def _readings_differ(hierarchy: Hierarchy, level0: Level0, codes: np.ndarray, spelled: np.ndarray):
    """(code, its row, its label, the label's row) of the first cell whose two readings climb
    the hierarchy differently, or None when every cell reads alike either way."""
    index = {label: i for i, label in enumerate(hierarchy.labels[0].tolist())}
    maps = [hierarchy.code_map(level) for level in range(1, hierarchy.depth)]

    def path(row) -> tuple:
        return tuple(hierarchy.labels[j + 1][m[index[row]]] for j, m in enumerate(maps))

    pairs = pd.DataFrame({"code": codes, "label": spelled}).dropna().drop_duplicates()
    for code, label in zip(pairs["code"].tolist(), pairs["label"].tolist()):
        as_code, as_label = level0.find(code), level0.find(label)
        if as_code != as_label and path(as_code) != path(as_label):
            return code, as_code, label, as_label
    return None


def _check_distinct_labels(column: pd.Series, labels: np.ndarray) -> None:
    """Matched by label, two codes the data holds under one value label would be one value to
    the hierarchy and two in the written file, whose k then fails: refused before any work."""
    by_code = value_label_map(column)
    codes: dict[str, list[str]] = {}
    for code in pd.unique(labels).tolist():  # user-missing codes too: each is a value of its own
        if code is not None and code in by_code:
            codes.setdefault(by_code[code], []).append(code)
    for text, shared in codes.items():
        if len(shared) > 1:
            listed = sorted(shared, key=lambda c: (number_text(c) is None, float(c) if number_text(c) else 0.0, c))
            raise DataError(
                f"column {str(column.name)!r}: codes {' and '.join(listed[:2])} share the value label {text!r}, so "
                "matched by label they would be one value to the hierarchy but two in the written file; give each "
                "code a label of its own, or set match = \"code\" and write the hierarchy in codes")


def encode_cells(hierarchy: Hierarchy, column: pd.Series, labels: np.ndarray | None = None,
                 user: np.ndarray | None = None) -> np.ndarray:
    """Level-0 codes of a column. A cell matches the hierarchy row of its own spelling, a
    number the row of the same number (7 = 7.0); a missing cell (or a cell of the NA
    vocabulary) without a row of its own takes the hierarchy's row for missing values, as long
    as no two spellings the release shows apart would share a row (then each needs its own).
    ``labels`` and ``user``: the cells as matched (value labels, when matched by label); without
    them a column with value labels meets level 0 by code or by label, whichever it holds
    (:func:`match_mode`)."""
    from ..io import NA_VALUES

    if labels is None or user is None:
        labels, user = qi_labels(column)
        if match_mode(hierarchy, column, labels, user) == "label":
            labels = as_value_labels(column, labels)
    level0 = Level0(hierarchy)
    known = level0.known
    name = column.name
    depth = hierarchy.depth
    for label in pd.unique(labels[user]).tolist():
        if level0.find(label) is None:
            row = int(np.flatnonzero(user & (labels == label))[0]) + 1
            example = ";".join([str(label)] * (depth - 1) + ["*"])
            raise DataError(f"column {name!r}, data row {row}: user-missing code {label} is not in hierarchy "
                            f"{hierarchy.source}; a user-missing code is a value of its own (the written file "
                            f"shows it): add a row for it (e.g. '{example}')")
    spelled = [v for v in MISSING_ROWS if v in known]
    mapped = {}
    via_missing_row: set = set()
    for label in pd.unique(labels[user]).tolist():
        mapped[label] = level0.find(label)
    for label in pd.unique(labels[~user]).tolist():
        if level0.find(label) is not None and label is not None:
            mapped[label] = level0.find(label)
        elif label is None or label in NA_VALUES:
            if not spelled:
                row = int(np.flatnonzero(np.array([v == label for v in labels]) & ~user)[0]) + 1
                shown = "a missing value" if label is None else f"{label!r}"
                raise DataError(f"column {name!r} has {shown} in data row {row} and hierarchy "
                                f"{hierarchy.source} has no row for it: add one ('NA;...;*', or for an empty "
                                "cell a row with an empty first field, ';...;*'); a missing value is a value "
                                "of its own")
            mapped[label] = spelled[0]
            via_missing_row.add(spelled[0])
    shared: dict[str, list] = {}
    for label, target in mapped.items():
        shared.setdefault(target, []).append(label)
    for target, spellings in shared.items():
        # two spellings of one number (7 and 7.0) are one value; a missing cell and "NA" are two
        if len(spellings) > 1 and target in via_missing_row:
            shown = " and ".join("a missing cell" if v is None else repr(v) for v in spellings)
            raise DataError(f"column {name!r} spells missing values two ways ({shown}), which the release shows "
                            f"apart, but hierarchy {hierarchy.source} has one row ({target!r}) for them: give "
                            "each its own row (an empty cell: a row with an empty first field, ';...;*')")
    factor, uniques = pd.factorize(labels, use_na_sentinel=True)
    spelled_as = np.asarray([mapped.get(v, v) for v in uniques] + [mapped.get(None)], dtype=object)
    return hierarchy.encode(pd.Series(spelled_as[factor], dtype=object, name=name))


def _numbers(values) -> list[float]:
    out = []
    for v in values:
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            number = float(v)
            if math.isfinite(number):
                out.append(number)
    return out


def recode_groups(column: pd.Series, hierarchy: Hierarchy) -> dict | None:
    """How a generalized column of numbers is written back to SPSS and Stata (None for a column
    of text: it stays text). A column of codes and a measurement alike (age into ten-year bands)
    stay numeric, so a user's SPSS or Stata sees one numeric variable with value labels, never a
    string of labels with blanks. In memory an unchanged cell is its code as text (or, matched by
    label, its value label) and a generalized cell its hierarchy label; the file holds numbers:

    - a code keeps its code and its value label;
    - a label named as a value (a value label of the column) is that value's code, a
      user-missing one included (the group "Not stated" above the code 99 labelled so, Stata's
      ``.a``: its letter);
    - every other label of the hierarchy (and ``*``) gets a new code, numbered from one above
      the largest code the column uses (its values, value labels, user-missing codes and the
      numbers its hierarchy lists), in the order of the hierarchy's levels and, within a level,
      of the hierarchy file: the same hierarchy and file give the same codes in every release.

    Returns ``{"groups": [[code, label], ...], "measure": "nominal" | "ordinal"}`` (the measure
    the file gave; ordinal for a measurement, whose groups are ranges in order; nominal where it
    gave none), read by :func:`incrowd.io._statfiles.write`."""
    if not pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        return None
    meta = column.attrs.get("statfile")
    info = ((meta.get("columns") or {}).get(str(column.name)) or {}) if isinstance(meta, dict) else {}
    missing_codes = list(info.get("missing_codes") or ())
    pairs_in = [(c, str(t)) for c, t in info.get("value_labels") or ()]
    listed = (number_text(label) for label in hierarchy.labels[0].tolist())
    used = (_numbers(code for code, _ in pairs_in) + _numbers(missing_codes)
            + _numbers(float(number) for number in listed if number is not None))
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    present = values[np.isfinite(values)]
    if present.size:
        used.append(float(present.max()))
    start = max(int(math.floor(max(used))) + 1, 1) if used else 1
    by_label: dict = {}
    for code, text in sorted((c, t) for c, t in pairs_in if _numbers([c])):
        by_label.setdefault(text, code)
    for code, text in pairs_in:
        if isinstance(code, str) and code in missing_codes:
            by_label.setdefault(text, code)
    # a user-missing code as a hierarchy names it (Stata ".a") is that code
    spelled_missing = {code_label(c): c for c in missing_codes if isinstance(c, str)}
    pairs: list[list] = []
    seen: set = set()
    for level in range(hierarchy.depth):
        for label in hierarchy.labels[level].tolist():
            if label in seen or (level == 0 and number_text(label) is not None):
                continue  # a code as text is written as its number
            seen.add(label)
            code = spelled_missing.get(label) if level == 0 else None
            pairs.append([code if code is not None else by_label.get(str(label)), str(label)])
    if "*" not in seen:
        pairs.append([by_label.get("*"), "*"])  # values with no common ancestor are published as "*"
    for pair in pairs:
        if pair[0] is None:
            pair[0] = start
            start += 1
    measure = info.get("measure") if info.get("measure") in ("nominal", "ordinal") else \
        "ordinal" if info.get("measure") == "scale" else "nominal"
    return {"groups": pairs, "measure": measure}


def attach_recodes(table: pd.DataFrame, recodes: dict) -> None:
    """Record in ``table.attrs["statfile"]["recoded"]`` the recodes (column -> what
    :func:`recode_groups` gave; None entries skipped) that SPSS and Stata writers apply."""
    from ..io import StatMeta

    recoded = {name: got for name, got in recodes.items() if got is not None}
    if not recoded:
        return
    meta = table.attrs.get("statfile")
    base = dict(meta) if isinstance(meta, dict) else {"format": None, "columns": {}, "changed": []}
    table.attrs["statfile"] = StatMeta({**base, "recoded": {**(base.get("recoded") or {}), **recoded}})
