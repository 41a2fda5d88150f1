"""The data as the release strategies see it: numeric QIs standardized (missing cells kept
apart by pattern), categorical QIs as level-0 codes of their hierarchies, sensitive columns as
codes in their order with the whole file's distribution."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data import Standardizer, column_numbers
from ..exceptions import DataError, ParameterError
from ..generalization._hierarchy import Hierarchy, factorize_labels, hierarchy_from_rows, read_hierarchy
from ._spec import ReleaseSpec, check_columns


@dataclass
class Sensitive:
    name: str
    codes: np.ndarray          # (n,) int64, in the attribute's order when ordered
    values: list               # the distinct values, code order
    ordered: bool
    reference_counts: np.ndarray


@dataclass
class Prepared:
    frame: pd.DataFrame
    spec: ReleaseSpec
    roles: dict[str, str]
    numeric: list[str]
    categorical: list[str]
    sensitive: list[Sensitive]
    identifiers: list[str]
    X: np.ndarray              # (n, p) numeric QIs, NaN where missing
    Z: np.ndarray              # standardized, NaN where missing
    pattern: np.ndarray        # (n,) missing-pattern id, 0 = nothing missing
    pattern_masks: list[np.ndarray] = field(default_factory=list)  # per id: present numeric columns
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    codes0: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.frame.shape[0])


def prepare(frame: pd.DataFrame, spec: ReleaseSpec) -> Prepared:
    if frame.shape[0] == 0:
        raise DataError("the data has no rows")
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        raise DataError(f"column names must be unique; duplicated: {sorted({c for c in columns if columns.count(c) > 1})}")
    roles = check_columns(spec, columns)
    n = int(frame.shape[0])
    if spec.k > n:
        raise ParameterError(f"k={spec.k} is larger than the number of rows ({n})")
    numeric = [c for c in columns if roles[c] == "numeric"]
    categorical = [c for c in columns if roles[c] == "categorical"]
    X = _numeric(frame, numeric, spec.missing_numeric)
    pattern, masks = _patterns(X)
    Z = _standardize(X, numeric)
    hierarchies = {c: _hierarchy(frame[c], spec.columns[c], c) for c in categorical}
    codes0 = {c: _encode(hierarchies[c], frame[c]) for c in categorical}
    if spec.levels:
        for name, level in spec.levels.items():
            if level > hierarchies[name].max_level:
                raise ParameterError(f"level of {name!r} must be at most {hierarchies[name].max_level} "
                                     f"(its hierarchy's top); got {level}")
    sensitive = [_sensitive(frame[c], spec.columns[c].ordered, spec.l) for c in columns if roles[c] == "sensitive"]
    return Prepared(frame=frame, spec=spec, roles=roles, numeric=numeric, categorical=categorical,
                    sensitive=sensitive, identifiers=[c for c in columns if roles[c] == "identifier"],
                    X=X, Z=Z, pattern=pattern, pattern_masks=masks, hierarchies=hierarchies, codes0=codes0)


def _numeric(frame: pd.DataFrame, names: list[str], missing: str) -> np.ndarray:
    out = np.empty((frame.shape[0], len(names)))
    for j, name in enumerate(names):
        col = frame[name]
        arr = column_numbers(col, lambda pos, count, name=name, col=col: DataError(
            f"numeric column {name!r} must hold numbers; data row {pos + 1} holds {col.iloc[pos]!r} "
            f"({count} non-numeric value(s) in all); give it the role \"categorical\" if it is a code"))
        if np.isinf(arr).any():
            pos = int(np.flatnonzero(np.isinf(arr))[0])
            raise DataError(f"numeric column {name!r} has an infinite value in data row {pos + 1}")
        gone = np.isnan(arr)
        if gone.any() and missing == "error":
            pos = int(np.flatnonzero(gone)[0])
            raise DataError(f"numeric column {name!r} has a missing value in data row {pos + 1} "
                            f"({int(gone.sum())} such row(s)); set [missing] numeric = \"separate\" to publish "
                            "rows by their missing pattern, or remove or impute them")
        if gone.all():
            raise DataError(f"numeric column {name!r} has no value in any row")
        out[:, j] = arr
    return out


def _patterns(X: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Missing-pattern id per row (0 = complete) and, per id, which numeric columns are present."""
    if X.shape[1] == 0:
        return np.zeros(X.shape[0], np.int64), [np.ones(0, bool)]
    present = ~np.isnan(X)
    keys = present.astype(np.int64) @ (1 << np.arange(X.shape[1], dtype=np.int64))
    full = (1 << X.shape[1]) - 1
    distinct = np.unique(keys)
    ordered = [full] + [int(v) for v in distinct[::-1] if v != full]
    ids = {v: i for i, v in enumerate(ordered)}
    pattern = np.array([ids[int(v)] for v in distinct], np.int64)[np.searchsorted(distinct, keys)]
    masks = [np.array([(v >> j) & 1 for j in range(X.shape[1])], bool) for v in ordered]
    return pattern, masks


def _standardize(X: np.ndarray, names: list[str]) -> np.ndarray:
    if X.shape[1] == 0:
        return X.copy()
    Z = np.full_like(X, np.nan)
    for j in range(X.shape[1]):
        ok = ~np.isnan(X[:, j])
        column = X[ok, j][:, None]
        scaler = Standardizer.fit(column, [names[j]])
        Z[ok, j] = scaler.transform(column)[:, 0]
    return Z


def _hierarchy(column: pd.Series, column_spec, name: str) -> Hierarchy:
    path = column_spec.hierarchy
    if column_spec.intervals is not None:
        from ..generalization._hierarchy import interval_hierarchy

        numbers = pd.to_numeric(column, errors="coerce")
        bad = numbers.isna() & column.notna()
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(f"column {name!r} has intervals but data row {pos + 1} holds {column.iloc[pos]!r}, "
                            "not a number")
        if numbers.isna().any():
            pos = int(np.flatnonzero(numbers.isna().to_numpy())[0])
            raise DataError(f"column {name!r} has a missing value in data row {pos + 1}; intervals need a "
                            "number in every row")
        return interval_hierarchy(numbers, list(column_spec.intervals), name)
    if path is not None:
        if not path.exists():
            raise DataError(f"hierarchy file {path} for column {name!r} not found")
        return read_hierarchy(path, name)
    # no hierarchy given: a value stays itself or becomes "*"
    labels = _labels(column)
    distinct = list(dict.fromkeys(labels.tolist()))
    return hierarchy_from_rows(name, [[v, "*"] for v in distinct], f"(flat hierarchy of {name!r})")


def _labels(column: pd.Series) -> np.ndarray:
    """Cell values as hierarchy strings; a missing cell is the value "NA" (a value of its own)."""
    missing = column.isna().to_numpy()
    if not missing.any():
        factor, uniques = factorize_labels(column)
        return np.asarray(uniques, dtype=object)[factor]
    filled = column.astype(object).where(~missing, "NA")
    return np.asarray(filled.astype(str).to_numpy(object))


def _encode(hierarchy: Hierarchy, column: pd.Series) -> np.ndarray:
    missing = column.isna().to_numpy()
    if missing.any():
        known = set(hierarchy.labels[0].tolist())
        spelled = [v for v in ("NA", "", "?", "NaN", "nan", "NULL", "null", "N/A") if v in known]
        if not spelled:
            row = int(np.flatnonzero(missing)[0]) + 1
            raise DataError(f"column {column.name!r} has a missing value in data row {row} and hierarchy "
                            f"{hierarchy.source} has no row for it: add one (e.g. 'NA;...;*'); a missing "
                            "value is a value of its own")
        column = column.astype(object).where(~missing, spelled[0])
    return hierarchy.encode(column)


def _sensitive(column: pd.Series, ordered: bool | None, l: int | None) -> Sensitive:
    name = str(column.name)
    numbers = _as_numbers(column)
    if ordered is None:
        ordered = numbers is not None
    if numbers is not None and ordered:
        values_num, codes = np.unique(numbers, return_inverse=True)
        # the published table holds the original cells: their text in the numbers' order
        text = column.astype(object).to_numpy()
        first = np.zeros(values_num.size, np.int64)
        first[codes[::-1]] = np.arange(len(codes))[::-1]
        values = [text[i] for i in first]
    else:
        factor, uniques = pd.factorize(column, sort=True, use_na_sentinel=False)
        codes, values = factor.astype(np.int64), list(uniques)
    codes = np.asarray(codes, np.int64)
    counts = np.bincount(codes, minlength=len(values))
    if l is not None and l > len(values):
        raise ParameterError(f"l={l} is larger than the number of distinct values of sensitive column "
                             f"{name!r} ({len(values)}); no class can hold l distinct values")
    return Sensitive(name, codes, values, bool(ordered), counts)


def _as_numbers(column: pd.Series) -> np.ndarray | None:
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(column.dtype):
        arr = column.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        parsed = pd.to_numeric(column, errors="coerce")
        if parsed.isna().any():
            return None
        arr = parsed.to_numpy(dtype=np.float64)
    return None if np.isnan(arr).any() else arr
