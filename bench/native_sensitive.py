"""l and t, local suppression and the sum of squared deviations on a million rows: the compiled
extension against the numba kernels it replaced, side by side in one process.

``publish`` with l or t judges each class's distinct values and distance (``sensitive_counts``)
and merges failing groups (``dense_status``, ``nearest_slots``); ``local_suppression`` matches
records (``match_combinations``); a release reports its information loss
(``squared_deviations``). Their numba versions are kept, loop for loop, in
``tests/test_native_sensitive.py`` as the reference; this script imports them from there. The
data: ARX's Adult resampled to 1,000,000 rows (drawn with replacement, seed 0, as
``bench/startup.py`` draws it), its 8 QIs as codes. Each kernel's input:

- ``sensitive_counts``: every row its own bottom class (as ``negotiate``'s view passes them),
  its class at the node one level up on every QI, salary-class as the sensitive value, with t;
- ``dense_status``: one group per row (a merge's start), occupation's 14 values, ordered;
- ``nearest_slots``: every row a live group, its codes of age, education and occupation as
  the centroid (3 features), the nearest to the first;
- ``match_combinations``: the rows' 8 codes, one cell in 20 missing, against the first row with
  its age blanked;
- ``squared_deviations``: the 3 features against their class means at the node above;
- SUDA2's ``msu_search`` on Adult itself (30,162 records, 8 keys: what ``incrowd risk`` searches;
  on a million it would search for minutes), ``record_hashes`` of the million rows' 8 codes and
  ``dis_scores`` of a million scores.

Each kernel is called once (numba's load), then the two take turns, ``--repeats`` calls each;
the table gives each one's best wall time, and whether the results are identical. None of the
numba kernels ran in parallel, so the extension has no threshold to hand over at.

With ``--before SRC`` (the sources without these kernels, e.g. a worktree of the commit before)
it measures whole processes instead: ``incrowd publish`` of Adult with l = 2 (bench_first_use.py's
spec, ``age`` numeric, plus ``l = 2``; and the same with every key categorical, so no MDAV runs),
``local_suppression`` of sdcMicro's testdata (7 keys, k = 3, as ``bench/startup.py`` runs it) and
``incrowd risk`` of Adult (8 QIs, SUDA2 included),
each started as a user starts it, before and after taking turns within each round, warm numba
caches (one per source, filled by an untimed run), bytecode compiled (``PYTHONDONTWRITEBYTECODE``
unset). Medians of ``--repeats`` rounds: wall and CPU (user + system) seconds, and whether the
process imported numba.

    .venv/bin/python bench/native_sensitive.py [--repeats 5] [--render]
    .venv/bin/python bench/native_sensitive.py --before /tmp/old/src [--repeats 5] [--render]

Writes the section ``native-sensitive`` (or ``native-sensitive-processes``) of
docs/performance.md and bench/results/native_sensitive.json (or native_sensitive_processes.json).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import DOCS, REPO, data_dir, machine_line, md_table, now_utc, update_section  # noqa: E402

RESULTS = REPO / "bench" / "results" / "native_sensitive.json"
PROCESS_RESULTS = REPO / "bench" / "results" / "native_sensitive_processes.json"
ARX_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
ROWS = 1_000_000


def _inputs() -> dict:
    import numpy as np
    import pandas as pd

    from incrowd.generalization import resolve_hierarchies

    folder = data_dir() / "adult_arx"
    adult = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    data = adult.sample(ROWS, replace=True, random_state=0).reset_index(drop=True)
    qis, hier = resolve_hierarchies(data, ARX_QIS, str(folder), None, None)
    codes = np.column_stack([hier[a].encode(data[a]) for a in qis]).astype(np.int64)
    up = np.column_stack([hier[a].parents[0][codes[:, j]] if hier[a].depth > 1 else codes[:, j]
                          for j, a in enumerate(qis)])
    class_of = np.unique(up, axis=0, return_inverse=True)[1].ravel().astype(np.int64)
    n_classes = int(class_of.max()) + 1
    salary = pd.factorize(data["salary-class"], sort=True)[0].astype(np.int64)
    occupation = pd.factorize(data["occupation"], sort=True)[0].astype(np.int64)
    m_occ = int(occupation.max()) + 1
    features = np.column_stack([codes[:, qis.index(a)] for a in ("age", "education", "occupation")]).astype(float)
    sums = np.zeros((n_classes, 3))
    np.add.at(sums, class_of, features)
    centers = sums / np.bincount(class_of, minlength=n_classes)[:, None]
    holed = codes.copy()
    holed[np.random.default_rng(0).random(holed.shape) < 0.05] = -1
    row = holed[0].copy()
    row[qis.index("age")] = -1
    return {"class_of": class_of, "n_classes": n_classes, "salary": salary,
            "salary_ref": np.bincount(salary).astype(np.int64), "dense": np.eye(m_occ, dtype=np.int64)[occupation],
            "occ_ref": np.bincount(occupation, minlength=m_occ).astype(np.int64),
            "cent": np.ascontiguousarray(features.T), "features": features, "centers": centers, "U": holed,
            "row": row, "age": qis.index("age")}


def _same(a, b) -> bool:
    import numpy as np

    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def measure(repeats: int) -> dict:
    import numpy as np
    import test_native_sensitive as old

    from incrowd.cli._bench_entry import (dense_status, match_combinations, nearest_slots, sensitive_counts,
                                          squared_deviations)

    x = _inputs()
    n = ROWS
    pair_b = np.arange(n, dtype=np.int64)
    ones = np.ones(n, np.int64)

    def counts_with(kernel):
        distinct, distance = np.zeros(x["n_classes"], np.int64), np.zeros(x["n_classes"])
        kernel(x["class_of"], x["n_classes"], pair_b, x["salary"], ones, x["salary_ref"], False, False, True,
               distinct, distance)
        return distinct, distance

    def old_match():
        src, dest = np.empty(n, np.bool_), np.empty(n, np.bool_)
        old._old_match_kernel(x["U"], x["row"], x["age"], -1, src, dest)
        return src, dest

    pairs = {
        "sensitive_counts (1,000,000 bottom classes, with t)": (lambda: counts_with(sensitive_counts),
                                                                 lambda: counts_with(old._old_sensitive_counts)),
        "dense_status (1,000,000 groups x 14 values, ordered)": (
            lambda: dense_status(x["dense"], x["occ_ref"], True, False),
            lambda: old._old_dense_status(x["dense"], x["occ_ref"], True, False)),
        "nearest_slots (1,000,000 slots x 3 features)": (lambda: nearest_slots(x["cent"], 0, n, 0),
                                                         lambda: old._old_nearest_slots(x["cent"], 0, n, 0)),
        "match_combinations (1,000,000 x 8 codes)": (lambda: match_combinations(x["U"], x["row"], x["age"], -1),
                                                     old_match),
        "squared_deviations (1,000,000 x 3)": (
            lambda: squared_deviations(x["features"], x["class_of"], x["centers"]),
            lambda: old._old_squared_deviations(x["features"], x["class_of"], x["centers"])),
    }
    pairs.update(_suda2_pairs(x))
    rows = []
    for name, (native, numba) in pairs.items():
        same = _same(native(), numba())  # numba's first call loads the kernel: not timed
        best = {"native": float("inf"), "numba": float("inf")}
        for _ in range(repeats):
            for key, call in (("native", native), ("numba", numba)):
                t0 = time.perf_counter()
                call()
                best[key] = min(best[key], time.perf_counter() - t0)
        rows.append({"kernel": name, "native_s": best["native"], "numba_s": best["numba"], "identical": same})
        print(rows[-1], flush=True)
    return {"when": now_utc(), "machine": machine_line(), "rows": ROWS, "repeats": repeats, "kernels": rows}


def _suda2_pairs(x: dict) -> dict:
    """SUDA2's kernels: the search on Adult itself (30,162 records, 8 keys, as ``incrowd risk``
    searches them: a million would search for minutes), the hash and the DIS scores on the
    million rows."""
    import numpy as np
    import pandas as pd
    import test_native_suda2 as old

    from incrowd.cli._bench_entry import dis_scores, msu_search, record_hashes
    from incrowd.cli._bench_entry import suda2_suffix_classes as _suffix_classes

    adult = pd.read_csv(data_dir() / "adult_arx" / "adult.csv", sep=";", dtype=str)
    codes = np.array([pd.factorize(adult[q])[0] for q in ARX_QIS], dtype=np.int32)
    cards = codes.max(axis=1).astype(np.int64) + 1
    order = np.argsort(-cards, kind="stable")
    codes, cards = np.ascontiguousarray(codes[order]), cards[order]
    suffix = _suffix_classes(codes)
    rows = np.argsort(suffix[0], kind="stable")
    codes, suffix = np.ascontiguousarray(codes[:, rows]), np.ascontiguousarray(suffix[:, rows])
    search = (codes, cards, suffix, len(ARX_QIS), np.zeros(1, np.uint8), 0)
    raw = np.ascontiguousarray(x["U"].T + 1)
    score = np.where(np.arange(ROWS) % 7 == 0, (np.arange(ROWS) % 40320).astype(float), 0.0)
    return {
        "msu_search (SUDA2's search: Adult, 30,162 x 8 keys)": (lambda: msu_search(*search),
                                                                 lambda: old._old_msu_kernel(*search)),
        "record_hashes (1,000,000 x 8 codes)": (lambda: record_hashes(raw), lambda: old._old_hashes(raw)),
        "dis_scores (1,000,000 scores)": (lambda: dis_scores(score, 1.0, 3.5),
                                          lambda: old._old_dis_kernel(score, 1.0, 3.5)),
    }


def render(res: dict) -> str:
    body = [[r["kernel"], f"{r['native_s'] * 1000:.1f}", f"{r['numba_s'] * 1000:.1f}",
             f"{r['native_s'] / r['numba_s']:.2f}", "yes" if r["identical"] else "**no**"] for r in res["kernels"]]
    return ("## l, t and local suppression: the extension against numba on a million rows\n\n"
            f"The kernels of l and t, local suppression, the sum of squared deviations and SUDA2 on ARX's Adult "
            f"resampled to {res['rows']:,} rows (SUDA2's search on Adult itself), the compiled extension against "
            f"the numba kernels it replaced "
            f"(none of them parallel), side by side in one process, best of {res['repeats']} calls each "
            f"(`bench/native_sensitive.py`, {res['when']}; {res['machine']}).\n\n"
            + md_table(["kernel", "extension ms", "numba ms", "ratio", "identical"], body, "lrrrc"))


# at exit, a line saying whether the process imported numba (an exit handler: a command's quick
# exit runs those, then skips the interpreter's teardown)
_NUMBA_FLAG = ("import atexit, sys\n"
               "atexit.register(lambda: print('\\n@@numba=' + str('numba' in sys.modules), flush=True))\n")


def _process_commands(work: Path) -> dict[str, list[str]]:
    from bench_first_use import _spec
    from startup import LOCAL_SUPPRESSION, TESTDATA_KEYS

    adult = data_dir() / "adult_arx"
    spec = _spec(work, adult)
    text = spec.read_text().replace("[privacy]\n", "[privacy]\nl = 2\n")
    numeric_age = work / "release-l.toml"
    numeric_age.write_text(text)
    categorical = work / "release-l-categorical.toml"
    categorical.write_text(text.replace('age = "numeric"', 'age = { role = "categorical", hierarchy = "'
                                        + str(adult / "adult_hierarchy_age.csv") + '" }'))
    cli = [sys.executable, "-c", _NUMBA_FLAG + "import incrowd.cli as c\nsys.argv[0] = 'incrowd'\nsys.exit(c.run())"]
    return {
        "publish-l": [*cli, "publish", str(adult / "adult.csv"), "--spec", str(numeric_age),
                      "-o", str(work / "release-l.csv"), "--json"],
        "publish-l-categorical": [*cli, "publish", str(adult / "adult.csv"), "--spec", str(categorical),
                                  "-o", str(work / "release-lc.csv"), "--json"],
        "local-suppression": [sys.executable, "-c", _NUMBA_FLAG + LOCAL_SUPPRESSION, str(data_dir() / "testdata.csv"),
                              ",".join(TESTDATA_KEYS)],
        "risk": [*cli, "risk", str(adult / "adult.csv"), "--qi", ",".join(ARX_QIS), "--quiet"],
    }


def processes(before: Path, repeats: int) -> dict:
    import subprocess
    import tempfile

    from startup import _env, _run

    sources = {"before": before.resolve(), "after": REPO / "src"}
    with tempfile.TemporaryDirectory(prefix="incrowd-native-sensitive-") as tmp:
        work = Path(tmp)
        envs = {}
        for name, src in sources.items():
            (work / name).mkdir()
            envs[name] = _env(src, work / name / "cache")
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=envs[name])
        commands = _process_commands(work)

        def one(argv: list[str], name: str) -> dict:
            wall, cpu, out = _run(argv, envs[name], work / name)
            return {"wall": wall, "cpu": cpu, "numba": out.rpartition("\n@@numba=")[2].strip() == "True"}

        for name in sources:  # fill each source's numba cache
            for argv in commands.values():
                one(argv, name)
        runs: dict[str, dict[str, list[dict]]] = {c: {s: [] for s in sources} for c in commands}
        for _ in range(repeats):
            for command, argv in commands.items():
                for name in sources:
                    runs[command][name].append(one(argv, name))
                    print(command, name, runs[command][name][-1], flush=True)
    return {"when": now_utc(), "machine": machine_line(), "repeats": repeats, "runs": runs}


PROCESS_LABELS = {
    "publish-l": "`incrowd publish` of Adult, k = 5, l = 2, 1 % (`age` numeric: MDAV)",
    "publish-l-categorical": "`incrowd publish` of Adult, k = 5, l = 2, 1 % (every key categorical)",
    "local-suppression": "`local_suppression` of testdata (7 keys, k = 3), a `python -c` process",
    "risk": "`incrowd risk` of Adult (8 QIs, SUDA2 included)",
}


def render_processes(res: dict) -> str:
    from _common import median

    rows = []
    for command, by_source in res["runs"].items():
        for name in ("before", "after"):
            runs = by_source[name]
            rows.append([PROCESS_LABELS[command] if name == "before" else "", name,
                         f"{median([r['wall'] for r in runs]):.2f}", f"{median([r['cpu'] for r in runs]):.2f}",
                         "yes" if any(r["numba"] for r in runs) else "no"])
    return "\n".join([
        "### l, t, local suppression and SUDA2 on the compiled extension: whole processes before and after",
        "",
        f"Generated by `bench/native_sensitive.py --before` on {res['when']}. Machine: {res['machine']}; shared "
        "with other developers' jobs, so the CPU column is the steadier. Whole processes, warm numba caches, "
        "bytecode compiled; *before* the sources whose l/t, local suppression, sum-of-squares and SUDA2 "
        "kernels were numba's, *after* with them in the compiled extension, taking turns; medians of "
        f"{res['repeats']} rounds (seconds). *numba imported*: whether the process imported numba at all.",
        "",
        md_table(["command", "sources", "wall", "CPU", "numba imported"], rows, "llrrc"),
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--before", type=Path, default=None,
                        help="the sources (a src folder) without these kernels: measure whole processes")
    parser.add_argument("--render", action="store_true", help="only re-render the saved figures")
    args = parser.parse_args()
    results, section, draw = ((PROCESS_RESULTS, "native-sensitive-processes", render_processes) if args.before
                              else (RESULTS, "native-sensitive", render))
    if args.render:
        res = json.loads(results.read_text())
    else:
        res = processes(args.before, args.repeats) if args.before else measure(args.repeats)
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps(res, indent=1) + "\n")
    update_section(DOCS / "performance.md", section, draw(res), title="Performance")


if __name__ == "__main__":
    main()
