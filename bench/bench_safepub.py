"""What SafePub's search (``incrowd.generalization.safepub``) costs on ARX's Adult, per score.

Run from the repository root: ``.venv/bin/python bench/bench_safepub.py [--repeats 3]``.
Prints a Markdown table (median seconds of ``--repeats`` runs in one process, after one untimed
run): epsilon = 2, delta = 1e-5 (as ARX's tests of the data-dependent search), ARX's default steps
(1000 checks over 8 quasi-identifiers: 125), the nodes scored, the chosen levels, the rows sampled
and kept.

Data: ARX's Adult (30,162 rows, ``adult_arx/adult.csv``), its 8 quasi-identifiers with ARX's
hierarchies (``adult_arx/adult_hierarchy_*.csv``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import data_dir, machine_line, md_table  # noqa: E402

from incrowd.generalization import load_hierarchies, safepub  # noqa: E402
from incrowd.privacy import DifferentialPrivacy  # noqa: E402
from incrowd.privacy.differential_privacy import SCORES  # noqa: E402

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = data_dir() / "adult_arx"
    frame = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    hierarchies = load_hierarchies(folder, QIS)
    hs = [hierarchies[q] for q in QIS]
    codes = [h.encode(frame[q]) for h, q in zip(hs, QIS)]
    rows = []
    for metric in SCORES:
        model = DifferentialPrivacy(epsilon=2.0, delta=1e-5, metric=metric)
        result = safepub(codes, hs, model, seed=1)  # untimed: scipy's import and the first k
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            result = safepub(codes, hs, model, seed=1)
            times.append(time.perf_counter() - start)
        rows.append([metric, f"{statistics.median(times):.2f}", str(result.visited), str(result.levels),
                     str(int(result.sampled.sum())), str(int(result.kept.sum()))])
    print(machine_line())
    print(f"ARX Adult, {len(frame)} rows, 8 quasi-identifiers; epsilon 2, delta 1e-5, k = {model.k}, "
          f"{model.search_steps(len(QIS))} steps")
    print(md_table(["score", "seconds (median)", "nodes scored", "levels", "sampled", "kept"], rows))


if __name__ == "__main__":
    main()
