"""``incrowd warmup``: compile the kernels ahead, with a progress bar."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from ._console import print_json, stderr_console, stdout_console, user_errors
from ._names import names


def warmup_command(
    methods: Annotated[
        Optional[list[str]],
        typer.Option("--methods", help="Methods to compile for, comma-separated (repeatable); "
                     "'incremental', 'generalization', 'publish' and 'risk' name those commands' kernels. "
                     "Default: all.",
                     show_default=False),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON object on stdout, nothing else."),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Do not show progress on stderr.")] = False,
) -> None:
    """Compile the numba kernels for this machine now, so the first real run does not.

    Each method runs on small synthetic data of several shapes (every kernel variant a real
    call may pick); the compiled kernels are cached on disk for every later process.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from .._runtime import cache_directory, disable_notice
    from ._compile_ahead import steps, targets, warm

    disable_notice()  # the progress bar says it already
    with user_errors():
        chosen = targets(names(methods, "--methods"))
        total = sum(len(steps(t)) for t in chosen)
        console = stderr_console()
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console, transient=True,
                            disable=quiet or json_output)
        with progress:
            task = progress.add_task(f"compiling for {chosen[0]}", total=total)

            def advance(target: str, rows: int, cols: int) -> None:
                progress.update(task, advance=1, description=f"compiling for {target}")

            reports = warm(chosen, advance)
        cache = cache_directory()
    if json_output:
        print_json({"cache": cache, "compile_seconds": sum(r.compile_seconds for r in reports),
                    "targets": [{"name": r.target, "compile_seconds": r.compile_seconds,
                                 "seconds": r.seconds, "compilations": r.compiled,
                                 "shapes": r.steps} for r in reports]})
        return
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column, justify in (("target", "left"), ("compile s", "right"), ("total s", "right"),
                            ("compilations", "right")):
        table.add_column(column, justify=justify, no_wrap=True)
    for r in reports:
        table.add_row(r.target, f"{r.compile_seconds:.2f}", f"{r.seconds:.2f}", str(r.compiled))
    out = stdout_console()
    out.print(table)
    out.print("cached in " + (cache or "no writable directory: each process compiles again "
                              "(set NUMBA_CACHE_DIR to a writable folder)"), soft_wrap=True)
