"""Peak memory of lattice builds on Adult against the estimate the size limits use.

Run from the repository root: ``.venv/bin/python bench/bench_lattice_memory.py`` (about 3
minutes). Writes ``bench/results/lattice_memory.json`` and the section ``lattice-memory`` of
``docs/performance.md``.

Each case runs in a fresh process: the data and hierarchies are read, numba's kernels are
loaded by a build of two attributes, the peak-RSS counter is reset (``/proc/self/clear_refs``),
one ``Lattice.build`` runs with the limits lifted, and the growth of the peak resident set over
the resident set before the call is compared with ``estimate_bytes`` for the same build.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DOCS, hand_back, machine_line, md_table, now_utc, proc_status, run_child, update_section  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "lattice_memory.json"
ARX9 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation",
        "salary-class"]
FULL10 = ["age", "workclass", "education", "education-num", "marital-status", "occupation", "relationship",
          "race", "sex", "native-country"]
FULL11 = FULL10 + ["capital-loss"]

CASES = [
    # (label, data, quasi-identifiers, sensitive, fraction)
    ("ARX Adult, 9 QIs", "arx", ARX9, None, 1.0),
    ("ARX Adult, 8 QIs + salary-class sensitive", "arx", ARX9[:-1], "salary-class", 1.0),
    ("ARX Adult, 6 QIs", "arx", ARX9[:6], None, 1.0),
    ("Adult 32,561 rows, 10 QIs, full hierarchies", "full", FULL10, None, 1.0),
    ("Adult 32,561 rows, 11 QIs, full hierarchies, --partial 2%", "full", FULL11, None, 0.02),
]


def _load(kind: str, qis: list[str], sensitive: str | None):
    import pandas as pd
    from _common import data_dir

    from incrowd.generalization import read_hierarchy
    from incrowd import read_table

    root = data_dir()
    if kind == "arx":
        data = pd.read_csv(root / "adult_arx" / "adult.csv", sep=";")
        files = {a: root / "adult_arx" / f"adult_hierarchy_{a}.csv" for a in qis}
    else:
        # the ARX full hierarchies cover adult.data (the first 32,561 rows); their age file has
        # overlapping bins, so age takes the ARX example's hierarchy
        data = read_table(root / "adult.csv.gz").head(32_561)
        files = {a: root / "adult_arx" / "full" / f"adult_full_hierarchy_{a}.csv" for a in qis}
        files["age"] = root / "adult_arx" / "adult_hierarchy_age.csv"
    return data, {a: read_hierarchy(f, a) for a, f in files.items()}


def _one(index: int) -> None:
    from incrowd.generalization import Lattice, estimate_bytes
    from incrowd.cli._bench_entry import count_bottom_classes

    _label, kind, qis, sensitive, fraction = CASES[index]
    data, hier = _load(kind, qis, sensitive)
    Lattice.build(data, qis[:2], hierarchies=hier)  # numba's kernels, loaded outside the measure
    classes = count_bottom_classes(data, qis + ([sensitive] if sensitive else []))
    depths = [hier[a].depth for a in qis]
    estimate = estimate_bytes(depths, fraction, classes, n_rows=data.shape[0], sensitive=sensitive is not None)
    with open("/proc/self/clear_refs", "w", encoding="utf-8") as fh:
        fh.write("5")  # reset the peak RSS to the current RSS
    before = proc_status("VmRSS")
    t0 = time.perf_counter()
    lattice = Lattice.build(data, qis, hierarchies=hier, sensitive=sensitive, fraction=fraction,
                            max_nodes=None, max_memory=None)
    seconds = time.perf_counter() - t0
    peak = proc_status("VmHWM")
    hand_back({"before": before, "peak": peak, "seconds": seconds, "estimate": estimate,
              "nodes": lattice.n_nodes, "computed": int(lattice.materialized.sum()),
              "bottom_classes": classes, "rows": int(data.shape[0]),
              "entries_per_node": lattice.k_histograms.keys.size / max(1, int(lattice.materialized.sum()))})


def _refused() -> list[list[str]]:
    """Estimates (no build) for the lattices the defaults refuse: 12 and 14 Adult attributes."""
    from incrowd.generalization import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, estimate_bytes, node_count
    from incrowd.cli._bench_entry import count_bottom_classes

    rows = []
    for label, qis in (("Adult, 12 QIs, full hierarchies", FULL11 + ["capital-gain"]),
                       ("Adult, 14 QIs, full hierarchies", FULL11 + ["capital-gain", "hours-per-week", "fnlwgt"])):
        data, hier = _load("full", qis, None)
        depths = [hier[a].depth for a in qis]
        classes = count_bottom_classes(data, qis)
        need = estimate_bytes(depths, 1.0, classes, n_rows=data.shape[0])
        nodes = node_count(depths)
        rows.append([label, f"{nodes:,}", f"{classes:,}", f"{need / 2**30:.1f}",
                     "nodes and memory" if nodes > DEFAULT_MAX_NODES and need > DEFAULT_MAX_MEMORY
                     else "nodes" if nodes > DEFAULT_MAX_NODES else "memory" if need > DEFAULT_MAX_MEMORY else "no"])
    return rows


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        _one(int(sys.argv[2]))
        return
    t_start = time.perf_counter()
    records, rows = [], []
    for index, (label, _kind, qis, sensitive, fraction) in enumerate(CASES):
        got = run_child(__file__, index)
        growth = got["peak"] - got["before"]
        records.append({"case": label, "quasi_identifiers": qis, "sensitive": sensitive, "fraction": fraction,
                        "measured_bytes": growth, **got})
        rows.append([label, f"{got['nodes']:,}", f"{got['computed']:,}", f"{got['bottom_classes']:,}",
                     f"{growth / 2**20:.0f}", f"{got['estimate'] / 2**20:.0f}", f"{got['estimate'] / growth:.2f}",
                     f"{got['seconds']:.1f} s"])
        print(rows[-1], flush=True)
    refused = _refused()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": machine_line(), "date": now_utc(), "cases": records,
                                   "refused": [dict(zip(("case", "nodes", "bottom_classes", "estimate_gib",
                                                         "over_limit"), r)) for r in refused]}, indent=2) + "\n",
                       encoding="utf-8")
    refused_table = md_table(["lattice", "nodes", "bottom classes", "estimate GiB", "over the default limit of"],
                             refused, align="lrrrl")
    table = md_table(["build", "nodes", "computed", "bottom classes", "measured MiB", "estimate MiB",
                      "estimate / measured", "time"], rows, align="lrrrrrrr")
    body = f"""## Lattice memory: measured peak against the size-limit estimate

Written by `bench/bench_lattice_memory.py` on {now_utc()} ({(time.perf_counter() - t_start) / 60:.1f} min).
Machine: {machine_line()}. Data: ARX's Adult example (`adult_arx/adult.csv`, 30,162 rows, its 9
hierarchies) and UCI Adult's first 32,561 rows (`adult.csv.gz`, `adult.data`) with ARX's full
hierarchies (age from the example). Each build runs in a fresh process after a warm-up with the
limits lifted; "measured" is the growth of the peak resident set during `Lattice.build` over the
resident set before it; "estimate" is `incrowd.generalization.estimate_bytes`, which
`--max-memory` (default 8 GiB) is compared with before any data are encoded. `--max-nodes`
(default 200,000) bounds the computed nodes; the partial build computes its 2% share (plus the
top node) but still holds per-node arrays for the whole lattice, which the estimate counts.

{table}

The estimate is meant to stay at or above the measured peak (ratio >= 1), so a build under the
limits does not run out of memory. It counts the distinct-sensitive-value histograms as large as
the class-size ones, which is why the build with a sensitive attribute is over-estimated most.
By the same costs, the lattices that grew without bound before the limits existed are refused
before the data are read (node count) or encoded (memory):

{refused_table}
"""
    update_section(DOCS / "performance.md", "lattice-memory", body, "Performance")
    print(body)


if __name__ == "__main__":
    main()
