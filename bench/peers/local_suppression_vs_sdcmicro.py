"""Local suppression: incrowd's ``local_suppression`` beside sdcMicro's ``localSuppression``.

Run from the repository root: ``.venv/bin/python bench/peers/local_suppression_vs_sdcmicro.py
[--adult-keys 6|8] [--skip-r] [--no-fixture]``. Needs R with sdcMicro 5.8.0 (library folder ``$INCROWD_RLIB``,
default ``/root/.local/share/incrowd-peers/Rlib``); a bench, never a test (CI has no R).

For sdcMicro's ``testdata`` (its 7 keys urbrur, roof, walls, water, electcon, relat, sex; read
from the committed fixture ``tests/data/sdcmicro_testdata_risk.csv.gz``) and for Adult (48,842
rows; 6 keys sex, race, marital-status, workclass, relationship, education, or those and
occupation, native-country), at k = 2, 3, 5, with sdcMicro's default importance and with a
given one, the table gives the suppressed cells and seconds of both. incrowd runs with
``missing_matches = "any"``, sdcMicro's meaning of a missing value; each of incrowd's results
is handed to sdcMicro's ``freqCalc`` in the same R run, whose smallest ``fk`` must be >= k
(column "sdcMicro's fk of incrowd's"). The "itself" column gives incrowd's cells when a missing
value is a value of its own (a stricter promise; sdcMicro has no such mode).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from _common import data_dir  # noqa: E402

from incrowd.generalization import local_suppression  # noqa: E402

TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
#: a given importance (1 = most important): the many-valued relat and water kept longest
TESTDATA_IMPORTANCE = [4, 5, 6, 2, 3, 1, 7]
ADULT_KEYS = {6: ["sex", "race", "marital-status", "workclass", "relationship", "education"],
              8: ["sex", "race", "marital-status", "workclass", "relationship", "education", "occupation",
                  "native-country"]}
KS = (2, 3, 5)

R_CODE = r"""
.libPaths(c(Sys.getenv("INCROWD_RLIB"), .libPaths()))
suppressMessages(library(sdcMicro))
tasks <- jsonlite::fromJSON(commandArgs(trailingOnly = TRUE)[1], simplifyVector = FALSE)
out <- list()
for (t in tasks) {
  x <- read.csv(t$data, stringsAsFactors = TRUE, na.strings = "", check.names = FALSE)
  # sdcMicro builds R expressions from the key names: syntactic names only (marital.status)
  names(x) <- make.names(names(x)); keys <- make.names(unlist(t$keys))
  imp <- if (length(t$importance)) unlist(t$importance) else NULL
  before <- sum(is.na(x[, keys]))
  res <- list(name = t$name)
  if (isTRUE(t$run_sdc)) {
    el <- system.time(ls <- localSuppression(x[, keys], k = t$k, importance = imp, keyVars = keys))[["elapsed"]]
    res$sdc_cells <- sum(is.na(ls$xAnon)) - before
    res$sdc_seconds <- el
    res$sdc_min_fk <- min(freqCalc(as.data.frame(ls$xAnon), keyVars = keys)$fk)
  }
  y <- read.csv(t$ours, stringsAsFactors = TRUE, na.strings = "", check.names = FALSE)
  names(y) <- make.names(names(y))
  res$ours_min_fk <- min(freqCalc(y[, keys], keyVars = keys)$fk)
  out[[length(out) + 1]] <- res
}
cat(jsonlite::toJSON(out, auto_unbox = TRUE, digits = NA))
"""


def _datasets(adult_keys: int) -> dict:
    td = pd.read_csv(Path(__file__).resolve().parents[2] / "tests" / "data" / "sdcmicro_testdata_risk.csv.gz",
                     comment="#")[TESTDATA_KEYS]
    keys = ADULT_KEYS[adult_keys]
    adult = pd.read_csv(data_dir() / "adult.csv.gz", usecols=keys, dtype=str, keep_default_na=False)[keys]
    return {"testdata": (td, TESTDATA_KEYS, TESTDATA_IMPORTANCE),
            f"adult ({adult_keys} keys)": (adult, keys, list(range(len(keys), 0, -1)))}


def _median_time(fn, repeats: int) -> tuple[object, float]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, float(np.median(times))


FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "data" / "sdcmicro_local_suppression.json"


def _write_fixture(rows: list[dict], ref: dict) -> None:
    """sdcMicro's cells on testdata, the upper bound tests/test_local_suppression.py holds
    incrowd's to (Adult's figures are kept beside them for the record, not tested)."""
    given = dict(zip(TESTDATA_KEYS, TESTDATA_IMPORTANCE))
    out = {"made_by": "bench/peers/local_suppression_vs_sdcmicro.py: sdcMicro 5.8.0 localSuppression(x, k, "
                      "importance, keyVars) cells (NA after minus NA before) on testdata's 7 keys",
           "testdata": [], "adult": []}
    for r in rows:
        got = ref.get(f"{r['data']}|{r['importance']}|{r['k']}", {})
        if "sdc_cells" not in got:
            continue
        entry = {"k": r["k"], "importance": given if r["importance"] == "given" and r["data"] == "testdata" else {},
                 "sdcmicro_cells": int(got["sdc_cells"]), "sdcmicro_seconds": got["sdc_seconds"]}
        if r["data"] == "testdata":
            out["testdata"].append(entry)
        else:
            out["adult"].append({**entry, "data": r["data"], "importance": r["importance"]})
    FIXTURE.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--adult-keys", type=int, choices=(6, 8), default=6)
    ap.add_argument("--skip-r", action="store_true")
    ap.add_argument("--no-fixture", action="store_true",
                    help="print the table only; leave tests/data/sdcmicro_local_suppression.json as it is")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows, tasks = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (frame, keys, given) in _datasets(args.adult_keys).items():
            data_csv = Path(tmp, f"{len(tasks)}_data.csv")
            frame.to_csv(data_csv, index=False)
            for label, importance in (("default", None), ("given", given)):
                for k in KS:
                    res, secs = _median_time(
                        lambda f=frame, q=keys, kk=k, i=importance: local_suppression(f, q, kk, importance=i),
                        args.repeats)
                    strict = local_suppression(frame, keys, k, importance=importance, missing_matches="itself")
                    ours_csv = Path(tmp, f"{len(tasks)}_ours.csv")
                    res.table.to_csv(ours_csv, index=False)
                    tasks.append({"name": f"{name}|{label}|{k}", "data": str(data_csv), "ours": str(ours_csv),
                                  "keys": keys, "k": k, "importance": importance or [], "run_sdc": True})
                    rows.append({"data": name, "importance": label, "k": k, "cells": res.total, "seconds": secs,
                                 "itself": strict.total})
                    print(name, label, k, res.total, f"{secs:.3f}s", "itself", strict.total, flush=True)
        ref = {}
        if not args.skip_r:
            script = Path(tmp, "ls.R")
            script.write_text(R_CODE, encoding="utf-8")
            spec = Path(tmp, "tasks.json")
            spec.write_text(json.dumps(tasks), encoding="utf-8")
            env = {**os.environ,
                   "INCROWD_RLIB": os.environ.get("INCROWD_RLIB", "/root/.local/share/incrowd-peers/Rlib")}
            proc = subprocess.run(["Rscript", str(script), str(spec)], capture_output=True, text=True, env=env)
            if proc.returncode:
                sys.exit(f"Rscript failed:\n{proc.stderr}")
            ref = {r["name"]: r for r in json.loads(proc.stdout.strip().splitlines()[-1])}
    if ref and not args.no_fixture:
        _write_fixture(rows, ref)
    print("\n| data | importance | k | sdcMicro cells | incrowd cells | sdcMicro s | incrowd s | "
          "sdcMicro's fk of incrowd's (min) | incrowd, missing = itself |\n|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        got = ref.get(f"{r['data']}|{r['importance']}|{r['k']}", {})
        sc = got.get("sdc_cells", "n/a")
        ss = f"{got['sdc_seconds']:.2f}" if "sdc_seconds" in got else "n/a"
        print(f"| {r['data']} | {r['importance']} | {r['k']} | {sc} | {r['cells']} | {ss} | {r['seconds']:.2f} | "
              f"{got.get('ours_min_fk', 'n/a')} | {r['itself']} |")


if __name__ == "__main__":
    main()
