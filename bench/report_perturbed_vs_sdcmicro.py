"""The report's measures of perturbed amounts beside sdcMicro's, on testdata.

Run from the repository root, with sdcMicro installed in an R library (default /work/rlib)::

    PYTHONPATH=src .venv/bin/python bench/report_perturbed_vs_sdcmicro.py [--rlib DIR]

sdcMicro 5.8.0: ``createSdcObj(testdata, keyVars = c("urbrur", "water", "sex", "age", "relat",
"hhcivil"), numVars = c("income", "expend", "savings"), weightVar = "sampling_weight")``, then
``microaggregation(method = "mdav", aggr = 3)`` or (``set.seed(1)``) ``addNoise(method =
"additive", noise = 10)``; its ``@utility$il1s``, ``@utility$eigen`` and ``@risk$numeric``
(dRisk), and its perturbed amounts (written with 17 significant digits). incrowd: ``incrowd.report``
of testdata against the same file with sdcMicro's amounts in place (``perturb=`` the three), so
both measure the same release; and incrowd's own microaggregated release (``incrowd.publish`` with
a ``[[perturb]]`` step, k = 3), equal to sdcMicro's cell for cell. Prints a Markdown table of the
figures and their relative difference; exits 1 when a figure on the same release differs by more
than 1e-9 relative (an agreement check, not a timing).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "testdata.csv"
KEYS = ["urbrur", "water", "sex", "age", "relat", "hhcivil"]
NUMERIC = ["income", "expend", "savings"]

R_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
.libPaths(args[1])
suppressMessages(library(sdcMicro))
d <- read.csv(args[2])
make <- function() createSdcObj(d, keyVars = c("urbrur", "water", "sex", "age", "relat", "hhcivil"),
  numVars = c("income", "expend", "savings"), weightVar = "sampling_weight")
out <- list()
for (m in c("microaggregation", "noise")) {
  s <- make()
  if (m == "microaggregation") s <- microaggregation(s, method = "mdav", aggr = 3)
  else { set.seed(1); s <- addNoise(s, method = "additive", noise = 10) }
  out[[m]] <- list(il1s = s@utility$il1s, eigen = s@utility$eigen, drisk = s@risk$numeric)
  xm <- s@manipNumVars
  write.csv(format(xm, digits = 17), file.path(args[3], paste0(m, ".csv")), row.names = FALSE)
}
writeLines(jsonlite::toJSON(out, auto_unbox = TRUE, digits = 17), file.path(args[3], "figures.json"))
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rlib", default="/work/rlib")
    args = parser.parse_args(argv)
    import incrowd

    original = pd.read_csv(DATA)
    rows = []
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "run.R"
        script.write_text(R_SCRIPT, encoding="utf-8")
        subprocess.run(["Rscript", str(script), args.rlib, str(DATA), tmp], check=True, capture_output=True)
        theirs = json.loads((Path(tmp) / "figures.json").read_text())
        for method in ("microaggregation", "noise"):
            release = original.copy()
            release[NUMERIC] = pd.read_csv(Path(tmp) / f"{method}.csv")[NUMERIC].astype(float).to_numpy()
            measured = incrowd.report(original, release, KEYS, perturb=NUMERIC, figures=False)
            ours = {"il1s": measured.utility["perturbed"]["il1s"], "eigen": measured.utility["perturbed"]["eigen"],
                    "drisk": measured.risk["perturbed"]["drisk"]}
            for name in ("il1s", "eigen", "drisk"):
                r, o = float(theirs[method][name]), float(ours[name])
                diff = abs(o - r) / max(abs(r), 1e-300)
                failed |= diff > 1e-9
                rows.append((f"{method} (sdcMicro's release)", name, r, o, diff))
    spec = {"privacy": {"k": 3, "max_suppression": "100%", "suppression": "cells"},
            "columns": {**dict.fromkeys(KEYS, "categorical"), **dict.fromkeys(NUMERIC, "perturb"),
                        "sampling_weight": "weight"},
            "perturb": [{"columns": NUMERIC, "method": "microaggregation", "k": 3}]}
    result = incrowd.publish(original, spec)
    own = incrowd.report(original, result.table, **result.report_options(), figures=False)
    for name, where in (("il1s", "utility"), ("eigen", "utility"), ("drisk", "risk")):
        r = float(theirs["microaggregation"][name])
        o = float(getattr(own, where)["perturbed"][name])
        rows.append(("microaggregation (incrowd's release)", name, r, o, abs(o - r) / max(abs(r), 1e-300)))
    print("| release | measure | sdcMicro 5.8.0 | incrowd | relative difference |")
    print("|---|---|---:|---:|---:|")
    for release_name, name, r, o, diff in rows:
        print(f"| {release_name} | {name} | {r:.10g} | {o:.10g} | {diff:.1e} |")
    if not np.isfinite([row[3] for row in rows]).all():
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
