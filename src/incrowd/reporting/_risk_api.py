"""``incrowd.risk``: the re-identification risk of a file as it is, before or after protection.

The measures are sdcMicro 5.8.0's (``freqCalc``, ``indivRisk``, ``measure_risk``, ``suda2``)
and ARX's population-uniqueness estimates; ``docs/risk.md`` defines each one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, WorkBudgetExceeded, cell_text
from ..io import FORMATS, suffix
from ..privacy import MODEL_RISK_METHODS
from ..privacy import model_risk as measure_model_risk
from ..privacy import sample_risk as sample

#: the k of the k-anonymity violations counted in the summary
K_VALUES = (2, 3, 5)
#: the riskiest records shown in the JSON and HTML report (with their key values)
_SHOWN = 20


@dataclass
class RiskResult:
    """The risk of every record of a file and the file's summary figures (made by :func:`risk`).

    Parameters
    ----------
    records : pandas.DataFrame
        One row per input row, in the input's order and with its index: ``fk``, ``Fk``,
        ``individual_risk``, ``suda_score`` and ``suda_dis_score``, and ``household_risk``
        (with a household column).
    about : dict
        What was measured: rows, quasi-identifiers, weight, household, population, threshold,
        seconds.
    """

    records: pd.DataFrame | None
    about: dict[str, Any]
    _summary: dict[str, Any] = field(init=False, repr=False, default_factory=dict)
    _top_keys: pd.DataFrame | None = field(init=False, repr=False, default=None)  # the riskiest rows' keys
    #: the same keys with a statistical file's codes spelled by their value labels
    _top_labels: pd.DataFrame | None = field(init=False, repr=False, default=None)
    #: the file measured, when :func:`risk` read it: never overwritten by :meth:`write`
    _source: tuple = field(init=False, repr=False, default=())
    #: a partitioned dataset's riskiest records, gathered from its partitions (``records`` is
    #: None there: every record's measures stay in the partitions)
    _riskiest_rows: list = field(init=False, repr=False, default_factory=list)
    _riskiest_labels: list = field(init=False, repr=False, default_factory=list)
    #: the riskiest rows as read, until their keys are spelled (the first time they are shown:
    #: a report without them never loads the value labels)
    _top_rows: pd.DataFrame | None = field(init=False, repr=False, default=None)

    def summary(self) -> dict[str, Any]:
        """The file's figures.

        Returns
        -------
        dict
            ``global_risk`` (mean individual risk), ``global_risk_percent``,
            ``expected_reidentifications`` (sum of the individual risks), ``highest_individual_risk``,
            ``sample_uniques`` (records with ``fk = 1``), ``records_above_threshold``
            (individual risk above the threshold), ``k_violations`` (``{2: .., 3: .., 5: ..}``:
            records with ``fk < k``); with a household column ``household_risk`` (the mean),
            ``highest_household_risk`` and ``household_expected_reidentifications``; with
            weights ``model_risk`` (sdcMicro's modRisk); with a known sampling fraction
            ``sampling_fraction`` and ``population_uniqueness`` (the estimates).
        """
        return dict(self._summary)

    def to_dict(self, records: bool = False, value_labels: bool = False) -> dict[str, Any]:
        """JSON-ready: ``about`` and ``summary``, and the riskiest records (up to 20, with their
        key values; ``row`` counts the data rows from 1).

        Parameters
        ----------
        records : bool
            Also give every record's measures (``records``: a list of dicts, in order).
        value_labels : bool
            Give a statistical file's codes in the riskiest records by their value labels (as
            the HTML page and the web show them) instead of the codes; a user-missing code is
            spelled by its label (else its code) either way.

        Returns
        -------
        dict
        """
        out: dict[str, Any] = {"about": self.about, "summary": self.summary(),
                               "riskiest": self._riskiest(_SHOWN, value_labels)}
        if records:
            out["records"] = self._in_memory().reset_index(drop=True).to_dict(orient="records")
        return out

    def to_json(self, records: bool = False) -> str:
        """:meth:`to_dict` as one strict JSON document (non-finite numbers as null).

        Parameters
        ----------
        records : bool
            Also give every record's measures.

        Returns
        -------
        str
        """
        from ..io import json_dumps as dumps

        return dumps(self.to_dict(records=records))

    def to_html(self, path: str | os.PathLike | None = None, *, inputs=()) -> str:
        """One self-contained page like the report's (inline CSS, no script, nothing fetched),
        written atomically to ``path`` when given.

        Parameters
        ----------
        path : str or path-like, optional
            Where to write the page.
        inputs : tuple
            Files the page must never overwrite.

        Returns
        -------
        str
            The HTML text.
        """
        text = _render(self)
        if path is not None:
            _write_text(path, text, (*inputs, *self._source))
        return text

    def write(self, path: str | os.PathLike, *, inputs=()) -> None:
        """Atomically, by the file's extension: the report as HTML (``.html``, ``.htm``) or JSON
        (``.json``), or every record's measures (``.csv``, ``.parquet``: :meth:`write_records`).

        Parameters
        ----------
        path : str or path-like
            Where to write.
        inputs : tuple
            Files it must never overwrite (besides the file measured, when :func:`risk` read it).

        Returns
        -------
        None
        """
        kind = output_kind(path)
        if kind == "records":
            self.write_records(path, inputs=inputs)
        elif kind == "html":
            self.to_html(path, inputs=inputs)
        else:
            _write_text(path, self.to_json() + "\n", (*inputs, *self._source))

    def records_table(self) -> pd.DataFrame:
        """Every record's measures as :meth:`write_records` writes them: ``row`` (the data row,
        counted from 1, in the input's order), then the columns of :attr:`records`.

        Returns
        -------
        pandas.DataFrame
        """
        table = self._in_memory().reset_index(drop=True)
        table.insert(0, "row", np.arange(1, len(table) + 1, dtype=np.int64))
        return table

    def write_records(self, path: str | os.PathLike, *, inputs=()) -> None:
        """Write every record's measures (:meth:`records_table`) as CSV or Parquet (by the
        extension; ``.csv.gz`` and the like compress), atomically through
        :func:`incrowd.write_table`; never over the file measured or ``inputs``.

        Parameters
        ----------
        path : str or path-like
            Where to write: ``.csv`` (compressed or not) or ``.parquet``.
        inputs : tuple
            Files it must never overwrite.

        Returns
        -------
        None
        """
        from ..io import write_table

        if output_kind(path) != "records":
            raise ParameterError(f"{path}: the records are written as {_RECORD_SUFFIXES}")
        self._in_memory()
        write_table(self.records_table(), path, sep=",", inputs=(*inputs, *self._source))

    def _in_memory(self) -> pd.DataFrame:
        if self.records is None:
            raise ParameterError("the records of a partitioned dataset stay in its partitions: they are "
                                 "written partition by partition while the risk is measured (records=)")
        return self.records

    def _riskiest(self, count: int, value_labels: bool = False) -> list[dict[str, Any]]:
        if self.records is None:
            return [dict(row) for row in (self._riskiest_labels if value_labels else self._riskiest_rows)[:count]]
        order = np.argsort(-self.records["individual_risk"].to_numpy(), kind="stable")[:count]
        if self._top_rows is not None and self._top_keys is not None:
            self._top_labels = key_values(self._top_keys, self._top_rows)  # spells user-missing codes in both
            self._top_rows = None
        rows = []
        top = self._top_labels if value_labels and self._top_labels is not None else self._top_keys
        for pos in order.tolist():
            row: dict[str, Any] = {"row": pos + 1}
            if top is not None and pos in top.index:
                row.update({str(k): _plain(v) for k, v in top.loc[pos].items()})
            row.update({k: _plain(v) for k, v in self.records.iloc[pos].items()})
            rows.append(row)
        return rows


def key_values(top: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Spell, in the riskiest rows' key values ``top``, each user-missing code of a statistical
    file by its value label (else its code): the figures count it as a value of its own, so it is
    shown as one, not as a missing value. Returns the same keys with every code that has a value
    label spelled by it, as a reader knows them (the HTML page and the web show these)."""
    spelled = top.copy()
    for j, q in enumerate(top.columns):
        column = rows[q]
        if not pd.api.types.is_float_dtype(column.dtype) or not column.attrs.get("statfile"):
            continue
        # value labels' module only for a statistical file's codes: a CSV or Parquet file has none
        from ..generalization import as_value_labels, qi_labels

        labels, user = qi_labels(column)
        named = as_value_labels(column, labels)
        if user.any():
            top.iloc[np.flatnonzero(user), j] = named[user]
        # a code without a label comes back as its own text: only a real label replaces it
        has_label = np.fromiter((n is not None and n != c for n, c in zip(named, labels)), bool, len(labels))
        spelled.iloc[np.flatnonzero(has_label | user), j] = named[has_label | user]
    return spelled


def _plain(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    return value


#: what ``write`` writes, by the file's extension: the report, or every record's measures in
#: one of the I/O registry's formats (a CSV may be compressed)
_REPORTS = {".html": "html", ".htm": "html", ".json": "json"}
_RECORDS = ("csv", "parquet")
_KINDS = {**_REPORTS, **{s: "records" for name in _RECORDS for s in FORMATS[name].suffixes}}
#: the records' suffixes, as messages list them
_RECORD_SUFFIXES = " or ".join(suffix(name) for name in _RECORDS)


def output_kind(path: str | os.PathLike) -> str:
    """``"html"``, ``"json"`` (the report) or ``"records"`` (every record's measures) by the
    file's extension; a :class:`ParameterError` for any other, standard output included."""
    from ..io import compression, is_stdout

    whole = os.path.basename(os.fspath(path)).lower()
    name = compression.strip_suffix(whole)
    extension = os.path.splitext(name)[1]
    kind = None if is_stdout(path) else _KINDS.get(extension)
    if kind is None:
        raise ParameterError(f"{os.fspath(path)}: the risk is written as .html, .json, {_RECORD_SUFFIXES} "
                             "(the report, or every record's measures); name such a file")
    csv = suffix("csv")
    if name != whole and extension != csv:
        raise ParameterError(f"{os.fspath(path)}: only a {csv} is written compressed "
                             f"({csv}{compression.suffix('gzip')}, ...)")
    return kind


def _write_text(path, text: str, inputs) -> None:
    from ..io import atomic_output

    with atomic_output(path, inputs=inputs, what="risk report") as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)


def risk(data: pd.DataFrame | str | os.PathLike, quasi_identifiers: Sequence[str], *,
         weight: str | None = None, household: str | None = None, population: float | None = None,
         threshold: float = 0.2, suda_original_scores: bool = True, suda: bool = True,
         suda_max_size: int | None = None, model_risk: str | None = "default", scheduler=None, records=None,
         memory_limit: str | None = None, progress=None) -> RiskResult:
    """The re-identification risk of every record of ``data`` as it is (before or after
    protection), as sdcMicro and ARX measure it.

    Parameters
    ----------
    data : DataFrame or path
        The file (any format :func:`incrowd.read_table` reads).
    quasi_identifiers : sequence of str
        The key variables: the columns an intruder may know. A missing value matches any value,
        as in sdcMicro's ``freqCalc``.
    weight : str, optional
        The sampling-weight column (each row stands for that many people). Without it the
        sample is taken for the population (individual risk ``1 / fk``), unless ``population``
        is given.
    household : str, optional
        The household-id column: adds ``household_risk``, the probability that some member of
        the row's household is re-identified.
    population : float, optional
        The population's size. It sets the sampling fraction of the population-uniqueness
        estimates (otherwise rows / sum of weights); without ``weight`` each row stands for
        ``population / rows`` people (a simple random sample).
    threshold : float
        Individual risk above which a record counts in ``records_above_threshold``.
    suda_original_scores : bool, default True
        sdcMicro's ``suda2(original_scores=)``: True (its default) weighs a minimal sample
        unique of size s among M keys by ``(M - s)!`` (Elliot et al.); False by
        ``(2^(M - s) - 1) s! (M - s)! / M!``, as the IHSN's original implementation did.
    suda : bool, default True
        Measure SUDA2. False leaves it out (no ``suda_score`` and ``suda_dis_score``); the
        other measures never depend on it. SUDA2's search is exponential in the keys: where it
        would take more than its work budget it is skipped, and ``summary()["suda_skipped"]``
        says why and what to do.
    suda_max_size : int, optional
        The largest minimal sample unique SUDA2 searches, in keys (default: all keys); larger
        ones add nothing to the scores.
    model_risk : {"default", "CE"} or None, default "default"
        sdcMicro's log-linear model risk (``modRisk`` over the main effects of the keys, as
        factors): ``"default"`` its standard model, ``"CE"`` Clogg and Eliason's with the
        weights as an offset; None leaves it out. Measured with sampling weights only (``weight``
        or ``population``): ``summary()["model_risk"]`` holds ``method``, ``gr1`` (the
        probability, per key combination, that a sample unique is population unique, summed over
        the sample uniques), ``gr2`` (the expected correct matches of the sample uniques, the
        same way) and ``cells`` (the combinations of the keys' values). Measured in one process
        only: with ``scheduler`` the summary says it is left out (``model_risk_skipped``).
    scheduler : str or distributed.Client, optional
        Measure on Dask (extra ``incrowd[dask]``): ``"local:N"`` (N local worker processes), the
        ``tcp://`` address of a running scheduler, or a client. ``data`` is then a partitioned
        dataset (a folder or glob of Parquet or CSV files, one partition per file) or a file;
        fk and Fk are summed partition by partition and no process holds the whole file
        (docs/scale-out.md). The figures equal the in-process ones (sums of weights and of
        risks to the last bits of rounding); ``records`` is None.
    records : str or path-like, optional
        With ``scheduler``: a folder to write every record's measures into, one file per
        partition (``.csv`` or ``.parquet`` files by the folder's suffix, Parquet otherwise),
        moved into place only when every partition is written.
    memory_limit : str, optional
        With ``scheduler="local:N"``: each worker's memory (Dask's ``memory_limit``, e.g.
        ``"2GiB"``); a worker above it spills to disk, then is restarted.
    progress : callable, optional
        With ``scheduler``: called with a line saying what runs (the command line's progress).

    Returns
    -------
    RiskResult
        ``.records`` (per row: ``fk``, ``Fk``, ``individual_risk``, ``suda_score``,
        ``suda_dis_score``, ``household_risk``) and ``.summary()``.
    """
    from .._runtime import cancel, check_cancelled, work_clock

    if scheduler is not None:
        from .._runtime import backends

        result = backends.get("dask").risk(  # registered by incrowd.distributed
            data, quasi_identifiers, scheduler=scheduler, weight=weight, household=household,
            population=population, threshold=threshold, suda_original_scores=suda_original_scores,
            suda=suda, suda_max_size=suda_max_size, records=records, memory_limit=memory_limit, progress=progress)
        if model_risk is not None and (weight is not None or population is not None):
            result._summary["model_risk_skipped"] = ("the log-linear model risk is measured in one process; on Dask "
                                                     "it is left out")
        return result
    if records is not None or memory_limit is not None:
        raise ParameterError(f"{'records' if records is not None else 'memory_limit'}= is for a partitioned dataset "
                             "on Dask (scheduler=); an in-process result writes its records with write_records")
    t0 = work_clock()
    source: tuple = ()
    if not isinstance(data, pd.DataFrame):
        from ..io import read_table

        source = (data,)
        data = read_table(data)
    qis = check_names(data, quasi_identifiers, weight, household)
    threshold = check_options(threshold, suda_original_scores, suda, suda_max_size)
    if model_risk is not None and model_risk not in MODEL_RISK_METHODS:
        raise ParameterError(f"model_risk must be one of {', '.join(MODEL_RISK_METHODS)} or None; got "
                             f"{cell_text(model_risk)}")
    n = int(data.shape[0])
    if n == 0:
        raise DataError("the file has no rows; there is no risk to measure")
    weights = None if weight is None else sample.sampling_weights(data[weight], weight)
    households = None if household is None else sample.household_ids(data[household], household)
    if population is not None:
        population = check_population(population, n)
        if weights is None:
            weights = np.full(n, population / n)
    seconds: dict[str, float] = {}
    t = work_clock()
    codes = sample.key_codes(data, qis)
    fk, Fk = sample.frequencies(codes, weights)
    rk = sample.individual_risk(fk, None if weights is None else Fk)
    seconds["individual_risk"] = work_clock() - t
    records = pd.DataFrame({"fk": fk.astype(np.int64), "Fk": Fk, "individual_risk": rk}, index=data.index)
    # a web job stops between the measures and shows how far it got
    check_cancelled()
    cancel.report_progress(1, 4)

    summary = risk_figures(rk, fk, threshold)

    if suda:
        t = work_clock()
        try:
            scores = _suda2(data, qis, codes, suda_original_scores, suda_max_size)
        except WorkBudgetExceeded as exc:  # the measures above stand without it
            summary["suda_skipped"] = str(exc)
        else:
            if scores is not None:
                records["suda_score"], records["suda_dis_score"] = scores
                suda_figures(summary, *scores)
        seconds["suda2"] = work_clock() - t
    check_cancelled()
    cancel.report_progress(2, 4)

    if households is not None:
        t = work_clock()
        hh = sample.household_risk(rk, households)
        records["household_risk"] = hh
        summary["household_risk"] = float(hh.mean())
        summary["highest_household_risk"] = float(hh.max())
        summary["household_expected_reidentifications"] = float(hh.sum())
        seconds["household_risk"] = work_clock() - t
    check_cancelled()
    cancel.report_progress(3, 4)

    if model_risk is not None and weights is not None:
        t = work_clock()
        try:
            summary["model_risk"] = measure_model_risk(codes, weights, model_risk)
        except ParameterError as exc:  # a grid too large to fit: the other measures stand
            summary["model_risk_skipped"] = str(exc)
        seconds["model_risk"] = work_clock() - t

    # a missing value is a class value here
    add_uniqueness(summary, seconds, lambda: np.bincount(pd.factorize(sample.row_ids(codes + 1))[0]),
                   sampling_fraction(n, None if weights is None or population is not None else float(weights.sum()),
                                     population))
    about = about_run(n, qis, weight, household, population, threshold, suda, suda_max_size,
                      suda_original_scores, seconds)
    riskiest = np.argsort(-rk, kind="stable")[:_SHOWN]
    top = data.iloc[riskiest][qis].astype(object).where(codes[riskiest] >= 0, None)
    top.index = riskiest
    seconds["total"] = work_clock() - t0
    result = RiskResult(records=records, about=about)
    result._summary, result._top_keys, result._top_rows = summary, top, data.iloc[riskiest]
    result._source = source
    return result


def suda_figures(summary: dict, score: np.ndarray, dis: np.ndarray, counts: np.ndarray | None = None) -> None:
    """SUDA2's summary figures from every row's scores, or every key combination's with
    ``counts`` rows each."""
    msu = score > 0
    summary["suda_records_with_msu"] = int(msu.sum() if counts is None else counts[msu].sum())
    summary["highest_suda_dis_score"] = float(pd.Series(dis).max())


def class_measures(classes: pd.DataFrame, codes: np.ndarray, counts: np.ndarray, weight_sums: np.ndarray | None,
                   qis: list[str], *, threshold: float, suda: bool, suda_original_scores: bool,
                   suda_max_size: int | None) -> tuple[pd.DataFrame, dict[str, Any], dict[str, float]]:
    """The measures of a partitioned dataset, from its key combinations summed over the partitions.

    ``classes``: one row per key combination, a row's key values (NaN where missing); ``codes``:
    their codes (-1 missing), matched across the partitions; ``counts``: the rows carrying each
    combination; ``weight_sums``: their weights (None: unweighted, ``Fk = fk``). Every measure of a
    row is its combination's, so they are those :func:`risk` gives each row. SUDA2 runs on the
    combinations, each repeated up to three times: a row is unique on a set of keys, and a class of
    two is a pair, exactly when it is among the combinations so repeated.

    Returns ``(measures, summary, seconds)``: per combination ``fk``, ``Fk``, ``individual_risk``
    (and ``suda_score``, ``suda_dis_score``), and the summary's figures up to SUDA2's.
    """
    from .._runtime import check_cancelled, work_clock

    seconds: dict[str, float] = {}
    t = work_clock()
    fk, Fk = sample.frequencies(codes, weight_sums, counts)
    rk = sample.individual_risk(fk, None if weight_sums is None else Fk)
    seconds["individual_risk"] = work_clock() - t
    measures = pd.DataFrame({"fk": fk.astype(np.int64), "Fk": Fk, "individual_risk": rk})
    summary = risk_figures(rk, fk, threshold, counts)
    check_cancelled()
    if suda:
        t = work_clock()
        repeats = np.minimum(counts, 3)
        rows = np.repeat(np.arange(codes.shape[0]), repeats)
        try:
            scores = _suda2(classes.iloc[rows].reset_index(drop=True), qis, codes[rows], suda_original_scores,
                            suda_max_size)
        except WorkBudgetExceeded as exc:  # the measures above stand without it
            summary["suda_skipped"] = str(exc)
        else:
            if scores is not None:
                first = np.cumsum(repeats) - repeats
                measures["suda_score"], measures["suda_dis_score"] = scores[0][first], scores[1][first]
                suda_figures(summary, scores[0][first], scores[1][first], counts)
        seconds["suda2"] = work_clock() - t
    return measures, summary, seconds


def check_names(data: pd.DataFrame, quasi_identifiers, weight, household) -> list[str]:
    from ..exceptions import name_list

    if isinstance(quasi_identifiers, str):
        quasi_identifiers = [quasi_identifiers]
    qis = list(quasi_identifiers or [])
    if not qis:
        raise ParameterError("quasi_identifiers is empty: name the columns an intruder may know")
    seen: set[str] = set()
    for q in qis:
        if q in seen:
            raise ParameterError(f"quasi-identifier {q!r} is named twice")
        seen.add(q)
    columns = set(data.columns)
    missing = [q for q in qis if q not in columns]
    if missing:
        raise DataError(f"quasi-identifier column {missing[0]!r} is not in the file; it has "
                        f"{name_list(list(map(str, data.columns)))}")
    for role, name in (("weight", weight), ("household", household)):
        if name is None:
            continue
        if name not in columns:
            raise DataError(f"{role} column {name!r} is not in the file; it has {name_list(list(map(str, data.columns)))}")
        if name in seen:
            raise ParameterError(f"{role} column {name!r} is also a quasi-identifier; give it one role")
    if weight is not None and weight == household:
        raise ParameterError(f"column {weight!r} is named as both weight and household")
    return qis


def check_population(population, n: int) -> float:
    try:
        value = float(population)
    except (TypeError, ValueError):
        raise ParameterError(f"population must be a number of people; got {cell_text(population)}") from None
    if not np.isfinite(value) or value < n:
        raise ParameterError(f"population must be at least the number of rows ({n}); got {cell_text(population)}")
    return value


def check_options(threshold, suda_original_scores, suda, suda_max_size) -> float:
    """The threshold, checked with the SUDA2 options (a ParameterError names the first wrong one)."""
    threshold = sample.check_threshold(threshold)
    if not isinstance(suda_original_scores, (bool, np.bool_)):
        raise ParameterError(f"suda_original_scores must be true or false; got {cell_text(suda_original_scores)}")
    if not isinstance(suda, (bool, np.bool_)):
        raise ParameterError(f"suda must be true or false; got {cell_text(suda)}")
    if suda_max_size is not None and (isinstance(suda_max_size, bool) or not isinstance(suda_max_size, (int, np.integer))
                                      or suda_max_size < 1):
        raise ParameterError(f"suda_max_size must be a whole number of at least 1; got {cell_text(suda_max_size)}")
    return threshold


def risk_figures(rk: np.ndarray, fk: np.ndarray, threshold: float, counts: np.ndarray | None = None) -> dict[str, Any]:
    """The summary's first figures from the individual risks and fk: of every row, or of every
    key combination with ``counts`` rows each (a partitioned dataset's classes)."""
    def rows(mask):
        return int(mask.sum()) if counts is None else int(counts[mask].sum())

    summary: dict[str, Any] = dict(sample.global_risk(rk, counts))
    summary["highest_individual_risk"] = float(rk.max())
    summary["sample_uniques"] = rows(fk == 1)
    summary["records_above_threshold"] = rows(rk > threshold)
    summary["k_violations"] = {k: rows(fk < k) for k in K_VALUES}
    return summary


def about_run(n: int, qis, weight, household, population, threshold, suda, suda_max_size, suda_original_scores,
              seconds) -> dict[str, Any]:
    return {"rows": n, "quasi_identifiers": qis, "weight": weight, "household": household,
            "population": population, "threshold": threshold,
            "suda": bool(suda), "suda_max_size": None if suda_max_size is None else int(suda_max_size),
            "suda_scores": "original" if suda_original_scores else "ihsn", "seconds": seconds}


def add_uniqueness(summary: dict, seconds: dict, sizes, fraction: float | None) -> None:
    """The sampling fraction and the population-uniqueness estimates from the sizes of the key
    combinations (``sizes()``; a missing value a value of its own), where the fraction is known."""
    if fraction is None:
        return
    from .._runtime import work_clock
    from ..privacy import uniqueness_estimates

    summary["sampling_fraction"] = fraction
    t = work_clock()
    uniqueness = uniqueness_estimates(sizes(), fraction)
    if uniqueness is not None:
        summary["population_uniqueness"] = uniqueness
        seconds["population_uniqueness"] = work_clock() - t


def sampling_fraction(n: int, weight_total: float | None, population) -> float | None:
    if population is not None:
        return n / population
    if weight_total is not None:
        return min(1.0, n / weight_total)
    return None


def _suda2(data: pd.DataFrame, qis: list[str], codes: np.ndarray, original_scores: bool = True,
           max_size: int | None = None):
    """SUDA2 scores (``suda_score``, ``suda_dis_score``), or None where the module is absent."""
    try:
        from ._suda2 import suda2
    except ImportError:
        return None
    # suda2 codes the values as sdcMicro's matrix holds them (its hash reads them): give it the
    # values themselves, with every cell missing here (the NA vocabulary too) as NaN
    keys = pd.DataFrame({q: data[q].where(codes[:, j] >= 0) for j, q in enumerate(qis)}, index=data.index)
    score, dis = suda2(keys, original_scores=original_scores, max_size=max_size)
    return np.asarray(score, dtype=np.float64), np.asarray(dis, dtype=np.float64)


_DEFINITIONS = [
    ("fk, Fk", "sdcMicro freqCalc: rows sharing the key combination, and the sum of their weights"),
    ("individual risk", "sdcMicro indivRisk (Benedetti and Franconi, negative binomial, method 'approx')"),
    ("global risk, expected re-identifications", "sdcMicro measure_risk: the mean and the sum of the "
     "individual risks"),
    ("household risk", "sdcMicro measure_risk with hid: 1 - prod(1 - risk) over a household"),
    ("SUDA2 score, DIS score", "sdcMicro suda2 (Manning, Haglin, Keane 2008; DisFraction 0.01)"),
    ("population uniqueness", "ARX: Pitman, Zayatz, SNB, and Dankar's decision rule"),
    ("model risk gr1, gr2", "sdcMicro modRisk: a Poisson log-linear model of the keys' main effects (Skinner and "
     "Holmes 1998), sums over the sample uniques"),
]


def _render(result: RiskResult) -> str:
    import html

    from ._html import _CSS, _fmt, _table

    about = result.about
    head = [
        ("rows", _fmt(about.get("rows"))),
        ("quasi-identifiers", ", ".join(about.get("quasi_identifiers", [])) or "-"),
        ("weight", about.get("weight") or "- (the sample is the population)"),
        ("household", about.get("household") or "-"),
        ("population", _fmt(about.get("population"))),
        ("risk threshold", _fmt(about.get("threshold"))),
    ]
    head_rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in head)
    riskiest = result._riskiest(_SHOWN, value_labels=True)
    risky = ""
    if riskiest:
        cols = list(riskiest[0])
        risky = ("<table><tr>" + "".join(f"<th>{html.escape(c.replace('_', ' '))}</th>" for c in cols) + "</tr>"
                 + "".join("<tr>" + "".join(f"<td class=num>{html.escape(_fmt(r[c]))}</td>" for c in cols) + "</tr>"
                           for r in riskiest) + "</table>")
    sources = "".join(f"<tr><th>{html.escape(a)}</th><td>{html.escape(b)}</td></tr>" for a, b in _DEFINITIONS)
    summary = {k.replace("_", " "): ({str(kk): vv for kk, vv in v.items()} if isinstance(v, dict) else v)
               for k, v in result.summary().items()}
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        f"<title>incrowd re-identification risk</title><style>{_CSS}</style></head><body>"
        "<h1>Re-identification risk</h1>"
        f"<table>{head_rows}</table>"
        f"<h2>Summary</h2>{_table({'risk': summary})}"
        f"<h2>The riskiest records</h2><p class=note>Row numbers count the file's data rows from 1.</p>{risky}"
        f"<h2>Definitions</h2><table>{sources}</table>"
        "<p class=note>Made by incrowd. Every figure is computed on the file named above; nothing in this page "
        "is fetched from elsewhere.</p></body></html>\n"
    )


__all__ = ["risk", "RiskResult"]
