"""What publish adds to generalization for statistical files: the numeric recode of each
generalized column of codes (the rule is :func:`incrowd.generalization._cells.recode_groups`:
an unchanged value keeps its code and label, a group named as a value takes that value's code,
other groups new codes above the largest the column uses, in the hierarchy's order), and the
columns published as one label in every row: allowed by default, as ARX's search lets a column
reach its top when that loses least, and refused where the spec sets allow_full_suppression = false."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._prepare import Prepared


def recode(prep: Prepared, name: str) -> dict[str, Any] | None:
    """The recode of generalized column ``name`` (None for a column of text: it stays text)."""
    from ..generalization import recode_groups

    # level 0 as the release spells it (the data's codes), the groups as the hierarchy names them
    return recode_groups(prep.frame[name], prep.data_hierarchies[name])


def informative_top(prep: Prepared, name: str) -> int:
    """The highest level ``name`` may be published at: its hierarchy's top, or, where the spec
    sets ``allow_full_suppression = false``, the highest level at which its values still fall in
    two or more groups (a column that is one label in every row, such as "*", tells nothing)."""
    hierarchy = prep.hierarchies[name]
    if allows_full_suppression(prep.spec, name):
        return hierarchy.max_level
    present = np.unique(prep.codes0[name])
    for level in range(hierarchy.max_level, 0, -1):
        if np.unique(hierarchy.code_map(level)[present]).size > 1:
            return level
    return 0


def fully_suppressed(prep: Prepared, levels_per_row: dict, keep: np.ndarray) -> list[str]:
    """The categorical QIs published as one generalized label in every kept row."""
    out = []
    for name in prep.categorical:
        level = levels_per_row[name][keep]
        if level.size == 0 or not (level > 0).all():
            continue
        hierarchy = prep.hierarchies[name]
        codes = prep.codes0[name][keep]
        labels = set()
        for L in np.unique(level):
            rows = level == L
            labels |= ({"*"} if L > hierarchy.max_level else
                       set(hierarchy.labels[L][np.unique(hierarchy.code_map(int(L))[codes[rows]])].tolist()))
        if len(labels) == 1:
            out.append(name)
    return out


def check_full_suppression(prep: Prepared, levels_per_row: dict, keep: np.ndarray) -> list[str]:
    """The fully suppressed columns (see :func:`fully_suppressed`); refused where the spec
    forbids them (``allow_full_suppression = false``)."""
    from ..exceptions import ParameterError

    names = [n for n in fully_suppressed(prep, levels_per_row, keep) if not allows_full_suppression(prep.spec, n)]
    if names:
        raise ParameterError(
            f"the release would publish {', '.join(repr(n) for n in names)} as one label in every row, which "
            "the spec forbids (allow_full_suppression = false); give the column a hierarchy with intermediate "
            "levels, more rows, a lower k or a higher max_suppression, or set allow_full_suppression = true to "
            "publish it so; nothing is published")
    return fully_suppressed(prep, levels_per_row, keep)


def allows_full_suppression(spec, name: str) -> bool:
    """Whether ``name`` may be one label in every row: its own setting, else [privacy]'s."""
    own = spec.columns[name].allow_full_suppression if name in spec.columns else None
    return spec.allow_full_suppression if own is None else own


def attach(table: pd.DataFrame, prep: Prepared, names) -> None:
    """Record in ``table.attrs`` the recode of each generalized column in ``names``."""
    from ..generalization import attach_recodes

    attach_recodes(table, {name: recode(prep, name) for name in names})
