"""Terminal plumbing for the CLI: consoles, the stage spinner, error lines, JSON output.

stdout carries the result (a report, a table, or exactly one JSON object); stderr carries
progress, ``warning:`` lines and ``error:`` lines. Progress is drawn only on an interactive
stderr, so pipes, files and tests see none of it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, NoReturn

from ..exceptions import DataError, IncrowdError
from ..io import check_output_path as _check_output_path
from ..io import is_stdout

# typer and rich load where something needs them (a terminal, an error, a table): together about
# a tenth of a second, a fifth of a one-shot ``incrowd risk`` on a survey-sized file
if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

#: exit status of an error the user can fix (bad parameter, bad data, unreadable file);
#: the same status typer gives a usage error
EXIT_USER_ERROR = 2


def stdout_console(err: bool = False) -> Console:
    """Plain console for reports and tables (no syntax highlighting of numbers).

    ``err=True`` sends the report to stderr, for ``-o -`` where stdout carries the table.
    """
    from rich.console import Console

    return Console(highlight=False, stderr=err)


def stderr_console() -> Console:
    """Console for progress; progress is shown only where this is a terminal."""
    from rich.console import Console

    return Console(stderr=True, highlight=False)


#: what rich's Text drops (bell, backspace, vertical tab, form feed, carriage return) or
#: rewrites (a tab, to the next tab stop by cells): a line holding one is left to rich
_RICH_REWRITES = frozenset("\a\b\v\f\r\t")


def _surely_no_terminal(stream) -> bool:
    """True where rich would certainly take ``stream`` for no terminal (it then writes a
    Text's characters as they are, with no style); False where it might (rich decides)."""
    if "TTY_COMPATIBLE" in os.environ or "FORCE_COLOR" in os.environ or "IPython" in sys.modules:
        return False
    if getattr(sys.stdin, "__module__", "").startswith("idlelib"):
        return False
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):
        return False


def print_lines(rows: list[tuple[str, str]], err: bool = False) -> None:
    """``key  value`` lines on stdout; plain lines, not a table, so a long path is never cut.

    Off a terminal they are written directly, byte for byte what rich writes there (no style,
    no wrapping): rich loads only for a terminal (the keys in bold) or a line it rewrites."""
    width = max(len(key) for key, _ in rows) + 2
    lines = [key.ljust(width) + value for key, value in rows]
    stream = sys.stderr if err else sys.stdout
    if _surely_no_terminal(stream) and not any(_RICH_REWRITES.intersection(line) for line in lines):
        stream.write("".join(line + "\n" for line in lines))
        stream.flush()
        return
    from rich.text import Text

    console = stdout_console(err)
    for key, value in rows:
        console.print(Text.assemble((key.ljust(width), "bold"), value), soft_wrap=True)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def echo_err(prefix: str, message: Any) -> None:
    """``prefix: message`` on one line of stderr (no markup: messages hold brackets)."""
    import typer

    typer.echo(f"{prefix}: {_one_line(message)}", err=True)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, IncrowdError):
        return str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        where = f" {str(exc.filename)!r}" if exc.filename is not None else ""
        return f"cannot access{where}: {exc.strerror}"
    if _is_arrow_error(exc):
        return f"cannot write Parquet: {exc}"
    return str(exc)


def _is_arrow_error(exc: BaseException) -> bool:
    # pyarrow is imported only by the commands that read or write Parquet; where it was never
    # imported no Arrow error can have been raised, and --help need not wait for it
    pyarrow = sys.modules.get("pyarrow")
    return pyarrow is not None and isinstance(exc, getattr(pyarrow, "ArrowException", ()))


#: the exit status of a run stopped with Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_CANCELLED = 130


@contextlib.contextmanager
def cancellable_run(what: str) -> Iterator[None]:
    """Ctrl-C ends the run with one line (``cancelled: ...``) and status 130, no traceback."""
    try:
        yield
    except KeyboardInterrupt:
        echo_err("cancelled", f"{what}; nothing was written")
        stop(EXIT_CANCELLED)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """Turn errors the user can fix into ``error: <message>`` on stderr and exit status 2.

    Warnings raised inside are printed as ``warning: <message>`` lines on stderr (the default
    warning format would show incrowd's source lines, which mean nothing to a CLI user).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except Exception as exc:
            if not isinstance(exc, (IncrowdError, OSError)) and not _is_arrow_error(exc):
                raise
            _print_warnings(caught)
            echo_err("error", _describe(exc))
            stop(EXIT_USER_ERROR)
    _print_warnings(caught)


def stop(code: int) -> NoReturn:
    """End the command with exit status ``code`` as typer ends it (``typer.Exit``, which the
    plain ``incrowd risk`` catches too)."""
    import typer

    raise typer.Exit(code) from None


def _print_warnings(caught: list[warnings.WarningMessage]) -> None:
    seen: set[str] = set()
    for w in caught:
        text = _one_line(w.message)
        if text not in seen:
            seen.add(text)
            echo_err("warning", text)


def print_json(obj: Any, err: bool = False) -> None:
    """Exactly one strict JSON document on stdout (stderr with ``err``), nothing else;
    non-finite numbers become null."""
    from ..io import json_dumps as strict_json  # numpy's types are converted there

    stream = sys.stderr if err else sys.stdout
    stream.write(strict_json(obj, indent=2) + "\n")
    stream.flush()


class Stages:
    """A spinner with a step counter on stderr naming the stage being worked on, or nothing.

    ``Stages(None, n)`` is a no-op, so commands call ``stage()`` unconditionally.
    """

    def __init__(self, console: Console | None, total: int):
        self._console = console
        self._total = total
        self._progress: Progress | None = None
        self._task = None
        self._started = 0

    def __enter__(self) -> Stages:
        if self._console is not None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self._console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("starting", total=self._total)
        return self

    def stage(self, description: str) -> None:
        """Mark the previous stage done and show ``description`` as the current one."""
        if self._progress is not None:
            self._progress.update(
                self._task, completed=self._started, description=description
            )
        self._started += 1

    def describe(self, description: str) -> None:
        """Say how far the current stage got (``counting ...: 3/8 partitions``)."""
        if self._progress is not None:
            self._progress.update(self._task, description=description)

    def __exit__(self, *exc_info) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=self._total)
            self._progress.stop()


def stages(total: int, *, quiet: bool) -> Stages:
    """Progress on stderr unless ``quiet`` or stderr is not a terminal."""
    if quiet or _surely_no_terminal(sys.stderr):
        return Stages(None, total)
    console = stderr_console()
    return Stages(console if console.is_terminal else None, total)


def check_output_path(output: Path, inputs: tuple = (), *, what: str = "output",
                      stdout_ok: bool = True) -> None:
    """Fail before any work when the output cannot be written where asked.

    ``inputs`` are the files and folders the command reads (never overwritten); ``-`` means
    standard output where ``stdout_ok`` (a text table), and is refused otherwise.
    """
    if is_stdout(output):
        if not stdout_ok:
            raise DataError(f"a {what} is a DuckDB database and cannot go to standard output "
                            "('-'); name a file")
        return
    if stdout_ok:  # a table: its extension must name a format incrowd writes
        from ..io import check_writable

        check_writable(output, what)
    _check_output_path(output, inputs=inputs, what=what)


def exit_now(code) -> NoReturn:
    """Exit without tearing the interpreter down when numba or pandas was loaded.

    Freeing numba's and LLVM's compiled-code structures at interpreter shutdown took 0.3-0.4 s
    after every command that ran a kernel, a quarter of a small command's wall time, for
    nothing: the process is ending; tearing pandas and pyarrow down (their modules, Arrow's
    thread pools and memory pools) about 0.1 s of CPU after every command that read a table,
    a publish of a survey file included. Everything a command writes is closed and renamed
    before it returns, so after the exit handlers (temporary folders, loggers, finalizers) and
    a flush of stdout and stderr the process can end at once. Where other threads are still
    alive, or neither was loaded (nothing costly to tear down), the normal exit runs."""
    import threading

    if not {"numba", "pandas"} & sys.modules.keys() or threading.active_count() > 1:
        raise SystemExit(code)
    import atexit
    import os

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # SystemExit("message"): print it as the interpreter would
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            pass
    os._exit(status)
