"""l and t, local suppression and the sum of squared deviations on a million rows: the compiled
extension against the numba kernels it replaced, side by side in one process.

``publish`` with l or t judges each class's distinct values and distance (``sensitive_counts``)
and merges failing groups (``dense_status``, ``nearest_slots``); ``local_suppression`` matches
records (``match_combinations``); a release reports its information loss
(``squared_deviations``). Their numba versions are kept, loop for loop, in
``tests/test_native_sensitive.py`` as the reference; this script imports them from there. The
data: ARX's Adult resampled to 1,000,000 rows (drawn with replacement, seed 0, as
``bench/startup.py`` draws it), its 8 QIs as codes. Each kernel's input:

- ``sensitive_counts``: every row its own bottom class (as ``negotiate``'s view passes them),
  its class at the node one level up on every QI, salary-class as the sensitive value, with t;
- ``dense_status``: one group per row (a merge's start), occupation's 14 values, ordered;
- ``nearest_slots``: every row a live group, its codes of age, education and occupation as
  the centroid (3 features), the nearest to the first;
- ``match_combinations``: the rows' 8 codes, one cell in 20 missing, against the first row with
  its age blanked;
- ``squared_deviations``: the 3 features against their class means at the node above.

Each kernel is called once (numba's load), then the two take turns, ``--repeats`` calls each;
the table gives each one's best wall time, and whether the results are identical. None of the
numba kernels ran in parallel, so the extension has no threshold to hand over at.

    .venv/bin/python bench/native_sensitive.py [--repeats 5] [--render]

Writes the section ``native-sensitive`` of docs/performance.md and
bench/results/native_sensitive.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import DOCS, REPO, data_dir, machine_line, md_table, now_utc, update_section  # noqa: E402

RESULTS = REPO / "bench" / "results" / "native_sensitive.json"
ARX_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
ROWS = 1_000_000


def _inputs() -> dict:
    import numpy as np
    import pandas as pd

    from incrowd.generalization import resolve_hierarchies

    folder = data_dir() / "adult_arx"
    adult = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    data = adult.sample(ROWS, replace=True, random_state=0).reset_index(drop=True)
    qis, hier = resolve_hierarchies(data, ARX_QIS, str(folder), None, None)
    codes = np.column_stack([hier[a].encode(data[a]) for a in qis]).astype(np.int64)
    up = np.column_stack([hier[a].parents[0][codes[:, j]] if hier[a].depth > 1 else codes[:, j]
                          for j, a in enumerate(qis)])
    class_of = np.unique(up, axis=0, return_inverse=True)[1].ravel().astype(np.int64)
    n_classes = int(class_of.max()) + 1
    salary = pd.factorize(data["salary-class"], sort=True)[0].astype(np.int64)
    occupation = pd.factorize(data["occupation"], sort=True)[0].astype(np.int64)
    m_occ = int(occupation.max()) + 1
    features = np.column_stack([codes[:, qis.index(a)] for a in ("age", "education", "occupation")]).astype(float)
    sums = np.zeros((n_classes, 3))
    np.add.at(sums, class_of, features)
    centers = sums / np.bincount(class_of, minlength=n_classes)[:, None]
    holed = codes.copy()
    holed[np.random.default_rng(0).random(holed.shape) < 0.05] = -1
    row = holed[0].copy()
    row[qis.index("age")] = -1
    return {"class_of": class_of, "n_classes": n_classes, "salary": salary,
            "salary_ref": np.bincount(salary).astype(np.int64), "dense": np.eye(m_occ, dtype=np.int64)[occupation],
            "occ_ref": np.bincount(occupation, minlength=m_occ).astype(np.int64),
            "cent": np.ascontiguousarray(features.T), "features": features, "centers": centers, "U": holed,
            "row": row, "age": qis.index("age")}


def _same(a, b) -> bool:
    import numpy as np

    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def measure(repeats: int) -> dict:
    import numpy as np
    import test_native_sensitive as old

    from incrowd._native import dense_status, match_combinations, nearest_slots, sensitive_counts, squared_deviations

    x = _inputs()
    n = ROWS
    pair_b = np.arange(n, dtype=np.int64)
    ones = np.ones(n, np.int64)

    def counts_with(kernel):
        distinct, distance = np.zeros(x["n_classes"], np.int64), np.zeros(x["n_classes"])
        kernel(x["class_of"], x["n_classes"], pair_b, x["salary"], ones, x["salary_ref"], False, False, True,
               distinct, distance)
        return distinct, distance

    def old_match():
        src, dest = np.empty(n, np.bool_), np.empty(n, np.bool_)
        old._old_match_kernel(x["U"], x["row"], x["age"], -1, src, dest)
        return src, dest

    pairs = {
        "sensitive_counts (1,000,000 bottom classes, with t)": (lambda: counts_with(sensitive_counts),
                                                                 lambda: counts_with(old._old_sensitive_counts)),
        "dense_status (1,000,000 groups x 14 values, ordered)": (
            lambda: dense_status(x["dense"], x["occ_ref"], True, False),
            lambda: old._old_dense_status(x["dense"], x["occ_ref"], True, False)),
        "nearest_slots (1,000,000 slots x 3 features)": (lambda: nearest_slots(x["cent"], 0, n, 0),
                                                         lambda: old._old_nearest_slots(x["cent"], 0, n, 0)),
        "match_combinations (1,000,000 x 8 codes)": (lambda: match_combinations(x["U"], x["row"], x["age"], -1),
                                                     old_match),
        "squared_deviations (1,000,000 x 3)": (
            lambda: squared_deviations(x["features"], x["class_of"], x["centers"]),
            lambda: old._old_squared_deviations(x["features"], x["class_of"], x["centers"])),
    }
    rows = []
    for name, (native, numba) in pairs.items():
        same = _same(native(), numba())  # numba's first call loads the kernel: not timed
        best = {"native": float("inf"), "numba": float("inf")}
        for _ in range(repeats):
            for key, call in (("native", native), ("numba", numba)):
                t0 = time.perf_counter()
                call()
                best[key] = min(best[key], time.perf_counter() - t0)
        rows.append({"kernel": name, "native_s": best["native"], "numba_s": best["numba"], "identical": same})
        print(rows[-1], flush=True)
    return {"when": now_utc(), "machine": machine_line(), "rows": ROWS, "repeats": repeats, "kernels": rows}


def render(res: dict) -> str:
    body = [[r["kernel"], f"{r['native_s'] * 1000:.1f}", f"{r['numba_s'] * 1000:.1f}",
             f"{r['native_s'] / r['numba_s']:.2f}", "yes" if r["identical"] else "**no**"] for r in res["kernels"]]
    return ("## l, t and local suppression: the extension against numba on a million rows\n\n"
            f"The kernels of l and t, local suppression and the sum of squared deviations on ARX's Adult "
            f"resampled to {res['rows']:,} rows, the compiled extension against the numba kernels it replaced "
            f"(none of them parallel), side by side in one process, best of {res['repeats']} calls each "
            f"(`bench/native_sensitive.py`, {res['when']}; {res['machine']}).\n\n"
            + md_table(["kernel", "extension ms", "numba ms", "ratio", "identical"], body, "lrrrc"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--render", action="store_true", help="only re-render the saved figures")
    args = parser.parse_args()
    if args.render:
        res = json.loads(RESULTS.read_text())
    else:
        res = measure(args.repeats)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    update_section(DOCS / "performance.md", "native-sensitive", render(res), title="Performance")


if __name__ == "__main__":
    main()
