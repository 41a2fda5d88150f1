"""Local recoding (each class at its own levels) against the optimal global node, on ARX's Adult
and Credit Card: loss (Iyengar's LM), discernibility, classes, suppression and time.

- Adult: ARX's ``adult.csv`` (30,162 rows) with its 8 quasi-identifiers and hierarchies
  (6,480 nodes).
- Credit Card: ``credit_default.csv.gz`` (30,000 rows), 6 quasi-identifiers: SEX, EDUCATION
  and MARRIAGE with the small hierarchies below (the codes' meanings from the UCI page),
  AGE (intervals 5, 10, 20, 40), LIMIT_BAL (50,000 ... 800,000) and PAY_0 (2, 4, 12), 3,780
  nodes.

At k = 2, 5, 10: the optimal global node for ``loss`` with 0 % and with 1 % suppression
(``generalize(..., metric="loss", max_suppression=...)``: the lattice built, the optimum
searched, the node applied and verified; its time is that whole call); local recoding from the
top of every hierarchy, with and without looking ahead (``local_recoding``, nothing
suppressed); and local recoding started from the 0 % global node (its time: the global call's
plus its own). Times: medians of ``--repeats`` interleaved runs in this process (after one
warm-up run that compiles what numba compiles).

Run: ``.venv/bin/python bench/local_vs_global.py [--repeats 3]``; writes
``bench/results/local_vs_global.json`` and the section ``local-vs-global`` of
``docs/guide/negotiation.md``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd
from _common import REPO, data_dir, machine_line, md_table, save_json, update_section

from incrowd.generalization import generalize, interval_hierarchy, load_hierarchies, local_recoding, read_hierarchy

ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
CREDIT_QIS = ["SEX", "EDUCATION", "MARRIAGE", "AGE", "LIMIT_BAL", "PAY_0"]
CREDIT_FILES = {
    "SEX": "1;*\n2;*\n",
    # 1 graduate school, 2 university, 3 high school, 4 others, 0/5/6 unknown
    "EDUCATION": "1;tertiary;*\n2;tertiary;*\n3;secondary;*\n4;other;*\n0;other;*\n5;other;*\n6;other;*\n",
    # 1 married, 2 single, 3 others, 0 unknown
    "MARRIAGE": "1;married;*\n2;single;*\n3;other;*\n0;other;*\n",
}
CREDIT_INTERVALS = {"AGE": [5, 10, 20, 40], "LIMIT_BAL": [50_000, 100_000, 200_000, 400_000, 800_000],
                    "PAY_0": [2, 4, 12]}
KS = (2, 5, 10)


def load(name: str):
    folder = data_dir()
    if name == "adult":
        frame = pd.read_csv(folder / "adult_arx" / "adult.csv", sep=";", dtype=str)
        return frame, load_hierarchies(str(folder / "adult_arx"), ADULT_QIS), ADULT_QIS
    frame = pd.read_csv(folder / "credit_default.csv.gz")[CREDIT_QIS]
    hier = {}
    with tempfile.TemporaryDirectory() as tmp:
        for a, text in CREDIT_FILES.items():
            path = Path(tmp) / f"{a}.csv"
            path.write_text(text)
            hier[a] = read_hierarchy(path, a)
    for a, widths in CREDIT_INTERVALS.items():
        hier[a] = interval_hierarchy(frame[a], widths, a)
    return frame, hier, CREDIT_QIS


def run_once(frame, hier, qis, k):
    """{variant: (seconds, result)} for one k."""
    out = {}
    for supp in (0, 0.01):
        t = time.perf_counter()
        g = generalize(frame, k=k, hierarchies=hier, quasi_identifiers=qis, metric="loss", max_suppression=supp)
        out[f"global {supp:.0%}"] = (time.perf_counter() - t, g)
    for lookahead in (True, False):
        t = time.perf_counter()
        r = local_recoding(frame, hier, k, lookahead=lookahead)
        out["local" if lookahead else "local, no lookahead"] = (time.perf_counter() - t, r)
    g_seconds, g = out["global 0%"]
    t = time.perf_counter()
    r = local_recoding(frame, hier, k, levels=g.levels)
    out["local from the global 0% node"] = (g_seconds + time.perf_counter() - t, r)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows, raw = [], []
    for name, shown in (("adult", "Adult"), ("credit", "Credit Card")):
        frame, hier, qis = load(name)
        run_once(frame, hier, qis, 5)  # warm-up: numba's kernels compiled or loaded once
        for k in KS:
            times: dict[str, list[float]] = {}
            results = {}
            for _ in range(args.repeats):
                for variant, (seconds, result) in run_once(frame, hier, qis, k).items():
                    times.setdefault(variant, []).append(seconds)
                    results[variant] = result
            for variant, result in results.items():
                m = result.metrics
                seconds = statistics.median(times[variant])
                rows.append([shown, k, variant, f"{m['loss']:.4f}", f"{m['discernibility']:.3g}", result.classes,
                             result.suppressed, f"{seconds:.2f}"])
                raw.append({"data": name, "k": k, "variant": variant, "loss": m["loss"],
                            "discernibility": m["discernibility"], "classes": result.classes,
                            "suppressed": result.suppressed, "seconds": times[variant],
                            "levels": getattr(result, "levels", None),
                            "level_ranges": getattr(result, "level_ranges", None)})
                print(*rows[-1], sep="\t", flush=True)
    table = md_table(["data", "k", "release", "loss (LM)", "discernibility", "classes", "suppressed", "seconds"],
                     rows, "lrlrrrrr")
    body = (f"Measured by `bench/local_vs_global.py` (medians of {args.repeats} runs; global: the lattice "
            "built, the optimal node for `loss` searched, applied and verified; local: nothing suppressed; "
            "\"local from the global 0% node\": its time includes the global call's).\n\n"
            f"{table}\n\n{machine_line()}\n")
    save_json(REPO / "bench" / "results" / "local_vs_global.json", {"rows": raw})
    update_section(REPO / "docs" / "guide" / "negotiation.md", "local-vs-global", body,
                   "Generalization and negotiation")


if __name__ == "__main__":
    main()
