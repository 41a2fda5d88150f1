"""The joint strategy's clustering on Adult full: seeding and ONA*-style refinement.

Run from the repository root: ``.venv/bin/python bench/bench_joint.py [--k 5] [--max-seconds 300]``.
Quasi-identifiers: age, hours-per-week (numeric, standardized), sex, race, marital-status,
education, native-country (ARX full hierarchies; ``?`` is a value there). Prints a Markdown
table: seconds (compiled kernels: a small warm-up run comes first and is timed apart), the loss
the method lowers (numeric SSE + categorical LCA loss, see ``incrowd.microaggregation.joint``), numeric
IL (SSE/SST), mean generalization height (LCA level / max level, over rows and categorical
columns), groups and largest group.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import data_dir, machine_line, md_table  # noqa: E402

from incrowd._bench_entry import standardize  # noqa: E402
from incrowd.generalization import read_hierarchy  # noqa: E402
from incrowd._bench_entry import group_lca, joint_labels, joint_objective  # noqa: E402

NUMERIC = ["age", "hours-per-week"]
CATEGORICAL = ["sex", "race", "marital-status", "education", "native-country"]


def load():
    folder = data_dir()
    frame = pd.read_csv(folder / "adult.csv.gz", dtype={c: str for c in CATEGORICAL})
    Z, _ = standardize(frame[NUMERIC].to_numpy(np.float64))
    categorical = []
    for name in CATEGORICAL:
        h = read_hierarchy(folder / "adult_arx" / "full" / f"adult_full_hierarchy_{name}.csv", name)
        categorical.append((h.encode(frame[name]), h))
    return Z, categorical


def describe(Z, categorical, labels, times, what):
    sse, cat = joint_objective(Z, categorical, labels)
    sst = float(((Z - Z.mean(axis=0)) ** 2).sum())
    heights = [group_lca(labels, codes, h)[0][labels] / h.max_level for codes, h in categorical]
    sizes = np.bincount(labels)
    return [what, f"{np.median(times):.1f} / {max(times):.1f}", f"{sse + cat:,.1f}", f"{sse:,.1f}",
            f"{cat:,.1f}", f"{100 * sse / sst:.3f} %", f"{float(np.mean(heights)):.4f}",
            f"{sizes.size:,}", int(sizes.max())]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-seconds", type=float, default=300.0)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    Z, categorical = load()
    t0 = time.perf_counter()
    for seeding in ("mdav", "mdav-loss"):
        joint_labels(Z[:200], [(c[:200], h) for c, h in categorical], args.k, refine=True, seeding=seeding)
    warm = time.perf_counter() - t0
    rows = []
    for seeding in ("mdav", "mdav-loss"):
        for refine in (False, True):
            times, labels = [], None
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                again = joint_labels(Z, categorical, args.k, refine=refine, seeding=seeding,
                                     max_seconds=args.max_seconds)
                times.append(time.perf_counter() - t0)
                # a refinement cut short by max_seconds could differ between runs: say so
                assert labels is None or np.array_equal(labels, again), "runs gave different groups"
                labels = again
            what = f"seeding {seeding}" + (" + ONA*-style refinement" if refine else "")
            rows.append(describe(Z, categorical, labels, times, what))
    print(f"Adult full ({Z.shape[0]:,} rows), k = {args.k}; QIs {', '.join(NUMERIC)} (numeric, "
          f"standardized) and {', '.join(CATEGORICAL)} (ARX full hierarchies). Seconds: median / "
          f"worst of {args.repeats} runs (the groups are the same every run: deterministic); "
          f"refinement seconds include its seeding; max_seconds = {args.max_seconds:g}. "
          "The machine is shared with other jobs, so seconds are noisy. "
          f"First (compiling) call on 200 rows took {warm:.1f} s, not counted. {machine_line()}\n")
    print(md_table(["method", "seconds (median / worst)", "loss", "numeric SSE", "categorical loss",
                    "numeric SSE/SST", "mean gen. height (level / max)", "groups", "largest group"], rows))


if __name__ == "__main__":
    main()
