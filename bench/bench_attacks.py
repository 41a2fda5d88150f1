"""Seconds of the anonymeter attacks (``incrowd.report``'s attacks) on the full Adult file.

Run from the repository root: ``.venv/bin/python bench/bench_attacks.py [--repeats 2]``.
Prints a JSON object and writes it to ``bench/results/attacks.json``.

Data: Adult (48,842 rows, ``?`` kept as a value); release: ``incrowd.publish`` with
generalize-then-microaggregate, k = 5, at most 1 % suppressed (age and hours-per-week
microaggregated, sex, race, marital-status, education, native-country generalized by ARX's full
hierarchies); suppressed rows are removed from the original before the attacks. Attacks:
quasi-identifiers age, sex, race, marital-status, education, native-country, hours-per-week,
secret income, default ``n_attacks`` (500) and control split (30 %). Each evaluator is timed on
its own. The first call in a fresh process with an empty numba cache (``NUMBA_CACHE_DIR`` set to
a new folder) includes compiling anonymeter's nearest-neighbour kernels; the later calls reuse them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, child_json, data_dir, hand_back, machine_line, now_utc, save_json  # noqa: E402

RESULTS = REPO / "bench" / "results" / "attacks.json"
QIS = ["age", "sex", "race", "marital-status", "education", "native-country", "hours-per-week"]


def child(repeats: int) -> dict:
    import pandas as pd

    import incrowd
    from anonymeter import evaluators
    from bench_publish import spec
    from incrowd.cli._bench_entry import attacks

    stages: list[tuple[str, float]] = []
    for name in ("SinglingOutEvaluator", "LinkabilityEvaluator", "InferenceEvaluator"):
        cls = getattr(evaluators, name)

        def timed(self, *a, _f=cls.evaluate, _n=name, **k):
            t0 = time.perf_counter()
            out = _f(self, *a, **k)
            stages.append((f"{_n}({', '.join(f'{v}' for v in k.values())})", time.perf_counter() - t0))
            return out

        cls.evaluate = timed

    data = pd.read_csv(data_dir() / "adult.csv.gz", keep_default_na=False)
    published = incrowd.publish(data, spec("generalize-then-microaggregate", {}))
    original = data.iloc[published.kept_rows].reset_index(drop=True)
    release = published.table.reset_index(drop=True)
    runs = []
    for _ in range(1 + repeats):
        stages.clear()
        t0 = time.perf_counter()
        result = attacks(original, release, quasi_identifiers=QIS, secret="income")
        runs.append({"seconds": time.perf_counter() - t0, "stages": dict(stages)})
    return {"rows": len(original), "suppressed": int(published.suppressed), "runs": runs,
            "risks": {"singling_out_univariate": result["singling_out"]["univariate"]["risk"],
                      "singling_out_multivariate": result["singling_out"]["multivariate"]["risk"],
                      "linkability": result["linkability"]["risk"],
                      "inference": result["inference"]["risk"]},
            "warnings": result["warnings"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="calls after the first (default 2)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        hand_back(child(args.repeats))
        return
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        got = child_json([sys.executable, __file__, "--child", "--repeats", args.repeats], env=env)
    saved = {"machine": machine_line(), "date": now_utc(), **got}
    save_json(RESULTS, saved)
    print(json.dumps(saved, indent=1))


if __name__ == "__main__":
    main()
