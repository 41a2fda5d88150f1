"""``incrowd risk`` in one process: the measurement, its checks and its output, and the plain
command line read without typer (the typer command itself is in ``_risk_command``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

from .._runtime import lazy as _lazy
from .._runtime import process as _process
from ..exceptions import ParameterError
from ..reporting import risk_lines
from . import _plain
from ._console import check_output_path, print_json, print_lines, stages, user_errors
from ._library import read_table
from ._names import names

measure_risk = _lazy.function("incrowd.reporting._risk_api", "risk")
output_kind = _lazy.function("incrowd.reporting._risk_api", "output_kind")


def measure(data_path: Path, *, qi, weight, household, population, threshold, suda_scores, suda, suda_max_size,
             model_risk, output, memory_limit, json_output, quiet) -> None:
    """The risk of one file in this process: what ``incrowd risk`` runs without --scheduler."""
    _process.one_shot = _process.program  # one file, one measurement: a small one skips numba's start-up
    with user_errors():
        qis = checked(qi, threshold, suda_scores, suda_max_size, model_risk, memory_limit)
        if output is not None:
            check_output(output, data_path)
        with stages(3 if output is not None else 2, quiet=quiet or json_output) as progress:
            progress.stage("reading the file")
            data = read_table(data_path)
            progress.stage("measuring the risk")
            result = measure_risk(data, qis, weight=weight, household=household, population=population,
                                  threshold=threshold, suda_original_scores=suda_scores == "original",
                                  suda=suda, suda_max_size=suda_max_size,
                                  model_risk=None if model_risk == "none" else model_risk)
            if output is not None:
                progress.stage(f"writing {output.name}")
                result.write(output, inputs=(data_path,))
    show(result, output, json_output)


def checked(qi, threshold, suda_scores, suda_max_size, model_risk: str = "default",
             memory_limit: str | None = None) -> list[str]:
    if memory_limit is not None:
        raise ParameterError("--memory-limit bounds the workers of --scheduler local:N; give --scheduler too")
    qis = names(qi, "--qi")
    if not qis:
        raise ParameterError("--qi is required: the columns an intruder may know")
    if not 0 < threshold <= 1:
        raise ParameterError(f"--threshold must be in (0, 1]; got {threshold}")
    if suda_scores not in ("original", "ihsn"):
        raise ParameterError(f"--suda-scores must be 'original' or 'ihsn'; got {suda_scores!r}")
    if suda_max_size is not None and suda_max_size < 1:
        raise ParameterError(f"--suda-max-size must be at least 1; got {suda_max_size}")
    if model_risk not in ("default", "CE", "none"):
        raise ParameterError(f"--model-risk must be 'default', 'CE' or 'none'; got {model_risk!r}")
    return qis


def check_output(output: Path, data_path: Path) -> None:
    """Before any work: ``-o`` names a report (.html, .json) or the records (.csv, .parquet)
    that can be written, and not the input."""
    try:
        kind = output_kind(output)
    except ParameterError as exc:
        raise ParameterError(f"-o {exc}") from None
    check_output_path(output, (data_path,), what="risk records" if kind == "records" else "risk report",
                      stdout_ok=False)


def show(result, output: Path | None, json_output: bool) -> None:
    if json_output:
        print_json(result.to_dict())
    else:
        print_lines(risk_lines(result, output))


# ---------------------------------------------------------------------------------------------
# The plain command line, without typer's parsing (read by ``_plain``, which says why)

#: option -> (parameter, how its value is read)
PLAIN_OPTIONS = {"--qi": ("qi", "list"), "--weight": ("weight", "text"), "--household": ("household", "text"),
                 "--population": ("population", "number"), "--threshold": ("threshold", "number"),
                 "--suda-scores": ("suda_scores", "text"), "--suda-max-size": ("suda_max_size", "whole"),
                 "--model-risk": ("model_risk", "text"), "--output": ("output", "path"), "-o": ("output", "path")}
#: flag -> (parameter, value)
PLAIN_FLAGS = {"--suda": ("suda", True), "--no-suda": ("suda", False), "--json": ("json_output", True),
               "--quiet": ("quiet", True), "-q": ("quiet", True)}
#: risk_command's defaults (a test holds them to typer's), for a command line read without typer
DEFAULTS: dict[str, Any] = {"qi": None, "weight": None, "household": None, "population": None, "threshold": 0.2,
                            "suda_scores": "original", "suda": True, "suda_max_size": None, "model_risk": "default",
                            "output": None, "scheduler": None, "scheduler_timeout": 10.0, "memory_limit": None,
                            "json_output": False, "quiet": False}
#: the options of a run on Dask, never part of a plain command line
_DASK = ("scheduler", "scheduler_timeout")


def plain_arguments(args: list[str]) -> dict[str, Any] | None:
    """risk_command's arguments from ``args`` (after ``risk``) in their plain form, as typer
    would pass them; None where typer must read the command line."""
    return _plain.read(args, PLAIN_OPTIONS, PLAIN_FLAGS, DEFAULTS)


def run_plain(arguments: dict[str, Any]) -> NoReturn:
    """The ``incrowd risk`` program on a plain command line (:func:`incrowd.cli._plain.run`)."""
    _plain.run(measure, arguments, left_out=_DASK)
