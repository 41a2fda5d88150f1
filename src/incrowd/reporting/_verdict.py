"""The report's verdict: one line per promise and per risk or loss measured, each against a
threshold, with what drives a review or a failure and the step the tool can take next.

Rules (``DEFAULTS`` holds the thresholds; a spec's ``[report]`` table, ``thresholds=`` in
Python and ``--verdict-threshold NAME=VALUE`` on ``incrowd report`` change them):

* a promise the release made (``k``, distinct ``l``, ``t``: the spec's ``[privacy]``, or
  ``k=`` and the ``models=`` of :func:`incrowd.report`) is "pass" when kept and "fail" when
  broken; without a promise the same measure is checked against its default threshold and is
  "review" when beyond it;
* every other measure is "pass" up to its threshold, "review" beyond it and "fail" beyond its
  fail threshold (``NAME_fail``) where it has one;
* a quasi-identifier published as one label in every row (the release's ``fully_suppressed``,
  or found so in the release) is a "review" line of its own: the search may take a column to
  its top, as ARX's does, and a curator decides whether the file may lose it.

Higher is better for ``k``, ``l`` and ``entropy_l``; lower is better for all others.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import ParameterError

# the thresholds are spec keys ([report]): the spec's key table owns them, so that publish
# checks a spec without importing the report
from ..publishing import REPORT_HIGHER_IS_BETTER as HIGHER_IS_BETTER
from ..publishing import REPORT_THRESHOLDS as DEFAULTS
from ..publishing import report_thresholds as thresholds_from
from ..values import match_counts
from ._align import cell_text, file_value_labels
from ._utility import _spelled_labels


def parse_threshold_flags(flags: list[str] | None) -> dict[str, float]:
    """``["entropy_l=1.5", "ncp=0.4"]`` as a dict; a malformed flag raises one clear error."""
    out: dict[str, float] = {}
    for flag in flags or []:
        name, sep, value = flag.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = None
        if not sep or number is None:
            raise ParameterError(f"--verdict-threshold {flag!r}: give NAME=NUMBER, e.g. entropy_l=1.5")
        out[name.strip()] = number
    thresholds_from(out, "--verdict-threshold")
    return out


def _status(measure: str, value: float, threshold: float, fail: float | None, promised: bool) -> str:
    higher = measure in HIGHER_IS_BETTER

    def beyond(limit: float) -> bool:
        # a figure computed in floating point (exp(log 2) is 1.9999999999999998) that meets its
        # limit up to rounding meets it
        slack = 1e-9 * max(1.0, abs(limit))
        return value < limit - slack if higher else value > limit + slack

    if not beyond(threshold):
        return "pass"
    if promised or (fail is not None and beyond(fail)):
        return "fail"
    return "review"


def _pct(share: float) -> str:
    return f"{100 * share:.3g} %"


def _model_lines(aligned, models: Sequence[Any], *, weight: str | None = None) -> list[dict[str, Any]]:
    """A promised line per model: checked on the release's classes by the model's own check, the
    sensitive values compared with the original's (the whole input, as publish compared them)."""
    from ..privacy import check_table, measured_by_disclosure

    models = [m for m in models if not measured_by_disclosure(m)]
    if not models:
        return []

    a = aligned
    release = a.release
    reference = {s: a.original[s] for s in a.sensitive if s in a.original.columns}
    out = []
    for model in models:
        failures = check_table(release, a.quasi_identifiers, [model], sensitive=a.sensitive, reference=reference,
                               weight=weight if weight is not None and weight in release.columns else None)
        status = "fail" if failures else "pass"
        out.append(_line(model.key, model.describe(), None, status, str(failures[0]) if failures else None,
                         f"relax {model.key} or generalize further" if failures else None, promised=True))
    return out


def _line(measure: str, value, threshold, status: str, driver: str | None = None,
          next_step: str | None = None, **extra: Any) -> dict[str, Any]:
    out = {"measure": measure, "value": value, "threshold": threshold, "status": status,
           "driver": driver if status != "pass" else None, "next_step": next_step if status != "pass" else None}
    out.update(extra)
    return out


class _Context:
    """What the drivers need: the release's quasi-identifiers, their classes and hierarchies."""

    def __init__(self, aligned, hierarchies: Mapping[str, Any] | None):
        self.a = aligned
        self.hierarchies = dict(hierarchies or {})

    def class_sizes(self, columns) -> np.ndarray:
        """Each release row's fk over ``columns``, a blank meaning what the release says."""
        return match_counts(self.a.release, list(columns), missing_matches=self.a.missing_matches)

    def step_for(self, qi: str, cells: int) -> str:
        """The step that coarsens ``qi``: one level up its hierarchy, a larger k for a
        microaggregated number, local suppression for a column without hierarchy."""
        if qi in self.hierarchies:
            return f"generalize {qi} one level"
        if qi in self.a.numeric:
            return f"raise k (microaggregate {qi} in larger groups)"
        return f"suppress {cells} cells of {qi}"

    def small_class_driver(self, below: int) -> tuple[str, str]:
        """(driver, next step) for records in classes smaller than ``below``: the quasi-identifier
        without which the fewest records would stay in such classes, and the smallest class."""
        qis = self.a.quasi_identifiers
        sizes = self.class_sizes(qis)
        small = sizes < below
        n_small = int(small.sum())
        best, best_left = None, n_small
        if len(qis) > 1:
            for q in qis:
                left = int((self.class_sizes([c for c in qis if c != q]) < below).sum())
                if best is None or left < best_left:
                    best, best_left = q, left
        else:
            best, best_left = qis[0], 0
        if best is None:  # impossible: align() refuses a release without quasi-identifiers
            raise AssertionError("no quasi-identifier to name as the driver")
        i = int(np.argmin(sizes))
        # as the file shows the class to a curator: codes as a reader writes them, with their labels
        labels = {c: _spelled_labels(m) or {} for c, m in file_value_labels(self.a.original, qis).items()}
        values = ", ".join(f"{c}={_with_label(self.a.release[c].iloc[i], labels.get(c, {}))}" for c in qis)
        driver = (f"{n_small} records in classes below {below} (smallest: {int(sizes[i])} rows with {values}); "
                  f"{best} singles them out most (without it {best_left} would remain)")
        return driver, self.step_for(best, n_small)


def _with_label(value, labels: Mapping[str, str]) -> str:
    text = cell_text(value)
    label = labels.get(text)
    return text if label is None or label == text else f"{label} ({text})"


def verdict(aligned, risk: dict, utility: dict, *, hierarchies: Mapping[str, Any] | None = None,
            k: int | None = None,
            thresholds: Mapping[str, Any] | None = None,
            risk_targets: Mapping[str, Any] | None = None,
            fully_suppressed: Sequence[str] | None = None, models: Sequence[Any] = (),
            weight: str | None = None) -> list[dict[str, Any]]:
    """One line per promise and per measure present in ``risk`` and ``utility``:
    ``{measure, value, threshold, status, driver, next_step}`` (``status`` "pass", "review" or
    "fail"; ``driver`` and ``next_step`` only for a review or a failure), as the module says.
    ``risk_targets``: the release's promised risk targets (its summary's ``risk_targets``): the
    weighted risks are held to them as promises. ``fully_suppressed``: the quasi-identifiers
    published as one label in every row (:func:`one_label_columns`). ``models``: the privacy
    models promised beyond k: a distinct l or a t of the report's distance is the bound of its
    attribute disclosure line (``l (COLUMN)``, ``t (COLUMN)``), any other model a promised line
    of its own (:func:`_model_lines`; ``weight``: the sampling weights of k-map and population
    uniqueness)."""
    th = thresholds_from(thresholds)
    ctx = _Context(aligned, hierarchies)
    out: list[dict[str, Any]] = []

    def fail_of(name):
        return th.get(f"{name}_fail")

    classes = risk.get("classes") or {}
    if classes:
        smallest = int(classes.get("smallest_class", 0))
        limit = int(k) if k is not None else int(th["k"])
        status = _status("k", smallest, limit, None if k is not None else fail_of("k"), k is not None)
        driver = step = None
        if status != "pass":
            driver, step = ctx.small_class_driver(limit)
        out.append(_line("k", smallest, limit, status, driver, step, promised=k is not None))
        for model in ("prosecutor", "journalist"):
            got = classes.get(model) or {}
            if model == "journalist" and not got.get("population_table"):
                continue  # without a population table it repeats the prosecutor line
            if "highest" in got:
                value = float(got["highest"])
                status = _status("reidentification_risk", value, th["reidentification_risk"],
                                 fail_of("reidentification_risk"), False)
                driver = step = None
                if status != "pass":
                    driver, step = ctx.small_class_driver(math.ceil(1 / th["reidentification_risk"] - 1e-9)
                                                          if th["reidentification_risk"] > 0 else smallest + 1)
                out.append(_line(f"{model}_risk", value, th["reidentification_risk"], status, driver, step))
        marketer = (classes.get("marketer") or {}).get("risk")
        if marketer is not None:
            status = _status("marketer_risk", float(marketer), th["marketer_risk"], None, False)
            n_classes = int(classes.get("n_classes", 0))
            out.append(_line("marketer_risk", float(marketer), th["marketer_risk"], status,
                             f"{n_classes} classes for {classes.get('n_records')} records (average class of "
                             f"{(classes.get('n_records') or 0) / max(n_classes, 1):.3g} rows)",
                             f"raise k (an average class of {math.ceil(1 / th['marketer_risk']) if th['marketer_risk'] else '?'} "
                             "rows meets the threshold)"))
    for s, got in (risk.get("attribute_disclosure") or {}).items():
        out.extend(_sensitive_lines(ctx, s, got, th, models))
    out.extend(_model_lines(aligned, models, weight=weight))
    out.extend(_numeric_risk_lines(risk, lambda: aligned.numeric, lambda: aligned.complete_numbers, th, fail_of,
                                   "", "raise k"))
    if isinstance(risk.get("perturbed"), Mapping):
        # the perturbed amounts, as sdcMicro's dRisk of its numVars: a step that changes them more
        out.extend(_numeric_risk_lines(risk["perturbed"], lambda: aligned.perturbed_numeric, lambda: aligned.complete_perturbed,
                                       th, fail_of, " (perturbed)",
                                       "perturb more: a larger k in the [[perturb]] step, or noise"))
    for name, got in _attack_risks(risk.get("attacks")):
        status = _status("attacks", got, th["attacks"], None, False)
        out.append(_line(f"attack: {name}", got, th["attacks"], status,
                         f"anonymeter's {name} attack beats its control by {_pct(got)}", "raise k"))
    targets = dict(risk_targets or {})
    for name, value, key in _weighted_risks(risk):
        target = targets.get(_TARGET_OF[name])
        bound = th.get(key) if target is None else float(target["target"] if isinstance(target, Mapping) else target)
        if bound is None:  # a measure with no default threshold is only a line where promised
            continue
        status = _status(key, value, bound, fail_of(key) if target is None else None, target is not None)
        measure = "household risk" if name == "weighted_highest_household_risk" else "individual risk"
        out.append(_line(name, value, bound, status,
                         f"the sampling weights' estimate of the population's risk (sdcMicro's {measure})",
                         "raise k", **({"promised": True} if target is not None else {})))
    numeric = utility.get("numeric") or {}
    il = numeric.get("il_all_rows", numeric.get("il"))
    if isinstance(il, (int, float)):
        value = float(il)
        status = _status("information_loss", value, th["information_loss"], fail_of("information_loss"), False)
        shares = numeric.get("il_column_share") or {}
        top = max(shares, key=shares.__getitem__) if shares else None
        driver = (f"{top} carries {_pct(shares[top])} of the loss" if top else None)
        step = (f"lower k, or leave {top} out of the quasi-identifiers if an intruder cannot know it"
                if top and shares[top] > 0.5 else "lower k")
        out.append(_line("information_loss", value, th["information_loss"], status, driver, step))
    categorical = utility.get("categorical") or {}
    if isinstance(categorical.get("mean_ncp"), (int, float)):
        value = float(categorical["mean_ncp"])
        status = _status("ncp", value, th["ncp"], fail_of("ncp"), False)
        per = {c: v for c, v in (categorical.get("ncp") or {}).items() if v is not None}
        top = max(per, key=per.__getitem__) if per else None
        driver = f"{top} has NCP {per[top]:.3g}" if top else None
        if top and top not in ctx.hierarchies and per[top] >= 1.0:
            step = f"give {top} a hierarchy (it is published as '*' throughout)"
        else:
            step = "lower k, or allow more suppression (max_suppression) so that a lower node qualifies"
        out.append(_line("ncp", value, th["ncp"], status, driver, step))
    out.extend(_fully_suppressed_lines(ctx, fully_suppressed or ()))
    if "suppressed_share" in categorical or aligned.suppressed.any():
        value = float(aligned.suppressed.mean())
        status = _status("suppressed_share", value, th["suppressed_share"], None, False)
        driver = step = None
        if status != "pass":
            driver, step = _suppression_driver(ctx, k if k is not None else int(th["k"]))
        out.append(_line("suppressed_share", value, th["suppressed_share"], status, driver, step))
    return out


def _sensitive_lines(ctx: _Context, s: str, got: dict, th: dict, models: Sequence[Any]) -> list[dict]:
    from ..privacy import disclosure_checks

    a = ctx.a
    out = []
    for check in disclosure_checks(s, got, models, th, a.release, a.release_classes, a.original[s],
                                   a.t_reports.get(s)):
        status = _status(check.measure, check.value, check.limit, None, bool(check.promised))
        driver, step = (check.driver(), check.step) if status != "pass" else (None, check.step)
        if check.promised is False and driver is not None:
            driver, step = _unpromised(check.measure, check.limit, driver, step, s)
        out.append(_line(f"{check.measure} ({s})", check.value, check.limit, status, driver, step,
                         **({} if check.promised is None else {"promised": check.promised})))
    return out


def _unpromised(name: str, limit: float, driver: str, step: str, s: str) -> tuple[str, str]:
    """(driver, next step) of an l or t line the release made no promise for: the figure is
    measured against a threshold of the report, which a curator must not read as a broken promise."""
    whose = "a default threshold" if limit == DEFAULTS[name] else "the report's threshold"
    return (f"{driver}; checked against {whose} ({name} = {limit:g}), not a promise: the release set no {name}",
            f"if {s} needs protecting: {step}")


def _numeric_risk_lines(risk: Mapping[str, Any], names, complete, th: Mapping[str, float], fail_of,
                        suffix: str, step: str) -> list[dict[str, Any]]:
    """The dRisk, dRiskRMD and record-linkage lines of numeric columns (the keys, or with
    ``suffix`` " (perturbed)" the perturbed amounts); ``names`` and ``complete`` give their names
    and complete rows, asked only where a line names a column."""
    out = []
    if isinstance(risk.get("drisk"), (int, float)):
        value = float(risk["drisk"])
        status = _status("drisk", value, th["drisk"], None, False)
        driver, next_step = _drisk_driver(names(), complete, step) if status != "pass" else (None, step)
        out.append(_line("drisk" + suffix, value, th["drisk"], status, driver, next_step))
    rmd = risk.get("drisk_rmd") or {}
    if isinstance(rmd.get("risk2"), (int, float)):
        value = float(rmd["risk2"])
        status = _status("drisk_rmd", value, th["drisk_rmd"], None, False)
        out.append(_line("drisk_rmd" + suffix, value, th["drisk_rmd"], status,
                         f"{_pct(value)} of records lie near their original and far from other records", step))
    link = risk.get("record_linkage") or {}
    if isinstance(link.get("distance_based"), (int, float)):
        value = float(link["distance_based"])
        status = _status("record_linkage", value, th["record_linkage"], fail_of("record_linkage"), False)
        out.append(_line("record_linkage" + suffix, value, th["record_linkage"], status,
                         f"{_pct(value)} of release records are nearest their own original "
                         f"({link.get('distance_method', 'exact')})" + _closest_column(names(), complete), step))
    return out


def _drisk_driver(names: Sequence[str], complete, step: str = "raise k") -> tuple[str | None, str]:
    """The numeric column whose released value most often lies near the original's, and the step
    (``step``), unless most of that column is one value (a zero-inflated amount such as a capital
    loss), which every class publishes unchanged whatever k is."""
    if not names:
        return None, step
    X, Xm, _ = complete()
    if X.shape[0] < 2:
        return None, step
    sd = np.nanstd(Xm, axis=0, ddof=1)
    near = (np.abs(X - Xm) <= 0.05 * sd).mean(axis=0)
    j = int(np.argmax(near))
    name = names[j]
    driver = f"{name} is published within 0.05 sd of its original in {_pct(float(near[j]))} of records"
    values, counts = np.unique(X[:, j], return_counts=True)
    mode = int(np.argmax(counts))
    share = float(counts[mode]) / X.shape[0]
    if share >= 0.5:
        return (f"{driver}: {_pct(share)} of its values are {values[mode]:g}, and a class of records that all "
                "hold one value publishes it unchanged at any k",
                f"if {name} = {values[mode]:g} is worth hiding, top- or bottom-code {name} or publish it as a "
                "categorical with a hierarchy; if an intruder cannot know it, make it 'other'")
    return driver, step


def _closest_column(names: Sequence[str], complete) -> str:
    if not names:
        return ""
    X, Xm, _ = complete()
    if X.shape[0] < 2:
        return ""
    sd = X.std(axis=0, ddof=1)
    sd = np.where(sd > 0, sd, 1.0)
    moved = np.abs(X - Xm).mean(axis=0) / sd
    j = int(np.argmin(moved))
    return f"; {names[j]} moves least ({moved[j]:.3g} sd on average)"


def _attack_risks(attacks) -> list[tuple[str, float]]:
    if not isinstance(attacks, dict):
        return []
    out = []
    for name, got in attacks.items():
        if isinstance(got, dict) and isinstance(got.get("risk"), (int, float)):
            out.append((name.replace("_", " "), float(got["risk"])))
        elif isinstance(got, dict):
            out.extend((f"{name.replace('_', ' ')}, {sub}", float(v["risk"])) for sub, v in got.items()
                       if isinstance(v, dict) and isinstance(v.get("risk"), (int, float)))
    return out


#: the release's risk target (``[privacy]``) that promises each weighted line
_TARGET_OF = {"weighted_highest_risk": "max_individual_risk", "weighted_global_risk": "max_global_risk",
              "expected_reidentifications": "max_expected_reidentifications",
              "weighted_highest_household_risk": "max_household_risk"}


def _weighted_risks(risk: dict) -> list[tuple[str, float, str]]:
    """(measure, value, threshold name) of the weighted risks, where a weight was given."""
    got = risk.get("sample_risk")
    if not isinstance(got, dict):
        return []
    out = []
    for field, name, key in (("highest_individual_risk", "weighted_highest_risk", "reidentification_risk"),
                             ("global_risk", "weighted_global_risk", "marketer_risk"),
                             ("expected_reidentifications", "expected_reidentifications",
                              "expected_reidentifications"),
                             ("highest_household_risk", "weighted_highest_household_risk", "household_risk")):
        if isinstance(got.get(field), (int, float)):
            out.append((name, float(got[field]), key))
    return out


def one_label_columns(aligned, named: Sequence[str] = ()) -> list[str]:
    """The quasi-identifiers published as one label in every row: those the release names (its
    summary's ``fully_suppressed``), then any other non-numeric one whose kept original rows hold
    several values (a release made elsewhere says nothing of it)."""
    a = aligned
    found = [q for q in a.quasi_identifiers if q not in a.numeric and q in a.original.columns
             and a.release[q].nunique(dropna=False) == 1
             and a.original[q].iloc[a.kept].nunique(dropna=False) > 1]
    return list(dict.fromkeys([*(q for q in named if q in a.release.columns), *found]))


def _fully_suppressed_lines(ctx: _Context, names: Sequence[str]) -> list[dict]:
    """A "review" line for each column of ``names`` (:func:`one_label_columns`)."""
    a = ctx.a
    out = []
    for name in names:
        label = _shown(a.release[name]).iloc[0] if a.release.shape[0] else "*"
        depth = getattr(ctx.hierarchies.get(name), "max_level", 0)
        if depth > 1:  # its hierarchy has levels below the top: a lower one needs more suppression
            step = (f"if {name} must tell something: raise max_suppression or lower k so that a lower level of "
                    f"{name} qualifies; to forbid it, set allow_full_suppression = false for {name}")
        else:
            step = (f"if {name} must tell something: give it a hierarchy with intermediate levels, or raise "
                    f"max_suppression; to forbid it, set allow_full_suppression = false for {name}")
        out.append(_line(f"fully_suppressed ({name})", 1, 2, "review",
                         f"{name} is published as {label!r} in every one of the {a.release.shape[0]} rows, so it "
                         "tells an analyst nothing", step))
    return out


def _suppression_driver(ctx: _Context, k: int) -> tuple[str, str]:
    """The quasi-identifier that singles out most suppressed rows: among the withheld rows'
    original values, the one whose values are rarest in the original."""
    a = ctx.a
    withheld = np.flatnonzero(a.suppressed)
    qis = [c for c in a.categorical if c in a.original.columns] or a.quasi_identifiers
    best, best_rare = None, -1
    for q in qis:
        shown = _shown(a.original[q])
        counts = shown.map(shown.value_counts())
        rare = int((counts.iloc[withheld] < k).sum())
        if rare > best_rare:
            best, best_rare = q, rare
    if best is None:  # impossible: align() refuses a release without quasi-identifiers
        raise AssertionError("no quasi-identifier to name as the driver")
    cells = _shown(a.original[best].iloc[withheld]).value_counts()
    values = ", ".join(f"{v} ({c})" for v, c in cells.head(3).items())
    driver = (f"{withheld.size} rows withheld; {best} holds a value rarer than k in {best_rare} of them "
              f"(most withheld: {values})")
    return driver, ctx.step_for(best, withheld.size)


def _shown(column: pd.Series) -> pd.Series:
    """A column's cells as a driver counts and names them: by value label where a statistical
    file gave the column labels (a user-missing code, a value of its own, by its label or its
    code), else as text; missing where the cell is."""
    from ..generalization import as_value_labels, qi_labels, value_label_map

    if not value_label_map(column):
        return pd.Series(column).astype(str)
    labels, _ = qi_labels(column)
    return pd.Series(as_value_labels(column, labels), dtype=object)
