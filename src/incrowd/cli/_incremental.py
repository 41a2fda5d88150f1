"""``incrowd incremental base | add | publish | plan | show``: incremental publication."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .._runtime import lazy as _lazy
from ..exceptions import DataError, ParameterError
from ..incremental import DEFAULT_WAIT, STRATEGY_NAMES, describe_as
from ..io import NA_HELP, is_stdout
from ._console import check_output_path, print_json, print_lines, stages, user_errors
from ._library import load_spec, read_table
from ._names import names
from ._options import (
    INPUT_FORMATS,
    OUTPUT_FORMATS,
    DiagonalsOption,
    GammaOption,
    IdOption,
    JsonOption,
    MaxRoundsOption,
    MethodOption,
    QiOption,
    QuietOption,
    RhoOption,
    RunsOption,
    SeedOption,
    Split2kOption,
    method_params,
    parse_qis,
)
from ._release_report import check_report_path, write_release_report
from ._report import ReportOption
from ._usage import bounded

# pandas, DuckDB and numba load when a command runs, not for --help or --version
numeric_matrix = _lazy.function("incrowd.io._tables", "numeric_matrix")
resolve_roles = _lazy.function("incrowd.io._tables", "resolve_roles")
fit_runtime_model = _lazy.function("incrowd.incremental._plan", "fit_runtime_model")
plan = _lazy.function("incrowd.incremental._plan", "plan")

#: --columns of the timed Gaussian rows: more only exhausts memory (rows x columns floats)
MAX_PLAN_COLUMNS = 1000

incremental_app = typer.Typer(
    help="Incremental publication: anonymize a base early, adjoin late rows, publish once. "
         "State lives in one DuckDB file between the steps.",
    no_args_is_help=True,
)

StateArgument = Annotated[
    Path,
    typer.Argument(metavar="STATE", help="State file written by 'incrowd incremental base'.",
                   show_default=False),
]
InputArgument = Annotated[
    Path,
    typer.Argument(metavar="INPUT", help=f"{INPUT_FORMATS} file. " + NA_HELP, show_default=False),
]
SpecOption = Annotated[
    Optional[Path],
    typer.Option("--spec", metavar="SPEC.toml",
                 help="Release specification, as for 'incrowd publish': numeric and categorical "
                      "quasi-identifiers released together, k over all of them; the state records it.",
                 show_default=False),
]
WaitOption = Annotated[
    float,
    typer.Option("--wait", metavar="SECONDS",
                 help="How long to wait for another process writing STATE before giving up."),
]


def _why_suppressed(r: dict) -> str:
    waiting = int(r.get("waiting") or 0)
    failing = int(r["suppressed"]) - waiting
    if not failing:
        return "waiting for their class"
    said = [f"{waiting} waiting for their class"] if waiting else []
    return ", ".join(said + [f"{failing} in groups failing l or t"])


def _sensitive_lines(r: dict) -> list[tuple[str, str]]:
    """The release's other models, verified as k is: where the release was checked."""
    from ..privacy import verified_lines

    where = " on the written file" if r.get("verified_on") == "written file" else ""
    return [("verified", f"{line} (verified{where})")
            for line in verified_lines(r.get("verification") or {}, with_k=False)]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100.0 * value:.3f} %"


@incremental_app.command("base")
def base_command(
    input_path: InputArgument,
    state: Annotated[
        Path,
        typer.Option("--state", "-o", help="State file to create (DuckDB).", show_default=False),
    ],
    k: Annotated[
        Optional[int],
        typer.Option("--k", help="Minimum group size (>= 2); with --spec, the spec's.", show_default=False),
    ] = None,
    spec_path: SpecOption = None,
    method: MethodOption = "mdav",
    qi: QiOption = None,
    identifiers: IdOption = None,
    gamma: GammaOption = None,
    rho: RhoOption = None,
    runs: RunsOption = None,
    max_rounds: MaxRoundsOption = None,
    diagonals: DiagonalsOption = None,
    split_2k: Split2kOption = None,
    seed: SeedOption = None,
    keep_points: Annotated[
        bool,
        typer.Option("--keep-points/--no-points",
                     help="Keep the rows' standardized QI values in the state (needed by "
                          "nn-split-mid, nn-split-end and publish --compare). --no-points keeps "
                          "only group sums."),
    ] = True,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing state file.")] = False,
    wait: WaitOption = DEFAULT_WAIT,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Microaggregate the base rows of INPUT and store what the increments need in STATE.

    Identifiers (--id) are the row keys (they must be unique) and are dropped from the release.
    With --spec (the release specification of 'incrowd publish'), the base is published over
    numeric and categorical quasi-identifiers together and every later release is k-anonymous
    over all of them, keeping a statistical file's labels, formats and missing codes.
    """
    from ..incremental import IncrementalMicroaggregation

    with user_errors(), describe_as("incrowd incremental base"):
        check_output_path(state, (input_path,), what="state file", stdout_ok=False)
        if state.exists() and not force:
            raise DataError(f"state file {str(state)!r} already exists; use --force to overwrite it")
        if spec_path is not None:
            if seed is not None:
                raise ParameterError("--spec names the seed (random_state in [privacy]); drop --seed")
            session = _base_from_spec(input_path, state, spec_path, k, method, qi, identifiers, force, wait,
                                      quiet or json_output, method_params(gamma=gamma, rho=rho, runs=runs,
                                                                          max_rounds=max_rounds, diagonals=diagonals,
                                                                          split_2k=split_2k))
        else:
            if k is None:
                raise ParameterError("--k is required (or --spec, a release specification that names k)")
            with stages(3, quiet=quiet or json_output) as progress:
                progress.stage(f"reading {input_path.name}")
                data = read_table(input_path, parse=parse_qis(names(qi, "--qi"), names(identifiers, "--id")))
                progress.stage(f"microaggregating {data.shape[0]} base rows with {method}, k={k}")
                session = IncrementalMicroaggregation.from_base(
                    data, state, k, method,
                    quasi_identifiers=names(qi, "--qi"), identifiers=names(identifiers, "--id"),
                    keep_points=keep_points, random_state=seed, overwrite=force, wait=wait,
                    **method_params(gamma=gamma, rho=rho, runs=runs, max_rounds=max_rounds,
                                    diagonals=diagonals, split_2k=split_2k),
                )
                progress.stage("state written")
    _print_base(session.describe(), input_path, spec_path, state, json_output)


def _print_base(info: dict, input_path: Path, spec_path: Path | None, state: Path, json_output: bool) -> None:
    """What ``incremental base`` prints of the state it made (``--json``: the whole description)."""
    base = info["batches"][0]
    if info.get("kind") == "mixed":
        if json_output:
            print_json({**info, "input": str(input_path), "seconds": base["seconds"]})
            return
        print_lines([
            ("input", str(input_path)),
            ("spec", str(spec_path)),
            ("k", str(info["k"])),
            ("quasi-identifiers", f"{', '.join(info['numeric']) or 'none'} (numeric); "
                                  f"{', '.join(info['categorical']) or 'none'} (categorical)"),
            ("generalization", ", ".join(f"{a} level {v}" for a, v in info["levels"].items()) or "none"),
            ("rows", f"{info['rows']} ({base['suppressed']} wait for their class)"),
            ("groups", str(info["groups"])),
            ("seconds", f"{base['seconds']:.3f}"),
            ("state", str(state)),
        ])
        return
    if json_output:
        print_json({**info, "input": str(input_path), "information_loss": base["information_loss"],
                    "seconds": base["seconds"]})
        return
    print_lines([
        ("input", str(input_path)),
        ("method", f"{info['method']} (k={info['k']})"),
        ("rows", str(info["rows"])),
        ("groups", str(info["groups"])),
        ("information loss", _pct(base["information_loss"]) + " (base rows alone)"),
        ("seconds", f"{base['seconds']:.3f}"),
        ("state", str(state)),
        ("keeps points", "yes" if info["keeps_points"] else "no (nn and 2mdav only)"),
    ])


def _base_from_spec(input_path: Path, state: Path, spec_path: Path, k, method: str, qi, identifiers,
                    force: bool, wait: float, quiet: bool, params: dict):
    from ..incremental import IncrementalMicroaggregation

    if names(qi, "--qi") is not None or names(identifiers, "--id") is not None:
        raise ParameterError("--spec names every column's role; give --qi and --id in the spec instead")
    if params:
        raise ParameterError(f"--spec names the method and its parameters ([method_params]); drop "
                             f"{', '.join('--' + name.replace('_', '-') for name in params)}")
    spec = load_spec(spec_path)
    hierarchy_files = tuple(c.hierarchy for c in spec.columns.values() if c.hierarchy is not None)
    check_output_path(state, (input_path, spec_path, *hierarchy_files), what="state file", stdout_ok=False)
    with stages(3, quiet=quiet) as progress:
        progress.stage(f"reading {input_path.name}")
        numeric = [c.name for c in spec.columns.values() if c.role == "numeric"]
        data = read_table(input_path, parse=numeric or None)
        progress.stage(f"publishing {data.shape[0]} base rows by {spec_path.name}, k={spec.k}")
        session = IncrementalMicroaggregation.from_base(data, state, k, method, spec=spec, overwrite=force, wait=wait)
        progress.stage("state written")
    return session


@incremental_app.command("add")
def add_command(
    state: StateArgument,
    input_path: InputArgument,
    strategy: Annotated[
        str,
        typer.Option("--strategy", help=f"One of: {', '.join(STRATEGY_NAMES)}."),
    ] = "nn-split-end",
    inertial: Annotated[
        bool,
        typer.Option("--inertial", help="Weight the squared distance to a group of n_q rows by "
                                        "n_q/(n_q+1) (nn strategies)."),
    ] = False,
    k: Annotated[
        Optional[int],
        typer.Option("--k", help="Check that the state was built with this k.", show_default=False),
    ] = None,
    allow_duplicates: Annotated[
        bool,
        typer.Option("--allow-duplicates",
                     help="Without --id, adjoin rows equal to rows already in STATE (say they are "
                          "different people); by default such an increment is refused."),
    ] = False,
    spec_path: Annotated[
        Optional[Path],
        typer.Option("--spec", metavar="SPEC.toml", help="The release specification STATE was built with "
                     "(checked: a different one is refused).", show_default=False),
    ] = None,
    wait: WaitOption = DEFAULT_WAIT,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Adjoin the rows of INPUT to STATE (same columns as the base) and save STATE.

    A state built with --spec adjoins each row to a group of its class (same generalized
    categorical values), nearest first; a row whose class has no group waits for k rows of its
    class (releases suppress waiting rows within the spec's max_suppression).

    One writer at a time: a concurrent add or base waits up to --wait seconds for the other.
    """
    from ..incremental import IncrementalMicroaggregation

    with user_errors(), describe_as("incrowd incremental add"):
        if input_path.exists() and state.exists() and os.path.samefile(input_path, state):
            raise DataError(f"the increment {str(input_path)!r} is the state file {str(state)!r}; "
                            "name the file of new rows")
        with stages(3, quiet=quiet or json_output) as progress:
            progress.stage(f"opening {state.name}")
            session = IncrementalMicroaggregation.open(state)
            progress.stage(f"reading {input_path.name}")
            described = session.describe()
            data = read_table(input_path, parse=described.get("numeric", described["quasi_identifiers"]) or None)
            progress.stage(f"adjoining {data.shape[0]} rows with {strategy}")
            report = session.add(data, strategy, inertial=inertial, k=k, wait=wait,
                                 allow_duplicates=allow_duplicates, spec=spec_path)
    if json_output:
        print_json({**report, "state": str(state), "input": str(input_path),
                    "rows_total": session.n_rows})
        return
    lines = [
        ("input", str(input_path)),
        ("strategy", strategy + (" (inertial)" if inertial else "")),
        ("rows adjoined", str(report["rows"])),
        ("groups", f"{report['groups_before']} -> {report['groups_after']} "
                   f"({report['splits']} split(s))"),
        ("seconds", f"{report['seconds']:.3f}"),
        ("rows in state", str(session.n_rows)),
        ("state", str(state)),
    ]
    if "waiting" in report:
        lines.append(("rows waiting", f"{report['waiting']} (for k rows of their class; {report['joined']} "
                                      f"joined a group, {report['formed']} formed new groups)"))
    if report.get("duplicates_allowed"):
        lines.append(("duplicates", f"{report['duplicates_allowed']} row(s) equal to rows already in "
                                    "the state, adjoined as different people (--allow-duplicates)"))
    if report["note"]:
        lines.append(("note", report["note"]))
    print_lines(lines)


def _distinct_line(info: dict[str, Any]) -> tuple[str, str]:
    if info.get("kind") == "mixed":
        return ("rows waiting", f"{info['waiting']} (for k rows of their class; suppressed from a release); "
                                "generalization " + (", ".join(f"{a} level {v}" for a, v in info["levels"].items())
                                                     or "none"))
    if info.get("min_distinct_records") is None:
        return ("distinct records", "unknown (state written by an older incrowd without row fingerprints)")
    below = info["groups_below_k_distinct"]
    return ("distinct records", f"smallest group holds {info['min_distinct_records']} distinct "
                                f"record(s); {below} group(s) hold fewer than k={info['k']}")


@incremental_app.command("publish")
def publish_command(
    state: StateArgument,
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help=f"Release file; its extension picks the format ({OUTPUT_FORMATS}); "
                     "'-' writes CSV to stdout and the report to stderr.", show_default=False),
    ],
    compare: Annotated[
        bool,
        typer.Option("--compare", help="Also microaggregate all rows at once and report "
                                       "D, delta = DT/D - 1, tau0 and tau+."),
    ] = False,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    report_path: ReportOption = None,
    spec_path: Annotated[
        Optional[Path],
        typer.Option("--spec", metavar="SPEC.toml", help="The release specification STATE was built with "
                     "(checked: a different one is refused).", show_default=False),
    ] = None,
) -> None:
    """Verify the combined release (base + increments) k-anonymous and write it atomically."""
    from ..incremental import IncrementalMicroaggregation

    with user_errors():
        check_output_path(output, (state,))
        check_report_path(report_path, (state, output))
        with stages(2 + compare, quiet=quiet or json_output) as progress:
            progress.stage(f"opening {state.name}")
            session = IncrementalMicroaggregation.open(state)
            progress.stage("verifying and writing the release" + (" (and the one-shot run)" if compare else ""))

            def write_report(summary: dict) -> None:
                # after the written file's verification, before it is put in place: the release
                # and its report succeed together or neither is written
                if report_path is not None:
                    original, release, options = session.report_inputs()
                    options.setdefault("release_summary", summary)
                    write_release_report(report_path, original, release, inputs=(state, output), **options)

            result = session.publish(output, compare=compare, then=write_report, spec=spec_path)
    r = result.summary()
    to_stderr = is_stdout(output)
    if json_output:
        print_json(r, err=to_stderr)
        return
    print_lines(_publish_lines(r, state, output if not to_stderr else None, compare), err=to_stderr)


def _publish_lines(r: dict, state: Path, output: Path | None, compare: bool) -> list[tuple[str, str]]:
    """What ``incremental publish`` prints of a release's summary (``output`` None: standard output)."""
    if r.get("kind") == "mixed":
        return [
            ("state", str(state)),
            ("k", f"{r['k']}, {len(r['batches']) - 1} increment(s)"),
            ("rows", f"{r['rows']} (base {r['rows_base']}, increments {r['rows_increment']}); "
                     f"{r['suppressed']} suppressed ({_why_suppressed(r)})"),
            ("k-anonymous", f"yes, over {', '.join(r['quasi_identifiers'])} together (verified"
                            f"{' on the written file' if r.get('verified_on') == 'written file' else ''}: "
                            f"smallest class has {r['min_class_size']} rows, {r['classes']} classes)"),
            *_sensitive_lines(r),
            ("output", "standard output" if output is None else str(output)),
        ]
    lines = [
        ("state", str(state)),
        ("method", f"{r['method']} (k={r['k']}), {len(r['batches']) - 1} increment(s)"),
        ("rows", f"{r['rows']} (base {r['rows_base']}, increments {r['rows_increment']}, "
                 f"nu = {r['nu']:.4f})"),
        ("groups", f"{r['groups']} (sizes {r['min_group_size']}..{r['max_group_size']})"),
        ("D0 / D+ / DT", f"{_pct(r['D0'])} / {_pct(r['D_plus'])} / {_pct(r['DT'])}"),
    ]
    if compare:
        lines += [
            ("one-shot D", _pct(r["D"])),
            ("delta", "n/a" if r["delta"] is None else f"{100.0 * r['delta']:+.2f} %"),
            ("tau0 / tau+", f"{r['tau0']:.3f} / {r['tau_plus']:.3f} (relative to the one-shot "
                            f"run, {r['seconds_one_shot']:.3f} s)"),
        ]
    lines += [
        ("k-anonymous", f"yes (verified{' on the written file' if r.get('verified_on') == 'written file' else ''}: "
                        f"smallest class has {r['min_class_size']} rows, k={r['k']})"),
        _distinct_line(r),
        ("output", "standard output" if output is None else str(output)),
    ]
    return lines


def _read_arrivals(path: Path) -> tuple[list[float], list[float]]:
    frame = read_table(path, parse=True)
    cols = [str(c) for c in frame.columns]
    if "time" in cols and "rows" in cols:
        tcol, rcol = "time", "rows"
    elif len(cols) == 2:
        tcol, rcol = cols
    else:
        raise DataError(f"arrival file {str(path)!r} needs columns 'time' (seconds) and 'rows' "
                        f"(rows arrived so far); it has {cols}")
    values = numeric_matrix(frame, [tcol, rcol])
    return values[:, 0].tolist(), values[:, 1].tolist()


@incremental_app.command("plan")
def plan_command(
    rows: Annotated[
        Optional[int],
        typer.Option("--rows", help="Number of rows in all (default with --arrivals: its last count).",
                     show_default=False),
    ] = None,
    varsigma: Annotated[
        Optional[float],
        typer.Option("--varsigma", help="Head-start coefficient: collection time / one-shot "
                                        "runtime, arrivals uniform.", show_default=False),
    ] = None,
    arrivals: Annotated[
        Optional[Path],
        typer.Option("--arrivals", help="Arrival schedule file with columns time (seconds) and "
                                        "rows (arrived so far).", show_default=False),
    ] = None,
    tau_end: Annotated[
        Optional[float],
        typer.Option("--tau-end", help="Time available after the last arrival, relative to the "
                                       "one-shot runtime.", show_default=False),
    ] = None,
    deadline: Annotated[
        Optional[float],
        typer.Option("--deadline", help="Time available after the last arrival, in seconds "
                                        "(needs --model fit).", show_default=False),
    ] = None,
    model: Annotated[
        str,
        typer.Option("--model", help="'quadratic' (the thesis' t ~ n^2, relative times only) or "
                                     "'fit' (measure the method on this machine)."),
    ] = "fit",
    method: MethodOption = "mdav",
    k: Annotated[int, typer.Option("--k", help="k for the measured runtime model.")] = 10,
    columns: Annotated[
        int, typer.Option("--columns", help=f"Quasi-identifiers of the Gaussian rows timed by --model fit "
                          f"(1 to {MAX_PLAN_COLUMNS}).", callback=bounded("--columns", MAX_PLAN_COLUMNS, 1))
    ] = 15,
    fit_on: Annotated[
        Optional[Path],
        typer.Option("--fit-on", help="Time the method on rows of this file instead of Gaussian "
                                      "rows (with --qi).", show_default=False),
    ] = None,
    qi: QiOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """How much to leave for the increment: nu- (critical), nu* (optimal), nu_end (deadline).

    The base and the increment are both run with --method (2MDAV when it is mdav).
    """
    from ..incremental import RuntimeModel

    with user_errors():
        if model not in ("quadratic", "fit"):
            raise ParameterError(f"--model must be 'quadratic' or 'fit'; got {model!r}")
        schedule = _read_arrivals(arrivals) if arrivals is not None else None
        if rows is None:
            if schedule is None:
                raise ParameterError("give --rows (or --arrivals, whose last count is the row total)")
            rows = int(round(schedule[1][-1]))
        with stages(2, quiet=quiet or json_output) as progress:
            if model == "quadratic":
                runtime = RuntimeModel.quadratic()
            else:
                progress.stage(f"timing {method} (k={k}) on this machine")
                data = None
                if fit_on is not None:
                    frame = read_table(fit_on, parse=True)
                    roles = resolve_roles(frame, names(qi, "--qi"), None)
                    data = numeric_matrix(frame, list(roles.quasi_identifiers))
                runtime = fit_runtime_model(method, k, columns=columns, data=data)
            progress.stage("solving")
            result = plan(rows, varsigma=varsigma, arrivals=schedule, tau_end=tau_end,
                          deadline_seconds=deadline, model=runtime)
    out = result.to_dict()
    if json_output:
        print_json(out)
        return
    print_lines(_plan_lines(result, arrivals))


def _plan_lines(result, arrivals: Path | None) -> list[tuple[str, str]]:
    """What ``incremental plan`` prints of a plan (its arrivals, model, ratios and timings)."""
    m = result.model
    lines = [
        ("rows", str(result.rows)),
        ("arrivals", f"uniform, varsigma = {result.varsigma:g}" if result.varsigma is not None
         else f"schedule {arrivals}"),
        ("runtime model", f"t ~ n^{m.exponent:.3f} ({m.source}"
                          + (f", one-shot {result.seconds_one_shot:.3f} s)" if result.seconds_one_shot else ")")),
        ("solved", result.solved),
    ]
    if result.varsigma_minus is not None:
        lines.append(("varsigma-", f"{result.varsigma_minus:.4f}"))
    lines += [
        ("nu- (critical)", f"{result.nu_minus:.4f}"),
        ("nu* (optimal)", f"{result.nu_star:.4f}  (relative gain {result.delta_tau_star:.4f}, "
                          f"finish {result.at['nu_star']['finish_after_last_arrival']:.4f} after "
                          "the last arrival)"),
    ]
    if result.tau_end is not None:
        lines.append(("nu_end (deadline)", "none" if result.nu_end is None else f"{result.nu_end:.4f}"))
    for key, point in result.at.items():
        if "seconds" in point:
            s = point["seconds"]
            lines.append((f"at {key}", f"base {point['rows_base']} rows from "
                          f"{s['start_base_before_last_arrival']:.3g} s before the last arrival, "
                          f"finished {s['finish_after_last_arrival']:.3g} s after it"))
    for note in result.notes:
        lines.append(("note", note))
    return lines


@incremental_app.command("show")
def show_command(state: StateArgument, json_output: JsonOption = False) -> None:
    """Say what a state file holds: format, roles, groups, batches, and each table."""
    from ..incremental import IncrementalMicroaggregation

    with user_errors():
        info = IncrementalMicroaggregation.open(state).describe()
    if json_output:
        print_json(info)
        return
    lines: list[tuple[str, Any]] = [
        ("state", str(state)),
        ("format", f"{info['format']} v{info['format_version']} (incrowd {info['incrowd_version']})"),
        ("method", f"{info['method']} (k={info['k']})"),
        ("quasi-identifiers", ", ".join(info["quasi_identifiers"])),
        ("row keys", ", ".join(info["identifiers"]) or "row numbers"),
        ("rows / groups", f"{info['rows']} / {info['groups']}"),
        _distinct_line(info),
        ("batches", "; ".join(f"{b['batch']}: {b['rows']} rows, "
                              f"{b.get('strategy') or b.get('method')}" for b in info["batches"])),
    ]
    lines += [(f"table {name}", text) for name, text in info["tables"].items()]
    print_lines(lines)
