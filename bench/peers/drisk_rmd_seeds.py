"""sdcMicro's dRiskRMD over many seeds, exported once as a test fixture.

Run from the repository root: ``.venv/bin/python bench/peers/drisk_rmd_seeds.py [--seeds 20]``.
Needs R with sdcMicro 5.8.0 (library folder ``$INCROWD_RLIB``, default
``/root/.local/share/incrowd-peers/Rlib``); a bench, never a test (CI has no R).

sdcMicro's ``dRiskRMD`` takes its scatter from robustbase's ``covMcd``, whose FAST-MCD draws
random subsets: the figures move with the seed. This script runs ``dRiskRMD`` under
``set.seed(s)`` for s = 0 .. seeds - 1 on two data sets and writes the minimum, maximum and
every value of risk1, risk2, wrisk1 and wrisk2 (k = 0.7 and k = 0.01, k2 = 0.05) to
``tests/data/sdcmicro_drisk_rmd.json``, with incrowd's figures beside them (``--compare``):

* ``census``: Census's 10 columns without PTOTVAL, PEARNVAL and ERNVAL (their scatter is
  singular), released by incrowd's MDAV at k = 3;
* ``adult``: the first 10,000 rows of Adult's age, education-num and hours-per-week, released
  by incrowd's MDAV at k = 5.

The releases are made here by incrowd; the fixture keeps a fingerprint of each (the sum of all
its values) so that a test can tell that it rebuilt the same release.

``factors``: robustbase's ``covMcd`` on a table with no random numbers (``factor_table``, 300
rows, p = 2 and 4: ``sin(0.7 i (j + 1))`` with every 17th row shifted by 4), its best h-subset
(``best``, 1-based), raw scatter and reweighted scatter, to check the correction factors alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _common import data_dir  # noqa: E402

import incrowd  # noqa: E402

FIXTURE = HERE.parent.parent / "tests" / "data" / "sdcmicro_drisk_rmd.json"
CENSUS_DROP = ["PTOTVAL", "PEARNVAL", "ERNVAL"]
ADULT_COLUMNS = ["age", "education-num", "hours-per-week"]
KS = (0.7, 0.01)

R_CODE = r"""
.libPaths(c(Sys.getenv("INCROWD_RLIB"), .libPaths()))
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
x <- read.csv(args[1]); xm <- read.csv(args[2]); seeds <- as.integer(args[3])
out <- list()
for (k in c(0.7, 0.01)) {
  rows <- list()
  for (s in seq_len(seeds) - 1L) {
    set.seed(s)
    r <- suppressWarnings(dRiskRMD(x, xm = xm, k = k))
    rows[[length(rows) + 1]] <- unlist(r[c("risk1", "risk2", "wrisk1", "wrisk2")])
  }
  out[[as.character(k)]] <- do.call(rbind, rows)
}
cat(jsonlite::toJSON(lapply(out, function(m) as.data.frame(m)), digits = NA))
"""


def datasets() -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """The two (original, release) pairs, as the fixture was made from them."""
    census = pd.read_csv(data_dir() / "census.csv").astype(np.float64)
    census = census[[c for c in census.columns if c not in CENSUS_DROP]]
    adult = pd.read_csv(data_dir() / "adult.csv.gz", usecols=ADULT_COLUMNS, nrows=10_000)[ADULT_COLUMNS]
    adult = adult.astype(np.float64)
    out = {}
    for name, frame, k in (("census", census, 3), ("adult", adult, 5)):
        release = incrowd.microaggregate(frame, k, "mdav").table[frame.columns].astype(np.float64)
        out[name] = (frame, release)
    return out


def factor_table(p: int, n: int = 300) -> np.ndarray:
    """The table of the ``factors`` check, as the R code builds it."""
    i = np.arange(1, n + 1)[:, None]
    j = np.arange(1, p + 1)[None, :]
    return np.sin(0.7 * i * (j + 1)) + 4.0 * (i % 17 == 0)


FACTOR_R = r"""
suppressMessages(library(robustbase))
out <- list()
for (p in c(2, 4)) {
  i <- matrix(seq_len(300), 300, p); j <- matrix(seq_len(p), 300, p, byrow = TRUE)
  x <- sin(0.7 * i * (j + 1)) + 4 * (i %% 17 == 0)
  set.seed(0); m <- covMcd(x)
  out[[as.character(p)]] <- list(best = m$best, raw = as.vector(m$raw.cov), cov = as.vector(m$cov))
}
cat(jsonlite::toJSON(out, digits = NA))
"""


def fingerprint(release: pd.DataFrame) -> float:
    return float(release.to_numpy(np.float64).sum())


def run_r(original: pd.DataFrame, release: pd.DataFrame, seeds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        a, b, r = Path(tmp, "x.csv"), Path(tmp, "xm.csv"), Path(tmp, "seeds.R")
        original.to_csv(a, index=False)
        release.to_csv(b, index=False, float_format="%.17g")
        r.write_text(R_CODE, encoding="utf-8")
        env = {**os.environ,
               "INCROWD_RLIB": os.environ.get("INCROWD_RLIB", "/root/.local/share/incrowd-peers/Rlib")}
        proc = subprocess.run(["Rscript", str(r), str(a), str(b), str(seeds)], capture_output=True, text=True,
                              env=env)
        if proc.returncode:
            sys.exit(f"Rscript failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--compare", action="store_true", help="print incrowd's figures beside the fixture's range")
    args = ap.parse_args()
    if args.compare:
        from incrowd.cli._bench_entry import drisk_rmd

        fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
        print("| data | k | measure | sdcMicro min | sdcMicro max | incrowd |\n|---|---:|---|---:|---:|---:|")
        for name, (x, xm) in datasets().items():
            for k in KS:
                ours = drisk_rmd(x, xm, k=k)
                for key in ("risk1", "risk2", "wrisk1", "wrisk2"):
                    ref = fixture["datasets"][name][str(k)][key]
                    print(f"| {name} | {k} | {key} | {ref['min']:.6g} | {ref['max']:.6g} | {ours[key]:.6g} |")
        return
    out = {"made_by": "bench/peers/drisk_rmd_seeds.py: sdcMicro 5.8.0 dRiskRMD (robustbase covMcd) under "
                      f"set.seed(s), s = 0..{args.seeds - 1}; k2 = 0.05",
           "seeds": args.seeds, "datasets": {}}
    for name, (x, xm) in datasets().items():
        res = run_r(x, xm, args.seeds)
        entry = {"rows": int(x.shape[0]), "columns": list(x.columns), "release_sum": fingerprint(xm)}
        for k in KS:
            table = res[str(k)]
            entry[str(k)] = {key: {"min": min(r[key] for r in table), "max": max(r[key] for r in table),
                                   "values": [r[key] for r in table]}
                             for key in ("risk1", "risk2", "wrisk1", "wrisk2")}
        out["datasets"][name] = entry
        print(name, {k: {m: (v["min"], v["max"]) for m, v in entry[k].items()} for k in map(str, KS)}, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        r = Path(tmp, "factors.R")
        r.write_text(FACTOR_R, encoding="utf-8")
        proc = subprocess.run(["Rscript", str(r)], capture_output=True, text=True, check=True)
    out["factors"] = json.loads(proc.stdout.strip().splitlines()[-1])
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
