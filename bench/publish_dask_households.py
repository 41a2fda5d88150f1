"""What a household column costs a partitioned publish on Dask.

Run from the repository root: ``.venv/bin/python bench/publish_dask_households.py [--copies 10]``.
Writes ``bench/results/publish_dask_households.md`` (and prints it).

1. The check that no household lies in two partitions (the client compares every partition's
   distinct household ids): its seconds on the client for 1, 4 and 16 million households in
   64 partitions (integer ids, as a census numbers its households).
2. sdcMicro's testdata (4,580 persons in 1,000 households) copied ``--copies`` times with new
   household ids, in 4 partitions by household, published on ``local:2`` (k = 3, keys urbrur,
   water, sex, age in ten-year bands, relat grouped, hhcivil): without a household column,
   with one (urbrur and water household-level) and with ``max_household_risk = 0.01``; the
   seconds of each (median of ``--repeats``), and the same release in process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import _household as household  # noqa: E402
from _common import REPO, data_dir, machine_line, now_utc  # noqa: E402

OUT = REPO / "bench" / "results" / "publish_dask_households.md"
RELAT_GROUPS = {1: 1, 2: 2, 3: 3, 4: 7, 5: 3, 6: 7, 7: 7, 8: 8, 9: 9}


def split_check(households: int, partitions: int = 64) -> float:
    from incrowd.publishing import split_household

    ids = np.random.default_rng(1).permutation(households).astype(np.int64)
    facts = [{"households": pd.Series(part)} for part in np.array_split(ids, partitions)]
    names = [f"part-{i}.parquet" for i in range(partitions)]
    t = time.process_time()
    assert split_household(facts, names, "hid") is None
    return time.process_time() - t


def survey(copies: int, folder: Path) -> tuple[pd.DataFrame, Path]:
    one = household.household_frame(data_dir())
    frames = []
    for c in range(copies):
        copy = one.copy()
        copy["ori_hid"] = copy["ori_hid"] + c * 10_000
        frames.append(copy)
    frame = pd.concat(frames, ignore_index=True)
    h = household.write_hierarchies(folder / "h")
    for c in ["urbrur", "water", "sex", "hhcivil"]:
        (h / f"{c}.csv").write_text("".join(f"{v};*\n" for v in sorted(frame[c].unique())))
    (h / "relat.csv").write_text("".join(f"{v};{RELAT_GROUPS[v]};*\n" for v in sorted(frame["relat"].unique())))
    return frame, h


def spec(h: Path, households: bool, **privacy) -> dict:
    columns: dict = {c: {"role": "categorical", "hierarchy": str(h / f"{c}.csv")} for c in household.KEYS}
    columns["age"]["match"] = "code"
    columns[household.WEIGHT] = "weight"
    if households:
        columns[household.HOUSEHOLD_ID] = "household"
        for c in ("urbrur", "water"):
            columns[c]["household_level"] = True
    return {"privacy": {"k": 3, "max_suppression": "10%", **privacy}, "columns": columns}


def main() -> None:
    import incrowd
    from incrowd.distributed import connect

    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    lines = [f"# A household column on a partitioned publish ({now_utc()})", "", machine_line(), "",
             "## The check that no household lies in two partitions (client, 64 partitions)", "",
             "| households | CPU seconds |", "|---:|---:|"]
    for n in (1_000_000, 4_000_000, 16_000_000):
        lines.append(f"| {n:,} | {split_check(n):.2f} |")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        frame, h = survey(args.copies, folder)
        starts = np.flatnonzero(np.r_[True, np.diff(frame["ori_hid"].to_numpy()) != 0])
        bounds = [0, *(int(starts[np.searchsorted(starts, len(frame) * i // 4)]) for i in range(1, 4)), len(frame)]
        parts = folder / "parts"
        parts.mkdir()
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            frame.iloc[a:b].to_parquet(parts / f"part-{i}.parquet", index=False)
        lines += ["", f"## testdata x {args.copies}: {len(frame):,} persons in 4 partitions, `local:2`", "",
                  "| spec | Dask s | in process s | suppressed |", "|---|---:|---:|---:|"]
        configs = {"no household column": spec(h, False),
                   "household column, urbrur and water household-level": spec(h, True),
                   "... and max_household_risk = 0.01": spec(h, True, max_household_risk=0.01)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with connect("local:2") as client:
                for name, s in configs.items():
                    dask, here = [], []
                    for r in range(args.repeats + 1):
                        t = time.perf_counter()
                        got = incrowd.publish(parts, s, scheduler=client, output=folder / f"out-{len(dask)}-{r}-{id(s)}")
                        dask.append(time.perf_counter() - t)
                        t = time.perf_counter()
                        incrowd.publish(frame, s)
                        here.append(time.perf_counter() - t)
                    lines.append(f"| {name} | {statistics.median(dask[1:]):.2f} | {statistics.median(here[1:]):.2f} | "
                                 f"{got.summary()['suppressed']} |")
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
