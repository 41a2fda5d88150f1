"""``incrowd lattice build | show``, ``incrowd negotiate``, ``incrowd generalize``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.table import Table

from .._runtime import lazy as _lazy
from ..exceptions import DataError, ParameterError
from ..generalization import hierarchy_file_names, precheck_nodes
from ..generalization import partial_fraction as _fraction
from ..io import is_stdout
from ._console import check_output_path, print_json, print_lines, stages, stdout_console, user_errors
from ._dask_options import SchedulerOption, SchedulerTimeoutOption, check_scheduler
from ._library import read_table, table_format
from ._limits import DEFAULT_MAX_MEMORY_TEXT, DEFAULT_MAX_NODES_TEXT, lattice_limits
from ._names import names
from ._options import INPUT_FORMATS, OUTPUT_FORMATS, IdOption, JsonOption, QiOption, QuietOption
from ._release_report import check_report_path, write_release_report
from ._report import ReportOption

if TYPE_CHECKING:
    from ..generalization import Negotiation

# pandas, DuckDB and numba load when a command runs, not for --help or --version
write_release = _lazy.function("incrowd.io._written", "write_release")
generalization_promise = _lazy.function("incrowd.generalization", "generalization_promise")
verified_as_written = _lazy.function("incrowd.generalization", "verified_as_written")
generalize = _lazy.function("incrowd.generalization._apply", "generalize")
local_recoding = _lazy.function("incrowd.generalization._local_recoding", "local_recoding")
make_promise = _lazy.function("incrowd.io._written", "Promise")
k_check = _lazy.function("incrowd.privacy", "ReleaseCheck")
k_model = _lazy.function("incrowd.privacy", "KAnonymity")
negotiate = _lazy.function("incrowd.generalization._negotiate", "negotiate")
parse_assignments = _lazy.function("incrowd.generalization._hierarchy", "parse_assignments")

lattice_app = typer.Typer(
    help="Generalization lattices with suppression histograms: build once, then "
         "negotiate requests in milliseconds.",
    no_args_is_help=True,
)

DataArgument = Annotated[
    Path,
    typer.Argument(metavar="DATA", help=f"{INPUT_FORMATS} file; "
                   "columns are matched to hierarchies as the file's text, --intervals columns are "
                   "parsed as numbers.", show_default=False),
]
LatticeArgument = Annotated[
    Path,
    typer.Argument(metavar="LATTICE", help="Lattice file written by 'incrowd lattice build'.", show_default=False),
]
HierarchiesOption = Annotated[
    Optional[Path],
    typer.Option("--hierarchies", help="Folder of ARX-style hierarchy files, one per attribute "
                 f"({hierarchy_file_names()}).", show_default=False),
]
IntervalsOption = Annotated[
    Optional[list[str]],
    typer.Option("--intervals", help="Interval hierarchies for numeric columns without a file, "
                 "e.g. 'age=5,10,20' (nested widths; repeatable).", show_default=False),
]
SensitiveOption = Annotated[
    Optional[str],
    typer.Option("--sensitive", help="Sensitive attribute (for naive l-diversity and t-closeness).",
                 show_default=False),
]
MaxNodesOption = Annotated[
    str,
    typer.Option("--max-nodes", metavar="N", help="Refuse a lattice with more nodes to compute than this (checked "
                 "before the data are read; 'none' lifts the limit)."),
]
MaxMemoryOption = Annotated[
    str,
    typer.Option("--max-memory", metavar="SIZE", help="Refuse a build whose estimated memory (nodes and bottom "
                 "classes) exceeds this, e.g. 8G or 512M ('none' lifts the limit)."),
]


OptionalK = Annotated[Optional[int], typer.Option("--k", help="k-anonymity: minimum class size (>= 2).",
                                                  show_default=False)]
OptionalL = Annotated[Optional[int], typer.Option("--l", help="Naive l-diversity: minimum distinct "
                                                  "sensitive values per class (>= 2).", show_default=False)]


def _intervals(values: list[str] | None) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for text in values or []:
        for name, widths in parse_assignments(text, "--intervals").items():
            try:
                out[name] = [float(w) for w in widths.split(",")]
            except ValueError:
                raise ParameterError(f"--intervals: widths of {name!r} must be numbers; got {widths!r}") from None
    return out


def _levels(text: str | None, option: str) -> dict[str, str]:
    return parse_assignments(text, option) if text else {}


MetricWeightsOption = Annotated[Optional[str], typer.Option(
    "--metric-weights", help="A weight per quasi-identifier in loss, entropy and precision, e.g. "
    "'education=2,sex=0.5' (1 where left out).", show_default=False)]


def _metric_weights(text: str | None) -> dict[str, float] | None:
    if not text:
        return None
    out = {}
    for name, value in parse_assignments(text, "--metric-weights").items():
        try:
            out[name] = float(value)
        except ValueError:
            raise ParameterError(f"--metric-weights: the weight of {name!r} must be a number; got {value!r}") from None
    return out


def _sensitive_order(text: str | None, sensitive: str | None) -> list[str] | None:
    """--sensitive-order as a list of values (None: not given)."""
    if text is None:
        return None
    if sensitive is None:
        raise ParameterError("--sensitive-order needs --sensitive: name the sensitive column it orders")
    values = [v.strip() for v in text.split(",")]
    if not all(values):
        raise ParameterError(f"--sensitive-order must list the values in order, separated by commas, e.g. "
                             f"'low,mid,high'; got {text!r}")
    return values


@lattice_app.command("build")
def build_command(
    data_path: DataArgument,
    output: Annotated[Path, typer.Option("--output", "-o", help="Lattice file to write (DuckDB).",
                                         show_default=False)],
    qi: QiOption = None,
    hierarchies: HierarchiesOption = None,
    intervals: IntervalsOption = None,
    sensitive: SensitiveOption = None,
    sensitive_order: Annotated[
        Optional[str],
        typer.Option("--sensitive-order", help="The order of a text sensitive column's values, e.g. "
                     "'low,mid,high', for t's ordered distance (as ordered = [...] in a publish spec); "
                     "default: ordered for numbers, equal for text.", show_default=False),
    ] = None,
    partial: Annotated[
        Optional[str],
        typer.Option("--partial", help="Build only this share of the nodes, ranked by Lambda "
                     "(e.g. '5%' or 0.05); default: the full lattice.", show_default=False),
    ] = None,
    scheduler: SchedulerOption = None,
    scheduler_timeout: SchedulerTimeoutOption = 10.0,
    max_nodes: MaxNodesOption = DEFAULT_MAX_NODES_TEXT,
    max_memory: MaxMemoryOption = DEFAULT_MAX_MEMORY_TEXT,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Compute every node's suppression histograms for the quasi-identifiers (--qi) of DATA.

    DATA may be a Parquet dataset folder; with --scheduler its partitions are read lazily on the
    workers and the bottom classes merged there (the same lattice as in process). A lattice
    over --max-nodes nodes, or estimated over --max-memory, is refused before any work."""
    from ..generalization import Lattice

    with user_errors():
        qis = names(qi, "--qi")
        if not qis:
            raise ParameterError("--qi must name the quasi-identifier columns, e.g. --qi age,sex,race")
        fraction = _fraction(partial)
        order = _sensitive_order(sensitive_order, sensitive)
        node_limit, memory_limit = lattice_limits(max_nodes, max_memory)
        check_scheduler(scheduler, scheduler_timeout)
        check_output_path(output, (data_path, hierarchies), what="lattice file", stdout_ok=False)
        precheck_nodes(qis, str(hierarchies) if hierarchies else None, _intervals(intervals), fraction,
                       node_limit)
        with stages(3, quiet=quiet or json_output) as progress:
            if scheduler is not None:
                from ..distributed import connect
                from ..generalization import build_lattice

                progress.stage(f"connecting to {scheduler}")
                with connect(scheduler, timeout=scheduler_timeout) as client:
                    progress.stage(f"building the lattice of {len(qis)} quasi-identifiers on Dask")
                    lattice = build_lattice(str(data_path), qis, client=client,
                                            hierarchies=str(hierarchies) if hierarchies else None,
                                            intervals=_intervals(intervals), sensitive=sensitive,
                                            fraction=fraction, source=str(data_path),
                                            max_nodes=node_limit, max_memory=memory_limit,
                                            sensitive_order=order)
            else:
                progress.stage(f"reading {data_path.name}")
                data = read_table(data_path, parse=list(_intervals(intervals)))
                progress.stage(f"building the lattice of {len(qis)} quasi-identifiers")
                lattice = Lattice.build(data, qis, hierarchies=str(hierarchies) if hierarchies else None,
                                        intervals=_intervals(intervals), sensitive=sensitive,
                                        fraction=fraction, source=str(data_path),
                                        max_nodes=node_limit, max_memory=memory_limit, sensitive_order=order)
            progress.stage(f"writing {output.name}")
            lattice.save(output, inputs=(data_path, hierarchies))
    info = {**lattice.describe(), "input": str(data_path), "output": str(output)}
    if json_output:
        print_json(info)
        return
    print_lines(_lattice_lines(info))


def _lattice_lines(info: dict) -> list[tuple[str, str]]:
    """What ``lattice build`` prints of the lattice it wrote."""
    return [
        ("input", info["input"]),
        ("quasi-identifiers", ", ".join(f"{a} (0..{lv})" for a, lv in info["levels"].items())),
        ("rows", str(info["rows"])),
        ("nodes", f"{info['materialized_nodes']} of {info['nodes']}" + (" (partial)" if info["partial"] else "")),
        ("sensitive", str(info["sensitive"]) if info["sensitive"] else "none"),
        ("build time", f"{info['seconds']['total']:.3f} s" + (
            f" (plus {info['compile_seconds']:.3f} s to compile or load the kernels, not counted)"
            if info.get("compile_seconds", 0) >= 0.0005 else "")),
        ("written", info["output"]),
    ]


@lattice_app.command("show")
def show_command(lattice_path: LatticeArgument, json_output: JsonOption = False) -> None:
    """Describe a lattice file: attributes, levels, nodes, rows, build time, level scores."""
    from ..generalization import Lattice

    with user_errors():
        lattice = Lattice.open(lattice_path)
    info = {**lattice.describe(), "file": str(lattice_path),
            "level_scores": lattice.level_scores.to_dict(orient="records")}
    if json_output:
        print_json(info)
        return
    print_lines([
        ("file", str(lattice_path)),
        ("source", lattice.source or "?"),
        ("quasi-identifiers", ", ".join(f"{a} (0..{lv})" for a, lv in info["levels"].items())),
        ("rows", str(info["rows"])),
        ("nodes", f"{info['materialized_nodes']} of {info['nodes']}" + (" (partial)" if info["partial"] else "")),
        ("sensitive", str(info["sensitive"]) if info["sensitive"] else "none"),
    ])
    table = Table(title="level scores (gamma = average class size, mu = relative importance)")
    for col in ("attribute", "level", "classes", "gamma", "mu"):
        table.add_column(col, justify="left" if col == "attribute" else "right")
    for rec in info["level_scores"]:
        table.add_row(rec["attribute"], str(rec["level"]), str(rec["classes"]),
                      f"{rec['average_class_size']:.2f}", f"{rec['relative_importance']:.2f}")
    stdout_console().print(table)


def _levels_text(levels: dict[str, int]) -> str:
    return ", ".join(f"{a}={v}" for a, v in levels.items())


def _ranges_text(ranges: dict[str, tuple[int, int]]) -> str:
    return ", ".join(f"{a}={lo}" if lo == hi else f"{a}={lo}-{hi}" for a, (lo, hi) in ranges.items())


def _check_recoding(recoding: str, l: int | None, max_suppression: str) -> bool:
    """Whether --recoding asks for local recoding; what local recoding cannot honour is refused."""
    choice = recoding.strip().lower()
    if choice not in ("global", "local"):
        raise ParameterError(f"--recoding must be global or local; got {recoding!r}")
    if choice == "local":
        if l is not None:
            raise ParameterError("--recoding local makes classes of at least --k rows; it does not take --l")
        if max_suppression.strip() not in ("0", "0%", "0.0"):
            raise ParameterError("--recoding local suppresses no row (only classes of a --levels start node "
                                 "below k); leave out --max-suppression")
    return choice == "local"


def _given(text: str | None, count: int) -> str:
    """How --max-suppression was read, when the user wrote it as a fraction or a percentage."""
    return "" if text is None or text.strip() == str(count) else f" (--max-suppression {text.strip()})"


def _print_negotiation(result: Negotiation) -> None:
    crit = result.criterion
    asked = result.thresholds or {crit: result.value}
    print_lines([
        ("request", f"{', '.join(f'{a}={v}' for a, v in asked.items())}, max levels {_levels_text(result.max_levels)}, "
                    f"max suppression {result.max_suppression} of {result.n_rows} rows"
                    f"{_given(result.max_suppression_given, result.max_suppression)}"),
        ("status", result.status),
        ("answered in", f"{result.seconds * 1000:.2f} ms, {result.nodes_visited} nodes visited"),
    ])
    table = Table()
    metric = result.metric
    columns = (("answer", "levels", "height", "suppressed", *asked, "classes")
               + (() if metric == "height" else (metric,)))
    for col in columns:
        table.add_column(col, justify="left" if col in ("answer", "levels") else "right")
    # one criterion: its relaxation is keyed "k" whichever it is
    rows = [("exact", result.exact)] if result.exact is not None else [
        (f"relax {name if name != 'k' or result.thresholds else crit}", node)
        for name, node in result.relaxations.items()]
    for label, node in rows:
        if node is None:
            table.add_row(label, "no solution", *[""] * (len(columns) - 2))
        else:
            value = () if metric == "height" else (f"{(node.metrics or {}).get(metric, float('nan')):.6g}",)
            reached = node.thresholds or {crit: node.value}
            table.add_row(label, _levels_text(node.levels), str(node.height), str(node.suppressed),
                          *(str(reached[a]) for a in asked), str(node.classes), *value)
    stdout_console().print(table)


ModelOption = Annotated[
    Optional[list[str]],
    typer.Option("--model", metavar="KEY=VALUE", help="Another privacy model, as the spec's [privacy] key "
                 "writes it: entropy_l=2, 'recursive_l={ c = 3, l = 2 }', alpha=0.5 (with --k), "
                 "delta_disclosure=1.0, 'beta={ value = 1.0, variant = \"enhanced\" }', max_average_risk=0.05; "
                 "repeat for several. A class a model refuses is suppressed.", show_default=False),
]


def flag_models(l: int | None, t: float | None = None) -> list:
    """The models of the ``--l`` and ``--t`` options (read as the spec reads its keys ``l`` and ``t``)."""
    if l is None and t is None:  # k alone: a lattice file's answer loads neither pandas nor the models
        return []
    from ..privacy import models_from_spec

    return models_from_spec({key: value for key, value in (("l", l), ("t", t)) if value is not None})


def _models(entries: list[str] | None, k: int | None) -> list:
    """The models of ``--model KEY=VALUE`` options, each value read as the spec's TOML reads it."""
    if not entries:
        return []
    import tomllib

    from ..privacy import other_models

    table: dict = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"--model takes KEY=VALUE (e.g. entropy_l=2); got {entry!r}")
        try:
            table[key.strip()] = tomllib.loads(f"value = {value.strip()}")["value"]
        except tomllib.TOMLDecodeError:
            raise ParameterError(f"--model {key.strip()}: {value.strip()!r} is not a number, a string or a table "
                                 "such as { c = 3, l = 2 }") from None
    return other_models(table, k, what="--model")


def negotiate_command(
    lattice_path: LatticeArgument,
    k: OptionalK = None,
    l: OptionalL = None,
    max_levels: Annotated[
        Optional[str],
        typer.Option("--max-levels", help="Highest tolerable level per attribute (v_max), e.g. "
                     "'age=2,education=1'; attributes left out may go to their top.", show_default=False),
    ] = None,
    max_suppression: Annotated[
        str,
        typer.Option("--max-suppression", help="Rows that may be removed: a whole count (301), a "
                     "fraction with a decimal point (0.01) or a percentage (1%); exponent "
                     "notation (1e3) is refused."),
    ] = "0",
    runtime_histogram: Annotated[
        bool,
        typer.Option("--runtime-histogram", help="Partial lattices: compute v_max's histogram now "
                     "if the lattice lacks it."),
    ] = False,
    metric: Annotated[
        str,
        typer.Option("--metric", help="What the answer minimizes: loss (Iyengar's LM), discernibility, "
                     "entropy, aecs, precision, height (the lowest node) or classification (the "
                     "lattice's sensitive column as target)."),
    ] = "loss",
    metric_weights: MetricWeightsOption = None,
    t: Annotated[
        Optional[float],
        typer.Option("--t", help="t-closeness, in (0, 1]: a class farther than t (earth mover's distance, ordered "
                     "for numbers, equal for text, as publish takes it) from the whole table's sensitive values "
                     "is suppressed; with --k and/or --l, or alone. Needs a lattice built with --sensitive.",
                     show_default=False),
    ] = None,
    model: ModelOption = None,
    json_output: JsonOption = False,
) -> None:
    """Answer a request exactly, or with its relaxations (suppression, height, k, l or t).

    --k, --l and --t together suppress a class with fewer than k rows, fewer than l distinct sensitive values or
    farther than t from the table's sensitive values, as publish does.
    """
    from ..generalization import Lattice, one_request

    with user_errors(), one_request():  # one answer per process: loading the compiled search costs more
        lattice = Lattice.open(lattice_path)
        result = negotiate(lattice, k=k, max_levels=_levels(max_levels, "--max-levels"),
                           max_suppression=max_suppression, runtime_histogram=runtime_histogram, metric=metric,
                           weights=_metric_weights(metric_weights), models=flag_models(l, t) + _models(model, k))
    if json_output:
        print_json(result.to_dict())
        return
    _print_negotiation(result)


def generalize_command(
    data_path: DataArgument,
    output: Annotated[Path, typer.Option("--output", "-o", help="Anonymized table to write; its "
                                         f"extension picks the format ({OUTPUT_FORMATS}); '-' writes "
                                         "CSV to stdout and the report to stderr. "
                                         "SPSS and Stata keep the labels of the columns not "
                                         "generalized.", show_default=False)],
    levels: Annotated[
        Optional[str],
        typer.Option("--levels", help="Level per quasi-identifier, e.g. 'age=2,sex=0,education=1'; "
                     "without it, the node of the --qi lattice with the least --metric within "
                     "--max-suppression.", show_default=False),
    ] = None,
    k: OptionalK = None,
    l: OptionalL = None,
    sensitive: SensitiveOption = None,
    hierarchies: HierarchiesOption = None,
    intervals: IntervalsOption = None,
    qi: QiOption = None,
    identifiers: IdOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    report_path: ReportOption = None,
    metric: Annotated[
        str,
        typer.Option("--metric", help="Without --levels: what the chosen node minimizes (loss, "
                     "discernibility, entropy, aecs, precision, height, classification)."),
    ] = "loss",
    max_suppression: Annotated[
        str,
        typer.Option("--max-suppression", help="Without --levels: rows the chosen node may remove "
                     "(301, 0.01 or 1%)."),
    ] = "0",
    metric_weights: MetricWeightsOption = None,
    recoding: Annotated[
        str,
        typer.Option("--recoding", help="global: every class at the same levels (a lattice node); "
                     "local: each class at its own levels (Mondrian over the hierarchies, from "
                     "--levels or the top of every hierarchy; k only, --metric loss or "
                     "discernibility)."),
    ] = "global",
    model: ModelOption = None,
) -> None:
    """Generalize DATA to the given levels (or to the node with the least --metric), remove the
    rows of classes below k (or l), verify, and write the table atomically."""
    from ..generalization import one_request

    # one table per process: the node search runs as plain Python (milliseconds on a lattice of
    # thousands of nodes) rather than loading numba and the compiled search (half a second)
    with user_errors(), one_request():
        check_output_path(output, (data_path, hierarchies))
        check_report_path(report_path, (data_path, hierarchies, output))
        level_map = _levels(levels, "--levels")
        local = _check_recoding(recoding, l, max_suppression)
        if local and model:
            raise ParameterError("--recoding local makes classes of at least --k rows; it does not take --model")
        with stages(4, quiet=quiet or json_output) as progress:
            progress.stage(f"reading {data_path.name}")
            data = read_table(data_path, parse=list(_intervals(intervals)))
            progress.stage("generalizing and suppressing")
            if local:
                result = local_recoding(data, str(hierarchies) if hierarchies else None, k,
                                        quasi_identifiers=names(qi, "--qi") or (list(level_map) or None),
                                        intervals=_intervals(intervals), identifiers=names(identifiers, "--id"),
                                        levels=level_map or None, metric=metric,
                                        metric_weights=_metric_weights(metric_weights))
            else:
                result = generalize(data, level_map, k=k, sensitive=sensitive,
                                    hierarchies=str(hierarchies) if hierarchies else None,
                                    intervals=_intervals(intervals), quasi_identifiers=names(qi, "--qi"),
                                    identifiers=names(identifiers, "--id"), metric=metric,
                                    max_suppression=max_suppression, metric_weights=_metric_weights(metric_weights),
                                    models=flag_models(l) + _models(model, k))
            if result.table.shape[0] == 0:
                raise DataError("every row would be suppressed; choose higher levels or a smaller k/l")
            progress.stage(f"writing {output.name} and verifying it as written")
            sep = data.attrs.get("csv_sep") if table_format(output) == "csv" else None

            def write_report(record: dict) -> None:
                # after the written file's verification, before it is put in place: the release
                # and its report succeed together or neither is written
                verified_as_written(result, record)
                if report_path is not None:
                    from ..generalization import resolve_hierarchies

                    qis_all = list(result.quasi_identifiers if local else result.levels)
                    _, hier = resolve_hierarchies(data, qis_all, str(hierarchies) if hierarchies else None,
                                                  _intervals(intervals), sensitive)
                    write_release_report(report_path, data, result.table, inputs=(data_path, hierarchies, output),
                                         quasi_identifiers=qis_all, sensitive=[sensitive] if sensitive else None,
                                         identifiers=names(identifiers, "--id"), kept_rows=result.kept_rows,
                                         k=result.k, hierarchies=hier, release_summary=result.summary())

            promise = make_promise(tuple(result.quasi_identifiers), k_check((k_model(result.k),))) if local else \
                generalization_promise(result)
            write_release(result.table, output, promise, sep=sep, inputs=(data_path, hierarchies),
                          then=write_report)
    info = {**result.summary(), "input": str(data_path), "output": str(output)}
    to_stderr = is_stdout(output)
    if json_output:
        print_json(info, err=to_stderr)
        return
    lines = [
        ("input", str(data_path)),
        ("levels", f"per class: {_ranges_text(result.level_ranges)}, loss {result.metrics['loss']:.4f}" if local
         else f"{_levels_text(result.levels)} (height {result.height})"),
        ("privacy", f"k={result.k}" if local else
         ", ".join([*([f"k={result.k}"] if result.k else []),
                    *(f"{m.key}={m.number():g} on {result.sensitive}" if m.spec_number else m.describe()
                      for m in result.models)])),
        ("rows", f"{result.n_rows} in, {result.n_rows - result.suppressed} out"),
        ("suppressed", f"{result.suppressed} rows ({100 * result.suppressed / result.n_rows:.3f} %)"),
        ("classes", f"{result.classes}, smallest {result.min_class_size} rows"),
        ("verified", "k-anonymous on the written file" if local else
         " and ".join([*(["k-anonymous"] if result.k else []), *(m.describe() for m in result.models)])
         + " on the written file"),
        ("written", "standard output" if to_stderr else str(output)),
    ]
    print_lines(lines, err=to_stderr)
