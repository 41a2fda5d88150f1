"""The curator's path on a labelled survey file, timed command by command.

Builds Adult coded as a labelled SPSS (.sav) and Stata (.dta) file (codes with value labels, the
user-missing code 99 / ``.a`` "Not stated", the weight ``fnlwgt``, a respondent id; see
``tests/_survey_files.py``) with ARX's hierarchies beside it, then runs what a curator runs:

1. ``incrowd publish FILE --example-spec`` (the starting spec),
2. the roles edited as ``tests/test_survey_path.py`` edits them,
3. ``incrowd publish FILE --spec release.toml -o release.sav --report report.html --json``.

Each command runs twice in a fresh process with ``NUMBA_CACHE_DIR`` pointing at a new empty
folder: the first run compiles the kernels, the second loads them. The table gives the wall time
of each process and, for publish, the seconds and compile seconds its summary reports.

    .venv/bin/python bench/bench_survey_path.py [--rows 48842] [--formats sav,dta]

Writes ``bench/results/survey_path.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import _survey_files as survey  # noqa: E402
from _common import data_dir  # noqa: E402
from test_survey_path import edit_roles  # noqa: E402


def _incrowd() -> str:
    return str(Path(sys.executable).with_name("incrowd"))


def _timed(args: list[str], env: dict, cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    done = subprocess.run([_incrowd(), *args], env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"incrowd {' '.join(args)} failed:\n{done.stderr}")
    return seconds, done


def run(rows: int | None, formats: list[str]) -> list[dict]:
    out = []
    with tempfile.TemporaryDirectory(prefix="incrowd-survey-") as folder:
        work = Path(folder)
        survey.write_hierarchies(work, data_dir())
        for fmt in formats:
            source = work / f"adult.{fmt}"
            (survey.write_sav if fmt == "sav" else survey.write_dta)(source, data_dir(), n=rows)
            cache = work / f"numba-cache-{fmt}"
            cache.mkdir()
            env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
            for attempt in ("first", "second"):
                wall, done = _timed(["publish", source.name, "--example-spec"], env, work)
                out.append({"format": fmt, "rows": rows, "run": attempt, "command": "publish --example-spec",
                            "wall_seconds": wall})
                (work / "release.toml").write_text(edit_roles(done.stdout))
                wall, done = _timed(["publish", source.name, "--spec", "release.toml", "-o", f"release.{fmt}",
                                     "--report", "report.html", "--json"], env, work)
                info = json.loads(done.stdout)
                out.append({"format": fmt, "rows": rows, "run": attempt, "command": "publish --report",
                            "wall_seconds": wall, "seconds": info["seconds"],
                            "compile_seconds": info.get("compile_seconds", 0.0),
                            "verify_seconds": (info.get("verification") or {}).get("seconds"),
                            "levels": info["levels"], "suppressed": info["suppressed"]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=48842, help="rows of Adult (48842: all)")
    parser.add_argument("--formats", default="sav,dta")
    args = parser.parse_args()
    results = run(None if args.rows >= 48842 else args.rows, args.formats.split(","))
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "survey_path.json").write_text(json.dumps(results, indent=2) + "\n")
    print("| file | rows | command | run | wall s | publish s | compile s |")
    print("| --- | ---: | --- | --- | ---: | ---: | ---: |")
    for r in results:
        extra = (f"{r['seconds']:.2f} | {r['compile_seconds']:.2f}" if "seconds" in r else "- | -")
        print(f"| .{r['format']} | {r['rows'] or 48842} | {r['command']} | {r['run']} | {r['wall_seconds']:.2f} | "
              f"{extra} |")


if __name__ == "__main__":
    main()
