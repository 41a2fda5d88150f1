"""``incrowd risk``: the re-identification risk of one file as it is, before or after protection."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn, Optional

import typer

from .._runtime import enable_notice
from .._runtime import lazy as _lazy
from .._runtime import process as _process
from ..exceptions import ParameterError
from ..io import suffix
from ..reporting import risk_lines
from ._console import cancellable_run, check_output_path, echo_err, exit_now, print_json, print_lines, stages, user_errors
from ._dask_options import MemoryLimitOption, SchedulerOption, SchedulerTimeoutOption, check_scheduler
from ._library import read_table
from ._options import INPUT_FORMATS, JsonOption, QuietOption, names

measure_risk = _lazy.function("incrowd.reporting._risk_api", "risk")
output_kind = _lazy.function("incrowd.reporting._risk_api", "output_kind")


def risk_command(
    data_path: Annotated[Path, typer.Argument(metavar="DATA", help=f"The file to assess: {INPUT_FORMATS}. With "
                                              "--scheduler also a partitioned dataset: a folder or a (quoted) glob of "
                                              "CSV or Parquet files, one partition per file.", show_default=False)],
    qi: Annotated[Optional[list[str]], typer.Option(
        "--qi", help="Required: the quasi-identifier (key) columns, those an intruder may know, "
        "comma-separated (repeatable); a name holding a comma goes in double quotes: --qi '\"b,c\",a'. "
        "A missing key value matches any value, as in sdcMicro.", show_default=False)] = None,
    weight: Annotated[Optional[str], typer.Option(
        "--weight", help="The sampling-weight column: how many people each row stands for. Without it "
        "(and without --population) the file is taken for the whole population.", show_default=False)] = None,
    household: Annotated[Optional[str], typer.Option(
        "--household", help="The household-id column: adds each row's household risk.",
        show_default=False)] = None,
    population: Annotated[Optional[float], typer.Option(
        "--population", help="The population's size: the sampling fraction of the population-uniqueness "
        "estimates; without --weight each row stands for population / rows people.",
        show_default=False)] = None,
    threshold: Annotated[float, typer.Option(
        "--threshold", help="Individual risk above which a record counts as at risk.")] = 0.2,
    suda_scores: Annotated[str, typer.Option(
        "--suda-scores", help="How SUDA2 weighs a minimal sample unique of size s among M keys: "
        "'original' by (M - s)! (Elliot et al.; sdcMicro's default, original_scores=TRUE), 'ihsn' by "
        "(2^(M - s) - 1) s! (M - s)! / M!, as the IHSN's implementation did (original_scores=FALSE).")] = "original",
    suda: Annotated[bool, typer.Option(
        "--suda/--no-suda", help="Measure SUDA2, or leave it out: the other measures never depend on it. "
        "Its search is exponential in the keys; where it would take more than its work budget it is "
        "skipped with a line that says so.")] = True,
    suda_max_size: Annotated[Optional[int], typer.Option(
        "--suda-max-size", help="The largest minimal sample unique SUDA2 searches, in keys (default: all "
        "keys); larger ones add nothing to the scores.", show_default=False)] = None,
    model_risk: Annotated[str, typer.Option(
        "--model-risk", help="sdcMicro's log-linear model risk (modRisk) with --weight: 'default' (its standard "
        "model of the keys' main effects), 'CE' (Clogg and Eliason's, the weights as an offset) or 'none' "
        "to leave it out.")] = "default",
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="Also write the risk report, .html (one self-contained page) or .json, or "
        f"every record's measures in the input's order, {suffix('csv')} or {suffix('parquet')} (row, fk, Fk, "
        "individual_risk, "
        "suda_score, suda_dis_score, household_risk).",
        show_default=False)] = None,
    scheduler: SchedulerOption = None,
    scheduler_timeout: SchedulerTimeoutOption = 10.0,
    memory_limit: MemoryLimitOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Measure the re-identification risk of every record of DATA as sdcMicro does (fk, Fk,
    individual risk, SUDA2, household risk) and the file's global risk, expected
    re-identifications, log-linear model risk and population-uniqueness estimates.

    With --scheduler the file may be a partitioned dataset, measured on Dask partition by
    partition (no process holds it); -o with .csv or .parquet then names a folder that receives
    every record's measures, one file per partition."""
    if scheduler is not None:
        _risk_on_dask(data_path, qi, weight, household, population, threshold, suda_scores, suda, suda_max_size,
                      output, scheduler, scheduler_timeout, memory_limit, json_output, quiet)
        return
    _measure(data_path, qi=qi, weight=weight, household=household, population=population, threshold=threshold,
             suda_scores=suda_scores, suda=suda, suda_max_size=suda_max_size, model_risk=model_risk, output=output,
             memory_limit=memory_limit, json_output=json_output, quiet=quiet)


def _measure(data_path: Path, *, qi, weight, household, population, threshold, suda_scores, suda, suda_max_size,
             model_risk, output, memory_limit, json_output, quiet) -> None:
    """The risk of one file in this process: what ``incrowd risk`` runs without --scheduler."""
    _process.one_shot = _process.program  # one file, one measurement: a small one skips numba's start-up
    with user_errors():
        qis = _checked(qi, threshold, suda_scores, suda_max_size, model_risk, memory_limit)
        if output is not None:
            _check_output(output, data_path)
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
    _show(result, output, json_output)


def _checked(qi, threshold, suda_scores, suda_max_size, model_risk: str = "default",
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


def _risk_on_dask(data_path: Path, qi, weight, household, population, threshold, suda_scores, suda, suda_max_size,
                  output, scheduler, scheduler_timeout, memory_limit, json_output, quiet) -> None:
    """The risk of a partitioned dataset on Dask: progress per partition, Ctrl-C ends it cleanly."""
    from ..distributed import connect

    with user_errors(), cancellable_run("the risk was not measured"):
        qis = _checked(qi, threshold, suda_scores, suda_max_size)
        check_scheduler(scheduler, scheduler_timeout)
        records = None
        if output is not None:
            if output_kind(output) == "records":
                records = output
            else:
                _check_output(output, data_path)
        with stages(3 if output is not None and records is None else 2, quiet=quiet or json_output) as progress:
            progress.stage(f"connecting to {scheduler}")
            with connect(scheduler, memory_limit=memory_limit, timeout=scheduler_timeout) as client:
                progress.stage(f"measuring the risk of {data_path.name}")
                result = measure_risk(str(data_path), qis, weight=weight, household=household, population=population,
                                      threshold=threshold, suda_original_scores=suda_scores == "original",
                                      suda=suda, suda_max_size=suda_max_size, scheduler=client, records=records,
                                      progress=progress.describe)
            if output is not None and records is None:
                progress.stage(f"writing {output.name}")
                result.write(output, inputs=(data_path,))
    _show(result, output, json_output)


def _check_output(output: Path, data_path: Path) -> None:
    """Before any work: ``-o`` names a report (.html, .json) or the records (.csv, .parquet)
    that can be written, and not the input."""
    try:
        kind = output_kind(output)
    except ParameterError as exc:
        raise ParameterError(f"-o {exc}") from None
    check_output_path(output, (data_path,), what="risk records" if kind == "records" else "risk report",
                      stdout_ok=False)


def _show(result, output: Path | None, json_output: bool) -> None:
    if json_output:
        print_json(result.to_dict())
    else:
        print_lines(risk_lines(result, output))


# ---------------------------------------------------------------------------------------------
# The plain command line, without typer's parsing
#
# Building the typer application (every command's options, typer's pydantic checks of each
# value) costs a one-shot ``incrowd risk`` about a fifth of a second, more than the risk of a
# survey-sized file. A command line in its plain form (each option once, spelled in full or as
# -o/-q, its value the next word; one file) is read here into the very arguments typer would
# give risk_command; anything else (--help, --scheduler, --opt=value, a repeated option, a
# value that is not a plain number, a mistake) goes to typer, so help and every error line
# stay typer's.

#: option -> (parameter, how its value is read)
PLAIN_OPTIONS = {"--qi": ("qi", "list"), "--weight": ("weight", "text"), "--household": ("household", "text"),
                 "--population": ("population", "number"), "--threshold": ("threshold", "number"),
                 "--suda-scores": ("suda_scores", "text"), "--suda-max-size": ("suda_max_size", "whole"),
                 "--model-risk": ("model_risk", "text"), "--output": ("output", "path"), "-o": ("output", "path")}
#: flag -> (parameter, value)
PLAIN_FLAGS = {"--suda": ("suda", True), "--no-suda": ("suda", False), "--json": ("json_output", True),
               "--quiet": ("quiet", True), "-q": ("quiet", True)}
# numbers every parser reads alike (typer's goes through pydantic; Python's float and int round
# the same decimal to the same double)
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?")
_WHOLE = re.compile(r"0|[1-9][0-9]{0,17}")


def plain_arguments(args: list[str]) -> dict[str, Any] | None:
    """risk_command's arguments from ``args`` (after ``risk``) in their plain form, as typer
    would pass them; None where typer must read the command line."""
    arguments: dict[str, Any] = {name: parameter.default
                                 for name, parameter in inspect.signature(risk_command).parameters.items()}
    given: set[str] = set()
    files: list[str] = []
    words = iter(args)
    for word in words:
        if word in PLAIN_FLAGS:
            name, flag = PLAIN_FLAGS[word]
            if name in given:
                return None
            given.add(name)
            arguments[name] = flag
        elif word in PLAIN_OPTIONS:
            name, kind = PLAIN_OPTIONS[word]
            value = next(words, None)
            if value is None or value == "" or value.startswith("-") or (name in given and kind != "list"):
                return None
            given.add(name)
            if kind == "list":
                arguments[name] = [*(arguments[name] or []), value]
            elif kind == "number" and _NUMBER.fullmatch(value):
                arguments[name] = float(value)
            elif kind == "whole" and _WHOLE.fullmatch(value):
                arguments[name] = int(value)
            elif kind in ("text", "path"):
                arguments[name] = Path(value) if kind == "path" else value
            else:
                return None
        elif word.startswith("-") or word == "":
            return None
        else:
            files.append(word)
    if len(files) != 1 or arguments["scheduler"] is not None:
        return None
    arguments["data_path"] = Path(files[0])
    return arguments


def run_plain(arguments: dict[str, Any]) -> NoReturn:
    """The ``incrowd risk`` program on a plain command line: as typer runs risk_command (the
    compile notice unless quiet, an error line and status 2 for a user's error, Ctrl-C as
    "error: aborted" and status 1), then the program's quick exit."""
    _process.program = True
    if not arguments["quiet"]:
        enable_notice()
    code: Any = 0
    try:
        risk_command(**arguments)
    except typer.Exit as stop:
        code = stop.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        echo_err("error", "aborted")
        code = 1
    except BrokenPipeError:  # the reader of stdout went away: status 1, as click ends it
        code = 1
    exit_now(code)
