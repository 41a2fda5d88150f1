"""Exact MDAV (a ``[[perturb]]`` microaggregation step, k = 3) on Adult resampled, this checkout
against another (``--baseline``: the ``src`` of a checkout before the k-d tree kernel), taking
turns in fresh processes at each size, and whether both publish the same cells.

    python bench/mdav_tree_before_after.py --baseline /tmp/old/src --rows 100000 250000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import REPO, machine_line, md_table, now_utc  # noqa: E402
from perturbation_scale_vs_sdcmicro import adult  # noqa: E402

COLUMNS = ["fnlwgt", "capital_gain", "hours_per_week"]
STEP = {"columns": COLUMNS, "method": "microaggregation", "k": 3}

CALL = """
import json, time, sys
import pandas as pd
import numba.np.npyimpl  # numba's runtime loaded: the warm-up takes the kernel the timed call takes
from incrowd.perturbation import perturb
d = pd.read_parquet({data!r})
step = json.loads({step!r})
perturb(d.head(20000), [step])  # numba's kernels loaded, as a session's second call finds them
t0 = time.perf_counter(); r = perturb(d, [step]); t = time.perf_counter() - t0
r.table[step["columns"]].to_parquet({out!r})
open({info!r}, "w").write(str(t))
"""


def one(src: str, data: Path, out: Path, timeout: float) -> float | None:
    """The call's seconds in a fresh process on ``src``, or None past the timeout."""
    info = out.with_suffix(".txt")
    code = CALL.format(data=str(data), step=__import__("json").dumps(STEP), out=str(out), info=str(info))
    env = {**os.environ, "PYTHONPATH": src}
    try:
        subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return float(info.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="the src folder of the checkout to compare with")
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 250_000])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--sides", nargs="+", choices=["before", "after"], default=["before", "after"],
                        help="run only these (at a million rows the code before runs past 15 minutes)")
    args = parser.parse_args()
    sides = {s: src for s, src in (("before", args.baseline), ("after", str(REPO / "src"))) if s in args.sides}
    rows_out = []
    print(machine_line(), now_utc(), "load", os.getloadavg()[0])
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.rows:
            data = Path(tmp) / f"adult{n}.parquet"
            adult(n)[COLUMNS].to_parquet(data)
            times: dict[str, list[float | None]] = {s: [] for s in sides}
            for r in range(args.rounds):
                for side, src in (sides.items() if r % 2 == 0 else reversed(sides.items())):
                    times[side].append(one(src, data, Path(tmp) / f"{side}{n}.parquet", args.timeout))
                    print(n, side, times[side][-1], flush=True)
            before, after = (pd.read_parquet(Path(tmp) / f"{s}{n}.parquet") if (Path(tmp) / f"{s}{n}.parquet").exists()
                             else None for s in ("before", "after"))
            same = ("" if before is None or after is None
                    else f"{int((before.to_numpy() == after.to_numpy()).sum()):,} of {before.size:,}")

            def shown(ts: list[float | None]) -> str:
                done = [t for t in ts if t is not None]
                return f"{np.median(done):.2f}" if len(done) == len(ts) else f"past {args.timeout:.0f}"

            b, a = (shown(times[s]) if s in times else "not run" for s in ("before", "after"))
            ratio = (f"{float(b) / float(a):.1f}" if b[0].isdigit() and a[0].isdigit()
                     else f"above {args.timeout / float(a):.0f}" if b.startswith("past") and a[0].isdigit() else "")
            rows_out.append([f"{n:,}", b, a, ratio, same, f"{os.getloadavg()[0]:.1f}"])
    print(md_table(["rows", "before (s)", "after (s)", "before / after", "cells equal", "load average"], rows_out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
