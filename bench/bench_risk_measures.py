"""Seconds per disclosure-risk measure on n x p Gaussian data with a quick masked copy.

Run from the repository root: ``.venv/bin/python bench/bench_risk_measures.py [n] [p] [repeats]``
(default 1,000,000 x 15, 1 repeat). The masked copy replaces groups of 5 rows, consecutive
in the order of the row sums, by their means (a quick stand-in for MDAV k = 5). Prints a Markdown table (median and worst over the repeats);
the global (assignment) linkage is timed separately on its sampled path.
"""

from __future__ import annotations

import platform
import sys
import time

import numpy as np
import pandas as pd

from incrowd.cli._bench_entry import attribute_disclosure, class_risk, drisk, drisk_rmd, record_linkage


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    n -= n % 5
    p = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, p))
    order = np.argsort(x.sum(axis=1), kind="stable")
    xm = np.empty_like(x)
    xm[order] = np.repeat(x[order].reshape(-1, 5, p).mean(axis=1), 5, axis=0)
    cols = [f"q{j}" for j in range(p)]
    release = pd.DataFrame(xm, columns=cols)
    release["s"] = rng.choice(["a", "b", "c", "d"], n)
    original = release.copy()
    original[cols] = x
    measures = {
        "class_risk": lambda: class_risk(release[cols], k=5),
        "drisk": lambda: drisk(x, xm),
        "drisk_rmd": lambda: drisk_rmd(x, xm),
        "record_linkage (distance-based, 1000 of n sampled)": lambda: record_linkage(x, xm, global_linkage=False),
        "attribute_disclosure": lambda: attribute_disclosure(release, cols, ["s"], reference=original),
        "record_linkage (global, sampled 20 x 2000)": lambda: record_linkage(x[:5001], xm[:5001], max_assignment=5000, max_exact=0, distance_sample=2),
    }
    times = {name: [] for name in measures}
    results = {}
    for _ in range(repeats):
        for name, fn in measures.items():
            t = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t)
            print(f"{name}: {times[name][-1]:.2f} s", file=sys.stderr, flush=True)
    print(f"{n:,} x {p} Gaussian, masked by groups of 5 (row-sum order); {repeats} repeat(s); "
          f"{platform.processor() or platform.machine()}, shared machine\n")
    print("| measure | median s | worst s |\n|---|---:|---:|")
    total = 0.0
    for name, ts in times.items():
        med = float(np.median(ts))
        if "global" not in name:
            total += med
        print(f"| {name} | {med:.2f} | {max(ts):.2f} |")
    print(f"| all but the global linkage | {total:.2f} | |")
    print("\nresults:", {k: v for k, v in results.items() if k != "attribute_disclosure"}, file=sys.stderr)


if __name__ == "__main__":
    main()
