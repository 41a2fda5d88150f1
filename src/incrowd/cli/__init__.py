"""The ``incrowd`` command line: ``microaggregate``, ``methods``, ``demo`` and ``--version``.

``run`` is the console-script entry point (``incrowd = "incrowd.cli:run"``: ``main``, then a
quick exit); ``main`` runs the command line and raises ``SystemExit`` like any typer program;
``app`` is the typer application, for ``typer.testing.CliRunner``. Errors the user can fix (every
:class:`incrowd.IncrowdError`, and files that cannot be read or written) print one line
``error: <message>`` on stderr and exit with code 2; nothing is written then.
"""

from __future__ import annotations

from ._app import app, main, run

__all__ = ["app", "main", "run"]
