"""Publish a partitioned dataset on Dask (generalize-then-microaggregate): no process holds the file.

Four passes over the partitions (one task each, a partition read where it runs), each a function
of :mod:`incrowd.publishing`'s partitioned steps:

1. each partition's facts (rows, exact sums of the numeric QIs, missing patterns, sensitive
   values): the client combines them into the whole file's means and codes;
2. each partition's bottom classes (rows per level-0 combination) and squared deviations: the
   client sums them and runs publish's own search on them, so the node is the in-process node;
   each row's bottom class and prepared values stay on the worker until pass 3 has read them;
   with ``suppression = "cells"`` the client then runs publish's own local suppression on the
   node's combinations and their rows (:func:`plan_cells`), and each partition reads its rows'
   blanks and classes from that plan in pass 3;
3. each partition gives its rows' classes at that node, from those bottom classes (the
   partition is prepared once, in pass 2), and splits its published rows, prepared, by class
   into one piece per output partition (a shuffle: every row of a class lands in one piece set);
4. each class task gathers its pieces (whole classes, in file order; numbers only, no text),
   microaggregates them as one process does (not preparing them again), enforces l and t
   inside each class, and splits its published rows by the partition they came from: each
   one's position there and its numeric QIs as published;
5. each output partition i gathers what every class task published of input partition i (a
   second shuffle), reads partition i again and makes its published table in the partition's
   order (the categorical QIs generalized row by row, the numbers placed), so that the release
   keeps the file's order as the in-process release does (release partition i holds the
   published rows of original partition i, in their order, which is what the report pairs); it
   writes it into a staging folder, reads the written file back and verifies it, and gives its
   published classes' sizes and sensitive values.

With risk targets and ``suppression = "cells"``, each partition also counts its rows and weights
per kind of row at the blanks for k (:func:`part_kinds`) and the client blanks more cells for the
targets from them (:func:`plan_targets`) before pass 3. With risk targets beside numeric
quasi-identifiers the search judges each node it would take by its groups (:meth:`_Run.judge`:
passes 3 and 4 for that node, the groups kept on the workers, their keys, rows and weights
gathered, the groups above a target decided in the client by :func:`suppress_group_keys`); the
node taken is then published from the groups its judgement made.

The client then verifies k, l, t and the risk targets over the whole release from those counts
(a class of equal published values spans output partitions) and only then moves the folder into
place; with ``report`` it first writes the release's report beside it, from per-partition partial
results (:func:`incrowd.distributed._report.report_on`), so that both are written or neither.
Every task is a pure function of its inputs, so a lost worker's tasks are recomputed.
"""

from __future__ import annotations

import dataclasses
import heapq
import operator
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from .._runtime import work_clock
from ..exceptions import DataError, IncrowdError, ParameterError, VerificationError
from ..io import Promise, suffix, sweep_stale, temp_path, verify_frame, write_table
from ..publishing import (
    PublishResult,
    apply_perturb_steps,
    check_spec_nodes,
    check_written_classes,
    check_written_risk,
    class_groups,
    combined_perturb_steps,
    group_keys,
    load_spec,
    part_bottom,
    part_cell_pieces,
    part_codes,
    part_facts,
    part_household_check,
    part_kinds,
    part_missing,
    part_pieces,
    part_release,
    partitioned_refusal,
    partitioned_search,
    plan_cells,
    plan_targets,
    publish_households,
    release_classes,
    scaled_whole,
    split_household,
    suppress_group_keys,
    whole_of,
    written_classes,
    written_keys,
    written_row_keys,
    written_summary,
)
from ._blocks import compiled_threads
from ._mona import task_threads
from ._report import report_on
from ._risk import _client_for, _in_partition, _read, _sources, _wait
from ._scheduler import DEFAULT_TIMEOUT


def _task(fn: Callable, name: str, *args):
    # a user's error comes back as a value: raised on a worker, Dask would log it with a traceback
    try:
        return _in_partition(name, fn, *args, rows=True)
    except IncrowdError as exc:
        return exc


def _facts(source, name: str, spec):
    return _task(lambda: part_facts(_read(source).reset_index(drop=True), spec), name)


def _bottom(source, name: str, spec, whole):
    return _task(lambda: part_bottom(_read(source).reset_index(drop=True), spec, whole), name)


def _summary(bottom):
    # the rows' bottom classes and prepared values (items 3 and 4) stay; the risk targets'
    # weights (item 5) go with the counts
    return bottom if isinstance(bottom, IncrowdError) else (*bottom[:3], bottom[5])


def _missing(bottom):
    return bottom if isinstance(bottom, IncrowdError) else part_missing(bottom)


def _kinds(source, name: str, bottom, number: np.ndarray, plan, offsets: np.ndarray, weight: str):
    """The partition's kinds of rows at a cell plan's blanks for k (:func:`part_kinds`)."""
    if isinstance(bottom, IncrowdError):
        return bottom
    return _task(lambda: part_kinds(_read(source).reset_index(drop=True), bottom, number, plan, offsets, weight),
                 name)


def _split(source, name: str, bottom, whole, number: np.ndarray, choice, where: np.ndarray, n_out: int,
           cells=None):
    """The partition's published rows, prepared, one piece per output partition (``where``: each
    class's); ``bottom``: the partition's :func:`_bottom`, whose rows' bottom classes and prepared
    values stayed on the worker; ``cells``: a cell release's plan and the partition's offsets in
    it (the rows then carry their blanks)."""
    if isinstance(bottom, IncrowdError):
        return bottom
    def split():
        frame = _read(source).reset_index(drop=True)
        if cells is not None:
            return part_cell_pieces(frame, bottom, whole, number, *cells, where, n_out)
        return part_pieces(frame, bottom, whole, number, choice, where, n_out)

    return _task(split, name)


def _classes(pieces: list, name: str, spec, whole, levels: dict[str, int], threads=None):
    """Microaggregate whole classes, l and t enforced inside each; their published rows split
    by the partition they came from (:func:`incrowd.publishing.release_classes`; each written
    partition makes its table from them and is verified as written, the whole release from the
    written partitions' classes). ``threads``: numba's threads for the microaggregation
    (:func:`compiled_threads`)."""
    for piece in pieces:
        if isinstance(piece, IncrowdError):
            return piece
    if not any(piece[1].size for piece in pieces):
        return None

    def release():
        with compiled_threads(threads):
            return release_classes(pieces, spec, whole, levels)

    return _task(release, name)


def _groups(pieces: list, name: str, spec, whole, levels: dict[str, int], threads=None):
    """Whole classes' rows and their groups (:func:`class_groups`), kept on the worker while the
    client decides which groups a risk target suppresses; None where the task holds no row."""
    for piece in pieces:
        if isinstance(piece, IncrowdError):
            return piece
    if not any(piece[1].size for piece in pieces):
        return None

    def grouped():
        with compiled_threads(threads):
            return class_groups(pieces, spec, whole, levels)

    return _task(grouped, name)


def _group_keys(grouped, name: str, levels: dict[str, int]):
    """A class task's groups' keys, rows and weights (:func:`group_keys`)."""
    if grouped is None or isinstance(grouped, IncrowdError):
        return grouped
    return _task(lambda: group_keys(*grouped, levels), name)


def _grouped_classes(pieces: list, grouped, out: np.ndarray, name: str, spec, whole, levels: dict[str, int]):
    """:func:`_classes` of a class task whose groups are made (``grouped``), with the groups
    ``out`` (their numbers in it) suppressed for the risk targets."""
    if grouped is None or isinstance(grouped, IncrowdError):
        return grouped

    def release():
        prep, groups = grouped
        return release_classes(pieces, spec, whole, levels, (prep, np.where(np.isin(groups, out), -1, groups)))

    return _task(release, name)


def _codes(bottom):
    return bottom if isinstance(bottom, IncrowdError) else part_codes(bottom)


def _write(source, coded, backs: list, name: str, path: str, release: tuple, qis: list[str], numeric: list[str],
           sensitive: dict, weight: str | None, households=None, perturb=None):
    """Write one output partition: the published rows of its input partition (``source``), in
    their order, from what every class task published of it (``backs``) and the partition read
    again with its categorical codes (``coded``: :func:`incrowd.publishing.part_codes`) as
    :func:`incrowd.publishing.part_release` makes them (``release``: the spec and the levels);
    read back and verified as written (its rows and columns, finite published means);
    its classes' sizes and sensitive values (and with ``weight``, for the risk targets, its
    keys' rows and weights) for the whole release's check. ``households``: with a household
    column, :func:`_household_write`'s arguments; ``perturb``: with ``[[perturb]]`` steps, the
    steps, the strata and the random state (the steps' summaries come last)."""
    for back in [coded, *backs]:
        if isinstance(back, IncrowdError):
            return back
    backs = [b for b in backs if b is not None]
    if not backs:
        return None  # nothing published anywhere: the whole release's check refuses it

    def write():
        table = part_release(_read(source).reset_index(drop=True), coded, *release, backs)
        check = None
        if households is not None:
            table, check, codes = _household_write(table, *households)
        steps = None
        if perturb is not None:
            # top and bottom coding and rounding change each cell from itself alone: the
            # partition's cells as one process changes them
            table, steps = apply_perturb_steps(table, *perturb)
        write_table(table, path)
        back = _read(path)  # a partition whose rows were all suppressed reads back as its columns
        if list(back.columns) != list(table.columns) or back.shape[0] != table.shape[0]:
            raise VerificationError(f"{name} reads back as {back.shape[0]} rows of {back.shape[1]} columns, not the "
                                    f"{table.shape[0]} rows of {table.shape[1]} written; nothing was written")
        verify_frame(back, Promise(quasi_identifiers=tuple(qis), finite=tuple(numeric), household_check=check),
                     what=name)
        counts = written_classes(back, qis, sensitive)
        if weight is not None:
            counts = (*counts, written_keys(back, qis, weight))
        if check is not None and "max_household_risk" in households[0].risk_targets:
            rows = written_row_keys(back, qis, weight)
            rows["household"] = codes
            counts = (*counts, rows)
        return counts if steps is None else (*counts, steps)

    return _task(write, name)


def _household_write(table: pd.DataFrame, spec, whole, offset: int):
    """A written partition's household column as the spec publishes it (renumbered from
    ``offset`` + 1, or dropped), the household check of the partition as read back (a household
    lies in one partition, so each blank's housemates are all in it) and its rows' households."""
    codes = publish_households(table, spec, offset)
    return table, part_household_check(spec, whole, codes), codes


def _households_published(source, backs: list, column: str) -> int:
    """How many households a partition (``source``) publishes: those of the rows every class task
    published of it."""
    got = _kept_rows(backs)
    return int(_read(source)[column].reset_index(drop=True).iloc[got].nunique()) if got.size else 0


def _release_spec(spec):
    """The spec a class task releases its rows with: the household column as it is, which the
    written partition renumbers or drops (a renumbering runs on over the partitions, and the
    household check reads the ids)."""
    return spec if spec.household is None else dataclasses.replace(spec, household_id="keep")


def _failed(back):
    return back if isinstance(back, IncrowdError) else None


def _piece(back, i: int):
    """A class task's published rows of input partition ``i`` (None where it published none)."""
    return back if back is None or isinstance(back, IncrowdError) else back[i]


def _kept_rows(backs: list) -> np.ndarray:
    """The positions of a partition's published rows in it (every class task's, in order)."""
    got = [b[0] for b in backs if b is not None and not isinstance(b, IncrowdError)]
    return np.sort(np.concatenate(got)) if got else np.zeros(0, np.int64)


def class_sizes(choice, bottoms: list, maps: list[np.ndarray]) -> np.ndarray:
    """Rows published per class at the chosen node (0 for a suppressed class), from the
    partitions' bottom classes (``maps``: each one's number in the file)."""
    n_classes = int(choice.class_of.max(initial=-1)) + 1
    sizes = np.zeros(n_classes, np.int64)
    for bottom, number in zip(bottoms, maps):
        kept = choice.keep[number]
        sizes += np.bincount(choice.class_of[number][kept], weights=bottom.counts[kept],
                             minlength=n_classes).astype(np.int64)
    return sizes


def spread_classes(sizes: np.ndarray, n_out: int) -> np.ndarray:
    """Each class's output partition: the largest classes first, each to the partition with the
    fewest rows so far (the lowest-numbered of equals). A class is microaggregated whole on one
    worker, and the largest classes of a high node hold a large share of the file: spread by
    class number alone, two of them could share one partition while others hold little, and
    the release would wait on that one worker."""
    where = np.zeros(sizes.size, np.int64)
    loads = [(0, b) for b in range(n_out)]
    for c in np.argsort(-sizes, kind="stable"):
        load, b = heapq.heappop(loads)
        where[c] = b
        heapq.heappush(loads, (load + int(sizes[c]), b))
    return where


def publish_dataset(data, spec, *, scheduler, output: str | os.PathLike, report: str | os.PathLike | None = None,
                    base_dir=None,
                    max_nodes: int | None = None, max_memory: int | None = None, memory_limit: str | None = None,
                    timeout: float = DEFAULT_TIMEOUT, progress: Callable[[str], None] | None = None):
    """:func:`incrowd.publish` of a partitioned dataset on Dask (``publish(..., scheduler=, output=)``).

    ``data``: a folder or glob of CSV or Parquet files (one partition per file, in the order of
    their paths) or a list of pandas frames; ``output``: the release's folder, a Parquet dataset
    written partition by partition and moved into place once the whole release is verified;
    ``report``: a .json or .html file that receives the release's report (from per-partition
    partial results, as :func:`report_dataset` makes it), written before the release is moved
    into place, so that both are written or neither."""
    t0 = work_clock()
    spec = load_spec(spec, base_dir)
    refused = partitioned_refusal(spec)
    if refused is not None:
        raise ParameterError(refused)
    if report is not None and Path(report).suffix.lower() not in (".json", ".html", ".htm"):
        raise ParameterError(f"report={os.fspath(report)!r}: give a file ending in .html or .json")
    check_spec_nodes(spec, max_nodes)
    sources, names = _sources(data)
    target = _output_target(output, data)
    run = _Run(spec, progress or (lambda text: None))
    try:
        with _client_for(scheduler, memory_limit, timeout) as client:
            run.client = client
            try:
                run.publish(sources, names, target, max_nodes, max_memory, None if report is None else Path(report))
            except BaseException:
                run.cancel()
                raise
    finally:
        if run.staging is not None:
            shutil.rmtree(run.staging, ignore_errors=True)
    run.summary["seconds"] = work_clock() - t0
    return PublishResult(table=run.columns, suppressed=run.summary["suppressed"],
                         kept_rows=np.zeros(0, np.int64), spec=spec, _summary=run.summary)


def _release_households(counts: list, spec) -> list[pd.DataFrame] | None:
    """With ``max_household_risk``, the written partitions' rows with their households numbered
    on over the partitions (each partition's were its own 0, 1, ...; a household lies in one)."""
    if spec.household is None or "max_household_risk" not in spec.risk_targets:
        return None
    out, offset = [], 0
    for c in counts:
        rows = c[3].copy()
        rows["household"] += offset
        offset += int(rows["household"].to_numpy().max(initial=-1)) + 1
        out.append(rows)
    return out


def _output_target(output, data) -> Path:
    if output is None:
        raise ParameterError("a partitioned dataset's release is a folder: give output= (-o)")
    target = Path(output)
    if target.exists() or target.is_symlink():
        raise DataError(f"output folder {str(target)!r} already exists; a folder is never overwritten: remove it "
                        "or choose another name")
    if not target.parent.is_dir():
        raise DataError(f"output folder's directory {str(target.parent)!r} does not exist")
    if isinstance(data, (str, os.PathLike)) and os.path.isdir(data) and os.path.commonpath(
            [os.path.realpath(target.parent), os.path.realpath(data)]) == os.path.realpath(data):
        raise DataError(f"output folder {str(target)!r} is inside the dataset {os.fspath(data)!r}: its files would "
                        "count as partitions; choose a folder outside it")
    return target


#: the priority of taking a piece out of a split: before any class task on that worker. A
#: worker runs one task at a time, and a class task runs for minutes; queued behind one, the
#: pieces another worker waits for would leave that worker idle
_FIRST = 2**62


class _Run:
    """One release on the cluster: the futures it made (cancelled if it stops) and what it gathered."""

    def __init__(self, spec, say: Callable[[str], None]):
        self.spec, self.say = spec, say
        self.client: Any = None
        self.futures: list = []
        self.staging: Path | None = None
        self.summary: dict[str, Any] = {}
        self.columns = pd.DataFrame()
        #: the node the search took with its groups judged (:meth:`judge`): its futures and the
        #: groups the risk targets suppress
        self.judged: dict[str, Any] | None = None
        self.judged_classes: list = []
        self.codes: list = []

    def submit(self, *args, **kwargs):
        future = self.client.submit(*args, **kwargs)
        self.futures.append(future)
        return future

    def gather(self, futures: list, what: str) -> list:
        _wait(futures, what, self.say)
        return self.client.gather(futures)

    def publish(self, sources: list, names: list[str], target: Path, max_nodes, max_memory,
                report: Path | None = None) -> None:
        spec = self.spec
        self.say(f"reading the partitions' facts: 0/{len(sources)} partitions")
        facts = self.gather([self.submit(_facts, s, n, spec, pure=False) for s, n in zip(sources, names)],
                            "reading the partitions' facts")
        if spec.household is not None:
            split = split_household(facts, names, spec.household)
            if split is not None:
                raise DataError(split)
        whole = whole_of(spec, facts)
        bottoms = [self.submit(_bottom, s, n, spec, whole) for s, n in zip(sources, names)]
        # each partition's categorical codes stay on the workers until its release is written
        self.codes = [self.submit(_codes, b) for b in bottoms]
        # the client takes each bottom without its rows' classes and prepared values: those
        # stay for the split
        pieces = self.gather([self.submit(_summary, b) for b in bottoms], "counting the partitions' classes")
        whole = scaled_whole(whole, pieces)
        self.say(f"searching the lattice on {whole.rows} rows' classes")
        # at least two class tasks per worker, so that every worker microaggregates
        workers = len(self.client.scheduler_info().get("workers", {}))
        n_out = max(1, len(sources), 2 * workers)
        threads = task_threads(self.client)
        fits = None
        if spec.risk_targets and any(c.role == "numeric" for c in spec.columns.values()):
            def fits(node, maps, held=bottoms):
                return self.judge(node, sources, names, held, maps, [p[0] for p in pieces], whole, n_out, threads)
        choice, maps, prep = partitioned_search(spec, whole, [p[0] for p in pieces], max_nodes=max_nodes,
                                                max_memory=max_memory,
                                                risks=[p[3] for p in pieces] if spec.risk_targets else None,
                                                fits=fits)
        if self.judged is not None:
            self.release_judged(choice, bottoms, whole, target)
            self.finish(sources, names, target, prep, choice, whole, None, report)
            return
        plan = self.cells(bottoms, [p[0] for p in pieces], maps, choice, prep, sources, names) \
            if spec.suppression == "cells" else None
        sizes = class_sizes(choice, [p[0] for p in pieces], maps) if plan is None else plan.sizes
        where = spread_classes(sizes, n_out)
        # every partition reads the plan, each its own row of offsets alone
        shared = None if plan is None else dataclasses.replace(plan, offsets=[])
        splits = [self.submit(_split, s, n, b, whole, w, choice, where, n_out,
                              None if plan is None else (shared, plan.offsets[i]))
                  for i, (s, n, b, w) in enumerate(zip(sources, names, bottoms, maps))]
        _wait(splits, "grouping the rows by class", self.say)
        # the splits have read the rows' bottom classes: the workers may drop them (a lost
        # split is recomputed from the graph, its bottom first)
        self.let_go(bottoms)
        del bottoms
        sweep_stale(target)
        self.staging = temp_path(target)
        self.staging.mkdir()
        classes = self.microaggregate(splits, n_out, whole, choice.levels, threads,
                                      np.bincount(where, weights=sizes, minlength=n_out))
        del splits
        self.finish(sources, names, target, prep, choice, whole, plan, report, classes)

    def finish(self, sources: list, names: list[str], target: Path, prep, choice, whole, plan,
               report: Path | None, classes: list | None = None) -> None:
        """Passes 5 and after: the class tasks' published rows (``classes``; else the judged
        node's, :meth:`release_judged`) written back, verified and moved into place."""
        spec = self.spec
        staging = self.staging
        assert staging is not None
        qis = [*prep.numeric, *prep.categorical]
        if classes is None:
            classes = self.judged_classes
        counts, kept_rows = self.write_back(classes, sources, staging, qis, prep, whole, choice.levels,
                                            report is not None)
        del classes
        self.judged_classes = []
        classes_out, smallest = check_written_classes(spec, [c[0] for c in counts], [c[1] for c in counts], qis,
                                                      whole.rows, whole.sensitive)
        more = {}
        if spec.risk_targets:
            more["risk_targets"] = check_written_risk(spec.risk_targets, spec.weight, [c[2] for c in counts],
                                                      qis, _release_households(counts, spec))["targets"]
        files = sorted(staging.iterdir())
        self.columns = pd.read_parquet(files[0]).head(0) if files else pd.DataFrame()
        if spec.perturb:
            more["perturbation"] = combined_perturb_steps([c[-1] for c in counts])
        if plan is not None:
            more.update(suppression="cells", missing_matches=spec.missing_matches, suppressed_cells=plan.cells)
        kept = int(sum(int(c[0]["rows"].sum()) for c in counts))
        self.summary = written_summary(spec, prep, choice, kept, classes_out, smallest, partitions=len(sources),
                                       output_partitions=len(files), output=str(target), **more)
        if report is None:
            os.replace(staging, target)
        else:
            self._report(report, sources, names, [str(f) for f in files], kept_rows, prep)
            try:
                os.replace(staging, target)
            except OSError:
                report.unlink(missing_ok=True)  # the release and its report together, or neither
                raise
        self.staging = None

    def placed(self, rows: np.ndarray) -> list[dict[str, Any]]:
        """Where each class task runs (``rows``: its rows): dealt out to the workers the largest
        first, each to the worker with the fewest rows so far, and started largest first there.
        Left to the scheduler, a task goes where most of its input lies, which for a class task
        (a piece from every partition) is anywhere: at 4,000,000 rows two of four workers ran
        three tasks each, a large one last, while the others idled. The placement is loose: a
        lost worker's tasks run elsewhere."""
        workers = sorted(self.client.scheduler_info().get("workers", {}))
        if not workers:
            return [{} for _ in rows]
        at = spread_classes(np.asarray(rows, np.int64), len(workers))
        return [{"workers": [workers[w]], "allow_other_workers": True, "priority": int(r)} for w, r in zip(at, rows)]

    def microaggregate(self, splits: list, n_out: int, whole, levels: dict[str, int], threads,
                       rows: np.ndarray) -> list:
        """Pass 4: the class tasks (futures of :func:`_classes`), each known not to have failed
        (``rows``: each one's rows, which place it, :meth:`placed`)."""
        classes, shuffled = [], []
        for c, place in enumerate(self.placed(rows)):
            parts = [self.submit(operator.getitem, f, c, priority=_FIRST) for f in splits]
            shuffled += parts
            classes.append(self.submit(_classes, parts, f"class task {c + 1} of {n_out}", _release_spec(self.spec),
                                       whole, levels, threads, **place))
        # said now: a phase ends where the next one is first named, and the classes' release may
        # finish long after the shuffle did; each task says only whether it failed (its rows stay
        # on its worker until the partitions gather them)
        self.say(f"microaggregating the classes: 0/{n_out} partitions")
        _wait([self.submit(_failed, c) for c in classes], "microaggregating the classes", self.say)
        self.let_go(splits + shuffled)
        return classes

    def write_back(self, classes: list, sources: list, staging: Path, qis: list[str], prep, whole,
                   levels: dict[str, int], report: bool) -> tuple[list, list]:
        """Pass 5: each input partition's published rows gathered back in its order and written
        into ``staging``; the written partitions' counts, and with ``report`` each partition's
        :func:`_kept_rows` (futures)."""
        spec = self.spec
        sensitive = {s.name: whole.sensitive[s.name] for s in prep.sensitive}
        weight = spec.weight if spec.risk_targets else None
        writes, backs, kept_rows = [], [], []
        n_in = len(sources)
        for i in range(n_in):
            backs.append([self.submit(_piece, c, i) for c in classes])
        offsets = self.household_offsets(sources, backs)
        release = (_release_spec(spec), levels)
        for i, back in enumerate(backs):
            path = str(staging / f"part-{i:05d}{suffix('parquet')}")
            writes.append(self.submit(_write, sources[i], self.codes[i], back, f"{Path(path).name} of the release",
                                      path, release,
                                      qis, list(prep.numeric), sensitive, weight,
                                      None if offsets is None else (spec, whole, offsets[i]),
                                      (spec.perturb, spec.names("strata"), spec.random_state) if spec.perturb
                                      else None))
            if report:
                # the positions of the partition's published rows in it: the report pairs them
                # without guessing from the columns that pass through
                kept_rows.append(self.submit(_kept_rows, back))
        self.say(f"writing the release: 0/{n_in} partitions")
        counts = [c for c in self.gather(writes, "writing the release") if c is not None]
        # the published rows are written: the workers may drop them (the graph still holds them
        # for a lost write or report task)
        self.let_go(classes + [b for back in backs for b in back] + self.codes)
        self.codes = []
        return counts, kept_rows

    def household_offsets(self, sources: list, backs: list) -> list[int] | None:
        """Per partition, the households the partitions before it publish (a renumbered
        household id runs on from there); zeros where the id is kept or dropped; None without
        a household column."""
        if self.spec.household is None:
            return None
        if self.spec.household_id != "renumber":
            return [0] * len(backs)
        counts = self.gather([self.submit(_households_published, s, b, self.spec.household)
                              for s, b in zip(sources, backs)],
                             "counting the published households")
        return [int(x) for x in np.cumsum([0, *counts[:-1]])]

    def let_go(self, futures: list) -> None:
        """Stop holding ``futures`` (read by the tasks after them) so that their workers may drop
        their data; a lost task that needs them again is recomputed from the graph."""
        keys = {f.key for f in futures}
        self.futures = [f for f in self.futures if f.key not in keys]

    def _report(self, path: Path, sources: list, names: list[str], files: list[str], kept: list, prep) -> None:
        """The release's report, from per-partition partial results (the report of a
        partitioned release; ``kept``: each partition's :func:`_kept_rows`), written beside it
        before the release is moved into place."""
        self.say("reporting on the release")
        spec = self.spec
        report = report_on(self.client, self.submit, sources, files, names, [*prep.numeric, *prep.categorical],
                           [s.name for s in prep.sensitive], list(prep.identifiers), k=spec.k,
                           numeric=list(prep.numeric), suppression=spec.suppression, say=self.say, kept_rows=kept)
        report.write(path)

    def cells(self, bottoms: list, counts: list, maps: list[np.ndarray], choice, prep, sources: list,
              names: list[str]):
        """The cells blanked at the chosen node (:func:`plan_cells`), decided here from the
        partitions' bottom classes: the node's classes as local suppression sees them; with
        risk targets, more cells blanked for them (:meth:`targets`)."""
        missing = None
        if self.spec.missing_matches == "any" or self.spec.risk_targets:
            missing = self.gather([self.submit(_missing, b) for b in bottoms], "finding the missing cells")
        self.say("blanking cells of the classes below k")
        plan = plan_cells(prep, counts, maps, choice, missing if self.spec.missing_matches == "any" else None)
        if self.spec.risk_targets:
            plan = self.targets(plan, bottoms, counts, maps, choice, prep, sources, names, missing or [])
        # the search's metrics are the rows suppression's; a cell release's are not computed here
        choice.metrics = None
        return plan

    def judge(self, choice, sources: list, names: list[str], bottoms: list, maps: list[np.ndarray], counts: list,
              whole, n_out: int, threads) -> IncrowdError | None:
        """The search's judgement of a node that passes on its classes, with risk targets beside
        numeric quasi-identifiers (the release's ``fits`` in one process): the node's classes
        split and microaggregated on the workers (passes 3 and 4, kept there), each group's key,
        rows and weight gathered, and the groups above a target decided here as one process
        decides them (:func:`suppress_group_keys`). None where the release goes ahead (what it
        made is kept for it), else the refusal."""
        spec = self.spec
        self.say(f"judging the node {', '.join(f'{a}={v}' for a, v in choice.levels.items())} by its groups")
        sizes = class_sizes(choice, counts, maps)
        where = spread_classes(sizes, n_out)
        splits = [self.submit(_split, s, n, b, whole, w, choice, where, n_out)
                  for s, n, b, w in zip(sources, names, bottoms, maps)]
        shuffled, grouped = [], []
        for c, place in enumerate(self.placed(np.bincount(where, weights=sizes, minlength=n_out))):
            parts = [self.submit(operator.getitem, f, c, priority=_FIRST) for f in splits]
            shuffled.append(parts)
            grouped.append(self.submit(_groups, parts, f"class task {c + 1} of {n_out}", spec, whole, choice.levels,
                                       threads, **place))
        keys = self.gather([self.submit(_group_keys, g, f"class task {c + 1} of {n_out}", choice.levels)
                            for c, g in enumerate(grouped)], "microaggregating the classes")
        for got in keys:
            if isinstance(got, IncrowdError):
                raise got
        numeric = [name for name, c in spec.columns.items() if c.role == "numeric"]
        out, suppressed, refusal = suppress_group_keys(spec, numeric, whole.rows, keys)
        made = splits + [f for parts in shuffled for f in parts] + grouped
        if refusal is not None:
            self.let_go(made)
            return refusal
        if self.judged is not None:  # a node the search took before this one: never the answer now
            self.let_go(self.judged["made"])
        self.judged = {"choice": choice, "shuffled": shuffled, "grouped": grouped, "out": out, "made": made,
                       "suppressed": suppressed}
        return None

    def release_judged(self, choice, bottoms: list, whole, target: Path) -> None:
        """Pass 4's release of the node the search took (:meth:`judge` made its groups): the
        groups above a target suppressed, each class task verified in memory."""
        judged = self.judged
        assert judged is not None and judged["choice"] is choice
        choice.suppressed = judged["suppressed"]
        self.let_go(bottoms)
        sweep_stale(target)
        self.staging = temp_path(target)
        self.staging.mkdir()
        n_out = len(judged["grouped"])
        classes = [self.submit(_grouped_classes, parts, g, out, f"class task {c + 1} of {n_out}", self.spec, whole,
                               choice.levels)
                   for c, (parts, g, out) in enumerate(zip(judged["shuffled"], judged["grouped"], judged["out"]))]
        _wait([self.submit(_failed, c) for c in classes], "microaggregating the classes", self.say)
        self.let_go(judged["made"])
        self.judged_classes = classes

    def targets(self, plan, bottoms: list, counts: list, maps: list[np.ndarray], choice, prep, sources: list,
                names: list[str], missing: list):
        """``plan`` with the cells blanked for the risk targets (:func:`plan_targets`), decided
        here from each partition's kinds of rows (their rows and weights at the blanks for k),
        as one process blanks them from every row's weight."""
        shared = dataclasses.replace(plan, offsets=[])
        kinds = self.gather([self.submit(_kinds, s, n, b, w, shared, plan.offsets[i], self.spec.weight)
                             for i, (s, n, b, w) in enumerate(zip(sources, names, bottoms, maps))],
                            "weighing the partitions' keys")
        for got in kinds:
            if isinstance(got, IncrowdError):
                raise got
        self.say("blanking cells for the risk targets")
        return plan_targets(prep, counts, maps, choice, plan, kinds, missing)

    def cancel(self) -> None:
        if self.client is not None:
            self.client.cancel(self.futures)
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
