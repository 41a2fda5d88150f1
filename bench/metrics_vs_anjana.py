"""The node each utility metric chooses on ARX's Adult, side by side with anjana and the lowest
node: loss (LM), discernibility (DM), suppression and time.

ARX's Adult (30,162 rows, its 8 quasi-identifiers and hierarchies, 6,480 nodes) at k = 2, 5,
10 with 0 % and 1 % suppression. incrowd builds the lattice once (timed apart) and answers each
request with ``negotiate(..., metric=...)``; ``height`` is the lowest node (what the
negotiation answered before the metrics). anjana 1.2.3 (its greedy search: generalize the
attribute with the most distinct values until k holds within the suppression limit) runs in its
own virtual environment (``$ANJANA_PYTHON``, default
``~/.local/share/incrowd-peers/anjana-venv/bin/python``; made with ``pip install
anjana==1.2.3``), one fresh process per configuration, timed inside the process around its
``k_anonymity`` call; its node's metrics are incrowd's ``node_metrics`` at the levels anjana
reports, its suppression is checked against the rows it kept. Times: medians of ``--repeats``
interleaved runs.

Run: ``.venv/bin/python bench/metrics_vs_anjana.py [--repeats 3]``; writes
``bench/results/metrics_vs_anjana.json`` and the section ``metrics-vs-anjana`` of
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
from _common import REPO, data_dir, machine_line, md_table, save_json, update_section

from incrowd.generalization import METRICS, Lattice, negotiate, node_metrics

ANJANA = r"""
import json, sys, time
import pandas as pd
from anjana.anonymity._k_anonymity import k_anonymity_inner
folder, k, supp = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
data = pd.read_csv(folder + "/adult.csv", sep=";", dtype=str)
qis = [c for c in data.columns if c != "salary-class"]
hier = {a: dict(pd.read_csv(f"{folder}/adult_hierarchy_{a}.csv", sep=";", header=None, dtype=str)) for a in qis}
t0 = time.perf_counter()
out, suppressed, levels = k_anonymity_inner(data, [], qis, k, supp, hier)
seconds = time.perf_counter() - t0
print(json.dumps({"levels": {a: int(v) for a, v in levels.items()}, "suppressed": int(suppressed),
                  "rows": int(len(out)), "seconds": seconds}))
"""


def anjana_python() -> str:
    return os.environ.get("ANJANA_PYTHON", str(Path.home() / ".local/share/incrowd-peers/anjana-venv/bin/python"))


def run_anjana(folder: Path, k: int, pct: int) -> dict:
    out = subprocess.run([anjana_python(), "-c", ANJANA, str(folder), str(k), str(pct)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = data_dir() / "adult_arx"
    frame = pd.read_csv(folder / "adult.csv", sep=";")
    qis = [c for c in frame.columns if c != "salary-class"]
    t0 = time.perf_counter()
    lattice = Lattice.build(frame, qis, hierarchies=str(folder))
    build = time.perf_counter() - t0
    negotiate(lattice, k=2, metric="loss")  # the first request loads the compiled search
    rows, raw = [], []
    for k in (2, 5, 10):
        for pct in (0, 1):
            times: dict[str, list[float]] = {m: [] for m in METRICS if m != "classification"}
            times["anjana"] = []
            answers, anjana = {}, None
            for _ in range(args.repeats):  # interleaved: every tool once per round
                for metric in times:
                    if metric == "anjana":
                        anjana = run_anjana(folder, k, pct)
                        times["anjana"].append(anjana["seconds"])
                        continue
                    t = time.perf_counter()
                    answers[metric] = negotiate(lattice, k=k, max_suppression=f"{pct}%", metric=metric)
                    times[metric].append(time.perf_counter() - t)
            for metric, answer in answers.items():
                node = answer.exact
                label = "lowest node (height)" if metric == "height" else metric
                rows.append([k, f"{pct} %", label, f"{node.metrics['loss']:.4f}", f"{node.metrics['discernibility']:.3g}",
                             node.suppressed, f"{statistics.median(times[metric]) * 1000:.1f} ms",
                             ", ".join(str(v) for v in node.levels.values())])
                raw.append({"k": k, "pct": pct, "by": metric, "levels": node.levels, "metrics": node.metrics,
                            "suppressed": node.suppressed, "seconds": times[metric],
                            "evaluated": answer.metric_evaluated})
            values = node_metrics(lattice, anjana["levels"], k=k)
            assert anjana["rows"] + anjana["suppressed"] == lattice.n_rows
            rows.append([k, f"{pct} %", "anjana 1.2.3", f"{values['loss']:.4f}", f"{values['discernibility']:.3g}",
                         anjana["suppressed"], f"{statistics.median(times['anjana']):.2f} s",
                         ", ".join(str(anjana["levels"][a]) for a in qis)])
            raw.append({"k": k, "pct": pct, "by": "anjana", "levels": anjana["levels"], "metrics": values,
                        "suppressed": anjana["suppressed"], "seconds": times["anjana"]})
            print(*rows[-1], flush=True)
    header = ["k", "suppression limit", "node chosen by", "loss (LM)", "discernibility (DM)", "suppressed rows",
              "time (median)", "levels (" + ", ".join(qis) + ")"]
    table = md_table(header, rows)
    body = ("## Utility metrics: the chosen node against anjana and the lowest node\n\n"
            f"ARX's Adult ({lattice.n_rows:,} rows, {len(qis)} quasi-identifiers, {lattice.n_nodes:,} nodes). "
            f"incrowd: the lattice built once in {build:.1f} s, then one `negotiate(..., metric=...)` per row "
            f"(median of {args.repeats} interleaved runs); anjana 1.2.3 in its own virtual environment, its "
            "`k_anonymity` call timed inside a fresh process, its node's metrics computed by incrowd at the "
            "levels it reports. Each metric's row is the least node for that metric (exact; equal to a brute "
            "force over all nodes in `tests/test_optimal_search.py`).\n\n"
            f"{table}\n\n{machine_line()}\n")
    save_json(REPO / "bench" / "results" / "metrics_vs_anjana.json", {"build_seconds": build, "rows": raw})
    update_section(REPO / "docs" / "performance.md", "metrics-vs-anjana", body,
                   "Utility metrics: the chosen node against anjana and the lowest node")
    print(table)


if __name__ == "__main__":
    sys.exit(main())
