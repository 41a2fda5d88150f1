"""``incrowd publish`` by this checkout and by older sources: the same release, summary and report.

Run from the repository root: ``.venv/bin/python bench/publish_same_release.py --compare OLD/src``.
Each source publishes, as the ``incrowd`` console script runs it, ARX's Adult (the spec of
``bench/publish_startup.py``: k = 5 within 1 %) to CSV and Parquet, and the curator's labelled
household survey (``tests/_household.py``; k = 3 within 5 %, age microaggregated, four coded
keys) to CSV, SPSS and Stata, each with ``--json`` and ``--report``. CSV and Parquet releases are
compared byte for byte; a statistical file is compared as pyreadstat reads it (values with
user-missing codes, value labels, missing-value definitions, measures) and by the bytes that
differ (an SPSS header holds the time it was written); the summaries and reports are compared
without their seconds and paths.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, data_dir  # noqa: E402
from bench_first_use import _spec  # noqa: E402

_CONSOLE = "import sys; sys.argv[0] = 'incrowd'; from incrowd.cli import run; run()"
HOUSEHOLD_SPEC = ('[privacy]\nk = 3\nmax_suppression = "5%"\n\n[columns]\nage = "numeric"\nsex = "categorical"\n'
                  'urbrur = "categorical"\nwater = "categorical"\nroof = "categorical"\n')


def _without_times(value, prefix: str):
    if isinstance(value, dict):
        return {k: _without_times(v, prefix) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [_without_times(v, prefix) for v in value]
    return value.replace(prefix, "") if isinstance(value, str) else value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", type=Path, required=True, help="older sources")
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the sources to check")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "tests"))
    import pyreadstat
    from _household import write_household

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        adult = data_dir() / "adult_arx"
        adult_spec = _spec(work, adult)
        survey = write_household(data_dir(), work / "household.sav")
        household_spec = work / "household.toml"
        household_spec.write_text(HOUSEHOLD_SPEC, encoding="utf-8")
        cases = [("Adult to CSV", adult / "adult.csv", adult_spec, "csv"),
                 ("Adult to Parquet", adult / "adult.csv", adult_spec, "parquet"),
                 ("household .sav to CSV", survey, household_spec, "csv"),
                 ("household .sav to SPSS", survey, household_spec, "sav"),
                 ("household .sav to Stata", survey, household_spec, "dta")]
        for label, data, spec, suffix in cases:
            got = {}
            for name, src in (("before", args.compare.resolve()), ("after", args.src.resolve())):
                out = work / name / f"release.{suffix}"
                out.parent.mkdir(exist_ok=True)
                report = out.with_suffix(".report.json")
                env = dict(os.environ, PYTHONPATH=str(src))
                done = subprocess.run([sys.executable, "-c", _CONSOLE, "publish", str(data), "--spec", str(spec),
                                       "-o", str(out), "--json", "--report", str(report)],
                                      env=env, capture_output=True, text=True, timeout=900)
                if done.returncode != 0:
                    raise SystemExit(f"{label} by {src} failed:\n{done.stderr}")
                prefix = str(out.parent)
                got[name] = (out, _without_times(json.loads(done.stdout), prefix),
                             _without_times(json.loads(report.read_text(encoding="utf-8")), prefix))
            (a, summary_a, report_a), (b, summary_b, report_b) = got["before"], got["after"]
            if suffix in ("sav", "dta"):
                read = pyreadstat.read_sav if suffix == "sav" else pyreadstat.read_dta
                (frame_a, meta_a), (frame_b, meta_b) = read(str(a), user_missing=True), read(str(b), user_missing=True)
                same = frame_a.equals(frame_b) and all(
                    getattr(meta_a, key) == getattr(meta_b, key)
                    for key in ("variable_value_labels", "missing_ranges", "variable_measure", "column_labels"))
                differing = sum(x != y for x, y in zip(a.read_bytes(), b.read_bytes()))
                file = f"the same as pyreadstat reads it: {same}; bytes differing: {differing} of {a.stat().st_size}"
            else:
                file = f"the same byte for byte: {a.read_bytes() == b.read_bytes()}"
            print(f"{label}: release {file}; summary the same: {summary_a == summary_b}; "
                  f"report the same: {report_a == report_b}")


if __name__ == "__main__":
    main()
