"""The ``--report FILE`` option of every command that writes a release: its check before any
work and the report written beside the release. Typer-free, so that a one-shot ``incrowd
publish`` read without typer writes its report too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._runtime import lazy as _lazy
from ..exceptions import ParameterError
from ._console import check_output_path

__all__ = ["check_report_path", "make_report", "write_release_report"]

make_report = _lazy.function("incrowd.reporting._report", "report")

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
