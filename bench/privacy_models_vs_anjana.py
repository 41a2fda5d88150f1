"""``publish`` with every privacy model anjana has, on ARX's Adult, side by side with anjana; and
k, k+l, k+t timed with two source trees (today's main against a branch).

ARX's Adult (30,162 rows), 8 categorical quasi-identifiers with ARX's hierarchies, k = 5, at
most 1 % suppressed, ``allow_full_suppression = true``, ``metric = "loss"`` (publish's
default). The sensitive column is ``salary-class`` (two values, a quarter ``>50K``), the one
``tests/test_adult_optimum.py`` checks the chosen node on, with each model's parameters as there
where anjana can take them. Entropy and recursive l are the exceptions, as anjana takes integers
only: with two values no class reaches an entropy of ln 2 short of an exact half-and-half split,
and anjana's recursive (c, l) is pycanon's, whose c (``floor(r_min / (r_l + ... + r_m) + 1)``, the
largest over the classes) is another quantity than ARX's and below 2 short of such a split too
(with ARX's c = 4 anjana finds no release). Those rows protect ``occupation`` (14 values):
entropy l = 2, and recursive (c, l) = (1, 2) (ARX's: the most frequent value of a class less
frequent than the others together; anjana's c = 1 holds wherever l does), ``salary-class``
then being the 8th quasi-identifier (its ARX hierarchy). The rows time the same parameters,
not always the same definition.

anjana 1.2.3 runs in its own virtual environment (``$ANJANA_PYTHON``, as in
``metrics_vs_anjana.py``; made with ``pip install anjana==1.2.3``). Every run is a fresh
process; the call alone is timed inside it (data read and imports before), and the whole
process from outside; the tools interleaved, ``--repeats`` rounds, medians. publish's
``compile_seconds`` (loading the compiled kernels from numba's cache, filled by one untimed run
first) is reported apart. A model ``publish`` does not take yet is timed for anjana alone.

``--baseline-src OLD/src`` times k, k+l and k+t with two source trees instead (``OLD`` and this
checkout's, or ``--src``), whole processes, interleaved (``OLD`` first in each round), each
tree on its own ``PYTHONPATH`` with its numba cache filled by an untimed run: the check that a
new search is no slower than today's paths. On a shared machine two trees with the same code
differ by up to a third in 3 rounds: use more rounds (``--repeats 7``) on a quiet machine.

Run: ``.venv/bin/python bench/privacy_models_vs_anjana.py [--repeats 3] [--only k,l]
[--src OTHER/src] [--baseline-src /tmp/old/src]``; writes
``bench/results/privacy_models_vs_anjana.json`` (the part of the mode run) and the section ``privacy-models-vs-anjana`` (or
``privacy-models-baseline``) of ``docs/performance.md``.
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

from _common import REPO, data_dir, load_json, machine_line, md_table, save_json, update_section
from metrics_vs_anjana import anjana_python

RESULTS = REPO / "bench" / "results" / "privacy_models_vs_anjana.json"
SALARY, OCCUPATION = "salary-class", "occupation"

#: name -> (sensitive column, publish's [privacy] keys beside k, anjana's function, its
#: parameters after k)
REQUESTS: dict[str, tuple[str, dict, str, list]] = {
    "k": (SALARY, {}, "k_anonymity", []),
    "alpha_k": (SALARY, {"alpha": 0.95}, "alpha_k_anonymity", [0.95]),
    "l": (SALARY, {"l": 2}, "l_diversity", [2]),
    "entropy_l": (OCCUPATION, {"entropy_l": 2}, "entropy_l_diversity", [2]),
    "recursive_l": (OCCUPATION, {"recursive_l": {"c": 1, "l": 2}}, "recursive_c_l_diversity", [1, 2]),
    "t": (SALARY, {"t": 0.2}, "t_closeness", [0.2]),
    "beta_basic": (SALARY, {"beta": {"value": 1.0, "variant": "basic"}}, "basic_beta_likeness", [1.0]),
    "beta_enhanced": (SALARY, {"beta": {"value": 1.0, "variant": "enhanced"}}, "enhanced_beta_likeness", [1.0]),
    "delta_disclosure": (SALARY, {"delta_disclosure": 1.0}, "delta_disclosure", [1.0]),
}
BASELINE_REQUESTS = ("k", "l", "t")

INCROWD = r"""
import json, sys, time
import pandas as pd
import incrowd
from incrowd.exceptions import ParameterError
folder, sensitive, extra = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
data = pd.read_csv(folder + "/adult.csv", sep=";")
qis = [c for c in data.columns if c != sensitive]
columns = {a: {"role": "categorical", "hierarchy": f"{folder}/adult_hierarchy_{a}.csv"} for a in qis}
columns[sensitive] = "sensitive"
privacy = {"k": 5, "max_suppression": "1%", "metric": "loss", "allow_full_suppression": True, **extra}
publish = incrowd.publish  # the lazy import before the clock, as anjana's import is
t0 = time.perf_counter()
try:
    result = publish(data, {"privacy": privacy, "columns": columns})
except ParameterError as error:
    print(json.dumps({"refused": str(error)}))
    sys.exit(0)
seconds = time.perf_counter() - t0
s = result.summary()
print(json.dumps({"seconds": seconds, "compile_seconds": s["compile_seconds"], "levels": s["levels"],
                  "suppressed": s["suppressed"], "nodes": s["nodes_evaluated"], "loss": s["metrics"]["loss"]}))
"""

ANJANA = r"""
import json, sys, time
import pandas as pd
import anjana.anonymity as anonymity
folder, sensitive, function, params = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
data = pd.read_csv(folder + "/adult.csv", sep=";", dtype=str)
qis = [c for c in data.columns if c != sensitive]
hier = {a: dict(pd.read_csv(f"{folder}/adult_hierarchy_{a}.csv", sep=";", header=None, dtype=str)) for a in qis}
call = getattr(anonymity, function)
args = [data, [], qis] + ([] if function == "k_anonymity" else [sensitive]) + [5, *params, 1, hier]
t0 = time.perf_counter()
out = call(*args)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "suppressed": int(len(data) - len(out)), "rows": int(len(out))}))
"""


def _tree(src: str) -> str:
    """The commit of a source tree, as a table names it (``+`` when it has changes not committed)."""
    def git(*args: str) -> str:
        out = subprocess.run(["git", "-C", src, *args], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""
    commit = git("rev-parse", "--short", "HEAD") or "not a git checkout"
    return commit + ("+" if git("status", "--porcelain", "--", ".") else "")


def _same_source(a: str, b: str) -> bool:
    """Whether two source trees hold the same committed files and no change beside them."""
    def tree(src: str) -> str:
        out = subprocess.run(["git", "-C", src, "rev-parse", "HEAD:./"], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""
    return bool(tree(a)) and tree(a) == tree(b) and not _tree(a).endswith("+") and not _tree(b).endswith("+")


def run(python: str, code: str, *args: str, src: str | None = None) -> dict:
    """One fresh process; its JSON line, with the whole process's wall time added."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    t0 = time.perf_counter()
    out = subprocess.run([python, "-c", code, *args], capture_output=True, text=True, check=True, env=env)
    wall = time.perf_counter() - t0
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "process_seconds": wall}


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _incrowd_args(folder: str, name: str) -> list[str]:
    sensitive, extra, _, _ = REQUESTS[name]
    return [folder, sensitive, json.dumps(extra)]


def _request_text(name: str) -> str:
    sensitive, extra, _, _ = REQUESTS[name]
    keys = ", ".join(f"{k} = {_toml(v)}" for k, v in extra.items()) or "k alone"
    return keys + (f" (sensitive {sensitive})" if sensitive != SALARY else "")


def _stored(part: str) -> dict:
    stored = load_json(RESULTS) if RESULTS.exists() else {}
    return stored.get(part, {}) if isinstance(stored, dict) and isinstance(stored.get(part), dict) else {}


def _toml(value: object) -> str:
    """A spec value as a TOML line writes it (``{ c = 1, l = 2 }``)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def _save(part: str, raw: dict) -> dict:
    """Merge ``raw`` (request -> its runs) into the part of the results file; returns the part, so
    that a rerun of some requests keeps the others' figures."""
    stored = load_json(RESULTS) if RESULTS.exists() else {}
    stored = stored if isinstance(stored, dict) else {}
    merged = {**_stored(part), **raw}
    stored[part] = merged
    save_json(RESULTS, stored)
    return merged


def _model_rows(name: str, entry: dict) -> list[list]:
    runs = entry["runs"]
    anjana = median(runs["anjana 1.2.3"], "seconds")
    rows = []
    for tool, results in runs.items():
        if not results:
            rows.append([_request_text(name), tool, "publish does not take this key yet", "", "", "", "", "", ""])
            continue
        call, last = median(results, "seconds"), results[-1]
        suppressed = last["suppressed"] if last.get("rows", 1) else f"{last['suppressed']} (no release found)"
        rows.append([_request_text(name), tool, f"{call:.2f} s", f"{median(results, 'process_seconds'):.2f} s",
                     f"{median(results, 'compile_seconds'):.2f} s" if "compile_seconds" in last else "",
                     f"{anjana / call:.2f}x", suppressed, last.get("nodes", ""),
                     f"{last['loss']:.4f}" if "loss" in last else ""])
    return rows


def models(args: argparse.Namespace, folder: str) -> None:
    ours, src = sys.executable, str(Path(args.src).resolve() if args.src else REPO / "src")
    raw = {}
    for name in args.only:
        sensitive, _, function, params = REQUESTS[name]
        first = run(ours, INCROWD, *_incrowd_args(folder, name), src=src)  # fills numba's cache, untimed
        takes = "refused" not in first
        runs: dict[str, list[dict]] = {"incrowd": [], "anjana 1.2.3": []}
        for _ in range(args.repeats):
            if takes:
                runs["incrowd"].append(run(ours, INCROWD, *_incrowd_args(folder, name), src=src))
            runs["anjana 1.2.3"].append(run(anjana_python(), ANJANA, folder, sensitive, function, json.dumps(params)))
            print(name, {tool: r[-1]["seconds"] for tool, r in runs.items() if r}, flush=True)
        raw[name] = {"sensitive": sensitive, "request": REQUESTS[name][1], "anjana": [function, params],
                     "repeats": args.repeats, "publish_takes": takes,
                     "refused": None if takes else first["refused"], "runs": runs, "machine": machine_line(),
                     "source_tree": _tree(src)}
    merged = _save("models", raw)
    rows = [row for name in REQUESTS if name in merged for row in _model_rows(name, merged[name])]
    table = md_table(["request (k = 5, 1 %)", "tool", "call (median)", "whole process (median)",
                      "compile (median)", "anjana / tool (call)", "suppressed rows", "nodes evaluated",
                      "loss (LM, categorical)"], rows)
    body = ("## Every privacy model against anjana\n\n"
            "ARX's Adult (30,162 rows, 8 categorical quasi-identifiers with ARX's hierarchies, sensitive "
            "salary-class unless the row says otherwise), k = 5, at most 1 % suppressed, publish's default "
            f"metric (loss); fresh processes, {args.repeats} interleaved rounds, medians; the call timed inside "
            "the process, the whole process from outside, publish's kernel loading (compile) apart; publish from "
            f"the source tree at {', '.join(sorted({e.get('source_tree', '?') for e in merged.values()}))}. "
            "`bench/privacy_models_vs_anjana.py` says why entropy and recursive l protect occupation and what "
            "anjana's recursive (c, l) means.\n\n"
            f"{table}\n\n{machine_line()}\n")
    update_section(REPO / "docs" / "performance.md", "privacy-models-vs-anjana", body,
                   "Every privacy model against anjana")
    print(table)


def baseline(args: argparse.Namespace, folder: str) -> None:
    ours = sys.executable
    trees = {"baseline": str(Path(args.baseline_src).resolve()),
             "this tree": str(Path(args.src).resolve() if args.src else REPO / "src")}
    rows, raw = [], {}
    for name in [n for n in args.only if n in BASELINE_REQUESTS]:
        for src in trees.values():
            run(ours, INCROWD, *_incrowd_args(folder, name), src=src)  # each tree's numba cache, untimed
        runs: dict[str, list[dict]] = {tree: [] for tree in trees}
        for _ in range(args.repeats):
            for tree, src in trees.items():
                runs[tree].append(run(ours, INCROWD, *_incrowd_args(folder, name), src=src))
            print(name, {tree: r[-1]["process_seconds"] for tree, r in runs.items()}, flush=True)
        old = median(runs["baseline"], "process_seconds")
        for tree, results in runs.items():
            last = results[-1]
            whole = median(results, "process_seconds")
            rows.append([_request_text(name), tree, f"{whole:.2f} s", f"{whole / old:.3f}",
                         f"{median(results, 'seconds'):.2f} s", f"{median(results, 'compile_seconds'):.2f} s",
                         ", ".join(str(v) for v in last["levels"].values()), last["suppressed"], last["nodes"],
                         f"{last['loss']:.4f}"])
        raw[name] = {"trees": trees, "repeats": args.repeats, "runs": runs, "machine": machine_line()}
    table = md_table(["request (k = 5, 1 %)", "source tree", "whole process (median)", "/ baseline", "call (median)",
                      "compile (median)", "levels", "suppressed rows", "nodes evaluated", "loss"], rows)
    body = ("## The one search against today's paths: k, k+l, k+t\n\n"
            "ARX's Adult as in the section above; each source tree in its own fresh processes, interleaved, "
            f"{args.repeats} rounds, medians of the whole process (start, imports, data read, publish). "
            f"Baseline: {_tree(trees['baseline'])}; this tree: {_tree(trees['this tree'])}. A ratio at most 1.10 "
            "is within 10 % of the baseline; two trees with the same code measure the noise of the machine"
            f"{' (as here: the two hold the same source)' if _same_source(*trees.values()) else ''}.\n\n"
            f"{table}\n\n{machine_line()}\n")
    _save("baseline", raw)
    update_section(REPO / "docs" / "performance.md", "privacy-models-baseline", body,
                   "The one search against today's paths")
    print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=",".join(REQUESTS),
                        help=f"comma-separated requests (default all: {', '.join(REQUESTS)})")
    parser.add_argument("--src", help="the src folder publish is run from (default: this checkout's)")
    parser.add_argument("--baseline-src", help="another source tree's src folder: time k, k+l, k+t against it")
    args = parser.parse_args()
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in args.only if name not in REQUESTS]
    if unknown:
        parser.error(f"unknown request(s) {', '.join(unknown)}; known: {', '.join(REQUESTS)}")
    folder = str(data_dir() / "adult_arx")
    if args.baseline_src:
        baseline(args, folder)
    else:
        models(args, folder)


if __name__ == "__main__":
    sys.exit(main())
