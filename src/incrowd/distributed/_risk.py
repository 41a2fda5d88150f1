"""The risk of a partitioned dataset on Dask: no process holds the file.

Three passes over the partitions (one task each, a partition read where it runs):

1. each partition counts its key combinations (rows and weight sums per distinct combination,
   the values as they compare, so that two partitions' combinations match) and keeps, on its
   worker, which combination each of its rows has;
2. one task sums the combinations over the partitions and measures them: fk and Fk (missing
   keys matching any value), the individual risk, SUDA2 and the population-uniqueness
   estimates, all functions of a row's combination (:func:`incrowd.reporting.class_measures`);
   with a household column each partition multiplies its households' survival (1 - risk) and
   one task multiplies those partial products;
3. each partition looks its rows' measures up, gives its riskiest rows, and writes its records
   when asked.

The client holds the combinations' table and the riskiest rows, never the rows; a worker holds
one partition and, for the combining task, the combinations (or the households) of the whole
file. Every task is a pure function of its inputs, so a lost worker's tasks are recomputed.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, IncrowdError, ParameterError
from ..io import FORMATS, format_of, is_stdout, read_table, suffix, sweep_stale, temp_path, write_table
from ..privacy import sample_risk as sample
from ..reporting import (
    RiskResult,
    about_run,
    add_uniqueness,
    check_names,
    check_options,
    check_population,
    class_measures,
    key_values,
    sampling_fraction,
)
from ._scheduler import DEFAULT_TIMEOUT

#: the riskiest records a result shows (as the in-process result)
_SHOWN = 20
#: the formats a partition may have: the table formats that split into files
_PART_FORMATS = ("csv", "parquet")


def partition_files(data: str | os.PathLike) -> list[Path]:
    """The partitions of a dataset: the CSV and Parquet files of a folder (and its subfolders) or
    of a glob pattern, in the order of their paths, or one file."""
    text = os.fspath(data)
    part_suffixes = tuple(s for name in _PART_FORMATS for s in FORMATS[name].suffixes)
    if glob.has_magic(text):
        files = sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
        if not files:
            raise DataError(f"no file matches {text!r}")
        return files
    path = Path(text)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")
                       and p.name.lower().endswith(part_suffixes))
        if not files:
            raise DataError(f"folder {text!r} holds no {' or '.join(suffix(n) for n in _PART_FORMATS)} files")
        return files
    if not path.is_file():
        raise DataError(f"input {text!r} does not exist")
    return [path]


@dataclass
class _Part:
    """What a partition keeps on its worker between the passes."""

    rows: int
    classes: pd.DataFrame  # per local combination: its values as they compare (c0..), count, weight
    keys: pd.DataFrame  # per local combination: its first row's key cells, as the file holds them
    combination: np.ndarray  # each row's local combination
    households: np.ndarray | None


def _in_partition(name: str, fn: Callable, *args, rows: bool = False):
    try:
        return fn(*args)
    except IncrowdError as exc:
        said = " (rows count within the partition)" if rows else ""
        raise type(exc)(f"partition {name}: {exc}{said}") from None


def _read(source) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        return source
    try:
        return read_table(source)
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}") from None
    except DataError:
        empty = _no_rows(source)
        if empty is None:
            raise
        return empty


def _no_rows(path: str) -> pd.DataFrame | None:
    """The columns of a partition without rows (the reader refuses a file without data rows; a
    dataset may hold one, as Spark and Dask write them), or None when the file has rows or cannot
    be read."""
    fmt = format_of(path)
    try:
        if fmt is not None and fmt.name == "parquet":
            import pyarrow.parquet as pq

            if pq.ParquetFile(path).metadata.num_rows == 0:
                return pd.read_parquet(path)
        elif fmt is not None and fmt.name == "csv":
            frame = pd.read_csv(path, dtype=str, sep=None, engine="python", nrows=1)
            if frame.shape[0] == 0:
                return frame
    except Exception:  # the reader's own error says what is wrong with the file
        return None
    return None


def _count_keys(source, name: str, qis: list[str], weight: str | None, household: str | None) -> _Part | IncrowdError:
    # a user's error comes back as a value: raised on a worker, Dask would log it with a traceback
    try:
        return _keys_of(source, name, qis, weight, household)
    except IncrowdError as exc:
        return exc


def _keys_of(source, name: str, qis: list[str], weight: str | None, household: str | None) -> _Part:
    frame = _read(source)
    _in_partition(name, check_names, frame, qis, weight, household)
    n = int(frame.shape[0])
    codes = np.empty((n, len(qis)), dtype=np.int64)
    values = []
    for j, q in enumerate(qis):
        codes[:, j], v = sample.column_keys(frame[q])
        values.append(v)
    combination, _ = pd.factorize(sample.row_ids(codes + 1))
    combination = np.asarray(combination, dtype=np.int64)
    m = int(combination.max()) + 1 if n else 0
    first = np.zeros(m, dtype=np.int64)
    first[combination[::-1]] = np.arange(n - 1, -1, -1)
    classes = pd.DataFrame({f"c{j}": _values_of(values[j], codes[first, j]) for j in range(len(qis))})
    classes["count"] = np.bincount(combination, minlength=m).astype(np.float64)
    if weight is not None:
        w = _in_partition(name, sample.sampling_weights, frame[weight], weight, rows=True)
        classes["weight"] = np.bincount(combination, weights=w, minlength=m)
    households = None
    if household is not None:
        households = _in_partition(name, sample.household_ids, frame[household], household, rows=True).to_numpy()
    keys = frame[qis].iloc[first].reset_index(drop=True)
    return _Part(n, classes, keys, combination, households)


def _values_of(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    out = np.empty(codes.shape[0], dtype=object)
    present = codes >= 0
    out[present] = values[codes[present]]
    out[~present] = None
    return out


def _partition_classes(part: _Part | IncrowdError):
    return part if isinstance(part, IncrowdError) else (part.classes, part.keys, part.rows)


@dataclass
class _Combined:
    measures: pd.DataFrame  # per combination of the whole file
    summary: dict[str, Any]
    seconds: dict[str, float]
    counts: np.ndarray
    weight_total: float | None
    maps: list  # per partition: its local combinations' numbers in the whole file


def _combine(pieces: list, qis: list[str], weighted: bool, population: float | None, threshold: float,
             suda: bool, suda_original_scores: bool, suda_max_size: int | None) -> _Combined:
    """Sum the partitions' combinations (in partition order) and measure them."""
    classes = pd.concat([p[0] for p in pieces], ignore_index=True)
    keys = pd.concat([p[1] for p in pieces], ignore_index=True)
    n = sum(int(p[2]) for p in pieces)
    if n == 0:
        raise DataError("the dataset has no rows; there is no risk to measure")
    value_columns = [f"c{j}" for j in range(len(qis))]
    number = classes.groupby(value_columns, dropna=False, sort=False).ngroup().to_numpy(np.int64)
    m = int(number.max()) + 1
    counts = np.bincount(number, weights=classes["count"].to_numpy(), minlength=m).astype(np.int64)
    first = np.zeros(m, dtype=np.int64)
    first[number[::-1]] = np.arange(number.size - 1, -1, -1)
    codes = np.column_stack([pd.factorize(classes[c].to_numpy()[first], use_na_sentinel=True)[0]
                             for c in value_columns]).astype(np.int64)
    weight_sums: np.ndarray | None = None
    weight_total = None
    if weighted:
        weight_sums = np.bincount(number, weights=classes["weight"].to_numpy(), minlength=m)
        weight_total = float(weight_sums.sum())
    elif population is not None:
        # without weights each row stands for population / rows people
        weight_sums = counts * (population / n)
    measures, summary, seconds = class_measures(keys.iloc[first].reset_index(drop=True), codes, counts, weight_sums,
                                                qis, threshold=threshold, suda=suda,
                                                suda_original_scores=suda_original_scores,
                                                suda_max_size=suda_max_size)
    bounds = np.cumsum([0] + [len(p[0]) for p in pieces])
    maps = [number[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    return _Combined(measures, summary, seconds, counts, weight_total, maps)


def _map_of(combined: _Combined, index: int) -> np.ndarray:
    return combined.maps[index]


def _measures_of(combined: _Combined) -> pd.DataFrame:
    return combined.measures


def _figures_of(combined: _Combined) -> _Combined:
    return _Combined(combined.measures.iloc[:0], combined.summary, combined.seconds, combined.counts,
                     combined.weight_total, [])


def _survival(part: _Part, where: np.ndarray, measures: pd.DataFrame) -> pd.DataFrame:
    """Per household of the partition: the product of its rows' 1 - risk, and its rows."""
    risk = measures["individual_risk"].to_numpy()[where[part.combination]]
    frame = pd.DataFrame({"id": part.households, "survive": 1.0 - risk})
    grouped = frame.groupby("id", sort=False)["survive"]
    return pd.DataFrame({"survive": grouped.prod(), "rows": grouped.size()})


def _households(partials: list) -> pd.DataFrame:
    """The households of the whole file: the partial products multiplied in partition order."""
    both = pd.concat(partials)
    grouped = both.groupby(level=0, sort=False)
    return pd.DataFrame({"risk": 1.0 - grouped["survive"].prod(), "rows": grouped["rows"].sum()})


def _household_figures(households: pd.DataFrame) -> tuple[float, int, float]:
    risk, rows = households["risk"].to_numpy(), households["rows"].to_numpy()
    return float((risk * rows).sum()), int(rows.sum()), float(risk.max()) if risk.size else 0.0


def _finish(part: _Part, where: np.ndarray, measures: pd.DataFrame, households: pd.DataFrame | None, offset: int,
            path: str | None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The partition's records: its riskiest rows (with their key values, as codes and as value
    labels) and, with ``path``, every row's measures written there."""
    rows = measures.iloc[where[part.combination]].reset_index(drop=True)
    if households is not None:
        rows["household_risk"] = households["risk"].reindex(part.households).to_numpy()
    if path is not None:
        table = rows.copy()
        table.insert(0, "row", np.arange(offset + 1, offset + part.rows + 1, dtype=np.int64))
        write_table(table, path, sep=",")
    order = np.argsort(-rows["individual_risk"].to_numpy(), kind="stable")[:_SHOWN]
    local = part.combination[order]
    cells = part.keys.iloc[local]
    present = part.classes.iloc[local, :cells.shape[1]].notna().to_numpy()
    top = cells.astype(object).where(present, None)
    labelled = key_values(top, cells)  # a user-missing code spelled in top too, as in one process
    out = []
    for i, pos in enumerate(order.tolist()):
        measures_of = {k: _plain(v) for k, v in rows.iloc[pos].items()}
        codes, labels = ({"row": offset + pos + 1, **{str(q): _plain(v) for q, v in keys.iloc[i].items()},
                          **measures_of} for keys in (top, labelled))
        out.append((codes, labels))
    return out


def _plain(value):
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


@contextlib.contextmanager
def _client_for(scheduler, memory_limit: str | None, timeout: float) -> Iterator[Any]:
    if hasattr(scheduler, "submit"):  # a distributed.Client already connected
        yield scheduler
        return
    from ._cluster import connect

    with connect(scheduler, memory_limit=memory_limit, timeout=timeout) as client:
        yield client


def _records_target(records) -> tuple[Path, str] | None:
    if records is None:
        return None
    if is_stdout(records):
        raise ParameterError("the records of a partitioned dataset go to a folder, one file per partition; "
                             "name a folder")
    target = Path(records)
    name = target.name.lower()
    kind = "csv" if name.endswith(FORMATS["csv"].suffixes) else "parquet"
    if target.exists() or target.is_symlink():
        raise DataError(f"records folder {str(target)!r} already exists; a folder is never overwritten: remove it "
                        "or choose another name")
    if not target.parent.is_dir():
        raise DataError(f"records folder's directory {str(target.parent)!r} does not exist")
    return target, kind


def risk_dataset(data, quasi_identifiers: Sequence[str], *, scheduler, weight: str | None = None,
                 household: str | None = None, population: float | None = None, threshold: float = 0.2,
                 suda_original_scores: bool = True, suda: bool = True, suda_max_size: int | None = None,
                 records: str | os.PathLike | None = None, memory_limit: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, progress: Callable[[str], None] | None = None) -> RiskResult:
    """:func:`incrowd.risk` of a partitioned dataset on Dask (``risk(..., scheduler=)``).

    ``data``: a folder or glob of CSV or Parquet files (one partition per file, in the order of
    their paths), one file, or a list of pandas frames; ``scheduler``: ``local:N``, a ``tcp://``
    address or a ``distributed.Client``; ``memory_limit``: each local worker's memory (Dask's
    ``memory_limit``, e.g. ``"2GiB"``); ``records``: a folder to write every record's measures
    into, one file per partition, moved into place once all are written; ``progress``: called
    with a line saying what runs (the command line's progress)."""
    from .._runtime import work_clock

    t0 = work_clock()
    qis = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers or [])
    threshold = check_options(threshold, suda_original_scores, suda, suda_max_size)
    if population is not None:
        population = check_population(population, 0)
    sources, names = _sources(data)
    target = _records_target(records)
    if target is not None and isinstance(data, (str, os.PathLike)) and os.path.isdir(data) \
            and os.path.commonpath([os.path.realpath(target[0].parent), os.path.realpath(data)]) == os.path.realpath(data):
        raise DataError(f"records folder {str(target[0])!r} is inside the dataset {os.fspath(data)!r}: its files "
                        "would count as partitions; choose a folder outside it")
    run = _Run(weight, household, population, target, progress or (lambda text: None))
    try:
        with _client_for(scheduler, memory_limit, timeout) as client:
            run.client = client
            try:
                run.measure(sources, names, qis, (threshold, suda, suda_original_scores, suda_max_size))
            except BaseException:
                run.cancel()  # Ctrl-C or a failed partition: nothing left running on the cluster, nothing written
                raise
    finally:
        if run.staging is not None:  # again: a partition that was writing when cancelled has ended now
            shutil.rmtree(run.staging, ignore_errors=True)
    summary, seconds = run.summary, run.seconds
    add_uniqueness(summary, seconds, lambda: run.figures.counts,
                   sampling_fraction(run.rows, run.figures.weight_total, run.population))
    seconds["total"] = work_clock() - t0
    about = about_run(run.rows, qis, weight, household, run.population, threshold, suda, suda_max_size,
                      suda_original_scores, seconds)
    about["partitions"] = len(sources)
    if run.target is not None:
        about["records"] = str(run.target[0])
    result = RiskResult(records=None, about=about)
    result._summary = summary
    result._riskiest_rows = [codes for codes, _ in run.riskiest]
    result._riskiest_labels = [labels for _, labels in run.riskiest]
    return result


def _sources(data) -> tuple[list, list[str]]:
    """The partitions to read (paths, or frames) and their names in messages."""
    if isinstance(data, (list, tuple)) and data and all(isinstance(f, pd.DataFrame) for f in data):
        return list(data), [f"{i + 1}" for i in range(len(data))]
    if isinstance(data, (str, os.PathLike)):
        files = partition_files(data)
        for f in files:
            if format_of(f) is None:  # here, not on a worker
                raise DataError(f"{str(f)!r}: incrowd reads no such format; a partition is a CSV or Parquet file")
        return [str(f) for f in files], [str(f) for f in files]
    raise ParameterError("data must be a folder or glob of CSV or Parquet files, a file, or a list of pandas frames")


class _Run:
    """One measurement on the cluster: the futures it made (cancelled if it stops) and what it
    gathered."""

    def __init__(self, weight, household, population, target, say):
        self.weight, self.household, self.population, self.target, self.say = weight, household, population, target, say
        self.client: Any = None
        self.futures: list = []
        self.staging: Path | None = None
        self.rows = 0
        self.figures: _Combined
        self.summary: dict[str, Any] = {}
        self.seconds: dict[str, float] = {}
        self.riskiest: list = []

    def submit(self, *args, **kwargs):
        future = self.client.submit(*args, **kwargs)
        self.futures.append(future)
        return future

    def measure(self, sources: list, names: list[str], qis: list[str], options: tuple) -> None:
        self.say(f"counting the key combinations: 0/{len(sources)} partitions")
        parts = [self.submit(_count_keys, s, name, qis, self.weight, self.household, pure=False)
                 for s, name in zip(sources, names)]
        pieces = [self.submit(_partition_classes, p) for p in parts]
        _wait(pieces, "counting the key combinations", self.say)
        combined = self.submit(_combine, pieces, qis, self.weight is not None, self.population, *options)
        self.say("measuring the key combinations (fk, Fk, individual risk, SUDA2)")
        self.figures = self.submit(_figures_of, combined).result()
        rows = [int(r) for _, _, r in self.client.gather(pieces)]
        self.rows = sum(rows)
        if self.population is not None:
            self.population = check_population(self.population, self.rows)
        self.summary, self.seconds = dict(self.figures.summary), dict(self.figures.seconds)
        maps = [self.submit(_map_of, combined, i) for i in range(len(parts))]
        measures = self.submit(_measures_of, combined)
        households = None if self.household is None else self._households(parts, maps, measures)
        offsets = np.cumsum([0, *rows])[:-1].tolist()
        paths: list[str | None] = [None] * len(parts)
        if self.target is not None:
            sweep_stale(self.target[0])
            self.staging = temp_path(self.target[0])
            self.staging.mkdir()
            paths = [str(self.staging / f"part-{i:05d}{suffix(self.target[1])}") for i in range(len(parts))]
        finished = [self.submit(_finish, p, w, measures, households, o, path)
                    for p, w, o, path in zip(parts, maps, offsets, paths)]
        _wait(finished, "writing the records" if self.target else "finding the riskiest records", self.say)
        candidates = [pair for rows_of in self.client.gather(finished) for pair in rows_of]
        candidates.sort(key=lambda pair: (-pair[0]["individual_risk"], pair[0]["row"]))
        self.riskiest = candidates[:_SHOWN]
        if self.staging is not None and self.target is not None:
            os.replace(self.staging, self.target[0])
            self.staging = None

    def _households(self, parts: list, maps: list, measures):
        from .._runtime import work_clock

        t = work_clock()
        partials = [self.submit(_survival, p, w, measures) for p, w in zip(parts, maps)]
        _wait(partials, "multiplying the households' survival", self.say)
        households = self.submit(_households, partials)
        expected, members, highest = self.submit(_household_figures, households).result()
        self.summary["household_risk"] = expected / members
        self.summary["highest_household_risk"] = highest
        self.summary["household_expected_reidentifications"] = expected
        self.seconds["household_risk"] = work_clock() - t
        return households

    def cancel(self) -> None:
        if self.client is not None:
            self.client.cancel(self.futures)
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)


def _wait(futures: list, what: str, say: Callable[[str], None]) -> None:
    """Wait for ``futures``, saying how many partitions are done; a failed one raises here."""
    from distributed import as_completed

    done = 0
    for future in as_completed(futures):
        if future.status == "error" or isinstance(future.result(), IncrowdError):
            raise future.result()  # a failed task raises here; a partition's error is its value
        done += 1
        say(f"{what}: {done}/{len(futures)} partitions")
