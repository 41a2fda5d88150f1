"""The data as the release strategies see it: numeric QIs standardized (missing cells kept
apart by pattern), categorical QIs as level-0 codes of their hierarchies, sensitive columns as
codes in their order with the whole file's distribution."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._standardize import Standardizer
from ..exceptions import DataError, ParameterError
from ..generalization._hierarchy import Hierarchy, factorize_labels, hierarchy_from_rows, read_hierarchy
from ..io._tables import column_numbers
from ._spec import ReleaseSpec, check_columns


@dataclass
class Sensitive:
    """A sensitive column as codes: its distinct values as :func:`incrowd.metrics.sensitive_keys`
    counts them, in t's order, then (when ``missing``) one code for the missing value, which
    never counts as a distinct value for l."""

    name: str
    codes: np.ndarray          # (n,) int64, in the attribute's order when ordered
    values: list               # the distinct present values, code order (missing not among them)
    ordered: bool
    reference_counts: np.ndarray
    missing: bool = False      # code len(values) is the missing value

    @property
    def n_values(self) -> int:
        return len(self.values) + int(self.missing)


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


#: how a hierarchy file may spell the row for a missing cell (Parquet null, NaN, system
#: missing), in order of preference; ARX's Adult hierarchies use "?"
_MISSING_ROWS = ("NA", "", "?", "NaN", "nan", "NULL", "null", "N/A", "None", "#N/A", ".")


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
    labels, _ = _qi_labels(column)
    distinct = pd.unique(labels).tolist()
    if None in distinct:  # a missing cell: a value of its own, under a label no other value has
        taken = set(distinct)
        spelled = next(v for v in ("NA", *(f"NA ({i})" for i in range(len(taken) + 1))) if v not in taken)
        distinct = [spelled if v is None else v for v in distinct]
    return hierarchy_from_rows(name, [[v, "*"] for v in distinct], f"(flat hierarchy of {name!r})")


def _code_label(code) -> str:
    """A user-missing code as a hierarchy file names it: SPSS 8 as "8", Stata .a as ".a"."""
    if isinstance(code, str):
        return "." + code
    number = float(code)
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)


def _qi_labels(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(label per cell as a hierarchy file writes it, None where missing; whether it is a
    user-missing code). Each user-missing code is a value of its own, labelled by its code: the
    written file shows the code, so a reader tells 8 from 9 and both from system missing."""
    from ..metrics import _user_missing

    labels = np.full(column.shape[0], None, dtype=object)
    present = ~column.isna().to_numpy()
    if present.any():
        factor, uniques = factorize_labels(column[present])
        labels[present] = np.asarray(uniques, dtype=object)[factor]
    user = np.zeros(column.shape[0], dtype=bool)
    coded = _user_missing(column)
    if coded is not None:
        index, codes = coded
        user = index >= 0
        for j in np.unique(index[user]):
            labels[index == j] = _code_label(codes[j]) if j < len(codes) else f"user-missing code {j + 1}"
    return labels, user


def _encode(hierarchy: Hierarchy, column: pd.Series) -> np.ndarray:
    """Level-0 codes of a column. A cell matches the hierarchy row of its own spelling; a
    missing cell (or a cell of the NA vocabulary) without a row of its own takes the
    hierarchy's row for missing values, as long as no two spellings the release shows apart
    would share a row (then each needs its own)."""
    from ..io._na_values import NA_VALUES

    labels, user = _qi_labels(column)
    known = set(hierarchy.labels[0].tolist())
    name = column.name
    for label in pd.unique(labels[user]).tolist():
        if label not in known:
            row = int(np.flatnonzero(user & (labels == label))[0]) + 1
            raise DataError(f"column {name!r}, data row {row}: user-missing code {label} is not in hierarchy "
                            f"{hierarchy.source}; a user-missing code is a value of its own (the written file "
                            f"shows it): add a row for it (e.g. '{label};...;*')")
    spelled = [v for v in _MISSING_ROWS if v in known]
    mapped = {}
    for label in pd.unique(labels[~user]).tolist():
        if label in known:
            mapped[label] = label
        elif label is None or label in NA_VALUES:
            if not spelled:
                row = int(np.flatnonzero(np.array([v == label for v in labels]) & ~user)[0]) + 1
                shown = "a missing value" if label is None else f"{label!r}"
                raise DataError(f"column {name!r} has {shown} in data row {row} and hierarchy "
                                f"{hierarchy.source} has no row for it: add one ('NA;...;*', or for an empty "
                                "cell a row with an empty first field, ';...;*'); a missing value is a value "
                                "of its own")
            mapped[label] = spelled[0]
    shared: dict[str, list] = {}
    for label, target in mapped.items():
        shared.setdefault(target, []).append(label)
    for target, spellings in shared.items():
        if len(spellings) > 1:
            shown = " and ".join("a missing cell" if v is None else repr(v) for v in spellings)
            raise DataError(f"column {name!r} spells missing values two ways ({shown}), which the release shows "
                            f"apart, but hierarchy {hierarchy.source} has one row ({target!r}) for them: give "
                            "each its own row (an empty cell: a row with an empty first field, ';...;*')")
    factor, uniques = pd.factorize(labels, use_na_sentinel=True)
    spelled_as = np.asarray([mapped.get(v, v) for v in uniques] + [mapped.get(None)], dtype=object)
    return hierarchy.encode(pd.Series(spelled_as[factor], dtype=object, name=name))


def _sensitive(column: pd.Series, ordered, l: int | None) -> Sensitive:
    """The column as codes over its values as the release's verifiers count them
    (:func:`incrowd.metrics.sensitive_keys`): ordered by default when every value that is not
    a user-missing code is a number; ``ordered = true`` on text is refused (text has no order
    of its own), a list gives the order."""
    from ..metrics import sensitive_keys, sensitive_order

    name = str(column.name)
    keys, user = sensitive_keys(column)
    present = ~pd.isna(keys)
    if ordered is None:
        plain = keys[present & ~user]
        ordered = bool(plain.size) and all(isinstance(v, float) for v in plain)
    order = sensitive_order(keys, user, ordered if isinstance(ordered, bool) else list(ordered), name, strict=True)
    position = {v: i for i, v in enumerate(order)}
    factor, uniques = pd.factorize(keys, use_na_sentinel=True)
    lookup = np.array([position[v] for v in uniques] + [len(order)], dtype=np.int64)
    codes = lookup[factor]
    missing = bool((~present).any())
    counts = np.bincount(codes, minlength=len(order) + int(missing))
    if l is not None and l > len(order):
        raise ParameterError(f"l={l} is larger than the number of distinct values of sensitive column "
                             f"{name!r} ({len(order)}); no class can hold l distinct values (a missing value "
                             "is not one)")
    return Sensitive(name, codes, order, bool(ordered), counts, missing)
