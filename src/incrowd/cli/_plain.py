"""A one-shot command's plain command line, read without typer: one reader for every command
that has one (``incrowd risk``, ``incrowd publish``).

Building the typer application (every command's options, typer's pydantic checks of each
value) costs a one-shot command about a fifth of a second, more than the risk of a
survey-sized file or most of a release of one. A command line in its plain form (each option
once, spelled in full or by its short name, its value the next word; one file) is read here
into the very arguments typer would give the command; anything else (--help, a run on Dask,
--opt=value, a repeated option, a value that is not a plain number, a mistake) goes to typer,
so help and every error line stay typer's.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, NoReturn

from .._runtime import enable_notice
from .._runtime import process as _process
from ._console import echo_err, exit_now

# numbers every parser reads alike (typer's goes through pydantic; Python's float and int round
# the same decimal to the same double)
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?")
_WHOLE = re.compile(r"0|[1-9][0-9]{0,17}")


def read(args: list[str], options: Mapping[str, tuple[str, str]], flags: Mapping[str, tuple[str, Any]],
         defaults: Mapping[str, Any]) -> dict[str, Any] | None:
    """A command's arguments from ``args`` (the words after the command's name) in their plain
    form, as typer would pass them; None where typer must read the command line.

    ``options`` maps an option's spelling to (parameter, how its value is read: "list" for
    repeatable text, "text", "path", "number" for a float, "whole" for an int), ``flags`` a
    flag's spelling to (parameter, value); ``defaults`` holds every parameter's default (a test
    holds each command's to typer's). The one positional argument, the file, is ``data_path``."""
    arguments: dict[str, Any] = {"data_path": None, **defaults}
    given: set[str] = set()
    files: list[str] = []
    words = iter(args)
    for word in words:
        if word in flags:
            name, flag = flags[word]
            if name in given:
                return None
            given.add(name)
            arguments[name] = flag
        elif word in options:
            name, kind = options[word]
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
    if len(files) != 1:
        return None
    arguments["data_path"] = Path(files[0])
    return arguments


def run(command: Callable[..., None], arguments: dict[str, Any], *, left_out: Collection[str] = ()) -> NoReturn:
    """``command`` as the program on a plain command line, called with ``arguments`` but those
    named in ``left_out`` (the options of a run on Dask, never part of a plain form): as typer
    runs a command (the compile notice unless quiet, an error line and status 2 for a user's
    error, Ctrl-C as "error: aborted" and status 1), then the program's quick exit."""
    _process.program = True
    if not arguments["quiet"]:
        enable_notice()
    code: Any = 0
    try:
        command(**{name: value for name, value in arguments.items() if name not in left_out})
    except Exception as stop:
        # a user's error ends in typer's Exit, which exists only once typer was loaded to raise it
        typer = sys.modules.get("typer")
        if typer is None or not isinstance(stop, typer.Exit):
            raise
        code = stop.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        echo_err("error", "aborted")
        code = 1
    except BrokenPipeError:  # the reader of stdout went away: status 1, as click ends it
        code = 1
    exit_now(code)
