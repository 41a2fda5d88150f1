"""The data as the release strategies see it: numeric QIs standardized (missing cells kept
apart by pattern), categorical QIs as level-0 codes of their hierarchies, sensitive columns as
codes in their order with the whole file's distribution."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, cell_text
from ..generalization import Hierarchy, hierarchy_from_rows, match_mode, read_hierarchy
from ..generalization import as_value_labels as _as_value_labels
from ..generalization import encode_cells as _encode
from ..generalization import qi_labels as _qi_labels
from ..io import column_numbers
from ..privacy import PrivacyModel
from ..values import Standardizer, group_means, sensitive_keys
from ._households import household_level_columns
from ._risk_targets import check_target_weights
from ._spec import ReleaseSpec, check_columns


@dataclass
class Sensitive:
    """A sensitive column as codes: its distinct values as :func:`incrowd.values.sensitive_keys`
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
    #: per categorical QI: "code" or "label", how its cells met the hierarchy's level 0
    match: dict[str, str] = field(default_factory=dict)
    #: per categorical QI: its hierarchy with level 0 spelled as the data's cells (codes as
    #: text), what a report reading the input's own cells encodes them with
    data_hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    weight: str | None = None
    #: per categorical QI: the cells the written file shows missing (a user-missing code is a
    #: value: the file shows its code, so it never matches another value)
    missing0: dict[str, np.ndarray] = field(default_factory=dict)
    #: the survey weight of each row (with a weight column)
    weights: np.ndarray | None = None
    #: k-map's and delta-presence's population table as the release spells it at the chosen
    #: node (one row per person), what the written file's check compares the classes with
    population: pd.DataFrame | None = None
    #: the categorical QIs blanked for a whole household at once (publishing._households)
    household_level: list[str] = field(default_factory=list)
    #: the rows of the whole file where ``frame`` is a part of it (a partition, or none at all
    #: where the search runs on a partitioned file's combined classes)
    rows: int | None = None

    @property
    def n(self) -> int:
        return int(self.frame.shape[0]) if self.rows is None else self.rows

    def released_numbers(self, groups: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """(n, p): each numeric QI as the release shows it, its group's mean over the group's
        present values (NaN where the row's value is missing or the row is not published).
        The risk targets measure the released keys with these very numbers."""
        X = self.X[keep]
        out = np.full((self.X.shape[0], X.shape[1]), np.nan)
        if not keep.any():
            return out
        g = np.unique(groups[keep], return_inverse=True)[1].ravel()
        present = ~np.isnan(X)
        n_groups = int(g.max()) + 1
        means = np.full((n_groups, X.shape[1]), np.nan)
        for j in range(X.shape[1]):
            # each column's mean over its present values; the overflow-safe means of
            # microaggregate: values near the float64 limit never give an infinite mean
            rows = present[:, j]
            if rows.any():
                with np.errstate(invalid="ignore", divide="ignore"):  # a group with no value: NaN
                    means[:, j] = group_means(X[rows, j:j + 1], g[rows], n_groups)[:, 0]
        out[keep] = np.where(present, means[g], np.nan)
        return out

    def rows_of(self, rows: np.ndarray, columns: list[str]) -> dict[str, Any]:
        """The prepared values of the rows ``rows`` (positions) without what all rows share (the
        spec, the hierarchies, the whole file's facts), with the frame's ``columns`` alone: what
        a row carries from the split to its grouping (:func:`joined`), so that the grouping does
        not prepare it again and holds no text."""
        return {"frame": self.frame[columns].iloc[rows].reset_index(drop=True), "X": self.X[rows], "Z": self.Z[rows],
                "pattern": self.pattern[rows], "codes0": {c: v[rows] for c, v in self.codes0.items()},
                "missing0": {c: v[rows] for c, v in self.missing0.items()},
                "weights": None if self.weights is None else self.weights[rows],
                "sensitive": [s.codes[rows] for s in self.sensitive]}


def with_whole(prep: Prepared, whole: Whole, frame: pd.DataFrame) -> Prepared:
    """``prep`` (``frame`` prepared with ``whole`` before its scale and its sensitive columns'
    rows per value were known) as :func:`prepare` gives ``frame`` with ``whole``: the scale
    moves the standardized values only, the rows per value the sensitive columns' reference."""
    return replace(
        prep, frame=frame, Z=standardized(prep.X, whole.mean, whole.scale),
        sensitive=[replace(s, reference_counts=whole.sensitive[s.name][2]) for s in prep.sensitive])


def joined(template: Prepared, parts: list[dict[str, Any]]) -> Prepared:
    """The rows of ``parts`` (:meth:`Prepared.rows_of`, one after the other) prepared as
    ``template`` (the same file's columns prepared without rows, with the whole file's facts)."""
    weights = [p["weights"] for p in parts if p["weights"] is not None]
    return replace(
        template, frame=pd.concat([p["frame"] for p in parts], ignore_index=True),
        X=np.concatenate([p["X"] for p in parts]), Z=np.concatenate([p["Z"] for p in parts]),
        pattern=np.concatenate([p["pattern"] for p in parts]),
        codes0={c: np.concatenate([p["codes0"][c] for p in parts]) for c in template.codes0},
        missing0={c: np.concatenate([p["missing0"][c] for p in parts]) for c in template.missing0},
        weights=np.concatenate(weights) if weights else None,
        sensitive=[replace(s, codes=np.concatenate([p["sensitive"][i] for p in parts]))
                   for i, s in enumerate(template.sensitive)], rows=None)


@dataclass(frozen=True)
class Whole:
    """What a part of a file takes from the whole file, so that it is prepared as the whole
    file's rows are: the numeric QIs' mean and scale, the missing patterns in id order (each
    as the bitmask of its present columns), how each categorical QI meets its hierarchy, and
    each sensitive column's values (order, ordered, rows per code, whether one is missing)."""

    rows: int
    mean: np.ndarray
    scale: np.ndarray
    present: tuple[int, ...]  # per numeric QI: the rows with a value
    patterns: tuple[int, ...]
    match: dict[str, str]
    sensitive: dict[str, tuple[list, bool, np.ndarray, bool]]
    #: the household-level columns of the whole file (a part alone may hold a column the same
    #: for every member of its households that another part does not)
    household_level: tuple[str, ...] = ()


def prepare(frame: pd.DataFrame, spec: ReleaseSpec, whole: Whole | None = None) -> Prepared:
    """The data as the strategies see it; ``whole``: ``frame`` is a part of a file, prepared
    with the whole file's standardization, patterns, matches and sensitive values."""
    if frame.shape[0] == 0 and whole is None:
        raise DataError("the data has no rows")
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        raise DataError(f"column names must be unique; duplicated: {sorted({c for c in columns if columns.count(c) > 1})}")
    roles = check_columns(spec, columns)
    n = int(frame.shape[0])
    if whole is None and spec.k > n:
        raise ParameterError(f"k={spec.k} is larger than the number of rows ({n})")
    numeric = [c for c in columns if roles[c] == "numeric"]
    categorical = [c for c in columns if roles[c] == "categorical"]
    X = _numeric(frame, numeric, spec.missing_numeric, whole is None)
    pattern, masks = _patterns(X, None if whole is None else whole.patterns)
    Z = _standardize(X, numeric) if whole is None else standardized(X, whole.mean, whole.scale)
    hierarchies: dict[str, Hierarchy] = {}
    codes0: dict[str, np.ndarray] = {}
    match: dict[str, str] = {}
    data_hierarchies: dict[str, Hierarchy] = {}
    missing0: dict[str, np.ndarray] = {}
    for c in categorical:
        column = frame[c]
        column_spec = spec.columns[c]
        hierarchy = _hierarchy(column, column_spec, c)
        labels, user = _qi_labels(column)
        mode = _match(hierarchy, column, labels, user, column_spec) if whole is None else whole.match[c]
        shown = _as_value_labels(column, labels) if mode == "label" else labels
        hierarchies[c], match[c] = hierarchy, mode
        codes0[c] = _encode(hierarchy, column, shown, user)
        data_hierarchies[c] = _spelled_as_data(hierarchy, codes0[c], labels)
        missing0[c] = pd.isna(labels).astype(bool)
    weight = spec.weight
    weights = None
    if weight is not None:
        weights = _check_weight(frame[weight], weight)
        if spec.risk_targets:  # before the search: the targets' risks need weights of 1 or more
            check_target_weights(frame[weight], weight)
    if spec.levels:
        for name, level in spec.levels.items():
            if level > hierarchies[name].max_level:
                raise ParameterError(f"level of {name!r} must be at most {hierarchies[name].max_level} "
                                     f"(its hierarchy's top); got {level}")
    sensitive = [_sensitive(frame[c], spec.columns[c].ordered, spec.privacy_models) if whole is None
                 else _sensitive_of(frame[c], whole.sensitive[c]) for c in columns if roles[c] == "sensitive"]
    return Prepared(frame=frame, spec=spec, roles=roles, numeric=numeric, categorical=categorical,
                    sensitive=sensitive, identifiers=[c for c in columns if roles[c] == "identifier"],
                    X=X, Z=Z, pattern=pattern, pattern_masks=masks, hierarchies=hierarchies, codes0=codes0,
                    match=match, data_hierarchies=data_hierarchies, weight=weight, missing0=missing0,
                    weights=weights, household_level=household_level_columns(frame, spec, categorical) if whole is None
                    else list(whole.household_level))


def _numeric(frame: pd.DataFrame, names: list[str], missing: str, whole: bool = True) -> np.ndarray:
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
        if gone.all() and whole:  # a part may lack a column's values that others hold
            raise DataError(f"numeric column {name!r} has no value in any row")
        out[:, j] = arr
    return out


def pattern_keys(X: np.ndarray) -> np.ndarray:
    """Each row's missing pattern as the bitmask of its present numeric columns."""
    return (~np.isnan(X)).astype(np.int64) @ (1 << np.arange(X.shape[1], dtype=np.int64))


def pattern_order(distinct, p: int) -> tuple[int, ...]:
    """The pattern ids' order: complete first, then the bitmasks from the highest down."""
    full = (1 << p) - 1
    return (full, *(int(v) for v in sorted(distinct, reverse=True) if v != full))


def _patterns(X: np.ndarray, order: tuple[int, ...] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """Missing-pattern id per row (0 = complete) and, per id, which numeric columns are present;
    ``order``: the whole file's patterns, where ``X`` is a part of it."""
    if X.shape[1] == 0:
        return np.zeros(X.shape[0], np.int64), [np.ones(0, bool)]
    keys = pattern_keys(X)
    distinct = np.unique(keys)
    ordered = list(pattern_order(distinct.tolist(), X.shape[1]) if order is None else order)
    ids = {v: i for i, v in enumerate(ordered)}
    pattern = np.array([ids[int(v)] for v in distinct], np.int64)[np.searchsorted(distinct, keys)]
    masks = [np.array([(v >> j) & 1 for j in range(X.shape[1])], bool) for v in ordered]
    return pattern, masks


def _standardize(X: np.ndarray, names: list[str]) -> np.ndarray:
    if X.shape[1] == 0:
        return X.copy()
    mean, scale = np.zeros(X.shape[1]), np.ones(X.shape[1])
    Z = np.full_like(X, np.nan)
    for j in range(X.shape[1]):
        ok = ~np.isnan(X[:, j])
        column = X[ok, j]
        partials = sum_partials(column)
        std = None
        if partials is not None and column.size:
            mean[j] = exact_mean(partials, column.size)
            std = exact_scale(mean[j], sum_partials(squared_deviations(column, mean[j])), column.size)
        if std is None:  # a constant column, or one near the float64 limits: the scaler's care
            scaler = Standardizer.fit(column[:, None], [names[j]])
            Z[ok, j] = scaler.transform(column[:, None])[:, 0]
            continue
        scale[j] = std
        Z[ok, j] = (column - mean[j]) / scale[j]
    return Z


def sum_partials(values: np.ndarray) -> list[float] | None:
    """Floats whose exact sum is the exact sum of ``values``, so that the exactly rounded sum of a
    file is the same whether it is taken whole or from its parts' partials (None: it overflows).
    The standardization rests on it: a file split into partitions is standardized to the bit as
    the whole file is, and so microaggregated alike."""
    items = values.tolist()
    out: list[float] = []
    try:
        while True:
            rest = math.fsum(items + [-x for x in out])
            if rest == 0.0:
                return out
            out.append(rest)
    except OverflowError:
        return None


def exact_mean(partials: list[float], count: int) -> float:
    return math.fsum(partials) / count


def exact_scale(mean: float, deviations: list[float] | None, count: int) -> float | None:
    """The population standard deviation from the exact sum of the squared deviations, or None
    where the column is constant or its spread too large or small to standardize plainly."""
    if deviations is None:
        return None
    std = math.sqrt(math.fsum(deviations) / count)
    if not (math.isfinite(mean) and 2.0 ** -480 <= std <= 2.0 ** 480):
        return None
    return std


def squared_deviations(column: np.ndarray, mean: float) -> np.ndarray:
    d = column - mean
    d *= d
    return d


def standardized(X: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``X`` standardized by a whole file's mean and scale (NaN stays NaN)."""
    return (X - mean) / scale


def _hierarchy(column: pd.Series, column_spec, name: str) -> Hierarchy:
    path = column_spec.hierarchy
    if column_spec.intervals is not None:
        from ..generalization import interval_hierarchy

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
    if getattr(column_spec, "match", None) == "label":
        labels = _as_value_labels(column, labels)
    distinct = pd.unique(labels).tolist()
    if None in distinct:  # a missing cell: a value of its own, under a label no other value has
        taken = set(distinct)
        spelled = next(v for v in ("NA", *(f"NA ({i})" for i in range(len(taken) + 1))) if v not in taken)
        distinct = [spelled if v is None else v for v in distinct]
    return hierarchy_from_rows(name, [[v, "*"] for v in distinct], f"(flat hierarchy of {name!r})")


def _match(hierarchy: Hierarchy, column: pd.Series, labels: np.ndarray, user: np.ndarray, column_spec) -> str:
    """"code" or "label": how the column meets its hierarchy's level 0. The spec may say;
    else whichever of the codes and the value labels level 0 holds (codes first), and an
    error naming both when it holds neither."""
    requested = getattr(column_spec, "match", None)
    if requested is None and column_spec.hierarchy is None and column_spec.intervals is None:
        return "code"  # a flat column is built from its own cells
    return match_mode(hierarchy, column, labels, user, requested)


def _spelled_as_data(hierarchy: Hierarchy, codes0: np.ndarray, labels: np.ndarray) -> Hierarchy:
    """``hierarchy`` with each level-0 value the data meets spelled as the data's own cells
    (codes as text): "Bachelors" matched by label becomes "9", "7.0" becomes "7"."""

    present = np.array([v is not None for v in labels], dtype=bool)
    if not present.any():
        return hierarchy
    pairs = pd.DataFrame({"code": codes0[present], "cell": labels[present]}).drop_duplicates("code")
    level0 = hierarchy.labels[0].copy()
    level0[pairs["code"].to_numpy()] = pairs["cell"].to_numpy()
    if len(set(level0.tolist())) != level0.size:
        return hierarchy  # two values would read alike: the file's own spelling is the one that holds
    return replace(hierarchy, labels=(level0, *hierarchy.labels[1:]))


def _check_weight(column: pd.Series, name: str) -> np.ndarray:
    """A survey weight is a finite number >= 0 in every row; returns the numbers."""
    numbers = column_numbers(column, lambda pos, count: DataError(
        f"weight column {name!r} must hold numbers; data row {pos + 1} holds {cell_text(column.iloc[pos])} "
        f"({count} non-numeric value(s) in all)"))
    bad = ~np.isfinite(numbers) | (numbers < 0)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise DataError(f"weight column {name!r} must hold a number >= 0 in every row; data row {pos + 1} holds "
                        f"{cell_text(column.iloc[pos])} ({int(bad.sum())} such row(s)); a weight is never missing")
    return numbers


def _sensitive_of(column: pd.Series, whole: tuple[list, bool, np.ndarray, bool]) -> Sensitive:
    """A part's sensitive column as codes of the whole file's values."""
    order, ordered, counts, missing = whole
    keys, _ = sensitive_keys(column)
    position = {v: i for i, v in enumerate(order)}
    factor, uniques = pd.factorize(keys, use_na_sentinel=True)
    lookup = np.array([position[v] for v in uniques] + [len(order)], dtype=np.int64)
    return Sensitive(str(column.name), lookup[factor], list(order), ordered, counts, missing)


def check_distinct(spec: ReleaseSpec, name: str, distinct: int) -> None:
    """Each model refuses, in one line, a sensitive column no class can meet it on."""
    for model in spec.privacy_models:
        model.check_column(name, distinct)


def _sensitive(column: pd.Series, ordered, models: Sequence[PrivacyModel]) -> Sensitive:
    """The column as codes over its values as the release's verifiers count them
    (:func:`incrowd.values.sensitive_keys`): ordered by default when every value that is not
    a user-missing code is a number; ``ordered = true`` on text is refused (text has no order
    of its own), a list gives the order."""
    from ..values import sensitive_codes

    name = str(column.name)
    codes, order, ordered, counts, missing = sensitive_codes(column, ordered)
    for model in models:
        model.check_column(name, len(order))
    return Sensitive(name, codes, order, bool(ordered), counts, missing)
