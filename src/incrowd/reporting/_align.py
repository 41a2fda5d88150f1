"""Which original row each release row is, and which quasi-identifiers are numbers on both sides.

A release keeps the original's row order (incrowd never reorders), drops identifiers and may
leave rows out (suppression). The report needs the original row of every release row:

- given (``kept_rows``, as every incrowd result carries it);
- the same number of rows: row i is row i;
- fewer rows: the columns that pass through unchanged (sensitive and other columns) are matched
  in order, each release row to the next original row with the same values there; a release row
  that finds none means the files do not align, and the report refuses them. The match must be
  the only one: when those columns do not tell rows apart (the earliest and the latest matching
  of every release row differ, so some release row could be either of two original rows), the
  report refuses to guess and asks for the kept rows.

Every assumption made is recorded and printed with the report.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, name_list
from ..io import NA_VALUES, code_indices, coded_reason, column_numbers
from ..values import match_counts


@dataclass
class Aligned:
    original: pd.DataFrame        # every original row, identifiers dropped
    release: pd.DataFrame         # the published rows
    kept: np.ndarray              # original position of each release row
    quasi_identifiers: list[str]
    numeric: list[str]            # QIs that hold numbers in the original and in the release
    categorical: list[str]
    sensitive: list[str]
    assumptions: list[str] = field(default_factory=list)
    # (side, column) -> every row of that side's column as float64, parsed once: a file read as
    # text costs a parse per column, which every measure and figure would repeat
    parsed: dict[tuple[str, str], np.ndarray] = field(default_factory=dict, repr=False)
    # sensitive column -> its t-closeness check over the release's classes, made once by the
    # attribute disclosure at the t the verdict checks (``_verdict.t_checked``)
    t_reports: dict[str, Any] = field(default_factory=dict, repr=False)
    # "any" on a cell release whose blanks match any value (sdcMicro's wildcard, as publish
    # verified k): every class-based measure counts a row's matches so
    missing_matches: str = "itself"
    # the release's perturbed columns (its [[perturb]] steps; never quasi-identifiers): numbers
    # on both sides (sdcMicro's numVars) and categories (PRAM)
    perturbed_numeric: list[str] = field(default_factory=list)
    perturbed_categorical: list[str] = field(default_factory=list)

    @functools.cached_property
    def release_classes(self) -> np.ndarray:
        """Each release row's class of equal quasi-identifier values, numbered once for every
        measure and figure that groups the release so."""
        from ..values import class_ids

        return class_ids(self.release[self.quasi_identifiers])

    @functools.cached_property
    def release_matches(self) -> np.ndarray:
        """Each release row's fk: the release rows it matches on the quasi-identifiers (its
        class's size; with ``missing_matches`` "any" a blank matches any value, as publish's
        check of the written file counts it)."""
        return match_counts(self.release, self.quasi_identifiers, missing_matches=self.missing_matches)

    def _column(self, side: str, name: str) -> np.ndarray:
        key = (side, name)
        if key not in self.parsed:
            self.parsed[key] = _as_numbers((self.original if side == "original" else self.release)[name])
        return self.parsed[key]

    @property
    def suppressed(self) -> np.ndarray:
        mask = np.ones(self.original.shape[0], bool)
        mask[self.kept] = False
        return mask

    def numbers(self, which: str, names: Sequence[str] | None = None) -> np.ndarray:
        """The numeric QIs (or the columns ``names``) as float64: ``which`` is "original" or
        "release" (rows of the release), or "everyone" (every original row, suppressed ones
        included)."""
        names = self.numeric if names is None else names
        if which == "original":
            columns = [self._column("original", c)[self.kept] for c in names]
        elif which == "everyone":
            columns = [self._column("original", c) for c in names]
        else:
            columns = [self._column("release", c) for c in names]
        rows = self.original.shape[0] if which == "everyone" else self.release.shape[0]
        return np.column_stack(columns) if columns else np.zeros((rows, 0))

    @functools.cached_property
    def complete_numbers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(original, release, rows kept): the numeric QIs of the rows with no missing value on
        either side, parsed once for every measure and figure that needs them."""
        return self._complete(self.numeric)

    @functools.cached_property
    def complete_perturbed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As :attr:`complete_numbers`, of the perturbed numeric columns."""
        return self._complete(self.perturbed_numeric)

    def _complete(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X, Xm = self.numbers("original", names), self.numbers("release", names)
        ok = ~(np.isnan(X).any(axis=1) | np.isnan(Xm).any(axis=1))
        return X[ok], Xm[ok], ok


def _names(value, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def _as_numbers(column: pd.Series) -> np.ndarray:
    """A column that :func:`_is_numeric` accepted, as float64 (NaN where missing)."""
    return column_numbers(column, lambda pos, count: DataError(
        f"column {column.name!r}: data row {pos + 1} holds {column.iloc[pos]!r}, not a number"))


def _is_numeric(column: pd.Series) -> bool:
    return _parsed_if_numeric(column) is not None


def _parsed_if_numeric(column: pd.Series) -> np.ndarray | None:
    """The column as :func:`_as_numbers` gives it when every present value is a number (and one
    is present, or the column is of a numeric type), else None: the test and the parse in one."""
    if pd.api.types.is_bool_dtype(column.dtype):
        return None
    if pd.api.types.is_numeric_dtype(column.dtype):
        return _as_numbers(column)
    # a text column usually shows itself in its first values: parse those before all of them
    head = column.iloc[:1024].astype(object)
    head = head[~(head.isna() | head.isin(NA_VALUES))]
    if pd.to_numeric(head.iloc[:64], errors="coerce").isna().any():
        return None
    try:
        values = _as_numbers(column)
    except DataError:  # a present value that is not a number
        return None
    # every present value parsed to a number (a text that parses to NaN is refused above)
    return None if np.isnan(values).all() else values


def align(original: pd.DataFrame, release: pd.DataFrame, quasi_identifiers, sensitive=None,
          identifiers=None, *, kept_rows=None, numeric=None, categorical=(), perturbed=()) -> Aligned:
    if not isinstance(original, pd.DataFrame) or not isinstance(release, pd.DataFrame):
        raise DataError("the original and the release must be tables (DataFrames or files)")
    if original.shape[0] == 0:
        raise DataError("the original has no rows")
    qis = _names(quasi_identifiers, "quasi_identifiers")
    sens = _names(sensitive, "sensitive")
    ids = _names(identifiers, "identifiers")
    if not qis:
        raise DataError("name the quasi-identifiers (quasi_identifiers=..., --qi)")
    for role, names in (("quasi-identifier", qis), ("sensitive", sens)):
        for name in names:
            for side, frame in (("original", original), ("release", release)):
                if name not in frame.columns:
                    raise DataError(f"{role} column {name!r} is not in the {side}; it has "
                                    f"{name_list(frame.columns)}")
    for name in ids:
        if name not in original.columns:
            raise DataError(f"identifier column {name!r} is not in the original")
    both = sorted(set(qis) & set(sens))
    if both:
        raise DataError(f"column(s) {both} are named both quasi-identifier and sensitive")
    assumptions: list[str] = []
    orig = original.drop(columns=[c for c in ids if c in original.columns]).reset_index(drop=True)
    rel = release.drop(columns=[c for c in ids if c in release.columns]).reset_index(drop=True)
    if ids:
        assumptions.append(f"identifier column(s) {', '.join(ids)} are left out on both sides")
    if perturbed:  # changed on purpose by the release's perturbation steps: no proof of alignment
        assumptions.append(f"perturbed column(s) {', '.join(perturbed)} are not compared row by row to align the files")
    kept = _kept(orig, rel, [*qis, *perturbed], sens, kept_rows, assumptions)
    forced = _names(numeric, "numeric")
    parsed: dict[tuple[str, str], np.ndarray] = {}

    def is_numeric(side: str, name: str) -> bool:
        if (side, name) in parsed:
            return True
        values = _parsed_if_numeric((orig if side == "original" else rel)[name])
        if values is not None:
            parsed[(side, name)] = values
        return values is not None

    for name in forced:
        if name not in qis:
            raise DataError(f"numeric column {name!r} is not one of the quasi-identifiers {name_list(qis)}")
        for side, frame in (("original", orig), ("release", rel)):
            if not is_numeric(side, name):
                raise DataError(f"quasi-identifier {name!r} is not numeric in the {side} (e.g. "
                                f"{frame[name].dropna().astype(str).head(1).tolist()}), but the numeric "
                                "measures need numbers there")
    # a column of a labelled file that holds codes (value labels, a nominal or ordinal measure)
    # is categorical, as publish's starting spec reads it: its numbers name categories
    coded = {c: why for c in qis if c not in set(categorical) and (why := _coded(original, c))}
    if coded and not forced:
        assumptions.append("measured as categorical, as the original's metadata codes them: "
                           + ", ".join(f"{c} ({why})" for c, why in coded.items()))
    categorical = [*categorical, *coded]
    # a numeric column published as a labelled recode (age in bands written to .sav/.dta) holds
    # codes of its groups in the release: generalized, so categorical
    recoded = {c for c in qis if c not in set(categorical) and _coded(release, c)}
    # a column given a hierarchy is categorical, numbers or not (SPSS codes, Parquet integers)
    nums = forced or [c for c in qis if c not in set(categorical) and c not in recoded
                      and is_numeric("original", c) and is_numeric("release", c)]
    cats = [c for c in qis if c not in nums]
    # a column the caller named categorical (a hierarchy, or every QI but the numeric ones it
    # named: a release spec's roles) is no guess, so it is not listed as an assumption
    said = set(categorical) | (set(qis) - set(forced) if forced else set())
    generalized_numbers = [c for c in cats if c not in said and is_numeric("original", c)]
    if generalized_numbers:
        assumptions.append(f"{generalized_numbers} hold numbers in the original but not in the release "
                           "(generalized): they are measured as categorical")
    numbers, categories = _perturbed(original, release, qis, perturbed, is_numeric)
    return Aligned(orig, rel, kept, qis, nums, cats, sens, assumptions, parsed,
                   perturbed_numeric=numbers, perturbed_categorical=categories)


def _perturbed(original: pd.DataFrame, release: pd.DataFrame, qis: Sequence[str], perturbed: Sequence[str],
               is_numeric) -> tuple[list[str], list[str]]:
    """The perturbed columns that hold numbers on both sides (income) and the others: categories,
    as a PRAM'd code of a labelled file is (its numbers name categories)."""
    for name in perturbed:
        for side, frame in (("original", original), ("release", release)):
            if name not in frame.columns:
                raise DataError(f"perturbed column {name!r} is not in the {side}; it has {name_list(frame.columns)}")
        if name in qis:
            raise DataError(f"column {name!r} is named both quasi-identifier and perturbed; give it one role")
    numbers = [c for c in dict.fromkeys(perturbed)
               if not _coded(original, c) and is_numeric("original", c) and is_numeric("release", c)]
    return numbers, [c for c in dict.fromkeys(perturbed) if c not in numbers]


def _coded(frame: pd.DataFrame, name: str) -> str | None:
    """Why ``name`` holds codes of categories in a labelled file (None for other files)."""
    meta = frame.attrs.get("statfile")
    info = ((meta.get("columns") or {}).get(str(name)) or {}) if isinstance(meta, dict) else {}
    return coded_reason(info)


def _kept(orig: pd.DataFrame, rel: pd.DataFrame, qis: Sequence[str], sens: Sequence[str], kept_rows,
          assumptions: list[str]) -> np.ndarray:
    n, r = orig.shape[0], rel.shape[0]
    # the columns that pass through unchanged: they tell whether release row i is the original
    # row it is taken to be, however that was found
    keys = [c for c in rel.columns if c in orig.columns and c not in qis]
    if kept_rows is not None:
        kept = np.asarray(kept_rows, dtype=np.int64)
        if kept.shape != (r,) or (r and (kept.min() < 0 or kept.max() >= n or (np.diff(kept) <= 0).any())):
            raise DataError(f"kept_rows must give, in increasing order, the original row of each of the {r} "
                            "release rows")
        _check_pass_through(orig, rel, keys, kept, "as the kept rows list them")
        assumptions.append(f"release rows are the original rows listed by the release ({n - r} suppressed)")
        return kept
    if r == n:
        kept = np.arange(n)
        _check_pass_through(orig, rel, keys, kept, "with the same number of rows, row i taken as row i")
        assumptions.append("release row i is original row i (same number of rows, order kept)"
                           + (f"; checked on the columns that pass through ({keys})" if keys else ""))
        return kept
    if r > n:
        raise DataError(f"the release has more rows ({r}) than the original ({n}); they cannot be aligned")
    if not keys:
        raise DataError(f"the release has {r} rows and the original {n}, and no column besides the "
                        "quasi-identifiers to tell which rows were suppressed; give the kept rows "
                        "(kept_rows=) or a release with the same rows")
    o, s = _row_keys(orig[keys], rel[keys])
    earliest = _match_in_order(o, s)
    if isinstance(earliest, int):
        raise DataError(f"release row {earliest + 1} matches no later original row on the columns that pass "
                        f"through ({keys}); the files do not align (the release keeps the original's "
                        "order and leaves those columns unchanged)")
    kept = np.asarray(earliest, dtype=np.int64)
    # the latest matching (the earliest one of both files reversed): where it differs from the
    # earliest, either is a valid reading
    backwards = _match_in_order(o[::-1], s[::-1])
    assert not isinstance(backwards, int)  # the earliest matching exists, so the latest does
    latest = n - 1 - np.asarray(backwards, dtype=np.int64)[::-1]
    ambiguous = np.flatnonzero(latest != kept)
    if ambiguous.size:
        i = int(ambiguous[0])
        raise DataError(f"the release has {r} rows and the original {n}, and the columns that pass "
                        f"through ({keys}) do not tell which rows were suppressed (release row {i + 1} "
                        f"could be original data row {kept[i] + 1} or {latest[i] + 1}); give the kept "
                        "rows: --kept-rows FILE (one original data row number per release row), "
                        "kept_rows= in Python, or write the report with the release (--report)")
    assumptions.append(f"{n - r} original rows are taken as suppressed: each release row was matched, in "
                       f"order, to the next original row with the same {keys}")
    return kept


def _cells(column: pd.Series) -> tuple[np.ndarray, bool]:
    """(the column's cells as comparable values, None where missing; whether they are numbers)."""
    missing = column.isna().to_numpy().copy()
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        floats = column.to_numpy(dtype=np.float64, na_value=np.nan)
        values = floats.astype(object)
        numbers = True
        # a user-missing code (SPSS 9 "Not stated", read as a tagged NaN) is the code it stands for
        found = user_missing_codes(column)
        if found is not None:
            index, codes = found
            for i in np.unique(index[index >= 0]):
                code = codes[int(i)]
                values[index == i] = f".{code}" if isinstance(code, str) else float(code)
                missing[index == i] = False
    else:
        values = column.astype(str).to_numpy(dtype=object)
        numbers = False
    values[missing] = None
    return values, numbers


def column_cells(column: pd.Series) -> np.ndarray:
    """A column's cells as comparable values (None where missing; a labelled file's
    user-missing cell as its code)."""
    return _cells(column)[0]


def file_value_labels(frame: pd.DataFrame, columns: Sequence[str]) -> dict[str, dict]:
    """Per column of a labelled file (SPSS, Stata) as :func:`incrowd.read_table` reads it: its
    codes' value labels (none for other files and unlabelled columns)."""
    meta = frame.attrs.get("statfile") if isinstance(frame, pd.DataFrame) else None
    if not isinstance(meta, dict):
        return {}
    out = {}
    for c in columns:
        pairs = ((meta.get("columns") or {}).get(str(c)) or {}).get("value_labels") or ()
        if pairs:
            out[str(c)] = {code: label for code, label in pairs}
    return out


def user_missing_codes(column: pd.Series) -> tuple[np.ndarray, list] | None:
    """(per cell the index of its user-missing code or -1, the codes) of a float column read
    from a labelled file, whose user-missing cells are NaNs carrying their code
    (:mod:`incrowd.io`); None where it has none."""
    if not pd.api.types.is_float_dtype(column.dtype):
        return None
    index = code_indices(column.to_numpy(dtype=np.float64, na_value=np.nan))
    meta = column.attrs.get("statfile")
    codes = list((((meta.get("columns") or {}) if isinstance(meta, dict) else {}).get(str(column.name))
                  or {}).get("missing_codes") or ())
    index = np.where(index < len(codes), index, -1)
    return (index, codes) if (index >= 0).any() else None


def _as_numbers_if_they_parse(column: pd.Series) -> np.ndarray:
    values, numbers = _cells(column)
    if numbers:
        return values
    parsed = pd.to_numeric(column, errors="coerce") if not pd.api.types.is_bool_dtype(column.dtype) else column
    if parsed.isna().sum() == column.isna().sum():
        return _cells(pd.Series(parsed, dtype=np.float64))[0]
    return np.array([None if v is None else cell_text(v) for v in values], dtype=object)


def _check_pass_through(orig: pd.DataFrame, rel: pd.DataFrame, keys: Sequence[str], kept: np.ndarray,
                        how: str) -> None:
    """Refuse a release whose columns that pass through differ from those of the original rows
    it is aligned with: it was made from another file (or its rows were reordered), and every
    measure would compare unrelated rows."""
    if not keys or not kept.size:
        return
    differs = np.zeros(kept.size, dtype=bool)
    first: dict[str, np.ndarray] = {}
    shown: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in keys:
        before, before_numbers = _cells(orig[name])
        after, after_numbers = _cells(rel[name])
        if before_numbers != after_numbers:
            # numbers on one side, text on the other (a CSV read as text): as numbers where the
            # text parses, else as a reader spells both
            before, after = _as_numbers_if_they_parse(orig[name]), _as_numbers_if_they_parse(rel[name])
        here = before[kept] != after
        if here.any():
            first[name] = here
            differs |= here
            shown.setdefault(name, (before, after))
    if not differs.any():
        return
    i = int(np.flatnonzero(differs)[0])
    name = next(c for c in keys if c in first and first[c][i])

    before, after = shown[name]

    def cell(value) -> str:
        return "a missing value" if value is None or (isinstance(value, float) and np.isnan(value)) else \
            repr(cell_text(value))

    raise DataError(
        f"the files do not align ({how}): release row {i + 1} holds {name!r} = {cell(after[i])} where "
        f"original data row {int(kept[i]) + 1} holds {cell(before[int(kept[i])])}, and "
        f"{int(differs.sum())} of {kept.size} release rows differ from their original rows in the columns that "
        f"pass through unchanged ({', '.join(first)}). A release keeps those columns as they are: this is a "
        "release of another file or of reordered rows; give the original it was made from (or the kept "
        "rows: --kept-rows FILE, kept_rows= in Python), and name a column the release changed on purpose "
        "a quasi-identifier")


def cell_text(value) -> str:
    """A cell as a reader would write it: 3 for 3.0, no numpy type names."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value.item() if isinstance(value, np.generic) else value)


def _row_keys(orig: pd.DataFrame, rel: pd.DataFrame) -> tuple[list[int], list[int]]:
    """One number per row of each side, equal where the rows' values, as text, are equal in every
    column (text, so that a column read as numbers on one side and as text on the other still
    matches). Column by column: a row-wise join of the values costs a Python call per row."""
    from ..values import class_ids

    both = pd.concat([orig.astype(str), rel.astype(str)], ignore_index=True)
    ids = class_ids(both)
    return ids[:orig.shape[0]].tolist(), ids[orig.shape[0]:].tolist()


def _match_in_order(o: list[int], s: list[int]) -> list[int] | int:
    """Each ``s[i]`` matched, in order, to the next ``o[j]`` equal to it (the earliest matching of
    ``s`` as a subsequence of ``o``): the matched positions, or the first ``i`` that finds none.
    Plain lists of ints: one pass over both, n + r comparisons."""
    out = [0] * len(s)
    j, n = 0, len(o)
    for i, value in enumerate(s):
        while j < n and o[j] != value:
            j += 1
        if j == n:
            return i
        out[i] = j
        j += 1
    return out
