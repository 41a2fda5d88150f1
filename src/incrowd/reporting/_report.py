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

from ..exceptions import DataError
from ._align import Aligned, align
from ._summary import summary_points


@dataclass
class Report:
    """Risk and utility of one release (dicts of named measures, JSON-ready)."""

    risk: dict[str, Any]
    utility: dict[str, Any]
    assumptions: list[str]
    about: dict[str, Any] = field(default_factory=dict)
    release: dict[str, Any] | None = None     # the release's own summary, when known
    figures: dict[str, str] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out = {"about": self.about, "assumptions": list(self.assumptions), "risk": self.risk,
               "utility": self.utility}
        if self.release is not None:
            out["release"] = self.release
        return out

    def to_json(self) -> str:
        from ..io._json import dumps

        return dumps(self.to_dict())

    def to_html(self, path: str | os.PathLike | None = None, *, inputs=()) -> str:
        """One self-contained page (inline CSS and SVG figures, no script, nothing fetched);
        written atomically to ``path`` when given. Returns the HTML text."""
        from ._html import render

        text = render(self)
        if path is not None:
            from ..io._atomic import atomic_output

            with atomic_output(path, inputs=inputs, what="report") as tmp:
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(text)
        return text

    def write(self, path: str | os.PathLike, *, inputs=()) -> None:
        """HTML or JSON by the file's extension, atomically."""
        if str(path).lower().endswith((".html", ".htm")):
            self.to_html(path, inputs=inputs)
            return
        from ..io._atomic import atomic_output

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
           release_summary: Mapping[str, Any] | None = None, random_state: int = 0) -> Report:
    """Risk and utility of ``release`` against ``original`` (DataFrames or file paths).

    ``quasi_identifiers``: the columns an intruder may know; ``sensitive``: columns to check for
    attribute disclosure; ``identifiers``: columns left out on both sides. Rows align by
    position (``kept_rows``: the original row of each release row, as incrowd's results give it;
    without it, see ``_align``). ``k``: the promised k (records in smaller classes are counted);
    ``numeric``: QIs that must be treated as numbers; ``hierarchies``: column -> Hierarchy for the
    categorical utility; ``population_sizes``: per release row, its class's size in the
    population (journalist risk); ``threshold``: the re-identification risk above which a record
    counts as at risk; ``target``: a column to model on release and original; ``attacks``: run
    anonymeter's singling-out, linkability and inference attacks (slow).
    """
    from .._runtime._compile import compile_clock, work_clock
    from ..io._tables import read_table

    with compile_clock() as clock:
        t0 = work_clock()
        if not isinstance(original, pd.DataFrame):
            original = read_table(original)
        if not isinstance(release, pd.DataFrame):
            release = read_table(release)
        a = align(original, release, quasi_identifiers, sensitive, identifiers, kept_rows=kept_rows, numeric=numeric,
                  categorical=[c for c in (hierarchies or {}) if c not in (numeric or ())])
        risk, seconds = _risk(a, k, population_sizes, threshold)
        utility = _utility(a, hierarchies, target, random_state, seconds)
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
                     release=dict(release_summary) if release_summary is not None else None)
        if figures:
            out.figures = _figures(a, risk, utility)
        about["seconds"]["total"] = work_clock() - t0
    # every figure in "seconds" leaves numba's compiling out (anonymeter's kernels compile on a
    # first attack); what it cost is said apart
    about["compile_seconds"] = clock.seconds
    return out


def _risk(a: Aligned, k, population_sizes, threshold) -> tuple[dict, dict]:
    from .._runtime._compile import work_clock
    from . import _risk as measures

    seconds: dict[str, float] = {}
    out: dict[str, Any] = {}
    t = work_clock()
    out["classes"] = measures.class_risk(a.release[a.quasi_identifiers], k=k,
                                         population_sizes=population_sizes, threshold=threshold)
    seconds["classes"] = work_clock() - t
    if a.numeric:
        X, Xm, ok = a.complete_numbers
        if not ok.all():
            a.assumptions.append(f"{int((~ok).sum())} release rows with a missing numeric quasi-identifier "
                                 "are left out of dRisk, dRiskRMD and record linkage")
        # the sampled distance-based linkage scans every original row per sampled release row:
        # keep that scan near 5e9 distance terms (a million rows x 15 columns: 1,000 samples)
        budget = int(5e9 // max(X.shape[0] * max(X.shape[1], 1), 1))
        linkage = functools.partial(measures.record_linkage, distance_sample=min(5000, max(1000, budget)))
        for name, fn in (("drisk", measures.drisk), ("drisk_rmd", measures.drisk_rmd),
                         ("record_linkage", linkage)):
            t = work_clock()
            try:
                out[name] = fn(X, Xm)
            except DataError as exc:
                # a measure undefined on these data (dRiskRMD on a singular scatter) is withheld
                # and said, not allowed to sink the rest of the report
                out[name] = {"withheld": str(exc)}
                a.assumptions.append(f"{name} withheld: {exc}")
            seconds[name] = work_clock() - t
    if a.sensitive:
        t = work_clock()
        out["attribute_disclosure"] = measures.attribute_disclosure(a.release, a.quasi_identifiers, a.sensitive,
                                                                    reference=a.original)
        seconds["attribute_disclosure"] = work_clock() - t
    return out, seconds


def _utility(a: Aligned, hierarchies, target, random_state, seconds) -> dict:
    from .._runtime._compile import work_clock
    from . import _utility as measures

    out: dict[str, Any] = {}
    if a.numeric:
        X, Xm, _ = a.complete_numbers
        t = work_clock()
        out["numeric"] = measures.numeric_utility(X, Xm, a.numeric)
        seconds["numeric_utility"] = work_clock() - t
    if a.categorical or a.suppressed.any():
        t = work_clock()
        out["categorical"] = measures.categorical_utility(
            a.original[a.categorical], _release_with_suppressed(a), dict(hierarchies or {}), a.suppressed)
        seconds["categorical_utility"] = work_clock() - t
    if target is not None:
        t = work_clock()
        features = [c for c in a.quasi_identifiers if c != target]
        out["model"] = measures.model_utility(a.original.iloc[a.kept].reset_index(drop=True), a.release, target,
                                              features, random_state=random_state)
        seconds["model_utility"] = work_clock() - t
    return out


def _release_with_suppressed(a: Aligned) -> pd.DataFrame:
    """The release's categorical QIs on the original's rows (suppressed rows missing)."""
    full = pd.DataFrame({c: pd.Series([None] * a.original.shape[0], dtype=object) for c in a.categorical},
                        index=pd.RangeIndex(a.original.shape[0]))  # rows even without categorical QIs
    for c in a.categorical:
        column = full[c].to_numpy(copy=True)
        column[a.kept] = a.release[c].astype(object).to_numpy()
        full[c] = column
    return full


def _figures(a: Aligned, risk: dict, utility: dict) -> dict[str, str]:
    from . import _figures as fig

    out: dict[str, str] = {}
    if a.numeric:
        X, Xm, _ = a.complete_numbers
        out["histograms"] = fig.histograms_before_after(X, Xm, a.numeric)
        if len(a.numeric) >= 2:
            out["correlations"] = fig.correlation_before_after(X, Xm, a.numeric)
    from ..metrics import class_ids

    sizes = np.bincount(class_ids(a.release[a.quasi_identifiers]))
    out["class_sizes"] = fig.class_size_histogram(sizes)
    out["summary"] = fig.risk_utility_summary(summary_points(risk, utility))
    return out
