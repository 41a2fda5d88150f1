"""``incrowd publish`` of one file in this process: its checks, the release, the report and
the summary, and its plain command line read without typer (the typer command itself, with
``--example-spec`` and the run on Dask, is in ``_publish``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

from .._runtime import lazy as _lazy
from ..exceptions import ParameterError
from ..io import is_stdout
from ..publishing import summary_lines
from . import _plain
from ._console import check_output_path, print_json, print_lines, stages, user_errors
from ._library import load_spec, read_table, table_format
from ._limits import DEFAULT_MAX_MEMORY_TEXT, DEFAULT_MAX_NODES_TEXT, lattice_limits
from ._release_report import check_report_path, write_release_report

publish = _lazy.function("incrowd.publishing._release", "publish")
check_spec_nodes = _lazy.function("incrowd.publishing._gtm", "check_spec_nodes")


def publish_here(data_path: Path, *, spec_path: Path | None, output: Path | None, report_path: Path | None,
                 max_nodes: str, max_memory: str, memory_limit: str | None, json_output: bool, quiet: bool) -> None:
    """One file published in this process: what ``incrowd publish`` runs without --scheduler
    and --example-spec."""
    with user_errors():
        if memory_limit is not None:
            raise ParameterError("--memory-limit bounds the workers of --scheduler local:N; give --scheduler too")
        if spec_path is None:
            raise ParameterError("--spec is required (or --example-spec to print a starting one)")
        if output is None:
            raise ParameterError("--output/-o is required: where to write the release")
        spec = load_spec(spec_path)
        node_limit, memory = lattice_limits(max_nodes, max_memory)
        check_spec_nodes(spec, node_limit)  # from the hierarchies alone, before the data are read
        hierarchy_files = tuple(c.hierarchy for c in spec.columns.values() if c.hierarchy is not None)
        check_output_path(output, (data_path, spec_path, *hierarchy_files))
        check_report_path(report_path, (data_path, spec_path, output, *hierarchy_files))
        with stages(4 + (report_path is not None), quiet=quiet or json_output) as progress:
            progress.stage(f"reading {data_path.name}")
            numeric = [c.name for c in spec.columns.values() if c.role == "numeric"]
            data = read_table(data_path, parse=numeric or None)
            progress.stage(f"publishing {data.shape[0]} rows ({spec.strategy}, k={spec.k})")
            result = publish(data, spec, max_nodes=node_limit, max_memory=memory)
            progress.stage(f"writing {output.name} and verifying it as written")
            sep = data.attrs.get("csv_sep") if table_format(output) == "csv" else None

            def write_report() -> None:
                # after the file's verification, before it is put in place: release and report
                # succeed together or neither is written
                if report_path is not None:
                    progress.stage(f"writing the report {report_path.name}")
                    write_release_report(report_path, data, result.table,
                                         inputs=(data_path, spec_path, output), **result.report_options())

            result.write(output, sep=sep, inputs=(data_path, spec_path, *hierarchy_files), then=write_report)
    info = {**result.summary(), "input": str(data_path), "output": str(output)}
    to_stderr = is_stdout(output)
    if json_output:
        print_json(info, err=to_stderr)
        return
    print_lines(summary_lines(info), err=to_stderr)


# ---------------------------------------------------------------------------------------------
# The plain command line, without typer's parsing (read by ``_plain``, which says why).
# --example-spec (a starting spec, printed once while a curator sets a release up) and the
# options of a run on Dask are no part of it: typer reads those command lines.

#: option -> (parameter, how its value is read)
PLAIN_OPTIONS = {"--spec": ("spec_path", "path"), "--output": ("output", "path"), "-o": ("output", "path"),
                 "--report": ("report_path", "path"), "--max-nodes": ("max_nodes", "text"),
                 "--max-memory": ("max_memory", "text")}
#: flag -> (parameter, value)
PLAIN_FLAGS = {"--json": ("json_output", True), "--quiet": ("quiet", True), "-q": ("quiet", True)}
#: publish_command's defaults (a test holds them to typer's), for a command line read without typer
DEFAULTS: dict[str, Any] = {"spec_path": None, "output": None, "report_path": None, "example_spec": False,
                            "max_nodes": DEFAULT_MAX_NODES_TEXT, "max_memory": DEFAULT_MAX_MEMORY_TEXT,
                            "json_output": False, "quiet": False, "scheduler": None, "scheduler_timeout": 10.0,
                            "memory_limit": None}
#: publish_command's parameters that a plain command line leaves at their defaults
_NOT_PLAIN = ("example_spec", "scheduler", "scheduler_timeout")


def plain_arguments(args: list[str]) -> dict[str, Any] | None:
    """publish_command's arguments from ``args`` (after ``publish``) in their plain form, as
    typer would pass them; None where typer must read the command line."""
    return _plain.read(args, PLAIN_OPTIONS, PLAIN_FLAGS, DEFAULTS)


def run_plain(arguments: dict[str, Any]) -> NoReturn:
    """The ``incrowd publish`` program on a plain command line (:func:`incrowd.cli._plain.run`)."""
    _plain.run(publish_here, arguments, left_out=_NOT_PLAIN)
