"""``incrowd report``, and the ``--report FILE`` option of every command that writes a release."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ..exceptions import DataError, ParameterError
from ..generalization import hierarchy_file_names
from ._console import cancellable_run, print_json, print_lines, stages, user_errors
from ._dask_options import MemoryLimitOption, SchedulerOption, SchedulerTimeoutOption, check_scheduler
from ._library import read_table
from ._names import names
from ._options import IdOption, JsonOption, QuietOption
from ._release_report import check_report_path, make_report

ReportOption = Annotated[
    Optional[Path],
    typer.Option("--report", help="Also write the disclosure-risk and utility report of the release: "
                 ".html (one self-contained page with figures) or .json.", show_default=False),
]

def read_kept_rows(path: Path, n_original: int, n_release: int) -> list[int]:
    """``--kept-rows FILE``: one original data row number (the first row after the header is 1)
    per line, a line per release row, in increasing order; as 0-based positions."""
    shown = f"--kept-rows {str(path)!r}"
    from ..io import read_input_bytes  # a FIFO is refused by its kind, not waited on

    try:
        text = read_input_bytes(path, "--kept-rows file").decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{shown}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    rows: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        field = line.strip()
        if not field:
            continue
        if not field.isdigit() or int(field) < 1:
            raise DataError(f"{shown}, line {number}: {field[:40]!r} is not a data row number (1 is the "
                            "original's first row after the header)")
        row = int(field)
        if row > n_original:
            raise DataError(f"{shown}, line {number}: row {row}, but the original has {n_original} rows")
        if rows and row <= rows[-1]:
            raise DataError(f"{shown}, line {number}: row {row} after row {rows[-1]}; the rows must be in "
                            "increasing order (the release keeps the original's order)")
        rows.append(row)
    if len(rows) != n_release:
        raise DataError(f"{shown} lists {len(rows)} rows, the release has {n_release}; give one original "
                        "row number per release row")
    return [row - 1 for row in rows]


def report_command(
    original_path: Annotated[Path, typer.Argument(metavar="ORIGINAL", help="The original file.",
                                                  show_default=False)],
    release_path: Annotated[Path, typer.Argument(
        metavar="RELEASE", help="The release made from it (same row order; suppressed rows left out).",
        show_default=False)],
    qi: Annotated[Optional[list[str]], typer.Option(
        "--qi", help="Required: the quasi-identifier columns, those an intruder may know, "
        "comma-separated (repeatable); a name holding a comma goes in double quotes: --qi '\"b,c\",a'.",
        show_default=False)] = None,
    sensitive: Annotated[Optional[list[str]], typer.Option(
        "--sensitive", help="Sensitive columns for attribute disclosure (l, entropy l, t), comma-separated.",
        show_default=False)] = None,
    identifiers: IdOption = None,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="Where to write the report: .html (self-contained page) or .json.",
        show_default=False)] = None,
    kept_rows: Annotated[Optional[Path], typer.Option(
        "--kept-rows", metavar="FILE", help="Which original row each release row is: a text file with one "
        "original data row number per line (the first row after the header is 1), one line per release "
        "row, in order. Needed when rows were suppressed and the columns that pass through do not tell "
        "which.", show_default=False)] = None,
    k: Annotated[Optional[int], typer.Option("--k", help="The k the release promises: records in smaller "
                                             "classes are counted.", show_default=False)] = None,
    numeric: Annotated[Optional[list[str]], typer.Option(
        "--numeric", help="Quasi-identifiers that must be measured as numbers (an error if the release "
        "holds text there). Default: those that are numbers in both files.", show_default=False)] = None,
    target: Annotated[Optional[str], typer.Option(
        "--target", help="A column to model on the release and on the original (regression or classifier), "
        "compared on the original.", show_default=False)] = None,
    attacks: Annotated[bool, typer.Option(
        "--attacks", help="Also run anonymeter's singling-out, linkability and inference attacks (slower).")] = False,
    threshold: Annotated[float, typer.Option(
        "--threshold", help="Re-identification risk above which a record counts as at risk.")] = 0.2,
    weight: Annotated[Optional[str], typer.Option(
        "--weight", help="The original's sampling-weight column: the report adds the release's individual "
        "and global risk and expected re-identifications as sdcMicro measures them (default: the --spec's "
        "weight column).", show_default=False)] = None,
    perturb: Annotated[Optional[list[str]], typer.Option(
        "--perturb", help="The columns the release perturbed (the role perturb), comma-separated: not compared "
        "to align the files; the numeric ones are measured as sdcMicro's numVars (IL1s, eigenvalues, dRisk, "
        "record linkage). Default: the --spec's.", show_default=False)] = None,
    hierarchies: Annotated[Optional[Path], typer.Option(
        "--hierarchies", metavar="DIR", help=f"Folder of ARX-style hierarchy files ({hierarchy_file_names()}), "
        "as 'lattice build' takes it: the categorical utility (NCP, "
        "height) of the quasi-identifiers that have one.", show_default=False)] = None,
    spec: Annotated[Optional[Path], typer.Option(
        "--spec", metavar="FILE", help="The release's spec (TOML): quasi-identifiers, sensitive columns, "
        "identifiers, the promised k, l and t, hierarchies, the suppression (with cells, a blank is a "
        "suppressed cell) and the verdict's thresholds ([report]) come from it; --qi and the others may "
        "then be left out.", show_default=False)] = None,
    risk_map: Annotated[bool, typer.Option(
        "--map", help="With --spec: also re-make the release's neighbours (k - 1, k + 1, one level up or down "
        "in one categorical column) and measure each: the risk-utility map, with the spec of each point.")] = False,
    verdict_threshold: Annotated[Optional[list[str]], typer.Option(
        "--verdict-threshold", metavar="NAME=VALUE", help="A threshold of the verdict, e.g. entropy_l=1.5 "
        "or record_linkage=0.05 (repeatable; over the spec's [report]).", show_default=False)] = None,
    scheduler: SchedulerOption = None,
    scheduler_timeout: SchedulerTimeoutOption = 10.0,
    memory_limit: MemoryLimitOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Measure the disclosure risk and the utility of RELEASE against ORIGINAL and write the
    report (HTML or JSON); rows align by position, and the report says what it assumed.

    With suppressed rows, the columns that pass through unchanged tell which rows were kept
    when they tell rows apart; otherwise give --kept-rows (or write the report with the
    release: --report of the command that made it).

    With --scheduler ORIGINAL and RELEASE may be partitioned datasets (folders or quoted globs
    of CSV or Parquet files; release partition i holds the published rows of original
    partition i): the measures are combined on Dask from the partitions' sums, and the report
    says which measures it leaves out and why."""
    if scheduler is not None:
        refused = [flag for flag, value in (("--kept-rows", kept_rows), ("--target", target), ("--attacks", attacks),
                                            ("--weight", weight), ("--hierarchies", hierarchies), ("--spec", spec),
                                            ("--map", risk_map), ("--verdict-threshold", verdict_threshold),
                                            ("--perturb", perturb))
                   if value]
        _report_on_dask(original_path, release_path, qi, sensitive, identifiers, output, k, numeric, threshold,
                        refused, scheduler, scheduler_timeout, memory_limit, json_output, quiet)
        return
    with user_errors():
        if memory_limit is not None:
            raise ParameterError("--memory-limit bounds the workers of --scheduler local:N; give --scheduler too")
        from ..reporting import parse_threshold_flags

        qis = names(qi, "--qi")
        loaded = None
        household = None
        if spec is not None:
            from ..publishing import load_spec

            loaded = load_spec(spec)
            qis = qis or loaded.quasi_identifiers
            weight = weight or loaded.weight  # the spec's weight role weights the risk, as in publish --report
            household = loaded.household  # and its households give the household risk
        qis = _check_request(qis, output, json_output, (original_path, release_path), threshold, " (or give --spec)")
        flags = parse_threshold_flags(verdict_threshold)
        if risk_map and loaded is None:
            raise ParameterError("--map needs --spec: the neighbouring releases are re-made from the release's spec")
        with stages(3, quiet=quiet or json_output) as progress:
            progress.stage("reading the files")
            numeric_names = names(numeric, "--numeric")
            original = read_table(original_path)
            release = read_table(release_path)
            kept = None if kept_rows is None else read_kept_rows(kept_rows, len(original), len(release))
            options = _spec_options(loaded, original, qis) if loaded is not None else {}
            if hierarchies is not None:
                options["hierarchies"] = {**options.get("hierarchies", {}), **_folder_hierarchies(hierarchies, qis)}
            options["thresholds"] = {**options.get("thresholds", {}), **flags}
            if risk_map:
                options.update(spec=loaded, risk_utility_map=True)
            options.setdefault("k", k)
            if k is not None:
                options["k"] = k
            progress.stage("measuring risk and utility" + (" (and running the attacks)" if attacks else ""))
            result = make_report(original, release, qis,
                                 names(sensitive, "--sensitive") or options.pop("sensitive", None),
                                 names(identifiers, "--id") or options.pop("identifiers", None), kept_rows=kept,
                                 numeric=numeric_names or options.pop("numeric", None) or None,
                                 target=target, attacks=attacks, threshold=threshold, weight=weight,
                                 household=household, perturb=names(perturb, "--perturb") or None,
                                 **{key: v for key, v in options.items()
                                    if key not in ("sensitive", "identifiers", "numeric")})
            _write(result, output, (original_path, release_path), progress)
    _show(result, output, json_output)


def _write(result, output: Path | None, inputs: tuple[Path, Path], progress) -> None:
    if output is not None:
        progress.stage(f"writing {output.name}")
        result.write(output, inputs=inputs)


def _show(result, output: Path | None, json_output: bool) -> None:
    if json_output:
        print_json(result.to_dict())
        return
    print_lines(_lines(result, output))


def _check_request(qis: list[str] | None, output: Path | None, json_output: bool, inputs: tuple[Path, Path],
                   threshold: float, qi_hint: str = "") -> list[str]:
    """What a report needs in process and on Dask alike: the keys (returned), somewhere to put it, a
    threshold."""
    if not qis:
        raise ParameterError(f"--qi is required: the columns an intruder may know{qi_hint}")
    if output is None and not json_output:
        raise ParameterError("give -o report.html (or .json), or --json to print the report")
    if output is not None:
        check_report_path(output, inputs)
    if not 0 < threshold <= 1:
        raise ParameterError(f"--threshold must be in (0, 1]; got {threshold}")
    return qis


def _report_on_dask(original_path: Path, release_path: Path, qi, sensitive, identifiers, output, k, numeric,
                    threshold: float, refused: list[str], scheduler: str, scheduler_timeout: float, memory_limit,
                    json_output: bool, quiet: bool) -> None:
    """The report of a partitioned release on Dask: progress per partition, Ctrl-C ends it cleanly."""
    from ..distributed import connect

    with user_errors(), cancellable_run("the report was not written"):
        if refused:
            raise ParameterError(f"{', '.join(refused)} need the whole file in one process; a report on Dask "
                                 "(--scheduler) does not take them")
        qis = _check_request(names(qi, "--qi"), output, json_output, (original_path, release_path), threshold)
        check_scheduler(scheduler, scheduler_timeout)
        with stages(3 if output is not None else 2, quiet=quiet or json_output) as progress:
            progress.stage(f"connecting to {scheduler}")
            with connect(scheduler, memory_limit=memory_limit, timeout=scheduler_timeout) as client:
                progress.stage(f"measuring {release_path.name} against {original_path.name}")
                result = make_report(str(original_path), str(release_path), qis, names(sensitive, "--sensitive") or None,
                                     names(identifiers, "--id") or None, k=k,
                                     numeric=names(numeric, "--numeric") or None, threshold=threshold,
                                     scheduler=client, progress=progress.describe)
            _write(result, output, (original_path, release_path), progress)
    _show(result, output, json_output)


def _spec_options(spec, original, qis: list[str]) -> dict[str, Any]:
    """What a release's spec tells the report: roles, promises, hierarchies (read as
    ``incrowd publish`` reads them, flat ones included) and the verdict's thresholds."""
    from ..publishing import prepare

    prepared = prepare(original, spec)
    return {"sensitive": spec.names("sensitive") or None, "identifiers": spec.names("identifier") or None,
            "numeric": [c for c in spec.names("numeric") if c in qis] or None,
            "k": spec.k, "models": list(spec.privacy_models),
            "hierarchies": {c: h for c, h in prepared.hierarchies.items() if c in qis},
            "thresholds": dict(spec.report_thresholds), "suppression": spec.suppression,
            "missing_matches": spec.missing_matches, "strategy": spec.strategy,
            # its perturbed columns (not compared to align the files) and its benchmark estimates
            "spec": spec}


def _folder_hierarchies(folder: Path, qis: list[str]) -> dict[str, Any]:
    """``--hierarchies DIR``: the hierarchy of every quasi-identifier that has a file there."""
    from ..generalization import arx_hierarchy_name, find_hierarchy_file, hierarchy_file_name, read_hierarchy

    if not folder.is_dir():
        raise DataError(f"--hierarchies {str(folder)!r} is not a folder")
    out = {}
    for q in qis:
        if (folder / hierarchy_file_name(q)).is_file() or any(folder.glob(arx_hierarchy_name(q))):
            out[q] = read_hierarchy(find_hierarchy_file(folder, q), q)
    if not out:
        raise DataError(f"--hierarchies {str(folder)!r} holds no hierarchy file of the quasi-identifiers "
                        f"({', '.join(qis)}); name them '{hierarchy_file_name('<attribute>')}'")
    return out


def _verdict_lines(result) -> list[tuple[str, str]]:
    out = []
    for line in result.verdict:
        value = line["value"]
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        text = f"{line['status'].upper():6} {shown} (threshold {line['threshold']:g})"
        if line["status"] != "pass":
            text += f": {line['driver']}; next: {line['next_step']}"
        out.append((line["measure"], text))
    return out


def _lines(result, output) -> list[tuple[str, str]]:
    about, risk, utility = result.about, result.risk, result.utility
    lines = _verdict_lines(result)
    for point in result.risk_utility_map or []:
        changed = "" if point["label"] == "release" else f"  (incrowd publish --spec with {point['label']})"
        lines.append((f"map: {point['label']}", f"risk {100 * point['risk']:.3g} %, loss {100 * point['loss']:.3g} %"
                                                f"{changed}"))
    lines.append(("rows", f"{about['rows_original']} original, {about['rows_release']} released "
                          f"({about['suppressed']} suppressed)"))
    classes = risk.get("classes", {})
    if classes:
        prosecutor = classes.get("prosecutor", {})
        lines.append(("classes", f"{classes.get('n_classes')}, smallest {classes.get('smallest_class')}"))
        if prosecutor:
            lines.append(("re-identification", f"highest {prosecutor.get('highest', float('nan')):.4f}, "
                                                f"average {prosecutor.get('average', float('nan')):.4f}"))
    if "drisk" in risk:
        lines.append(("dRisk", f"{risk['drisk']:.4f}"))
    survey = risk.get("sample_risk", {})
    if survey.get("withheld"):
        lines.append(("global risk (weighted)", f"withheld: {survey['withheld']}"))
    elif survey:
        lines.append(("global risk (weighted)", f"{survey['global_risk']:.6g}, expected re-identifications "
                                                f"{survey['expected_reidentifications']:.4g}"))
    numeric = utility.get("numeric", {})
    if "il_all_rows" in numeric:
        lines.append(("information loss", f"{100 * numeric['il_all_rows']:.3g} % (SSE/SST over all rows, "
                                          "a suppressed row losing all; the release summary's numeric IL)"))
    if about.get("left_out"):
        lines.append(("left out on Dask", ", ".join(about["left_out"])))
    if output is not None:
        lines.append(("written", str(output)))
    return lines
