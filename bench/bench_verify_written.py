"""What verifying a release on the written file costs: ``incrowd publish`` on Adult as whole
processes, and the share of their wall time that reading the file back and verifying it takes.

Run from the repository root: ``.venv/bin/python bench/bench_verify_written.py [--repeats 3]``.
Prints a Markdown table and writes the raw figures to ``bench/results/verify_written.json``.

Data: Adult (48,842 rows; the column names' ``-`` become ``_`` so the same input can be written
as SPSS), quasi-identifiers age and hours_per_week (numeric) and sex, race, marital_status,
education, native_country (categorical, ARX's full hierarchies), sensitive income, k = 5, at
most 1 % suppressed. Each output format (CSV, Parquet, SPSS .sav) runs once untimed (kernels
compiled and cached), then ``--repeats`` times, the formats taking turns. "read-back and verify
s" is what the command's ``--json`` reports as ``verification.seconds`` (timed inside the
process, around the read-back and the verifiers); wall seconds are the whole process's, start-up
included; the share is their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, data_dir, machine_line, md_table, now_utc  # noqa: E402

RESULTS = REPO / "bench" / "results" / "verify_written.json"
CATEGORICAL = ["sex", "race", "marital-status", "education", "native-country"]
NUMERIC = ["age", "hours-per-week"]
FORMATS = [".csv", ".parquet", ".sav"]

def _name(column: str) -> str:
    return column.replace("-", "_")


def prepare(folder: Path) -> tuple[Path, Path]:
    import pandas as pd

    data = pd.read_csv(data_dir() / "adult.csv.gz", dtype=str, keep_default_na=False)
    data.columns = [_name(c) for c in data.columns]
    source = folder / "adult.csv"
    data.to_csv(source, index=False)
    full = data_dir() / "adult_arx" / "full"
    lines = ["[privacy]", "k = 5", 'max_suppression = "1%"', "[columns]", 'income = "sensitive"']
    lines += [f'{_name(c)} = "numeric"' for c in NUMERIC]
    lines += [f'{_name(c)} = {{role = "categorical", hierarchy = "{full / f"adult_full_hierarchy_{c}.csv"}"}}'
              for c in CATEGORICAL]
    spec = folder / "release.toml"
    spec.write_text("\n".join(lines) + "\n")
    return source, spec


def one_run(source: Path, spec: Path, output: Path) -> tuple[float, float, float]:
    """(process wall seconds, the release's own seconds, the read-back and verification seconds),
    the last two as ``--json`` reports them."""
    args = [sys.executable, "-m", "incrowd.cli", "publish", str(source), "--spec", str(spec), "-o", str(output),
            "--json"]
    t0 = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"publish failed ({output.suffix}): {done.stderr.strip()[-2000:]}")
    info = json.loads(done.stdout)
    return wall, float(info["seconds"]), float(info["verification"]["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    raw: dict[str, list] = {suffix: [] for suffix in FORMATS}
    with tempfile.TemporaryDirectory(prefix="incrowd-bench-verify-") as folder:
        tmp = Path(folder)
        source, spec = prepare(tmp)
        for suffix in FORMATS:  # warm-up: kernels compiled and cached, files in the page cache
            one_run(source, spec, tmp / f"release{suffix}")
        for _ in range(args.repeats):  # the formats take turns, so drift hits them alike
            for suffix in FORMATS:
                raw[suffix].append(one_run(source, spec, tmp / f"release{suffix}"))
    rows = []
    for suffix, runs in raw.items():
        wall = statistics.median(w for w, _, _ in runs)
        release = statistics.median(r for _, r, _ in runs)
        verify = statistics.median(v for _, _, v in runs)
        rows.append([suffix, f"{wall:.2f}", f"{release:.3f}", f"{verify:.3f}", f"{100 * verify / wall:.1f} %"])
    table = md_table(["output", "publish wall s (whole process)", "release s", "read-back and verify s",
                      "share of wall"], rows)
    print(f"incrowd publish, Adult 48,842 rows, k = 5, {args.repeats} runs each, formats interleaved "
          f"(medians); {machine_line()}, {now_utc()}\n")
    print(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"machine": machine_line(), "when": now_utc(), "repeats": args.repeats,
                                   "runs": raw}, indent=1) + "\n")


if __name__ == "__main__":
    main()
