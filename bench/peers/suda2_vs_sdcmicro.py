"""incrowd's SUDA2 side by side with sdcMicro 5.8.0's ``suda2`` (scores, DIS scores, time).

Run from the repository root::

    .venv/bin/python bench/peers/suda2_vs_sdcmicro.py [--fixtures] [--timing] [--million] [--rows N] [--repeats 3]

It runs ``bench/peers/suda2_vs_sdcmicro.R`` (R with sdcMicro in ``$INCROWD_RLIB``, default
``/root/.local/share/incrowd-peers/Rlib``) and compares ``incrowd.reporting._suda2.suda2`` on
the same data:

- default: the largest differences per case (sdcMicro's ``testdata`` with its seven keys, the
  same with missing key values in a fixed pattern, two of its keys, and the first 4,000 rows of
  Adult with eight keys and '?' missing);
- ``--fixtures``: also writes them as the committed test fixtures
  ``tests/data/sdcmicro_suda2_*.csv.gz`` (inputs and sdcMicro's outputs);
- ``--timing``: both on Adult (``--rows``, default all 48,842) with its first 4 to 8 keys
  (age, workclass, education, marital-status, occupation, race, sex, native-country), the two
  interleaved per repeat, and prints the median seconds and their ratio. sdcMicro's time is
  ``system.time`` around its ``suda2`` call (R's start-up not counted); incrowd's is the call
  after one warm-up call (numba compiled and loaded);
- ``--million``: both on 1,000,000 rows with Adult's first six keys, once rows resampled from
  Adult (no row unique on all keys: one grouping) and once each key drawn on its own from
  Adult's values (about 10 % of the rows have an MSU); sdcMicro once, incrowd the median of
  ``--repeats`` (each draws its own rows, from the same distribution).

The tables go to standard output and to ``bench/results/suda2_vs_sdcmicro.md``.

A bench, never a test: the tests read the fixtures, never R.
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

from incrowd.cli._bench_entry import suda2  # noqa: E402

R_SCRIPT = ROOT / "bench" / "peers" / "suda2_vs_sdcmicro.R"
CASES = ["testdata", "testdata_na", "testdata_two_keys", "adult", "testdata_ihsn", "testdata_na_ihsn"]
ADULT_KEYS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
HEADER = """\
# sdcMicro 5.8.0 suda2 scores for incrowd's tests (case {case}): suda2(data, variables = keys)
# with {defaults}; columns: the keys
# as R held them (empty = NA), then $score and $disScore printed with 17 significant digits.
# Made by: .venv/bin/python bench/peers/suda2_vs_sdcmicro.py --fixtures
# (R script bench/peers/suda2_vs_sdcmicro.R).
"""


def adult_path() -> Path:
    return data_dir() / "adult.csv.gz"


def read_peer(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, comment="#", keep_default_na=False, na_values=["", "NA"])


def compare(frame: pd.DataFrame, original_scores: bool = True) -> tuple[float, float, int]:
    keys = frame.drop(columns=["score", "dis_score"])
    score, dis = suda2(keys, original_scores=original_scores)
    return (float(np.max(np.abs(score - frame["score"].to_numpy()))),
            float(np.max(np.abs(dis - frame["dis_score"].to_numpy()))), int((score > 0).sum()))


LINES: list[str] = []


def say(line: str = "") -> None:
    print(line)
    LINES.append(line)


def run_cases(fixtures: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["Rscript", str(R_SCRIPT), tmp, str(adult_path())], check=True)
        say("| case | rows | keys | records with an MSU | max abs diff score | max abs diff DIS |")
        say("| --- | ---: | ---: | ---: | ---: | ---: |")
        for case in CASES:
            path = Path(tmp) / f"{case}.csv"
            frame = read_peer(path)
            original = not case.endswith("_ihsn")  # the IHSN weights: original_scores = FALSE
            d_score, d_dis, msu = compare(frame, original)
            say(f"| {case} | {len(frame):,} | {frame.shape[1] - 2} | {msu:,} | {d_score:.3g} | {d_dis:.3g} |")
            if fixtures:
                target = ROOT / "tests" / "data" / f"sdcmicro_suda2_{case}.csv.gz"
                text = HEADER.format(case=case, defaults=(
                    "its defaults (missing -999, DisFraction 0.01, original_scores TRUE)" if original else
                    "its defaults (missing -999, DisFraction 0.01) but original_scores = FALSE")) + \
                    path.read_text(encoding="utf-8").replace('"', "")
                if target.exists() and gzip.decompress(target.read_bytes()).decode("utf-8") == text:
                    continue  # unchanged: the committed file (and its gzip header) stays
                with gzip.open(target, "wt", encoding="utf-8", newline="") as fh:
                    fh.write(text)
                print(f"wrote {target.relative_to(ROOT)}")


def run_timing(rows: int, repeats: int) -> None:
    adult = pd.read_csv(adult_path())
    if rows:
        adult = adult.iloc[:rows]
    suda2(adult[ADULT_KEYS[:4]].iloc[:200], missing="?")  # compile / load numba once
    times: dict[int, dict[str, list[float]]] = {m: {"sdcmicro": [], "incrowd": []} for m in range(4, 9)}
    counts: dict[int, tuple[int, int]] = {}
    env = dict(os.environ)
    for _ in range(repeats):
        for m in range(4, 9):
            out = subprocess.run(["Rscript", str(R_SCRIPT), "/tmp", str(adult_path()), "time", str(m), str(rows)],
                                 check=True, capture_output=True, text=True, env=env).stdout.split()
            times[m]["sdcmicro"].append(float(out[1]))
            t = time.perf_counter()
            score, _ = suda2(adult[ADULT_KEYS[:m]], missing="?")
            times[m]["incrowd"].append(time.perf_counter() - t)
            counts[m] = (int(out[3]), int((score > 0).sum()))
    say()
    say(f"Adult, {len(adult):,} rows, median of {repeats} interleaved runs")
    say()
    say("| keys | sdcMicro suda2 s | incrowd suda2 s | ratio | records with an MSU (sdcMicro / incrowd) |")
    say("| ---: | ---: | ---: | ---: | ---: |")
    for m in range(4, 9):
        r = float(np.median(times[m]["sdcmicro"]))
        p = float(np.median(times[m]["incrowd"]))
        say(f"| {m} | {r:.3f} | {p:.3f} | {r / p:.1f}x | {counts[m][0]:,} / {counts[m][1]:,} |")


def run_million(repeats: int) -> None:
    out = subprocess.run(["Rscript", str(R_SCRIPT), "/tmp", str(adult_path()), "million"],
                         check=True, capture_output=True, text=True).stdout.split()
    r_times = {"resampled": (float(out[1]), int(out[2])), "independent": (float(out[4]), int(out[5]))}
    adult = pd.read_csv(adult_path())
    keys = ADULT_KEYS[:6]
    suda2(adult[keys].iloc[:200], missing="?")
    ours: dict[str, list[float]] = {"resampled": [], "independent": []}
    msu: dict[str, int] = {}
    for rep in range(repeats):
        rng = np.random.default_rng(rep)
        frames = {"resampled": adult[keys].iloc[rng.integers(0, len(adult), 1_000_000)],
                  "independent": pd.DataFrame({k: adult[k].to_numpy()[rng.integers(0, len(adult), 1_000_000)]
                                               for k in keys})}
        for name, frame in frames.items():
            t = time.perf_counter()
            score, _ = suda2(frame, missing="?")
            ours[name].append(time.perf_counter() - t)
            msu[name] = int((score > 0).sum())
    say()
    say(f"1,000,000 rows, Adult's keys {', '.join(keys)}; sdcMicro once, incrowd median of {repeats}")
    say()
    say("| rows | sdcMicro suda2 s | incrowd suda2 s | ratio | records with an MSU (sdcMicro / incrowd) |")
    say("| --- | ---: | ---: | ---: | ---: |")
    for name, what in (("resampled", "resampled from Adult"), ("independent", "each key drawn on its own")):
        r, p = r_times[name][0], float(np.median(ours[name]))
        say(f"| {what} | {r:.2f} | {p:.2f} | {r / p:.1f}x | {r_times[name][1]:,} / {msu[name]:,} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", action="store_true", help="write tests/data/sdcmicro_suda2_*.csv.gz")
    ap.add_argument("--timing", action="store_true", help="time both on Adult, keys 4 to 8")
    ap.add_argument("--million", action="store_true", help="time both on 1,000,000 rows")
    ap.add_argument("--rows", type=int, default=0, help="Adult rows for --timing (0: all)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    run_cases(a.fixtures)
    if a.timing:
        run_timing(a.rows, a.repeats)
    if a.million:
        run_million(a.repeats)
    target = ROOT / "bench" / "results" / "suda2_vs_sdcmicro.md"
    target.write_text("# incrowd suda2 vs sdcMicro 5.8.0 (bench/peers/suda2_vs_sdcmicro.py; 2-core shared machine)\n\n"
                      + "\n".join(LINES) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
