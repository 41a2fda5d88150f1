"""Rank swapping: each value swapped with one of a close rank (sdcMicro's ``rankSwap``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._runtime import lazy as _lazy
from .._runtime import small as _small
from ._base import Method, Outcome, Param, is_number, numbers

# the swap loop is compiled by numba: loaded on the first large swap (a small one, in a process
# that has not started numba, runs the loop's plain twin), so that a step of another method (and a
# spec's check of its steps) does not import numba
_swap = _lazy.function("incrowd.perturbation._rank_swap_kernel", "swap")


class RankSwap(Method):
    key = "rank_swap"
    sdcmicro = "rankSwap"
    summary = "swaps each value with one whose rank is within a window"
    draws = True
    params = {
        "p": Param("a number in (0, 100]", 5, is_number(0, 100, open_lo=True),
                   "the window in percent of the records: two values are swapped only if their ranks differ "
                   "by less than p * n / 100 (sdcMicro's P)"),
        "top_percent": Param("a number in [0, 100)", 0, is_number(0, 100, open_hi=True),
                             "the largest values, in percent of the records, replaced by their mean first "
                             "and not swapped (sdcMicro's TopPercent, 5 there)"),
        "bottom_percent": Param("a number in [0, 100)", 0, is_number(0, 100, open_hi=True),
                                "the smallest values, in percent, replaced by their mean first and not swapped "
                                "(sdcMicro's BottomPercent, 5 there)"),
    }

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        out: dict[str, np.ndarray] = {}
        swaps = 0
        widest = 0
        for name in self.columns:
            x = numbers(frame, name, "rank_swap")
            out[name], s, w = rank_swap(x, self.p, self.top_percent, self.bottom_percent, rng)
            swaps += s
            widest = max(widest, w)
        return Outcome(out, {"swaps": swaps, "window": widest})


def rank_swap(x: np.ndarray, p: float, top: float, bottom: float,
              rng: np.random.Generator) -> tuple[np.ndarray, int, int]:
    """(the swapped column, the swaps made, the window in ranks). The present values are ranked
    (ties by row order); the top and bottom shares are replaced by their means; then, from the
    smallest rank up, each value not yet swapped is swapped with one drawn uniformly among those
    not yet swapped whose rank is above it by less than the window."""
    out = x.copy()
    present = np.flatnonzero(~np.isnan(x))
    n = present.size
    if n < 2:
        return out, 0, 0
    order = present[np.argsort(x[present], kind="stable")]
    values = x[order].copy()
    n_top, n_bottom = int(n * top / 100), int(n * bottom / 100)
    fixed = np.zeros(n, np.bool_)
    if n_top:
        values[n - n_top:] = values[n - n_top:].mean()
        fixed[n - n_top:] = True
    if n_bottom:
        values[:n_bottom] = values[:n_bottom].mean()
        fixed[:n_bottom] = True
    window = int(n * p / 100)
    draws = rng.random((n, _TRIES + 1))
    if _small.prefer_plain(n):
        swaps = _small.timed_plain(_small.rank_swap, values, fixed, window, draws)
    else:
        swaps = _swap(values, fixed, window, draws)
    out[order] = values
    return out, int(swaps), window


#: random tries at a slot of the window before the free slots are counted
_TRIES = 8
