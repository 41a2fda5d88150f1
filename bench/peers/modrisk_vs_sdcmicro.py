"""incrowd.risk's model risk side by side with sdcMicro 5.8.0's ``modRisk`` (gr1, gr2).

Run from the repository root::

    .venv/bin/python bench/peers/modrisk_vs_sdcmicro.py [--fixtures]

It runs ``bench/peers/modrisk_vs_sdcmicro.R`` (R with sdcMicro in ``$INCROWD_RLIB``, default
``/root/.local/share/incrowd-peers/Rlib``), measures the same cases with ``incrowd.risk``
(``model_risk="default"`` and ``"CE"``) and writes a Markdown table to
``bench/results/modrisk_vs_sdcmicro.md`` (and prints it). ``--fixtures`` also writes
``tests/data/sdcmicro_modrisk.csv``, sdcMicro's figures the tests compare with (CI has no R).

Cases (keys as factors, as an sdcMicro object holds them): sdcMicro's ``testdata`` with the
curator's keys (urbrur, water, sex, age, relat, hhcivil), with the household keys of the risk
bench (urbrur, roof, walls, water, electcon, relat, sex), with modRisk's own example keys (sex,
water, roof), and Adult (48,842 rows; sex, race, marital_status, education; weight fnlwgt).
Where sdcMicro answers NaN, a combination of several rows whose ``1 / w`` sum past 1 overflows
its ``exp`` and ``0 * Inf`` spoils the sum over the sample uniques; incrowd sums over the sample
uniques alone, as the measure is defined.
"""

from __future__ import annotations

import argparse
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

from _common import data_dir, machine_line, now_utc  # noqa: E402

import incrowd  # noqa: E402

CASES = {
    "testdata_curator": ("testdata", ["urbrur", "water", "sex", "age", "relat", "hhcivil"], "sampling_weight"),
    "testdata_houses": ("testdata", ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"],
                        "sampling_weight"),
    "testdata_example": ("testdata", ["sex", "water", "roof"], "sampling_weight"),
    "adult": ("adult", ["sex", "race", "marital_status", "education"], "fnlwgt"),
}
OUT = ROOT / "bench" / "results" / "modrisk_vs_sdcmicro.md"
FIXTURE = ROOT / "tests" / "data" / "sdcmicro_modrisk.csv"


def frames() -> dict[str, pd.DataFrame]:
    folder = Path(data_dir())
    adult = pd.read_csv(folder / "adult.csv.gz", na_values=["?"])
    adult.columns = [c.replace("-", "_") for c in adult.columns]
    return {"testdata": pd.read_csv(folder / "testdata.csv"), "adult": adult}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", action="store_true", help="write tests/data/sdcmicro_modrisk.csv")
    args = parser.parse_args()
    folder = Path(data_dir())
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "modrisk.csv"
        subprocess.run(["Rscript", str(ROOT / "bench/peers/modrisk_vs_sdcmicro.R"), str(out),
                        str(folder / "testdata.csv"), str(folder / "adult.csv.gz")], check=True, env=dict(os.environ))
        peer = pd.read_csv(out)
    data = frames()
    lines = [f"# incrowd's model risk beside sdcMicro's modRisk (bench/peers/modrisk_vs_sdcmicro.py; {now_utc()})", "",
             machine_line(), "",
             "| case | method | keys | sdcMicro gr1 | incrowd gr1 | sdcMicro gr2 | incrowd gr2 | largest relative "
             "difference | sdcMicro s | incrowd s |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for row in peer.itertuples():
        source, keys, weight = CASES[row.case]
        frame = data[source][keys + [weight]]
        times = []
        for _ in range(3):
            t = time.perf_counter()
            got = incrowd.risk(frame, keys, weight=weight, model_risk=row.method, suda=False).summary()["model_risk"]
            times.append(time.perf_counter() - t)
        theirs = np.array([row.gr1, row.gr2], dtype=np.float64)
        ours = np.array([got["gr1"], got["gr2"]])
        rel = float(np.max(np.abs(ours - theirs) / np.abs(theirs))) if np.isfinite(theirs).all() else float("nan")
        lines.append(f"| {row.case} | {row.method} | {', '.join(keys)} | {row.gr1:.10g} | {got['gr1']:.10g} | "
                     f"{row.gr2:.10g} | {got['gr2']:.10g} | {'NaN in sdcMicro' if np.isnan(rel) else f'{rel:.1e}'} | "
                     f"{row.seconds:.3f} | {np.median(times):.3f} |")
    lines += ["", "incrowd's seconds: the whole `incrowd.risk` call (SUDA2 left out), median of 3; sdcMicro's: "
              "`modRisk` once. sdcMicro's NaN: a combination of several rows whose 1 / w sum past 1 overflows "
              "its exp, and 0 * Inf spoils the sum over the sample uniques; incrowd sums over the sample "
              "uniques alone."]
    text = "\n".join(lines) + "\n"
    OUT.write_text(text, encoding="utf-8")
    print(text)
    if args.fixtures:
        with open(FIXTURE, "w", encoding="utf-8") as fh:
            fh.write("# sdcMicro 5.8.0 modRisk (keys as factors) on testdata and Adult; made with "
                     "bench/peers/modrisk_vs_sdcmicro.py --fixtures\n")
            peer[["case", "method", "gr1", "gr2"]].to_csv(fh, index=False, float_format="%.17g")


if __name__ == "__main__":
    main()
