"""The curator's household release made both ways, side by side on the same data: sdcMicro 5.8.0
and incrowd.

Run from the repository root (sdcMicro 5.8.0 built in LIBDIR)::

    PYTHONPATH=src .venv/bin/python bench/household_release_vs_sdcmicro.py --rlib /work/rlib

Data: sdcMicro's ``testdata`` (4,580 persons in 1,000 households). incrowd reads it as the curator
stores it (``tests/_household.py``: a labelled .sav with value labels, the user-missing code 9,
the weight ``sampling_weight`` and the household id ``ori_hid``); sdcMicro gets the same rows as
a CSV with the curator's recodes applied (age in ten-year bands, relat grouped), since those are
recodes the curator makes before ``createSdcObj``.

Both releases: keys urbrur, water, sex, age, relat, hhcivil, k = 3 by cell suppression;
income, expend and savings perturbed, once by MDAV microaggregation (k = 3) and once by
correlated noise (sdcMicro's ``correlated2``, delta 0.1 = incrowd's ``amount = 10``).

- sdcMicro: ``createSdcObj(keyVars, numVars, weightVar = "sampling_weight", hhId = "ori_hid")``,
  ``localSuppression(k = 3)``, ``microaggregation(method = "mdav", aggr = 3)`` (or
  ``addNoise``), ``extractManipData``: one R process.
- incrowd: one spec (urbrur and water ``household_level``, risk targets individual <= 0.1 and
  global < 1 %), one ``incrowd publish`` command, the .sav read back with pyreadstat.

Every figure of both releases is measured here by the same code on the released table (k with a
blank matching any value, sdcMicro's meaning; the individual, global and household risk as
sdcMicro defines them; IL1s and the eigenvalue change of the numVars; the weighted mean income
by urbrur); sdcMicro's own figures for its release are printed beside them. The housemate check
is the one incrowd runs on its written file, applied to both releases: how many blanks of a
household-level column a housemate's row gives away, and how many rows fall below k once they
are filled in.

Times: "call" is the protection alone, data loaded (R: the ``system.time`` of its calls;
incrowd: ``incrowd.publish`` plus ``write``, which verifies the written file), the median of 3
after one warm-up run; "process" is the whole command, starting the interpreter, reading the
file and writing the release, the median of 3 (numba's kernels compiled once before).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from _common import REPO, data_dir, machine_line, now_utc  # noqa: E402
from _household import AGE_BANDS, HOUSEHOLD_ID, KEYS, RELAT_GROUPS, WEIGHT, write_hierarchies, write_household  # noqa: E402

import incrowd  # noqa: E402
from incrowd.cli._bench_entry import benchmark_estimates, household_verifier, numeric_utility  # noqa: E402
from incrowd.exceptions import VerificationError  # noqa: E402
from incrowd.privacy import sample_risk  # noqa: E402
from incrowd.values import match_counts  # noqa: E402

NUMERIC = ["income", "expend", "savings"]
HOUSEHOLD_LEVEL = ["urbrur", "water"]
K = 3
REPEATS = 3

SPEC = """[privacy]
k = 3
suppression = "cells"
max_suppression = "100%"
missing_matches = "any"        # a blank matches any value, as in sdcMicro
max_individual_risk = 0.1
max_global_risk = 0.0099       # below 1 %
household_id = "renumber"

[columns]
ori_hid = "household"
urbrur = { role = "categorical", household_level = true }
water = { role = "categorical", household_level = true }
sex = "categorical"
age = { role = "categorical", hierarchy = "hierarchies/age.csv", match = "code" }
relat = { role = "categorical", hierarchy = "hierarchies/relat.csv", match = "label" }
hhcivil = "categorical"
sampling_weight = "weight"
income = "perturb"
expend = "perturb"
savings = "perturb"

[levels]                       # the curator's recodes: age in ten-year bands, relat grouped
urbrur = 0
water = 0
sex = 0
age = 1
relat = 1
hhcivil = 0

[[perturb]]
columns = ["income", "expend", "savings"]
{step}

[benchmarks]
estimates = ["income by urbrur"]
"""

STEPS = {
    "microaggregation": 'method = "microaggregation"\nk = 3',
    "noise": 'method = "noise"\nkind = "correlated"\namount = 10\nrandom_state = 1',
}

R_PERTURB = {
    "microaggregation": 'sdc <- microaggregation(sdc, method = "mdav", aggr = 3)',
    "noise": '{ set.seed(1); sdc <- addNoise(sdc, method = "correlated2", delta = 0.1) }',
}

R_SCRIPT = r"""
t_start <- Sys.time()
.libPaths("{rlib}"); suppressMessages(library(sdcMicro))
d <- read.csv("{data}", stringsAsFactors = FALSE)
keys <- c({keys})
for (v in keys) d[[v]] <- factor(d[[v]])
step <- function(expr) system.time(expr)[["elapsed"]]
s <- c()
s["createSdcObj"] <- step(sdc <- createSdcObj(d, keyVars = keys, numVars = c("income", "expend", "savings"),
                                              weightVar = "sampling_weight", hhId = "ori_hid"))
s["localSuppression"] <- step(sdc <- localSuppression(sdc, k = 3))
s["perturb"] <- step({perturb})
s["extractManipData"] <- step(out <- extractManipData(sdc))
write.csv(out, "{out}", row.names = FALSE, na = "")
ind <- get.sdcMicroObj(sdc, "risk")$individual
glob <- get.sdcMicroObj(sdc, "risk")$global
u <- get.sdcMicroObj(sdc, "utility")
info <- list(seconds = as.list(s), call = sum(s),
             own = list(global_risk = glob$risk, max_individual_risk = max(ind[, "risk"]),
                        household_risk = glob$hier_risk, max_household_risk = max(ind[, "hier_risk"]),
                        il1 = u$il1, eigen = u$eigen),
             process_inside = as.numeric(Sys.time() - t_start, units = "secs"))
writeLines(jsonlite::toJSON(info, auto_unbox = TRUE, digits = 15), "{info}")
"""


def recoded_csv(source: pd.DataFrame, meta, path: Path) -> None:
    """The rows sdcMicro gets: the source with the curator's recodes applied (the codes of the
    other keys as they are; a recoded key as its group's label)."""
    out = source.copy()
    out["age"] = source["age"].map(lambda a: next(f"{lo}-{hi}" for lo, hi in AGE_BANDS if lo <= a <= hi))
    labels = meta.variable_value_labels["relat"]
    out["relat"] = source["relat"].map(lambda v: RELAT_GROUPS[labels[v]])
    for c in KEYS:
        if c not in ("age", "relat"):
            out[c] = out[c].astype(np.int64)
    out.to_csv(path, index=False)


def blank(column: pd.Series) -> np.ndarray:
    return (column.isna() | (column.astype(object) == "")).to_numpy()


def key_table(table: pd.DataFrame) -> pd.DataFrame:
    """The keys as objects, a blank as None (what match_counts and the risk codes take)."""
    return pd.DataFrame({c: pd.Series(np.where(blank(table[c]), None, table[c].astype(str)), dtype=object)
                         for c in KEYS})


def housemates(table: pd.DataFrame) -> dict:
    """incrowd's check on a written release, run on ``table``: blanks of each household-level
    column that a housemate's row gives away, and the rows below k once all are filled in."""
    got: dict = {}
    for columns, name in [*(([c], c) for c in HOUSEHOLD_LEVEL), (HOUSEHOLD_LEVEL, "all")]:
        check = household_verifier(HOUSEHOLD_ID, columns, None, K, "any")
        try:
            check(table, KEYS, "release")
            got[name] = (0, 0)
        except VerificationError as error:
            found = re.search(r"\((\d+) such blanks in all; filled in, (\d+) rows fall below", str(error))
            if found is None:
                raise
            got[name] = (int(found[1]), int(found[2]))
    return got


def measures(source: pd.DataFrame, table: pd.DataFrame) -> dict:
    """Every figure of the side-by-side table, measured the same way on either tool's release."""
    keys = key_table(table)
    counts = match_counts(keys, KEYS, missing_matches="any")
    weights = table[WEIGHT].to_numpy(np.float64)
    fk, Fk = sample_risk.frequencies(sample_risk.key_codes(keys, KEYS), weights)
    risk = sample_risk.individual_risk(fk, Fk)
    household = sample_risk.household_risk(risk, table[HOUSEHOLD_ID].to_numpy())
    utility = numeric_utility(source[NUMERIC].to_numpy(np.float64), table[NUMERIC].to_numpy(np.float64), NUMERIC)
    release = table.copy()
    release["urbrur"] = pd.to_numeric(release["urbrur"], errors="coerce")
    bench = benchmark_estimates(source, release, ["income by urbrur"], weight=WEIGHT)
    return {"cells": {c: int(blank(table[c]).sum() - blank(source[c]).sum()) for c in KEYS},
            "k": int(counts.min()), "global_risk": float(risk.mean()), "max_individual_risk": float(risk.max()),
            "household_risk": float(household.mean()), "max_household_risk": float(household.max()),
            "il1s": utility["il1s"], "eigen": utility["eigen"], "benchmarks": bench,
            "housemates": housemates(table)}


def sdcmicro(rlib: str, data_csv: Path, folder: Path, release: str) -> tuple[dict, pd.DataFrame]:
    out, info = folder / f"sdc_{release}.csv", folder / f"sdc_{release}.json"
    script = folder / f"sdc_{release}.R"
    script.write_text(R_SCRIPT.format(rlib=rlib, data=data_csv, keys=", ".join(f'"{c}"' for c in KEYS),
                                      perturb=R_PERTURB[release], out=out, info=info), encoding="utf-8")
    calls, processes = [], []
    subprocess.run(["Rscript", str(script)], check=True, capture_output=True)
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        subprocess.run(["Rscript", str(script)], check=True, capture_output=True)
        processes.append(time.perf_counter() - t0)
        got = json.loads(info.read_text())
        calls.append(got["call"])
    got["call"], got["process"] = statistics.median(calls), statistics.median(processes)
    return got, pd.read_csv(out)


def ours(data: Path, folder: Path, release: str) -> tuple[dict, pd.DataFrame]:
    import pyreadstat

    spec_path = folder / f"{release}.toml"
    spec_path.write_text(SPEC.replace("{step}", STEPS[release]), encoding="utf-8")
    out = folder / f"incrowd_{release}.sav"
    command = [sys.executable, "-m", "incrowd.cli", "publish", str(data), "--spec", str(spec_path), "-o", str(out),
               "--json", "--report", str(folder / f"incrowd_{release}.json")]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run(command, check=True, capture_output=True, env=env)   # compiles numba's kernels once
    processes = []
    for _ in range(REPEATS):
        out.unlink()
        t0 = time.perf_counter()
        done = subprocess.run(command, check=True, capture_output=True, env=env, text=True)
        processes.append(time.perf_counter() - t0)
    summary = json.loads(done.stdout)
    spec = tomllib.loads(spec_path.read_text(encoding="utf-8"))
    calls = []
    for i in range(REPEATS + 1):
        target = folder / f"call_{release}_{i}.sav"
        t0 = time.perf_counter()
        incrowd.publish(data, spec, base_dir=folder).write(target)
        calls.append(time.perf_counter() - t0)
    table, _ = pyreadstat.read_sav(str(out), user_missing=True)
    return {"call": statistics.median(calls[1:]), "process": statistics.median(processes), "summary": summary}, table


def main() -> int:
    import pyreadstat

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rlib", default="/work/rlib")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        data = write_household(data_dir(), folder / "household.sav")
        write_hierarchies(folder / "hierarchies")
        # user-missing codes read as codes: "Not stated" is a value of the key, as incrowd reads it
        source, meta = pyreadstat.read_sav(str(data), user_missing=True)
        recoded = folder / "testdata_recoded.csv"
        recoded_csv(pd.read_csv(data_dir() / "testdata.csv"), meta, recoded)
        results = {}
        for release in STEPS:
            theirs, their_table = sdcmicro(args.rlib, recoded, folder, release)
            mine, my_table = ours(data, folder, release)
            results[release] = {"sdcMicro": {**theirs, **measures(source, their_table)},
                                "incrowd": {**mine, **measures(source, my_table)}}
            print(release, json.dumps({t: {k: v for k, v in r.items() if k not in ("summary", "benchmarks")}
                                       for t, r in results[release].items()}, default=str), flush=True)
    text = report(results)
    print(text)
    return 0


def _risk_line(r: dict) -> str:
    return f"{r['global_risk'] * 100:.3f} % / {r['max_individual_risk']:.4f}"


def report(results: dict) -> str:
    lines = [f"Measured {now_utc()}; {machine_line()}; load average {os.getloadavg()[0]:.1f} (shared machine).", ""]
    for release, both in results.items():
        s, m = both["sdcMicro"], both["incrowd"]
        lines += [f"**{release}** of income, expend, savings:", "",
                  "| | sdcMicro 5.8.0 | incrowd |", "|---|---|---|"]

        def row(label: str, f, s: dict = s, m: dict = m, out: list = lines) -> None:
            out.append(f"| {label} | {f(s)} | {f(m)} |")

        lines.append(f"| steps | {len(s['seconds'])} R calls ({', '.join(s['seconds'])}; {R_PERTURB[release].strip('{} ')}), "
                     "then a writer of one's own (no value labels) | one spec, one `incrowd publish` command |")
        row("suppressed cells (urbrur, water, sex, age, relat, hhcivil)",
            lambda r: f"{sum(r['cells'].values())} ({', '.join(str(r['cells'][c]) for c in KEYS)})")
        row("k reached (a blank matches any value)", lambda r: str(r["k"]))
        row("global risk / highest individual risk", _risk_line)
        row("household risk: mean / highest", lambda r: f"{r['household_risk']:.4f} / {r['max_household_risk']:.4f}")
        row("urbrur blanks a housemate gives away", lambda r: f"{r['housemates']['urbrur'][0]} of {r['cells']['urbrur']}")
        row("water blanks a housemate gives away", lambda r: f"{r['housemates']['water'][0]} of {r['cells']['water']}")
        row("rows below k = 3 once filled in", lambda r: str(r["housemates"]["all"][1]))
        row("IL1s of the numVars", lambda r: f"{r['il1s']:.1f}")
        row("eigenvalue change of the numVars", lambda r: f"{r['eigen']:.4f}")
        row("time: call / whole process (s)", lambda r: f"{r['call']:.2f} / {r['process']:.2f}")
        lines += ["", f"sdcMicro's own figures for its release: global risk {s['own']['global_risk'] * 100:.3f} %, "
                      f"highest individual risk {s['own']['max_individual_risk']:.4f}, household risk "
                      f"{s['own']['household_risk']:.4f} (highest {s['own']['max_household_risk']:.4f}), "
                      f"eigenvalue change {s['own']['eigen']:.4f}; its calls: "
                      + ", ".join(f"{k} {v:.2f} s" for k, v in s["seconds"].items()) + ".", "",
                  "| weighted mean income | urbrur | original | release | relative change | CIs overlap |",
                  "|---|---|---:|---:|---:|---|"]
        for tool, r in (("sdcMicro", s), ("incrowd", m)):
            for b in r["benchmarks"]:
                group = b["group"]["urbrur"]
                original = "" if b["original"] is None else f"{b['original']:,.0f}"
                change = "" if b["relative_change"] is None else f"{b['relative_change'] * 100:+.3f} %"
                overlap = "" if b["ci_overlap"] is None else ("yes" if b["ci_overlap"] else "no")
                lines.append(f"| {tool} | {group} | {original} | {b['release']:,.0f} | {change} | {overlap} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
