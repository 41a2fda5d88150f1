"""Incremental releases of a labelled survey file, timed command by command.

Builds the curator's labelled SPSS file from Adult (``tests/_survey_files.py``), cuts it into a
base (70 %) and two increments (15 % each), and runs, as whole ``incrowd`` processes, with a
release specification (age numeric; workclass, education, marital_status, occupation, race,
sex, native_country categorical with ARX's hierarchies; respid identifier; fnlwgt weight; k = 5,
max_suppression 5 %):

    incremental base, publish, add, publish, add, publish; and for comparison publish of all rows at once

twice each in a fresh state (the first run also compiles what the cache lacks), and reads every
written release back with pyreadstat to count its smallest class over all quasi-identifiers.

    .venv/bin/python bench/bench_incremental_mixed.py [--rows 48842] [--l 2 --t 0.3 --max-suppression 10%]

With ``--l``/``--t`` the spec also makes ``income`` sensitive and every release must keep them.

Writes ``bench/results/incremental_mixed.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
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

QIS = ["age", "workclass", "education", "marital_status", "occupation", "race", "sex", "native_country"]


def _incrowd() -> str:
    return str(Path(sys.executable).with_name("incrowd"))


def _timed(args: list, cwd: Path) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([_incrowd(), *map(str, args)], cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"incrowd {' '.join(map(str, args))} failed:\n{done.stderr}")
    return seconds


def _min_class(path: Path) -> tuple[int, int, int]:
    """(smallest class over all quasi-identifiers, rows, fewest distinct incomes in a class),
    counted on the written file as pyreadstat reads it."""
    import pyreadstat

    frame, _ = pyreadstat.read_sav(str(path), user_missing=True, apply_value_formats=False)
    keys = frame[QIS].astype(object).where(frame[QIS].notna(), "<missing>").astype(str)
    groups = keys.groupby(QIS)
    distinct = int(frame.groupby([keys[q] for q in QIS])["income"].nunique().min())
    return int(groups.size().min()), int(frame.shape[0]), distinct


def _parts(source: Path, work: Path, shares=(0.7, 0.15, 0.15)) -> list[Path]:
    import pyreadstat

    frame, meta = pyreadstat.read_sav(str(source), user_missing=True, apply_value_formats=False)
    n = frame.shape[0]
    bounds = [0, round(shares[0] * n), round((shares[0] + shares[1]) * n), n]
    out = []
    for i in range(3):
        part = work / f"part{i}.sav"
        pyreadstat.write_sav(frame.iloc[bounds[i]:bounds[i + 1]], str(part), column_labels=meta.column_labels,
                             variable_value_labels=meta.variable_value_labels, missing_ranges=meta.missing_ranges,
                             variable_measure=meta.variable_measure, variable_format=meta.original_variable_types)
        out.append(part)
    return out


def run(rows: int | None, l: int | None = None, t: float | None = None, suppression: str = "5%") -> dict:
    with tempfile.TemporaryDirectory(prefix="incrowd-incremental-mixed-") as folder:
        work = Path(folder)
        hierarchies = survey.write_hierarchies(work, data_dir())
        source = survey.write_sav(work / "adult.sav", data_dir(), n=rows)
        lines = [f'{c} = {{ role = "categorical", hierarchy = "{hierarchies[c].name}" }}' for c in QIS if c != "age"]
        sensitive = (f"l = {l}\n" if l else "") + (f"t = {t}\n" if t else "")
        (work / "spec.toml").write_text(
            f'[privacy]\nk = 5\nmax_suppression = "{suppression}"\nallow_full_suppression = true\n{sensitive}'
            '[columns]\nrespid = "identifier"\nage = "numeric"\nfnlwgt = "weight"\n'
            + ('income = "sensitive"\n' if sensitive else "") + "\n".join(lines) + "\n")
        base, late1, late2 = _parts(source, work)
        runs = []
        for attempt in (1, 2):
            state = work / f"state{attempt}.duckdb"
            steps = [("base", ["incremental", "base", base, "-o", state, "--spec", "spec.toml"]),
                     ("publish 0", ["incremental", "publish", state, "-o", f"r{attempt}_0.sav"]),
                     ("add 1", ["incremental", "add", state, late1]),
                     ("publish 1", ["incremental", "publish", state, "-o", f"r{attempt}_1.sav"]),
                     ("add 2", ["incremental", "add", state, late2]),
                     ("publish 2", ["incremental", "publish", state, "-o", f"r{attempt}_2.sav"]),
                     ("one-shot publish (all rows)", ["publish", "adult.sav", "--spec", "spec.toml",
                                                      "-o", f"one{attempt}.sav"])]
            record = {}
            for name, args in steps:
                record[name] = {"seconds": _timed(args, work)}
                if "publish" in name:
                    smallest, kept, distinct = _min_class(work / args[-1])
                    record[name].update(min_class=smallest, rows=kept, min_distinct_income=distinct)
            runs.append(record)
        return {"rows": rows or 48842, "k": 5, "l": l, "t": t, "max_suppression": suppression, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="rows of Adult (default: all 48,842)")
    parser.add_argument("--l", type=int, default=None, help="l on income (sensitive), in every release")
    parser.add_argument("--t", type=float, default=None, help="t on income (sensitive), in every release")
    parser.add_argument("--max-suppression", default="5%")
    args = parser.parse_args()
    result = run(args.rows, args.l, args.t, args.max_suppression)
    name = "incremental_mixed" + ("_lt" if args.l or args.t else "")
    out = HERE / "results" / f"{name}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"| step | first run (s) | second run (s) | rows released | smallest class (k = {result['k']}) "
          "| fewest distinct incomes in a class |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    first, second = result["runs"]
    for step in first:
        extra = (f"{second[step]['rows']} | {second[step]['min_class']} | {second[step]['min_distinct_income']}"
                 if "min_class" in second[step] else " | | ")
        print(f"| {step} | {first[step]['seconds']:.2f} | {second[step]['seconds']:.2f} | {extra} |")


if __name__ == "__main__":
    main()
