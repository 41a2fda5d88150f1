"""The report of a partitioned release beside its partitioned original, on Dask: no process
holds either file.

Release partition i holds the published rows of original partition i (the partitions of each
dataset in the order of their paths), in the original's order: a partition pair aligns as one
process aligns two files (the same rows, or the columns that pass through tell which rows were
suppressed). Two passes:

1. each partition pair, where it runs, reads both partitions and gives its partial results
   (:func:`incrowd.reporting.report_partial`: the release's classes and their rows, the numeric
   quasi-identifiers' counts, means and co-moments, the row pairs' differences, each categorical
   value's rows before and after);
2. one task combines them in partition order into the report's measures
   (:func:`incrowd.reporting.report_of_partials`).

Where the partitions disagree on which quasi-identifiers hold numbers, those that do in every
partition are measured as numbers and the others' partitions are measured again. The measures
that need more than sums are left out and the report says which and why (``about["left_out"]``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .._runtime import work_clock
from ..exceptions import DataError, IncrowdError
from ..reporting import LEFT_OUT, Report, report_of_partials, report_partial
from ._risk import _client_for, _in_partition, _read, _sources, _wait
from ._scheduler import DEFAULT_TIMEOUT


def _pair(original, release, name: str, qis: list[str], sensitive: list[str] | None, identifiers: list[str] | None,
          numeric: list[str] | None, suppression: str, kept_rows=None):
    # a user's error comes back as a value: raised on a worker, Dask would log it with a traceback
    def measure():
        before, after = _read(original), _read(release)
        if before.shape[0] == 0 and after.shape[0] == 0:
            return None  # an empty partition pair (Spark and Dask write them) adds nothing
        return report_partial(before, after, qis, sensitive, identifiers, numeric=numeric, suppression=suppression,
                              kept_rows=kept_rows)

    try:
        return _in_partition(name, measure, rows=True)
    except IncrowdError as exc:
        return exc


def _numeric_of(part) -> list[str] | None:
    return None if part is None else part.numeric


def report_dataset(original, release, quasi_identifiers: Sequence[str], sensitive: Sequence[str] | None = None,
                   identifiers: Sequence[str] | None = None, *, scheduler, k: int | None = None,
                   numeric: Sequence[str] | None = None, threshold: float = 0.2, suppression: str = "rows",
                   memory_limit: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                   progress: Callable[[str], None] | None = None) -> Report:
    """:func:`incrowd.report` of a partitioned release beside its partitioned original on Dask
    (``report(..., scheduler=)``).

    ``original``, ``release``: folders or globs of CSV or Parquet files (one partition per file,
    in the order of their paths), single files, or lists of pandas frames; release partition i
    holds the published rows of original partition i, in their order. ``scheduler``:
    ``local:N``, a ``tcp://`` address or a ``distributed.Client``; ``memory_limit``: each local
    worker's memory; ``progress``: called with a line saying what runs."""
    t0 = work_clock()
    qis = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers or [])
    if not qis:
        raise DataError("name the quasi-identifiers (quasi_identifiers=..., --qi)")
    sens = None if sensitive is None else list(sensitive)
    ids = None if identifiers is None else list(identifiers)
    o_sources, o_names = _sources(original)
    r_sources, r_names = _sources(release)
    if len(o_sources) != len(r_sources):
        raise DataError(f"the original has {len(o_sources)} partitions and the release {len(r_sources)}: the report "
                        "pairs release partition i with original partition i (in the order of their paths), so "
                        "give the release one partition per original partition")
    names = [o if o == r else f"{o} / {r}" for o, r in zip(o_names, r_names)]
    futures: list = []
    with _client_for(scheduler, memory_limit, timeout) as client:
        def submit(*args, **kwargs):
            future = client.submit(*args, **kwargs)
            futures.append(future)
            return future

        try:
            report = report_on(client, submit, o_sources, r_sources, names, qis, sens, ids, k=k,
                               numeric=None if numeric is None else list(numeric), threshold=threshold,
                               suppression=suppression, say=progress or (lambda text: None))
        except BaseException:
            client.cancel(futures)  # Ctrl-C or a failed partition: nothing left running on the cluster
            raise
    report.about["seconds"] = {"total": work_clock() - t0}
    return report


def report_on(client, submit: Callable, o_sources: list, r_sources: list, names: list[str], qis: list[str],
              sens: list[str] | None, ids: list[str] | None, *, k: int | None, numeric: list[str] | None,
              suppression: str, say: Callable[[str], None], threshold: float = 0.2,
              kept_rows: list | None = None) -> Report:
    """The report of the partition pairs (``o_sources[i]`` and ``r_sources[i]``) on ``client``,
    each task made by ``submit`` (whose caller cancels them if this stops). ``kept_rows``: per
    pair, the positions of the release's rows in the original (futures; None: the columns that
    pass through tell them, as one process aligns two files)."""
    partitions = len(o_sources)
    forced = numeric
    kept = kept_rows or [None] * partitions
    parts = [submit(_pair, o, r, name, qis, sens, ids, forced, suppression, rows, pure=False)
             for o, r, name, rows in zip(o_sources, r_sources, names, kept)]
    _wait(parts, "measuring the partitions", say)
    found = client.gather([submit(_numeric_of, p) for p in parts])
    parts = [p for p, f in zip(parts, found) if f is not None]
    o_sources, r_sources, names, kept, found = ([x for x, f in zip(seq, found) if f is not None]
                                                for seq in (o_sources, r_sources, names, kept, found))
    if not parts:
        raise DataError("the original has no rows; there is nothing to report")
    if forced is None and any(f != found[0] for f in found):
        # a column that holds numbers in every partition is measured as numbers everywhere
        common = [q for q in qis if all(q in f for f in found)]
        parts = [p if f == common else submit(_pair, o, r, name, qis, sens, ids, common, suppression, rows,
                                              pure=False)
                 for p, f, o, r, name, rows in zip(parts, found, o_sources, r_sources, names, kept)]
        _wait(parts, "measuring the partitions again with the numeric columns they share", say)
    say("combining the partitions' sums")
    risk, utility, about = submit(report_of_partials, parts, qis, k=k, threshold=threshold).result()
    assumptions = client.gather([submit(_assumptions_of, p) for p in parts])
    lines = ["release partition i holds the published rows of original partition i (partitions in the order of "
             "their paths)"]
    lines += list(dict.fromkeys(line for part in assumptions for line in part))
    left_out = _left_out(about, sens)
    lines.append("measured on Dask from the partitions' sums; left out: " + ", ".join(left_out)
                 + " (about.left_out says why)")
    about.update(sensitive=sens or [], partitions=partitions, left_out=left_out)
    return Report(risk=risk, utility=utility, assumptions=lines, about=about)


def _assumptions_of(part) -> list[str]:
    return part.assumptions


def _left_out(about: dict[str, Any], sensitive: list[str] | None) -> dict[str, str]:
    """The in-process report's measures that would apply here and are left out on Dask."""
    out = {}
    for names, why in LEFT_OUT.items():
        if names.startswith("drisk") and not about["numeric"]:
            continue
        if names == "attribute_disclosure" and not sensitive:
            continue
        if names == "height, ncp" and not about["categorical"]:
            continue
        out[names] = why
    return out
