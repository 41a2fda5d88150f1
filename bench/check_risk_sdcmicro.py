"""sdcMicro's disclosure-risk figures next to incrowd's on Census.

Run from the repository root: ``.venv/bin/python bench/check_risk_sdcmicro.py``. Needs R with
sdcMicro (library folder ``$INCROWD_RLIB``, default ``/work/rlib``) and robustbase; it is a
bench, never a test (CI has no R). Prints a Markdown table for two releases of Census: incrowd's
MDAV k = 3, and additive noise (5 % of each column's sd, seed 0), which leaves the figures
away from 0 and 1.

* dRisk on all 13 columns. dRiskRMD on 10 columns: Census's PTOTVAL is a sum of other columns
  and PEARNVAL = ERNVAL = WSALVAL for most rows, so the MCD scatter of all 13 is singular
  (sdcMicro stops with "system is computationally singular", incrowd with a DataError); the
  three are left out. incrowd's dRiskRMD is shown with its own MCD (scikit-learn) and with
  robustbase's scatter passed as ``covariance=`` (the same random stream as sdcMicro's call).
* sdcMicro 5.8.0 has no record-linkage function: the R column of the linkage row is plain R
  code in this script from the written definition (standardize by the original's means and
  sds, Euclidean distance, nearest original, ties shared 1/t).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import incrowd  # noqa: E402
from _common import data_dir  # noqa: E402
from incrowd.cli._bench_entry import drisk, drisk_rmd, record_linkage  # noqa: E402

RMD_DROP = ["PTOTVAL", "PEARNVAL", "ERNVAL"]

R_CODE = r"""
.libPaths(Sys.getenv("INCROWD_RLIB"))
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
x <- read.csv(args[1]); xm <- read.csv(args[2])
drop <- strsplit(args[3], ",")[[1]]
xr <- x[, !(names(x) %in% drop)]; xmr <- xm[, !(names(xm) %in% drop)]
set.seed(0); cov <- suppressWarnings(robustbase::covMcd(scale(xr))$cov)
set.seed(0); r07 <- suppressWarnings(dRiskRMD(xr, xm = xmr, k = 0.7))
set.seed(0); r001 <- suppressWarnings(dRiskRMD(xr, xm = xmr))
mu <- colMeans(x); s <- apply(x, 2, sd)
xs <- scale(x, mu, s); xms <- scale(xm, mu, s)
n <- nrow(xs); credit <- numeric(n)
for (i in seq_len(n)) {
  d <- sqrt(colSums((t(xs) - xms[i, ])^2))
  ties <- which(d <= min(d) * (1 + 1e-12))
  credit[i] <- if (i %in% ties) 1 / length(ties) else 0
}
cat(jsonlite::toJSON(list(
  drisk = dRisk(x, xm = xm), drisk_k01 = dRisk(x, xm = xm, k = 0.1),
  rmd07 = r07[c("risk1", "risk2", "wrisk1", "wrisk2")],
  rmd001 = r001[c("risk1", "risk2", "wrisk1", "wrisk2")],
  cov = sprintf("%.17g", cov), p = ncol(cov), linkage = mean(credit)), auto_unbox = TRUE, digits = NA))
"""


def _run_r(original: pd.DataFrame, release: pd.DataFrame) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        a, b, r = Path(tmp, "x.csv"), Path(tmp, "xm.csv"), Path(tmp, "check.R")
        original.to_csv(a, index=False)
        release.to_csv(b, index=False)
        r.write_text(R_CODE, encoding="utf-8")
        env = {**os.environ, "INCROWD_RLIB": os.environ.get("INCROWD_RLIB", "/work/rlib")}
        proc = subprocess.run(["Rscript", str(r), str(a), str(b), ",".join(RMD_DROP)],
                              capture_output=True, text=True, env=env)
        if proc.returncode:
            sys.exit(f"Rscript failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _rows(original: pd.DataFrame, release: pd.DataFrame):
    ref = _run_r(original, release)
    x = original.to_numpy(np.float64)
    xm = release.to_numpy(np.float64)
    keep = [c for c in original.columns if c not in RMD_DROP]
    xr, xmr = original[keep].to_numpy(np.float64), release[keep].to_numpy(np.float64)
    # all 17 digits: Census's MCD scatter is ill-conditioned, 15 digits move wrisk in the 9th
    rcov = np.asarray([float(v) for v in ref["cov"]]).reshape(ref["p"], ref["p"])
    rows = [("dRisk (k = 0.05)", ref["drisk"], drisk(x, xm), None),
            ("dRisk (k = 0.1)", ref["drisk_k01"], drisk(x, xm, k=0.1), None)]
    for k, key_r in ((0.7, "rmd07"), (0.01, "rmd001")):
        ours = drisk_rmd(xr, xmr, k=k)
        given = drisk_rmd(xr, xmr, k=k, covariance=rcov)
        for key in ("risk1", "risk2", "wrisk1", "wrisk2"):
            rows.append((f"dRiskRMD {key} (k = {k}, k2 = 0.05)", ref[key_r][key], ours[key], given[key]))
    link = record_linkage(x, xm)
    rows.append(("distance-based linkage (R: plain code)", ref["linkage"], link["distance_based"], None))
    rows.append(("global linkage, exact assignment (no R figure)", None, link["global"]["share"], None))
    return rows


def _fmt(v):
    return "n/a" if v is None else f"{v:.10g}"


def main() -> None:
    original = pd.read_csv(data_dir() / "census.csv").astype(np.float64)
    mdav = incrowd.microaggregate(original, 3, "mdav").table[original.columns].astype(np.float64)
    rng = np.random.default_rng(0)
    noise = original + rng.normal(size=original.shape) * (0.05 * original.std(ddof=1)).to_numpy()
    print(f"Census ({original.shape[0]} x {original.shape[1]}); sdcMicro 5.8.0 (robustbase covMcd, set.seed(0)) "
          "vs incrowd (scikit-learn MinCovDet, random_state 0; and with robustbase's scatter given); "
          f"dRiskRMD on the 10 columns without {', '.join(RMD_DROP)}\n")
    print("| release | measure | sdcMicro / R | incrowd | incrowd with R's MCD scatter |\n|---|---|---:|---:|---:|")
    for label, release in (("MDAV k = 3", mdav), ("noise 5 % sd", noise)):
        for name, rv, ov, gv in _rows(original, release):
            print(f"| {label} | {name} | {_fmt(rv)} | {_fmt(ov)} | {_fmt(gv)} |")


if __name__ == "__main__":
    main()
