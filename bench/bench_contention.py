"""Parallel kernels on a shared machine: each one idle, beside a CPU burner, and as two processes
at once, with threads as shipped (adaptive), always on (the behaviour before the adaptive
choice) and off (``NUMBA_NUM_THREADS=1``).

Every timed fit runs in a fresh worker process after one untimed warm-up fit on the same data
(compiling or loading the kernels and starting the thread pool are not timed). A condition's
figure is the median of all its fits, and its worst fit beside it, so a bad time slice shows.

    .venv/bin/python bench/bench_contention.py            # full run, writes docs/benchmarks.md
    .venv/bin/python bench/bench_contention.py --quick    # fewer repeats, prints only
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, Burner, fmt_s, hand_back, machine_line, md_table, median, now_utc, update_section  # noqa: E402

KERNELS = {
    "mdav-50k": "MDAV exact kernel (screened passes), Gaussian 50,000 x 15, k = 10",
    "mdav-200k": "MDAV exact kernel (screened passes), Gaussian 200,000 x 15, k = 10",
    "ona": "ONA, best of 16 runs, Census 1,080 x 13, k = 5 (as shipped: runs handed to Python threads one at a "
           "time; before: one parallel loop, the runs split in equal shares up front)",
}
MODES = {
    "adaptive": "threads as shipped (adaptive)",
    "always": "before: threads always (MDAV), equal shares (ONA)",
    "serial": "one thread (`NUMBA_NUM_THREADS=1`)",
}
CONDITIONS = ("idle", "burner", "two")


def _workload(kernel: str, mode: str):
    """A zero-argument fit for the worker, its warm-up done."""
    import numba
    import numpy as np

    if kernel.startswith("mdav"):
        from incrowd.microaggregation._adaptive import new_tuner
        from incrowd.microaggregation.mdav._mdav_fast import PARALLEL_FROM, mdav_fast_labels
        from incrowd.microaggregation.mdav._screen import PARALLEL_LOCK
        from incrowd.microaggregation.mdav.mdav import mdav_exact_labels

        n = 50_000 if kernel == "mdav-50k" else 200_000
        X = np.random.default_rng(0).standard_normal((n, 15))
        Z = (X - X.mean(axis=0)) / X.std(axis=0)
        if mode == "always":
            def fit():
                with PARALLEL_LOCK:
                    return mdav_fast_labels(Z, 10, PARALLEL_FROM, numba.get_num_threads(), False,
                                            new_tuner(force_threads=True))[0]
        else:
            def fit():
                return mdav_exact_labels(Z, 10)
    else:
        from incrowd.datasets import load_census
        from incrowd.microaggregation.ona._ona_kernel import ona_best_labels
        from incrowd.microaggregation.ona.ona import _best_of_runs, _use_tree

        X = np.asarray(load_census(), dtype=np.float64)
        Z = np.ascontiguousarray((X - X.mean(axis=0)) / X.std(axis=0))
        seeds = np.random.default_rng(0).integers(0, 2**63, size=16, dtype=np.uint64)
        tree = _use_tree(Z.shape[0], 5)
        if mode == "always":  # equal shares fixed up front, as before
            def fit():
                return ona_best_labels(Z, 5, 30, seeds, tree)[0]
        else:
            def fit():
                return _best_of_runs(Z, 5, 30, seeds, tree)[0]
    fit()
    return fit


def worker(kernel: str, mode: str, repeats: int) -> None:
    fit = _workload(kernel, mode)
    print("ready", flush=True)
    sys.stdin.readline()  # concurrent workers start their timed fits together
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fit()
        times.append(time.perf_counter() - t0)
    hand_back(times)


def _spawn(kernel: str, mode: str, repeats: int) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("NUMBA_NUM_THREADS", None)
    if mode == "serial":
        env["NUMBA_NUM_THREADS"] = "1"
    return subprocess.Popen([sys.executable, __file__, "--worker", kernel, mode, str(repeats)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)


def _collect(procs: list[subprocess.Popen]) -> list[float]:
    times: list[float] = []
    for p in procs:
        out = p.stdout.read()
        p.wait(timeout=1800)
        if p.returncode != 0:
            raise RuntimeError(f"worker failed with status {p.returncode}")
        times += json.loads(out.strip().splitlines()[-1])
    return times


def measure(kernel: str, mode: str, condition: str, processes: int, repeats: int) -> list[float]:
    """All fit times of one cell: ``processes`` worker processes (pairs for "two")."""
    times: list[float] = []
    for _ in range(processes):
        with Burner() if condition == "burner" else contextlib.nullcontext():
            # the warm-up (imports, cache loads) is not timed; the timed fits start together
            procs = [_spawn(kernel, mode, repeats) for _ in range(2 if condition == "two" else 1)]
            for p in procs:
                if p.stdout.readline().strip() != "ready":
                    raise RuntimeError("a worker failed during its warm-up")
            for p in procs:
                p.stdin.write("go\n")
                p.stdin.flush()
            times += _collect(procs)
    return times


def run(kernels: list[str], processes: int, repeats: int) -> dict:
    results: dict = {}
    for kernel in kernels:
        for condition in CONDITIONS:
            for mode in MODES:  # interleaved: the three modes of a condition one after another
                t = measure(kernel, mode, condition, processes, repeats)
                results[(kernel, mode, condition)] = t
                print(f"{kernel:10s} {mode:9s} {condition:7s} median {median(t):.3f} s  worst {max(t):.3f} s "
                      f"({len(t)} fits)", flush=True)
    return results


def render(results: dict, kernels: list[str], processes: int, repeats: int) -> str:
    rows = []
    for kernel in kernels:
        serial = {c: median(results[(kernel, "serial", c)]) for c in CONDITIONS}
        for mode in MODES:
            t = {c: results[(kernel, mode, c)] for c in CONDITIONS}
            idle = median(t["idle"])
            cells = [kernel, MODES[mode]]
            for c in CONDITIONS:
                cells.append(f"{fmt_s(median(t[c]))} (worst {fmt_s(max(t[c]))})")
            cells += [f"{median(t['burner']) / idle:.2f}x (worst {max(t['burner']) / idle:.1f}x)",
                      f"{median(t['two']) / idle:.2f}x (worst {max(t['two']) / idle:.1f}x)",
                      " / ".join(f"{median(t[c]) / serial[c]:.2f}" for c in CONDITIONS)]
            rows.append(cells)
    table = md_table(["kernel", "threads", "idle", "one core busy", "two processes at once",
                      "busy / idle", "two / idle", "/ serial (idle / busy / two)"], rows, "llrrrrrr")
    kinds = "\n".join(f"- `{k}`: {v}" for k, v in KERNELS.items() if k in kernels)
    fits = processes * repeats
    return f"""Generated by `bench/bench_contention.py` on {now_utc()}. Machine: {machine_line()}.

Each parallel kernel, idle, beside a CPU burner (a process spinning on one of the cores for the
whole cell), and as two processes running the same fit at once; threads as shipped (adaptive:
each MDAV pass is timed and the kernel goes serial while threaded passes lose; ONA hands runs to
the threads one at a time), as they were before (MDAV's passes always threaded, ONA's runs in
one parallel loop split in equal shares), and off. Each figure is the median of {fits} fits ({processes} fresh processes x {repeats} fits, pairs of
processes for "two processes", both timed), the worst fit beside it; warm-up fits untimed.
"busy / idle" and "two / idle" divide by the same row's idle median (aims: at most 2.5x and 3x);
"/ serial" divides by the one-thread row's median in the same condition (aim: at most 1.10).

{kinds}

{table}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", nargs=3, metavar=("KERNEL", "MODE", "REPEATS"), help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="fewer repeats; print only")
    ap.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated: " + ", ".join(KERNELS))
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if args.worker:
        kernel, mode, repeats = args.worker
        worker(kernel, mode, int(repeats))
        return
    kernels = [k for k in args.kernels.split(",") if k]
    processes, repeats = (1, 3) if args.quick else (args.processes, args.repeats)
    results = run(kernels, processes, repeats)
    text = render(results, kernels, processes, repeats)
    print(text)
    if not args.quick:
        update_section(REPO / "docs" / "benchmarks.md", "contention", text, "Benchmarks")


if __name__ == "__main__":
    main()
