"""How long the risk and utility report takes against the release it describes.

Run from the repository root: ``.venv/bin/python bench/bench_report_speed.py [--rows 48842,200000,1000000]
[--repeats 3]``. Writes ``bench/results/report_speed.json`` and prints a Markdown table.

Data: Adult (48,842 rows; at 200,000 and 1,000,000 rows its rows drawn with replacement, seed 0),
published with ``incrowd.publish``: k = 5, at most 1 % suppressed, numeric age, capital-gain and
hours-per-week (MDAV), categorical workclass, education, marital-status, race, sex (ARX's full
hierarchies) and native-country (no hierarchy), sensitive income. Release time: ``publish`` on
the table in memory (compiling excluded: one untimed run first). Report time: ``incrowd.report``
on the same tables with ``report_options()`` (figures included) plus the HTML page, median of the
repeats (one run at 200,000 rows and above); per measure, the report's own ``about.seconds``. "record linkage before" is the
distance-based and global linkage as the report ran them before (a sample of the masked records
against all originals above 20,000 rows, and the global assignment on 20 samples of 2,000 rows).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, data_dir, machine_line, md_table, now_utc  # noqa: E402

RESULTS = REPO / "bench" / "results" / "report_speed.json"
HIERARCHIES = ["workclass", "education", "marital-status", "race", "sex"]


def _spec() -> dict:
    full = data_dir() / "adult_arx" / "full"
    columns = {"age": "numeric", "capital-gain": "numeric", "hours-per-week": "numeric",
               "native-country": "categorical", "income": "sensitive"}
    for name in HIERARCHIES:
        columns[name] = {"role": "categorical", "hierarchy": str(full / f"adult_full_hierarchy_{name}.csv")}
    return {"privacy": {"k": 5, "max_suppression": "1%", "allow_full_suppression": True}, "columns": columns}


def _linkage_before(rep_input) -> float:
    from incrowd._bench_entry import record_linkage

    X, Xm = rep_input
    budget = int(5e9 // max(X.shape[0] * max(X.shape[1], 1), 1))
    t = time.perf_counter()
    record_linkage(X, Xm, max_exact=20000, distance_sample=min(5000, max(1000, budget)), global_linkage=True)
    return time.perf_counter() - t


def run(rows: list[int], repeats: int) -> dict:
    import numpy as np

    import incrowd

    adult = incrowd.read_table(data_dir() / "adult.csv.gz")
    spec = _spec()
    out = []
    for n in rows:
        frame = adult if n == len(adult) else adult.iloc[
            np.random.default_rng(0).integers(0, len(adult), n)].reset_index(drop=True)
        incrowd.publish(frame.head(5000), spec)  # compile and load the kernels, untimed
        publish_s, report_s, parts = [], [], []
        for _ in range(repeats if n <= 100_000 else 1):  # the large ones once: minutes each
            t = time.perf_counter()
            result = incrowd.publish(frame, spec)
            publish_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            rep = incrowd.report(frame, result.table, **result.report_options())
            with tempfile.TemporaryDirectory() as tmp:
                rep.to_html(Path(tmp) / "report.html")
            report_s.append(time.perf_counter() - t)
            parts.append(rep.about["seconds"])
        from incrowd._bench_entry import align

        o = result.report_options()
        a = align(frame, result.table, o["quasi_identifiers"], o["sensitive"], o["identifiers"],
                  kept_rows=o["kept_rows"], numeric=o["numeric"])
        X, Xm, _ = a.complete_numbers
        before = _linkage_before((X, Xm)) if n <= 250_000 else None
        median_parts = {k: statistics.median(p.get(k, 0.0) for p in parts) for k in parts[0]}
        out.append({"rows": n, "publish_seconds": statistics.median(publish_s),
                    "report_seconds": statistics.median(report_s), "parts": median_parts,
                    "linkage_before_seconds": before, "verdict": [(v["measure"], v["status"]) for v in rep.verdict]})
        print(json.dumps(out[-1]), flush=True)
    return {"when": now_utc(), "machine": machine_line(), "repeats": repeats, "runs": out}


def render(saved: dict) -> str:
    header = ["rows", "release (publish) s", "report s", "report / release", "record linkage s (before)",
              "slowest parts of the report"]
    table = []
    for r in saved["runs"]:
        parts = sorted(((k, v) for k, v in r["parts"].items() if k != "total"), key=lambda kv: -kv[1])[:3]
        before = r.get("linkage_before_seconds")
        table.append([f"{r['rows']:,}", f"{r['publish_seconds']:.2f}", f"{r['report_seconds']:.2f}",
                      f"{r['report_seconds'] / r['publish_seconds']:.2f}",
                      f"{r['parts'].get('record_linkage', 0):.2f} ({before:.2f})" if before is not None
                      else f"{r['parts'].get('record_linkage', 0):.2f} (-)",
                      ", ".join(f"{k} {v:.2f} s" for k, v in parts)])
    return (f"Generated by `bench/bench_report_speed.py` on {saved['when']}. Machine: {saved['machine']}; "
            f"median of {saved['repeats']} runs.\n\n" + md_table(header, table))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="48842,200000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--render", action="store_true")
    args = parser.parse_args()
    if not args.render:
        saved = run([int(v) for v in args.rows.split(",")], args.repeats)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(saved, indent=1, default=str) + "\n")
    print(render(json.loads(RESULTS.read_text())))


if __name__ == "__main__":
    main()
