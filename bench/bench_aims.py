"""Absolute aims on millions of rows, each in a fresh process: time and peak memory.

Run from the repository root: ``.venv/bin/python bench/bench_aims.py [--repeats N]`` (3 runs of
each by default, about 10 minutes on a 2-core machine). Writes the section ``aims`` of ``docs/performance.md``.

* MDAV on 1,000,000 x 15 standard Gaussian rows, k = 10 (aim: under 60 s);
* MDAV* on 1,000,000 x 3 Adult-like rows (Adult's age, education-num, hours-per-week drawn
  with replacement), k = 2, the paper's Adult setting and the slowest k (aim: under 120 s);
* MONA_0.4 on 10,000,000 x 13 standard Gaussian rows, k = 10 (aim: under 5 minutes in 24 GiB).

Each run is the estimator's ``fit`` (validation, standardization, kernel, centroids, IL) after a
warm-up on 2,000 rows; peak memory is the process's peak resident set (``VmHWM``), data included.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DOCS,
    fmt_s,
    hand_back,
    load_adult,
    machine_line,
    md_table,
    now_utc,
    proc_status,
    run_child,
    update_section,
)

AIMS = [
    # (key, label, data, k, aim seconds)
    ("mdav", "MDAV", "1,000,000 x 15 Gaussian", 10, 60.0),
    ("mdav-star", "MDAV*", "1,000,000 x 3 Adult-like", 2, 120.0),
    ("mona", "MONA_0.4", "10,000,000 x 13 Gaussian", 10, 300.0),
]


def _data(key: str) -> np.ndarray:
    if key == "mdav":
        return np.random.default_rng(0).standard_normal((1_000_000, 15))
    if key == "mdav-star":
        adult = load_adult()
        return adult[np.random.default_rng(0).integers(0, len(adult), 1_000_000)]
    return np.random.default_rng(0).standard_normal((10_000_000, 13))


def _one(key: str) -> None:
    from incrowd import MDAV, MONA, MDAVStar

    make = {"mdav": lambda: MDAV(10), "mdav-star": lambda: MDAVStar(2), "mona": lambda: MONA(10, rho=0.4)}[key]
    make().fit(np.random.default_rng(1).standard_normal((2000, 3 if key == "mdav-star" else 13)))
    X = _data(key)
    t0 = time.perf_counter()
    est = make().fit(X)
    seconds = time.perf_counter() - t0
    peak = proc_status("VmHWM")
    hand_back({"seconds": seconds, "peak": peak, "il": est.information_loss_, "groups": est.n_groups_,
              "min": int(est.group_sizes_.min()), "input": X.nbytes})


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        _one(sys.argv[2])
        return
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
    t_start = time.perf_counter()
    rows = []
    for key, label, data, k, aim in AIMS:
        runs = [run_child(__file__, key) for _ in range(repeats)]
        seconds = sorted(r["seconds"] for r in runs)
        mid = float(np.median(seconds))
        got = runs[-1]
        rows.append([label, data, k, fmt_s(mid), f"{fmt_s(seconds[0])} .. {fmt_s(seconds[-1])}", fmt_s(aim),
                     "met" if mid < aim else "**not met**", f"{max(r['peak'] for r in runs) / 2**30:.2f} GiB",
                     f"{got['input'] / 2**30:.2f} GiB", f"{100 * got['il']:.4f}", f"{got['groups']:,}", got["min"]])
        print(rows[-1], flush=True)
    table = md_table(["method", "data", "k", f"time (median of {repeats})", "range", "aim", "", "peak memory", "input",
                      "IL %", "groups", "smallest group"], rows, align="llrrrrlrrrrr")
    body = f"""## Absolute aims: time and peak memory on millions of rows

Written by `bench/bench_aims.py` on {now_utc()} ({(time.perf_counter() - t_start) / 60:.1f} min).
Machine: {machine_line()}. Each run is one `fit` of the estimator in a fresh process after a
warm-up (validation, standardization, kernel, centroids and IL included; data generation not
timed); peak memory is the process's peak resident set, the data included. Adult-like rows are
Adult's (age, education-num, hours-per-week) drawn with replacement (`default_rng(0)`).

{table}
"""
    update_section(DOCS / "performance.md", "aims", body, "Performance")
    print(body)


if __name__ == "__main__":
    main()
