"""The Dask publish of ``bench/publish_dask.py`` with two versions of incrowd, interleaved.

Run from the repository root: ``.venv/bin/python bench/publish_dask_before_after.py OLD_SRC [rows]
[--rounds R]`` (default 1,000,000 rows, 1 round). ``OLD_SRC`` is the ``src`` folder of the
version to compare with (a ``git worktree`` of the older commit); this tree's ``src`` is the
other. Each round runs the old version and then this one (the next round the other way round),
each in a fresh process on a fresh ``local:4`` cluster with 2 GiB per worker, on the same
Parquet dataset, so that the machine's load falls on both alike. Writes
``bench/results/publish_dask_before_after.json``: per run its seconds, its phases and its
release's figures (equal releases are checked).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _common.machine import machine_line, now_utc  # noqa: E402
from publish_dask import CATEGORICAL  # noqa: E402
from risk_dask import child, generate  # noqa: E402

SCRIPT = str(ROOT / "bench" / "publish_dask.py")


def main() -> None:
    args = sys.argv[1:]
    rounds = 1
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at:at + 2]
    old = Path(args[0]).resolve()
    rows = int(args[1]) if len(args) > 1 else 1_000_000
    work = Path(tempfile.mkdtemp(prefix="incrowd-before-after-"))
    runs = []
    try:
        folder = work / "data"
        generate(rows, folder, known=CATEGORICAL)
        for r in range(rounds):
            order = [("before", old), ("after", ROOT / "src")]
            for name, src in order if r % 2 == 0 else order[::-1]:
                result = child("dask", folder, SCRIPT, src=src)
                runs.append({"version": name, "round": r + 1, **result})
                print(name, f"{result['seconds']:.1f} s", [(p, round(s, 1)) for p, s in result["phases"]], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    same = len({json.dumps(r["summary"], sort_keys=True) for r in runs}) == 1
    out = {"written": now_utc(), "machine": machine_line(), "rows": rows, "old_src": str(old),
           "same_release": same, "runs": runs}
    path = ROOT / "bench" / "results" / "publish_dask_before_after.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"same release in every run: {same}; written {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
