"""The release specification: privacy targets, one role per column, how missing values are met.

Given as a TOML file (or TOML text) or as the same structure as a Python dict: the
``[privacy]``, ``[columns]``, ``[missing]`` and ``[report]`` tables, with an example in
docs/guide/publishing.md and every key in docs/guide/spec-reference.md (generated from
``_spec_keys.SPEC_KEYS``); ``incrowd publish DATA --example-spec`` writes a starting one.

Every mistake is refused with a message that names the key, the column or the TOML line.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, cast

from .._runtime import lazy as _lazy
from ..exceptions import DataError, ParameterError, name_list
from ..generalization import check_importance
from ..privacy import MODELS, PrivacyModel, models_from_spec
from ._benchmarks import parse_benchmarks
from ._households import column_household_level, parse_households
from ._models import population_file
from ._perturb_steps import parse_perturb, steps_to_dicts, whole_column_steps
from ._spec_keys import RISK_TARGET_KEYS, choices, keys, report_thresholds
from ._spec_keys import SECTIONS as _SECTIONS

# a model's module loads where a spec asks for it (a release of k alone loads neither)
distinct_l = _lazy.function("incrowd.privacy", "DistinctL")
t_closeness = _lazy.function("incrowd.privacy", "TCloseness")

# the names and choices the parser checks are those of the key table, which the reference page
# (docs/gen_spec.py) and the web's Publish page read too
ROLES = choices("column", "role")
#: how a categorical column with value labels meets its hierarchy's level 0
MATCH = choices("column", "match")
PUBLISH_STRATEGIES = choices("privacy", "strategy")
"""The strategies a specification's ``strategy`` may name: generalize the categorical
quasi-identifiers then microaggregate the numeric ones within each class, or ``joint``."""
MISSING_NUMERIC = choices("missing", "numeric")
_PRIVACY_KEYS = keys("privacy")
_COLUMN_KEYS = keys("column")


@dataclass(frozen=True)
class ColumnSpec:
    """One column's role; a categorical column may name its hierarchy file (else it is flat:
    its own value or ``*``); a sensitive column may say it is ordered for t-closeness.

    Attributes
    ----------
    name : str
        The column.
    role : str
        One of ``identifier``, ``numeric``, ``categorical``, ``sensitive``, ``weight``,
        ``household``, ``other``.
    hierarchy : pathlib.Path or None
        A categorical column's hierarchy file.
    ordered : bool, tuple or None
        A sensitive column's order for t: True (sorted), False (nominal), a tuple of the values
        in their order, or None (by the column's type).
    intervals : tuple of float or None
        A numeric column generalized into nested intervals of these widths.
    match : {"label", "code"} or None
        How a column with value labels meets its hierarchy's level 0 (None: whichever it covers).
    allow_full_suppression : bool or None
        Whether the column may be published as ``*`` in every row (None: as ``[privacy]`` says).
    household_level : bool or None
        A categorical column that describes the household: blanked for all its members at once
        (None: when the file holds it the same for every member of each household).
    """

    name: str
    role: str
    hierarchy: Path | None = None
    ordered: bool | tuple | None = None   # a tuple: the values in their order
    intervals: tuple[float, ...] | None = None
    match: str | None = None   # "label" or "code"; None: whichever the hierarchy's level 0 covers
    allow_full_suppression: bool | None = None   # None: as [privacy] says
    household_level: bool | None = None   # None: when constant within every household of the file


@dataclass(frozen=True)
class ReleaseSpec:
    """A release specification, checked: what :func:`load_spec` returns and :func:`incrowd.publish` follows.

    Attributes
    ----------
    k : int
        Every published class holds at least k rows.
    l : int or None
        Distinct sensitive values per class, in every sensitive column.
    t : float or None
        The largest earth mover's distance of a class from the input's distribution, per
        sensitive column.
    max_suppression : int, float or str
        Rows that may be left out: a count, a fraction or ``"1%"``. With cell suppression it
        bounds rows too: those below k at the chosen node (they keep their row and get the
        blanks) and those removed whole; ``max_suppressed_cells`` bounds the blanks.
    strategy : {"generalize-then-microaggregate", "joint"}
        How numeric and categorical quasi-identifiers are released together.
    method : str
        The microaggregation method for the numeric columns.
    method_params : dict
        The method's own parameters.
    columns : dict of str to ColumnSpec
        One role per column named.
    missing_numeric : {"error", "separate"}
        A missing numeric quasi-identifier is refused, or grouped apart.
    levels : dict of str to int or None
        Fixed generalization levels of categorical columns (None: chosen).
    refine : bool
        Improve the joint strategy's groups by local moves.
    max_seconds : float or None
        A time limit for the joint strategy's refinement.
    random_state : int or None
        The seed of randomized steps.
    allow_full_suppression : bool
        A quasi-identifier may be published as ``*`` in every row (the default, as in ARX's
        search); False forbids it.
    source : str
        Where the spec came from, for messages.
    metric : str
        What the chosen generalization minimizes (:data:`incrowd.generalization.METRICS`).
    metric_weights : dict of str to float or None
        A weight per categorical quasi-identifier in ``loss``, ``entropy`` and ``precision``
        (1 where left out).
    suppression : {"rows", "cells"}
        Remove the rows of classes below k, or blank single categorical cells.
    missing_matches : {"itself", "any"}
        With cell suppression: a missing value matches only itself, or any value.
    importance : dict of str to int or None
        With cell suppression: sdcMicro's importance, 1 to m per categorical column; 1 is the
        most important column, blanked last, m the least important, blanked first.
    max_suppressed_cells : int, float, str or None
        With cell suppression: the most cells that may be blanked, for k and the risk targets
        together (``max_suppression`` bounds rows: those below k at the chosen node, which
        get the blanks, and those removed whole).
    report_thresholds : dict of str to float
        The spec's ``[report]`` table: changed thresholds of the report's verdict.
    risk_targets : dict of str to float
        ``max_individual_risk``, ``max_global_risk``, ``max_expected_reidentifications`` where
        set: the re-identification risk the release may reach, weighted by the weight column.
    models : tuple of PrivacyModel
        The privacy models of ``[privacy]`` beyond k, l and t (:data:`incrowd.privacy.MODELS`),
        and t given as a table (hierarchical distance).
    model_entries : dict
        Their ``[privacy]`` entries as given (what :meth:`to_dict` writes back).
    perturb : tuple of incrowd.perturbation.Step
        The ``[[perturb]]`` steps, applied in order to the release after its keys are protected.
    household_id : {"keep", "renumber", "drop"}
        What the release does with the ``household`` column.
    benchmarks : tuple of str
        The ``[benchmarks]`` estimates (``"income by urbrur"``), which the report computes on the
        original and on the release.
    """

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
    allow_full_suppression: bool = True
    source: str = field(default="the spec", compare=False)
    #: what the generalize-then-microaggregate node minimizes (incrowd.generalization.METRICS)
    metric: str = "loss"
    #: a weight per categorical quasi-identifier in loss, entropy and precision (1 where left out)
    metric_weights: dict[str, float] | None = None
    #: "rows": a row of a class below k is removed; "cells": single categorical cells are
    #: blanked instead (incrowd.generalization.local_suppression)
    suppression: str = "rows"
    #: with cells: a missing value matches only itself, or any value (sdcMicro's wildcard)
    missing_matches: str = "itself"
    importance: dict[str, int] | None = None
    max_suppressed_cells: int | float | str | None = None
    #: the report verdict's thresholds ([report]; _spec_keys.REPORT_THRESHOLDS names them)
    report_thresholds: dict[str, float] = field(default_factory=dict)
    #: [privacy] max_individual_risk, max_global_risk, max_expected_reidentifications where set
    risk_targets: dict[str, float] = field(default_factory=dict)
    #: the privacy models of [privacy] beyond k, l and t (incrowd.privacy.MODELS), in its order
    models: tuple[PrivacyModel, ...] = ()
    #: their [privacy] entries as given, what to_dict writes back
    model_entries: dict[str, Any] = field(default_factory=dict)
    #: the [[perturb]] steps (incrowd.perturbation.Step), in order
    perturb: tuple[Any, ...] = ()
    #: the household column kept, renumbered 1, 2, ... or dropped (publishing._households)
    household_id: str = "keep"
    #: the [benchmarks] estimates the report computes before and after ("income by urbrur")
    benchmarks: tuple[str, ...] = ()

    def names(self, role: str) -> list[str]:
        return [c.name for c in self.columns.values() if c.role == role]

    @cached_property  # asked at every node a search evaluates
    def merging_models(self) -> tuple[PrivacyModel, ...]:
        """``l`` and ``t`` as models, for every column with the ``sensitive`` role: publish meets
        them by merging groups (each ``merges``), in this order, and its search reads them from
        its compiled per-class counts."""
        if not self.names("sensitive"):
            return ()
        return ((distinct_l(self.l),) if self.l is not None else ()) + (
            (t_closeness(self.t),) if self.t is not None else ())

    def for_increment(self) -> ReleaseSpec:
        """The spec an increment's own rows are checked with (their mistakes named by their own
        row numbers): k = 1 and no merging model, whose bounds hold for the releases of all
        rows, not for an increment alone.

        Returns
        -------
        ReleaseSpec
        """
        return dc_replace(self, k=1, l=None, t=None)

    def promised_numbers(self) -> dict[str, Any]:
        """``k``, ``l`` and ``t`` as the release's summary states them (None where not asked for):
        the summary's fields, which a report reads back as models."""
        return {"k": self.k, "l": self.l, "t": self.t}

    @cached_property
    def privacy_models(self) -> tuple[PrivacyModel, ...]:
        """Every privacy model the spec asks for beyond k: :attr:`merging_models`, then
        :attr:`models`; what publish meets, the written file is checked for and the report
        holds the release to."""
        return self.merging_models + tuple(self.models)

    @property
    def weight(self) -> str | None:
        """The survey weight column (role ``"weight"``), or None."""
        names = self.names("weight")
        return names[0] if names else None

    @property
    def household(self) -> str | None:
        """The household-id column (role ``"household"``), or None."""
        names = self.names("household")
        return names[0] if names else None

    @property
    def quasi_identifiers(self) -> list[str]:
        return [c.name for c in self.columns.values() if c.role in ("numeric", "categorical")]

    def to_dict(self) -> dict[str, Any]:
        columns: dict[str, Any] = {}
        for c in self.columns.values():
            if (c.hierarchy is None and c.ordered is None and c.intervals is None and c.match is None
                    and c.allow_full_suppression is None and c.household_level is None):
                columns[c.name] = c.role
            else:
                entry: dict[str, Any] = {"role": c.role}
                if c.hierarchy is not None:
                    entry["hierarchy"] = str(c.hierarchy)
                if c.ordered is not None:
                    entry["ordered"] = c.ordered if isinstance(c.ordered, bool) else list(c.ordered)
                if c.intervals is not None:
                    entry["intervals"] = list(c.intervals)
                if c.match is not None:
                    entry["match"] = c.match
                if c.allow_full_suppression is not None:
                    entry["allow_full_suppression"] = c.allow_full_suppression
                if c.household_level is not None:
                    entry["household_level"] = c.household_level
                columns[c.name] = entry
        privacy: dict[str, Any] = {"k": self.k, "max_suppression": self.max_suppression,
                                   "strategy": self.strategy, "method": self.method}
        if self.l is not None:
            privacy["l"] = self.l
        if self.t is not None:
            privacy["t"] = self.t
        if self.strategy == "joint":
            privacy["refine"] = self.refine
        if not self.allow_full_suppression:
            privacy["allow_full_suppression"] = False
        if self.strategy != "joint":
            privacy["metric"] = self.metric
            if self.metric_weights:
                privacy["metric_weights"] = dict(self.metric_weights)
        if self.suppression != "rows":
            privacy.update(suppression=self.suppression, missing_matches=self.missing_matches)
            if self.importance:
                privacy["importance"] = dict(self.importance)
            if self.max_suppressed_cells is not None:
                privacy["max_suppressed_cells"] = self.max_suppressed_cells
        privacy.update(self.risk_targets)
        if self.household_id != "keep":
            privacy["household_id"] = self.household_id
        privacy.update(self.model_entries)
        out: dict[str, Any] = {"privacy": privacy, "columns": columns,
                               "missing": {"numeric": self.missing_numeric}}
        if self.method_params:
            out["method_params"] = dict(self.method_params)
        if self.levels:
            out["levels"] = dict(self.levels)
        if self.report_thresholds:
            out["report"] = dict(self.report_thresholds)
        if self.perturb:
            out["perturb"] = steps_to_dicts(self.perturb)
        if self.benchmarks:
            out["benchmarks"] = {"estimates": list(self.benchmarks)}
        return out


def load_spec(spec: str | os.PathLike | Mapping[str, Any] | ReleaseSpec,
              base_dir: str | os.PathLike | None = None) -> ReleaseSpec:
    """A :class:`ReleaseSpec` from a TOML file path, TOML text, a dict, or a spec (returned as is).

    Relative hierarchy paths are read from ``base_dir``: by default the TOML file's folder, or the
    working directory for a dict or text.

    Parameters
    ----------
    spec : str, os.PathLike, mapping or ReleaseSpec
        A TOML file's path, TOML text, a dict of the same structure, or a spec.
    base_dir : str, os.PathLike or None, default None
        Where relative hierarchy paths are read from.

    Returns
    -------
    ReleaseSpec
        The checked specification.
    """
    if isinstance(spec, ReleaseSpec):
        return spec
    if isinstance(spec, Mapping):
        return _from_dict(spec, Path(base_dir) if base_dir is not None else Path.cwd(), "the spec")
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and _is_file_name(spec)):
        from ..io import read_input_bytes

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
    bad = [key for key in privacy if key not in _PRIVACY_KEYS and key not in MODELS]  # a registered model too
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
    t_model = None
    if isinstance(t, Mapping):  # t = { value = 0.2, hierarchy = "FILE", column = "..." }: a model of its own
        t_model, t = _t_model(t, root, source), None
    if t is not None:
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or not 0 < t <= 1:
            raise ParameterError(f"{source}: t must be a number in (0, 1] (earth mover's distance); got {t!r}")
        t = float(t)
    strategy = privacy.get("strategy", PUBLISH_STRATEGIES[0])
    if strategy not in PUBLISH_STRATEGIES:
        raise ParameterError(f"{source}: strategy must be one of {', '.join(PUBLISH_STRATEGIES)}; got {strategy!r}")
    method = privacy.get("method", "mdav")
    from .._runtime import METHOD_NAMES

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
    # a differentially private release draws a fresh seed unless one is given: a known seed (0)
    # tells which rows were sampled
    random_state = privacy.get("random_state", None if "differential_privacy" in privacy else 0)
    if random_state is not None and (isinstance(random_state, bool) or not isinstance(random_state, int)
                                     or not 0 <= random_state <= 2**32 - 1):
        raise ParameterError(f"{source}: random_state must be an integer in [0, {2**32 - 1}]; got {random_state!r}")
    allow_full = privacy.get("allow_full_suppression", True)
    if not isinstance(allow_full, bool):
        raise ParameterError(f"{source}: allow_full_suppression must be true or false; got {allow_full!r}")
    from ..generalization import METRICS

    metric = privacy.get("metric", "loss")
    if metric not in METRICS:
        raise ParameterError(f"{source}: metric must be one of {', '.join(METRICS)}; got {metric!r}")
    columns = _columns(_table(raw, "columns", source), root, source)
    metric_weights = _metric_weights(privacy.get("metric_weights"), columns, source)
    weights = [c.name for c in columns.values() if c.role == "weight"]
    if len(weights) > 1:
        raise ParameterError(f"{source}: [columns] gives the role \"weight\" to {name_list(weights)}; a release "
                             "has one survey weight")
    if not any(c.role in ("numeric", "categorical") for c in columns.values()):
        raise ParameterError(f"{source}: [columns] names no quasi-identifier (role \"numeric\" or \"categorical\")")
    if (l is not None or t is not None or t_model is not None) and not any(c.role == "sensitive"
                                                                            for c in columns.values()):
        raise ParameterError(f"{source}: l and t need a column with role \"sensitive\" in [columns]")
    missing = _table(raw, "missing", source)
    bad = [key for key in missing if key not in keys("missing")]
    if bad:
        raise ParameterError(f"{source}: unknown key(s) {name_list(bad)} in [missing]; known: "
                             f"{', '.join(keys('missing'))}")
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
    report_table = dict(_table(raw, "report", source))
    report_thresholds(report_table, f"{source}: [report]")  # one clear error for a bad name or value
    cells = _cell_suppression(privacy, columns, source, l=l, t=t, strategy=strategy)
    from ._risk_targets import parse_risk_targets

    risk_targets = parse_risk_targets(privacy, columns, source, strategy=strategy,
                                      suppression=cells.get("suppression", "rows"))
    household_id = parse_households(privacy, columns, source, strategy=strategy)
    entries, models = _models(privacy, columns, source, strategy=strategy,
                              suppression=cells.get("suppression", "rows"), t_model=t_model, root=root)
    perturb = parse_perturb(raw.get("perturb"), columns, root, source)
    benchmarks = parse_benchmarks(_table(raw, "benchmarks", source), source)
    if levels and "differential_privacy" in entries:
        raise ParameterError(f"{source}: differential_privacy searches the whole lattice; it does not take [levels]")
    return ReleaseSpec(k=k, l=l, t=t, max_suppression=max_suppression, strategy=strategy, method=method,
                       models=models, model_entries=entries,
                       report_thresholds={key: float(v) for key, v in report_table.items()},
                       method_params=method_params, columns=columns, missing_numeric=missing_numeric,
                       levels=levels, refine=refine, max_seconds=max_seconds, random_state=random_state,
                       allow_full_suppression=allow_full, source=source, metric=metric,
                       metric_weights=metric_weights, risk_targets=risk_targets, perturb=perturb,
                       household_id=household_id, benchmarks=benchmarks, **cells)


#: the models [privacy] gives keys of their own to (k, l, t) or that publish cannot meet yet
_OWN_KEYS = ("k", "l", "t")


def _t_model(value: Mapping[str, Any], root: Path, source: str) -> PrivacyModel:
    """``t = { value = 0.2, hierarchy = "FILE", column = "..." }``: t-closeness with the
    hierarchical distance over the sensitive values' hierarchy file (ARX's format, relative to
    the spec's folder), or of one named column."""
    from ..generalization import read_hierarchy
    from ..privacy import TCloseness

    entries = dict(value)
    path = entries.pop("hierarchy", None)
    try:
        model = TCloseness.from_spec(entries)
    except ParameterError as exc:
        raise ParameterError(f"{source}: {exc}; as a table t takes value, hierarchy and column") from None
    if path is None:
        return model
    if not isinstance(path, str) or not path:
        raise ParameterError(f"{source}: t's hierarchy must be a file name; got {path!r}")
    try:
        h = read_hierarchy(root / path, model.column)
    except OSError as exc:
        raise ParameterError(f"{source}: t's hierarchy {path!r} cannot be read ({exc.strerror or exc})") from None
    rows = tuple(tuple(str(h.labels[level][h.code_map(level)[i]]) for level in range(h.depth))
                 for i in range(int(h.labels[0].size)))
    return dc_replace(model, hierarchy=rows)


def _models(privacy: Mapping[str, Any], columns: Mapping[str, ColumnSpec], source: str, *, strategy: str,
            suppression: str, t_model: PrivacyModel | None = None,
            root: Path = Path(".")) -> tuple[dict[str, Any], tuple[PrivacyModel, ...]]:
    """The models of [privacy] beyond k, l and t (and t given as a table), checked against the
    columns: a model's sensitive column (its ``column =``, else every column with the role
    "sensitive") must have the role "sensitive", a model of the population needs its weights."""
    entries = {key: privacy[key] for key in MODELS if key in privacy and key not in _OWN_KEYS}
    if t_model is not None:  # written back with its hierarchy's full path, as a column's is
        given = dict(privacy["t"])
        if "hierarchy" in given:
            given["hierarchy"] = str(root / given["hierarchy"])
        entries = {"t": given, **entries}
    if not entries:
        return {}, ()
    try:
        others = {key: value for key, value in entries.items() if key not in _OWN_KEYS}
        models = tuple(m for m in models_from_spec({**others, "k": privacy.get("k")}) if m.key not in _OWN_KEYS)
    except ParameterError as exc:
        raise ParameterError(f"{source}: {exc}") from None
    if t_model is not None:
        models = (t_model, *models)
    # a population table is read from the spec's folder, as a hierarchy file is
    models = tuple(dc_replace(cast(Any, m), population=str(root / path)) if (path := population_file(m)) else m
                   for m in models)
    entries = {key: ({**value, "population": str(root / value["population"])}
                     if isinstance(value, Mapping) and isinstance(value.get("population"), str) else value)
               for key, value in entries.items()}
    named = ", ".join(entries)
    if strategy != "generalize-then-microaggregate":
        raise ParameterError(f"{source}: {named} is met by the generalize-then-microaggregate search; strategy "
                             f"{strategy!r} does not take it")
    if suppression == "cells":
        raise ParameterError(f"{source}: {named} is met by suppressing whole rows; suppression = \"cells\" does not "
                             "take it (use suppression = \"rows\")")
    if "differential_privacy" in entries:
        _check_differential_privacy(privacy, entries, columns, source)
    sensitive = [c.name for c in columns.values() if c.role == "sensitive"]
    has_weight = any(c.role == "weight" for c in columns.values())
    for model in models:
        if model.needs_sensitive and model.column is None and not sensitive:
            raise ParameterError(f"{source}: {model.key} needs a column with role \"sensitive\" in [columns] (or "
                                 f"one named by column = in its entry)")
        if model.column is not None and model.column not in sensitive:
            raise ParameterError(f"{source}: {model.key} names column {model.column!r}, which does not have the role "
                                 "\"sensitive\" in [columns]")
        if population_file(model) is not None:
            numeric = [c.name for c in columns.values() if c.role == "numeric"]
            if numeric:
                raise ParameterError(f"{source}: {model.key}'s population table is grouped as the categorical "
                                     f"quasi-identifiers are generalized; {name_list(numeric)} would be "
                                     "microaggregated: give them a hierarchy or intervals (role \"categorical\")")
        if model.key in ("k_map", "max_population_uniqueness") and not has_weight and population_file(model) is None:
            raise ParameterError(f"{source}: {model.key} needs a column with role \"weight\" in [columns] (the "
                                 "sampling weights the population is estimated from)")
    return entries, models


def _check_differential_privacy(privacy: Mapping[str, Any], entries: Mapping[str, Any],
                                columns: Mapping[str, ColumnSpec], source: str) -> None:
    """SafePub's guarantee is its sampling's and its search's: the release is made by them alone
    (with k, which only suppresses more), over categorical quasi-identifiers (a microaggregated
    numeric column reads the raw values, outside the mechanism)."""
    others = ([key for key in entries if key != "differential_privacy"]
              + [key for key in ("l", "t", *RISK_TARGET_KEYS) if key in privacy and key not in entries])
    if others:
        raise ParameterError(f"{source}: differential_privacy makes the release by SafePub's sampling and search "
                             f"alone (with k); it does not take {name_list(others)}")
    numeric = [c.name for c in columns.values() if c.role == "numeric"]
    if numeric:
        raise ParameterError(f"{source}: differential_privacy generalizes categorical quasi-identifiers only; give "
                             f"{name_list(numeric)} a hierarchy or intervals (role \"categorical\")")
    if privacy.get("allow_full_suppression") is False or any(
            c.allow_full_suppression is False for c in columns.values()):
        raise ParameterError(f"{source}: differential_privacy searches the whole lattice from its top; it does not "
                             "take allow_full_suppression = false")


def _metric_weights(raw: Any, columns: Mapping[str, ColumnSpec], source: str) -> dict[str, float] | None:
    """``[privacy] metric_weights``: categorical quasi-identifiers to finite numbers >= 0, not all 0."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ParameterError(f"{source}: metric_weights must be a table of categorical columns and numbers, "
                             f"e.g. {{ education = 2 }}; got {raw!r}")
    out: dict[str, float] = {}
    for name, w in raw.items():
        if name not in columns or columns[name].role != "categorical":
            raise ParameterError(f"{source}: metric_weights names {name!r}, which is not a categorical column")
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise ParameterError(f"{source}: metric_weights of {name!r} must be a finite number >= 0; got {w!r}")
        out[str(name)] = float(w)
    if out and len(out) == sum(c.role == "categorical" for c in columns.values()) and not any(out.values()):
        raise ParameterError(f"{source}: metric_weights must not all be 0")
    return out or None


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
        match = None
        allow_full = None
        role: Any
        if isinstance(value, str):
            role = value
        elif isinstance(value, Mapping):
            extra = [key for key in value if key not in _COLUMN_KEYS]
            if extra:
                raise ParameterError(f"{source}: column {name!r}: unknown key(s) {name_list(extra)}; known: "
                                     f"{', '.join(_COLUMN_KEYS)}")
            if "allow_full_suppression" in value:
                allow_full = value["allow_full_suppression"]
                if not isinstance(allow_full, bool):
                    raise ParameterError(f"{source}: column {name!r}: allow_full_suppression must be true or "
                                         f"false; got {allow_full!r}")
            if "match" in value:
                match = value["match"]
                if match not in MATCH:
                    raise ParameterError(f"{source}: column {name!r}: match must be \"label\" (the hierarchy "
                                         "names the value labels) or \"code\" (it names the codes); got "
                                         f"{match!r}")
            if "intervals" in value:
                widths = value["intervals"]
                if not isinstance(widths, (list, tuple)) or not widths:
                    raise ParameterError(f"{source}: column {name!r}: intervals must be a list of positive "
                                         f"widths, each a multiple of the one before (e.g. [5, 10, 20]); got {widths!r}")
                from ..generalization import check_widths

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
        if allow_full is not None and role != "categorical":
            raise ParameterError(f"{source}: column {name!r}: only a categorical column takes "
                                 "allow_full_suppression")
        if match is not None and (role != "categorical" or intervals is not None):
            raise ParameterError(f"{source}: column {name!r}: only a categorical column without intervals "
                                 "takes match")
        if ordered is not None and role != "sensitive":
            raise ParameterError(f"{source}: column {name!r}: only a sensitive column takes ordered")
        out[str(name)] = ColumnSpec(str(name), role, hierarchy, ordered, intervals, match, allow_full,
                                    column_household_level(value, role, str(name), source))
    return out


def check_columns(spec: ReleaseSpec, columns: list[str]) -> dict[str, str]:
    """Role of every data column ("other" where the spec is silent); an unknown column in the
    spec is a DataError naming it."""
    unknown = [name for name in spec.columns if name not in columns]
    if unknown:
        raise DataError(f"{spec.source} names column(s) {name_list(unknown)} that the data does not have; the data "
                        f"has {name_list(columns)}")
    return {c: (spec.columns[c].role if c in spec.columns else "other") for c in columns}


SUPPRESSION = choices("privacy", "suppression")


def _cell_suppression(privacy: Mapping[str, Any], columns: Mapping[str, ColumnSpec], source: str, *,
                      l, t, strategy: str) -> dict[str, Any]:
    """``suppression``, ``missing_matches``, ``importance`` and ``max_suppressed_cells`` of
    [privacy], checked (the last three only mean something with ``suppression = "cells"``)."""
    from ..values import MISSING_MATCHES

    suppression = privacy.get("suppression", "rows")
    if suppression not in SUPPRESSION:
        raise ParameterError(f"{source}: suppression must be one of {', '.join(SUPPRESSION)}; got {suppression!r}")
    cell_keys = [key for key in ("missing_matches", "importance", "max_suppressed_cells") if key in privacy]
    if suppression == "rows":
        if cell_keys:
            raise ParameterError(f"{source}: {', '.join(cell_keys)} only apply with suppression = \"cells\"")
        return {}
    if l is not None or t is not None or strategy == "joint":
        raise ParameterError(f"{source}: suppression = \"cells\" meets k with the generalize-then-microaggregate "
                             "strategy; l, t and the joint strategy need suppression = \"rows\"")
    missing_matches = privacy.get("missing_matches", "itself")
    if missing_matches not in MISSING_MATCHES:
        raise ParameterError(f"{source}: missing_matches must be one of {', '.join(MISSING_MATCHES)}; "
                             f"got {missing_matches!r}")
    categorical = [c.name for c in columns.values() if c.role == "categorical"]
    if not categorical:
        raise ParameterError(f"{source}: suppression = \"cells\" blanks categorical quasi-identifier cells; "
                             "[columns] names none")
    if missing_matches == "any" and any(c.role == "numeric" for c in columns.values()):
        raise ParameterError(f"{source}: missing_matches = \"any\" needs every quasi-identifier categorical "
                             "(a blank that matches any value leaves no classes to microaggregate numeric "
                             "columns in); use missing_matches = \"itself\"")
    importance = privacy.get("importance")
    if importance is not None:
        if not isinstance(importance, Mapping):
            raise ParameterError(f"{source}: importance must be a table of categorical columns and numbers, "
                                 "e.g. importance = { sex = 1, region = 2 }")
        check_importance(importance, categorical, where=source, columns_are="categorical columns")
        importance = dict(importance)
    limit = privacy.get("max_suppressed_cells")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, float, str))):
        raise ParameterError(f"{source}: max_suppressed_cells must be a count, a fraction or a percentage such "
                             f"as \"1%\" of the categorical cells; got {limit!r}")
    return {"suppression": suppression, "missing_matches": missing_matches, "importance": importance,
            "max_suppressed_cells": limit}


def partitioned_refusal(spec: ReleaseSpec) -> str | None:
    """What of ``spec`` a partitioned file cannot be published with yet (one line), or None."""
    said = []
    if spec.strategy != "generalize-then-microaggregate":
        said.append(f"strategy {spec.strategy!r}")
    if spec.models:
        said.append("[privacy] models")
    if spec.household is not None and spec.suppression == "cells":
        # a household-level blank is spread to every housemate and k met again around it, which
        # needs each household's rows in the client's plan of the blanks
        said.append("a household column with cell suppression")
    numeric = [name for name, c in spec.columns.items() if c.role == "numeric"]
    if spec.household is not None and spec.risk_targets and numeric:
        # the partitions' suppression of groups above a target (suppress_group_keys) weighs
        # groups alone; one process also weighs each household's riskiest member's group
        said.append(f"a household column beside risk targets and numeric quasi-identifiers ({', '.join(numeric)})")
    whole_column = whole_column_steps(spec.perturb)
    if whole_column:
        said.append(f"[[perturb]] steps {', '.join(whole_column)} (each reads the whole column: ranks, a regression, "
                    "groups or one random stream over all rows, while top_code, bottom_code and round run "
                    "partition by partition)")
    flat = [name for name, c in spec.columns.items() if c.role == "categorical" and c.hierarchy is None]
    if flat:
        said.append(f"categorical quasi-identifiers without a hierarchy file ({', '.join(flat)})")
    if not said:
        return None
    return ("a partitioned file is published with k, l, t, risk targets, a household column, top and bottom coding "
            "and rounding, and rows or cell suppression, its categorical quasi-identifiers with hierarchy files; "
            f"not with {', '.join(said)}: publish it in one process")
