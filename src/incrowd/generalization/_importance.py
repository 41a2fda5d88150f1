"""sdcMicro's importance of the columns local suppression may blank, checked where it is given:
in :func:`local_suppression`'s argument and in a release spec."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..exceptions import ParameterError, name_list


def check_importance(importance: Mapping, columns: list[str], *, where: str = "",
                     columns_are: str = "quasi-identifiers") -> list[int]:
    """sdcMicro's importance per column, checked: one integer from 1 (the most important,
    suppressed last) to the number of columns for each of ``columns`` and for nothing else.

    Parameters
    ----------
    importance : mapping of str to int
        The number per column.
    columns : list of str
        The columns suppression may blank, in order.
    where : str
        Where the numbers come from (a spec's name), to begin an error message with.
    columns_are : str
        What the columns are, for error messages.

    Returns
    -------
    list of int
        The numbers in the order of ``columns``.
    """
    prefix = f"{where}: " if where else ""
    m = len(columns)
    unknown = [c for c in importance if c not in columns]
    if unknown:
        raise ParameterError(f"{prefix}importance names {name_list(unknown)}, which are not {columns_are} "
                             f"({name_list(columns)})")
    absent = [c for c in columns if c not in importance]
    if absent:
        raise ParameterError(f"{prefix}importance gives no number for {name_list(absent)}; give one for each of the "
                             f"{columns_are}")
    for c in columns:
        v = importance[c]
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= m:
            raise ParameterError(f"{prefix}importance of {c!r} must be an integer from 1 (most important, "
                                 f"suppressed last) to {m}; got {v!r}")
    return [int(importance[c]) for c in columns]
