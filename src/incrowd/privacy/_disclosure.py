"""The attribute disclosure of a release, per sensitive column: the figures of distinct
l-diversity, entropy l-diversity and t-closeness (the report's ``attribute_disclosure``), and
their checks in the report's verdict, against the bounds the release's models promise
(:class:`DistinctL`, :class:`TCloseness`) or, where it made no promise, the report's thresholds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..values import sensitive_keys
from ._model import PrivacyModel
from ._verify import verify_t_closeness
from .distinct_l import DistinctL
from .t_closeness import TCloseness


def t_closeness_of_classes(release: pd.DataFrame, classes: np.ndarray, sensitive: str, t: float,
                           reference: pd.Series | None = None):
    """:func:`incrowd.privacy.verify_t_closeness` of ``sensitive`` over classes already numbered
    (``classes``, one per row, as :func:`incrowd.values.class_ids` numbers them): the distances, the rows
    in far classes and the largest distance do not depend on how the classes are numbered, so
    a report groups the release by its quasi-identifiers once for every measure."""
    key = f"{sensitive} (class)"  # any name but the sensitive column's own
    # the sensitive column keeps its dtype and the file's metadata (user-missing codes)
    frame = release[[sensitive]].assign(**{key: np.asarray(classes, dtype=np.int64)})
    return verify_t_closeness(frame, [key], sensitive, t, reference=reference)




def attribute_disclosure_of_classes(release: pd.DataFrame, classes: np.ndarray, sens: Sequence[str],
                                    reference: pd.DataFrame | None = None, *, t: float = 1.0,
                                    checks: dict | None = None) -> dict:
    """:func:`incrowd.reporting.attribute_disclosure` over the release's classes numbered already
    (``classes``: each row's, as :func:`incrowd.values.class_ids` numbers them): a report groups
    the release once. Per sensitive column:

    * ``distinct_l``: the fewest distinct sensitive values in a class (distinct l-diversity,
      Machanavajjhala et al. 2007); a missing value is not one;
    * ``entropy_l``: the smallest ``exp(H)`` over classes, H the Shannon entropy (natural log)
      of the class's sensitive distribution, missing values one category of it (entropy
      l-diversity, same paper);
    * ``t``: the largest earth mover's distance of a class's sensitive distribution from the
      reference (t-closeness, Li, Li and Venkatasubramanian 2007), from
      :func:`verify_t_closeness` with ``reference`` = the ORIGINAL column when ``reference`` is
      given (the release's own column otherwise), ordered distance for numeric columns and
      equal distance for text;
    * ``single_value_share``: share of records in classes with a single sensitive value.

    The
    largest distance does not depend on the t checked: ``t`` is the one the verdict checks,
    and ``checks`` (when given) receives each column's check for it to count far rows from."""
    n = int(release.shape[0])
    if n == 0:
        return {s: {"distinct_l": 0, "entropy_l": 0.0, "t": 0.0, "single_value_share": 0.0} for s in sens}
    out = {}
    n_classes = int(classes.max()) + 1
    class_size = np.bincount(classes, minlength=n_classes).astype(np.float64)
    for s in sens:
        keys, _ = sensitive_keys(release[s])
        vals, values = pd.factorize(keys, use_na_sentinel=False)
        vals = np.asarray(vals, dtype=np.int64)
        m = int(vals.max()) + 1
        # the (class, value) pairs hashed, then only the distinct ones sorted: np.unique's pairs
        # and counts, in its order (the entropy sums each class's terms in value order)
        found, pair = pd.factorize(classes * m + vals)
        order = np.argsort(pair)
        pair = np.asarray(pair)[order]
        counts = np.bincount(found, minlength=order.size)[order]
        pair_class = pair // m
        # a missing value is never a distinct value for l
        present = ~pd.isna(np.asarray(values, dtype=object))[pair % m]
        distinct = np.bincount(pair_class[present], minlength=n_classes)
        c = counts.astype(np.float64)
        # H = log f - sum(c log c) / f for a class of size f with value counts c
        clogc = np.bincount(pair_class, weights=c * np.log(c), minlength=n_classes)
        entropy = np.log(class_size) - clogc / class_size
        ref = None if reference is None else reference[s]
        check = t_closeness_of_classes(release, classes, s, t, reference=ref)
        if checks is not None:
            checks[s] = check
        single = distinct <= 1
        out[s] = {
            "distinct_l": int(distinct.min()),
            "entropy_l": float(np.exp(entropy.min())),
            "t": float(check.max_distance),
            "single_value_share": float(class_size[single].sum() / n),
        }
    return out


def _promise(models: Sequence[PrivacyModel], kind: type, column: str | None) -> Any:
    """The model of class ``kind`` among ``models`` that promises the measure on ``column``: one
    for every sensitive column or for this one; a t with a sensitive hierarchy measures another
    distance than the report's, so it is a promise of its own (a model line), not this one."""
    for model in models:
        if type(model) is kind and model.column in (None, column) and measured_by_disclosure(model):
            return model
    return None


def measured_by_disclosure(model: PrivacyModel) -> bool:
    """Whether the verdict checks ``model`` as one of the attribute disclosure's lines (its bound
    is the line's threshold) rather than as a line of its own."""
    return type(model) in (DistinctL, TCloseness) and getattr(model, "hierarchy", None) is None


def checked_t(models: Sequence[PrivacyModel], thresholds: Mapping[str, Any]) -> float:
    """The t the verdict checks the classes against (the promised t, else the threshold), in
    t's range (0, 1]: the report's attribute disclosure checks at it, so the verdict counts the
    rows in far classes from that check."""
    promise = next((m for m in models if type(m) is TCloseness and measured_by_disclosure(m)), None)
    bound = promise.t if promise is not None else thresholds["t"]
    return min(max(float(bound), 1e-9), 1.0)


@dataclass(frozen=True)
class DisclosureCheck:
    """One line of the verdict on a sensitive column, before its status.

    Attributes
    ----------
    measure : str
        The line's measure and threshold name (``l``, ``entropy_l``, ``t``).
    value, limit : float
        The release's figure and the bound it is held to.
    promised : bool or None
        Whether a model of the release promised the bound (None: the line is never a promise).
    driver : callable
        The driver of a review or failure (called only then).
    step : str
        The next step.
    """

    measure: str
    value: float
    limit: float
    promised: bool | None
    driver: Callable[[], str | None]
    step: str


def disclosure_checks(column: str, got: Mapping[str, Any], models: Sequence[PrivacyModel],
                      thresholds: Mapping[str, Any], release: pd.DataFrame, classes: np.ndarray,
                      original: pd.Series, done: Any = None) -> list[DisclosureCheck]:
    """The verdict's checks of ``column``'s attribute disclosure (``got``: its figures, as
    :func:`attribute_disclosure_of_classes` gives them) against the models' promises or the
    report's ``thresholds``; ``done``: the attribute disclosure's t check of the column, reused
    when made at the t checked."""
    distinct = _promise(models, DistinctL, column)
    closeness = _promise(models, TCloseness, column)
    single = float(got.get("single_value_share", 0.0))
    share = f"{100 * single:.3g} %"
    limit = int(distinct.l) if distinct is not None else int(thresholds["l"])
    entropy_limit = float(thresholds["entropy_l"]) if distinct is None else max(float(distinct.l), 1.0)
    t_limit = float(closeness.t) if closeness is not None else float(thresholds["t"])
    t_value = float(got.get("t", 0.0))

    def far() -> str:
        checked = checked_t([closeness] if closeness is not None else [], thresholds)
        check = done if done is not None and done.t == checked else t_closeness_of_classes(
            release, classes, column, checked, reference=original)
        return (f"{column}: {check.n_rows_in_far_classes} records are in classes whose distribution is farther "
                f"than {t_limit:g} from the whole file's (largest distance {t_value:.3g})")

    return [
        DisclosureCheck("l", int(got.get("distinct_l", 0)), limit, distinct is not None,
                        lambda: f"{share} of records are in classes with a single {column} value",
                        f"l-diversity on {column} (l = {limit})"),
        DisclosureCheck("entropy_l", float(got.get("entropy_l", 0.0)), entropy_limit, None,
                        lambda: (f"a class's {column} values are nearly all one value ({share} of records in "
                                 "classes with a single value)"),
                        f"l-diversity or t-closeness on {column}"),
        DisclosureCheck("t", t_value, t_limit, closeness is not None, far,
                        f"t-closeness on {column} (t = {t_limit:g})"),
    ]
