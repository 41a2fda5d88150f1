"""Write docs/cli.md: the help of every ``incrowd`` command, rendered from the typer app.

Run ``python docs/gen_cli.py`` after changing a command, an option or a help text;
tests/test_cli_reference.py fails while the page differs from what this script writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer.main

PAGE = Path(__file__).with_name("cli.md")
WIDTH = 100

INTRO = """# CLI reference

Every command of the `incrowd` program with its help, as `incrowd COMMAND --help` prints it.
Each command accepts `--json` for one machine-readable JSON object instead of the report, and
errors the user can fix print one line `error: ...` on stderr and exit with code 2.

This page is generated from the program itself (`python docs/gen_cli.py`); do not edit it by
hand.
"""


def _commands(chain: tuple, path: tuple[str, ...]):
    # typer may bring its own copy of click, so groups are told apart by what they can do
    command = chain[-1]
    yield path, chain
    if hasattr(command, "list_commands"):
        ctx = command.context_class(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _commands((*chain, sub), (*path, name))


def _plain_help(chain: tuple, path: tuple[str, ...]) -> str:
    # click's own formatter (no terminal boxes or colours) at a fixed width, so the page is the
    # same on every machine
    command = chain[-1]
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None
    parent = None
    for above, name in zip(chain[:-1], path[:-1]):
        parent = above.context_class(above, info_name=name, parent=parent)
    ctx = command.context_class(command, info_name=path[-1], parent=parent, terminal_width=WIDTH,
                                max_content_width=WIDTH)
    # help texts escape a bracket rich would take for a style tag ("\\[privacy]"); plain text
    # shows the bracket itself
    return command.get_help(ctx).rstrip().replace("\\[", "[")


def render() -> str:
    from incrowd.cli import app

    root = typer.main.get_command(app)
    parts = [INTRO]
    for path, chain in _commands((root,), ("incrowd",)):
        title = " ".join(path)
        parts.append(f"## `{title}`\n\n```text\n{_plain_help(chain, path)}\n```\n")
    return "\n".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is out of date: run python docs/gen_cli.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
