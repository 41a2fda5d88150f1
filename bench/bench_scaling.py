"""Scaling exponents of MDAV, MDAV*, ONA*, Mondrian V and MONA_0.5.

Run from the repository root: ``.venv/bin/python bench/bench_scaling.py [--budget SECONDS]``.
Each method runs on n = 10,000, 20,000, 40,000, ... standard Gaussian rows with 15 columns
(``numpy.random.default_rng(0)``), k = 10, one run per size after a small warm-up, each in its
own process killed at ``--budget`` seconds (default 600: the largest n that
finishes in 10 minutes counts), and stops at the first size that does not finish in the budget or when
the next size would exceed ``--max-rows`` (memory: 40,960,000 x 15 float64 is 4.9 GB before the
copies a fit makes). ``--methods`` reruns some methods and keeps the others' rows. Writes the section ``scaling`` of
``docs/performance.md`` and ``docs/figures/scaling.png`` (log-log, with the fitted exponents).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from incrowd import MDAV, MONA, MDAVStar, MondrianV, ONAStar  # noqa: E402

from _common import (  # noqa: E402
    DOCS,
    FIGURES,
    fmt_s,
    hand_back,
    machine_line,
    md_table,
    now_utc,
    pyplot,
    run_child,
    save_figure,
    update_section,
)

METHODS = {
    "MDAV": lambda k: MDAV(k),
    "MDAV*": lambda k: MDAVStar(k),
    "ONA*": lambda k: ONAStar(k),
    "Mondrian V": lambda k: MondrianV(k),
    "MONA_0.5": lambda k: MONA(k, rho=0.5),
}


RESULTS = Path(__file__).resolve().parent / "results" / "scaling.json"


#: the warm-up fit's rows: enough to reach the kernels a large fit uses (ONA*'s blocked passes
#: from 3,200 rows, MDAV*'s one-byte codes from 64,000), so that no timed fit compiles
WARM_ROWS = 70_000


def _one(name: str, n: int, k: int) -> None:
    """Child process: warm the kernels, time one fit, print the seconds as JSON."""
    METHODS[name](k).fit(np.random.default_rng(1).standard_normal((min(n, WARM_ROWS), 15)))
    X = np.random.default_rng(0).standard_normal((n, 15))
    t0 = time.perf_counter()
    METHODS[name](k).fit(X)
    hand_back({"seconds": time.perf_counter() - t0})


def _timed(name: str, n: int, k: int, budget: float) -> float | None:
    """Seconds of one fit in a fresh process, or None when it did not finish within the budget
    (the process is killed: its data generation and warm-up get a 60 s allowance on top)."""
    try:
        seconds = run_child(__file__, name, n, k, timeout=budget + 60)["seconds"]
    except subprocess.TimeoutExpired:
        return None
    return seconds if seconds <= budget else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=600.0)
    parser.add_argument("--max-rows", type=int, default=40_960_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--methods", nargs="*", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        _one(args.one[0], int(args.one[1]), int(args.one[2]))
        return
    t_start = time.perf_counter()
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results: dict[str, list[tuple[int, float]]] = {}
    over: dict[str, int] = {}
    predicted: dict[str, float] = {}
    for name in METHODS:
        if name not in args.methods:
            if name in saved:
                results[name] = [tuple(p) for p in saved[name]["points"]]
                over[name] = saved[name].get("over")
                if saved[name].get("predicted"):
                    predicted[name] = saved[name]["predicted"]
            continue
        points = []
        n = 10_000
        while n <= args.max_rows:
            if len(points) >= 2:
                # the last doubling's growth, carried one more doubling: a run predicted to take
                # over 1.5 times the budget is not started (it would only be killed)
                growth = points[-1][1] / points[-2][1]
                if points[-1][1] * growth > 1.5 * args.budget:
                    print(name, n, f"predicted {points[-1][1] * growth:.0f}s, not run", flush=True)
                    over[name] = n
                    predicted[name] = points[-1][1] * growth
                    break
            seconds = _timed(name, n, args.k, args.budget)
            print(name, n, "over budget" if seconds is None else f"{seconds:.2f}s", flush=True)
            if seconds is None:
                over[name] = n
                break
            points.append((n, seconds))
            n *= 2
        results[name] = points
        saved[name] = {"points": points, "over": over.get(name), "predicted": predicted.get(name), "k": args.k, "budget": args.budget,
                       "when": now_utc(), "machine": machine_line()}
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(saved, indent=1))
    rows = []
    for name, points in results.items():
        ns = np.array([p[0] for p in points], float)
        ts = np.array([p[1] for p in points])
        slope = float(np.polyfit(np.log(ns), np.log(ts), 1)[0]) if len(points) > 1 else float("nan")
        tail = float(np.polyfit(np.log(ns[-3:]), np.log(ts[-3:]), 1)[0]) if len(points) > 2 else float("nan")
        stop = f"row cap {args.max_rows:,}"
        if over.get(name):
            stop = (f"{over[name]:,}: ~{fmt_s(predicted[name])} predicted" if name in predicted
                    else f"{over[name]:,} > {args.budget:.0f} s")
        when = saved.get(name, {}).get("when", now_utc())
        rows.append([name, f"{int(ns[0]):,} .. {int(ns[-1]):,}", fmt_s(ts[-1]), stop, f"{slope:.2f}",
                     f"{tail:.2f}", when])
    table = md_table(["method", "n (finished)", "time at the largest n", "stopped at",
                      "exponent (all sizes)", "exponent (last 3)", "measured"], rows, align="lrrlrrl")
    machines = sorted({saved[name]["machine"] for name in results if saved.get(name, {}).get("machine")})
    sizes = sorted({p[0] for pts in results.values() for p in pts} | {v for v in over.values() if v})

    def cell(name: str, n: int) -> str:
        if over.get(name) == n:
            return f"~{fmt_s(predicted[name])} predicted" if name in predicted else f"> {args.budget:.0f} s"
        return next((fmt_s(t) for m, t in results[name] if m == n), "—")

    detail_rows = [[f"{n:,}"] + [cell(name, n) for name in results] for n in sizes]
    detail = md_table(["n", *results], detail_rows, align="r" * (1 + len(results)))
    png = _plot(results)
    notes = "".join(f"\n- {name}: {saved[name]['note']}." for name in results if saved.get(name, {}).get("note"))
    notes = f"\nNotes:{notes}\n" if notes else ""
    body = f"""## Scaling exponents: how the time of each method grows with n

Written by `bench/bench_scaling.py` on {now_utc()} ({(time.perf_counter() - t_start) / 60:.1f} min for
{", ".join(args.methods)}; the other rows are kept from the dates in the table).
Machine{"s" if len(machines) > 1 else ""}: {"; ".join(machines) or machine_line()}.
Data: n x 15 standard Gaussian rows (`default_rng(0)`), k = {args.k};
one run per size in a fresh process (warm kernels: a warm-up fit on other rows first, min(n, {WARM_ROWS:,})
of them from 2026-11-27 on, 2,000 before; generation not timed); a method stops at the
first size that does not finish in {args.budget:.0f} s (the process is killed), or before a size whose
time, carried from the last doubling, is predicted over 1.5 times the budget (not started), or at the
row cap of {args.max_rows:,} (memory). "Stopped at" names that size.

{table}
{notes}
{detail}

![time against n, log-log](figures/{png.name})
"""
    update_section(DOCS / "performance.md", "scaling", body, "Performance")
    print(body)


def _plot(results) -> Path:
    fig, ax = pyplot().subplots(figsize=(7, 5))
    for name, points in results.items():
        ns = np.array([p[0] for p in points], float)
        ts = np.array([p[1] for p in points])
        slope = np.polyfit(np.log(ns), np.log(ts), 1)[0] if len(points) > 1 else float("nan")
        ax.loglog(ns, ts, marker="o", label=f"{name} (exponent {slope:.2f})")
    ax.set_xlabel("rows n (15 Gaussian columns)")
    ax.set_ylabel("seconds")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return save_figure(fig, FIGURES / "scaling.png", dpi=110, bbox_inches="tight")


if __name__ == "__main__":
    main()
