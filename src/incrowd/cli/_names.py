"""Column names as the command line gives them, read without loading typer: the one-shot
``incrowd risk`` reads its options here before typer is ever imported."""

from __future__ import annotations

import csv

from ..exceptions import ParameterError

__all__ = ["names"]


def names(values: list[str] | None, option: str) -> list[str] | None:
    """Column names from repeatable, comma-separated options; None when not given.

    Each value is read as one CSV record, so a name holding a comma is written in double
    quotes: ``--qi '"income, net",age'`` (a doubled quote "" inside stands for one quote).
    """
    if values is None:
        return None
    out: list[str] = []
    for value in values:
        try:
            fields = next(csv.reader([value], skipinitialspace=True, strict=True), [])
        except csv.Error as exc:
            raise ParameterError(f"{option} {value!r} cannot be read as comma-separated names: {exc} "
                                 "(a name holding a comma is quoted, e.g. '\"b,c\",a')") from None
        out += [f.strip() for f in fields if f.strip()]
    if not out:
        raise ParameterError(f"{option} must name at least one column; got {values!r}")
    return out
