"""One release over numeric and categorical quasi-identifiers together, verified before it is
returned: k-anonymous over all quasi-identifiers (the missing pattern included), and l-diverse
and t-close in every sensitive column when asked."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from .._runtime import backends, compile_clock
from ..exceptions import ParameterError, VerificationError
from ..generalization import (
    DEFAULT_MAX_MEMORY,
    DEFAULT_MAX_NODES,
    check_max_nodes,
    max_suppression_count,
    parse_size,
)
from . import _measures, _models
from ._households import household_codes, household_verifier, publish_id
from ._perturb_steps import apply_steps
from ._prepare import Prepared, _sensitive_of, prepare
from ._risk_targets import written_matches
from ._spec import ReleaseSpec, load_spec


@dataclass
class PublishResult:
    """The release and what was checked about it (what :func:`publish` returns).

    Attributes
    ----------
    table : pandas.DataFrame
        The published rows (identifiers dropped, suppressed rows removed, row order kept,
        other columns unchanged).
    suppressed : int
        How many rows were suppressed.
    kept_rows : numpy.ndarray
        Positions in the input of the published rows.
    spec : ReleaseSpec
        The specification it was published by.
    _summary : dict
        What :meth:`summary` returns.
    hierarchies : dict
        The hierarchy of each categorical quasi-identifier.
    promise : object
        What :meth:`write` verifies on the written file.
    """

    table: pd.DataFrame
    suppressed: int
    kept_rows: np.ndarray
    spec: ReleaseSpec
    _summary: dict[str, Any] = field(default_factory=dict)
    hierarchies: dict[str, Any] = field(default_factory=dict, repr=False)
    promise: Any = field(default=None, repr=False)  # what :meth:`write` verifies on the file

    @property
    def verification(self):
        """What was verified about :attr:`table`, and where (:class:`incrowd.Verification`):
        in memory, then on the written file once :meth:`write` has written it."""
        return self._summary.get("verification")

    def summary(self) -> dict[str, Any]:
        """What the CLI's ``--json`` prints for this release.

        Returns
        -------
        dict
            JSON-ready: the strategy, k, l, t, the columns by role, rows, suppressed rows,
            classes, the information loss, the times and ``verification``.
        """
        return dict(self._summary)

    def write(self, path: str | os.PathLike, *, sep: str | None = None, inputs=(),
              then: Callable[[], None] | None = None) -> Path:
        """Write the release to ``path`` (its name picks the format, as :func:`incrowd.write_table`),
        verified on the written file: read back as a user's reader gives it (CSV as text,
        Parquet through Arrow, SPSS/Stata/SAS through pyreadstat with user-missing codes as
        stored) and checked k-anonymous, l-diverse and t-close there before it replaces
        ``path``. A failure raises :class:`VerificationError` and writes nothing. ``then`` runs
        after the verification and before the rename (the CLI writes the report there).
        The summary's ``verification`` (and :attr:`verification`) then holds the written file's numbers."""
        from ..io import write_release

        if self.promise is None:
            raise ParameterError("this result carries no promise to verify the written file against; "
                                 "make it with incrowd.publish")

        def verified(record: dict[str, Any]) -> None:
            if record:  # the release is the file: its numbers, from here on
                self._summary["verification"] = record
                self._summary["classes"] = int(record["k_anonymity"]["n_classes"])
                self._summary["min_class_size"] = int(record["k_anonymity"]["min_class_size"])
                if "risk_targets" in record:
                    self._summary["risk_targets"] = record["risk_targets"]["targets"]
            if then is not None:
                then()

        write_release(self.table, path, self.promise, sep=sep, inputs=inputs, then=verified)
        return Path(path)

    def report_options(self) -> dict[str, Any]:
        """What :func:`incrowd.report` needs to measure this release against its input."""
        r = self._summary
        return {"quasi_identifiers": [*r["numeric"], *r["categorical"]], "sensitive": r["sensitive"] or None,
                "identifiers": r["identifiers_dropped"], "kept_rows": self.kept_rows, "k": r["k"],
                # numeric QIs by role, not by type: a categorical QI of codes is no number
                "numeric": list(r["numeric"]), "hierarchies": self.hierarchies, "release_summary": r,
                "thresholds": dict(self.spec.report_thresholds), "models": list(self.spec.models),
                "weight": self.spec.weight,  # the survey weight the risk measures weigh rows by
                "benchmarks": list(self.spec.benchmarks),
                **({"household": self.spec.household} if self.spec.household is not None else {})}


def publish(data: pd.DataFrame | str | os.PathLike, spec: str | os.PathLike | Mapping[str, Any] | ReleaseSpec, *,
            base_dir: str | os.PathLike | None = None, max_nodes: int | None = DEFAULT_MAX_NODES,
            max_memory: int | str | None = DEFAULT_MAX_MEMORY, scheduler=None,
            output: str | os.PathLike | None = None, memory_limit: str | None = None,
            progress: Callable[[str], None] | None = None, report: str | os.PathLike | None = None) -> PublishResult:
    """Publish ``data`` (a DataFrame or a file path) as ``spec`` says (a TOML file, TOML text, a
    dict of the same structure, or a :class:`ReleaseSpec`).

    The returned table has been verified k-anonymous over all quasi-identifiers together, and
    l-diverse and t-close (against the whole input's distribution) in every sensitive column
    when the spec asks; a table that fails is never returned (:class:`VerificationError`).

    ``max_nodes`` and ``max_memory`` (bytes or "8G"; None lifts one) bound the lattice of the
    generalize-then-microaggregate strategy as they bound :meth:`Lattice.build`: a larger one
    is refused before any node is evaluated (the node count before a file is read).

    Parameters
    ----------
    data : pandas.DataFrame, str or os.PathLike
        The table, or a file :func:`incrowd.read_table` reads.
    spec : str, os.PathLike, mapping or ReleaseSpec
        The release specification (:func:`incrowd.publishing.load_spec`).
    base_dir : str, os.PathLike or None, default None
        Where relative hierarchy paths of the spec are read from (None: the TOML file's folder,
        or the working directory).
    max_nodes : int or None, default 200000
        The most lattice nodes (None: no limit).
    max_memory : int, str or None, default "8G"
        The most memory for the lattice, in bytes or as ``"8G"`` (None: no limit).
    scheduler : str or distributed.Client, optional
        Publish on Dask: ``local:N`` (a LocalCluster of N workers), the ``tcp://`` address of a
        running scheduler, or a client. ``data`` is then a partitioned dataset (a folder or glob
        of CSV or Parquet files, one partition per file) and the release a Parquet dataset written
        partition by partition into ``output`` (docs/guide/dask.md); ``table`` then holds the
        release's columns and no rows.
    output : str or os.PathLike, optional
        With ``scheduler``: the release's folder, moved into place once the whole release is
        verified; never overwritten.
    memory_limit : str, optional
        With ``scheduler="local:N"``: each worker's memory (e.g. ``"2GiB"``).
    progress : callable, optional
        With ``scheduler``: called with a line saying what runs (the command line's progress).
    report : str or os.PathLike, optional
        With ``scheduler``: a ``.json`` or ``.html`` file that receives the release's report,
        made from per-partition partial results as :func:`incrowd.report` makes it on Dask
        (``about["left_out"]`` names the measures that need the whole file), written before the
        release is moved into place: both are written or neither. In process, report on the
        returned release with ``incrowd.report(data, result.table, **result.report_options())``.

    Returns
    -------
    PublishResult
        The release (``table``), what was verified (``verification``) and its summary.
    """
    max_nodes, max_memory = check_max_nodes(max_nodes), parse_size(max_memory, "max_memory")
    if scheduler is not None:
        return backends.get("dask").publish(  # registered by incrowd.distributed
            data, spec, scheduler=scheduler, output=output, base_dir=base_dir, max_nodes=max_nodes,
            max_memory=max_memory, memory_limit=memory_limit, progress=progress, report=report)
    given = [name for name, value in (("output", output), ("memory_limit", memory_limit), ("report", report))
             if value is not None]
    if given:
        raise ParameterError(f"{given[0]}= is for a partitioned dataset on Dask (scheduler=); an in-process release "
                             "is written with its write method, and reported on with incrowd.report")
    return _publish(data, load_spec(spec, base_dir), max_nodes, max_memory)


def _publish(data, spec: ReleaseSpec, max_nodes: int | None, max_memory: int | None) -> PublishResult:
    """:func:`publish` in this process."""
    if not isinstance(data, pd.DataFrame):
        from ..io import read_table
        from ._gtm import check_spec_nodes

        check_spec_nodes(spec, max_nodes)

        data = read_table(data)
    with compile_clock() as clock:
        t0 = time.perf_counter()
        prep = prepare(data, spec)
        if spec.strategy == "joint":
            from ._joint_release import joint_groups

            groups, levels_per_row, extra = joint_groups(prep)
        else:
            groups, levels_per_row, extra = _gtm_groups(prep, max_nodes, max_memory)
        blocks = extra.pop("blocks", None)
        merged = _enforce_sensitive(prep, groups, blocks)
        if spec.strategy == "joint" and merged is not groups:
            from ._joint_release import joint_levels

            levels_per_row = joint_levels(prep, merged)  # a merged group meets at a higher ancestor
        groups = merged
        if spec.risk_targets:
            from ._risk_targets import suppress_groups

            groups = suppress_groups(prep, groups, levels_per_row)
        _check_suppression(prep, groups)
        keep = groups >= 0
        from ._recode import check_full_suppression

        extra["fully_suppressed"] = check_full_suppression(prep, levels_per_row, keep)
        cells = extra.pop("cells", None)
        table = _table(prep, groups, levels_per_row, keep, cells=cells)
        table = _perturbed(spec, table, extra)
        verification = _verify(prep, table, keep)
        seconds = time.perf_counter() - t0
    report = _report(prep, groups, levels_per_row, keep, verification, extra,
                     max(seconds - clock.seconds, 0.0), clock.seconds, cells)
    return PublishResult(table=table, suppressed=int((~keep).sum()), kept_rows=np.flatnonzero(keep),
                         spec=spec, _summary=report, hierarchies=dict(prep.data_hierarchies),
                         promise=_promise(prep, table, keep))


def _perturbed(spec: ReleaseSpec, table: pd.DataFrame, extra: dict[str, Any]) -> pd.DataFrame:
    """The spec's [[perturb]] steps applied to the release, after its keys are protected (a
    perturbed column is no quasi-identifier: the check that follows is the keys')."""
    if not spec.perturb:
        return table
    table, extra["perturbation"] = apply_steps(table, spec.perturb, spec.names("strata"), spec.random_state)
    return table


def _promise(prep: Prepared, table: pd.DataFrame, keep: np.ndarray | None = None, whole_file: bool = True):
    """What :meth:`PublishResult.write` verifies on the written file (as :func:`_verify` in memory);
    ``keep``: the input rows published (their households, where the release drops the id).
    ``whole_file`` False: ``prep`` is a part of a file, whose rows are not the distribution t
    compares with; such models are verified over the whole release (:func:`check_written_classes`)."""
    from ..io import Promise
    from ..privacy import KAnonymity, ReleaseCheck

    spec = prep.spec
    names = [s.name for s in prep.sensitive]
    # a blank matching any value matches rows of other parts too: such k is the whole release's
    counted = spec.k is not None and (whole_file or spec.missing_matches == "itself")
    models = ((KAnonymity(spec.k),) if counted else ()) + tuple(
        m for m in spec.privacy_models if whole_file or not m.reads_distribution)
    compares = any(m.reads_distribution for m in models)
    check = ReleaseCheck(models, sensitive=tuple(names),
                         ordered={s.name: list(s.values) if s.ordered else False for s in prep.sensitive},
                         reference=prep.frame[names] if compares and names else None,
                         missing_matches=spec.missing_matches, weight=spec.weight, population=prep.population)
    return Promise(
        quasi_identifiers=tuple(c for c in table.columns if prep.roles.get(c) in ("numeric", "categorical")),
        check=check, finite=tuple(prep.numeric),
        # a part's keys are not the file's: its risk is verified over the whole release
        # (check_written_risk), as t is
        risk_targets=dict(spec.risk_targets) if whole_file else {},
        risk_check=_risk_check(prep, keep) if whole_file else None,
        household_check=_household_check(prep, keep))


def _household_check(prep: Prepared, keep: np.ndarray | None):
    """The household check of a release with a household id (None without one)."""
    name = prep.spec.household
    if name is None:
        return None
    return household_verifier(name, list(prep.household_level), _published_households(prep, keep),
                              prep.spec.k, prep.spec.missing_matches)


def _published_households(prep: Prepared, keep: np.ndarray | None) -> np.ndarray | None:
    """The household of each published row (what the written file's checks group by where the
    release drops the id), or None without a household column."""
    if prep.spec.household is None:
        return None
    ids = household_codes(prep)
    return ids if keep is None else ids[keep]


def _risk_check(prep: Prepared, keep: np.ndarray | None):
    """The risk targets' check of a release as read back (None without targets)."""
    spec = prep.spec
    if not spec.risk_targets or spec.weight is None:  # the spec refuses targets without a weight
        return None
    from ._risk_targets import verifier

    return verifier(spec.risk_targets, spec.weight, spec.household, _published_households(prep, keep))


def _gtm_groups(prep: Prepared, max_nodes: int | None = None, max_memory: int | None = None):
    from . import _gtm

    choice = _gtm.choose(prep, max_nodes=max_nodes, max_memory=max_memory, fits=_released_fit(prep))
    if choice.population is not None:
        prep.population = choice.population.labelled(prep, choice.levels)
    cells = None
    if prep.spec.suppression == "cells":
        from ._cells import suppress_cells

        cells = suppress_cells(prep, choice)
        choice.metrics = _gtm.cell_metrics(prep, choice, np.column_stack([cells[a] for a in prep.categorical]))
    groups = choice.groups if choice.groups is not None else _gtm.microaggregate_classes(prep, choice)
    levels_per_row = _levels_per_row(prep, choice.levels)
    extra = {"levels": dict(choice.levels), "nodes_evaluated": choice.nodes_evaluated,
             "metric": choice.metric, "metrics": choice.metrics, "blocks": choice.class_of}
    if choice.differential_privacy is not None:
        extra["differential_privacy"] = choice.differential_privacy
    if cells is not None:
        extra.update(cells=cells, suppression="cells", missing_matches=prep.spec.missing_matches,
                     suppressed_cells={a: int(b.sum()) for a, b in cells.items()})
    return groups, levels_per_row, extra


def _levels_per_row(prep: Prepared, levels: Mapping[str, int]) -> dict[str, np.ndarray]:
    return {a: np.full(prep.n, levels[a], np.int64) for a in prep.categorical}


def _released_fit(prep: Prepared):
    """With risk targets and numeric quasi-identifiers, the search's judgement of a node that
    passes on its classes (:data:`_gtm.Fits`), made by the release's own steps: the numeric
    keys microaggregated within the node's classes, l and t enforced, the groups above a target
    suppressed (:func:`_risk_targets.group_suppression`) and the limit checked. The release
    measures risk over the groups' means, finer keys than the classes, so a node that passes
    on its classes may still be refused; the search then moves on to the next node. None
    without both (the classes are then the published keys)."""
    spec = prep.spec
    if not spec.risk_targets or not prep.numeric or spec.suppression != "rows":
        return None
    from . import _gtm, _risk_targets

    def fits(choice) -> ParameterError | None:
        groups = _gtm.microaggregate_classes(prep, choice)
        released, refusal = _risk_targets.group_suppression(prep, _enforce_sensitive(prep, groups, choice.class_of),
                                              _levels_per_row(prep, choice.levels))
        if refusal is None:
            refusal = _suppression_refusal(prep, released)
        if refusal is None:
            choice.groups = groups  # the release microaggregates this node once
        return refusal

    return fits


def _enforce_sensitive(prep: Prepared, groups: np.ndarray, blocks: np.ndarray | None) -> np.ndarray:
    """The groups with l and t enforced (a failing group merges with its class's nearest), then
    the other models (:func:`_models.enforce`)."""
    return _models.enforce(prep, _enforce_merging(prep, groups, blocks), blocks)


def _enforce_merging(prep: Prepared, groups: np.ndarray, blocks: np.ndarray | None) -> np.ndarray:
    spec = prep.spec
    if not spec.merging_models or not prep.sensitive:
        return groups
    from ._sensitive import SensitiveColumn, enforce_sensitive

    kept = np.flatnonzero(groups >= 0)
    if kept.size == 0:
        return groups
    local = np.unique(groups[kept], return_inverse=True)[1].ravel().astype(np.int64)
    points = np.nan_to_num(prep.Z[kept], nan=0.0)
    if spec.strategy == "joint" and prep.categorical:
        # nearest groups by the joint distance: categorical values embedded so that the squared
        # distance of two values is their lowest common ancestor's level over the top level
        from ._joint_release import categorical_embedding

        points = np.hstack([points, categorical_embedding(prep, kept)])
    columns = [SensitiveColumn(s.name, s.codes[kept], s.n_values, s.ordered, s.reference_counts, s.missing)
               for s in prep.sensitive]
    block = None if blocks is None else blocks[kept]
    if block is None and prep.pattern.any():
        block = prep.pattern[kept]  # rows of different missing patterns never share a group
    merged, failed = enforce_sensitive(local, np.ascontiguousarray(points), columns, spec.merging_models,
                                       blocks=block)
    out = np.full(prep.n, -1, np.int64)
    out[kept] = np.where(failed, -1, merged)
    return out


def _check_suppression(prep: Prepared, groups: np.ndarray) -> None:
    """The limit holds for the release as published, whatever step removed a row."""
    refusal = _suppression_refusal(prep, groups)
    if refusal is not None:
        raise refusal


def _suppression_refusal(prep: Prepared, groups: np.ndarray) -> ParameterError | None:
    return suppression_refusal(prep.spec, int((groups < 0).sum()), prep.n)


def suppression_refusal(spec: ReleaseSpec, suppressed: int, n: int) -> ParameterError | None:
    """The refusal of a release of ``n`` rows that suppresses ``suppressed`` (None within the limit)."""
    limit = max_suppression_count(spec.max_suppression, n)
    if any(m.key == "differential_privacy" for m in spec.models):
        limit = n  # SafePub withholds the rows it does not draw: no limit applies
    if suppressed == n:  # an empty release is never an answer, whatever the limit allows
        return ParameterError(f"the release would suppress all {n} rows, so nothing would be published; "
                              "lower k or l, raise t, or give more rows")
    if suppressed > limit:
        return ParameterError(f"the release would suppress {suppressed} rows, more than max_suppression="
                              f"{spec.max_suppression!r} ({limit} rows); nothing is published")
    return None


def _table(prep: Prepared, groups: np.ndarray | None, levels_per_row: dict[str, np.ndarray],
           keep: np.ndarray, cells: dict[str, np.ndarray] | None = None,
           numbers: np.ndarray | None = None) -> pd.DataFrame:
    """The published table: ``prep``'s rows ``keep``, the numeric QIs their groups' means (or
    ``numbers``, each row's as its groups' rows elsewhere made them), each categorical QI at its
    row's level, ``cells`` blanked."""
    frame = prep.frame
    out = frame.drop(columns=prep.identifiers).copy()
    if prep.numeric and keep.any():
        if numbers is not None:
            published = numbers
        else:
            assert groups is not None  # the rows' groups or their published numbers
            published = prep.released_numbers(groups, keep)
        for j, name in enumerate(prep.numeric):
            out[name] = published[:, j]
    for name in prep.categorical:
        hierarchy = prep.hierarchies[name]
        level = levels_per_row[name]
        if not (level > 0).any():
            continue  # published as given: the cells stay the input's own
        column = out[name].astype(object).to_numpy(copy=True)
        as_given = (level == 0) & ~out[name].isna().to_numpy()
        if as_given.any() and pd.api.types.is_numeric_dtype(out[name].dtype):
            # a generalized column is text throughout (labels such as '*' beside codes would
            # be a column no format stores as one type): its codes as the hierarchy spells them
            from ..generalization import value_labels

            column[as_given] = value_labels(out[name][as_given])
        for L in np.unique(level[level > 0]):
            rows = level == L
            if L > hierarchy.max_level:  # values with no common ancestor (a top of several values)
                column[rows] = "*"
                continue
            column[rows] = hierarchy.generalize(prep.codes0[name][rows], int(L))
        out[name] = column
    if cells:
        from ._cells import blank_cells

        blank_cells(out, cells)
    from ..io import mark_changed

    changed = list(prep.numeric) + [a for a in prep.categorical if (levels_per_row[a][keep] > 0).any()]
    mark_changed(out, changed)  # a statistical file's value labels no longer describe them
    from ._recode import attach

    attach(out, prep, changed[len(prep.numeric):])  # SPSS and Stata get them back as labelled codes
    out = out.loc[keep].reset_index(drop=True)
    if prep.spec.household is not None and prep.spec.household_id != "keep":
        publish_id(out, prep.spec.household, prep.spec.household_id)
    return out


def _verify(prep: Prepared, table: pd.DataFrame, keep: np.ndarray | None = None) -> dict[str, Any]:
    """The promise checked on the table in memory, by the same code that checks the written file."""
    from ..io import verify_frame

    promise = _promise(prep, table, keep)
    out = verify_frame(table, promise, what="the release")
    out["verified_on"] = "table in memory"
    return out


def _report(prep: Prepared, groups, levels_per_row, keep, verification, extra, seconds,
            compile_seconds, cells: dict[str, np.ndarray] | None = None) -> dict[str, Any]:
    spec = prep.spec
    classes = verification["k_anonymity"]  # the verifier counted the published classes already
    n = prep.n
    out: dict[str, Any] = {
        "strategy": spec.strategy,
        # the joint strategy clusters with its own mixed-distance MDAV (and ONA*-style refinement)
        "method": (spec.method if spec.strategy != "joint" else
                   "mixed-distance mdav" + (" + refinement" if spec.refine else "")),
        **spec.promised_numbers(), "privacy_models": [m.describe() for m in spec.models],
        "max_suppression": spec.max_suppression,
        "numeric": prep.numeric, "categorical": prep.categorical,
        "sensitive": [s.name for s in prep.sensitive], "identifiers_dropped": prep.identifiers,
        "missing_numeric": spec.missing_numeric,
        "rows_in": n, "rows_out": int(keep.sum()), "suppressed": int((~keep).sum()),
        "suppressed_fraction": float((~keep).sum() / n),
        "classes": int(classes["n_classes"]), "min_class_size": int(classes["min_class_size"]),
        "numeric_information_loss": _measures.numeric_information_loss(prep.Z, groups),
        "categorical_ncp": _measures.categorical_ncp(prep.hierarchies, prep.codes0, levels_per_row, keep, cells),
        "mean_generalization_height": _measures.mean_height(prep.hierarchies, levels_per_row, keep, cells),
        "seconds": seconds, "compile_seconds": compile_seconds,
        "verification": verification,
    }
    out.update(_households_summary(spec, prep))
    if "risk_targets" in verification:  # each target with the value the release reaches
        out["risk_targets"] = verification["risk_targets"]["targets"]
    out.update({key: value for key, value in extra.items() if key != "blocks"})
    return out


def _households_summary(spec: ReleaseSpec, prep: Prepared) -> dict[str, Any]:
    """The summary's household id and household-level columns (none without a household column)."""
    if spec.household is None:
        return {}
    return {"household": spec.household, "household_id": spec.household_id,
            "household_level": list(prep.household_level)}


def written_summary(spec: ReleaseSpec, prep: Prepared, choice, rows_out: int, classes: int, smallest: int,
                    **more) -> dict[str, Any]:
    """The summary of a release written in parts (the in-process summary's figures it has)."""
    return {"strategy": spec.strategy, "method": spec.method, **spec.promised_numbers(),
            "max_suppression": spec.max_suppression, "numeric": prep.numeric, "categorical": prep.categorical,
            "sensitive": [s.name for s in prep.sensitive], "identifiers_dropped": prep.identifiers,
            "rows_in": prep.n, "rows_out": rows_out, "suppressed": prep.n - rows_out,
            "suppressed_fraction": (prep.n - rows_out) / prep.n, "classes": classes, "min_class_size": smallest,
            "levels": dict(choice.levels), "nodes_evaluated": choice.nodes_evaluated, "metric": choice.metric,
            "metrics": choice.metrics,
            # the models as the release's check names them, verified on the written partitions
            "models": [f"{spec.k}-anonymous"] + [m.describe() for m in spec.merging_models],
            **_households_summary(spec, prep), **more}


def written_classes(table: pd.DataFrame, quasi_identifiers: list[str],
                    sensitive: Mapping[str, tuple[list, bool, np.ndarray, bool]]) -> tuple[pd.DataFrame, dict]:
    """A written part's published classes (their QI values as text): ``rows``, and per sensitive
    column (``sensitive``: the whole file's values, :class:`_prepare.Whole`'s) each class's rows
    per value, the value as its code among the whole file's (``__value__``)."""
    qis = list(quasi_identifiers)
    n = int(table.shape[0])
    if qis:
        codes = np.empty((n, len(qis)), np.int64)
        texts = []
        for j, name in enumerate(qis):
            codes[:, j], text = _text_codes(table[name])
            texts.append(np.concatenate([text, np.array([None], dtype=object)]))  # code -1 (missing): None
        # numbered column by column (below n after each step, so never past int64), missing
        # (-1) shifted to 0
        classes = np.zeros(n, np.int64)
        for j in range(len(qis)):
            width = int(codes[:, j].max(initial=-1)) + 2
            classes = np.asarray(pd.factorize(classes * width + codes[:, j] + 1)[0], np.int64)
        n_classes = int(classes.max(initial=-1)) + 1
        first = np.full(n_classes, n, np.int64)
        np.minimum.at(first, classes, np.arange(n, dtype=np.int64))
        keys = pd.DataFrame({name: pd.Series(text[codes[first, j]], dtype=object)
                             for j, (name, text) in enumerate(zip(qis, texts))})
    else:
        classes, n_classes = np.zeros(n, np.int64), 1
        keys = pd.DataFrame(index=range(1))
    sizes = keys.assign(rows=np.bincount(classes, minlength=n_classes).astype(np.int64))
    values = {}
    for name, whole in sensitive.items():
        value = _sensitive_of(table[name].reset_index(drop=True), whole).codes
        m = len(whole[0]) + 1
        pairs, pair_of = pd.factorize(classes * m + value)
        rows = np.bincount(pairs, minlength=len(pair_of)).astype(np.int64)
        of = np.asarray(pair_of, np.int64)
        values[name] = keys.iloc[of // m].reset_index(drop=True).assign(__value__=of % m, rows=rows)
    return sizes, values


def _text_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's code (-1: missing) and each code's text, cells of equal text sharing a code:
    the classes a reader sees when it compares the cells as text, made without writing every
    cell as text (one cell of each distinct value)."""
    cells = column.reset_index(drop=True)
    missing = cells.isna().to_numpy()
    if pd.api.types.is_float_dtype(cells.dtype):
        # by bits: 0.0 and -0.0 are equal numbers but read "0.0" and "-0.0"
        bits = cells.to_numpy(dtype=np.float64, na_value=np.nan).view(np.int64)
        factor = np.full(cells.size, -1, np.int64)
        factor[~missing] = pd.factorize(bits[~missing])[0]
    else:
        factor, uniques = pd.factorize(cells, use_na_sentinel=True)
        if cells.dtype == object and not all(isinstance(v, str) for v in uniques):
            # values that compare equal may read differently (1 and 1.0, Decimal("1.0") and
            # Decimal("1.00")): such a column is compared as text cell by cell
            factor = pd.factorize(cells.astype(str).where(~missing, None), use_na_sentinel=True)[0]
    # codes 0, 1, ... in order of first appearance: the first row of each, without a sort
    factor = np.asarray(factor, np.int64)
    present = factor >= 0
    first = np.full(int(factor.max(initial=-1)) + 1, cells.size, np.int64)
    np.minimum.at(first, factor[present], np.flatnonzero(present))
    text = cells.iloc[first].astype(str).to_numpy(dtype=object)
    # distinct values that read alike (a category 1 and a category "1") are one class as text
    same, distinct = pd.factorize(text)
    code = np.full(cells.size, -1, np.int64)
    code[present] = np.asarray(same, np.int64)[factor[present]]
    return code, np.asarray(distinct, dtype=object)


def check_written_classes(spec: ReleaseSpec, sizes: list[pd.DataFrame], values: list[dict[str, pd.DataFrame]],
                          quasi_identifiers: list[str], rows: int,
                          sensitive: Mapping[str, tuple[list, bool, np.ndarray, bool]] | None = None) -> tuple[int, int]:
    """k, l and t over a release written in parts, from each part's published classes
    (:func:`written_classes`): a class of equal published values may span parts. Also the
    suppression limit over the whole release (l's and t's merging inside a class may suppress
    rows the search did not). ``sensitive``: the whole file's sensitive values (their order and
    rows per value: the distribution t compares each class with). The classes and the smallest
    (with ``missing_matches = "any"``: the fewest rows a published key matches, a blank matching
    any value in every part); a failure raises and nothing is moved into place."""
    qis = list(quasi_identifiers)
    table = pd.concat(sizes, ignore_index=True)
    classes = table.groupby(qis, dropna=False, sort=False)["rows"].sum() if qis else table["rows"]
    suppressed = rows - int(classes.sum())
    limit = max_suppression_count(spec.max_suppression, rows)
    if suppressed > limit:
        raise ParameterError(f"the release would suppress {suppressed} rows, more than max_suppression="
                             f"{spec.max_suppression!r} ({limit} rows); nothing is published")
    fewest = int(classes.min()) if classes.size else 0
    if spec.missing_matches == "any" and classes.size:  # a blank matches every value, in every part
        fewest = int(written_matches(sizes, qis).min())
    if classes.size == 0 or fewest < spec.k:
        said = "fewest matches" if spec.missing_matches == "any" else "smallest class"
        raise VerificationError(f"the written release is not {spec.k}-anonymous ({said} {fewest}); nothing was "
                                "written")
    # the merging models (distinct l, t), each by its own check of the classes' counts as written
    for model in spec.merging_models:
        for name in (values[0] if values else {}):
            if model.column not in (None, name):
                continue
            stats = _written_stats(pd.concat([v[name] for v in values], ignore_index=True), qis, name,
                                   (sensitive or {}).get(name))
            failing = np.flatnonzero(~model.classes_ok(stats))
            if stats.sizes.size < classes.size or failing.size:
                fewest = int((stats.counts > 0).sum(axis=1).min()) if stats.sizes.size else 0
                distances = getattr(model, "distances", None)  # t's: how far the farthest class is
                said = (f"a class at distance {float(distances(stats)[failing].max()):.4g}"
                        if distances is not None and failing.size else f"a class holds {fewest} distinct values")
                raise VerificationError(f"the written release does not meet {model.describe()} in {name!r} "
                                        f"({said}); nothing was written")
    return int(classes.size), fewest


def _written_stats(pairs: pd.DataFrame, qis: list[str], name: str, whole) -> Any:
    """The written classes of one sensitive column as the models read them (``whole``: its
    values in the whole file: order, ordered, rows per code, missing)."""
    from ..privacy import ClassStats

    pairs = pairs.groupby([*qis, "__value__"], dropna=False, sort=False)["rows"].sum().reset_index()
    number = pairs.groupby(qis, dropna=False, sort=False).ngroup().to_numpy(np.int64) if qis else \
        np.zeros(pairs.shape[0], np.int64)
    n = int(number.max()) + 1 if number.size else 0
    code = pairs["__value__"].to_numpy(np.int64)
    order, ordered, reference, missing = whole if whole is not None else ([], False, None, False)
    width = len(reference) if reference is not None else int(code.max()) + 1 if code.size else 1
    counts = np.zeros((n, width), np.int64)
    np.add.at(counts, (number, code), pairs["rows"].to_numpy(np.int64))
    return ClassStats(sizes=counts.sum(axis=1), counts=counts,
                      table_counts=None if reference is None else np.asarray(reference, np.int64),
                      missing=bool(missing), ordered=bool(ordered), values=tuple(order),
                      first_rows=np.zeros(n, np.int64), column=name)
