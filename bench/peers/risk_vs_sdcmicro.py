"""incrowd.risk side by side with sdcMicro 5.8.0 (freqCalc, indivRisk, measure_risk with w and hid).

Run from the repository root::

    .venv/bin/python bench/peers/risk_vs_sdcmicro.py [--fixtures]

It runs ``bench/peers/risk_vs_sdcmicro.R`` (R with sdcMicro in ``$INCROWD_RLIB``, default
``/root/.local/share/incrowd-peers/Rlib``), measures the same data with ``incrowd.risk`` and
prints a Markdown table of the largest differences per measure and the times (kept in
``bench/results/risk_vs_sdcmicro.md``). ``--fixtures``
also writes the committed test fixtures ``tests/data/sdcmicro_*_risk.csv.gz`` (inputs and
sdcMicro's outputs) and ``tests/data/sdcmicro_risk_globals.csv``. A bench, never a test: the
tests read the fixtures, never R.

Cases: sdcMicro's ``testdata`` (keys urbrur, roof, walls, water, electcon, relat, sex; weight
``sampling_weight``; households ``ori_hid``), the same with missing key values in a fixed
pattern (freqCalc's "a missing value matches any value"), and Adult (48,842 rows; keys age,
sex, race, marital_status, education, native_country, '?' missing; weight ``fnlwgt``) and every
25th row of it (the fixture).
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from _common import data_dir  # noqa: E402

import incrowd  # noqa: E402

TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
ADULT_KEYS = ["age", "sex", "race", "marital_status", "education", "native_country"]
CASES = {
    # file written by the R script: (keys, weight, household)
    "testdata_risk": (TESTDATA_KEYS, "sampling_weight", "ori_hid"),
    "testdata_na_risk": (TESTDATA_KEYS, "sampling_weight", "ori_hid"),
    "adult_risk": (ADULT_KEYS, "fnlwgt", None),
    "adult_subset_risk": (ADULT_KEYS, "fnlwgt", None),
}
GLOBAL_CASE = {"testdata_risk": "testdata", "testdata_na_risk": "testdata_na", "adult_risk": "adult",
               "adult_subset_risk": "adult_subset"}
FIXTURES = {"testdata_risk": "sdcmicro_testdata_risk.csv.gz", "testdata_na_risk": "sdcmicro_testdata_na_risk.csv.gz",
            "adult_subset_risk": "sdcmicro_adult_subset_risk.csv.gz"}


def read_peer(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"sex": str, "race": str})


def compare(name: str, peer: pd.DataFrame, globals_: pd.DataFrame) -> list[dict]:
    keys, weight, household = CASES[name]
    inputs = peer[keys + [weight] + ([household] if household else [])]
    times = []
    for _ in range(3):
        t = time.perf_counter()
        result = incrowd.risk(inputs, keys, weight=weight, household=household)
        times.append(time.perf_counter() - t)
    rec, summary = result.records, result.summary()
    g = globals_[globals_["case"] == GLOBAL_CASE[name]].set_index("measure")["value"]
    rows = []
    pairs = [("fk", rec["fk"], peer["fk"]), ("Fk", rec["Fk"], peer["Fk"]),
             ("individual risk", rec["individual_risk"], peer["risk"])]
    if household:
        pairs.append(("household risk", rec["household_risk"], peer["hier_risk"]))
    for what, ours, theirs in pairs:
        diff = np.abs(ours.to_numpy(float) - theirs.to_numpy(float))
        rows.append({"case": name, "measure": what, "rows": len(peer), "max |difference|": float(diff.max())})
    for what, ours, key in (("global risk", summary["global_risk"], "global_risk"),
                            ("expected re-identifications", summary["expected_reidentifications"], "global_risk_ER")):
        rows.append({"case": name, "measure": what, "incrowd": ours, "sdcMicro": float(g[key]),
                     "max |difference|": abs(ours - float(g[key]))})
    if household:
        rows.append({"case": name, "measure": "household risk (global)", "incrowd": summary["household_risk"],
                     "sdcMicro": float(g["hier_risk"]),
                     "max |difference|": abs(summary["household_risk"] - float(g["hier_risk"]))})
    rows.append({"case": name, "measure": "seconds: incrowd.risk (every measure, SUDA2 too; median of 3) vs measure_risk (once)",
                 "incrowd": float(np.median(times)), "sdcMicro": float(g["seconds"])})
    return rows


def write_fixture(name: str, peer: pd.DataFrame, out: Path) -> None:
    header = (f"# sdcMicro 5.8.0 measure_risk / freqCalc figures for incrowd's tests ({name}).\n"
              "# Made by: .venv/bin/python bench/peers/risk_vs_sdcmicro.py --fixtures\n"
              "# (R script bench/peers/risk_vs_sdcmicro.R). Inputs: the key columns, the weight and the\n"
              "# household id; outputs: fk, Fk, risk (indivRisk), hier_risk (measure_risk with hid)\n"
              "# and, where present, fk_walls/Fk_walls (freqCalc on the one key walls) and\n"
              "# risk_unweighted (measure_risk without w). An empty key cell is missing (NA in R).\n")
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as fh:
        fh.write(header)
        # mtime-free gzip is not needed: the file is written once and committed
        peer.to_csv(fh, index=False, float_format="%.17g")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", action="store_true", help="write tests/data/sdcmicro_*_risk fixtures")
    args = parser.parse_args()
    adult = Path(data_dir()) / "adult.csv.gz"
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        subprocess.run(["Rscript", str(ROOT / "bench/peers/risk_vs_sdcmicro.R"), tmp, str(adult)], check=True, env=env)
        out = Path(tmp)
        globals_ = pd.read_csv(out / "globals.csv")
        rows = []
        for name in CASES:
            peer = read_peer(out / f"{name}.csv")
            rows += compare(name, peer, globals_)
            if args.fixtures and name in FIXTURES:
                write_fixture(name, pd.read_csv(out / f"{name}.csv", dtype=str, keep_default_na=False),
                              ROOT / "tests/data" / FIXTURES[name])
        if args.fixtures:
            g = globals_[globals_["measure"] != "seconds"]
            with open(ROOT / "tests/data/sdcmicro_risk_globals.csv", "w", encoding="utf-8") as fh:
                fh.write("# sdcMicro 5.8.0 measure_risk global figures; made with bench/peers/risk_vs_sdcmicro.py\n")
                g.to_csv(fh, index=False)
    print(markdown(rows))


def markdown(rows: list[dict]) -> str:
    columns = ["case", "measure", "rows", "incrowd", "sdcMicro", "max |difference|"]

    def cell(value) -> str:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return ""
        return f"{value:.6g}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
