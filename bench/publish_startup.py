"""``incrowd publish`` of ARX's Adult as a whole process: this checkout against older sources,
wall and CPU time, the release's own ``seconds`` and what the process imports.

Run from the repository root: ``.venv/bin/python bench/publish_startup.py --compare OLD/src
[--rounds 5]``. The command is ``bench/startup.py``'s ``publish`` (k = 5 within 1 %, ``age``
numeric, seven categorical keys with ARX's hierarchies, salary-class sensitive; ``-o
release.csv --json``), started as the ``incrowd`` console script starts it, on a warm numba
cache (one untimed run of each source first) with the sources' bytecode compiled, as an install
leaves it. The sources take turns within each round; the medians of the rounds are printed with
the load average and, beside them, ``python -c "import pandas"`` (the floor of any process that
holds a DataFrame), and the releases of the two sources are compared byte for byte.

Then ``python -X importtime`` of as many runs of each, taking turns (``importlib.import_module``
routed through the import statement, so that the modules the package loads on first use are
timed too): the total of every module's median own import time, the number of modules, and the
packages whose imports the 'after' sources no longer pay, largest first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, data_dir, median  # noqa: E402
from bench_first_use import _spec  # noqa: E402
from startup import _CONSOLE, _env, _release_seconds, _run  # noqa: E402

# the console script's start, with importlib.import_module as an import statement: -X importtime
# times only what the import statement loads
_TIMED_CONSOLE = ("import importlib, importlib.util, sys\n"
                  "def _import(name, package=None):\n"
                  "    name = importlib.util.resolve_name(name, package) if name.startswith('.') else name\n"
                  "    __import__(name)\n"
                  "    return sys.modules[name]\n"
                  "importlib.import_module = _import\n" + _CONSOLE.replace("; ", "\n"))
_ROW = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)")


def _imports(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """Module -> its own import time in ms, for one process."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", _TIMED_CONSOLE, *argv], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"the importtime run failed:\n{done.stderr[-2000:]}")
    return {m[2]: int(m[1]) / 1000 for m in map(_ROW.match, done.stderr.splitlines()) if m}


def _median_imports(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each module's median own import time over runs (the same modules load in each)."""
    return {name: median([run.get(name, 0.0) for run in runs]) for name in runs[0]}


def _by_package(modules: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, ms in modules.items():
        top = name.split(".")[0] if not name.startswith("incrowd.") else ".".join(name.split(".")[:3])
        out[top] = out.get(top, 0.0) + ms
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", type=Path, required=True, help="older sources, measured as 'before'")
    parser.add_argument("--src", type=Path, default=REPO / "src", help="the sources to measure as 'after'")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    srcs = {"before": args.compare.resolve(), "after": args.src.resolve()}
    arx = data_dir() / "adult_arx"
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        spec = _spec(work, arx)
        cache = work / "numba-cache"
        envs = {name: _env(src, cache) for name, src in srcs.items()}
        for name, src in srcs.items():
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=envs[name])

        def argv(name: str) -> list[str]:
            return ["publish", str(arx / "adult.csv"), "--spec", str(spec), "-o", str(work / f"{name}.csv"), "--json"]

        for name in srcs:  # fills numba's cache for both
            _run([sys.executable, "-c", _CONSOLE, *argv(name)], envs[name], work)
        loads = [os.getloadavg()[0]]
        figures: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": [], "release": []} for name in srcs}
        floor: dict[str, list[float]] = {"wall": [], "cpu": []}
        for _ in range(args.rounds):
            for name in srcs:
                wall, cpu, out = _run([sys.executable, "-c", _CONSOLE, *argv(name)], envs[name], work)
                figures[name]["wall"].append(wall)
                figures[name]["cpu"].append(cpu)
                figures[name]["release"].append(_release_seconds(out) or float("nan"))
            # the floor of any process that holds a DataFrame: the interpreter and pandas alone
            wall, cpu, _ = _run([sys.executable, "-c", "import pandas"], envs["after"], work)
            floor["wall"].append(wall)
            floor["cpu"].append(cpu)
        loads.append(os.getloadavg()[0])
        same = (work / "before.csv").read_bytes() == (work / "after.csv").read_bytes()
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in srcs}
        for _ in range(args.rounds):
            for name in srcs:
                runs[name].append(_imports(argv(name), envs[name], work))
        imports = {name: _median_imports(got) for name, got in runs.items()}
    print(f"incrowd publish of ARX's Adult, {args.rounds} rounds taking turns, medians; "
          f"load average {loads[0]:.2f} before, {loads[1]:.2f} after; releases the same byte for byte: {same}")
    print("| sources | wall s | CPU s | release s | whole process - release s | importtime total ms | modules |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, got in figures.items():
        wall, cpu, release = (median(got[k]) for k in ("wall", "cpu", "release"))
        print(f"| {name} ({srcs[name]}) | {wall:.3f} | {cpu:.3f} | {release:.3f} | {wall - release:.3f} | "
              f"{sum(imports[name].values()):.0f} | {len(imports[name])} |")
    print(f"| python -c 'import pandas' (the floor) | {median(floor['wall']):.3f} | {median(floor['cpu']):.3f} "
          "| | | | |")
    before, after = (_by_package(imports[name]) for name in ("before", "after"))
    gone = sorted(((before[p] - after.get(p, 0.0), p) for p in before if before[p] - after.get(p, 0.0) >= 3),
                  reverse=True)
    print("imports no longer paid (ms, by package; incrowd by subpackage): "
          + ", ".join(f"{p} {ms:.0f}" for ms, p in gone))
    print(json.dumps({"figures": figures, "floor": floor, "loads": loads, "same_release": same}))


if __name__ == "__main__":
    main()
