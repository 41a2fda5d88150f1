"""Where ONA*'s time goes in many columns, and why the exact search stays quadratic there.

Run from the repository root: ``.venv/bin/python bench/bench_ona_star_profile.py [parts]``,
parts among ``rounds``, ``screen`` and ``rate`` (all by default). Writes the section
``ona-star-profile`` of ``docs/benchmarks.md``.

* **rounds**: the fast kernel's own counters (``stats``) round by round on standard Gaussian rows,
  k = 10: 320,000 x 15 (the scaling runs' shape) and 312,500 x 13 (a part of MONA_0.8 on
  10,000,000 x 13 rows), each in a fresh process after a warm-up fit on 70,000 rows, with the
  MDAV* start timed apart.
* **screen**: how much a block of rows could skip. For blocks of 8 to 64 rows taken as the
  kernel takes them (members of consecutive clusters), the share of the centroids whose partial
  squared distance over the first c columns is still within some row's limit (its 8th-closest
  centroid, the list's bound): a centroid beyond every row's limit after c columns is the most
  any exact screen could skip there.
* **rate**: the float32 screen of the blocked passes alone (``_screen_hits``, one thread) against
  the rate the passes reach inside the kernel (their distances over their clock time).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DOCS,
    fmt_s,
    gaussian,
    hand_back,
    machine_line,
    md_table,
    now_utc,
    run_child,
    update_section,
)

SCRIPT = str(Path(__file__).resolve())
K = 10
SHAPES = ((320_000, 15), (312_500, 13))
WARM_ROWS = 70_000
SHOWN_ROUNDS = 10  # rounds shown one by one; the rest are summed


def _gauss(n: int, m: int, seed: int = 0) -> np.ndarray:
    from incrowd._standardize import standardize

    return np.ascontiguousarray(standardize(gaussian(n, m, seed))[0])


def one_rounds(n: int, m: int) -> None:
    """Child: warm up, then the MDAV* start and the kernel with its counters, timed apart."""
    from incrowd.microaggregation._adaptive import new_tuner
    from incrowd.microaggregation.greedy._mdav_star_fast import mdav_star_best_labels
    from incrowd.microaggregation.ona._ona_star_fast import STATS_COLUMNS, ona_star_fast_kernel

    def fit(X):
        t0 = time.perf_counter()
        init = mdav_star_best_labels(X, K)
        t1 = time.perf_counter()
        stats = np.zeros((202, len(STATS_COLUMNS)), np.int64)
        _, rounds, converged = ona_star_fast_kernel(X, K, 200, False, init, new_tuner(), stats=stats)
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1, rounds, converged, stats[: rounds + 1]

    fit(_gauss(WARM_ROWS, m, seed=1))
    start, kernel, rounds, converged, stats = fit(_gauss(n, m))
    hand_back({"start": start, "kernel": kernel, "rounds": rounds, "converged": bool(converged),
               "columns": list(STATS_COLUMNS), "stats": stats.tolist()})


def rounds_part() -> str:
    out = []
    for letter, (n, m) in zip("ab", SHAPES):
        r = run_child(SCRIPT, "rounds", n, m)
        col = {name: np.array(r["stats"])[:, q] for q, name in enumerate(r["columns"])}
        d = {name: np.diff(v) for name, v in col.items() if name != "cluster slots"}
        slots = col["cluster slots"][:-1]
        secs = d["clock ns"] / 1e9
        pass_s = d["pass ns"] / 1e9
        share = d["pass distances"] / (n * slots)  # each row's pass covered this share of all clusters
        spans = [(str(q + 1), slice(q, q + 1)) for q in range(min(SHOWN_ROUNDS, r["rounds"]))]
        if r["rounds"] > SHOWN_ROUNDS:
            spans.append((f"{SHOWN_ROUNDS + 1} .. {r['rounds']}", slice(SHOWN_ROUNDS, None)))
        spans.append(("**all**", slice(None)))
        rows = [[label, fmt_s(float(secs[sl].sum())), f"{int(d['log entries'][sl].sum()):,}",
                 f"{int(d['pass rows'][sl].sum()):,}", f"{float(share[sl].sum()):.2f}",
                 f"{float(pass_s[sl].sum() / max(secs[sl].sum(), 1e-9)):.0%}",
                 f"{int(d['questions'][sl].sum()):,}", f"{int(d['full searches'][sl].sum()):,}"]
                for label, sl in spans]
        total_pass = float(d["pass distances"].sum())
        rate = total_pass / float(pass_s.sum())
        out += [
            f"### ({letter}) Round by round: {n:,} x {m} Gaussian, k = {K}",
            "",
            f"MDAV* start {fmt_s(r['start'])}; the rounds {fmt_s(r['kernel'])} ({r['rounds']} rounds, "
            f"{'converged' if r['converged'] else 'not converged'}); the blocked passes computed "
            f"{total_pass / 1e9:.1f} billion row-centroid distances, {total_pass / (n * slots.mean()):.1f} times "
            f"n x clusters, at {rate / 1e9:.2f} billion per second of their clock time.",
            "",
            md_table(["round", "time", "log entries", "rows through a blocked pass",
                      "each row's pass: clusters covered / all", "time in blocked passes", "questions",
                      "full searches"], rows, align="lrrrrrrr"),
            "",
        ]
        _RATES[(n, m)] = (rate, total_pass, float(pass_s.sum()), float(secs.sum()), r["start"])
    return "\n".join(out)


_RATES: dict[tuple[int, int], tuple[float, float, float, float, float]] = {}


def one_screen() -> None:
    """Child: the share of centroids a block could skip after c columns."""
    from incrowd.microaggregation.greedy._mdav_star_fast import mdav_star_best_labels

    n, m = 160_000, 15
    X = _gauss(n, m)
    labels = mdav_star_best_labels(X, K)
    nc = int(labels.max()) + 1
    C = np.zeros((nc, m))
    np.add.at(C, labels, X)
    C /= np.bincount(labels)[:, None]
    order = np.argsort(labels, kind="stable")  # members of consecutive clusters, as blocks take them
    rng = np.random.default_rng(1)
    c_norm = (C**2).sum(1)
    result = {}
    for b in (8, 16, 32, 64):
        shares = np.zeros(4)
        reps = 40
        for _ in range(reps):
            s = int(rng.integers(0, n - b))
            x = X[order[s:s + b]]
            D = (x**2).sum(1)[:, None] + c_norm[None, :] - 2 * x @ C.T
            limit = np.sort(D, axis=1)[:, 7] * (1 + 1e-9)
            partial = np.cumsum((x[:, None, :] - C[None, :, :]) ** 2, axis=2)  # over the first c columns
            for q, c in enumerate((4, 8, 12, 15)):
                shares[q] += np.mean((partial[:, :, c - 1] <= limit[:, None]).any(axis=0))
        result[b] = (shares / reps).tolist()
    # the triangle inequality between centroids: centroid g can be near a member x of cluster o
    # only if |c_o - c_g| <= |x - c_o| + (x's limit)^(1/2) for some member x
    counts = np.bincount(labels)
    starts = np.concatenate([[0], np.cumsum(counts)])
    kept, needed = [], []
    for o in rng.integers(0, nc, 40):
        x = X[order[starts[o]:starts[o + 1]]]
        D = np.maximum((x**2).sum(1)[:, None] + c_norm[None, :] - 2 * x @ C.T, 0.0)
        reach = np.sqrt(np.sort(D, axis=1)[:, 7])
        radius = float((np.sqrt(((x - C[o]) ** 2).sum(1)) + reach).max())
        apart = np.sqrt(np.maximum(c_norm[o] + c_norm - 2 * C @ C[o], 0.0))
        kept.append(float(np.mean(apart <= radius)))
        needed.append(float(np.mean((D <= reach[:, None] ** 2).any(axis=0))))
    hand_back({"n": n, "m": m, "clusters": nc, "shares": result, "triangle_kept": float(np.mean(kept)),
               "needed": float(np.mean(needed))})


def screen_part() -> str:
    r = run_child(SCRIPT, "screen", 0, 0)
    rows = [[f"{b}", *(f"{v:.1%}" for v in shares)] for b, shares in r["shares"].items()]
    return "\n".join([
        f"### (c) What a block could skip: {r['n']:,} x {r['m']} Gaussian, k = {K}, the {r['clusters']:,} "
        "clusters of the MDAV* start",
        "",
        "Share of the centroids still within some row's limit after the first c columns (mean over 40 "
        "blocks; a centroid beyond every row's limit could be skipped from there on):",
        "",
        md_table(["rows per block", "c = 4", "c = 8", "c = 12", "all 15 columns"], rows, align="rrrrr"),
        "",
        "Bounds between centroids prune no better. A cluster's members can skip centroid g when "
        "|c_o - c_g| exceeds, for every member x, |x - c_o| plus the square root of x's limit (the triangle "
        f"inequality). Over 40 clusters that test kept {r['triangle_kept']:.1%} of the centroids, where "
        f"{r['needed']:.2%} were within some member's limit. In 15 independent Gaussian columns the distances "
        "from a point to the centroids crowd around one value, so neither partial sums nor the triangle "
        "inequality separate the few centroids a row needs from the rest: an exact pass reads 8 to 12 of "
        "the 15 columns of nearly every centroid before it can drop one, and the blocked passes' work "
        "stays proportional to rows times clusters.",
        "",
    ])


def one_rate(m: int) -> None:
    """Child: ``_screen_hits`` alone on one thread, over 20,000 centroids per block, m columns."""
    from numba import njit

    from incrowd.microaggregation.ona._ona_star_fast import _BLOCK, _screen_hits

    @njit(cache=False)
    def sweep(Xt, cent32, limit, reps):
        acc = np.empty(_BLOCK, np.float32)
        hits = 0
        for _ in range(reps):
            for g in range(cent32.shape[0]):
                hits += _screen_hits(Xt, cent32, g, acc, limit)
        return hits

    rng = np.random.default_rng(0)
    Xt = np.ascontiguousarray(rng.standard_normal((_BLOCK, m)).astype(np.float32).T)
    cent32 = (0.9 * rng.standard_normal((20_000, m))).astype(np.float32)
    D = ((Xt.T[:, None, :] - cent32[None]) ** 2).sum(2)
    limit = np.sort(D, axis=1)[:, 7].astype(np.float32)
    sweep(Xt, cent32, limit, 1)
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        sweep(Xt, cent32, limit, 5)
        times.append(time.perf_counter() - t0)
    hand_back({"per_second": 5 * _BLOCK * cent32.shape[0] / float(np.median(times)), "block": _BLOCK})


def rate_part() -> str:
    rows = []
    for n, m in SHAPES:
        alone = run_child(SCRIPT, "rate", m, 0)["per_second"]
        row = [f"{m}", f"{alone / 1e9:.2f}"]
        if (n, m) in _RATES:
            rate, total, pass_s, rounds_s, start = _RATES[(n, m)]
            floor = total / (2 * alone)  # both cores at the screen's own rate, nothing else
            row += [f"{n:,} x {m}", f"{rate / 1e9:.2f}", fmt_s(pass_s), fmt_s(floor),
                    fmt_s(start + rounds_s - pass_s + floor)]
        rows.append(row + ["–"] * (7 - len(row)))
    return "\n".join([
        "### (d) Rate: row-centroid distances per second (billions)",
        "",
        "The screen alone is `_screen_hits`, the float32 pass over one block of 64 rows, on one thread over "
        "20,000 centroids. The passes inside the kernel run on the threads the tuner chose (two when "
        "they pay). *At the screen's rate* is the passes' distances at twice the screen's own rate (both "
        "cores, no overhead); the last column adds the MDAV* start and the rounds' other work, as "
        "measured: what this design would take with its passes at the screen's own rate on both cores.",
        "",
        md_table(["columns", "screen alone, one thread", "data", "passes in the kernel", "passes' time",
                  "passes at the screen's rate, two threads", "whole fit at that rate"], rows,
                 align="rrlrrrr"),
        "",
    ])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        what, a, b = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        {"rounds": lambda: one_rounds(a, b), "screen": one_screen, "rate": lambda: one_rate(a)}[what]()
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", default=["rounds", "screen", "rate"])
    parts = ap.parse_args().parts
    t0 = time.perf_counter()
    body = [f"- **Machine:** {machine_line()}. Measured {now_utc()}.",
            "- **Method:** the fast ONA* kernel's counters (`stats`), round by round, in a fresh process per "
            f"shape after a warm-up fit on {WARM_ROWS:,} rows; the MDAV* start timed apart. A *blocked pass* "
            "brings the lists of 64 rows up to date from the clusters changed since (or makes them afresh) "
            "before their questions; *each row's pass: clusters covered / all* sums, over the rounds, the "
            "clusters a row's pass looked at as a share of all clusters.",
            ""]
    if "rounds" in parts:
        body.append(rounds_part())
    if "screen" in parts:
        body.append(screen_part())
    if "rate" in parts:
        body.append(rate_part())
    body.append(f"Written by `bench/bench_ona_star_profile.py` ({(time.perf_counter() - t0) / 60:.1f} min).")
    title = "Where ONA*'s time goes in many columns"
    update_section(DOCS / "benchmarks.md", "ona-star-profile", f"## {title}\n\n" + "\n".join(body), title)
    print("\n".join(body))


if __name__ == "__main__":
    main()
