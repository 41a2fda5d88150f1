"""Timing: repeated runs, medians and quantiles, seconds as text."""

from __future__ import annotations

import statistics
import time
from typing import Callable

import numpy as np


def time_runs(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> tuple[list[float], object]:
    """Wall times of ``repeats`` calls after ``warmup`` untimed calls, and the last result."""
    result = None
    for _ in range(warmup):
        result = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def timed_kernel(fn: Callable, Z: np.ndarray, k: int, repeats: int = 3) -> tuple[float, object]:
    """Median wall time of ``fn(Z, k)`` over ``repeats`` calls after a warm-up on at most 500 rows
    (numba loading), and the last result."""
    fn(Z[: min(len(Z), 500)], k)
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(Z, k)
        times.append(time.perf_counter() - t0)
    return median(times), out


def median(values: list[float]) -> float:
    return float(np.median(values))


def quantile(values: list[float], q: float) -> float:
    """The q-quantile (q in hundredths) of ``values``, linear between the samples."""
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


def fmt_s(seconds: float) -> str:
    if seconds >= 100:
        return f"{seconds:.0f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 0.01:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds * 1000:.2f} ms"


def fmt_range(times: list[float]) -> str:
    """The fastest and the slowest of ``times``, as "min – max"."""
    return f"{fmt_s(min(times))} – {fmt_s(max(times))}"
