"""What each second buys: information loss against time for every method on one large data set.

Run from the repository root::

    .venv/bin/python bench/bench_frontier.py [--data gauss|adult|census] [--n 1000000] [--k 10] [--limit 900]

Each method runs as ``incrowd.microaggregate(X, k, method)`` in a fresh process after a warm-up
on 2,000 rows, its time without numba's compiling (``compile_seconds``), killed past ``--limit`` seconds; MONA
runs at rho = 0.3, 0.4, ..., 0.9. ``gauss`` is n x 15 standard Gaussian rows (default n:
1,000,000); ``adult`` is Adult's (age, education-num, hours-per-week) and ``census`` the Census
file (1,080 x 13), each as it is with ``--n 0`` (their default) or resampled with replacement to
n rows. Writes the section ``frontier-<data>-<n>`` of ``docs/performance.md`` (a table, best IL
first, with the points on the frontier marked: no other method is both faster and lower in IL)
and the figure ``docs/figures/frontier_<data>_<n>.png``, n being the rows used, and keeps the raw
results in ``bench/results/frontier/<data>_<n>.json``; ``--render`` redraws the section and the
figure from that file without measuring.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DOCS,
    FIGURES,
    fmt_s,
    gaussian,
    hand_back,
    load_adult,
    load_census,
    load_json,
    machine_line,
    md_table,
    now_utc,
    proc_status,
    pyplot,
    run_child,
    save_figure,
    save_json,
    update_section,
)

SCRIPT = str(Path(__file__).resolve())
RESULTS = Path(__file__).resolve().parent / "results" / "frontier"
RHOS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
PLAIN = ("mdav", "mdav-plus", "v-mdav", "mdav-star", "ona-star", "refine", "mondrian", "mondrian-v", "mondrian-v2d")


def _runs() -> list[tuple[str, str, dict]]:
    # refine draws at random: a fixed seed, and its default budget (max_seconds = 10)
    runs = [(name, name, {"random_state": 0} if name == "refine" else {}) for name in PLAIN]
    runs += [(f"mona (rho {rho})", "mona", {"rho": rho}) for rho in RHOS]
    return runs


FILES = {"adult": load_adult, "census": load_census}
WHAT = {"gauss": "Gaussian, 15 columns", "adult": "Adult (age, education-num, hours-per-week)",
        "census": "Census (13 columns)"}


def _data(kind: str, n: int) -> np.ndarray:
    """The rows of ``kind``; a file as it is when n is 0 or its own size, else resampled to n rows."""
    if kind in FILES:
        rows = FILES[kind]()
        if n in (0, len(rows)):
            return rows
        return rows[np.random.default_rng(0).integers(0, len(rows), n)]
    return gaussian(n, 15)


def _rows(kind: str, n: int) -> int:
    """How many rows ``--data kind --n n`` stands for."""
    return len(FILES[kind]()) if kind in FILES and n == 0 else n


def one(kind: str, n: int, k: int, method: str, params: dict) -> None:
    import incrowd

    X = _data(kind, n)
    incrowd.microaggregate(X[:2000].copy(), k, method, **params)
    t0 = time.perf_counter()
    result = incrowd.microaggregate(X, k, method, **params)
    # a path the warm-up did not take (a larger kernel variant) may still compile; that is not
    # the method's time
    seconds = time.perf_counter() - t0 - result.compile_seconds
    hand_back({"seconds": seconds, "compile_seconds": result.compile_seconds,
              "il": float(result.information_loss), "peak": proc_status("VmHWM")})


def _child(kind: str, n: int, k: int, method: str, params: dict, limit: float) -> dict | None:
    try:
        return run_child(SCRIPT, kind, n, k, method, json.dumps(params), timeout=limit)
    except subprocess.TimeoutExpired:
        return None


def _frontier(points: list[tuple[float, float]]) -> list[bool]:
    """True for each (seconds, IL) no other point beats in both."""
    return [not any(s2 <= s and il2 <= il and (s2, il2) != (s, il) for s2, il2 in points) for s, il in points]


def _section(name: str, body: str, title: str) -> None:
    update_section(DOCS / "performance.md", name, f"## {title}\n\n{body}", title)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], json.loads(sys.argv[6]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", choices=["gauss", "adult", "census"], default="gauss")
    ap.add_argument("--n", type=int, default=None,
                    help="rows (default 1,000,000 for gauss; 0, the file as it is, for adult and census)")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit", type=float, default=900.0)
    ap.add_argument("--only", nargs="*", help="labels to run (default: all)")
    ap.add_argument("--render", action="store_true", help="redraw from the saved results, measuring nothing")
    a = ap.parse_args()
    if a.n is None:
        a.n = 1_000_000 if a.data == "gauss" else 0
    if a.n < 0 or (a.n == 0 and a.data == "gauss"):
        ap.error(f"--n must be a positive number of rows{'' if a.data == 'gauss' else ' or 0'}; got {a.n}")
    rows_n = _rows(a.data, a.n)
    raw = RESULTS / f"{a.data}_{rows_n}.json"
    if a.render:
        _write(load_json(raw))
        return
    done, missed, loads = [], [], []
    for label, method, params in _runs():
        if a.only and label not in a.only and method not in a.only:
            continue
        if method == "refine" and "ona-star" in missed:
            # refine starts from ONA*'s groups, so it cannot finish before ONA* does
            missed.append(label)
            print(label, "skipped: ONA* did not finish", flush=True)
            continue
        loads.append(os.getloadavg()[0])
        r = _child(a.data, a.n, a.k, method, params, a.limit)
        print(label, r, flush=True)
        if r is None:
            missed.append(label)
        else:
            done.append((label, r))
    measured, machine = now_utc(), machine_line()
    loads.append(os.getloadavg()[0])
    load = [min(loads), max(loads)]
    run = {"data": a.data, "n": a.n, "rows": rows_n, "k": a.k, "limit": a.limit, "measured": measured,
           "machine": machine, "load": load, "done": done, "missed": missed}
    save_json(raw, run)
    _write(run)


def _pct(il: float) -> str:
    """IL in % with at least four significant digits (resampled files can have IL near 0)."""
    x = 100 * il
    decimals = 4 if x <= 0 else max(4, 3 - math.floor(math.log10(x)))
    return f"{x:.{decimals}f} %"


def _write(run: dict) -> None:
    """The section and the figure of one frontier run (as kept in its JSON file)."""
    data, n, rows_n, k, limit = run["data"], run["n"], run["rows"], run["k"], run["limit"]
    done, missed, load = [tuple(d) for d in run["done"]], run["missed"], run.get("load")
    marks = _frontier([(r["seconds"], r["il"]) for _, r in done])
    order = sorted(range(len(done)), key=lambda i: done[i][1]["il"])
    rows = [[done[i][0], _pct(done[i][1]["il"]), fmt_s(done[i][1]["seconds"]),
             f"{done[i][1]['peak'] / rows_n:,.0f}", "yes" if marks[i] else ""] for i in order]
    rows += [[label, "—", f"> {fmt_s(limit)}" + (" (starts from ONA*, not run)" if label == "refine" else ""),
              "—", ""] for label in missed]
    what = WHAT[data] + (" resampled" if data in FILES and n != 0 else "")
    name = f"{data}_{rows_n}"
    figure = _plot(done, marks, f"{what}, {rows_n:,} rows, k = {k}", FIGURES / f"frontier_{name}.png")
    by_label = dict(done)
    notes = []
    if "refine" in by_label and "ona-star" in by_label and by_label["ona-star"]["seconds"] >= 10.0:
        notes.append("- refine ran with its default budget (`max_seconds` = 10, its ONA* start included): "
                     "here its start alone took longer, so it returned ONA*'s groups.")
    body = "\n".join([
        f"- **Machine:** {run['machine']}. Measured {run['measured']}"
        + (f"; load average (1 min) between runs {load[0]:.1f} to {load[1]:.1f} on {os.cpu_count()} CPUs"
           + (" (other work shared the machine)" if load[1] > 1.5 else "") if load else "") + ".",
        f"- **Data:** {what}, {rows_n:,} rows; k = {k}.",
        "- **Method:** `incrowd.microaggregate(X, k, method)` in a fresh process after a warm-up on 2,000 rows, "
        f"numba's compiling taken out (`compile_seconds`), killed past {fmt_s(limit)}; peak memory is the "
        "process's peak resident set per row, data included. *Frontier*: no other method is both "
        "at most as slow and at most as lossy.",
        f"- **Script:** `bench/bench_frontier.py --data {data} --n {n}`.",
        "",
        md_table(["method", "IL", "time", "peak bytes per row", "on the frontier"], rows),
        "",
        *([*notes, ""] if notes else []),
        f"![IL against time]({figure.relative_to(DOCS).as_posix()})",
    ])
    _section(f"frontier-{data}-{rows_n}", body,
             f"What each second buys: IL against time, {what.split(',')[0].split(' (')[0]} {rows_n:,} rows")


def _labels(done) -> list[tuple[str, float, float]]:
    """(text, seconds, IL %) of each label: points with the same IL and nearly the same time (MONA
    at small rho is Mondrian V) share one, placed at the fastest of them, so the labels stay
    readable."""
    groups: list[list] = []
    for label, r in sorted(done, key=lambda d: d[1]["seconds"]):
        il = 100 * r["il"]
        for g in groups:
            if abs(g[2] - il) <= 5e-4 * max(g[2], il) and r["seconds"] <= 1.6 * g[1]:
                g[0].append(label)
                break
        else:
            groups.append([[label], r["seconds"], il])
    out = []
    for labels, seconds, il in groups:
        rhos = sorted(lab[len("mona (rho "):-1] for lab in labels if lab.startswith("mona (rho "))
        others = [lab for lab in labels if not lab.startswith("mona (rho ")]
        text = " / ".join(others + ([f"mona (rho {', '.join(rhos)})"] if rhos else []))
        out.append((text, seconds, il))
    return out


def _plot(done, marks, title: str, path: Path) -> Path:
    fig, ax = pyplot().subplots(figsize=(7, 4.5))
    for (_, r), on in zip(done, marks):
        ax.scatter(r["seconds"], 100 * r["il"], color="C0" if on else "C7", zorder=3)
    front = sorted((r["seconds"], 100 * r["il"]) for (_, r), on in zip(done, marks) if on)
    if front:
        ax.step([p[0] for p in front], [p[1] for p in front], where="post", color="C0", alpha=0.5)
    ax.set_xscale("log")
    ils = [100 * r["il"] for _, r in done if r["il"] > 0]
    if ils and max(ils) > 100 * min(ils):
        ax.set_yscale("log")  # a resampled file's losses span orders of magnitude
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("seconds (log scale)")
    ax.set_ylabel("information loss, %" + (" (log scale)" if ax.get_yscale() == "log" else ""))
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    # Labels of nearby points would overprint each other: each label takes the first vertical
    # offset (in points) whose box meets no label placed before it.
    to_pt = 72 / fig.dpi
    placed: list[tuple[float, float, float, float]] = []
    for text, seconds, il in _labels(done):
        x, y = (v * to_pt for v in ax.transData.transform((seconds, il)))
        w, h = 4.2 * len(text), 8.0
        for dy in (3, 11, -11, 19, -19, 27, -27, 35):
            box = (x + 4, y + dy, x + 4 + w, y + dy + h)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
                break
        placed.append(box)
        ax.annotate(text, (seconds, il), fontsize=7, xytext=(4, dy), textcoords="offset points")
    fig.tight_layout()  # again, now with the labels: room for those at the right edge
    return save_figure(fig, path, dpi=110)

if __name__ == "__main__":
    main()
