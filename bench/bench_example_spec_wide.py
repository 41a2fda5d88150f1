"""``incrowd publish FILE --example-spec`` on a very wide labelled file, timed.

Writes an SPSS file of ``--columns`` labelled categorical columns (codes 1, 2 and the
user-missing 3 "Not stated") plus a respondent id over ``--rows`` rows, then runs
``--example-spec`` on it in a fresh process, and reports its wall and CPU seconds and the longest
line it printed. ``--src`` runs another checkout's source (to time the code before a change).

    .venv/bin/python bench/bench_example_spec_wide.py [--columns 10000] [--rows 20] [--src path/to/src]

Prints one Markdown table row.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat

HERE = Path(__file__).resolve().parent


def write_wide(path: Path, n_rows: int, n_columns: int) -> Path:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.integers(1, 4, (n_rows, n_columns)).astype(float),
                         columns=[f"q{i:05d}" for i in range(n_columns)])
    frame.insert(0, "respid", np.arange(1.0, n_rows + 1))
    labels = {c: {1.0: "yes", 2.0: "no", 3.0: "Not stated"} for c in frame.columns[1:]}
    pyreadstat.write_sav(frame, str(path), variable_value_labels=labels,
                         missing_ranges={c: [3.0] for c in frame.columns[1:]},
                         column_labels={c: f"Question {c}" for c in frame.columns})
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--columns", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument("--src", type=Path, default=HERE.parent / "src")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = write_wide(Path(tmp) / "wide.sav", args.rows, args.columns)
        env = {**os.environ, "PYTHONPATH": str(args.src.resolve())}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "incrowd.cli", "publish", str(source), "--example-spec"],
                              env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    longest = max((len(line) for line in done.stdout.splitlines()), default=0)
    print("| columns | rows | exit | wall s | CPU s | longest line |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| {args.columns + 1:,} | {args.rows} | {done.returncode} | {wall:.1f} | {cpu:.1f} | {longest:,} |")


if __name__ == "__main__":
    main()
