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
t0, c0 = time.perf_counter(), time.process_time(); r = perturb(d, [step])
t, c = time.perf_counter() - t0, time.process_time() - c0
r.table[step["columns"]].to_parquet({out!r})
open({info!r}, "w").write(f"{{t}} {{c}}")
"""


def one(src: str, data: Path, out: Path, timeout: float) -> tuple[float, float] | None:
    """The call's seconds in a fresh process on ``src``, wall and CPU (on a machine shared with
    other work the CPU seconds move less with its load), or None past the timeout."""
    info = out.with_suffix(".txt")
    code = CALL.format(data=str(data), step=__import__("json").dumps(STEP), out=str(out), info=str(info))
    env = {**os.environ, "PYTHONPATH": src}
    try:
        subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    wall, cpu = info.read_text().split()
    return float(wall), float(cpu)


Times = dict[str, list[tuple[float, float] | None]]


def medians(times: Times, side: str) -> tuple[float, float] | None:
    """The median wall and CPU seconds of a side, or None where a call ran past the timeout."""
    done = [t for t in times.get(side, []) if t is not None]
    if not done or len(done) < len(times[side]):
        return None
    return float(np.median([t[0] for t in done])), float(np.median([t[1] for t in done]))


def shown(times: Times, side: str, timeout: float) -> str:
    got = medians(times, side)
    return "not run" if side not in times else f"past {timeout:.0f}" if got is None else f"{got[0]:.2f} / {got[1]:.2f}"


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
            times: Times = {s: [] for s in sides}
            for r in range(args.rounds):
                for side, src in (sides.items() if r % 2 == 0 else reversed(sides.items())):
                    times[side].append(one(src, data, Path(tmp) / f"{side}{n}.parquet", args.timeout))
                    print(n, side, times[side][-1], flush=True)
            before, after = (pd.read_parquet(Path(tmp) / f"{s}{n}.parquet") if (Path(tmp) / f"{s}{n}.parquet").exists()
                             else None for s in ("before", "after"))
            same = ("" if before is None or after is None
                    else f"{int((before.to_numpy() == after.to_numpy()).sum()):,} of {before.size:,}")

            b, a = medians(times, "before"), medians(times, "after")
            ratio = (f"{b[0] / a[0]:.1f} / {b[1] / a[1]:.1f}" if b and a
                     else f"above {args.timeout / a[0]:.0f}" if a and "before" in times else "")
            rows_out.append([f"{n:,}", shown(times, "before", args.timeout), shown(times, "after", args.timeout), ratio,
                             same, f"{os.getloadavg()[0]:.1f}"])
    print(md_table(["rows", "before: wall / CPU (s)", "after: wall / CPU (s)", "before / after", "cells equal",
                    "load average"], rows_out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
