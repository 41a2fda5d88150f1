"""ONA* without a full search per question: equality with the reference kernel, what each
technique buys, the aims, and the scaling.

Run from the repository root: ``.venv/bin/python bench/bench_ona_star_fast.py [parts]`` with
parts among ``equality``, ``ablation``, ``aims``, ``scaling`` (all by default) and ``--big`` to
add the Gaussian 100,000 x 15 rows of the equality and ablation tables (the reference kernel takes
many minutes each). Writes the sections ``ona-star-*`` of ``docs/benchmarks.md``.

* **equality**: the fast kernel's groups, rounds and convergence against the reference kernel
  (``_ona_kernel.ona_star_labels``, one full search per question) on the benchmark files at
  k = 2, 3, 5, 10, both in one process after a warm-up, with their times.
* **ablation**: one technique added at a time, each step timed in one process, interleaved,
  median of 3: the reference; the MDAV* start from the fastest exact MDAV* kernel; rows
  remembering their neighbourhood; full searches vectorized over clusters; blocked passes; a
  shorter log walk; the float32 screen of the blocked passes; lists updated in blocks from the
  clusters changed since.
* **aims**: each run in a fresh process (median of 3): ``ONAStar(k).fit`` after a warm-up on
  2,000 rows, with the peak resident set per row.
* **scaling**: ``ONAStar(10).fit`` on n x 15 Gaussian rows, doubling n until a run passes
  ``--limit`` seconds (600 by default); the exponent is fitted on log-log.
* **mona10m**: ``MONA(10, rho=0.8).fit`` and ``MONA(10, rho=0.5).fit`` on 10,000,000 x 13
  Gaussian rows in one process (no Dask), one fresh process each (``--mona-repeats``, 1 by
  default: a run takes tens of minutes), with the IL of both.
* **side-by-side**: MONA's ONA* parts one after another (each on all threads) against side by
  side (each on one thread), taking turns in one process, with equal groups checked.
* **mona10m-dask**: ``incrowd.distributed.mona`` at rho = 0.8 on the same rows, on a local
  cluster of 2 worker processes, in one fresh process.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DATA_NOTES,
    DOCS,
    fmt_s,
    gaussian,
    hand_back,
    load,
    load_adult,
    machine_line,
    md_table,
    median,
    now_utc,
    proc_status,
    run_child,
    update_section,
)

SCRIPT = str(Path(__file__).resolve())
KS = (2, 3, 5, 10)
FILES = ("census", "tarragona", "eia", "cloud1", "cloud2", "adult", "credit")


def _matrix(name: str) -> np.ndarray:
    from incrowd._standardize import standardize

    if name == "credit":
        from _common import load_credit

        return standardize(load_credit())[0]
    if name.startswith("gauss"):
        return standardize(gaussian(int(name[5:]), 15))[0]
    return standardize(load(name))[0]


def _use_tree(Z: np.ndarray, k: int) -> bool:
    from incrowd.microaggregation.ona.ona import _use_tree_star

    return _use_tree_star(Z.shape[0], Z.shape[1], k)


def equality(big: bool) -> None:
    from incrowd._runtime._compile import compile_clock
    from incrowd.microaggregation._adaptive import new_tuner
    from incrowd.microaggregation.greedy._mdav_star_fast import mdav_star_best_labels
    from incrowd.microaggregation.ona._ona_kernel import ona_star_labels
    from incrowd.microaggregation.ona._ona_star_fast import ona_star_fast_kernel, ona_star_fast_labels

    warm = np.random.default_rng(1).standard_normal((300, 4))
    for tree in (False, True):
        ona_star_labels(warm, 3, 5, tree)
        ona_star_fast_labels(warm, 3, 5, tree)
    cases = [(f, k) for f in FILES for k in KS]
    if big:
        cases += [("gauss100000", 3), ("gauss100000", 10)]
    rows = []
    for name, k in cases:
        Z = np.ascontiguousarray(_matrix(name))
        tree = _use_tree(Z, k)
        # compile (or load) the kernels this shape takes (tree, grid start, threads) untimed
        head = np.ascontiguousarray(Z[: min(len(Z), 4000)])
        ona_star_labels(head, k, 3, tree)
        ona_star_fast_labels(head, k, 3, tree)
        # the threaded blocked pass too, which the tuner may first try inside a timed run
        ona_star_fast_kernel(head, k, 3, tree, mdav_star_best_labels(head, k), new_tuner(True))
        # a path the head did not take (a start kernel for more rows) may still compile: that
        # is not the kernel's time
        with compile_clock() as clock:
            t0 = time.perf_counter()
            ref = ona_star_labels(Z, k, 100, tree)
            t_ref = time.perf_counter() - t0 - clock.seconds
        with compile_clock() as clock:
            t0 = time.perf_counter()
            got = ona_star_fast_labels(Z, k, 100, tree)
            t_fast = time.perf_counter() - t0 - clock.seconds
        if clock.seconds:
            print(f"{name} k={k}: {clock.seconds:.2f} s of compiling taken out of the fast kernel's time")
        same = bool(np.array_equal(ref[0], got[0]))
        rows.append([_label(name, Z), k, "yes" if same else "**no**", "yes" if ref[1:] == got[1:] else "**no**",
                     int(ref[1]), fmt_s(t_ref), fmt_s(t_fast), f"{t_ref / t_fast:.1f}x"])
        print(rows[-1], flush=True)
    kept = [] if big else _kept_big_rows()
    body = "\n".join([
        f"- **Machine:** {machine_line()}. Measured {now_utc()}, while other work ran on the same cores.",
        *([f"- The Gaussian rows are kept from the last run with `--big` ({kept[0]})."] if kept else []),
        "- **Method:** ONA* (the paper's Algorithm 3, up to 100 rounds), the reference kernel and the fast "
        "kernel in one process after a warm-up, numba's compiling taken out; the tree search where incrowd "
        "uses it (4 columns or fewer, "
        "800 clusters or more). Same groups means identical labels, row for row.",
        "",
        md_table(["data", "k", "same groups", "same rounds and convergence", "rounds", "reference",
                  "fast", "ratio"], rows),
        *kept[1:],
    ])
    _section("ona-star-equality", body,
                   "ONA* fast kernel: the same groups as the reference kernel")


def _kept_big_rows() -> list[str]:
    """The Gaussian rows of the equality table now in the docs, after the date they were
    measured (empty when there are none), so a run on the files alone does not drop them."""
    text = (DOCS / "benchmarks.md").read_text()
    begin, end = "<!-- BEGIN ona-star-equality -->", "<!-- END ona-star-equality -->"
    if begin not in text:
        return []
    section = text[text.index(begin):text.index(end)]
    rows = [line for line in section.splitlines() if line.startswith("| Gaussian ")]
    when = next((line.split("Measured ", 1)[1].split(",")[0].rstrip(".") for line in section.splitlines()
                 if "Measured " in line), "an earlier run")
    if "kept from the last run" in section:  # carried before: keep the first date
        when = section.split("last run with `--big` (", 1)[1].split(")", 1)[0]
    return [when, *rows] if rows else []


def _label(name: str, Z: np.ndarray) -> str:
    if name.startswith("gauss"):
        return f"Gaussian {Z.shape[0]:,} x {Z.shape[1]}"
    if name == "credit":
        return f"Credit Card, {Z.shape[0]:,} x {Z.shape[1]}"
    return DATA_NOTES[name]


STEPS = [
    # (label, fast kernel?, fast start?, techniques, log divisor); techniques -1: the reference
    # kernel with the search incrowd chose before (the k-d tree from 800 clusters on, at any
    # column count)
    ("reference kernel as before (one full search per question, MDAV* start by the scan)", False, False, -1, 2),
    ("reference kernel, k-d tree only up to 4 columns", False, False, 0, 2),
    ("+ MDAV* start from the fastest exact MDAV* kernel", True, True, 0, 2),
    ("+ rows remember their neighbourhood (change log)", True, True, 1, 2),
    ("+ full searches vectorized over clusters", True, True, 3, 2),
    ("+ lists made in blocked passes ahead of the questions (on 2 threads when the tuner finds them faster)",
     True, True, 7, 2),
    ("+ a question walks at most nc / 16 log entries, not nc / 2, before a full search", True, True, 7, 16),
    ("+ blocked passes screen in float32, then confirm in double", True, True, 15, 16),
    ("+ blocks of rows update their lists from the clusters changed since (screened in float32 like the "
     "blocked passes), and rows more than 32 log entries behind are updated so before their questions",
     True, True, 31, 16),
    ("+ the float32 screen sums the columns in chunks of up to 8, each row's sum held in a register (not stored "
     "and reloaded after every column)", True, True, 63, 16),
    ("+ the float32 screen written out for the data's column count: |x|^2 + |c|^2 - 2 x.c, one multiply-add "
     "per column, two centroids at a time", True, True, 127, 16),
    ("+ a blocked pass walks the change log once for all its blocks (each block's changed clusters are then a "
     "suffix of that walk), not once per block", True, True, 255, 16),
]
#: the steps timed at 100,000 rows, where the reference kernel takes many minutes a run
BIG_FROM = 3


def _time_step(Z, k, tree, old_tree, step) -> float:
    from incrowd.microaggregation.ona._ona_kernel import ona_star_labels
    from incrowd.microaggregation.ona._ona_star_fast import ona_star_fast_labels

    _, fast, start, tech, div = step
    t0 = time.perf_counter()
    if fast:
        ona_star_fast_labels(Z, k, 100, tree, techniques=tech, fast_start=start, log_divisor=div)
    else:
        ona_star_labels(Z, k, 100, old_tree if tech < 0 else tree)
    return time.perf_counter() - t0


def ablation(big: bool) -> None:
    from incrowd.microaggregation.ona.ona import _use_tree as _old_rule

    rows = []
    cases = [("adult", 2, 0, 3), ("gauss20000", 10, 0, 3)]
    if big:
        cases.append(("gauss100000", 10, BIG_FROM, 1))
    for name, k, first, repeats in cases:
        Z = np.ascontiguousarray(_matrix(name))
        tree = _use_tree(Z, k)
        old_tree = _old_rule(Z.shape[0], k)
        steps = list(enumerate(STEPS))[first:]
        w = Z[:400].copy()
        for _, step in steps:  # warm-up
            _time_step(w, k, tree, _old_rule(400, k), step)
        times: dict[int, list[float]] = {i: [] for i, _ in steps}
        for _ in range(repeats):
            for i, step in steps:
                times[i].append(_time_step(Z, k, tree, old_tree, step))
        prev = None
        base = median(times[first])
        for i, step in steps:
            t = median(times[i])
            rows.append([_label(name, Z), k, step[0], fmt_s(t), "" if prev is None else f"{prev / t:.2f}x",
                         f"{base / t:.1f}x"])
            prev = t
            print(rows[-1], flush=True)
    body = "\n".join([
        f"- **Machine:** {machine_line()}. Measured {now_utc()}, while other work ran on the same cores.",
        "- **Method:** the kernels alone on standardized data, one technique added per step, the steps "
        "taking turns in one process (median of 3 each; one run each at 100,000 rows, where the table starts "
        "at the first fast step). Every step gives the same groups. The first row is "
        "ONA* as incrowd ran it before: the reference kernel with a k-d tree over the centroids from 800 "
        "clusters on; in 15 columns the tree prunes almost nothing, so the second row keeps it to 4 columns "
        "or fewer, as the fast kernel does. The last column compares with each data set's first row.",
        "",
        md_table(["data", "k", "step", "time", "vs previous step", "vs first row"], rows),
    ])
    _section("ona-star-ablation", body, "ONA* fast kernel: what each technique buys")


AIMS = [
    # (key, label, k, aim seconds)
    ("gauss100000", "ONA* 100,000 x 15 Gaussian", 10, 30.0),
    ("adult", "ONA* Adult (48,842 x 3)", 2, 1.0),
    ("gauss1000000", "ONA* 1,000,000 x 15 Gaussian", 10, 900.0),
    ("mdavstar-gauss1000000", "MDAV* 1,000,000 x 15 Gaussian", 10, 180.0),
]


def one(key: str, k: int) -> None:
    if key.startswith("daskmona"):
        return one_mona_dask(float(key[8:]), k)
    if key.startswith("mona"):
        return one_mona(float(key[4:]), k)
    from incrowd import MDAVStar, ONAStar

    cls = MDAVStar if key.startswith("mdavstar-") else ONAStar
    data = key.removeprefix("mdavstar-")
    m = 3 if data == "adult" else 15
    cls(k).fit(np.random.default_rng(1).standard_normal((2000, m)))
    X = load_adult() if data == "adult" else gaussian(int(data[5:]), 15)
    t0 = time.perf_counter()
    est = cls(k).fit(X)
    seconds = time.perf_counter() - t0
    hand_back({"seconds": seconds, "il": float(est.information_loss_),
               "rounds": int(getattr(est, "n_rounds_", 0)) or "–", "peak": proc_status("VmHWM"),
               "n": int(X.shape[0])})


def aims(repeats: int) -> None:
    rows = []
    load = [os.getloadavg()[0]]
    for key, label, k, aim in AIMS:
        runs = []
        for _ in range(repeats):
            runs.append(run_child(SCRIPT, key, k))
            print(key, k, runs[-1], flush=True)
        t = median([r["seconds"] for r in runs])
        lo, hi = min(r["seconds"] for r in runs), max(r["seconds"] for r in runs)
        peak = max(r["peak"] for r in runs) / runs[0]["n"]
        rows.append([label + f", k = {k}", f"< {fmt_s(aim)}", f"{fmt_s(t)} ({fmt_s(lo)} – {fmt_s(hi)})",
                     "**met**" if t < aim else "not met", f"{peak:,.0f}",
                     f"{100 * runs[0]['il']:.4f} %", runs[0]["rounds"]])
        print(rows[-1], flush=True)
        load.append(os.getloadavg()[0])
    body = "\n".join([
        _machine_and_load(load),
        f"- **Method:** `ONAStar(k).fit` (`MDAVStar(k).fit` for MDAV*) in a fresh process after a warm-up on "
        f"2,000 rows; median of {repeats} "
        "processes (min – max); peak memory is the largest of the processes' peak resident sets (data included) "
        "per row. The first process after a fresh checkout compiles the kernels the warm-up does not reach (the "
        "blocked passes of large files), which shows as a maximum far above the median, and in the peak.",
        "",
        md_table(["run", "aim", "time", "aim met", "peak bytes per row", "IL", "rounds"], rows),
    ])
    _section("ona-star-aims", body, "ONA* and MDAV* aims")


MONA_ROWS = 10_000_000
MONA_COLUMNS = 13
MONA_RHOS = (0.8, 0.5)
MONA_AIM = 900.0  # seconds, for rho = 0.8


def one_mona(rho: float, k: int) -> None:
    from incrowd import MONA
    from incrowd._runtime._compile import compile_clock

    # 60,000 rows: parts big enough (n^rho clusters of k past SMALL_CLUSTERS at rho 0.8) for the
    # fast ONA* kernel to compile here, not inside the timed fit
    MONA(k, rho=rho).fit(np.random.default_rng(1).standard_normal((60_000, MONA_COLUMNS)))
    X = gaussian(MONA_ROWS, MONA_COLUMNS)
    with compile_clock() as clock:
        t0 = time.perf_counter()
        est = MONA(k, rho=rho).fit(X)
        seconds = time.perf_counter() - t0 - clock.seconds
    hand_back({"seconds": seconds, "compile": clock.seconds, "il": float(est.information_loss_), "parts": int(est.n_parts_),
               "largest": int(est.split_limit_), "peak": proc_status("VmHWM"), "n": int(X.shape[0])})


DASK_BLOCKS = 10  # row blocks the data is scattered in (1,000,000 rows each)


def one_mona_dask(rho: float, k: int) -> None:
    """``incrowd.distributed.mona`` on a local cluster of 2 worker processes (1 thread each): the
    rows are scattered in DASK_BLOCKS blocks first (timed apart), parts of up to 1,000,000 rows
    are finished on single workers, and the labels are collected."""
    import warnings

    from incrowd.distributed import connect, mona
    from incrowd.microaggregation.mondrian.mona import split_limit

    def worker_peak() -> int:  # defined here so that it travels by value (workers lack bench/)
        with open("/proc/self/status", encoding="utf-8") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))

    def warm_worker() -> None:
        # every worker compiles the kernels its parts take (60,000 rows: parts past the fast
        # ONA* kernel's threshold, as in process) before the clock starts
        from incrowd import MONA

        MONA(k, rho=rho).fit(np.random.default_rng(1).standard_normal((60_000, MONA_COLUMNS)))

    warnings.simplefilter("ignore")
    with connect("local:2") as client:
        addresses = list(client.scheduler_info(n_workers=-1)["workers"])
        client.gather([client.submit(warm_worker, workers=[a], allow_other_workers=False, pure=False)
                       for a in addresses])
        warm = np.random.default_rng(1).standard_normal((20_000, MONA_COLUMNS))
        mona([warm[:10_000], warm[10_000:]], k, client=client, rho=rho)
        X = gaussian(MONA_ROWS, MONA_COLUMNS)
        t0 = time.perf_counter()
        blocks = client.scatter(np.array_split(X, DASK_BLOCKS))
        scatter = time.perf_counter() - t0
        del X
        t0 = time.perf_counter()
        res = mona(blocks, k, client=client, rho=rho)
        seconds = time.perf_counter() - t0
        peaks = client.run(worker_peak)
    hand_back({"seconds": seconds, "scatter": scatter, "il": float(res.information_loss),
               "parts": int(res.ona_parts), "largest": split_limit(MONA_ROWS, rho),
               "peak": proc_status("VmHWM") + sum(peaks.values()), "n": MONA_ROWS})


def mona10m_dask(rho: float) -> None:
    load = [os.getloadavg()[0]]
    run = run_child(SCRIPT, f"daskmona{rho}", 10)
    print("dask mona", rho, run, flush=True)
    row = [f"MONA_{rho} {MONA_ROWS:,} x {MONA_COLUMNS} Gaussian, k = 10, Dask (2 workers)",
           f"< {fmt_s(MONA_AIM)}", fmt_s(run["seconds"]),
           "**met**" if run["seconds"] < MONA_AIM else "not met", fmt_s(run["scatter"]),
           f"{100 * run['il']:.4f} %", f"{run['parts']:,}", f"{run['largest']:,}",
           f"{run['peak'] / run['n']:,.0f}"]
    body = "\n".join([
        _machine_and_load(load + [os.getloadavg()[0]]),
        f"- **Method:** `incrowd.distributed.mona(blocks, 10, client=client, rho={rho})` on a local cluster "
        "(`connect(\"local:2\")`: 2 worker processes of 1 thread) in a fresh process, after a warm-up "
        "(`MONA(10, rho).fit` on 60,000 rows on each worker, which compiles the fast ONA* kernel there, then "
        f"the distributed call on 20,000 rows); the same `numpy.random.default_rng(0).standard_normal(({MONA_ROWS:_}, {MONA_COLUMNS}))` "
        f"rows as above, scattered to the workers in {DASK_BLOCKS} blocks first (the scatter is timed apart). "
        "Parts of up to 1,000,000 rows are finished by ONA* on single workers, two at a time, each on its "
        "share of the cores (one thread here). Peak: the "
        "peak resident sets of the client and both workers, summed, per row.",
        "",
        md_table(["run", "aim", "time", "aim met", "scatter", "IL", "ONA* parts", "part limit n^rho",
                  "peak bytes per row"], [row]),
    ])
    _section("mona-10m-dask", body, "MONA at high rho on 10,000,000 rows, on Dask")


def mona10m(repeats: int) -> None:
    rows = []
    load = [os.getloadavg()[0]]
    for rho in MONA_RHOS:
        runs = []
        for _ in range(repeats if rho == 0.8 else 1):  # the aim's row gets the median
            runs.append(run_child(SCRIPT, f"mona{rho}", 10))
            print("mona", rho, runs[-1], flush=True)
        t = median([r["seconds"] for r in runs])
        aim = f"< {fmt_s(MONA_AIM)}" if rho == 0.8 else "–"
        met = ("**met**" if t < MONA_AIM else "not met") if rho == 0.8 else "–"
        rows.append([f"MONA_{rho} {MONA_ROWS:,} x {MONA_COLUMNS} Gaussian, k = 10", aim,
                     fmt_s(t) if len(runs) == 1 else f"{fmt_s(t)} ({fmt_s(min(r['seconds'] for r in runs))} – "
                     f"{fmt_s(max(r['seconds'] for r in runs))})", met,
                     f"{100 * runs[0]['il']:.4f} %", f"{runs[0]['parts']:,}", f"{runs[0]['largest']:,}",
                     f"{max(r['peak'] for r in runs) / runs[0]['n']:,.0f}"])
        print(rows[-1], flush=True)
        load.append(os.getloadavg()[0])
    body = "\n".join([
        _machine_and_load(load),
        f"- **Method:** `MONA(10, rho).fit` on `numpy.random.default_rng(0).standard_normal(({MONA_ROWS:_}, "
        f"{MONA_COLUMNS}))` in one process (no Dask), after a warm-up on 60,000 rows (which compiles the fast "
        "ONA* kernel the parts use); "
        f"{repeats} fresh process{'es' if repeats > 1 else ''} for the aim's row (the median, min – max beside it), "
        "one for the others. Parts: the parts Mondrian V's cuts "
        "hand to ONA* (at most n^rho rows each). Peak: the process's peak "
        "resident set (data included) per row.",
        "",
        md_table(["run", "aim", "time", "aim met", "IL", "parts", "part limit n^rho", "peak bytes per row"], rows),
    ])
    _section("mona-10m", body, "MONA at high rho on 10,000,000 rows")


def scaling(limit: float) -> None:
    rows, ns, ts = [], [], []
    n = 10_000
    while True:
        r = run_child(SCRIPT, f"gauss{n}", 10)
        rows.append([f"{n:,}", fmt_s(r["seconds"]), r["rounds"], f"{r['peak'] / n:,.0f}"])
        print(rows[-1], flush=True)
        ns.append(n)
        ts.append(r["seconds"])
        if r["seconds"] > limit / 4:  # the next doubling would pass the limit
            break
        n *= 2
    slope = float(np.polyfit(np.log(ns), np.log(ts), 1)[0]) if len(ns) > 1 else float("nan")
    body = "\n".join([
        f"- **Machine:** {machine_line()}. Measured {now_utc()}, while other work ran on the same cores.",
        "- **Method:** `ONAStar(10).fit` on n x 15 standard Gaussian rows, one fresh process per n, n doubling "
        f"while a run stays under a quarter of {fmt_s(limit)}. Fitted exponent of time against n: "
        f"**{slope:.2f}**.",
        "",
        md_table(["n", "time", "rounds", "peak bytes per row"], rows),
    ])
    _section("ona-star-scaling", body, "ONA* scaling (fast kernel)")


#: (rows, columns) of the screen comparison: the aims' shape, and the parts MONA_0.8 makes of 10M x 13
CHUNK_SHAPES = [(100_000, 15), (312_500, 13)]


def _screen_ablation(repeats: int, variants: dict[str, int], serial: bool) -> list[list[str]]:
    """The ONA* kernel alone after its MDAV* start, at each of ``CHUNK_SHAPES``, with the
    techniques of each of the two ``variants`` (before, after), taking turns in one process
    after a warm-up; rows of the table (medians), with the groups checked equal."""
    import hashlib

    from incrowd._runtime._compile import compile_clock
    from incrowd._standardize import standardize
    from incrowd.microaggregation._adaptive import new_tuner
    from incrowd.microaggregation.greedy._mdav_star_fast import mdav_star_best_labels
    from incrowd.microaggregation.ona._ona_star_fast import STATS_COLUMNS, ona_star_fast_kernel

    k = 10
    tuners = [lambda: new_tuner(serial=True)] if serial else [new_tuner, lambda: new_tuner(True)]

    def run(X, init, tech, tuner):
        stats = np.zeros((202, len(STATS_COLUMNS)), np.int64)
        with compile_clock() as clock:  # a path the warm-up missed compiles outside the figure
            t0 = time.perf_counter()
            labels, rounds, _ = ona_star_fast_kernel(X, k, 200, False, init, tuner(), stats=stats, techniques=tech)
            seconds = time.perf_counter() - t0 - clock.seconds
        passes = np.diff(stats[: rounds + 1], axis=0).sum(0)[STATS_COLUMNS.index("pass ns")] / 1e9
        return seconds, passes, hashlib.sha256(labels.tobytes()).hexdigest()

    warm = np.ascontiguousarray(standardize(gaussian(20_000, 13, seed=1))[0])
    warm_init = mdav_star_best_labels(warm, k)
    for tech in variants.values():
        for tuner in tuners:  # threaded passes compile too
            run(warm, warm_init, tech, tuner)
    (name0, tech0), (name1, tech1) = variants.items()
    rows = []
    for n, m in CHUNK_SHAPES:
        X = np.ascontiguousarray(standardize(gaussian(n, m))[0])
        init = mdav_star_best_labels(X, k, not serial)
        got: dict[str, list[tuple[float, float, str]]] = {name0: [], name1: []}
        for _ in range(repeats):
            for name, tech in variants.items():
                got[name].append(run(X, init, tech, tuners[0]))
        labels = {r[2] for runs in got.values() for r in runs}
        assert len(labels) == 1, "the two screens gave different groups"
        before, after = got[name0], got[name1]
        t0, t1 = median([r[0] for r in before]), median([r[0] for r in after])
        p0, p1 = median([r[1] for r in before]), median([r[1] for r in after])
        rows.append([f"Gaussian {n:,} x {m}", fmt_s(t0), fmt_s(t1), f"{t0 / t1:.2f}x", fmt_s(p0), fmt_s(p1),
                     f"{p0 / p1:.2f}x", "yes"])
        print(rows[-1], flush=True)
    return rows


def _ablation_section(key: str, title: str, method: str, rows: list[list[str]], before: str, after: str) -> None:
    """A kernel comparison of ``_screen_ablation`` as its section of docs/benchmarks.md."""
    body = "\n".join([
        f"- **Machine:** {machine_line()}. Measured {now_utc()}.",
        f"- **Method:** {method} *Passes*: the blocked passes' clock time inside the kernel. *Same groups*: "
        "equal label hashes in every run.",
        "",
        md_table(["data", f"kernel, {before}", f"kernel, {after}", "ratio", f"passes, {before}", f"passes, {after}",
                  "ratio", "same groups"], rows),
    ])
    _section(key, body, title)


def chunks(repeats: int) -> None:
    """The float32 screen in column chunks against one column at a time: the kernel alone after its
    MDAV* start (the ablation times whole fits, one run at 100,000 rows), the two taking turns in
    one process, also at the size of MONA_0.8's parts of 10,000,000 rows."""
    from incrowd.microaggregation.ona._ona_star_fast import ALL_TECHNIQUES, USE_CHUNKS, USE_WIDTHS

    chunked = ALL_TECHNIQUES & ~USE_WIDTHS
    rows = _screen_ablation(repeats, {"columns one at a time": chunked & ~USE_CHUNKS, "columns in chunks": chunked},
                            serial=False)
    _ablation_section(
        "ona-star-chunks", "ONA*'s float32 screen: one column at a time against chunks of columns",
        "the ONA* kernel alone after its MDAV* start (k = 10, standard Gaussian rows, seed 0), its float32 "
        "screen summing one column at a time over a block's rows or in chunks of up to 8 columns (each row's "
        "running sum held in a register within a chunk), the two taking turns in one process after a warm-up; "
        f"median of {repeats} runs each.", rows, "one column at a time", "in chunks")


def widths(repeats: int) -> None:
    """The float32 screen written out for the column count (expanded form, two centroids at a
    time) against the chunks of columns, on one thread, as MONA runs its parts."""
    from incrowd.microaggregation.ona._ona_star_fast import ALL_TECHNIQUES, USE_WIDTHS

    rows = _screen_ablation(repeats, {"in chunks": ALL_TECHNIQUES & ~USE_WIDTHS, "written out": ALL_TECHNIQUES},
                            serial=True)
    _ablation_section(
        "ona-star-widths", "ONA*'s float32 screen: chunks of columns against code written out per width",
        "the ONA* kernel alone after its MDAV* start (k = 10, standard Gaussian rows, seed 0), on one thread "
        "(as MONA runs each part). Its float32 screen either sums the differences in chunks of up to 8 "
        "columns, one centroid at a time, or runs the code written out for 4, 8, 12 or 16 columns (the data "
        "padded with zero columns up to the next): |x|^2 + |c|^2 - 2 x.c, one multiply-add per column, two "
        f"centroids at a time. The two take turns in one process after a warm-up; median of {repeats} runs "
        "each.", rows, "in chunks", "written out")


def recent(repeats: int) -> None:
    """One walk of the change log per blocked pass against one per block, on one thread."""
    from incrowd.microaggregation.ona._ona_star_fast import ALL_TECHNIQUES, USE_RECENT

    rows = _screen_ablation(repeats, {"per block": ALL_TECHNIQUES & ~USE_RECENT, "per pass": ALL_TECHNIQUES},
                            serial=True)
    _ablation_section(
        "ona-star-recent", "ONA*'s updates: one walk of the change log per block against per pass",
        "the ONA* kernel alone after its MDAV* start (k = 10, standard Gaussian rows, seed 0), on one thread. "
        "A block of rows brings its lists up to date from the clusters changed since its oldest stamp: found "
        "by each block walking the change log from that stamp, or by one walk per blocked pass (from the "
        "oldest stamp of all its rows), of which each block takes a suffix by a binary search. The two take "
        f"turns in one process after a warm-up; median of {repeats} runs each.", rows, "walk per block",
        "walk per pass")


#: (rows, rho) of the comparison of MONA's parts one after another and side by side
SIDE_SHAPES = [(1_000_000, 0.8), (1_000_000, 0.5)]


def side_by_side(repeats: int) -> None:
    """MONA's ONA* parts one after another, each on all the threads (``workers=1``: the kernel
    before), against side by side, each on one thread, in one process, taking turns."""
    import hashlib

    import numba

    from incrowd._runtime._compile import compile_clock
    from incrowd._standardize import standardize
    from incrowd.microaggregation.mondrian._mondrian_kernel import RULE_VARIANCE
    from incrowd.microaggregation.mondrian.mona import mona_part_labels, split_limit
    from incrowd.microaggregation.ona._ona_kernel import sst_per_row

    k, threads = 10, numba.get_num_threads()
    variants = {"one after another": 1, "side by side": threads}

    def run(Z, rho, workers):
        with compile_clock() as clock:  # a path the warm-up missed compiles outside the figure
            t0 = time.perf_counter()
            labels, parts, _, _ = mona_part_labels(Z, k, RULE_VARIANCE, split_limit(Z.shape[0], rho),
                                                   sst_per_row(Z), workers=workers)
            seconds = time.perf_counter() - t0 - clock.seconds
        return seconds, parts, hashlib.sha256(labels.tobytes()).hexdigest()

    warm = np.ascontiguousarray(standardize(gaussian(60_000, MONA_COLUMNS, seed=1))[0])
    for rho in sorted({rho for _, rho in SIDE_SHAPES}):
        for workers in variants.values():
            run(warm, rho, workers)
    rows = []
    load = [os.getloadavg()[0]]
    for n, rho in SIDE_SHAPES:
        Z = np.ascontiguousarray(standardize(gaussian(n, MONA_COLUMNS))[0])
        got: dict[str, list[tuple[float, int, str]]] = {name: [] for name in variants}
        for _ in range(repeats):
            for name, workers in variants.items():
                got[name].append(run(Z, rho, workers))
                print(rho, name, got[name][-1], flush=True)
        assert len({r[2] for runs in got.values() for r in runs}) == 1, "side by side gave other groups"
        t0 = median([r[0] for r in got["one after another"]])
        t1 = median([r[0] for r in got["side by side"]])
        rows.append([f"MONA_{rho} {n:,} x {MONA_COLUMNS} Gaussian, k = {k}", f"{got['side by side'][0][1]:,}",
                     f"{split_limit(n, rho):,}", fmt_s(t0), fmt_s(t1), f"{t0 / t1:.2f}x", "yes"])
        print(rows[-1], flush=True)
        load.append(os.getloadavg()[0])
    body = "\n".join([
        _machine_and_load(load),
        f"- **Method:** MONA's labels (`mona_part_labels`, the cuts included) on standard Gaussian rows "
        f"(seed 0, standardized), k = {k}, in one process after a warm-up; the two ways take turns, median of "
        f"{repeats} runs each. *One after another*: each ONA* part alone on the {threads} threads "
        f"(`workers=1`, as before). *Side by side*: {threads} parts at a time, each on one thread, largest "
        "first. *Same groups*: equal label hashes in every run.",
        "",
        md_table(["run", "ONA* parts", "part limit n^rho", "one after another", "side by side", "ratio",
                  "same groups"], rows),
    ])
    _section("mona-side-by-side", body, "MONA's parts one after another against side by side")


def _machine_and_load(load: list[float]) -> str:
    return (f"- **Machine:** {machine_line()}. Measured {now_utc()}; load average (1 min) before and after "
            f"each row: {min(load):.1f} to {max(load):.1f} on {os.cpu_count()} CPUs.")


def _section(name: str, body: str, title: str) -> None:
    update_section(DOCS / "benchmarks.md", name, f"## {title}\n\n{body}", title)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("parts", nargs="*", default=["equality", "ablation", "aims", "scaling"])
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=float, default=600.0)
    ap.add_argument("--mona-repeats", type=int, default=1)
    a = ap.parse_args()
    if "equality" in a.parts:
        equality(a.big)
    if "ablation" in a.parts:
        ablation(a.big)
    if "aims" in a.parts:
        aims(a.repeats)
    if "scaling" in a.parts:
        scaling(a.limit)
    if "chunks" in a.parts:
        chunks(a.repeats)
    if "widths" in a.parts:
        widths(a.repeats)
    if "recent" in a.parts:
        recent(a.repeats)
    if "side-by-side" in a.parts:
        side_by_side(a.repeats)
    if "mona10m" in a.parts:
        mona10m(a.mona_repeats)
    if "mona10m-dask" in a.parts:
        mona10m_dask(0.8)


if __name__ == "__main__":
    main()
