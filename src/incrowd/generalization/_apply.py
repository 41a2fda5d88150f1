"""Apply one node: generalize the quasi-identifiers, suppress the rows of too-small (or too
uniform) classes, and verify the table before anyone writes it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .._runtime import compiled_so_far
from ..exceptions import ParameterError, VerificationError
from ..io import Promise, Verification, in_memory, mark_changed, resolve_roles
from ..privacy import KAnonymity, PrivacyModel, ReleaseCheck, verify_k_anonymity
from ._hierarchy import Hierarchy
from ._lattice import Lattice, resolve_hierarchies
from ._table import _as_level
from ._utility_metrics import check_metric, released_metrics


@dataclass
class GeneralizationResult:
    """The anonymized table and what was done to get it (what :func:`generalize` returns).

    Attributes
    ----------
    table : pandas.DataFrame
        The released rows: quasi-identifiers generalized, identifiers dropped, rows of too
        small (or too uniform) classes suppressed, row order kept.
    levels : dict of str to int
        The generalization level of each quasi-identifier.
    k : int or None
        The k asked for (None where not asked).
    sensitive : str or None
        The sensitive column the models protect.
    n_rows : int
        Rows of the input.
    suppressed : int
        Rows suppressed.
    classes : int
        Equivalence classes of the release.
    min_class_size : int
        Size of its smallest class.
    min_distinct : int or None
        Fewest distinct sensitive values in a class (with a sensitive column).
    seconds : float
        Time of the call, without compiling.
    kept_rows : numpy.ndarray
        Positions in the input of the released rows.
    verification : Verification
        What was verified about ``table``, and where (:class:`incrowd.Verification`).
    compile_seconds : float
        Time numba spent compiling (or loading cached kernels) during the call.
    metrics : dict or None
        The applied node's value of every utility metric.
    models : tuple of PrivacyModel
        The privacy models met beside k (distinct l among them).
    reference : pandas.DataFrame or None
        The input's sensitive column, the distribution the models compare each class with.
    """

    table: pd.DataFrame
    levels: dict[str, int]
    k: int | None
    sensitive: str | None
    n_rows: int
    suppressed: int
    classes: int
    min_class_size: int
    min_distinct: int | None
    seconds: float
    kept_rows: np.ndarray
    verification: Verification = field(default_factory=Verification)
    #: numba compiling (or loading cached kernels) during the call, left out of ``seconds``
    compile_seconds: float = 0.0
    #: every utility metric of the node applied (incrowd.generalization.METRICS)
    metrics: dict | None = None
    #: the privacy models met beside k (incrowd.privacy)
    models: tuple = ()
    #: the input's sensitive column, what the models compare a class with (on the written file too)
    reference: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def height(self) -> int:
        """The sum of the levels: the node's height in the lattice."""
        return int(sum(self.levels.values()))

    def summary(self) -> dict:
        """What the CLI's ``--json`` prints for this release.

        Returns
        -------
        dict
            JSON-ready: the levels and height, rows in and out, suppressed rows, classes, the
            smallest class, the times, ``verification``, k where asked, each model's number
            under its spec key (``"l": 2``) with ``sensitive`` and ``min_distinct``, and
            ``privacy_models``.
        """
        out = {
            "levels": dict(self.levels), "height": self.height, "rows_in": self.n_rows,
            "rows_out": self.n_rows - self.suppressed, "suppressed": self.suppressed,
            "suppressed_fraction": self.suppressed / self.n_rows if self.n_rows else 0.0,
            "classes": self.classes, "min_class_size": self.min_class_size,
            "seconds": self.seconds, "compile_seconds": self.compile_seconds,
            "verification": self.verification,
        }
        if self.k is not None:
            out["k"] = self.k
        out.update({m.key: m.number() for m in self.models if m.spec_number is not None})
        if self.min_distinct is not None:
            out["sensitive"] = self.sensitive
            out["min_distinct"] = self.min_distinct
        if self.metrics is not None:
            out["metrics"] = dict(self.metrics)
        if self.models:
            out["privacy_models"] = [m.describe() for m in self.models]
        return out


def _check_threshold(name: str, value, upper: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 2 <= value <= upper:
        raise ParameterError(f"{name} must be an integer in [2, {what}={upper}]; got {value!r}")
    return int(value)


def generalize(data: pd.DataFrame, levels: Mapping[str, int] | None = None, *, k: int | None = None,
               sensitive: str | None = None,
               hierarchies: Mapping[str, Hierarchy] | str | None = None,
               intervals: Mapping[str, Sequence[float]] | None = None,
               quasi_identifiers: Sequence[str] | str | None = None,
               identifiers: Sequence[str] | str | None = None, metric: str = "loss",
               max_suppression: int | float | str = 0,
               metric_weights: Mapping[str, float] | None = None,
               models: Sequence[PrivacyModel] = ()) -> GeneralizationResult:
    """Generalize ``data`` to ``levels`` and suppress (remove) the rows of classes smaller than
    ``k`` or refused by a model of ``models`` (e.g. fewer than l distinct ``sensitive`` values:
    ``models=[DistinctL(l)]``).

    Quasi-identifiers are the attributes of ``levels`` (plus any in ``quasi_identifiers``, kept at
    level 0); identifiers are dropped; other columns pass unchanged. The returned table has been
    verified k-anonymous (and to meet each model); rows keep their order.

    Without ``levels``, the node is chosen: the one of the ``quasi_identifiers``' lattice with
    the least ``metric`` (:data:`~incrowd.generalization.METRICS`, default ``"loss"``) whose
    suppression for k and the models stays within ``max_suppression``, as :func:`negotiate` answers.
    The result's ``metrics`` gives the applied node's value of every metric.

    Parameters
    ----------
    data : pandas.DataFrame
        The table.
    levels : mapping of str to int or None, default None
        The generalization level of each quasi-identifier (None: chosen, see above).
    k : int or None, default None
        Suppress the rows of classes smaller than k.
    sensitive : str or None, default None
        The sensitive column the models protect.
    hierarchies : mapping of str to Hierarchy, str or None, default None
        A folder of ARX-style hierarchy files, or a hierarchy per attribute.
    intervals : mapping of str to sequence of float or None, default None
        Interval widths per numeric attribute without a hierarchy file.
    quasi_identifiers : str, sequence of str or None, default None
        More quasi-identifiers (kept at level 0 unless in ``levels``).
    identifiers : str, sequence of str or None, default None
        Columns dropped.
    metric : str, default "loss"
        What the chosen node minimizes (without ``levels``).
    max_suppression : int, float or str, default 0
        Rows the chosen node may suppress (without ``levels``).
    metric_weights : mapping of str to float or None, default None
        A weight per quasi-identifier in ``loss``, ``entropy`` and ``precision`` (1 where left
        out), for the choice and the reported ``metrics``.
    models : sequence of PrivacyModel, default ()
        The privacy models (:mod:`incrowd.privacy`, as :func:`negotiate` takes them) of the
        ``sensitive`` column: distinct l (naive l-diversity), entropy l, ...; the rows of a class
        one refuses are suppressed, the release is checked by each, and a model of the whole
        release that refuses it is an error.

    Returns
    -------
    GeneralizationResult
        The release (``table``), verified k-anonymous and to meet each model: ``verification``.
    """
    t0, c0 = time.perf_counter(), compiled_so_far()
    check_metric(metric)
    if not levels:
        levels = _chosen_levels(data, k=k, sensitive=sensitive, hierarchies=hierarchies, intervals=intervals,
                                quasi_identifiers=quasi_identifiers, identifiers=identifiers, metric=metric,
                                max_suppression=max_suppression, metric_weights=metric_weights, models=models)
    _check_request(k, sensitive, models)
    levels = dict(levels or {})
    extra = [] if quasi_identifiers is None else (
        [q.strip() for q in quasi_identifiers.split(",") if q.strip()]
        if isinstance(quasi_identifiers, str) else list(quasi_identifiers))
    qis = list(dict.fromkeys([*levels.keys(), *extra]))
    if not qis:
        raise ParameterError("name the quasi-identifiers: give a level for at least one attribute")
    roles = resolve_roles(data, qis, identifiers)
    qis, hier = resolve_hierarchies(data, list(roles.quasi_identifiers), hierarchies, intervals, sensitive)
    chosen = {a: _as_level(levels.get(a, 0), a, hier[a].max_level) for a in qis}
    n = int(data.shape[0])
    if k is not None:
        k = _check_threshold("k", k, n, "n_rows")
    from ._cells import encode_cells  # missing cells and codes met as publish meets them

    codes0 = {a: encode_cells(hier[a], data[a]) for a in qis}
    codes = np.column_stack([hier[a].code_map(chosen[a])[codes0[a]] for a in qis])
    _, class_of, sizes = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    class_of = class_of.ravel()
    keep = np.ones(n, dtype=bool)
    if k is not None:
        keep &= sizes[class_of] >= k
    distinct = None
    if sensitive is not None and any(m.needs_sensitive for m in models):
        from ..values import sensitive_codes

        # publish's rule (and the verifier's): a missing value is never a distinct value,
        # numbers compare as numbers, trailing blanks make no other value
        s_codes, s_values, _, _, _ = sensitive_codes(data[sensitive])
        for model in models:
            model.check_column(sensitive, len(s_values))
        present = s_codes < len(s_values)
        pairs = np.unique(np.column_stack([class_of[present], s_codes[present]]), axis=0)
        distinct = np.bincount(pairs[:, 0], minlength=sizes.size)
    if models:
        if any(m.key == "differential_privacy" for m in models):
            raise ParameterError("differential_privacy is met by publish (SafePub's random sample and search), "
                                 "not by generalize")
        keep &= _models_keep(data, class_of, int(sizes.size), keep, sensitive, models)
    out = data.drop(columns=list(roles.identifiers)).copy()
    for a in qis:
        out[a] = hier[a].generalize(codes0[a], chosen[a])
    out = out.loc[keep].reset_index(drop=True)
    mark_changed(out, qis)  # a statistical file's labels no longer describe them
    from ._cells import attach_recodes, recode_groups

    # SPSS and Stata get the generalized columns of codes back as labelled codes
    attach_recodes(out, {a: recode_groups(data[a], hier[a]) for a in qis})
    suppressed = int(n - keep.sum())
    reference = data[[sensitive]] if sensitive is not None and sensitive in data.columns else None
    verification = in_memory(Promise(tuple(qis), check=_check(k, sensitive, models, reference)))
    if k is not None:
        report = verify_k_anonymity(out, qis, k)
        verification["k_anonymity"] = report.to_dict()
        if not report:
            raise VerificationError(f"generalized table is not {k}-anonymous ({report.to_dict()}); nothing written")
    min_distinct = int(distinct[class_of[keep]].min()) if distinct is not None and keep.any() else (
        0 if distinct is not None else None)
    if models:
        from ..privacy import check_table

        failures = check_table(out, qis, models, sensitive=[sensitive] if sensitive else [],
                               reference={sensitive: data[sensitive]} if sensitive else None)
        if failures:
            raise VerificationError(f"generalized table is {failures[0]}; nothing written")
        verification["privacy_models"] = {"ok": True, "models": [m.describe() for m in models]}
    kept_sizes = out.groupby(qis, sort=False).size().to_numpy() if len(out) else np.zeros(0, int)
    original = pd.concat([data.loc[keep], data.loc[~keep]]) if (~keep).any() else data
    metrics = released_metrics(out, hier, n_rows=n, levels=chosen, original=original,
                               target=sensitive if sensitive in out.columns else None, weights=metric_weights)
    compile_seconds = compiled_so_far() - c0
    seconds = (time.perf_counter() - t0) - compile_seconds
    return GeneralizationResult(
        table=out, levels=chosen, k=k, sensitive=sensitive, n_rows=n, suppressed=suppressed,
        classes=int(kept_sizes.size), min_class_size=int(kept_sizes.min()) if kept_sizes.size else 0,
        min_distinct=min_distinct, seconds=seconds, compile_seconds=compile_seconds, kept_rows=np.flatnonzero(keep),
        verification=verification, metrics=metrics, models=tuple(models), reference=reference,
    )


def _models_keep(data: pd.DataFrame, class_of: np.ndarray, n_classes: int, keep: np.ndarray, sensitive: str | None,
                 models: Sequence[PrivacyModel]) -> np.ndarray:
    """Per row: whether its class passes every model (the sensitive values compared with the
    whole input's); a model of the whole release that refuses the classes kept is an error."""
    from ..privacy import CodedColumn, Judge
    from ..values import sensitive_codes

    n = int(data.shape[0])
    ones = np.ones(n, dtype=np.int64)
    columns, pairs = [], []
    if sensitive is not None:
        codes, values, ordered, counts, missing = sensitive_codes(data[sensitive])
        columns.append(CodedColumn(sensitive, tuple(values), bool(ordered), counts, bool(missing)))
        pairs.append((np.arange(n, dtype=np.int64), codes.astype(np.int64), ones))
    judge = Judge(models, columns, ones, pairs, None)
    stats = judge.stats(class_of, n_classes)
    passing = ~judge.failing_classes(stats, n_classes)
    kept_classes = np.zeros(n_classes, dtype=bool)
    kept_classes[class_of[keep]] = True
    refused = judge.release_fails(stats, kept_classes & passing)
    if refused is not None:
        raise ParameterError(f"at these levels the release is {refused}; generalize further")
    return passing[class_of]


def _check_request(k: int | None, sensitive: str | None, models: Sequence[PrivacyModel]) -> None:
    """k or a model asked, each model a privacy model in its range, its sensitive column given."""
    if k is None and not models:
        raise ParameterError("give k (k-anonymity), l (naive l-diversity, with sensitive=), or both")
    for model in models:
        if not isinstance(model, PrivacyModel):
            raise ParameterError(f"models must be privacy models of incrowd.privacy; got {model!r}")
        model.checked()
        if model.needs_sensitive and sensitive is None:
            raise ParameterError(f"{model.key} needs the sensitive attribute (sensitive=...)")


def _check(k: int | None, sensitive: str | None, models: Sequence[PrivacyModel] = (),
           reference: pd.DataFrame | None = None) -> ReleaseCheck:
    """The privacy check of a generalized table: k and the models in its one sensitive column
    (compared with the input's, ``reference``)."""
    asked = ((KAnonymity(k),) if k is not None else ()) + tuple(models)
    reads = any(m.needs_sensitive for m in models)
    return ReleaseCheck(asked, sensitive=(sensitive,) if reads and sensitive else (),
                        reference=reference if reads and sensitive else None)


def generalization_promise(result: GeneralizationResult) -> Promise:
    """What a :class:`GeneralizationResult` promises on its written file: k and its models."""
    return Promise(quasi_identifiers=tuple(result.levels),
                   check=_check(result.k, result.sensitive, result.models, result.reference))


def verified_as_written(result: GeneralizationResult, record: dict) -> None:
    """``result`` updated in place with the written file's numbers (its verification record's
    keys and shapes kept: one sensitive column)."""
    if not record:
        return
    verification = result.verification
    if "k_anonymity" in record:
        verification["k_anonymity"] = record["k_anonymity"]
        result.classes = int(record["k_anonymity"]["n_classes"])
        result.min_class_size = int(record["k_anonymity"]["min_class_size"])
    for key, got in record.items():  # each model's own record of the written file
        if key not in ("k_anonymity", "verified_on", "read_back_as"):
            verification[key] = got
    verification["verified_on"] = record["verified_on"]
    verification["read_back_as"] = record["read_back_as"]


def _chosen_levels(data: pd.DataFrame, *, k, sensitive, hierarchies, intervals, quasi_identifiers, identifiers,
                   metric: str, max_suppression, metric_weights=None, models=()) -> dict[str, int]:
    """The levels :func:`negotiate` answers exactly on the quasi-identifiers' lattice."""
    from ._negotiate import negotiate

    _check_request(k, sensitive, models)
    qis = [] if quasi_identifiers is None else (
        [q.strip() for q in quasi_identifiers.split(",") if q.strip()]
        if isinstance(quasi_identifiers, str) else list(quasi_identifiers))
    if not qis:
        raise ParameterError("name the quasi-identifiers: give levels, or quasi_identifiers to choose the node "
                             "by the metric")
    roles = resolve_roles(data, qis, identifiers)
    lattice = Lattice.build(data, list(roles.quasi_identifiers), hierarchies=hierarchies, intervals=intervals,
                            sensitive=sensitive if models else None)
    answer = negotiate(lattice, k=k, max_suppression=max_suppression, metric=metric, weights=metric_weights,
                       models=models)
    if answer.exact is None:
        least = answer.relaxations["max_suppression"]
        raise ParameterError(
            f"no generalization keeps suppression within max_suppression={max_suppression!r} "
            f"({answer.max_suppression} rows)"
            + (f"; the least any node allows is {least.suppressed} rows" if least is not None else "")
            + ": allow more suppression or lower k (or relax the models)")
    return dict(answer.exact.levels)
