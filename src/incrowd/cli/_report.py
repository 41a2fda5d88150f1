"""``incrowd report``, and the ``--report FILE`` option of every command that writes a release."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .._runtime import _lazy
from ..exceptions import DataError, ParameterError
from ._console import check_output_path, print_json, print_lines, stages, user_errors
from ._options import IdOption, JsonOption, QuietOption, names

read_table = _lazy.function("incrowd.io._tables", "read_table")
make_report = _lazy.function("incrowd.reporting._report", "report")

ReportOption = Annotated[
    Optional[Path],
    typer.Option("--report", help="Also write the disclosure-risk and utility report of the release: "
                 ".html (one self-contained page with figures) or .json.", show_default=False),
]

_SUFFIXES = (".html", ".htm", ".json")


def check_report_path(path: Path | None, inputs: tuple = ()) -> None:
    """Fail before any work when the report cannot be written where asked."""
    if path is None:
        return
    if path.suffix.lower() not in _SUFFIXES:
        raise ParameterError(f"--report {path}: give a file ending in .html or .json")
    check_output_path(path, inputs, what="report", stdout_ok=False)


def write_release_report(path: Path | None, original, release, *, inputs: tuple = (), **options: Any) -> None:
    """The report of a release just written, beside it (atomically, after the release)."""
    if path is None:
        return
    make_report(original, release, **options).write(path, inputs=inputs)


def read_kept_rows(path: Path, n_original: int, n_release: int) -> list[int]:
    """``--kept-rows FILE``: one original data row number (the first row after the header is 1)
    per line, a line per release row, in increasing order; as 0-based positions."""
    shown = f"--kept-rows {str(path)!r}"
    from ..io._atomic import read_input_bytes  # a FIFO is refused by its kind, not waited on

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
    json_output: JsonOption = False,
    quiet: QuietOption = False,
) -> None:
    """Measure the disclosure risk and the utility of RELEASE against ORIGINAL and write the
    report (HTML or JSON); rows align by position, and the report says what it assumed.

    With suppressed rows, the columns that pass through unchanged tell which rows were kept
    when they tell rows apart; otherwise give --kept-rows (or write the report with the
    release: --report of the command that made it)."""
    with user_errors():
        qis = names(qi, "--qi")
        if not qis:
            raise ParameterError("--qi is required: the columns an intruder may know")
        if output is None and not json_output:
            raise ParameterError("give -o report.html (or .json), or --json to print the report")
        if output is not None:
            check_report_path(output, (original_path, release_path))
        if not 0 < threshold <= 1:
            raise ParameterError(f"--threshold must be in (0, 1]; got {threshold}")
        with stages(3, quiet=quiet or json_output) as progress:
            progress.stage("reading the files")
            numeric_names = names(numeric, "--numeric")
            original = read_table(original_path)
            release = read_table(release_path)
            kept = None if kept_rows is None else read_kept_rows(kept_rows, len(original), len(release))
            progress.stage("measuring risk and utility" + (" (and running the attacks)" if attacks else ""))
            result = make_report(original, release, qis, names(sensitive, "--sensitive"),
                                 names(identifiers, "--id"), kept_rows=kept, k=k, numeric=numeric_names or None,
                                 target=target, attacks=attacks, threshold=threshold)
            if output is not None:
                progress.stage(f"writing {output.name}")
                result.write(output, inputs=(original_path, release_path))
    if json_output:
        print_json(result.to_dict())
        return
    print_lines(_lines(result, output))


def _lines(result, output) -> list[tuple[str, str]]:
    about, risk, utility = result.about, result.risk, result.utility
    lines = [("rows", f"{about['rows_original']} original, {about['rows_release']} released "
                      f"({about['suppressed']} suppressed)")]
    classes = risk.get("classes", {})
    if classes:
        prosecutor = classes.get("prosecutor", {})
        lines.append(("classes", f"{classes.get('n_classes')}, smallest {classes.get('smallest_class')}"))
        if prosecutor:
            lines.append(("re-identification", f"highest {prosecutor.get('highest', float('nan')):.4f}, "
                                                f"average {prosecutor.get('average', float('nan')):.4f}"))
    if "drisk" in risk:
        lines.append(("dRisk", f"{risk['drisk']:.4f}"))
    numeric = utility.get("numeric", {})
    if "il" in numeric:
        lines.append(("information loss", f"{100 * numeric['il']:.3f} % (SSE/SST)"))
    if output is not None:
        lines.append(("written", str(output)))
    return lines
