"""``incrowd publish``: one release of a survey file over numeric and categorical
quasi-identifiers together, as a release specification says."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .._runtime import lazy as _lazy
from ..exceptions import ParameterError
from ..io import suffix
from ..publishing import cells_line, risk_targets_text, summary_lines
from . import _publish_file
from ._console import cancellable_run, print_json, print_lines, stages, user_errors
from ._dask_options import SchedulerOption, SchedulerTimeoutOption, check_scheduler
from ._generalization import MaxMemoryOption, MaxNodesOption
from ._library import load_spec, read_table
from ._limits import DEFAULT_MAX_MEMORY_TEXT, DEFAULT_MAX_NODES_TEXT, lattice_limits
from ._options import INPUT_FORMATS, OUTPUT_FORMATS, JsonOption, QuietOption
from ._release_report import check_report_path

example_toml = _lazy.function("incrowd.publishing._example", "example_toml")
hierarchy_files_in = _lazy.function("incrowd.publishing._example", "hierarchy_files_in")


#: the help of ``incrowd publish`` (the release's example name takes the CSV suffix of the
#: format registry)
PUBLISH_HELP = f"""Publish DATA as one release that is k-anonymous over all its quasi-identifiers together
(numeric ones microaggregated, categorical ones generalized), with l-diversity and
t-closeness of sensitive columns where the spec asks.

Start with 'incrowd publish DATA --example-spec > release.toml', edit the roles, then
'incrowd publish DATA --spec release.toml -o release{suffix("csv")}'.
"""


def publish_command(
    data_path: Annotated[Path, typer.Argument(
        metavar="DATA", help=f"The file to publish: {INPUT_FORMATS}. With --scheduler a partitioned dataset: a "
        "folder or a (quoted) glob of CSV or Parquet files, one partition per file.", show_default=False)],
    spec_path: Annotated[Optional[Path], typer.Option(
        # a backslash keeps rich's markup from taking the section names for style tags
        "--spec", help="Release specification (TOML): \\[privacy] k, l, t, max_suppression, strategy, "
        "method; \\[columns] a role per column; \\[missing]. Hierarchy paths are read from the spec's folder.",
        show_default=False)] = None,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help=f"The release; its extension picks the format ({OUTPUT_FORMATS}). "
        "Written atomically, and only after the file as written was read back and verified k-anonymous "
        "over all quasi-identifiers (and l-diverse, t-close where asked). Never one of the inputs.",
        show_default=False)] = None,
    report_path: Annotated[Optional[Path], typer.Option(
        "--report", help="Also write the release report: .json, or .html (one self-contained page).",
        show_default=False)] = None,
    example_spec: Annotated[bool, typer.Option(
        "--example-spec", help="Print a starting specification for DATA (roles guessed from the "
        "file's metadata and the columns' types, hierarchy files beside DATA proposed by name; to "
        "edit, saved beside DATA) and exit.")] = False,
    max_nodes: MaxNodesOption = DEFAULT_MAX_NODES_TEXT,
    max_memory: MaxMemoryOption = DEFAULT_MAX_MEMORY_TEXT,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    scheduler: SchedulerOption = None,
    scheduler_timeout: SchedulerTimeoutOption = 10.0,
    memory_limit: Annotated[Optional[str], typer.Option(
        "--memory-limit", help="With --scheduler local:N: each worker's memory (e.g. 2GiB); a worker above it "
        "is restarted by Dask.", show_default=False)] = None,
) -> None:
    """``incrowd publish``; what it does is its help, :data:`PUBLISH_HELP`."""
    if scheduler is not None:
        _publish_on_dask(data_path, spec_path, output, report_path, example_spec, max_nodes, max_memory, scheduler,
                         scheduler_timeout, memory_limit, json_output, quiet)
        return
    _publish_here(data_path, spec_path, output, report_path, example_spec, max_nodes, max_memory, memory_limit,
                  json_output, quiet)


def _publish_here(data_path: Path, spec_path, output, report_path, example_spec, max_nodes, max_memory, memory_limit,
                  json_output, quiet) -> None:
    """One file published in this process, or its starting spec printed."""
    if example_spec and memory_limit is None:
        with user_errors():
            data = read_table(data_path)
            folder = data_path.resolve().parent
            typer.echo(example_toml(data, data_path.name, hierarchy_files_in(folder), folder), nl=False)
        return
    _publish_file.publish_here(data_path, spec_path=spec_path, output=output, report_path=report_path,
                               max_nodes=max_nodes, max_memory=max_memory, memory_limit=memory_limit,
                               json_output=json_output, quiet=quiet)


def _publish_on_dask(data_path: Path, spec_path, output, report_path, example_spec, max_nodes, max_memory,
                     scheduler, scheduler_timeout, memory_limit, json_output, quiet) -> None:
    """A partitioned dataset published on Dask into a Parquet dataset (a folder): progress per
    partition; Ctrl-C ends it with one line and leaves nothing."""
    from ..distributed import connect

    with user_errors(), cancellable_run("the release was not published"):
        if example_spec:
            raise ParameterError("--example-spec reads the file in one process; leave it out with --scheduler")
        if spec_path is None or output is None:
            raise ParameterError(f"{'--spec' if spec_path is None else '--output/-o'} is required: "
                                 + ("the release specification" if spec_path is None else
                                    "the folder to write the release into (a Parquet dataset)"))
        check_scheduler(scheduler, scheduler_timeout)
        check_report_path(report_path, (data_path, spec_path, output))
        spec = load_spec(spec_path)
        node_limit, memory = lattice_limits(max_nodes, max_memory)
        with stages(2, quiet=quiet or json_output) as progress:
            progress.stage(f"connecting to {scheduler}")
            with connect(scheduler, memory_limit=memory_limit, timeout=scheduler_timeout) as client:
                progress.stage(f"publishing {data_path.name} ({spec.strategy}, k={spec.k})")
                result = _publish_file.publish(str(data_path), spec, max_nodes=node_limit, max_memory=memory,
                                               scheduler=client, output=output, progress=progress.describe,
                                               report=report_path)
    info = {**result.summary(), "input": str(data_path),
            **({"report": str(report_path)} if report_path is not None else {})}
    if json_output:
        print_json(info)
        return
    print_lines(_dask_lines(info))


def _dask_lines(info: dict) -> list[tuple[str, str]]:
    """The summary of a release written on Dask (its measures of loss are the report's, not made here)."""
    risk = [("risk targets", risk_targets_text(info["risk_targets"]))] if info.get("risk_targets") else []
    cells = [("suppressed cells", cells_line(info))] if info.get("suppression") == "cells" else []
    wildcard = info.get("missing_matches") == "any"
    return [
        ("input", info["input"]),
        ("strategy", f"{info['strategy']} (method {info['method']})"),
        ("privacy", f"{', '.join(info['models'])}; sensitive: {', '.join(info['sensitive']) or 'none'}"),
        ("levels", ", ".join(f"{a}={v}" for a, v in info["levels"].items()) or "-"),
        ("rows", f"{info['rows_in']} in, {info['rows_out']} out"),
        ("suppressed", f"{info['suppressed']} rows ({100 * info['suppressed_fraction']:.3f} %)"),
        *cells,
        ("classes", f"{info['classes']} distinct keys, every row matching at least {info['min_class_size']} rows"
                    if wildcard else f"{info['classes']}, smallest {info['min_class_size']} rows"),
        ("partitions", f"{info['partitions']} read, {info['output_partitions']} written"),
        ("seconds", f"{info['seconds']:.3f}"),
        ("verified", "each partition as written, then k (and l) over the whole release from their class counts"
                     + (" (a missing value matching any value)" if wildcard else "")
                     + (", the risk targets from their keys' weights" if risk else "")),
        *risk,
        ("written", info["output"]),
        *([("report", info["report"])] if info.get("report") else []),
    ]


__all__ = ["publish_command", "summary_lines"]
