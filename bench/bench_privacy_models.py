"""What checking a whole table against each privacy model of ``incrowd.privacy`` costs, next to
the verifiers the written-file check uses today (``incrowd.privacy.verify_*``).

Run from the repository root: ``.venv/bin/python bench/bench_privacy_models.py [--repeats 5]``.
Prints a Markdown table (median seconds of ``--repeats`` runs in one process, after one untimed
run).

Data: ARX's Adult (30,162 rows, ``adult_arx/adult.csv``), its 8 quasi-identifiers generalized to
level 1 of ARX's hierarchies (age to level 2), sensitive ``occupation`` (14 values); the table's
class count is printed with the figures.
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

from incrowd.privacy import check_table, class_stats, models_from_spec, verify_k_anonymity, verify_l_diversity, verify_t_closeness  # noqa: E402  # noqa: E402

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
LEVELS = {"age": 2}


def _generalized() -> pd.DataFrame:
    folder = data_dir() / "adult_arx"
    frame = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    for column in QIS:
        level = LEVELS.get(column, 1)
        rows = pd.read_csv(folder / f"adult_hierarchy_{column}.csv", sep=";", header=None, dtype=str)
        frame[column] = frame[column].map(dict(zip(rows[0], rows[level])))
    return frame


def _median(call, repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    frame = _generalized()
    stats = class_stats(frame, QIS, "occupation")
    spec = {"k": 5, "l": 2, "t": 0.3, "entropy_l": 2, "recursive_l": {"c": 3, "l": 2}, "alpha": 0.5,
            "delta_disclosure": 1.0, "beta": {"value": 1.0, "variant": "enhanced"}}
    rows = []
    for model in models_from_spec(spec):
        whole = _median(lambda m=model: check_table(frame, QIS, [m], sensitive=["occupation"]), args.repeats)
        classes = _median(lambda m=model: m.classes_ok(stats), args.repeats)
        rows.append([model.key, model.describe(), f"{whole:.3f}", f"{classes * 1000:.2f}"])
    old = {
        "k": lambda: verify_k_anonymity(frame, QIS, 5),
        "l": lambda: verify_l_diversity(frame, QIS, "occupation", 2),
        "t": lambda: verify_t_closeness(frame, QIS, "occupation", 0.3),
    }
    for key, call in old.items():
        rows.append([key, f"today's verify ({key})", f"{_median(call, args.repeats):.3f}", ""])
    print(machine_line())
    print(f"{len(frame)} rows, {stats.n_classes} classes, {stats.counts.shape[1]} sensitive codes\n")
    print(md_table(["key", "model", "check_table s", "classes_ok ms"], rows))


if __name__ == "__main__":
    main()
