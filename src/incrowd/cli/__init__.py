"""The ``incrowd`` command line: ``microaggregate``, ``methods``, ``demo`` and ``--version``.

``run`` is the console-script entry point (``incrowd = "incrowd.cli:run"``: ``main``, then a
quick exit); ``main`` runs the command line and raises ``SystemExit`` like any typer program;
``app`` is the typer application, for ``typer.testing.CliRunner``. Errors the user can fix (every
:class:`incrowd.IncrowdError`, and files that cannot be read or written) print one line
``error: <message>`` on stderr and exit with code 2; nothing is written then.

``app`` and ``main`` load on first use: ``incrowd --version`` is answered here, and ``risk`` and
``publish`` on a plain command line run, before typer, rich and every command's options load
(they cost more than the rest of a one-shot process).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

from .._runtime import lazy as _lazy

if TYPE_CHECKING:
    from ._app import app, main

__all__ = ["app", "main", "run"]


#: the commands a plain command line runs without building the others: command -> its module,
#: which reads the plain form (``plain_arguments``) and runs it (``run_plain``)
PLAIN_COMMANDS = {"risk": "._risk", "publish": "._publish_file"}


def run() -> None:
    """The ``incrowd`` program: ``--version`` alone printed at once, ``risk`` and ``publish`` on
    a plain command line run without building the others (:mod:`incrowd.cli._plain`), anything
    else by the command line (:func:`incrowd.cli._app.run`)."""
    if sys.argv[1:] == ["--version"]:
        from .._runtime import __version__

        print(f"incrowd {__version__}")
        return
    command = PLAIN_COMMANDS.get(sys.argv[1]) if len(sys.argv) > 1 else None
    if command is not None:  # a one-shot command in its plain form skips building the command line
        module = importlib.import_module(command, __name__)
        arguments = module.plain_arguments(sys.argv[2:])
        if arguments is not None:
            module.run_plain(arguments)
    from ._app import run as run_command_line

    run_command_line()


__getattr__, __dir__ = _lazy.attach(__name__, {"app": "._app", "main": "._app"})
