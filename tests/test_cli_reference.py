"""docs/cli.md is the help of every command as the program prints it (docs/gen_cli.py writes it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_current():
    gen = _generator()
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == gen.render(), (
        "docs/cli.md differs from the program's help: run python docs/gen_cli.py")


def test_cli_reference_has_every_command():
    gen = _generator()
    from typer.main import get_command

    from incrowd.cli import app

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    titles = [" ".join(path) for path, _ in gen._commands((get_command(app),), ("incrowd",))]
    assert {"incrowd microaggregate", "incrowd incremental base", "incrowd lattice build", "incrowd serve"} <= set(titles)
    for title in titles:
        assert f"## `{title}`" in page
