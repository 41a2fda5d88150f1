"""The risk-utility map: the release and its neighbours, each re-made with ``incrowd.publish``
and measured, as points of risk against loss.

Neighbours: k - 1 (when at least 2) and k + 1 with the rest of the spec unchanged; for the
generalize-then-microaggregate strategy, the lattice nodes one level above and below the
release's in one categorical column, the others held at the release's levels (``[levels]``).
A neighbour that cannot be made (more suppression than ``max_suppression`` allows, a level
beyond the hierarchy) is left out and said.

Each point: ``label``, ``risk`` (the marketer risk of the re-made release: its classes over its
published rows, the expected share of records re-identified), ``loss`` (the information lost
per quasi-identifier: the numeric information loss over all rows and the categorical NCP over
all rows, averaged with the numbers of numeric and categorical quasi-identifiers as weights) and
``spec`` (the spec that makes it: ``incrowd publish --spec``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import pandas as pd

from ..exceptions import IncrowdError


def point_of(summary: dict[str, Any]) -> tuple[float, float]:
    """(risk, loss) of a release from its summary (:meth:`PublishResult.summary`).

    Parameters
    ----------
    summary : dict
        The release's summary.

    Returns
    -------
    tuple of float
        The marketer risk and the loss per quasi-identifier, as the module defines them.
    """
    rows = max(int(summary["rows_out"]), 1)
    p_num, p_cat = len(summary["numeric"]), len(summary["categorical"])
    loss = ((p_num * float(summary["numeric_information_loss"]) + p_cat * float(summary["categorical_ncp"]))
            / max(p_num + p_cat, 1))
    return float(summary["classes"]) / rows, loss


def risk_utility_map(data: pd.DataFrame, spec, release_summary: Mapping[str, Any] | None = None
                     ) -> tuple[list[dict[str, Any]], list[str]]:
    """The points of the map and the neighbours left out (with why).

    Parameters
    ----------
    data : pandas.DataFrame
        The original the release was made from.
    spec : ReleaseSpec, dict, str or path
        The release's spec.
    release_summary : dict, optional
        The release's own summary (it is re-made when not given).

    Returns
    -------
    tuple
        ``(points, left_out)``: the points (the release first, labelled "release") and one
        line per neighbour that could not be made.
    """
    from .._runtime import check_cancelled
    from ..publishing import load_spec, publish

    spec = load_spec(spec)
    summary = dict(release_summary) if release_summary is not None else publish(data, spec).summary()
    risk, loss = point_of(summary)
    points = [{"label": "release", "risk": risk, "loss": loss, "spec": spec.to_dict()}]
    candidates: list[tuple[str, Any]] = []
    if spec.k - 1 >= 2:
        candidates.append((f"k = {spec.k - 1}", dataclasses.replace(spec, k=spec.k - 1)))
    candidates.append((f"k = {spec.k + 1}", dataclasses.replace(spec, k=spec.k + 1)))
    levels = summary.get("levels") or {}
    if spec.strategy != "joint" and levels:
        for column, level in levels.items():
            for step in (-1, 1):
                if level + step < 0:
                    continue
                moved = {**levels, column: level + step}
                label = f"{column} level {level + step}" + (" (one up)" if step > 0 else " (one down)")
                candidates.append((label, dataclasses.replace(spec, levels=moved)))
    left_out = []
    for label, alternative in candidates:
        check_cancelled()
        try:
            made = publish(data, alternative).summary()
        except IncrowdError as exc:
            left_out.append(f"{label}: {exc}")
            continue
        r, l_ = point_of(made)
        points.append({"label": label, "risk": r, "loss": l_, "spec": alternative.to_dict()})
    return points, left_out
