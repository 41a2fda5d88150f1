"""Usage errors (a bad flag value, a missing option) in the one error shape of every command.

typer draws click's usage errors as a boxed panel of several lines; a script reading stderr
then has to parse a box. Here they become one line ``error: <message>`` on stderr, exit status
2, like every other error the user can fix. ``--help`` and a bare command still show the help.
"""

from __future__ import annotations

import sys
from typing import Any, Sequence

import typer
from typer.core import TyperGroup

try:  # typer >= 0.22 carries its own copy of click
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - older typer, on click itself
    from click import exceptions as click_errors

from ._console import EXIT_USER_ERROR, echo_err


def _usage_line(exc: click_errors.UsageError) -> str:
    message = exc.format_message()
    ctx = exc.ctx
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        message = f"{message.rstrip('.')}; see '{ctx.command_path} --help'"
    return message


class OneLineUsageErrors(TyperGroup):
    """The root group of the ``incrowd`` application, reporting usage errors on one line."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click_errors.NoArgsIsHelpError as exc:
            # a bare command asks for its help: show it, as typer does
            exc.show()
            sys.exit(exc.exit_code)
        except click_errors.UsageError as exc:
            echo_err("error", _usage_line(exc))
            sys.exit(EXIT_USER_ERROR)
        except click_errors.ClickException as exc:  # e.g. a FileError
            echo_err("error", exc.format_message())
            sys.exit(EXIT_USER_ERROR)
        except typer.Abort:
            echo_err("error", "aborted")
            sys.exit(1)
        # outside standalone mode click returns the code of a typer.Exit instead of exiting
        sys.exit(rv if isinstance(rv, int) else 0)


def bounded(option: str, high: int, low: int | None = None):
    """A typer callback refusing values above ``high`` (and below ``low`` if given) while the
    command line is parsed, before any input is read; None (not given) passes."""

    def check(value):
        if value is None:
            return value
        if (low is not None and value < low) or value > high:
            allowed = f"in [{low}, {high}]" if low is not None else f"at most {high}"
            raise typer.BadParameter(f"must be an integer {allowed}; got {value}", param_hint=f"'{option}'")
        return value

    return check
