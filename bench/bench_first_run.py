"""First run after a fresh install: each method's first CLI call on an empty numba cache.

Builds the wheel of this checkout (``pip wheel . --no-deps``), installs it into a fresh
virtual environment (``--no-deps``; the dependencies come from the environment running this
script, put on the new environment's path by a ``.pth`` file, since this machine may have no
package index: pass ``--deps-from-index`` to install them with pip instead), then for each
method runs ``incrowd microaggregate census.csv --k 5 --method M --json`` twice with
``NUMBA_CACHE_DIR`` pointing at a new empty folder: the first call compiles, the second loads
from the cache. ``incrowd demo`` is timed the same way. Wall time is the process's; ``compile``
and ``seconds`` are what the report says (``compile_seconds`` appears in reports from the
release that added it; older ones show "-").

    .venv/bin/python bench/bench_first_run.py [--methods mdav,ona] [--repeats 1] [--no-demo]

Writes the ``first-run`` section of docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DOCS, REPO, machine_line, now_utc, update_section  # noqa: E402

METHODS = ["mdav", "mdav-plus", "v-mdav", "mdav-star", "ona", "ona-star", "mondrian",
           "mondrian-v", "mondrian-v2d", "mona", "mona-2d"]
AIM_METHOD, AIM_SECONDS = "mdav", 15.0


def build_env(work: Path, deps_from_index: bool, extras: str = "", source: Path = REPO) -> Path:
    """A fresh virtual environment with the wheel of ``source`` (this checkout by default) installed
    (with ``extras``, e.g. "web", when the dependencies come from the index); returns its bin/."""
    wheels = work / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(wheels)],
                   check=True)
    wheel = next(wheels.glob("incrowd-*.whl"))
    env_dir = work / "venv"
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    if deps_from_index:
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[{extras}]" if extras else str(wheel)],
                       check=True)
    else:
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        # a plain path line: the dependencies' folder joins sys.path after the new site-packages,
        # without running its .pth files (an editable install of incrowd there stays out)
        Path(site, "zz_bench_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    check = subprocess.run([str(python), "-c", "import incrowd; print(incrowd.__file__)"], check=True,
                           capture_output=True, text=True, cwd=work).stdout.strip()
    if not check.startswith(str(env_dir)):
        raise SystemExit(f"the fresh environment imports incrowd from {check}, not from its wheel")
    return env_dir / "bin"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(args: list[str], cache: Path, cwd: Path) -> tuple[float, dict | None, str, float]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr}")
    try:
        report = json.loads(done.stdout)
    except ValueError:
        report = None
    return wall, report, done.stderr, cpu


def measure(bin_dir: Path, work: Path, methods: list[str], repeats: int, demo: bool) -> list[dict]:
    census = subprocess.run([str(bin_dir / "python"), "-c",
                             "import incrowd, pathlib; print(pathlib.Path(incrowd.__file__).parent / 'datasets' / 'census.csv')"],
                            check=True, capture_output=True, text=True, cwd=work).stdout.strip()
    rows = []
    jobs = [(m, [str(bin_dir / "incrowd"), "microaggregate", census, "--k", "5", "--method", m, "--json",
                 "-o", str(work / f"out-{m}.csv")]) for m in methods]
    if demo:
        jobs.append(("demo", [str(bin_dir / "incrowd"), "demo", "--json", "--output-dir", str(work / "demo")]))
    for name, args in jobs:
        for r in range(repeats):
            with tempfile.TemporaryDirectory(prefix="numba-cache-", dir=work) as cache:
                first_wall, first, first_err, first_cpu = timed(args, Path(cache), work)
                second_wall, second, _, second_cpu = timed(args, Path(cache), work)
            rows.append({"name": name, "repeat": r, "first_wall": first_wall, "first_cpu": first_cpu,
                         "second_cpu": second_cpu,
                         "first_compile": _field(first, "compile_seconds"),
                         "first_seconds": _seconds(first), "notice": "compiling kernels" in first_err,
                         "second_wall": second_wall, "second_compile": _field(second, "compile_seconds"),
                         "second_seconds": _seconds(second)})
            print(f"{name} #{r}: first {first_wall:.1f} s wall, second {second_wall:.1f} s wall", flush=True)
    return rows


def _field(report: dict | None, key: str) -> float | None:
    if report is None or key not in report or report[key] is None:
        return None
    return float(report[key])


def _seconds(report: dict | None) -> float | None:
    if report is None:
        return None
    if "results" in report:  # demo: the sum over the methods' own seconds
        return float(sum(r["seconds"] for r in report["results"]))
    return _field(report, "seconds")


def _fmt(values: list[float | None], digits: int = 1) -> str:
    got = [v for v in values if v is not None]
    if not got:
        return "-"
    if len(got) == 1:
        return f"{got[0]:.{digits}f}"
    return f"{statistics.median(got):.{digits}f} (worst {max(got):.{digits}f})"


def table(rows: list[dict], repeats: int, methods: list[str]) -> str:
    names = list(dict.fromkeys(r["name"] for r in rows))
    lines = [
        f"Written by `bench/bench_first_run.py`; measured {now_utc()} on {machine_line()}. The machine was shared with other work "
        "(several processes on 2 cores), so walls are noisy: compare rows of one run only.",
        "",
        "A fresh virtual environment with the wheel of this checkout (`pip wheel . --no-deps`), "
        "an empty numba cache (`NUMBA_CACHE_DIR` a new empty folder per row), then "
        "`incrowd microaggregate census.csv --k 5 --method M --json` (CASC Census, 1,080 rows x "
        "13 numeric columns, all quasi-identifiers, k = 5) twice: the first call compiles, the "
        "second loads the compiled kernels from the cache. `demo` is `incrowd demo --json` (every "
        "method, k = 5; its seconds are the sum of the methods' own). Wall: the process, start "
        "to exit; compile: `compile_seconds` of the report (numba compiling and loading cached "
        "kernels); seconds: the algorithm alone, as the report says; CPU: user + system time of the "
        "process, which contention from other processes inflates far less than wall time. "
        f"{repeats} repeat(s) per row" + ("; median (worst)." if repeats > 1 else "."),
        "",
        "| command | first wall s | first CPU s | first compile s | first seconds | notice | second wall s | second CPU s | second compile s | second seconds |",
        "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for name in names:
        rs = [r for r in rows if r["name"] == name]
        lines.append(
            f"| {name} | {_fmt([r['first_wall'] for r in rs])} | {_fmt([r['first_cpu'] for r in rs])} | "
            f"{_fmt([r['first_compile'] for r in rs])} | "
            f"{_fmt([r['first_seconds'] for r in rs], 3)} | {'yes' if all(r['notice'] for r in rs) else 'no'} | "
            f"{_fmt([r['second_wall'] for r in rs])} | {_fmt([r['second_cpu'] for r in rs])} | "
            f"{_fmt([r['second_compile'] for r in rs], 2)} | "
            f"{_fmt([r['second_seconds'] for r in rs], 3)} |")
    aim = [r["first_wall"] for r in rows if r["name"] == AIM_METHOD]
    if aim:
        worst = max(aim)
        lines += ["", f"Aim: the first `{AIM_METHOD}` call after a fresh install under {AIM_SECONDS:.0f} s wall: "
                      f"{worst:.1f} s ({'met' if worst < AIM_SECONDS else 'not met'} in this run)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--deps-from-index", action="store_true",
                        help="install the dependencies with pip instead of reusing this environment's")
    parser.add_argument("--json", type=Path, help="also write the raw rows here")
    parser.add_argument("--no-docs", action="store_true", help="print the table, leave the docs alone")
    args = parser.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    with tempfile.TemporaryDirectory(prefix="incrowd-first-run-") as folder:
        work = Path(folder)
        bin_dir = build_env(work, args.deps_from_index)
        rows = measure(bin_dir, work, methods, args.repeats, not args.no_demo)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    body = table(rows, args.repeats, methods)
    print(body)
    if not args.no_docs:
        update_section(DOCS / "performance.md", "first-run", "## First run after a fresh install\n\n" + body,
                       "Performance")


if __name__ == "__main__":
    main()
