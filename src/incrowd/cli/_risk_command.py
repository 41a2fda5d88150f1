"""``incrowd risk``: the re-identification risk of one file as it is, before or after protection."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..io import suffix
from . import _risk
from ._console import cancellable_run, stages, user_errors
from ._dask_options import MemoryLimitOption, SchedulerOption, SchedulerTimeoutOption, check_scheduler
from ._options import INPUT_FORMATS, JsonOption, QuietOption


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
    _risk.measure(data_path, qi=qi, weight=weight, household=household, population=population, threshold=threshold,
                  suda_scores=suda_scores, suda=suda, suda_max_size=suda_max_size, model_risk=model_risk,
                  output=output, memory_limit=memory_limit, json_output=json_output, quiet=quiet)


def _risk_on_dask(data_path: Path, qi, weight, household, population, threshold, suda_scores, suda, suda_max_size,
                  output, scheduler, scheduler_timeout, memory_limit, json_output, quiet) -> None:
    """The risk of a partitioned dataset on Dask: progress per partition, Ctrl-C ends it cleanly."""
    from ..distributed import connect

    with user_errors(), cancellable_run("the risk was not measured"):
        qis = _risk.checked(qi, threshold, suda_scores, suda_max_size)
        check_scheduler(scheduler, scheduler_timeout)
        records = None
        if output is not None:
            if _risk.output_kind(output) == "records":
                records = output
            else:
                _risk.check_output(output, data_path)
        with stages(3 if output is not None and records is None else 2, quiet=quiet or json_output) as progress:
            progress.stage(f"connecting to {scheduler}")
            with connect(scheduler, memory_limit=memory_limit, timeout=scheduler_timeout) as client:
                progress.stage(f"measuring the risk of {data_path.name}")
                result = _risk.measure_risk(str(data_path), qis, weight=weight, household=household,
                                            population=population, threshold=threshold,
                                            suda_original_scores=suda_scores == "original", suda=suda,
                                            suda_max_size=suda_max_size, scheduler=client, records=records,
                                            progress=progress.describe)
            if output is not None and records is None:
                progress.stage(f"writing {output.name}")
                result.write(output, inputs=(data_path,))
    _risk.show(result, output, json_output)
