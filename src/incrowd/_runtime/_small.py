"""Plain numpy twins of a few kernels, for small inputs in a process that has not run numba yet.

The first numba kernel a process calls, even one loaded from the on-disk cache, makes numba load
its whole runtime (its typing and lowering registries, and through them scipy.linalg): about 0.3 s.
The perturbation methods' twins (rank swapping's loop, shuffling's normal quantiles) are called
through the API, where no process says it is one-shot: they run while numba is not loaded and
until they have cost about its start-up (``prefer_plain``). MDAV's scan, the group sums, the sum
of squared deviations and SUDA2 have no twin: they are kernels of the compiled extension
(``incrowd._native``), which costs no start-up at all.

Each twin performs the same floating-point operations in the same order as its kernel (the
exactness contract of ``microaggregation._kernels``: distances summed over columns in column
order from 0, centroids as sequential row-order sums divided by the count, ties to the lowest
row), so the groups and figures are bit for bit those of the kernel; tests check it.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, Callable

import numpy as np

# Values up to which a one-pass twin (a perturbation's) costs less than numba's start-up.
SMALL_CELLS = 65_000
# What starting numba costs a process (its import, then its runtime on the first kernel call):
# 0.3 to 0.6 s here. A call through the API (a script, a notebook) is not known to be the
# process's only one, so its twins run only until they have cost this much in all: a loop of
# many small calls then moves to the kernels and pays the start-up once, never more than twice
# what the kernels alone would have cost.
START_UP = 0.4
_plain_seconds = [0.0]


def jit_runtime_loaded() -> bool:
    """True once numba's CPU runtime is loaded in this process (its last step imports
    ``numba.np.npyimpl``): kernels then cost only their own time."""
    return "numba.np.npyimpl" in sys.modules


def prefer_plain(work: float, limit: float = SMALL_CELLS) -> bool:
    """Whether a perturbation kernel's twin should run: numba not loaded yet in this process,
    ``work`` at most ``limit`` (the values the call touches, or ``mdav_work``), and this process's
    twins so far cheaper in all than numba's start-up."""
    return work <= limit and not jit_runtime_loaded() and _plain_seconds[0] < START_UP


def mdav_work(n_rows: int, n_columns: int, k: int) -> float:
    """MDAV's work, in units of about 0.4 ns of the compiled scan (``incrowd._native``) here."""
    return n_rows * n_rows / max(k, 1) * (n_columns + 8)


# Up to this much MDAV work a perturbation step runs the compiled scan (``incrowd._native``,
# no numba), counted against numba's start-up as the twins are: about 0.04 s of it
PLAIN_MDAV_WORK = 100e6


def timed_plain(twin: Callable[..., Any], *args: Any) -> Any:
    """``twin(*args)``, its time counted against numba's start-up (see ``prefer_plain``)."""
    t0 = time.perf_counter()
    try:
        return twin(*args)
    finally:
        _plain_seconds[0] += time.perf_counter() - t0


def neumaier_add(total: float, comp: float, x: float) -> tuple[float, float]:
    """``total + x`` and ``comp`` plus that sum's rounding error (Neumaier's compensated sum, whose
    result is ``total + comp``). The kernels compile this very function, so a twin and its kernel
    round alike."""
    t = total + x
    if abs(total) >= abs(x):
        comp += (total - t) + x
    else:
        comp += (x - t) + total
    return t, comp


def rank_swap(values: np.ndarray, done: np.ndarray, window: int, draws: np.ndarray) -> int:
    """``perturbation._rank_swap_kernel.swap`` in plain Python: the same partners from the same
    draws (a draw times the span truncated toward zero, as the kernel's ``int``), ``values`` and
    ``done`` changed in place the same way; the swaps made."""
    n = values.size
    vals, free_now, rows = values.tolist(), done.tolist(), draws.tolist()
    tries = draws.shape[1] - 1
    swaps = 0
    for j in range(n):
        if free_now[j]:
            continue
        hi = min(n, j + window)
        span = hi - j - 1
        if span <= 0:
            continue
        partner = -1
        row = rows[j]
        for attempt in range(tries):
            k = j + 1 + min(int(row[attempt] * span), span - 1)
            if not free_now[k]:
                partner = k
                break
        if partner < 0:
            open_slots = [k for k in range(j + 1, hi) if not free_now[k]]
            if not open_slots:
                continue
            partner = open_slots[min(int(row[tries] * len(open_slots)), len(open_slots) - 1)]
        vals[j], vals[partner] = vals[partner], vals[j]
        free_now[j] = free_now[partner] = True
        swaps += 1
    values[:] = vals
    done[:] = free_now
    return swaps


# Cephes' ndtri (scipy.special.ndtri, which scipy.stats.norm.ppf calls), coefficient for
# coefficient: central region, then the tails for sqrt(-2 log y) below 8 and from 8
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)
_EXP_MINUS_2 = 0.13533528323661269189
_S2PI = 2.50662827463100050242E0


def _polevl(x: np.ndarray, coefficients: tuple[float, ...], leading_one: bool = False) -> np.ndarray:
    """Horner's rule as Cephes' polevl (or p1evl, whose leading coefficient is 1), step for step."""
    if leading_one:
        total = x + coefficients[0]
    else:
        total = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        total = total * x + c
    return total


def normal_quantiles(q: np.ndarray) -> np.ndarray:
    """``scipy.special.ndtri(q)`` (the standard normal quantile) for ``q`` strictly between 0
    and 1 or NaN, bit for bit: the same polynomials in the same order, and the C library's
    ``log`` per tail value (numpy's vectorized log may round differently)."""
    q = np.asarray(q, dtype=np.float64)
    out = np.full(q.shape, np.nan)
    upper = q > 1.0 - _EXP_MINUS_2
    y = np.where(upper, 1.0 - q, q)
    central = y > _EXP_MINUS_2
    yc = y[central] - 0.5
    y2 = yc * yc
    out[central] = (yc + yc * (y2 * _polevl(y2, _NDTRI_P0) / _polevl(y2, _NDTRI_Q0, True))) * _S2PI
    tail = ~central  # NaN too: it goes through the tail arithmetic as in Cephes
    if tail.any():
        x = np.sqrt(np.array([-2.0 * math.log(v) for v in y[tail].tolist()]))
        x0 = x - np.array([math.log(v) for v in x.tolist()]) / x
        z = 1.0 / x
        near = x < 8.0
        x1 = np.where(near, z * _polevl(z, _NDTRI_P1) / _polevl(z, _NDTRI_Q1, True),
                      z * _polevl(z, _NDTRI_P2) / _polevl(z, _NDTRI_Q2, True))
        out[tail] = np.where(upper[tail], x0 - x1, -(x0 - x1))
    return out
