"""incrowd's exact MDAV against sdcMicro's, side by side in one run on the same data.

Run from the repository root (sdcMicro built first with ``bash ../shared/peers/sdcMicro/build.sh
LIBDIR``)::

    .venv/bin/python bench/bench_sdcmicro.py --rlib LIBDIR

Writes the section ``sdcmicro`` of ``docs/performance.md`` (``--quick``: fewer cells, printed
only, so a quick check never replaces the full table). It measures whatever incrowd is imported
(``PYTHONPATH`` or the installed package), so it can be rerun as the code changes.

Three persistent worker processes, started once and fed one command per timed call, so neither
side pays start-up, imports or data loading inside a timing:

* incrowd, threads: ``MDAV(k).fit(X)`` in a Python process with numba's default thread count;
* incrowd, 1 thread: the same in a second Python process started with ``NUMBA_NUM_THREADS=1``;
* sdcMicro: ``sdcMicro:::mdav(x, variables = NULL, weights = NULL, K = k, missing = -999)`` in one
  ``Rscript`` process, the call ``microaggregation(method = "mdav")`` makes for exact MDAV (it
  standardizes each column by its variance inside, as incrowd does; C++, one thread).

Each worker times only the call, inside itself (Python ``time.perf_counter``, R ``Sys.time``),
after a garbage collection, on data it loaded before. The incrowd workers fit every data set once
before any timing (numba compile and loading excluded); R is warmed on the first rows of each.
Repeats are interleaved (threads, 1 thread, sdcMicro, threads, ...). The groups come back to this
process (incrowd's labels; sdcMicro's published rows, grouped by equal rows) and incrowd's own
``information_loss`` (SSE/SST on standardized data) is computed on both; they must agree within
1e-9 relative. Conditions: idle (the machine as it is: other users may be running) and
contention (a Python busy loop started before the condition and killed after it, keeping one
core busy throughout).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DATA_NOTES,
    DOCS,
    Burner,
    OthersMeter,
    fmt_s,
    gaussian,
    load,
    machine_line,
    md_table,
    median,
    now_utc,
    same_groups,
    update_section,
)

SECTION = "sdcmicro"
IL_RTOL = 1e-9
SIDES = ("threads", "one", "sdcmicro")

R_WORKER = r"""
args <- commandArgs(trailingOnly = TRUE)
.libPaths(c(args[1], .libPaths()))
suppressMessages(library(sdcMicro))
con <- file("stdin", "r")
cat(sprintf("ready\t%s\t%s\n", R.version.string, as.character(packageVersion("sdcMicro"))))
flush(stdout())
cache <- list()
repeat {
  line <- readLines(con, n = 1)
  if (length(line) == 0 || line == "quit") break
  f <- strsplit(line, "\t")[[1]]
  # fit <data file> <rows> <cols> <k> <out file> <rows to use>
  path <- f[2]; n <- as.integer(f[3]); m <- as.integer(f[4]); k <- as.integer(f[5])
  use <- as.integer(f[7])
  if (is.null(cache[[path]])) {
    cache[[path]] <- as.data.frame(matrix(readBin(path, "double", n * m), nrow = n, ncol = m))
  }
  x <- cache[[path]]
  if (use < n) x <- x[seq_len(use), , drop = FALSE]
  invisible(gc())
  t0 <- Sys.time()
  res <- sdcMicro:::mdav(x, variables = NULL, weights = NULL, K = k, missing = -999)
  el <- as.numeric(Sys.time()) - as.numeric(t0)
  writeBin(as.vector(as.matrix(res)), f[6])
  cat(sprintf("%.9f\n", el))
  flush(stdout())
}
"""


# ---------------------------------------------------------------------------------------------
# Workers


def python_worker() -> None:
    """``--worker``: fit MDAV on the commands read from stdin, one JSON line each way."""
    import numba

    from incrowd import MDAV

    cache: dict[str, np.ndarray] = {}
    print(json.dumps({"threads": numba.get_num_threads()}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            break
        X = cache.get(cmd["data"])
        if X is None:
            X = cache[cmd["data"]] = np.load(cmd["data"])
        gc.collect()
        t0 = time.perf_counter()
        est = MDAV(cmd["k"]).fit(X)
        seconds = time.perf_counter() - t0
        np.save(cmd["out"], est.labels_)
        print(json.dumps({"seconds": seconds, "threads": numba.get_num_threads()}), flush=True)


class PythonWorker:
    def __init__(self, threads_env: str | None):
        env = dict(os.environ)
        if threads_env is not None:
            env["NUMBA_NUM_THREADS"] = threads_env
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
        self.threads = json.loads(self._readline())["threads"]

    def _readline(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"incrowd worker {self.proc.pid} ended (exit {self.proc.wait()})")
        return line

    def fit(self, case: "Case", k: int, out: Path) -> tuple[float, np.ndarray]:
        self.proc.stdin.write(json.dumps({"op": "fit", "data": str(case.npy), "k": k, "out": str(out)}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self._readline())
        return reply["seconds"], np.load(out)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


class RWorker:
    def __init__(self, rlib: str, script: Path):
        self.proc = subprocess.Popen(["Rscript", str(script), rlib], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        ready = self._readline().rstrip("\n").split("\t")
        if ready[0] != "ready":
            raise SystemExit(f"Rscript said {ready!r} instead of ready")
        self.r_version, self.sdc_version = ready[1], ready[2]

    def _readline(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"Rscript {self.proc.pid} ended (exit {self.proc.wait()}); "
                             "is sdcMicro built into --rlib?")
        return line

    def fit(self, case: "Case", k: int, out: Path, rows: int | None = None) -> tuple[float, np.ndarray]:
        n, m = case.X.shape
        use = n if rows is None else rows
        self.proc.stdin.write(f"fit\t{case.raw}\t{n}\t{m}\t{k}\t{out}\t{use}\n")
        self.proc.stdin.flush()
        seconds = float(self._readline())
        published = np.fromfile(out, dtype=np.float64).reshape(m, use).T
        # Every row of a group is published as the group's mean; groups with equal means merge
        # here, which leaves SSE (and so the IL) unchanged.
        labels = np.unique(published, axis=0, return_inverse=True)[1].ravel()
        return seconds, labels

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


# ---------------------------------------------------------------------------------------------
# Data


class Case:
    def __init__(self, name: str, note: str, X: np.ndarray, folder: Path):
        self.name, self.note = name, note
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        if np.any(self.X == -999):  # sdcMicro reads -999 as missing: the two would not compare
            raise SystemExit(f"{name} holds -999, which sdcMicro treats as missing")
        slug = name.split()[0].lower() + str(len(X))
        self.npy = folder / f"{slug}.npy"
        self.raw = folder / f"{slug}.f64"
        np.save(self.npy, self.X)
        np.asfortranarray(self.X).ravel(order="F").tofile(self.raw)  # R fills matrices by column


def cases(quick: bool, folder: Path) -> list[Case]:
    out = []
    for name in (("census",) if quick else ("census", "tarragona", "eia")):
        out.append(Case(name.capitalize() if name != "eia" else "EIA", DATA_NOTES[name], load(name), folder))
    for n in ((10_000,) if quick else (10_000, 50_000)):
        out.append(Case(f"Gaussian {n:,} x 15", f"`default_rng(0).standard_normal(({n}, 15))`",
                        gaussian(n, 15, seed=0), folder))
    return out


# ---------------------------------------------------------------------------------------------
# Conditions


def run_condition(label: str, workers: dict, case_list: list[Case], ks: tuple[int, ...], repeats: int,
                  scratch: Path) -> list[dict]:
    from incrowd.microaggregation import information_loss

    rows = []
    for case in case_list:
        for k in ks:
            meter = OthersMeter([os.getpid(), Burner.pid] + [w.proc.pid for w in workers.values()])
            meter.start()
            times: dict[str, list[float]] = {s: [] for s in SIDES}
            labels: dict[str, np.ndarray] = {}
            for _ in range(repeats):
                for side in SIDES:
                    seconds, lab = workers[side].fit(case, k, scratch / f"out_{side}{'.bin' if side == 'sdcmicro' else '.npy'}")
                    times[side].append(seconds)
                    labels[side] = lab
            il = {s: information_loss(case.X, labels[s]) for s in SIDES}
            il_rel = max(abs(il[s] - il["threads"]) for s in SIDES) / max(il["threads"], 1e-300)
            row = {
                "condition": label, "data": case.name, "n": case.X.shape[0], "m": case.X.shape[1], "k": k,
                "times": times, "il": il["threads"], "il_rel": il_rel, "il_equal": il_rel <= IL_RTOL,
                "same_groups_incrowd": same_groups(labels["threads"], labels["one"]),
                "same_groups_sdc": same_groups(labels["threads"], labels["sdcmicro"]),
                "others_cores": meter.cores_busy(), "loadavg": os.getloadavg()[0],
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


# ---------------------------------------------------------------------------------------------
# Report


def _spread(values: list[float]) -> str:
    return f"{fmt_s(median(values))} ({fmt_s(max(values))})"


def _ratio(sdc: list[float], ours: list[float]) -> float:
    return median(sdc) / median(ours)


def _x(ratio: float) -> str:
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


def table(rows: list[dict], threads: int) -> str:
    out = []
    for r in rows:
        t = r["times"]
        out.append([
            r["data"], r["k"], _spread(t["threads"]), _spread(t["one"]), _spread(t["sdcmicro"]),
            f"**{_x(_ratio(t['sdcmicro'], t['threads']))}**", f"**{_x(_ratio(t['sdcmicro'], t['one']))}**",
            f"{100 * r['il']:.4f}", "yes" if r["il_equal"] else f"**NO** ({r['il_rel']:.1e})",
            f"{r['others_cores']:.2f}",
        ])
    return md_table(["data", "k", f"incrowd, {threads} threads", "incrowd, 1 thread", "sdcMicro",
                     "ratio sdcMicro / threads", "ratio sdcMicro / 1 thread", "IL %", "IL equal",
                     "others' cores"], out, align="lrrrrrrrcr")


def ratio_range(rows: list[dict], side: str) -> str:
    ratios = [_ratio(r["times"]["sdcmicro"], r["times"][side]) for r in rows]
    lo, hi = min(ratios), max(ratios)
    return f"{_x(lo)[:-1]}-{_x(hi)}"


def summary(rows: list[dict], threads: int) -> str:
    """One line: the ratio ranges over all cells and over the largest data set's cells (the ones
    that measure the algorithm rather than per-call costs)."""
    largest = max(r["n"] for r in rows)
    big = [r for r in rows if r["n"] == largest]
    name = big[0]["data"]
    return (f"sdcMicro / incrowd: **{ratio_range(big, 'threads')}** with {threads} threads and "
            f"**{ratio_range(big, 'one')}** on one thread on {name} (k = {', '.join(str(r['k']) for r in big)}); "
            f"{ratio_range(rows, 'threads')} and {ratio_range(rows, 'one')} over all cells.")


def _differ(rows: list[dict]) -> str:
    cells: dict[str, list[int]] = {}
    for r in rows:
        if r["k"] not in cells.setdefault(r["data"], []):
            cells[r["data"]].append(r["k"])
    if not cells:
        return ""
    return " (differing: " + "; ".join(f"{d} k = {', '.join(map(str, sorted(ks)))}" for d, ks in cells.items()) + ")"


def incrowd_commit() -> str:
    import incrowd

    where = Path(incrowd.__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(where), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        # Only the package's own files: an edited bench script does not change what is measured.
        dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no", "--", "."],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{getattr(incrowd, '__version__', '?')} (not a git checkout)"
    return f"{getattr(incrowd, '__version__', '?')}, commit {head}" + (" with local changes" if dirty else "")


def report(results: dict[str, list[dict]], meta: dict) -> str:
    threads = meta["threads"]
    parts = [f"""## incrowd against sdcMicro, measured side by side

Written by `bench/bench_sdcmicro.py` on {meta['date']} ({meta['minutes']:.1f} min); rerun with
`.venv/bin/python bench/bench_sdcmicro.py --rlib LIBDIR` after building sdcMicro into LIBDIR with
`bash ../shared/peers/sdcMicro/build.sh LIBDIR`.
Machine: {machine_line()}. {meta['r_version']}, sdcMicro {meta['sdc_version']} (built from its CRAN
source by `../shared/peers/sdcMicro/build.sh`); incrowd {meta['commit']}.

Method: exact MDAV on both sides, on the same rows in the same run. incrowd: `MDAV(k).fit(X)`
(validation, standardization, groups, centroids and IL), in a worker process with numba's
default {threads} threads and in a second worker started with `NUMBA_NUM_THREADS=1`, both warm
(each data set fitted once before any timing, so no compile time is included). sdcMicro:
`sdcMicro:::mdav(x, K = k)`, the call `microaggregation(method = "mdav")` makes (it also
standardizes inside and returns the group means), in one persistent `Rscript` process (C++, one
thread). Each side times only that call inside its own process (no start-up, import or data
loading). Both incrowd workers are long-lived processes that have fitted before, as in a server or
a notebook, so what incrowd adapts within a process (its choice of threads) carries over from one
call to the next. {meta['repeats']} repeats per cell, interleaved (incrowd threads, incrowd 1 thread,
sdcMicro, then again); cells show the median and, in brackets, the worst repeat; the ratios are
sdcMicro's median over incrowd's median from the same run. "IL equal": incrowd's own
`information_loss` (SSE/SST on standardized data) on incrowd's groups and on sdcMicro's agrees
within {IL_RTOL:g} relative.

Data: {'; '.join(meta['data_notes'])}.

This {meta['cores']}-core machine is shared with other work sessions (tests, builds, other benches), so
"idle" means no load started by this script, not a quiet machine: the last column, "others'
cores", is how many cores other processes kept busy on average while the cell ran (from
/proc/stat, less this script's own processes and its burner). "One core busy" adds a Python busy
loop in its own process for the whole condition.""" + (f"""
Idle condition: the machine was {meta['others_idle']}.""" if meta["others_idle"] else "")]
    titles = {"idle": "Idle (no load added by this script)",
              "contention": "One core busy (a CPU burner process beside both)"}
    for cond, rows in results.items():
        parts.append(f"""### {titles[cond]}

{table(rows, threads)}

{titles[cond].split(" (")[0]}: {summary(rows, threads)}""")
    parts.append(f"""Groups: incrowd with threads and on one thread gave the same groups in
{meta['same_incrowd']} of {meta['cells']} cells; sdcMicro's groups equal incrowd's in
{meta['same_sdc']} of {meta['cells']}{meta['differ_sdc']} (they may differ where identical rows tie:
sdcMicro takes the later row, incrowd the lowest index, with the same IL). The smallest files take
milliseconds, where fixed costs per call (R's data.frame handling, incrowd's validation and IL)
weigh more than the algorithm and one scheduler time slice lost to another process (about 10 ms)
can multiply a repeat; the 50,000-row cells measure the algorithm.""")
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------------------------


def _terminate(signum, _frame):
    # SystemExit runs the finally blocks: workers closed, the burner killed.
    raise SystemExit(128 + signum)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rlib", default=os.environ.get("INCROWD_RLIB",
                                                         str(Path.home() / ".local/share/incrowd-peers/Rlib")),
                        help="R library folder holding sdcMicro (build.sh's argument)")
    parser.add_argument("--quick", action="store_true",
                        help="Census and Gaussian 10,000 x 15 at k = 3 and 10; prints, writes nothing")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed calls per side and cell, interleaved (default 5; 3 with --quick)")
    parser.add_argument("--conditions", default="idle,contention",
                        help="comma-separated: idle, contention")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        python_worker()
        return
    if args.repeats is None:
        args.repeats = 3 if args.quick else 5
    if args.repeats < 3:
        parser.error("--repeats must be at least 3")
    conditions = [c.strip() for c in args.conditions.split(",") if c.strip()]
    for c in conditions:
        if c not in ("idle", "contention"):
            parser.error(f"--conditions: unknown condition {c!r}")
    ks = (3, 10) if args.quick else (3, 5, 10)
    signal.signal(signal.SIGTERM, _terminate)
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_sdcmicro_") as tmp:
        scratch = Path(tmp)
        script = scratch / "worker.R"
        script.write_text(R_WORKER, encoding="utf-8")
        case_list = cases(args.quick, scratch)
        workers = {"threads": PythonWorker(None), "one": PythonWorker("1"), "sdcmicro": RWorker(args.rlib, script)}
        try:
            if workers["one"].threads != 1:
                raise SystemExit(f"the 1-thread worker runs {workers['one'].threads} threads")
            for case in case_list:  # warm: numba compile and loading, R's first call
                for side in ("threads", "one"):
                    workers[side].fit(case, 3, scratch / "warm.npy")
                workers["sdcmicro"].fit(case, 3, scratch / "warm.bin", rows=min(200, len(case.X)))
            results = {}
            for cond in conditions:
                if cond == "idle":
                    results[cond] = run_condition(cond, workers, case_list, ks, args.repeats, scratch)
                else:
                    with Burner():
                        results[cond] = run_condition(cond, workers, case_list, ks, args.repeats, scratch)
        finally:
            for w in workers.values():
                w.close()
    all_rows = [r for rows in results.values() for r in rows]
    others = [r["others_cores"] for r in results.get("idle", [])]
    meta = {
        "date": now_utc(), "minutes": (time.perf_counter() - t_start) / 60, "threads": workers["threads"].threads,
        "r_version": workers["sdcmicro"].r_version, "sdc_version": workers["sdcmicro"].sdc_version,
        "commit": incrowd_commit(), "repeats": args.repeats,
        "data_notes": [f"{c.name} ({c.note})" if c.name.startswith("Gaussian") else c.note for c in case_list],
        "others_idle": (f"{'quiet' if max(others) < 0.1 else 'not quiet'} (others kept {min(others):.2f}-"
                        f"{max(others):.2f} cores busy)" if others else ""),
        "cores": os.cpu_count(),
        "cells": len(all_rows), "same_incrowd": sum(r["same_groups_incrowd"] for r in all_rows),
        "same_sdc": sum(r["same_groups_sdc"] for r in all_rows),
        "differ_sdc": _differ([r for r in all_rows if not r["same_groups_sdc"]]),
    }
    body = report(results, meta)
    print(body)
    if not all(r["il_equal"] for r in all_rows):
        print("IL differs in some cells (see the table)", file=sys.stderr)
    if not args.quick:
        update_section(DOCS / "performance.md", SECTION, body, "Performance")
        print(f"wrote the section {SECTION} of {DOCS / 'performance.md'}")


if __name__ == "__main__":
    main()
