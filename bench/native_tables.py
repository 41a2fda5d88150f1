"""A node's working table on a million rows: the compiled extension against the numba kernels it
replaced, side by side in one process.

``incrowd generalize`` and ``incrowd lattice build`` map a table's codes to a node's levels, merge
equal rows and count the class sizes (``incrowd.generalization``'s ``generalize_table``,
``rollup``, ``node_histograms``, all on the extension's ``group_rows``, ``merge_rows`` and
``count_by_value``). Their numba versions are kept, loop for loop, in ``tests/test_native.py`` as
the reference; this script imports them from there. The table: ARX's Adult resampled to
1,000,000 rows (drawn with replacement, seed 0, as ``bench/startup.py`` draws it), its 8 QIs
encoded with ARX's hierarchies as int32 codes (as a lattice stores its bottom classes) and
salary-class as the sensitive column, every row counted once. Each kernel is called once
(numba's load), then the two take turns, ``--repeats`` calls each; the table gives each one's
best wall time, and whether the results are identical.

    .venv/bin/python bench/native_tables.py [--repeats 5] [--render]

Writes the section ``native-tables`` of docs/performance.md and bench/results/native_tables.json.
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

RESULTS = REPO / "bench" / "results" / "native_tables.json"
ARX_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
ROWS = 1_000_000


def _table():
    import numpy as np
    import pandas as pd

    from incrowd.cli._bench_entry import code_map_table
    from incrowd.generalization import resolve_hierarchies

    folder = data_dir() / "adult_arx"
    adult = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    data = adult.sample(ROWS, replace=True, random_state=0).reset_index(drop=True)
    qis, hier = resolve_hierarchies(data, ARX_QIS, str(folder), None, None)
    sensitive = pd.factorize(data["salary-class"])[0]
    codes = np.ascontiguousarray(np.column_stack([*(hier[a].encode(data[a]) for a in qis), sensitive]), np.int32)
    maps, offsets = code_map_table(hier, qis)
    levels = np.array([min(1, hier[a].depth - 1) for a in qis], np.int64)  # one level up where there is one
    return codes, np.ones(ROWS, np.int64), maps, offsets, levels, hier[qis[1]].parents[0], len(qis)


def _same(a, b) -> bool:
    import numpy as np

    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def measure(repeats: int) -> dict:
    import test_native as old

    from incrowd.cli._bench_entry import generalize_table, group_rows, node_histograms, rollup

    codes, counts, maps, offsets, levels, age_parents, m = _table()
    pairs = {
        "group_rows (9 columns)": (lambda: group_rows(codes, counts, m + 1),
                                   lambda: old._old_group_rows(codes, counts, m + 1)),
        "generalize_table (8 QIs one level up)": (
            lambda: generalize_table(codes, counts, maps, offsets, levels, m),
            lambda: old._old_generalize_table(codes, counts, maps, offsets, levels, m)),
        "rollup (age one level up)": (lambda: rollup(codes, counts, 1, age_parents),
                                      lambda: old._old_rollup(codes, counts, 1, age_parents)),
        "node_histograms (with salary-class)": (lambda: node_histograms(codes, counts, m, True),
                                                lambda: old._old_node_histograms(codes, counts, m, True)),
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
    return ("## A node's working table: the extension against numba on a million rows\n\n"
            f"A node's working table on ARX's Adult resampled to {res['rows']:,} rows (int32 codes, "
            f"8 QIs and salary-class), the compiled extension against the numba kernels it replaced, "
            f"side by side in one process, best of {res['repeats']} calls each "
            f"(`bench/native_tables.py`, {res['when']}; {res['machine']}).\n\n"
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
    update_section(DOCS / "performance.md", "native-tables", render(res), title="Performance")


if __name__ == "__main__":
    main()
