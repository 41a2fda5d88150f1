"""Peak memory per row of the microaggregation kernels and estimators.

Run from the repository root: ``.venv/bin/python bench/bench_memory.py`` (about 3 minutes).
Writes the section ``memory`` of ``docs/performance.md``.

Each case runs in a fresh process: the data are generated and the kernels loaded (a warm-up on
2,000 rows), the kernel's peak-RSS counter is reset (``/proc/self/clear_refs``), one call runs,
and the growth of the peak resident set over the resident set before the call, divided by n, is
the bytes per row the call needed beyond its input. The input itself is 8 bytes per column.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DOCS, hand_back, machine_line, md_table, now_utc, proc_status, run_child, update_section  # noqa: E402

CASES = [
    # (label, what runs, n, columns)
    ("MDAV fast kernel `mdav_fast_labels`", "mdav-kernel", 400_000, 15),
    ("`MDAV(10).fit`", "mdav", 400_000, 15),
    ("MDAV plain scan kernel `mdav_labels`", "mdav-plain", 400_000, 15),
    ("MDAV* grid kernel `mdav_star_fast_labels`", "mdav-star-kernel", 1_000_000, 3),
    ("`MDAVStar(10).fit` (3 columns: grid)", "mdav-star", 1_000_000, 3),
    ("`MONA(10, rho=0.5).fit`", "mona", 2_000_000, 13),
    ("`MondrianV(10).fit`", "mondrian-v", 2_000_000, 13),
]


def _runner(what: str):
    from incrowd import MDAV, MONA, MDAVStar, MondrianV
    from incrowd.cli._bench_entry import mdav_fast_labels
    from incrowd.cli._bench_entry import mdav_labels
    from incrowd.cli._bench_entry import mdav_star_fast_labels

    return {
        "mdav-kernel": lambda X: mdav_fast_labels(X, 10),
        "mdav": lambda X: MDAV(10).fit(X),
        "mdav-plain": lambda X: mdav_labels(X, 10),
        "mdav-star-kernel": lambda X: mdav_star_fast_labels(X, 10),
        "mdav-star": lambda X: MDAVStar(10).fit(X),
        "mona": lambda X: MONA(10, rho=0.5).fit(X),
        "mondrian-v": lambda X: MondrianV(10).fit(X),
    }[what]


def _one(what: str, n: int, m: int) -> None:
    run = _runner(what)
    run(np.random.default_rng(1).standard_normal((2000, m)))
    X = np.random.default_rng(0).standard_normal((n, m))
    if what.endswith("kernel") or what == "mdav-plain":
        X = np.ascontiguousarray(X)
    with open("/proc/self/clear_refs", "w", encoding="utf-8") as fh:
        fh.write("5")  # reset the peak RSS to the current RSS
    before = proc_status("VmRSS")
    t0 = time.perf_counter()
    run(X)
    seconds = time.perf_counter() - t0
    peak = proc_status("VmHWM")
    hand_back({"before": before, "peak": peak, "seconds": seconds})


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        _one(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    t_start = time.perf_counter()
    rows = []
    for label, what, n, m in CASES:
        got = run_child(__file__, what, n, m)
        extra = (got["peak"] - got["before"]) / n
        rows.append([label, f"{n:,} x {m}", f"{8 * m}", f"{extra:.0f}", f"{extra / (8 * m):.2f}",
                     f"{got['seconds']:.1f} s"])
        print(rows[-1], flush=True)
    table = md_table(["call", "data", "input bytes/row", "extra peak bytes/row", "extra / input", "time"],
                     rows, align="lrrrrr")
    body = f"""## Memory per row: the extra peak memory of each call

Written by `bench/bench_memory.py` on {now_utc()} ({(time.perf_counter() - t_start) / 60:.1f} min).
Machine: {machine_line()}. Data: standard Gaussian rows (`default_rng(0)`), k = 10. Each call runs
in a fresh process after a warm-up; "extra peak" is the growth of the peak resident set during
the call over the resident set before it (the input already counted there), per row.

{table}

Where the bytes go (15 columns, fast MDAV kernel): 16-bit codes for the columns padded to an
even count (32) and their squared norms (4), the candidate buffers (16, reserved for the worst
case and touched only as far as candidates come, which is why the total is under the sum), slot
and row maps and flags (18), the radius order and radii (16), the labels (8) and the P
candidates (8); no n x n or n x m float64 copy. The estimators add the standardized copy of the
input (8 per column) and the published centroids (8 per column); the plain scan kernel keeps a
column-major float64 copy (8 per column) and a distance vector (8).
"""
    update_section(DOCS / "performance.md", "memory", body, "Performance")
    print(body)


if __name__ == "__main__":
    main()
