"""Scaling exponents of MDAV, MDAV*, ONA*, Mondrian V and MONA_0.5 (issue 8).

Run from the repository root: ``.venv/bin/python bench/bench_scaling.py [--budget SECONDS]``.
Each method runs on n = 10,000, 20,000, 40,000, ... standard Gaussian rows with 15 columns
(``numpy.random.default_rng(0)``), k = 10, one run per size after a small warm-up, and stops
after the first size whose run took longer than ``--budget`` (default 60 s; the issue's rule is
600 s) or when the next size would exceed ``--max-rows``. Writes the section ``scaling`` of
``docs/benchmarks.md`` and ``docs/figures/scaling.png`` (log-log, with the fitted exponents).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from incrowd import MDAV, MONA, MDAVStar, MondrianV, ONAStar  # noqa: E402

from _common import DOCS, FIGURES, fmt_s, machine_line, md_table, now_utc, update_section  # noqa: E402

METHODS = {
    "MDAV": lambda k: MDAV(k),
    "MDAV*": lambda k: MDAVStar(k),
    "ONA*": lambda k: ONAStar(k),
    "Mondrian V": lambda k: MondrianV(k),
    "MONA_0.5": lambda k: MONA(k, rho=0.5),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--max-rows", type=int, default=10_240_000)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    t_start = time.perf_counter()
    results: dict[str, list[tuple[int, float]]] = {}
    for name, make in METHODS.items():
        make(args.k).fit(np.random.default_rng(1).standard_normal((2000, 15)))  # load the kernels
        points = []
        n = 10_000
        while n <= args.max_rows:
            X = np.random.default_rng(0).standard_normal((n, 15))
            t0 = time.perf_counter()
            make(args.k).fit(X)
            seconds = time.perf_counter() - t0
            points.append((n, seconds))
            print(name, n, f"{seconds:.2f}s", flush=True)
            if seconds > args.budget:
                break
            n *= 2
        results[name] = points
    rows = []
    for name, points in results.items():
        ns = np.array([p[0] for p in points], float)
        ts = np.array([p[1] for p in points])
        slope = float(np.polyfit(np.log(ns), np.log(ts), 1)[0]) if len(points) > 1 else float("nan")
        tail = float(np.polyfit(np.log(ns[-3:]), np.log(ts[-3:]), 1)[0]) if len(points) > 2 else float("nan")
        rows.append([name, f"{int(ns[0]):,} .. {int(ns[-1]):,}", fmt_s(ts[-1]), f"{slope:.2f}", f"{tail:.2f}"])
    table = md_table(["method", "n", "time at the largest n", "exponent (all sizes)", "exponent (last 3)"],
                     rows, align="lrrrr")
    sizes = sorted({p[0] for pts in results.values() for p in pts})
    detail_rows = [[f"{n:,}"] + [next((fmt_s(t) for m, t in results[name] if m == n), "—") for name in results]
                   for n in sizes]
    detail = md_table(["n", *results], detail_rows, align="r" * (1 + len(results)))
    png = _plot(results)
    body = f"""## Scaling exponents (issue 8)

Written by `bench/bench_scaling.py` on {now_utc()} ({(time.perf_counter() - t_start) / 60:.1f} min).
Machine: {machine_line()}. Data: n x 15 standard Gaussian rows (`default_rng(0)`), k = {args.k};
one run per size; a method stops after the first run over {args.budget:.0f} s (the issue asks for
the largest n that finishes in 10 minutes: `--budget 600`, not run here yet).

{table}

{detail}

![time against n, log-log](figures/{png.name})
"""
    update_section(DOCS / "benchmarks.md", "scaling", body, "Benchmarks")
    print(body)


def _plot(results) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for name, points in results.items():
        ns = np.array([p[0] for p in points], float)
        ts = np.array([p[1] for p in points])
        slope = np.polyfit(np.log(ns), np.log(ts), 1)[0] if len(points) > 1 else float("nan")
        ax.loglog(ns, ts, marker="o", label=f"{name} (exponent {slope:.2f})")
    ax.set_xlabel("rows n (15 Gaussian columns)")
    ax.set_ylabel("seconds")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    FIGURES.mkdir(parents=True, exist_ok=True)
    png = FIGURES / "scaling.png"
    fig.savefig(png, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return png


if __name__ == "__main__":
    main()
