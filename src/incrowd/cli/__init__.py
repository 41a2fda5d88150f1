"""The ``incrowd`` command line: ``microaggregate``, ``methods``, ``demo`` and ``--version``.

``main`` is the console-script entry point (``incrowd = "incrowd.cli:main"``); ``app`` is the
typer application, for ``typer.testing.CliRunner``. Errors the user can fix (every
:class:`incrowd.IncrowdError`, and files that cannot be read or written) print one line
``error: <message>`` on stderr and exit with code 2; nothing is written then.
"""

from __future__ import annotations

from ._app import app, main

__all__ = ["app", "main"]
