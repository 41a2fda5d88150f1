"""The joint strategy's clustering on Adult full: seeding and ONA*-style refinement.

Run from the repository root: ``.venv/bin/python bench/bench_joint.py [--k 5] [--max-seconds 300]``.
Quasi-identifiers: age, hours-per-week (numeric, standardized), sex, race, marital-status,
education, native-country (ARX full hierarchies; ``?`` is a value there). Prints a Markdown
table: seconds (compiled kernels: a small warm-up run comes first and is timed apart), the loss
the method lowers (numeric SSE + categorical LCA loss, see ``incrowd.microaggregation.joint``), numeric
IL (SSE/SST), mean generalization height (LCA level / max level, over rows and categorical
columns), groups and largest group.

``--scaling`` times ``publish`` itself instead, one fresh process per run: the joint strategy
(parts of at most ``PART_ROWS`` rows, today's default), the joint strategy over the whole file at
once (``part_rows = None``: quadratic, so only up to ``--old-max`` rows) and
generalize-then-microaggregate, on Adult's 45,222 complete rows and on those rows resampled with
replacement (seed 0) to ``--sizes`` rows; the same spec as ``bench_publish.py`` without the
sensitive attribute (k = 5, at most 1 % suppressed). It writes the section ``joint-scaling`` of
``docs/publishing.md`` and the figures to ``bench/results/joint_scaling.json``:
``.venv/bin/python bench/bench_joint.py --scaling [--sizes 50000,100000,200000,500000,1000000]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DOCS, REPO, data_dir, machine_line, md_table, now_utc, update_section  # noqa: E402
from _common.processes import hand_back, run_child  # noqa: E402

from incrowd.cli._bench_entry import group_lca, joint_labels, joint_objective, standardize  # noqa: E402
from incrowd.generalization import read_hierarchy  # noqa: E402

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


SCALING = REPO / "bench" / "results" / "joint_scaling.json"
STRATEGIES = ("joint", "joint (whole file)", "generalize-then-microaggregate")


def adult_rows(n: int):
    """Adult's complete rows (no ``?``), as they are (n = 0) or resampled with replacement to n."""
    import incrowd

    frame = incrowd.read_table(data_dir() / "adult.csv.gz")
    frame = frame[~(frame.astype(str) == "?").any(axis=1)].reset_index(drop=True)
    if n:
        frame = frame.iloc[np.random.default_rng(0).integers(0, len(frame), n)].reset_index(drop=True)
    return frame


def publish_spec(strategy: str) -> dict:
    full = data_dir() / "adult_arx" / "full"
    columns: dict = {name: "numeric" for name in NUMERIC}
    for name in CATEGORICAL:
        columns[name] = {"role": "categorical", "hierarchy": str(full / f"adult_full_hierarchy_{name}.csv")}
    # a column may go up to its one-label top (Adult's race and sex do at k = 5 with 1 %)
    privacy = {"k": 5, "max_suppression": "1%", "strategy": strategy.split(" (")[0], "allow_full_suppression": True}
    return {"privacy": privacy, "columns": columns}


def one(strategy: str, n: int) -> None:
    """A child process: one timed publish (after one on 2,000 rows that compiles), its figures."""
    import resource

    import incrowd

    if strategy == "joint (whole file)":
        joint_labels.__kwdefaults__["part_rows"] = None  # publish leaves it at its default
    spec = publish_spec(strategy)
    frame = adult_rows(n)
    incrowd.publish(frame.head(2000), spec)
    t0 = time.perf_counter()
    result = incrowd.publish(frame, spec)
    wall = time.perf_counter() - t0
    rep = result.summary()
    # per row: numeric SSE (numeric IL x SST, SST = rows x columns standardized) and the
    # categorical term (level / max level per column), the loss the joint strategy lowers
    loss = rep["numeric_information_loss"] * len(NUMERIC) + rep["mean_generalization_height"] * len(CATEGORICAL)
    hand_back({"strategy": strategy, "rows": len(frame), "seconds": rep["seconds"], "wall": wall,
               "numeric_il": rep["numeric_information_loss"], "ncp": rep["categorical_ncp"],
               "height": rep["mean_generalization_height"], "loss": loss, "classes": rep["classes"],
               "min_class": rep["min_class_size"], "suppressed": rep["suppressed"],
               "verification": rep["verification"],
               "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def scaling(sizes: list[int], old_max: int, repeats: int, timeout: float) -> dict:
    import os

    rows = []
    for n in sizes:
        runs: dict[str, list[dict]] = {}
        for _ in range(repeats if n <= old_max else 1):  # interleaved, fresh processes
            for strategy in STRATEGIES:
                if strategy == "joint (whole file)" and n > old_max:
                    continue
                try:
                    got = run_child(__file__, strategy, n, timeout=timeout)
                except Exception as exc:  # noqa: BLE001 - a timed-out run is a row of its own
                    got = {"strategy": strategy, "rows": n, "error": type(exc).__name__}
                runs.setdefault(strategy, []).append(got)
                print(f"{n:>9,} {strategy:32s} " + (f"{got['seconds']:8.1f} s loss {got['loss']:.4f}"
                      if "error" not in got else got["error"]) + f"  load {os.getloadavg()[0]:.1f}", flush=True)
        for got in runs.values():
            ok = [g for g in got if "error" not in g]
            row = dict(ok[-1]) if ok else dict(got[-1])
            if ok:
                row["seconds"] = float(np.median([g["seconds"] for g in ok]))
                row["all_seconds"] = [g["seconds"] for g in ok]
            rows.append(row)
    return {"when": now_utc(), "machine": machine_line(), "repeats": repeats, "old_max": old_max, "rows": rows}


def render(saved: dict) -> str:
    header = ["rows", "strategy", "seconds", "loss per row", "numeric IL (SSE/SST)", "categorical NCP",
              "mean height", "classes (smallest)", "suppressed", "peak memory"]
    out = []
    for r in saved["rows"]:
        if "error" in r:
            out.append([f"{r['rows']:,}", r["strategy"], r["error"], "-", "-", "-", "-", "-", "-", "-"])
            continue
        out.append([f"{r['rows']:,}", r["strategy"], f"{r['seconds']:.1f}", f"{r['loss']:.4f}",
                    f"{100 * r['numeric_il']:.2f} %", f"{r['ncp']:.4f}", f"{r['height']:.4f}",
                    f"{r['classes']:,} ({r['min_class']})", r["suppressed"], f"{r['peak_rss_mib']:,.0f} MiB"])
    return "\n".join([
        "## How the joint strategy scales",
        "",
        f"Generated by `bench/bench_joint.py --scaling` on {saved['when']}. Machine: {saved['machine']}; "
        "shared with other jobs, so seconds are noisy. Data: Adult's 45,222 complete rows (first row), then "
        "those rows resampled with replacement to the row count; quasi-identifiers age and hours-per-week "
        "(numeric) and sex, race, marital-status, education, native-country (ARX's full hierarchies); k = 5, "
        "at most 1 % suppressed. One fresh process per run; seconds are `publish`'s own (compiling excluded), "
        f"the median of {saved['repeats']} interleaved runs up to {saved['old_max']:,} rows, one run above. "
        "'joint' cuts the rows into parts of at most 4,096 rows first; 'joint (whole file)' is the same "
        "clustering over the whole file at once (as before the parts; quadratic). Loss per row: numeric IL "
        "x 2 + mean height x 5, the numeric SSE and categorical ancestor levels per row that the joint "
        "strategy lowers. Peak memory: the process's peak resident set, data and compiled code included. "
        "Every release was verified k-anonymous over all seven quasi-identifiers before it was returned.",
        "",
        md_table(header, out),
        "",
    ])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-seconds", type=float, default=300.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scaling", action="store_true", help="publish's joint against generalize-then-microaggregate")
    ap.add_argument("--sizes", default="0,50000,100000,200000,500000,1000000",
                    help="rows (0: Adult's complete rows as they are)")
    ap.add_argument("--old-max", type=int, default=50000, help="the most rows the whole-file joint runs on")
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--render", action="store_true")
    args = ap.parse_args()
    if args.scaling:
        if not args.render:
            saved = scaling([int(s) for s in args.sizes.split(",")], args.old_max, args.repeats, args.timeout)
            SCALING.parent.mkdir(parents=True, exist_ok=True)
            SCALING.write_text(json.dumps(saved, indent=1, default=str) + "\n")
        saved = json.loads(SCALING.read_text())
        print(render(saved))
        update_section(DOCS / "publishing.md", "joint-scaling", render(saved), title="Publishing a survey file")
        return
    seeding_table(args)


def seeding_table(args) -> None:
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
