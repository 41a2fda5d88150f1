"""The curator's household release remade in one spec, beside sdcMicro's ``localSuppression``.

Run from the repository root: ``.venv/bin/python bench/curator_household.py [--skip-r]``.
Writes ``bench/results/curator_household.md`` (and prints it). Needs R with sdcMicro 5.8.0
(library folder ``$INCROWD_RLIB``, default ``/root/.local/share/incrowd-peers/Rlib``) for the
sdcMicro column; ``--skip-r`` leaves it out.

Data: sdcMicro's ``testdata`` (4,580 persons, 1,000 households) as the curator stores it
(``tests/_household.py``: a labelled .sav, value labels, the user-missing code 9 "Not stated"
on roof, walls, water and relat, variable labels, measures, weight ``sampling_weight``, household
id ``ori_hid``). Keys urbrur, water, sex, age, relat, hhcivil; the curator's recodes (age in
ten-year bands, relat grouped: ``write_hierarchies``) fixed in ``[levels]``; k = 3 with
``suppression = "cells"``, once with ``missing_matches = "any"`` and once with ``"itself"``;
risk targets ``max_individual_risk = 0.1`` and ``max_global_risk = 0.0099`` (below 1 %).

Each release is published by ``incrowd.publish`` and written as .sav (verified on the written
file before it is put in place), then read back with pyreadstat (user-missing codes as codes)
and checked here again: k with the release's meaning of a blank, the risk targets as
``incrowd.risk`` measures them, the value labels, user-missing definitions and variable labels of
the keys published as they are, and every pass-through column cell for cell. sdcMicro's
``localSuppression`` (k = 3, its default importance) runs on the same recoded keys in one R run
(a user-missing code 9 is a value there too, as incrowd reads it); its result and incrowd's
"any" release are both handed to sdcMicro's ``freqCalc`` (smallest fk).
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
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from _common import REPO, data_dir, machine_line, now_utc  # noqa: E402
from _household import (  # noqa: E402
    AGE_BANDS,
    KEYS,
    RELAT_GROUPS,
    USER_MISSING,
    VARIABLE_LABELS,
    WEIGHT,
    write_hierarchies,
    write_household,
)

import incrowd  # noqa: E402
from incrowd.privacy import sample_risk as sample_risk  # noqa: E402
from incrowd.values import match_counts  # noqa: E402

OUT = REPO / "bench" / "results" / "curator_household.md"
K = 3
TARGETS = {"max_individual_risk": 0.1, "max_global_risk": 0.0099}
LEVELS = {"urbrur": 0, "water": 0, "sex": 0, "age": 1, "relat": 1, "hhcivil": 0}
PASS_THROUGH = ["roof", "walls", "electcon", "expend", "income", "savings", "ori_hid", WEIGHT, "household_weights"]

R_CODE = r"""
.libPaths(c(Sys.getenv("INCROWD_RLIB"), .libPaths()))
suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
keys <- strsplit(args[3], ",")[[1]]
x <- read.csv(args[1], stringsAsFactors = TRUE, na.strings = "")
for (v in keys) x[[v]] <- as.factor(x[[v]])
el <- system.time(ls <- localSuppression(x[, keys], k = as.integer(args[4]), keyVars = keys))[["elapsed"]]
per <- sapply(keys, function(v) sum(is.na(ls$xAnon[[v]])) - sum(is.na(x[[v]])))
y <- read.csv(args[2], stringsAsFactors = TRUE, na.strings = "")
for (v in keys) y[[v]] <- as.factor(y[[v]])
out <- list(cells = as.list(per), seconds = el,
            min_fk = min(freqCalc(as.data.frame(ls$xAnon), keyVars = keys)$fk),
            ours_min_fk = min(freqCalc(y[, keys], keyVars = keys)$fk))
cat(jsonlite::toJSON(out, auto_unbox = TRUE, digits = NA))
"""


def spec(missing_matches: str) -> dict:
    columns: dict = {c: "categorical" for c in KEYS}
    columns["age"] = {"role": "categorical", "hierarchy": "h/age.csv", "match": "code"}
    columns["relat"] = {"role": "categorical", "hierarchy": "h/relat.csv", "match": "label"}
    columns[WEIGHT] = "weight"
    # the recodes are fixed, so every row below k at them is one cell suppression works on:
    # max_suppression bounds those rows; the blanks are what the table reports
    privacy = {"k": K, "max_suppression": "100%", "suppression": "cells", "missing_matches": missing_matches,
               **TARGETS}
    return {"privacy": privacy, "columns": columns, "levels": dict(LEVELS)}


def blank(column: pd.Series) -> np.ndarray:
    """A blank as the written file shows it: system missing, or an empty text."""
    return (column.isna() | (column.astype(object) == "")).to_numpy()


def recoded_keys(source: pd.DataFrame, meta) -> pd.DataFrame:
    """The keys with the curator's recodes, as labels (what sdcMicro is given)."""
    out = pd.DataFrame({c: source[c].map(lambda v: "" if pd.isna(v) else str(int(v))) for c in KEYS})
    out["age"] = source["age"].map(lambda a: next(f"{lo}-{hi}" for lo, hi in AGE_BANDS if lo <= a <= hi))
    labels = meta.variable_value_labels["relat"]
    out["relat"] = source["relat"].map(lambda v: RELAT_GROUPS[labels[v]])
    return out


def check_release(path: Path, source: pd.DataFrame, source_meta, missing_matches: str) -> dict:
    """The written .sav read back as a user reads it, checked; returns its figures."""
    import pyreadstat

    table, meta = pyreadstat.read_sav(str(path), user_missing=True)
    assert table.shape[0] == source.shape[0]
    shown = pd.DataFrame({c: np.where(blank(table[c]), np.nan, table[c].astype(object)) for c in KEYS})
    assert match_counts(shown, KEYS, missing_matches=missing_matches).min() >= K
    codes = np.column_stack([np.where(blank(table[c]), -1, pd.factorize(table[c])[0]) for c in KEYS])
    fk, Fk = sample_risk.frequencies(codes.astype(np.int64), table[WEIGHT].to_numpy(np.float64))
    risk = sample_risk.individual_risk(fk, Fk)
    assert risk.max() <= TARGETS["max_individual_risk"] and risk.mean() <= TARGETS["max_global_risk"]
    checked = []
    for c in [c for c in KEYS if LEVELS[c] == 0]:
        assert meta.variable_value_labels.get(c) == source_meta.variable_value_labels.get(c), c
        assert meta.missing_ranges.get(c) == source_meta.missing_ranges.get(c), c
        assert meta.column_names_to_labels[c] == VARIABLE_LABELS[c], c
        checked.append(c)
    # relat, recoded to its groups: "Not stated" keeps the user-missing code 9
    relat_labels = meta.variable_value_labels["relat"]
    not_stated = [code for code, text in relat_labels.items() if text == "Not stated"]
    assert not_stated == [9.0] and meta.missing_ranges.get("relat") == [{"lo": 9.0, "hi": 9.0}]
    for c in PASS_THROUGH:
        pd.testing.assert_series_equal(table[c], source[c], check_names=False)
        assert meta.column_names_to_labels[c] == source_meta.column_names_to_labels[c]
    for c in USER_MISSING:
        if c in PASS_THROUGH:
            assert meta.missing_ranges.get(c) == source_meta.missing_ranges.get(c), c
    return {"blanks": {c: int(blank(table[c]).sum() - blank(source[c]).sum()) for c in KEYS},
            "highest_risk": float(risk.max()), "global_risk": float(risk.mean()),
            "labels_checked": checked + ["relat (recode)"], "table": table}


def run_r(keys_csv: Path, ours_csv: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp, "ls.R")
        script.write_text(R_CODE, encoding="utf-8")
        env = {**os.environ, "INCROWD_RLIB": os.environ.get("INCROWD_RLIB", "/root/.local/share/incrowd-peers/Rlib")}
        proc = subprocess.run(["Rscript", str(script), str(keys_csv), str(ours_csv), ",".join(KEYS), str(K)],
                              capture_output=True, text=True, env=env)
    if proc.returncode:
        sys.exit(f"Rscript failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    import pyreadstat

    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-r", action="store_true")
    args = ap.parse_args()
    runs = {}
    sdc = None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = write_household(data_dir(), folder / "household.sav")
        write_hierarchies(folder / "h")
        source, source_meta = pyreadstat.read_sav(str(data), user_missing=True)
        for missing_matches in ("any", "itself"):
            t0 = time.perf_counter()
            result = incrowd.publish(data, spec(missing_matches), base_dir=folder)
            out = result.write(folder / f"release_{missing_matches}.sav")
            seconds = time.perf_counter() - t0
            got = check_release(out, source, source_meta, missing_matches)
            summary = result.summary()
            assert got["blanks"] == summary["suppressed_cells"], (got["blanks"], summary["suppressed_cells"])
            runs[missing_matches] = {**got, "seconds": seconds, "ncp": summary["categorical_ncp"],
                                     "suppressed": summary["suppressed"]}
            print(missing_matches, got["blanks"], f"{seconds:.2f}s", flush=True)
        if not args.skip_r:
            keys_csv, ours_csv = folder / "keys.csv", folder / "ours_any.csv"
            recoded_keys(source, source_meta).to_csv(keys_csv, index=False)
            ours = runs["any"]["table"]
            pd.DataFrame({c: np.where(blank(ours[c]), "", ours[c].astype(object).map(
                lambda v: "" if not isinstance(v, str) and pd.isna(v) else v if isinstance(v, str) else str(int(v))))
                for c in KEYS}).to_csv(ours_csv, index=False)
            sdc = run_r(keys_csv, ours_csv)
    header = ["key", *(["sdcMicro localSuppression"] if sdc else []), 'incrowd, missing_matches = "any"',
              'incrowd, missing_matches = "itself"']
    rows = []
    for c in [*KEYS, "total"]:
        columns = [sdc["cells"]] if sdc else []
        columns += [runs["any"]["blanks"], runs["itself"]["blanks"]]
        rows.append([c, *(int(sum(b.values())) if c == "total" else int(b[c]) for b in columns)])
    lines = [f"# The curator's household release (bench/curator_household.py; {now_utc()})", "", machine_line(), "",
             f"sdcMicro's testdata as a labelled .sav (4,580 persons); keys {', '.join(KEYS)}; age in ten-year bands, "
             f"relat grouped; k = {K}; risk targets max_individual_risk = {TARGETS['max_individual_risk']}, "
             f"max_global_risk = {TARGETS['max_global_risk']}. Cells blanked per key:", "",
             "| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    lines += ["", "| release | rows suppressed | highest individual risk | global risk | categorical NCP | "
              "publish + write + verify s |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, got in runs.items():
        lines.append(f'| incrowd, missing_matches = "{name}" | {got["suppressed"]} | {got["highest_risk"]:.4g} | '
                     f'{got["global_risk"]:.4g} | {got["ncp"]:.4f} | {got["seconds"]:.2f} |')
    if sdc:
        lines += ["", f"sdcMicro's localSuppression: {sdc['seconds']:.2f} s; sdcMicro's freqCalc gives a smallest fk of "
                      f"{sdc['min_fk']} on its own result and {sdc['ours_min_fk']} on incrowd's \"any\" release."]
    lines += ["", "Each .sav read back with pyreadstat (user-missing codes as codes): k with the release's meaning "
                  "of a blank, both risk targets, the value labels, user-missing definitions and variable labels of "
                  f"{', '.join(runs['any']['labels_checked'])}, and the pass-through columns {', '.join(PASS_THROUGH)} "
                  "cell for cell: all as asserted."]
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
