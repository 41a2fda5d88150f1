"""The kernels' technology by measurement: numba's cached kernels against an ahead-of-time compiled extension.

One hot kernel, MDAV's scan (``microaggregation/mdav/_mdav_kernel.py: mdav_labels``), written
in C with the same loops and the same arithmetic in the same order (``bench/aot/mdav_scan.c``),
is built as a plain CPython extension in a scratch folder outside the repository, twice: as a
wheel for every x86-64 machine would build it (``-O3``) and for this CPU (``-O3 -march=native``),
both without floating-point contraction (numba compiles without fastmath, so an FMA would round
differently). Measured in fresh processes, warm caches, taking turns, median of ``--repeats``:

- ``import numba`` alone;
- numba's fixed start: the first call of a trivial cached kernel (numba loads its runtime);
- MDAV's kernel after that: its own load from the cache (first call minus a later one);
- the whole first use: importing the kernel's module and its first call on 100 x 15 rows,
  numba (from its cache) against the extension;
- the speed on 50,000 x 15 standard Gaussian rows (seed 0), k = 10: each implementation's best
  of ``--speed-repeats`` calls after a first one, and whether the groups are identical.

    .venv/bin/python bench/aot_vs_numba.py [--repeats 5] [--speed-repeats 3] [--render]

Writes the section ``aot`` of docs/performance.md and bench/results/aot_vs_numba.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DOCS, REPO, machine_line, md_table, median, now_utc, update_section  # noqa: E402

RESULTS = REPO / "bench" / "results" / "aot_vs_numba.json"
SOURCE = REPO / "bench" / "aot" / "mdav_scan.c"
FLAGS = {"portable": ["-O3"], "native": ["-O3", "-march=native"]}

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
    from incrowd.cli._bench_entry import mdav_labels
    X = np.random.default_rng(1).standard_normal((100, 15))
    t3 = time.perf_counter()
    mdav_labels(X, 5)
    t4 = time.perf_counter()
    mdav_labels(X, 5)
    t5 = time.perf_counter()
    out = {"import_s": t1 - t0, "runtime_s": t2 - t1, "kernel_load_s": (t4 - t3) - (t5 - t4)}
else:  # the whole first use: import the kernel, call it once on 100 x 15
    import numpy as np
    X = np.random.default_rng(1).standard_normal((100, 15))
    t1 = time.perf_counter()
    if what == "numba-first":
        from incrowd.cli._bench_entry import mdav_labels
        labels = mdav_labels(X, 5)
    else:
        sys.path.insert(0, sys.argv[2])
        import mdav_scan
        labels = np.empty(100, np.int64)
        mdav_scan.mdav_labels(X, 5, labels)
    out = {"numpy_s": t1 - t0, "first_use_s": time.perf_counter() - t1}
print(json.dumps(out))
"""

SPEED = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[2])
what, repeats = sys.argv[1], int(sys.argv[3])
Z = np.random.default_rng(0).standard_normal((50_000, 15))
if what == "numba":
    from incrowd.cli._bench_entry import mdav_labels
    run = lambda: mdav_labels(Z, 10)
else:
    import mdav_scan
    def run():
        labels = np.empty(Z.shape[0], np.int64)
        mdav_scan.mdav_labels(Z, 10, labels)
        return labels
labels = run()
times = []
for _ in range(repeats):
    t0 = time.perf_counter()
    run()
    times.append(time.perf_counter() - t0)
np.save(sys.argv[4], labels)
print(json.dumps({"best_s": min(times), "times": times}))
"""


def build(folder: Path, flags: list[str]) -> float:
    """Compile the extension into ``folder``; returns the seconds the compiler took."""
    import time

    include = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    subprocess.run(["gcc", "-shared", "-fPIC", *flags, "-ffp-contract=off", f"-I{include}", str(SOURCE), "-o",
                    str(folder / f"mdav_scan{suffix}")], check=True)
    return time.perf_counter() - t0


def _child(code: str, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def measure(repeats: int, speed_repeats: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="incrowd-aot-") as tmp:
        work = Path(tmp)
        builds = {name: build(work / name, flags) for name, flags in FLAGS.items()}
        (work / "trivial_kernel.py").write_text(
            "from numba import njit\n\n\n@njit(cache=True)\ndef add_one(x):\n    return x + 1\n")
        for what in ("numba-split", "numba-first"):  # warm numba's caches
            _child(CHILD, what, str(work))
        load_before = os.getloadavg()
        rows: dict[str, list[dict]] = {k: [] for k in ("numba-import", "numba-split", "numba-first", *FLAGS)}
        for _ in range(repeats):
            for what in rows:
                folder = str(work / what) if what in FLAGS else str(work)
                rows[what].append(_child(CHILD, what if what not in FLAGS else "aot", folder))
        speed = {}
        for name, folder in (("numba", work), *((n, work / n) for n in FLAGS)):
            speed[name] = _child(SPEED, name if name == "numba" else "aot", str(folder), str(speed_repeats),
                                 str(work / f"{name}.npy"))
        import numpy as np

        reference = np.load(work / "numba.npy")
        identical = {name: bool(np.array_equal(np.load(work / f"{name}.npy"), reference)) for name in FLAGS}
        load_after = os.getloadavg()
    return {"when": now_utc(), "machine": machine_line(), "repeats": repeats, "speed_repeats": speed_repeats,
            "loadavg_before": load_before, "loadavg_after": load_after, "build_s": builds, "runs": rows,
            "speed": speed, "identical": identical}


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
        ["C extension (portable -O3): import + first call on 100 x 15", f"{med('portable', 'first_use_s'):.4f}"],
        ["C extension (-O3 -march=native): import + first call on 100 x 15", f"{med('native', 'first_use_s'):.4f}"],
    ]
    sp = res["speed"]
    speed = [["numba (compiled for this CPU)", f"{sp['numba']['best_s']:.2f}", "(reference)"]]
    for name, label in (("portable", "C extension, portable -O3 (as a wheel)"),
                        ("native", "C extension, -O3 -march=native")):
        speed.append([label, f"{sp[name]['best_s']:.2f}", "yes" if res["identical"][name] else "**no**"])
    lines = [
        "## Kernel technology: numba's cache against an ahead-of-time compiled extension",
        "",
        f"Generated by `bench/aot_vs_numba.py` on {res['when']}. Machine: {res['machine']}; shared with other "
        f"developers' jobs (load average {res['loadavg_before'][0]:.2f} before, {res['loadavg_after'][0]:.2f} after). "
        "One hot kernel, MDAV's scan (`mdav_labels`), was written in C with the same loops and arithmetic "
        "(`bench/aot/mdav_scan.c`, a plain CPython extension) and built in a scratch folder outside the "
        f"repository in {res['build_s']['portable']:.1f} s (portable) and {res['build_s']['native']:.1f} s (native), "
        "without floating-point contraction. Fresh processes, warm caches, taking turns; median of "
        f"{res['repeats']} (seconds).",
        "",
        md_table(["what a process pays", "seconds"], first),
        "",
        f"Speed of the same kernel on 50,000 x 15 standard Gaussian rows (seed 0), k = 10: best of "
        f"{res['speed_repeats']} calls after a first one, in one process each.",
        "",
        md_table(["implementation", "seconds", "groups identical to numba's"], speed),
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
