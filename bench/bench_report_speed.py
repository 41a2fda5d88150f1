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

``--processes``: as a user runs them, each a fresh process on the files (the same tables written as
CSV, the spec as TOML): ``incrowd publish DATA --spec S -o R`` (the release), the same with
``--report R.html`` (the release and its report: the report's cost is the difference), and
``incrowd report DATA R --spec S -o R.json`` (the standalone report, which finds the kept rows
itself). Wall seconds of each process, with the release's and the report's own ``seconds``
(compiling excluded, said apart). ``--before SRC``: the same commands on a second source tree
(``PYTHONPATH=SRC``), interleaved with these run by run, to time a change. Writes
``bench/results/report_speed_processes.json``.
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
    from incrowd.cli._bench_entry import record_linkage

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
        from incrowd.cli._bench_entry import align

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


PROCESSES = REPO / "bench" / "results" / "report_speed_processes.json"


def _toml(spec: dict) -> str:
    lines = ["[privacy]", "k = 5", 'max_suppression = "1%"', "allow_full_suppression = true", "", "[columns]"]
    for name, role in spec["columns"].items():
        if isinstance(role, dict):
            lines.append(f'"{name}" = {{ role = "{role["role"]}", hierarchy = {json.dumps(role["hierarchy"])} }}')
        else:
            lines.append(f'"{name}" = "{role}"')
    return "\n".join(lines) + "\n"


def run_processes(rows: list[int], repeats: int, before: str | None) -> dict:
    """Fresh processes, as a user runs them (see the module's docstring)."""
    import os
    import subprocess

    import numpy as np

    import incrowd

    work = Path(tempfile.mkdtemp(prefix="report-speed-"))
    (work / "spec.toml").write_text(_toml(_spec()))
    launcher = work / "incrowd_cli.py"
    launcher.write_text("import sys\nfrom incrowd.cli import run\nsys.exit(run())\n")
    adult = incrowd.read_table(data_dir() / "adult.csv.gz")
    versions = {"after": None, **({"before": before} if before else {})}

    def cli(version: str, args: list[str]) -> tuple[float, str]:
        env = dict(os.environ)
        if versions[version]:
            env["PYTHONPATH"] = str(versions[version])
        t = time.perf_counter()
        done = subprocess.run([sys.executable, str(launcher), *args], env=env, cwd=work, capture_output=True,
                              text=True)
        wall = time.perf_counter() - t
        if done.returncode:
            raise SystemExit(f"{version}: incrowd {' '.join(args)} failed: {done.stderr[-2000:]}")
        return wall, done.stdout

    out = []
    for n in rows:
        frame = adult if n == len(adult) else adult.iloc[
            np.random.default_rng(0).integers(0, len(adult), n)].reset_index(drop=True)
        data = f"adult{n}.csv"
        frame.to_csv(work / data, index=False)
        for version in versions:  # numba's cache filled (or compiled) first, untimed
            cli(version, ["publish", data, "--spec", "spec.toml", "-o", "warm.csv", "-q", "--report", "warm.json"])
        for repeat in range(repeats if n <= 250_000 else 1):
            for version in versions:
                rec: dict = {"rows": n, "version": version, "repeat": repeat}
                wall, printed = cli(version, ["publish", data, "--spec", "spec.toml", "-o", f"{version}.csv", "-q",
                                              "--json"])
                summary = json.loads(printed)
                rec.update(publish_wall=wall, publish_seconds=summary.get("seconds"),
                           publish_compile=summary.get("compile_seconds"))
                rec["publish_report_wall"] = cli(version, ["publish", data, "--spec", "spec.toml", "-o",
                                                           f"{version}2.csv", "-q", "--report", f"{version}.html"])[0]
                rec["report_wall"] = cli(version, ["report", data, f"{version}.csv", "--spec", "spec.toml", "-o",
                                                   f"{version}.json", "-q"])[0]
                about = json.loads((work / f"{version}.json").read_text())["about"]
                rec.update(report_seconds=about["seconds"], report_compile=about.get("compile_seconds"))
                out.append(rec)
                print(json.dumps(rec), flush=True)
    return {"when": now_utc(), "machine": machine_line(), "repeats": repeats, "runs": out}


def render_processes(saved: dict) -> str:
    header = ["rows", "version", "publish: process s (its own seconds)", "publish --report: process s",
              "report cost in publish --report s", "report: process s (its own seconds)"]
    table = []
    keys = sorted({(r["rows"], r["version"]) for r in saved["runs"]}, key=lambda k: (k[0], k[1] != "before"))
    for n, version in keys:
        runs = [r for r in saved["runs"] if r["rows"] == n and r["version"] == version]

        def med(f, runs=runs):
            return statistics.median(f(r) for r in runs)

        table.append([f"{n:,}", version, f"{med(lambda r: r['publish_wall']):.1f} ({med(lambda r: r['publish_seconds']):.2f})",
                      f"{med(lambda r: r['publish_report_wall']):.1f}",
                      f"{med(lambda r: r['publish_report_wall'] - r['publish_wall']):.1f}",
                      f"{med(lambda r: r['report_wall']):.1f} ({med(lambda r: r['report_seconds']['total']):.2f})"])
    return (f"Generated by `bench/bench_report_speed.py --processes` on {saved['when']}. Machine: {saved['machine']}; "
            f"median of {saved['repeats']} runs (one at 1,000,000 rows).\n\n" + md_table(header, table))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="48842,200000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--render", action="store_true")
    parser.add_argument("--processes", action="store_true", help="fresh CLI processes, as a user runs them")
    parser.add_argument("--before", default=None, help="with --processes: a second source tree, interleaved")
    args = parser.parse_args()
    if args.processes:
        if not args.render:
            saved = run_processes([int(v) for v in args.rows.split(",")], args.repeats, args.before)
            PROCESSES.parent.mkdir(parents=True, exist_ok=True)
            PROCESSES.write_text(json.dumps(saved, indent=1, default=str) + "\n")
        print(render_processes(json.loads(PROCESSES.read_text())))
        return
    if not args.render:
        saved = run([int(v) for v in args.rows.split(",")], args.repeats)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(saved, indent=1, default=str) + "\n")
    print(render(json.loads(RESULTS.read_text())))


if __name__ == "__main__":
    main()
