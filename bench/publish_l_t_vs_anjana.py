"""``publish`` with l = 2, with t = 0.2 and with k alone on ARX's Adult, side by side with anjana.

ARX's Adult (30,162 rows), its 8 quasi-identifiers as categorical columns with ARX's
hierarchies, sensitive ``salary-class``, k = 5, at most 1 % suppressed; l = 2, then t = 0.2,
then k alone (anjana's ``k_anonymity``).
incrowd's generalize-then-microaggregate ``publish`` with ``metric = "height"`` (the lowest node,
the search before the utility metrics) and ``metric = "loss"`` (the default); anjana 1.2.3's
``l_diversity`` and ``t_closeness`` in their own virtual environment (``$ANJANA_PYTHON``, as in
``metrics_vs_anjana.py``). Every run is a fresh process timed inside around the one call (data
read and imports before), the tools interleaved, ``--repeats`` rounds; medians.

Run: ``.venv/bin/python bench/publish_l_t_vs_anjana.py [--repeats 3]``; writes
``bench/results/publish_l_t_vs_anjana.json`` and the section ``publish-l-t-vs-anjana`` of
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from _common import REPO, data_dir, machine_line, md_table, save_json, update_section
from metrics_vs_anjana import anjana_python

INCROWD = r"""
import json, sys, time
import pandas as pd
import incrowd
folder, model, value, metric = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
data = pd.read_csv(folder + "/adult.csv", sep=";")
qis = [c for c in data.columns if c != "salary-class"]
columns = {a: {"role": "categorical", "hierarchy": f"{folder}/adult_hierarchy_{a}.csv"} for a in qis}
columns["salary-class"] = "sensitive"
privacy = {"k": 5, "max_suppression": "1%", "metric": metric, "allow_full_suppression": True}
if model != "k":
    privacy[model] = int(value) if model == "l" else value
publish = incrowd.publish  # the lazy import before the clock, as anjana's import is
t0 = time.perf_counter()
result = publish(data, {"privacy": privacy, "columns": columns})
seconds = time.perf_counter() - t0
s = result.summary()
print(json.dumps({"seconds": seconds, "compile_seconds": s["compile_seconds"], "levels": s["levels"],
                  "suppressed": s["suppressed"], "nodes": s["nodes_evaluated"], "loss": s["metrics"]["loss"]}))
"""

ANJANA = r"""
import json, sys, time
import pandas as pd
from anjana.anonymity import k_anonymity, l_diversity, t_closeness
folder, model, value = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = pd.read_csv(folder + "/adult.csv", sep=";", dtype=str)
qis = [c for c in data.columns if c != "salary-class"]
hier = {a: dict(pd.read_csv(f"{folder}/adult_hierarchy_{a}.csv", sep=";", header=None, dtype=str)) for a in qis}
t0 = time.perf_counter()
if model == "k":
    out = k_anonymity(data, [], qis, 5, 1, hier)
elif model == "l":
    out = l_diversity(data, [], qis, "salary-class", 5, int(value), 1, hier)
else:
    out = t_closeness(data, [], qis, "salary-class", 5, value, 1, hier)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "suppressed": int(len(data) - len(out))}))
"""


def run(python: str, code: str, *args: str) -> dict:
    out = subprocess.run([python, "-c", code, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = str(data_dir() / "adult_arx")
    ours = sys.executable
    rows, raw = [], []
    for model, value in (("l", "2"), ("t", "0.2"), ("k", "5")):
        runs: dict[str, list[dict]] = {"incrowd (height)": [], "incrowd (loss)": [], "anjana 1.2.3": []}
        run(ours, INCROWD, folder, model, value, "loss")  # numba's cache filled before any timing
        for _ in range(args.repeats):
            runs["incrowd (height)"].append(run(ours, INCROWD, folder, model, value, "height"))
            runs["incrowd (loss)"].append(run(ours, INCROWD, folder, model, value, "loss"))
            runs["anjana 1.2.3"].append(run(anjana_python(), ANJANA, folder, model, value))
            print(model, {name: r[-1]["seconds"] for name, r in runs.items()}, flush=True)
        anjana = statistics.median(r["seconds"] for r in runs["anjana 1.2.3"])
        for name, results in runs.items():
            median = statistics.median(r["seconds"] for r in results)
            last = results[-1]
            request = f"{model} = {value}" if model != "k" else "k = 5 alone"
            rows.append([request, name, f"{median:.2f} s", f"{anjana / median:.2f}x",
                         last["suppressed"], last.get("nodes", ""),
                         f"{last['loss']:.4f}" if "loss" in last else ""])
            raw.append({"model": model, "value": value, "tool": name, "runs": results})
    table = md_table(["request", "tool", "time (median)", "anjana / tool", "suppressed rows", "nodes evaluated",
                      "loss (LM, categorical)"], rows)
    body = ("## publish with l and t against anjana\n\n"
            "ARX's Adult (30,162 rows, 8 categorical quasi-identifiers with ARX's hierarchies, sensitive "
            f"salary-class), k = 5, at most 1 % suppressed; fresh processes, {args.repeats} interleaved "
            f"rounds, medians, the call alone timed.\n\n{table}\n\n{machine_line()}\n")
    save_json(REPO / "bench" / "results" / "publish_l_t_vs_anjana.json", raw)
    update_section(REPO / "docs" / "performance.md", "publish-l-t-vs-anjana", body,
                   "publish with l and t against anjana")
    print(table)


if __name__ == "__main__":
    sys.exit(main())
