"""The typer application: ``incrowd microaggregate | methods | demo`` and ``--version``."""

from __future__ import annotations

import contextlib
import inspect
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from .._runtime import compile_clock
from .._runtime import lazy as _lazy
from ..exceptions import ParameterError, VerificationError
from ..io import NA_HELP, is_stdout, suffix
from ._console import check_output_path, print_json, print_lines, stages, stdout_console, user_errors
from ._console import exit_now as _exit_now
from ._dask_options import SchedulerOption, SchedulerTimeoutOption, check_scheduler
from ._generalization import generalize_command, lattice_app, negotiate_command
from ._incremental import incremental_app
from ._library import read_table, table_format
from ._names import names
from ._options import (
    INPUT_FORMATS,
    OUTPUT_FORMATS,
    BoundOption,
    DiagonalsOption,
    GammaOption,
    IdOption,
    JsonOption,
    KOption,
    MaxRoundsOption,
    MaxSecondsOption,
    MethodOption,
    QiOption,
    QuietOption,
    RhoOption,
    RunsOption,
    SeedOption,
    Split2kOption,
    StartOption,
    method_params,
    parse_qis,
)
from ._publish import PUBLISH_HELP, publish_command
from ._release_report import check_report_path, write_release_report
from ._report import ReportOption, report_command
from ._risk_command import risk_command
from ._serve import serve_command
from ._usage import OneLineUsageErrors
from ._warmup import warmup_command

if TYPE_CHECKING:
    from ..microaggregation import MicroaggregationResult

# pandas, numba and the methods load when a command runs, not for --help or --version
check_distributed_method = _lazy.function("incrowd.microaggregation", "check_distributed_method")
microaggregate = _lazy.function("incrowd.microaggregation", "microaggregate")
load_census = _lazy.function("incrowd.datasets", "load_census")

app = typer.Typer(
    name="incrowd",
    help="Publish microdata so that every person hides in a crowd of at least k look-alikes: publish, report and "
         "risk for survey files, microaggregation, generalization, incremental releases and a web UI.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=OneLineUsageErrors,
)

DEMO_GAMMA = 0.2  # V-MDAV's gamma in the demo (Solanas et al.'s value for scattered data)


app.add_typer(incremental_app, name="incremental")
app.add_typer(lattice_app, name="lattice")
app.command("negotiate")(negotiate_command)
app.command("generalize")(generalize_command)
app.command("publish", help=PUBLISH_HELP)(publish_command)
app.command("report")(report_command)
app.command("risk")(risk_command)
app.command("serve")(serve_command)
app.command("warmup")(warmup_command)


def main() -> None:
    """Console-script entry point."""
    from .._runtime import enable_notice

    if not {"-q", "--quiet"} & set(sys.argv[1:]):
        enable_notice()
    app()


def run() -> None:
    """The ``incrowd`` program (console script and ``python -m incrowd.cli``): :func:`main`,
    then a quick exit (:func:`_exit_now`). Code that calls :func:`main` itself gets its
    ``SystemExit`` as before."""
    from .._runtime import process as _process

    _process.program = True
    try:
        main()
    except SystemExit as stop:
        _exit_now(stop.code)
    _exit_now(0)


def _print_version(value: bool) -> None:
    if value:
        from .._runtime import __version__  # read from the package metadata only when asked

        typer.echo(f"incrowd {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Microaggregate numerical quasi-identifiers so every row hides in a group of >= k rows.

    Errors the user can fix print one line 'error: <message>' on stderr and exit with code 2.
    """


def _report(result: MicroaggregationResult, input_path: Path, output: Path, err: bool = False,
            written: dict | None = None) -> None:
    s = {**result.summary(), **(written or {})}
    params = ", ".join(f"{p}={v}" for p, v in s["params"].items())
    rows = [
        ("input", str(input_path)),
        ("method", f"{s['method']} (k={s['k']}{', ' + params if params else ''})"),
        ("quasi-identifiers", ", ".join(s["quasi_identifiers"])),
        ("identifiers dropped", ", ".join(s["identifiers_dropped"]) or "none"),
        ("rows", str(s["rows"])),
        ("groups", str(s["groups"])),
        ("group size", f"min {s['min_group_size']}, max {s['max_group_size']}, "
                       f"mean {s['mean_group_size']:.2f}"),
        ("information loss", f"{s['information_loss_percent']:.3f} % "
                             "(SSE/SST on standardized QIs; lower is better)"),
        *([("lower bound", f"{s['lower_bound_percent']:.3f} % (no grouping with k={s['k']} loses less); "
                            + (f"the result is at most {100 * s['gap']:.1f} % above the best possible"
                               if s["gap"] is not None else "gap unknown"))]
          if "lower_bound" in s else []),
        ("seconds", f"{s['seconds']:.3f}" + _compile_note(s)),
        ("k-anonymous", f"yes (verified on the written file: smallest class has {s['min_class_size']} rows, "
                        f"k={s['k']})" if s["k_anonymous"] else "NO"),
        ("output", "standard output" if err else str(output)),
    ]
    console = stdout_console(err)
    width = max(len(key) for key, _ in rows) + 2
    for key, value in rows:  # plain lines, not a table: a long path must never be cut short
        console.print(Text.assemble((key.ljust(width), "bold"), value), soft_wrap=True)


def _compile_note(summary: dict) -> str:
    c = summary.get("compile_seconds") or 0.0
    return f" (plus {c:.3f} s to compile or load the kernels, not counted)" if c >= 0.0005 else ""


@app.command("microaggregate")
def microaggregate_command(
    input_path: Annotated[
        Path,
        typer.Argument(
            metavar="INPUT",
            help=f"{INPUT_FORMATS} file; a statistical file's user-missing values count as missing. " + NA_HELP,
            show_default=False,
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o",
            help=f"Output file; its extension picks the format ({OUTPUT_FORMATS}). A CSV keeps the input's delimiter; an SPSS "
                 "or Stata file keeps variable labels, and the value labels and missing-value "
                 "definitions of the columns passed through. '-' writes CSV to stdout "
                 "(the report goes to stderr). Never one of the inputs; only a regular file "
                 "is replaced.",
            show_default=False,
        ),
    ],
    k: KOption,
    method: MethodOption = "mdav",
    qi: QiOption = None,
    identifiers: IdOption = None,
    gamma: GammaOption = None,
    rho: RhoOption = None,
    runs: RunsOption = None,
    max_rounds: MaxRoundsOption = None,
    max_seconds: MaxSecondsOption = None,
    start: StartOption = None,
    diagonals: DiagonalsOption = None,
    split_2k: Split2kOption = None,
    seed: SeedOption = None,
    bound: BoundOption = False,
    scheduler: SchedulerOption = None,
    scheduler_timeout: SchedulerTimeoutOption = 10.0,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    report_path: ReportOption = None,
) -> None:
    """Microaggregate the quasi-identifiers of INPUT into groups of >= k rows and write OUTPUT.

    Identifiers (--id) are dropped; other columns pass through unchanged and in order (a CSV
    column as the file's exact text, a Parquet column with its type).

    OUTPUT is written atomically, and only after the aggregated table was verified k-anonymous.
    """
    from .._runtime import process as _process

    _process.one_shot = _process.program and scheduler is None
    params = method_params(gamma=gamma, rho=rho, runs=runs, max_rounds=max_rounds, max_seconds=max_seconds,
                           start=start, diagonals=diagonals, split_2k=split_2k)
    with user_errors():
        qis = names(qi, "--qi")
        ids = names(identifiers, "--id")
        check_scheduler(scheduler, scheduler_timeout)
        if scheduler is not None:
            check_distributed_method(method)
        if scheduler is not None and input_path.is_dir():
            if report_path is not None:
                raise ParameterError("--report needs the table in memory; a Parquet dataset folder on Dask "
                                     "is written part by part: run 'incrowd report' on a sample instead")
            _microaggregate_dataset(input_path, output, k, method, qis, ids, scheduler, json_output, quiet, params,
                                    scheduler_timeout)
            return
        check_output_path(output, (input_path,))
        check_report_path(report_path, (input_path, output))
        with stages(4 + (report_path is not None), quiet=quiet or json_output) as progress:
            progress.stage(f"reading {input_path.name}")
            data = read_table(input_path, parse=parse_qis(qis, ids))
            progress.stage(f"microaggregating {data.shape[0]} rows with {method}, k={k}")
            result = _microaggregate_here_or_on(scheduler, scheduler_timeout, data, k, method, quasi_identifiers=qis,
                                                identifiers=ids, random_state=seed, bound=bound, **params)
            written = _write_verified(result, data, input_path, output, report_path, progress)
    _print_result(result, written, input_path, output, json_output)


def _microaggregate_here_or_on(scheduler: str | None, timeout: float, data, k: int, method: str,
                               **options) -> MicroaggregationResult:
    """``microaggregate`` in this process, or on the Dask scheduler ``scheduler`` when given."""
    with contextlib.ExitStack() as stack:
        client = None
        if scheduler is not None:
            from ..distributed import connect

            client = stack.enter_context(connect(scheduler, timeout=timeout))
        return microaggregate(data, k, method, scheduler=client, **options)


def _print_result(result: MicroaggregationResult, written: dict, input_path: Path, output: Path,
                  json_output: bool) -> None:
    """The summary of a written release, with what its verification on the written file found."""
    to_stderr = is_stdout(output)
    as_written = {"min_class_size": written["k_anonymity"]["min_class_size"],
                  "verified_on": written["verified_on"], "read_back_as": written["read_back_as"]}
    if json_output:
        print_json({**result.summary(), **as_written, "verification": written, "input": str(input_path),
                    "output": str(output)},
                   err=to_stderr)
    else:
        _report(result, input_path, output, err=to_stderr, written=as_written)


def _write_verified(result: MicroaggregationResult, data, input_path: Path, output: Path, report_path: Path | None,
                    progress) -> dict:
    """Write the release (and its report) only once verified k-anonymous in memory and, read
    back, as written; the written file's verification record."""
    progress.stage("verifying k-anonymity")
    if not result.verification.ok:  # microaggregate raises first; never write unverified data
        raise VerificationError(
            f"the aggregated data is not {result.k}-anonymous (smallest class "
            f"{result.verification.min_class_size}); nothing was written"
        )
    progress.stage(f"writing {output.name} and verifying it as written")
    sep = data.attrs.get("csv_sep") if table_format(output) == "csv" else None

    def write_report(record: dict) -> None:
        # after the written file's verification, before it is put in place: the release
        # and its report succeed together or neither is written
        if report_path is not None:
            progress.stage(f"writing the report {report_path.name}")
            write_release_report(report_path, data, result.table, inputs=(input_path, output),
                                 quasi_identifiers=result.quasi_identifiers,
                                 identifiers=result.identifiers, k=result.k,
                                 release_summary={**result.summary(), "verification": record})

    from ..io import Promise, write_release
    from ..privacy import KAnonymity, ReleaseCheck

    return write_release(
        result.table, output, Promise(tuple(result.quasi_identifiers), ReleaseCheck((KAnonymity(result.k),)),
                                      finite=tuple(result.quasi_identifiers)),
        sep=sep, inputs=(input_path,), then=write_report)


def _microaggregate_dataset(input_path, output, k, method, qis, ids, scheduler, json_output, quiet, params,
                            timeout):
    """A Parquet dataset folder in, a Parquet dataset folder out, on Dask (never in memory)."""
    from ..distributed import connect, microaggregate_dataset

    with stages(2, quiet=quiet or json_output) as progress:
        progress.stage(f"connecting to {scheduler}")
        with connect(scheduler, timeout=timeout) as client:
            progress.stage(f"microaggregating the partitions of {input_path.name} with {method}, k={k}")
            info = microaggregate_dataset(input_path, output, k, method, client=client, quasi_identifiers=qis,
                                          identifiers=ids, **params)
    if json_output:
        print_json({**info, "input": str(input_path)})
        return
    print_lines([
        ("input", f"{input_path} ({info['partitions']} partitions, {info['rows']} rows)"),
        ("method", f"{method}, k={k}, rho={info['rho']}"),
        ("groups", f"{info['groups']} of {info['min_group_size']}..{info['max_group_size']} rows"),
        ("information loss", f"{info['information_loss_percent']:.4f} %"),
        ("verified", f"{k}-anonymous before the folder was renamed into place"),
        ("written", f"{output}/ (one Parquet file per input partition)"),
    ])


def _describe_methods() -> list[dict[str, Any]]:
    from ..microaggregation import METHODS

    out = []
    for name, cls in METHODS.items():
        doc = inspect.getdoc(cls) or ""
        params = {p: v for p, v in cls().get_params().items() if p not in ("k", "random_state")}
        out.append({
            "name": name,
            "estimator": cls.__name__,
            "description": doc.splitlines()[0].strip() if doc else "",
            "parameters": params,
        })
    return out


@app.command("methods")
def methods_command(
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON object on stdout, nothing else."),
    ] = False,
) -> None:
    """List the microaggregation methods with a one-line description each."""
    methods = _describe_methods()
    if json_output:
        print_json({"methods": methods})
        return
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    for column in ("method", "estimator", "parameters", "description"):
        table.add_column(column)
    for m in methods:
        params = ", ".join(f"{p}={v}" for p, v in m["parameters"].items()) or "-"
        table.add_row(Text(m["name"]), Text(m["estimator"]), Text(params), Text(m["description"]))
    stdout_console().print(table)


def _demo_table(results: dict[str, MicroaggregationResult], compile_seconds: float) -> Table:
    """The demo's comparison of the methods, one row each."""
    caption = f"v-mdav runs with gamma={DEMO_GAMMA}; seconds: the algorithm alone"
    if compile_seconds >= 0.0005:
        caption += (f" (compiling or loading the kernels took {compile_seconds:.1f} s more, "
                    "not counted)")
    table = Table(show_header=True, header_style="bold", caption=caption)
    for column, justify in (("method", "left"), ("groups", "right"), ("min size", "right"),
                            ("max size", "right"), ("IL %", "right"), ("seconds", "right"),
                            ("k-anonymous", "left")):
        table.add_column(column, justify=justify, no_wrap=True)
    for name, r in results.items():
        s = r.summary()
        table.add_row(
            name, str(s["groups"]), str(s["min_group_size"]), str(s["max_group_size"]),
            f"{s['information_loss_percent']:.2f}", f"{s['seconds']:.3f}",
            "yes" if s["k_anonymous"] else "NO",
        )
    return table


@app.command("demo")
def demo_command(
    k: Annotated[int, typer.Option("--k", help="Minimum group size (>= 2).")] = 5,
    output_dir: Annotated[
        Path,
        typer.Option("--output-dir", help="Folder for the MDAV* output (created if missing)."),
    ] = Path("demo-output"),
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON object on stdout, nothing else."),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="Do not show progress on stderr."),
    ] = False,
) -> None:
    """Run every method on the bundled CASC Census sample and compare them, beside a proven
    lower bound on the information loss of any grouping.

    Writes the MDAV* result to OUTPUT_DIR/census_mdav-star_k{k}.csv after verifying it.
    """
    from ..microaggregation import METHODS

    with user_errors():
        census = load_census()
        if not 2 <= k <= census.shape[0]:
            # checked here by name: the warm-up run on 4 * k rows would otherwise fail first
            # and speak of its own rows
            raise ParameterError(f"k must be an integer in [2, n_rows={census.shape[0]}]; got {k}")
        results: dict[str, MicroaggregationResult] = {}
        with stages(len(METHODS) + 2, quiet=quiet or json_output) as progress, \
                compile_clock() as compiling:
            # numba compiles each kernel on its first call (cached on disk afterwards); each
            # result's seconds leave that out, and a tiny run first loads most kernels.
            progress.stage("loading the compiled kernels")
            for name in METHODS:
                params = {"gamma": DEMO_GAMMA} if name == "v-mdav" else {}
                microaggregate(census.head(4 * k), k, name, **params)
            for name in METHODS:
                progress.stage(f"microaggregating the census sample with {name}, k={k}")
                params = {"gamma": DEMO_GAMMA} if name == "v-mdav" else {}
                results[name] = microaggregate(census, k, name, bound=name == "refine", **params)
            progress.stage("writing the mdav-star result")
            best = results["mdav-star"]
            if not best.verification.ok:  # microaggregate raises first; never write unverified data
                raise VerificationError(f"the mdav-star result is not {best.k}-anonymous; nothing was written")
            output_dir.mkdir(parents=True, exist_ok=True)
            from ..io import Promise, write_release
            from ..privacy import KAnonymity, ReleaseCheck

            path = output_dir / f"census_mdav-star_k{best.k}{suffix('csv')}"
            qis = tuple(best.quasi_identifiers)
            write_release(best.table, path, Promise(qis, ReleaseCheck((KAnonymity(best.k),)), finite=qis), sep=",")
    n_rows, n_cols = census.shape
    if json_output:
        print_json({
            "data": {"name": "CASC Census", "rows": n_rows, "columns": n_cols},
            "k": best.k,
            "results": [{**r.summary()} for r in results.values()],
            "lower_bound": results["refine"].lower_bound,
            "compile_seconds": compiling.seconds,
            "output": str(path),
        })
        return
    console = stdout_console()
    console.print(Text(
        f"Data: CASC Census reference file (bundled), {n_rows} rows x {n_cols} numeric "
        f"attributes, all quasi-identifiers, k={best.k}. IL = information loss = SSE/SST on "
        "standardized data, lower is better."
    ), soft_wrap=True)
    console.print(_demo_table(results, compiling.seconds))
    lb, gap = results["refine"].lower_bound, results["refine"].gap
    if lb is not None and gap is not None:  # the demo asks refine for its bound
        console.print(Text(
            f"No grouping of these rows with k={best.k} can lose less than {100 * lb:.2f} % (a proven "
            f"lower bound): refine is at most {100 * gap:.0f} % above the best possible."
        ), soft_wrap=True)
    console.print(Text(f"Wrote the mdav-star result (verified {best.k}-anonymous): {path}"),
                  soft_wrap=True)
    console.print(Text(
        f"Your own data: incrowd microaggregate INPUT{suffix('csv')} -o OUTPUT{suffix('csv')} --k {best.k} "
        "--method mdav-star --qi col1,col2"), soft_wrap=True)


def _one_line_per_paragraph(text: str) -> str:
    """``text`` with each paragraph's lines joined: typer keeps the line breaks of a help text's
    later paragraphs and rich then wraps them again at the terminal's width, which leaves ragged
    half-empty lines. A paragraph starting with a backspace (click's "keep as written") stays."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split("\n")) for p in paragraphs)


for _group in (app, lattice_app, incremental_app):
    for _command in _group.registered_commands:
        _text = _command.help or inspect.getdoc(_command.callback)
        if _text:
            _command.help = _one_line_per_paragraph(_text)
