"""Seconds of ``incrowd risk`` (the whole process) on Adult resampled to 1,000,000 rows, 6 keys.

Run from the repository root: ``.venv/bin/python bench/bench_risk.py [rows] [repeats] [--sdcmicro]``
(default 1,000,000 rows, 3 repeats). The rows are drawn with replacement from Adult (seed 0),
keys age, sex, race, marital-status, education, native-country ('?' written as an empty cell:
missing), weight
fnlwgt. The file is written once as CSV to a temporary folder; each repeat runs
``incrowd risk FILE --qi ... --weight fnlwgt --json`` as a new process, after one warm-up run
(numba's cache filled), and the median is printed. ``--sdcmicro`` also times sdcMicro 5.8.0's
``measure_risk`` on the same file (R, library ``$INCROWD_RLIB``), reading excluded.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _common import data_dir  # noqa: E402

KEYS = ["age", "sex", "race", "marital-status", "education", "native-country"]

R_CODE = r"""
args <- commandArgs(trailingOnly = TRUE)
.libPaths(c(Sys.getenv("INCROWD_RLIB", "/root/.local/share/incrowd-peers/Rlib"), .libPaths()))
suppressMessages(library(sdcMicro))
d <- read.csv(args[1], na.strings = "", check.names = FALSE, stringsAsFactors = FALSE)
names(d) <- gsub("-", "_", names(d))
keys <- c("age", "sex", "race", "marital_status", "education", "native_country")
t <- system.time(r <- measure_risk(d, keyVars = keys, w = "fnlwgt"))[["elapsed"]]
cat(sprintf("%.17g %.17g\n", t, r$global_risk_ER))
"""


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rows = int(args[0]) if args else 1_000_000
    repeats = int(args[1]) if len(args) > 1 else 3
    adult = pd.read_csv(Path(data_dir()) / "adult.csv.gz", dtype=str, keep_default_na=False)
    rng = np.random.default_rng(0)
    sample = adult.iloc[rng.integers(0, len(adult), rows)][KEYS + ["fnlwgt"]]
    # Adult's '?' (unknown) as an empty cell: missing for incrowd and for R alike
    sample = sample.replace("?", "")
    exe = str(Path(sys.executable).with_name("incrowd"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "adult_resampled.csv"
        sample.to_csv(path, index=False)
        command = [exe, "risk", str(path), "--qi", ",".join(KEYS), "--weight", "fnlwgt", "--json"]
        subprocess.run(command, check=True, capture_output=True)  # warm: numba's cache
        times, cpu, inner = [], [], []
        for _ in range(repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            times.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            inner.append(json.loads(done.stdout)["about"]["seconds"])
        out = json.loads(done.stdout)
        print(f"Adult resampled to {rows:,} rows, 6 keys, weight fnlwgt; {platform.machine()}, shared machine; "
              f"median of {repeats}\n")
        print("| what | seconds |\n|---|---:|")
        print(f"| `incrowd risk` whole process (read CSV, measure, JSON), wall | {np.median(times):.2f} |")
        print(f"| the same, CPU (user + system; less sensitive to other load) | {np.median(cpu):.2f} |")
        for key in inner[0]:
            print(f"| in process: {key} | {np.median([s[key] for s in inner]):.2f} |")
        print(f"\nexpected re-identifications {out['summary']['expected_reidentifications']:.6g}")
        if "--sdcmicro" in sys.argv:
            script = Path(tmp) / "m.R"
            script.write_text(R_CODE)
            done = subprocess.run(["Rscript", str(script), str(path)], check=True, capture_output=True, text=True,
                                  env=dict(os.environ))
            seconds, er = map(float, done.stdout.split())
            print(f"sdcMicro measure_risk: {seconds:.2f} s (reading excluded), expected re-identifications "
                  f"{er:.6g}; incrowd in process {np.median([s['individual_risk'] for s in inner]):.2f} s")


if __name__ == "__main__":
    main()
