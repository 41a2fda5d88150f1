"""The kernels' technology by measurement: numba's cached kernels against the compiled extension.

MDAV's plain scan lives in the package's C extension (``incrowd._native.mdav_labels``, built by
``pip install``: portable ``-O3``, no floating-point contraction), with numba's copy of it beside
(``incrowd.microaggregation.mdav._mdav_kernel.mdav_labels``: the incremental state's kernel calls
it from compiled code), the same loops and the same arithmetic in the same order. Measured in
fresh processes, warm caches, taking turns, median of ``--repeats``:

- ``import numba`` alone;
- numba's fixed start: the first call of a trivial cached kernel (numba loads its runtime);
- MDAV's kernel after that: its own load from the cache (first call minus a later one);
- the whole first use: importing the kernel's module and its first call on 100 x 15 rows,
  numba (from its cache) against the extension;
- the speed on 50,000 x 15 standard Gaussian rows (seed 0), k = 10: the two side by side in one
  process, taking turns, each one's best of ``--speed-repeats`` calls after a first one (wall and
  CPU), and whether the groups are identical.

    .venv/bin/python bench/aot_vs_numba.py [--repeats 5] [--speed-repeats 3] [--render]

Writes the section ``aot`` of docs/performance.md and bench/results/aot_vs_numba.json.
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

from _common import DOCS, REPO, machine_line, md_table, median, now_utc, update_section  # noqa: E402

RESULTS = REPO / "bench" / "results" / "aot_vs_numba.json"

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
what = sys.argv[1]
out = {}
if what == "numba-import":
    import numba
    out["import_s"] = time.perf_counter() - t0
elif what == "numba-split":  # numba's own start, then MDAV's kernel loaded from the cache
    sys.path.insert(0, sys.argv[2])
    import numpy as np
    import numba, trivial_kernel
    t1 = time.perf_counter()
    trivial_kernel.add_one(1)
    t2 = time.perf_counter()
    from incrowd.cli._bench_entry import mdav_labels_jit
    X = np.random.default_rng(1).standard_normal((100, 15))
    t3 = time.perf_counter()
    mdav_labels_jit(X, 5)
    t4 = time.perf_counter()
    mdav_labels_jit(X, 5)
    t5 = time.perf_counter()
    out = {"import_s": t1 - t0, "runtime_s": t2 - t1, "kernel_load_s": (t4 - t3) - (t5 - t4)}
else:  # the whole first use: import the kernel, call it once on 100 x 15
    import numpy as np
    X = np.random.default_rng(1).standard_normal((100, 15))
    t1 = time.perf_counter()
    if what == "numba-first":
        from incrowd.cli._bench_entry import mdav_labels_jit
        labels = mdav_labels_jit(X, 5)
    else:
        from incrowd.cli._bench_entry import mdav_labels
        labels = mdav_labels(X, 5)
    out = {"numpy_s": t1 - t0, "first_use_s": time.perf_counter() - t1, "numba_loaded": "numba" in sys.modules}
print(json.dumps(out))
"""

SPEED = r"""
import json, sys, time
import numpy as np
from incrowd.cli._bench_entry import mdav_labels, mdav_labels_jit
repeats = int(sys.argv[1])
Z = np.random.default_rng(0).standard_normal((50_000, 15))
kernels = {"numba": lambda: mdav_labels_jit(Z, 10), "extension": lambda: mdav_labels(Z, 10)}
labels = {name: run() for name, run in kernels.items()}
wall = {name: [] for name in kernels}
cpu = {name: [] for name in kernels}
for _ in range(repeats):
    for name, run in kernels.items():
        t0, c0 = time.perf_counter(), time.process_time()
        run()
        wall[name].append(time.perf_counter() - t0)
        cpu[name].append(time.process_time() - c0)
print(json.dumps({"wall": wall, "cpu": cpu, "identical": bool(np.array_equal(labels["numba"], labels["extension"]))}))
"""


def _child(code: str, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def measure(repeats: int, speed_repeats: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="incrowd-aot-") as tmp:
        work = Path(tmp)
        (work / "trivial_kernel.py").write_text(
            "from numba import njit\n\n\n@njit(cache=True)\ndef add_one(x):\n    return x + 1\n")
        for what in ("numba-split", "numba-first"):  # warm numba's caches
            _child(CHILD, what, str(work))
        load_before = os.getloadavg()
        rows: dict[str, list[dict]] = {k: [] for k in ("numba-import", "numba-split", "numba-first", "extension")}
        for _ in range(repeats):
            for what in rows:
                rows[what].append(_child(CHILD, what, str(work)))
        speed = _child(SPEED, str(speed_repeats))
        load_after = os.getloadavg()
    return {"when": now_utc(), "machine": machine_line(), "repeats": repeats, "speed_repeats": speed_repeats,
            "loadavg_before": load_before, "loadavg_after": load_after, "runs": rows, "speed": speed}


def render(res: dict) -> str:
    runs = res["runs"]

    def med(what: str, key: str) -> float:
        return median([r[key] for r in runs[what]])

    first = [
        ["numba: `import numba`", f"{med('numba-import', 'import_s'):.3f}"],
        ["numba: its runtime, loaded by the first call of any cached kernel (a trivial one)",
         f"{med('numba-split', 'runtime_s'):.3f}"],
        ["numba: MDAV's scan kernel loaded from the cache, once the runtime is up",
         f"{med('numba-split', 'kernel_load_s'):.3f}"],
        ["numba: import MDAV's kernel module + first call on 100 x 15 (warm cache)",
         f"{med('numba-first', 'first_use_s'):.3f}"],
        ["the package's C extension (`incrowd._native`): import + first call on 100 x 15 "
         f"(numba imported: {'yes' if any(r['numba_loaded'] for r in runs['extension']) else 'no'})",
         f"{med('extension', 'first_use_s'):.4f}"],
    ]
    sp = res["speed"]
    speed = []
    for name, label in (("numba", "numba (compiled for this CPU)"), ("extension", "the package's C extension, portable -O3")):
        speed.append([label, f"{min(sp['wall'][name]):.2f}", f"{min(sp['cpu'][name]):.2f}",
                      f"{min(sp['cpu'][name]) / min(sp['cpu']['numba']):.2f}x"])
    lines = [
        "## Kernel technology: numba's cache against an ahead-of-time compiled extension",
        "",
        f"Generated by `bench/aot_vs_numba.py` on {res['when']}. Machine: {res['machine']}; shared with other "
        f"developers' jobs (load average {res['loadavg_before'][0]:.2f} before, {res['loadavg_after'][0]:.2f} after). "
        "MDAV's scan (`mdav_labels`) as the package's C extension (`src/incrowd/_native/_kernels.c`, built by "
        "`pip install` with portable flags and without floating-point contraction) against numba's copy of the "
        "same loops. Fresh processes, warm caches, taking turns; median of "
        f"{res['repeats']} (seconds).",
        "",
        md_table(["what a process pays", "seconds"], first),
        "",
        f"Speed of the same kernel on 50,000 x 15 standard Gaussian rows (seed 0), k = 10: the two side by side "
        f"in one process, taking turns, best of {res['speed_repeats']} calls each after a first one. Groups "
        f"identical: {'yes' if sp['identical'] else '**no**'}.",
        "",
        md_table(["implementation", "wall s", "CPU s", "CPU against numba"], speed),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--speed-repeats", type=int, default=3)
    parser.add_argument("--render", action="store_true", help="redraw the docs from the JSON, measure nothing")
    args = parser.parse_args()
    if args.render:
        res = json.loads(RESULTS.read_text())
    else:
        res = measure(args.repeats, args.speed_repeats)
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    update_section(DOCS / "performance.md", "aot", render(res), title="Performance")
    print(f"wrote the aot section of {DOCS / 'performance.md'}")


if __name__ == "__main__":
    main()
