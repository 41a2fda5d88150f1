"""``negotiate`` with t on Adult: whole CLI processes of ``lattice build --sensitive`` and
``negotiate --k K --l L --t T``, against ``publish`` with the same spec (same node, same
suppression?).

Data: ``adult_arx/adult.csv`` (30,162 rows) with the ARX hierarchies of that folder. Two setups:
the 8 quasi-identifiers with ``salary-class`` (income) sensitive, and the 7 others with
``occupation`` sensitive. ``publish`` gets ``allow_full_suppression = true`` so that its
candidates are the lattice's (every level up to the top). Each command runs once untimed (numba's
cache warm, files in the page cache), then 3 times; the table gives the medians (wall seconds of
the whole process).

Run: ``.venv/bin/python bench/bench_negotiate_t.py [--k 5 --l 2 --t 0.2 --max-suppression 1%]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import data_dir

INCROWD = str(Path(sys.executable).with_name("incrowd"))
ALL = ["age", "education", "marital-status", "occupation", "race", "workclass", "sex", "native-country"]
SETUPS = {
    "8 QI, salary-class": (ALL, "salary-class"),
    "7 QI, occupation": ([a for a in ALL if a != "occupation"], "occupation"),
}


def _timed(args: list[str], repeats: int = 3) -> tuple[float, str]:
    subprocess.run(args, check=True, capture_output=True)  # warm: numba's cache, the page cache
    times, out = [], ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        done = subprocess.run(args, check=True, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        out = done.stdout
    return statistics.median(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--l", type=int, default=2)
    parser.add_argument("--t", type=float, default=0.2)
    parser.add_argument("--max-suppression", default="1%")
    parser.add_argument("--metric", default="loss")
    opts = parser.parse_args()
    folder = data_dir() / "adult_arx"
    data = folder / "adult.csv"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (qis, sensitive) in SETUPS.items():
            lattice = Path(tmp) / "adult.duckdb"
            build_s, _ = _timed([INCROWD, "lattice", "build", str(data), "--hierarchies", str(folder),
                                 "--qi", ",".join(qis), "--sensitive", sensitive, "-o", str(lattice), "--json"])
            ask = [INCROWD, "negotiate", str(lattice), "--k", str(opts.k), "--l", str(opts.l), "--t", str(opts.t),
                   "--max-suppression", opts.max_suppression, "--metric", opts.metric, "--json"]
            negotiate_s, out = _timed(ask)
            answer = json.loads(out)
            without_t_s, _ = _timed([a for a in ask if a not in ("--t", str(opts.t))])
            spec = Path(tmp) / "spec.toml"
            lines = ["[privacy]", f"k = {opts.k}", f"l = {opts.l}", f"t = {opts.t}",
                     f'max_suppression = "{opts.max_suppression}"', f'metric = "{opts.metric}"',
                     "allow_full_suppression = true", "", "[columns]"]
            lines += [f'"{a}" = {{ role = "categorical", hierarchy = "{folder / f"adult_hierarchy_{a}.csv"}" }}'
                      for a in qis]
            lines.append(f'"{sensitive}" = "sensitive"')
            spec.write_text("\n".join(lines) + "\n")
            publish_s, out = _timed([INCROWD, "publish", str(data), "--spec", str(spec), "-o",
                                     str(Path(tmp) / "release.csv"), "--json"])
            released = json.loads(out)
            exact = answer["exact"] or {}
            rows.append((name, build_s, without_t_s, negotiate_s, answer["status"], answer["nodes_visited"],
                         exact.get("suppressed"), publish_s, released["suppressed"],
                         exact.get("levels") == released["levels"], exact.get("levels")))
    print(f"k={opts.k}, l={opts.l}, t={opts.t}, max suppression {opts.max_suppression}, metric {opts.metric}; "
          "wall seconds of the whole process, medians of 3 after a warm run\n")
    print("| setup | lattice build s | negotiate k, l s | negotiate k, l, t s | status | nodes visited "
          "| negotiate suppressed | publish s | publish suppressed | same node | node |")
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | --- |")
    for r in rows:
        print(f"| {r[0]} | {r[1]:.2f} | {r[2]:.2f} | {r[3]:.2f} | {r[4]} | {r[5]} | {r[6]} | {r[7]:.2f} | {r[8]} | "
              f"{'yes' if r[9] else 'no'} | {r[10]} |")


if __name__ == "__main__":
    main()
