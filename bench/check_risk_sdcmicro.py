"""sdcMicro's disclosure-risk figures next to incrowd's on Census (original vs MDAV k = 3).

Run from the repository root: ``.venv/bin/python bench/check_risk_sdcmicro.py [k]``. Needs R
with sdcMicro (library folder ``$INCROWD_RLIB``, default ``/work/rlib``) and robustbase; it is a
bench, never a test (CI has no R). Prints a Markdown table.

sdcMicro 5.8.0 has no record-linkage function, so the R column of the linkage rows is computed by
plain R code in this script from the written definition (standardize by the original's means
and sds, Euclidean distances, nearest original, ties shared); the global (assignment) linkage has
no R figure here (no assignment solver in the R library).
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

import incrowd
from incrowd.assessment._risk import drisk, drisk_rmd, record_linkage

R_CODE = r"""
.libPaths(Sys.getenv("INCROWD_RLIB"))
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
x <- read.csv(args[1]); xm <- read.csv(args[2])
set.seed(0)
r07 <- dRiskRMD(x, xm = xm, k = 0.7)
set.seed(0)
r001 <- dRiskRMD(x, xm = xm)
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
  linkage = mean(credit)), auto_unbox = TRUE, digits = NA))
"""


def main() -> None:
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    data = incrowd.data.data_dir() / "census.csv"
    original = pd.read_csv(data)
    release = incrowd.microaggregate(original, k, "mdav").aggregated
    x = original.to_numpy(np.float64)
    xm = release[original.columns].to_numpy(np.float64)
    with tempfile.TemporaryDirectory() as tmp:
        a, b, r = Path(tmp, "x.csv"), Path(tmp, "xm.csv"), Path(tmp, "check.R")
        original.to_csv(a, index=False)
        release[original.columns].to_csv(b, index=False)
        r.write_text(R_CODE, encoding="utf-8")
        env = {**os.environ, "INCROWD_RLIB": os.environ.get("INCROWD_RLIB", "/work/rlib")}
        proc = subprocess.run(["Rscript", str(r), str(a), str(b)], capture_output=True, text=True, env=env)
        if proc.returncode:
            sys.exit(f"Rscript failed:\n{proc.stderr}")
    ref = json.loads(proc.stdout.strip().splitlines()[-1])
    ours07 = drisk_rmd(x, xm, k=0.7)
    ours001 = drisk_rmd(x, xm, k=0.01)
    link = record_linkage(x, xm)
    rows = [
        ("dRisk (k = 0.05)", ref["drisk"], drisk(x, xm)),
        ("dRisk (k = 0.1)", ref["drisk_k01"], drisk(x, xm, k=0.1)),
    ]
    for label, r_res, o_res in (("k = 0.7", ref["rmd07"], ours07), ("k = 0.01", ref["rmd001"], ours001)):
        for key in ("risk1", "risk2", "wrisk1", "wrisk2"):
            rows.append((f"dRiskRMD {key} ({label}, k2 = 0.05)", r_res[key], o_res[key]))
    rows.append(("distance-based linkage (R: plain code)", ref["linkage"], link["distance_based"]))
    rows.append(("global linkage (exact assignment)", None, link["global"]["share"]))
    print(f"Census ({x.shape[0]} x {x.shape[1]}), original vs incrowd MDAV k = {k}; "
          f"sdcMicro 5.8.0 with robustbase covMcd (set.seed(0)) vs incrowd (scikit-learn MinCovDet, random_state 0)\n")
    print("| measure | sdcMicro / R | incrowd | difference |\n|---|---:|---:|---:|")
    for name, rv, ov in rows:
        if rv is None:
            print(f"| {name} | n/a | {ov:.6f} | |")
        else:
            print(f"| {name} | {rv:.6f} | {ov:.6f} | {ov - rv:+.2e} |")


if __name__ == "__main__":
    main()
