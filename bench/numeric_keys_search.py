"""What it costs the search to judge numeric keys by their microaggregation groups.

Run from the repository root: ``.venv/bin/python bench/numeric_keys_search.py --before OLD/src
[--repeats 2]`` (``OLD``: a checkout of the code before, e.g. ``git worktree add /tmp/old main``).
Writes ``bench/results/numeric_keys_search.md`` (and prints it).

With risk targets and numeric quasi-identifiers, a node that passes on its classes is judged
again as the release publishes it (the numeric keys microaggregated within its classes, the
groups above a target suppressed, the limit checked); a node it refuses is passed over. Each
configuration is published in process, once untimed (numba compiles) and then ``--repeats``
times (the median), by the code before (``--before``, in its own process) and by this
checkout: the node chosen or the refusal, the rows suppressed, the nodes the search evaluated,
the group judgements made (this checkout) and the seconds of ``publish``.

Configurations: the curator's household file (``tests/_household.py``: sdcMicro's testdata as
a labelled .sav; keys urbrur, water, sex, age numeric, relat grouped, hhcivil; weight
``sampling_weight``; household ``ori_hid``; k = 3) with ``max_household_risk`` and
``max_individual_risk``; Adult (48,842 rows; age numeric, sex, race, marital-status, education,
native-country with ARX's full hierarchies; weight ``fnlwgt``; k = 5) with ``max_individual_risk``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, data_dir, machine_line, now_utc  # noqa: E402

OUT = REPO / "bench" / "results" / "numeric_keys_search.md"
ADULT_CATEGORICAL = ["sex", "race", "marital-status", "education", "native-country"]


def household_spec(**privacy) -> dict:
    sys.path.insert(0, str(REPO / "tests"))
    import _household as household

    columns: dict = {c: "categorical" for c in household.KEYS}
    columns["age"] = "numeric"
    columns["relat"] = {"role": "categorical", "hierarchy": "h/relat.csv", "match": "label"}
    columns[household.WEIGHT] = "weight"
    columns[household.HOUSEHOLD_ID] = "household"
    return {"privacy": {"k": 3, "suppression": "rows", **privacy}, "columns": columns,
            "levels": {"urbrur": 0, "sex": 0}}


def adult_spec(**privacy) -> dict:
    full = data_dir() / "adult_arx" / "full"
    columns: dict = {"age": "numeric", "fnlwgt": "weight"}
    for name in ADULT_CATEGORICAL:
        columns[name] = {"role": "categorical", "hierarchy": str(full / f"adult_full_hierarchy_{name}.csv")}
    return {"privacy": {"k": 5, **privacy}, "columns": columns}


#: label -> (file, spec)
CONFIGS = {
    "household, max_household_risk = 0.03, 5 %": ("household", household_spec(max_household_risk=0.03,
                                                                              max_suppression="5%")),
    "household, max_individual_risk = 0.1, 5 %": ("household", household_spec(max_individual_risk=0.1,
                                                                              max_suppression="5%")),
    "Adult, max_individual_risk = 2e-6, 1 %": ("adult", adult_spec(max_individual_risk=2e-6, max_suppression="1%")),
    "Adult, max_individual_risk = 1e-6, 1 %": ("adult", adult_spec(max_individual_risk=1e-6, max_suppression="1%")),
}


def worker(repeats: int) -> None:
    """In the process of one checkout: every configuration, one JSON line each."""
    import incrowd
    from incrowd.publishing import _gtm

    judged = [0]
    original = _gtm.microaggregate_classes

    def counted(*args, **kwargs):
        judged[0] += 1
        return original(*args, **kwargs)

    _gtm.microaggregate_classes = counted  # the search's judgements and the release's own call
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sys.path.insert(0, str(REPO / "tests"))
        import _household as household

        household.write_household(data_dir(), folder / "household.sav")
        household.write_hierarchies(folder / "h")
        files = {"household": folder / "household.sav", "adult": data_dir() / "adult.csv.gz"}
        tables = {"household": files["household"], "adult": incrowd.read_table(files["adult"])}
        for label, (name, spec) in CONFIGS.items():
            seconds, out = [], {}
            for i in range(repeats + 1):
                judged[0] = 0
                t = time.perf_counter()
                try:
                    result = incrowd.publish(tables[name], spec, base_dir=folder)
                    s = result.summary()
                    out = {"levels": s["levels"], "suppressed": s["suppressed"], "nodes": s["nodes_evaluated"]}
                except incrowd.ParameterError as exc:
                    out = {"refused": str(exc)}
                if i:  # the first run compiles
                    seconds.append(time.perf_counter() - t)
                out["microaggregations"] = judged[0]
            print(json.dumps({"label": label, "seconds": statistics.median(seconds), **out}), flush=True)


def run(src: Path, repeats: int) -> dict[str, dict]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    got = subprocess.run([sys.executable, __file__, "--worker", "--repeats", str(repeats)], env=env,
                         capture_output=True, text=True, check=True)
    return {row["label"]: row for row in map(json.loads, got.stdout.splitlines())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required="--worker" not in sys.argv)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--worker", action="store_true")
    a = ap.parse_args()
    if a.worker:
        worker(a.repeats)
        return
    before, after = run(a.before, a.repeats), run(REPO / "src", a.repeats)

    def said(row: dict) -> str:
        if "refused" in row:
            return "refused: " + row["refused"][:80] + "..."
        node = ", ".join(f"{k}={v}" for k, v in row["levels"].items())
        return f"{node}; {row['suppressed']} suppressed; {row['nodes']} nodes"

    lines = [f"# The search judges numeric keys by their groups (bench/numeric_keys_search.py; {now_utc()})", "",
             machine_line(), "",
             f"In process, median of {a.repeats} runs after one that compiles. Microaggregations: the "
             "calls of the numeric keys' microaggregation within a node's classes (the search's group "
             "judgements, and the release's own once it reuses none).", "",
             "| configuration | before | before s | after | microaggregations | after s |",
             "| --- | --- | ---: | --- | ---: | ---: |"]
    for label in CONFIGS:
        b, c = before[label], after[label]
        lines.append(f"| {label} | {said(b)} | {b['seconds']:.2f} | {said(c)} | {c['microaggregations']} | "
                     f"{c['seconds']:.2f} |")
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
