"""The publish of ``bench/publish_dask.py``, in process and on Dask, with two versions of incrowd, interleaved.

Run from the repository root: ``.venv/bin/python bench/publish_dask_before_after.py OLD_SRC [rows]
[--rounds R] [--after-first] [--dask-only] [--out NAME]`` (default 1,000,000 rows, 1 round; the
new version first in odd rounds with ``--after-first``; no in-process runs with ``--dask-only``;
``--out`` names the results file in ``bench/results``). ``OLD_SRC`` is the ``src`` folder of the
version to compare with (a ``git worktree`` of the older commit); this tree's ``src`` is the
other. Each round runs the old version and then this one (the next round the other way round),
each version in process and then on a fresh ``local:4`` cluster with 2 GiB per worker, each run
a fresh process, on the same Parquet dataset, so that the machine's load falls on both alike.
Writes ``bench/results/publish_dask_before_after.json``: per run its seconds, its phases, its
rows per second per core, the load average after it and its release's figures (equal releases
are checked); per version and round the Dask run's throughput per core over the in-process run's
(the issue's target: at least 0.5).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _common.machine import machine_line, now_utc  # noqa: E402
from publish_dask import CATEGORICAL  # noqa: E402
from risk_dask import WORKERS, child, generate  # noqa: E402

SCRIPT = str(ROOT / "bench" / "publish_dask.py")


def main() -> None:
    args = sys.argv[1:]
    rounds, out_name = 1, "publish_dask_before_after.json"
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at:at + 2]
    if "--out" in args:
        at = args.index("--out")
        out_name = args[at + 1]
        del args[at:at + 2]
    after_first = "--after-first" in args
    kinds = ("dask",) if "--dask-only" in args else ("in-process", "dask")
    args = [a for a in args if a not in ("--after-first", "--dask-only")]
    old = Path(args[0]).resolve()
    rows = int(args[1]) if len(args) > 1 else 1_000_000
    work = Path(tempfile.mkdtemp(prefix="incrowd-before-after-"))
    runs = []
    try:
        folder = work / "data"
        generate(rows, folder, known=CATEGORICAL)
        for r in range(rounds):
            order = [("before", old), ("after", ROOT / "src")]
            for name, src in order if (r % 2 == 0) != after_first else order[::-1]:
                for kind in kinds:
                    result = child(kind, folder, SCRIPT, src=src)
                    cores = 1 if kind == "in-process" else min(WORKERS, len(os.sched_getaffinity(0)))
                    result["rows_per_s_per_core"] = rows / result["seconds"] / cores
                    result["load_after"] = list(os.getloadavg())
                    runs.append({"version": name, "round": r + 1, "run": kind, **result})
                    print(name, kind, f"{result['seconds']:.1f} s", [(p, round(s, 1)) for p, s in
                                                                     result.get("phases", [])], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    same = len({json.dumps(r["summary"], sort_keys=True) for r in runs}) == 1
    ratios = [{"version": d["version"], "round": d["round"],
               "dask_over_in_process_per_core": d["rows_per_s_per_core"] / p["rows_per_s_per_core"]}
              for d in runs if d["run"] == "dask"
              for p in runs if p["run"] == "in-process" and (p["version"], p["round"]) == (d["version"], d["round"])]
    for ratio in ratios:
        print(ratio, flush=True)
    out = {"written": now_utc(), "machine": machine_line(), "rows": rows, "old_src": str(old),
           "same_release": same, "ratios": ratios, "runs": runs}
    path = ROOT / "bench" / "results" / out_name
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"same release in every run: {same}; written {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
