"""One kernel call timed across commits, each commit's code in fresh processes taking turns.

A technique that replaces code (rather than adding a switch) can only be measured against the
commit before it. This script checks each named commit out into a temporary worktree, runs the
same call in a fresh process per (commit, case, repeat), the commits taking turns so a busy
machine slows them alike, and writes one table: medians, the ratio of each commit to the one
before, and whether every run gave the same groups (a hash of the labels).

Run from the repository root, for example::

    .venv/bin/python bench/bench_revisions.py --section mdav-star-kernel-steps \\
        --rev 736b2f6="before" --rev 2e98917="blocks side by side" \\
        --case mdavstar:312500:13 --case mdav:1000000:15 --repeats 3

Cases: ``mdavstar:n:m`` is ``mdav_star_best_labels(X, 10, threads=False)`` (one thread, as MONA
runs its parts), ``mdav:n:m`` is ``mdav_exact_labels(X, 10)`` (MDAV as ``incrowd.MDAV`` runs it),
on standardized standard Gaussian rows (seed 0). Each process warms the kernels up on a slice
large enough to take the same code path (int8 codes, threads) before the timed call, so no
timing includes a compile.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DOCS,
    REPO,
    child_json,
    fmt_s,
    gaussian,
    hand_back,
    machine_line,
    md_table,
    median,
    now_utc,
    update_section,
)

K = 10
# warm-up rows: past the int8 thresholds (MDAV* 64,000 rows; MDAV 500,000) and the threads'
WARM = {"mdavstar": 70_000, "mdav": 600_000}
NAMES = {"mdavstar": "MDAV* (screened kernel, one thread)", "mdav": "MDAV (exact, fast kernel)"}


def _call(what: str):
    if what == "mdavstar":
        from incrowd.microaggregation.greedy._mdav_star_fast import mdav_star_best_labels

        return lambda X: mdav_star_best_labels(X, K, False)
    from incrowd.microaggregation.mdav.mdav import mdav_exact_labels

    return lambda X: mdav_exact_labels(X, K)


def one(case: str) -> None:
    what, n, m = case.split(":")
    X = gaussian(int(n), int(m))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    fit = _call(what)
    fit(np.ascontiguousarray(X[: min(int(n), WARM[what])]))
    t0 = time.perf_counter()
    labels = fit(X)
    seconds = time.perf_counter() - t0
    digest = hashlib.sha256(np.asarray(labels, np.int64).tobytes()).hexdigest()[:16]
    hand_back({"seconds": seconds, "hash": digest})


def _worktree(rev: str, root: Path) -> Path:
    where = root / rev
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-f", str(where), rev], check=True,
                   capture_output=True)
    return where


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(sys.argv[2])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--rev", action="append", required=True, help="COMMIT=label, oldest first")
    ap.add_argument("--case", action="append", required=True, help="mdavstar:n:m or mdav:n:m")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--section", required=True)
    ap.add_argument("--title", default="Kernel speed commit by commit")
    a = ap.parse_args()
    revs = [r.split("=", 1) for r in a.rev]
    root = Path(tempfile.mkdtemp(prefix="incrowd-revs-"))
    started = time.time()
    times: dict = {}
    hashes: dict = {}
    load = [os.getloadavg()[0]]
    try:
        trees = {rev: _worktree(rev, root) for rev, _ in revs}
        for rep in range(a.repeats):
            for case in a.case:
                for rev, label in revs:
                    env = dict(os.environ, PYTHONPATH=str(trees[rev] / "src"))
                    out = child_json([sys.executable, __file__, "--one", case], env=env, timeout=3600)
                    times.setdefault((case, rev), []).append(out["seconds"])
                    hashes.setdefault(case, set()).add(out["hash"])
                    print(rep, case, rev, label, f"{out['seconds']:.2f} s", out["hash"], flush=True)
                    load.append(os.getloadavg()[0])
    finally:
        for rev, _ in revs:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(root / rev)],
                           capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
    rows = []
    for case in a.case:
        what, n, m = case.split(":")
        before = None
        for rev, label in revs:
            t = median(times[(case, rev)])
            ratio = "–" if before is None else f"{before / t:.2f}x"
            rows.append([f"{NAMES[what]}, {int(n):,} x {m}", f"`{rev}` {label}", fmt_s(t),
                         f"{min(times[(case, rev)]):.2f} – {max(times[(case, rev)]):.2f} s", ratio,
                         "yes" if len(hashes[case]) == 1 else "**no**"])
            before = t
    body = "\n".join([
        f"- **Machine:** {machine_line()}. Measured {now_utc()} ({(time.time() - started) / 60:.1f} min); load "
        f"average (1 min) sampled between runs: {min(load):.1f} to {max(load):.1f} on {os.cpu_count()} CPUs.",
        f"- **Method:** `bench/bench_revisions.py`: each commit's code in a worktree of its own, one fresh process "
        f"per run, the commits taking turns, median of {a.repeats} runs (min – max beside it); k = {K}, standardized "
        "standard Gaussian rows (seed 0); each process warms the kernels up on a slice that takes the same code "
        "path, so no timing includes a compile. *Against the row above*: the commit's speed-up over the one "
        "before it. *Same groups*: one label hash over every run of the case.",
        "",
        md_table(["call", "commit", "time", "range", "against the row above", "same groups"], rows),
    ])
    update_section(DOCS / "benchmarks.md", a.section, f"## {a.title}\n\n{body}", a.title)


if __name__ == "__main__":
    main()
