"""Each perturbation method on 1,000,000 rows (testdata resampled, households kept whole):
seconds per call, compiled first, the median of 3. Run from the repository root::

    PYTHONPATH=src .venv/bin/python bench/perturbation_million.py [--rows N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from incrowd import perturb

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "testdata.csv"
NUMERIC = ["income", "expend", "savings"]
STEPS = {
    "microaggregation": {"columns": NUMERIC, "method": "microaggregation", "k": 3},
    "noise (additive)": {"columns": NUMERIC, "method": "noise", "amount": 50},
    "noise (correlated)": {"columns": NUMERIC, "method": "noise", "amount": 10, "kind": "correlated"},
    "noise (romm)": {"columns": NUMERIC, "method": "noise", "amount": 1, "kind": "romm"},
    "rank_swap": {"columns": NUMERIC, "method": "rank_swap", "p": 5},
    "shuffle": {"columns": ["income", "expend"], "method": "shuffle", "by": ["age", "sex"]},
    "top_code": {"columns": NUMERIC, "method": "top_code", "value": 90_000_000},
    "bottom_code": {"columns": NUMERIC, "method": "bottom_code", "value": 1_000_000},
    "round": {"columns": NUMERIC, "method": "round", "base": 1000},
    "pram": {"columns": ["roof", "walls"], "method": "pram", "pd": 0.8},
    "record_swap": {"columns": ["urbrur", "water"], "method": "record_swap", "hierarchy": ["urbrur", "water"],
                    "similarity": ["electcon"], "rate": 0.05, "household": "ori_hid"},
}


def resampled(rows: int, seed: int = 0) -> pd.DataFrame:
    d = pd.read_csv(DATA)
    households = d.groupby("ori_hid").indices
    ids = np.array(list(households))
    rng = np.random.default_rng(seed)
    parts, total, new_id = [], 0, 0
    while total < rows:
        picked = rng.choice(ids, 10_000)
        for h in picked:
            parts.append((households[h], new_id))
            new_id += 1
            total += len(households[h])
            if total >= rows:
                break
    index = np.concatenate([p for p, _ in parts])
    out = d.iloc[index].reset_index(drop=True)
    out["ori_hid"] = np.repeat([i for _, i in parts], [len(p) for p, _ in parts])
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--methods", nargs="*", default=list(STEPS),
                        help="the methods to run (exact MDAV, microaggregation, is quadratic: minutes on a million rows)")
    args = parser.parse_args()
    frame = resampled(args.rows)
    small = frame.head(2000)
    print(f"| method | seconds on {len(frame):,} rows |\n|---|---|")
    for name in args.methods:
        step = STEPS[name]
        perturb(small, [step])  # compiled first
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            perturb(frame, [step])
            times.append(time.perf_counter() - t0)
        print(f"| {name} | {np.median(times):.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
