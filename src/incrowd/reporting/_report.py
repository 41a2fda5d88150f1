"""The disclosure-risk and utility report of a release, beside the original it was made from.

:func:`report` aligns the release with the original (see ``_align``), computes every risk and
utility measure that applies (numeric ones on the quasi-identifiers that are numbers on both
sides, categorical ones on the others, attribute disclosure on the sensitive columns), and
returns a :class:`Report`: ``.risk`` and ``.utility`` (dicts of named measures), the
assumptions it made, figures, ``.to_json()`` and ``.to_html(path)``.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError
from ..privacy import attribute_disclosure_of_classes, checked_t, models_from_summary
from ..values import MISSING_MATCHES
from ._align import Aligned, align, file_value_labels
from ._summary import summary_points


@dataclass
class Report:
    """Risk and utility of one release (dicts of named measures, JSON-ready).

    Attributes
    ----------
    risk : dict
        The risk measures, by name.
    utility : dict
        The utility measures, by name.
    assumptions : list of str
        What the measures assume (the intruder's knowledge, the population).
    about : dict
        The two tables and the options measured.
    release : dict or None
        The release's own summary, when known.
    figures : dict of str to str
        The report's figures, as SVG text by name.
    verdict : list of dict
        One line per promise and measure: value, threshold, pass / review / fail, and the driver
        and next step of a review or failure (see ``_verdict``).
    risk_utility_map : list of dict or None
        The risk and utility of the release's neighbouring choices, when asked for.
    """

    risk: dict[str, Any]
    utility: dict[str, Any]
    assumptions: list[str]
    about: dict[str, Any] = field(default_factory=dict)
    release: dict[str, Any] | None = None     # the release's own summary, when known
    figures: dict[str, str] = field(default_factory=dict, repr=False)
    verdict: list[dict[str, Any]] = field(default_factory=list)   # see ``_verdict``
    risk_utility_map: list[dict[str, Any]] | None = None   # see ``_map``; when asked for

    def to_dict(self) -> dict[str, Any]:
        out = {"verdict": list(self.verdict), "about": self.about, "assumptions": list(self.assumptions),
               "risk": self.risk, "utility": self.utility}
        if self.release is not None:
            out["release"] = self.release
        if self.risk_utility_map is not None:
            out["risk_utility_map"] = list(self.risk_utility_map)
        return out

    def to_json(self) -> str:
        from ..io import json_dumps as dumps

        return dumps(self.to_dict())

    def to_html(self, path: str | os.PathLike | None = None, *, inputs=()) -> str:
        """One self-contained page (inline CSS and SVG figures, no script, nothing fetched);
        written atomically to ``path`` when given. Returns the HTML text."""
        from ._html import render

        text = render(self)
        if path is not None:
            from ..io import atomic_output

            with atomic_output(path, inputs=inputs, what="report") as tmp:
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(text)
        return text

    def write(self, path: str | os.PathLike, *, inputs=()) -> None:
        """HTML or JSON by the file's extension, atomically."""
        if str(path).lower().endswith((".html", ".htm")):
            self.to_html(path, inputs=inputs)
            return
        from ..io import atomic_output

        with atomic_output(path, inputs=inputs, what="report") as tmp:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(self.to_json() + "\n")


def report(original: pd.DataFrame | str | os.PathLike, release: pd.DataFrame | str | os.PathLike,
           quasi_identifiers: Sequence[str] | None = None, sensitive: Sequence[str] | None = None,
           identifiers: Sequence[str] | None = None, *,
           kept_rows: Sequence[int] | np.ndarray | None = None, k: int | None = None,
           numeric: Sequence[str] | None = None,
           hierarchies: Mapping[str, Any] | None = None,
           population_sizes: Sequence[float] | np.ndarray | None = None, threshold: float = 0.2,
           target: str | None = None, attacks: bool = False, figures: bool = True,
           release_summary: Mapping[str, Any] | None = None, random_state: int = 0,
           weight: str | None = None,
           thresholds: Mapping[str, float] | None = None, spec: Any = None,
           risk_utility_map: bool = False, suppression: str | None = None,
           strategy: str | None = None, missing_matches: str | None = None,
           models: Sequence[Any] | None = None, household: str | None = None,
           benchmarks: Sequence[str] | None = None, perturb: Sequence[str] | None = None, scheduler=None,
           memory_limit: str | None = None, progress=None) -> Report:
    """Risk and utility of ``release`` against ``original`` (DataFrames or file paths).

    ``quasi_identifiers``: the columns an intruder may know; ``sensitive``: columns to check for
    attribute disclosure; ``identifiers``: columns left out on both sides. Rows align by
    position (``kept_rows``: the original row of each release row, as incrowd's results give it;
    without it, see ``_align``). ``k``: the promised k (records in smaller classes are counted);
    ``numeric``: QIs that must be treated as numbers; ``hierarchies``: column -> Hierarchy for the
    categorical utility; ``population_sizes``: per release row, its class's size in the
    population (journalist risk); ``threshold``: the re-identification risk above which a record
    counts as at risk; ``target``: a column to model on release and original; ``attacks``: run
    anonymeter's singling-out, linkability and inference attacks (slow); ``weight``: the
    original's sampling-weight column: the risk gains ``sample_risk``, the release's individual
    and global risk and expected re-identifications as sdcMicro measures them (see ``incrowd.risk``);
    ``household``: the original's household-id column, which adds the release's household risk
    there (a promised line where the release has ``max_household_risk``).

    ``models``: the privacy models the release promises beyond k (``incrowd.privacy``'s, as a
    spec's ``models``; default the ``spec``'s, else those ``release_summary`` states): each is
    checked on the release against the original's sensitive columns; a distinct l
    (:class:`~incrowd.privacy.DistinctL`) or a t (:class:`~incrowd.privacy.TCloseness`) is the
    promised bound of its attribute disclosure line, any other model a promised line of its own.

    ``verdict`` (first in the JSON and on the page): one line per promise and measure, pass /
    review / fail against a threshold, with the driver and the next step of each review or
    failure. ``thresholds`` change the defaults of ``incrowd.reporting._verdict.DEFAULTS``
    (a spec's ``[report]`` table), e.g. ``{"entropy_l": 1.5}``.

    Parameters
    ----------
    original : pandas.DataFrame, str or os.PathLike
        The input table (or its file).
    release : pandas.DataFrame, str or os.PathLike
        The released table (or its file).
    quasi_identifiers : sequence of str or None, default None
        The columns an intruder may know.
    sensitive : sequence of str or None, default None
        Columns checked for attribute disclosure.
    identifiers : sequence of str or None, default None
        Columns left out on both sides.
    kept_rows : sequence of int, numpy.ndarray or None, default None
        The original row of each release row.
    k : int or None, default None
        The promised k.
    numeric : sequence of str or None, default None
        Quasi-identifiers measured as numbers.
    hierarchies : mapping or None, default None
        Column to :class:`~incrowd.generalization.Hierarchy`, for the categorical utility.
    population_sizes : sequence of float, numpy.ndarray or None, default None
        Per release row, its class's size in the population.
    threshold : float, default 0.2
        The re-identification risk above which a record counts as at risk.
    target : str or None, default None
        A column to model on release and original.
    attacks : bool, default False
        Run anonymeter's attacks (slow).
    figures : bool, default True
        Draw the figures.
    release_summary : mapping or None, default None
        The release's own summary, shown with the report.
    random_state : int, default 0
        The seed of sampled measures and attacks.
    weight : str or None, default None
        The original's sampling-weight column.
    thresholds : mapping of str to float or None, default None
        Changed thresholds of the verdict (see above).
    spec : ReleaseSpec, dict, str, os.PathLike or None, default None
        The release's spec, for the risk-utility map.
    risk_utility_map : bool, default False
        Also re-make and measure the release's neighbours (k - 1, k + 1, the lattice nodes one
        level up or down in one column) from ``spec``: ``risk_utility_map`` in the JSON, a list
        of points ``label``, ``risk``, ``loss``, ``spec``, the release first.
    suppression : {"rows", "cells"} or None, default None
        How the release suppressed (the spec's ``suppression``; None: as ``release_summary``
        says, else "rows"). With "cells" a blank text cell of a categorical quasi-identifier
        (an empty string, as a labelled file's text column holds a blanked cell) is a
        suppressed cell, as a missing one is.
    missing_matches : {"itself", "any"} or None, default None
        What a blank of a cell release means (the spec's ``missing_matches``; None: as
        ``release_summary`` says, else "itself"). With "any" (``suppression`` "cells" only) a
        blank matches any value: k, the class sizes and the prosecutor, journalist and marketer
        risk count each row's matches (its fk, as sdcMicro's ``freqCalc`` counts it with NA keys
        and as publish verified k), not classes of equal values; the assumptions say so.
    strategy : str or None, default None
        The spec's strategy (None: as ``release_summary`` says, else unknown). A strategy other
        than "joint" generalizes each categorical column to one level: a label that reads at
        several levels of its hierarchy (a group named as its one value, "Not stated" over 99)
        is at the column's level, as publish's summary counts it; otherwise at the highest
        level the rows published with it need.
    models : sequence of PrivacyModel or None, default None
        The privacy models promised beyond k (None: the ``spec``'s, else ``release_summary``'s),
        each checked on the release and promised in the verdict.
    household : str or None, default None
        The original's household-id column: the release's household risk (with ``weight``).
    benchmarks : sequence of str or None, default None
        Benchmark estimates, ``"income"`` or ``"income by urbrur"`` (None: the ``spec``'s
        ``[benchmarks]``): each weighted mean (by ``weight``) on the original and on the release,
        per group, with the relative change and whether the 95 % confidence intervals overlap,
        in ``utility["benchmarks"]``.
    perturb : sequence of str or None, default None
        The columns the release perturbed (None: those of ``release_summary``'s perturbation
        steps, else the ``spec``'s ``perturb`` role). They are not compared to align the files.
        The numeric ones (sdcMicro's numVars) are measured as the numeric quasi-identifiers are:
        ``utility["perturbed"]`` (IL1s, eigenvalue and correlation changes) and
        ``risk["perturbed"]`` (dRisk, dRiskRMD, record linkage); with ``weight`` every
        categorical one (PRAM) gets a weighted table before and after in
        ``utility["weighted_frequencies"]``.
    scheduler : str or distributed.Client, optional
        Run on Dask (extra ``incrowd[dask]``): ``"local:N"`` starts N local workers, else the
        ``tcp://`` address of a running scheduler, or a client. ``original`` and ``release`` are
        then partitioned datasets (folders or globs of CSV or Parquet files; release partition i
        holds the published rows of original partition i) and the measures are combined from
        per-partition partial results: the class risk, the numeric and the categorical utility
        (but height and NCP); ``about["left_out"]`` names the measures left out and why. The
        options that need the whole file in one process are refused.
    memory_limit : str, optional
        With ``scheduler="local:N"``: each worker's memory (Dask's ``memory_limit``, e.g. ``"2GiB"``).
    progress : callable, optional
        With ``scheduler``: called with a line saying what runs (the command line's progress).

    Returns
    -------
    Report
        The risk and utility measures, JSON-ready (:meth:`Report.to_dict`).
    """
    from ._verdict import thresholds_from

    if scheduler is not None:
        _check_on_dask(locals())
    thresholds = thresholds_from(thresholds)  # a bad name or value fails before any work
    suppression = suppression or (release_summary or {}).get("suppression") or "rows"
    if suppression not in ("rows", "cells"):
        raise ParameterError(f"suppression must be 'rows' or 'cells'; got {suppression!r}")
    if scheduler is not None:
        from .._runtime import backends

        return backends.get("dask").report(  # registered by incrowd.distributed
            original, release, quasi_identifiers, sensitive, identifiers, scheduler=scheduler, k=k, numeric=numeric,
            threshold=threshold, suppression=suppression, memory_limit=memory_limit, progress=progress)
    if memory_limit is not None:
        raise ParameterError("memory_limit= bounds the workers of a report on Dask; give scheduler= too")
    missing_matches = missing_matches or (release_summary or {}).get("missing_matches") or "itself"
    if missing_matches not in MISSING_MATCHES:
        raise ParameterError(f"missing_matches must be one of {', '.join(MISSING_MATCHES)}; got {missing_matches!r}")
    if missing_matches == "any" and suppression != "cells":
        raise ParameterError("missing_matches = 'any' needs suppression = 'cells' (only a blanked cell can match "
                             "any value)")
    # the models given (or the spec's), and those the release's summary states beside them
    models = list(models if models is not None else getattr(spec, "models", ()))
    models += [m for m in models_from_summary(release_summary or {}) if m.key not in {g.key for g in models}]
    if risk_utility_map and spec is None:
        raise ParameterError("risk_utility_map needs the release's spec (spec=..., --spec FILE): its "
                             "neighbours are re-made from it")
    from .._runtime import check_cancelled, compile_clock, work_clock
    from ..io import read_table
    from ._verdict import verdict as _verdict

    with compile_clock() as clock:
        t0 = work_clock()
        if not isinstance(original, pd.DataFrame):
            original = read_table(original)
        if not isinstance(release, pd.DataFrame):
            release = read_table(release)
        perturbed = ([c.strip() for c in perturb.split(",") if c.strip()] if isinstance(perturb, str)
                     else [str(c) for c in perturb]) if perturb is not None else [
            c for step in (release_summary or {}).get("perturbation") or () for c in step["columns"]]
        if perturb is None and not perturbed and hasattr(spec, "names"):  # a release read back, with its spec
            perturbed = spec.names("perturb")
        a = align(original, release, quasi_identifiers, sensitive, identifiers, kept_rows=kept_rows, numeric=numeric,
                  categorical=[c for c in (hierarchies or {}) if c not in (numeric or ())],
                  perturbed=list(dict.fromkeys(perturbed)))
        aligned = work_clock() - t0
        a.missing_matches = missing_matches
        if missing_matches == "any":
            a.assumptions.append("a blank quasi-identifier cell matches any value (missing_matches = \"any\", as "
                                 "publish verified k): k, the class sizes and the prosecutor, journalist and "
                                 "marketer risk count the rows each row matches (its fk, as sdcMicro's freqCalc), "
                                 "not classes of equal values")
        from ._verdict import one_label_columns

        # the attribute disclosure checks t where the verdict will: one check serves both
        t_check = checked_t(models, thresholds) if a.sensitive else 1.0
        risk, seconds = _risk(a, k, population_sizes, threshold, t_check)
        seconds["read_and_align"] = aligned  # reading the files, finding the kept rows
        if weight is not None:
            t = work_clock()
            risk["sample_risk"] = _sample_risk(a, weight, threshold, household)
            seconds["sample_risk"] = work_clock() - t
        # publish's generalize-then-microaggregate writes one level per column (joint: per group)
        strategy = strategy or (release_summary or {}).get("strategy")
        utility = _utility(a, hierarchies, target, random_state, seconds, blanks_suppressed=suppression == "cells",
                           one_level=strategy is not None and strategy != "joint", weight=weight)
        benchmarks = benchmarks if benchmarks is not None else getattr(spec, "benchmarks", ())
        if benchmarks:
            from ._benchmarks import benchmark_estimates

            t = work_clock()
            utility["benchmarks"] = benchmark_estimates(
                a.original, release, benchmarks, weight=weight,
                release_weights=(a.original[weight].iloc[a.kept].to_numpy() if weight is not None
                                 and weight in a.original.columns else None))
            seconds["benchmarks"] = work_clock() - t
        if attacks:
            from ._attacks import attacks as run_attacks

            t = work_clock()
            risk["attacks"] = run_attacks(a.original.iloc[a.kept].reset_index(drop=True), a.release,
                                          quasi_identifiers=a.quasi_identifiers,
                                          secret=a.sensitive[0] if a.sensitive else None, random_state=random_state)
            seconds["attacks"] = work_clock() - t
        about = {
            "rows_original": int(a.original.shape[0]), "rows_release": int(a.release.shape[0]),
            "suppressed": int(a.suppressed.sum()), "quasi_identifiers": a.quasi_identifiers,
            "numeric": a.numeric, "categorical": a.categorical, "sensitive": a.sensitive, "k": k,
            "threshold": threshold, "seconds": seconds,
        }
        out = Report(risk=risk, utility=utility, assumptions=a.assumptions, about=about,
                     release=_shareable(release_summary) if release_summary is not None else None)
        if risk_utility_map:
            from ._map import risk_utility_map as make_map

            started = work_clock()
            out.risk_utility_map, left_out = make_map(original, spec, release_summary)
            a.assumptions.extend(f"map: {line}" for line in left_out)
            seconds["risk_utility_map"] = work_clock() - started
        check_cancelled()
        promised = dict(release_summary or {})
        started = work_clock()
        out.verdict = _verdict(a, risk, utility, hierarchies=hierarchies, k=k,
                               thresholds=thresholds, risk_targets=promised.get("risk_targets"),
                               models=models, weight=weight,
                               fully_suppressed=one_label_columns(a, promised.get("fully_suppressed") or ()))
        seconds["verdict"] = work_clock() - started
        if figures:
            started = work_clock()
            out.figures = _figures(a, risk, utility)
            if out.risk_utility_map:
                from ._figures import risk_utility_scatter

                out.figures["risk_utility_map"] = risk_utility_scatter(out.risk_utility_map)
            seconds["figures"] = work_clock() - started
        about["seconds"]["total"] = work_clock() - t0
    # every figure in "seconds" leaves numba's compiling out (anonymeter's kernels compile on a
    # first attack); what it cost is said apart
    about["compile_seconds"] = clock.seconds
    return out


#: the options of :func:`report` that need the whole file in one process, as their defaults
_IN_PROCESS_ONLY = {"kept_rows": None, "hierarchies": None, "population_sizes": None, "target": None,
                    "attacks": False, "release_summary": None, "weight": None, "spec": None,
                    "risk_utility_map": False, "missing_matches": None, "models": None, "household": None,
                    "benchmarks": None, "strategy": None, "thresholds": None, "perturb": None}


def _check_on_dask(options: Mapping[str, Any]) -> None:
    """Refuse, in one line and before any work, what a report on Dask does not take."""
    given = [name for name, default in _IN_PROCESS_ONLY.items() if options[name] is not default
             and not (isinstance(options[name], bool) and options[name] == default)]
    if given:
        raise ParameterError(f"a report on Dask (scheduler=) does not take {', '.join(given)}: those need the whole "
                             "file in one process; leave out scheduler= to measure them")


def _shareable(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The release's summary as a report may show it: a differentially private release's seed
    stays with the curator (it tells which rows were sampled)."""
    out = dict(summary)
    if isinstance(out.get("differential_privacy"), Mapping):
        out["differential_privacy"] = {key: value for key, value in out["differential_privacy"].items()
                                       if key != "seed"}
    return out


def _risk(a: Aligned, k, population_sizes, threshold, t_check: float = 1.0) -> tuple[dict, dict]:
    from .._runtime import check_cancelled, work_clock
    from . import _risk as measures

    seconds: dict[str, float] = {}
    out: dict[str, Any] = {}
    t = work_clock()
    # the release grouped by its quasi-identifiers once, for every measure and figure
    out["classes"] = measures.class_risk_of_classes(
        a.release_classes, k=k, population_sizes=population_sizes, threshold=threshold,
        matches=a.release_matches if a.missing_matches != "itself" else None)
    seconds["classes"] = work_clock() - t

    def numeric_risk(complete: tuple[np.ndarray, np.ndarray, np.ndarray], what: str,
                     prefix: str = "") -> dict[str, Any]:
        """dRisk, dRiskRMD and record linkage of numeric columns, original against release
        (``complete``: their rows with no missing value, as :attr:`Aligned.complete_numbers`)."""
        X, Xm, ok = complete
        found: dict[str, Any] = {}
        if not ok.all():
            a.assumptions.append(f"{int((~ok).sum())} release rows with a missing {what} value are left out of its "
                                 "dRisk, dRiskRMD and record linkage")
        # the sampled distance-based linkage scans every original row per sampled release row:
        # keep that scan near 5e9 distance terms (a million rows x 15 columns: 1,000 samples)
        budget = int(5e9 // max(X.shape[0] * max(X.shape[1], 1), 1))
        # the global (assignment) linkage costs n^3: solved on up to 2,000 rows; above, its sampled
        # estimate (an upper one, seconds per sample) is left to record_linkage(global_linkage=True)
        linkage = functools.partial(measures.record_linkage, distance_sample=min(5000, max(1000, budget)),
                                    global_linkage=X.shape[0] <= 2000)
        if X.shape[0] > 2000:
            note = "the global (one-to-one assignment) record linkage is left out above 2,000 rows (n^3 work)"
            if note not in a.assumptions:
                a.assumptions.append(note)
        for name, fn in (("drisk", measures.drisk), ("drisk_rmd", measures.drisk_rmd),
                         ("record_linkage", linkage)):
            check_cancelled()  # a web job stops between measures
            t = work_clock()
            try:
                found[name] = fn(X, Xm)
            except DataError as exc:
                # a measure undefined on these data (dRiskRMD on a singular scatter) is withheld
                # and said, not allowed to sink the rest of the report
                found[name] = {"withheld": str(exc)}
                a.assumptions.append(f"{prefix}{name} withheld: {exc}")
            seconds[prefix + name] = work_clock() - t
        return found

    if a.numeric:
        out.update(numeric_risk(a.complete_numbers, "numeric quasi-identifier"))
    if a.perturbed_numeric:
        # sdcMicro's dRisk over its numVars: the perturbed numerics measured as the numeric keys
        t = work_clock()
        out["perturbed"] = {"columns": list(a.perturbed_numeric),
                            **numeric_risk(a.complete_perturbed, "perturbed numeric", "perturbed_")}
        seconds["perturbed_risk"] = work_clock() - t
    if a.sensitive:
        t = work_clock()
        out["attribute_disclosure"] = attribute_disclosure_of_classes(
            a.release, a.release_classes, a.sensitive, reference=a.original, t=t_check, checks=a.t_reports)
        seconds["attribute_disclosure"] = work_clock() - t
    return out, seconds


def _sample_risk(a: Aligned, weight: str, threshold: float, household: str | None = None) -> dict:
    """The release's survey risk (``incrowd.risk``), each release row weighted as its original row
    (and in its original's household)."""
    from ._risk_api import risk as measure

    if weight not in a.original.columns:
        raise DataError(f"weight column {weight!r} is not in the original (or is named as an identifier)")
    if weight in a.quasi_identifiers:
        raise DataError(f"weight column {weight!r} is also a quasi-identifier; give it one role")
    frame = a.release[a.quasi_identifiers].reset_index(drop=True)
    frame[weight] = a.original[weight].iloc[a.kept].reset_index(drop=True)
    if household is not None:
        if household not in a.original.columns:
            raise DataError(f"household column {household!r} is not in the original")
        frame[household] = a.original[household].iloc[a.kept].reset_index(drop=True)
    try:
        out = measure(frame, a.quasi_identifiers, weight=weight, household=household, threshold=threshold).summary()
    except DataError as exc:
        # weights that are no population counts (scaled to average 1, say) leave the weighted
        # risk undefined: withheld with the reason, as any measure undefined on the data
        a.assumptions.append(f"sample_risk withheld: {exc}")
        return {"withheld": str(exc), "weight": weight}
    out["weight"] = weight
    return out


def _utility(a: Aligned, hierarchies, target, random_state, seconds, blanks_suppressed: bool = False,
             one_level: bool = False, weight: str | None = None) -> dict:
    from .._runtime import check_cancelled, work_clock
    from . import _utility as measures

    out: dict[str, Any] = {}
    if a.numeric:
        check_cancelled()
        X, Xm, _ = a.complete_numbers
        t = work_clock()
        out["numeric"] = measures.numeric_utility(X, Xm, a.numeric)
        # the release summary's IL counts every original row (a suppressed one loses all)
        everyone = a.numbers("everyone")
        out["numeric"].update(measures.information_loss_all_rows(everyone, a.numbers("release"), a.kept,
                                                                 a.numeric))
        seconds["numeric_utility"] = work_clock() - t
    if a.perturbed_numeric:
        # sdcMicro's dUtility over its numVars (IL1s, eigenvalues) and the correlations, by the
        # measures of the numeric keys
        check_cancelled()
        X, Xm, _ = a.complete_perturbed
        t = work_clock()
        perturbed = measures.numeric_utility(X, Xm, a.perturbed_numeric)
        perturbed["columns"] = perturbed.pop("quasi_identifiers")
        out["perturbed"] = perturbed
        seconds["perturbed_utility"] = work_clock() - t
    if a.categorical or a.suppressed.any():
        check_cancelled()
        t = work_clock()
        published = a.release[a.categorical]
        out["categorical"] = measures.categorical_utility_of_release(
            a.original[a.categorical], _blanks_missing(published) if blanks_suppressed else published, a.kept,
            dict(hierarchies or {}),
            value_labels=_value_labels(a.release, a.categorical), one_level=one_level,
            suppression="cells" if blanks_suppressed else "rows")
        undefined = out["categorical"].get("ncp_undefined") or []
        if undefined:
            a.assumptions.append(f"{undefined} were recoded without a hierarchy the report knows: their NCP is "
                                 "undefined and mean_ncp covers the other columns only (give --hierarchies DIR "
                                 "or --spec)")
        seconds["categorical_utility"] = work_clock() - t
    # an office's before/after tables: the keys' and the PRAM'd columns' values, weighted by the
    # survey weight (each row weighs 1 without one; the keys' counts are in "categorical" then)
    tabled = [*(a.categorical if weight is not None else ()), *a.perturbed_categorical]
    if tabled:
        check_cancelled()
        t = work_clock()
        weights = None
        if weight is not None:
            if weight not in a.original.columns:
                raise DataError(f"weight column {weight!r} is not in the original (or is named as an identifier)")
            weights = pd.to_numeric(a.original[weight], errors="coerce").to_numpy(np.float64, na_value=np.nan)
        out["weighted_frequencies"] = {"weight": weight, "tables": measures.weighted_frequencies(
            a.original, a.release, a.kept, tabled, weights)}
        seconds["weighted_frequencies"] = work_clock() - t
    if target is not None:
        t = work_clock()
        features = [c for c in a.quasi_identifiers if c != target]
        out["model"] = measures.model_utility(a.original.iloc[a.kept].reset_index(drop=True), a.release, target,
                                              features, random_state=random_state)
        seconds["model_utility"] = work_clock() - t
    return out


def _blanks_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """The release's categorical columns with each blank text cell (a cell suppressed by local
    suppression, as a labelled file's text column holds it) missing, as publish blanked it."""
    out = frame.copy(deep=False)
    for name in out.columns:
        column = out[name]
        if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
            continue
        blank = column.notna().to_numpy() & (column.astype(str).str.strip() == "").to_numpy()
        if blank.any():
            out[name] = column.where(~blank)
    return out


def _value_labels(release: pd.DataFrame, columns: Sequence[str]) -> dict[str, dict]:
    """Per categorical column of a labelled release (SPSS, Stata): its codes' value labels, so
    a generalized group stored as a new code is read as the group's label."""
    return file_value_labels(release, columns)


def _figures(a: Aligned, risk: dict, utility: dict) -> dict[str, str]:
    from . import _figures as fig

    out: dict[str, str] = {}
    if a.numeric:
        X, Xm, _ = a.complete_numbers
        out["histograms"] = fig.histograms_before_after(X, Xm, a.numeric)
        if len(a.numeric) >= 2:
            out["correlations"] = fig.correlation_before_after(X, Xm, a.numeric)
    # the classes' sizes as the risk counted them (a blank matching any value where it does)
    histogram = risk["classes"]["class_size_histogram"]
    out["class_sizes"] = fig.class_size_histogram(np.repeat(np.fromiter(histogram, np.int64, len(histogram)),
                                                            list(histogram.values())))
    # every headline figure is a share: one fixed 0-1 axis, the same in every report
    out["summary"] = fig.risk_utility_summary(summary_points(risk, utility), limits=(0.0, 1.0))
    return out
