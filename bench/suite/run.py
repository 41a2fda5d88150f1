"""Run the benchmark suite without asv and print one table.

Run from the repository root::

    .venv/bin/python bench/suite/run.py                  # every benchmark at its sizes (make bench)
    .venv/bin/python bench/suite/run.py --quick          # small sizes: checks that the suite works
    .venv/bin/python bench/suite/run.py microaggregation.Estimators --repeat 3

For each benchmark class (``module.Class``) and each combination of its ``params``: ``setup``,
then one untimed warm-up call of each ``time_*`` method (numba compiles or loads its kernels
there, so compiling is never in a timing), then ``--repeat`` timed calls (``time.perf_counter``)
whose median is shown, with the fastest and slowest beside it. A class with
``setup_per_repeat = True`` (its calls change what ``setup`` made) gets a fresh ``setup`` before
each call, untimed. ``--quick`` uses each class's ``quick_params`` (small sizes) and 1 repeat.
``peakmem_*`` methods are asv's; this runner skips them. The names follow asv's conventions
(``params``, ``param_names``, ``setup``, ``teardown``, ``time_*``, ``timeout``), so asv can run
the same files.

The machine line (CPU, cores, versions) is printed above the table: a figure means something only
with the machine it was measured on.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import itertools
import platform
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = ("microaggregation", "publish", "report", "incremental")


def _machine() -> str:
    import numba
    import numpy

    import incrowd

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{cpu}, {cores} usable cores; Python {platform.python_version()}, numpy {numpy.__version__}, "
            f"numba {numba.__version__}, incrowd {incrowd.__version__}")


def _seconds(s: float) -> str:
    if s >= 10:
        return f"{s:.1f} s"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"


def _classes(filters: list[str]):
    for name in MODULES:
        module = importlib.import_module(f"suite.{name}")
        for cls_name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            if not any(m.startswith("time_") for m in dir(cls)):
                continue
            full = f"{name}.{cls_name}"
            if filters and not any(f in full for f in filters):
                continue
            yield full, cls


def _combinations(cls, quick: bool):
    params = getattr(cls, "quick_params", None) if quick else None
    params = params if params is not None else getattr(cls, "params", None)
    if not params:
        return [()]
    if not isinstance(params[0], (list, tuple)):  # as asv reads it: a flat list is one parameter
        params = [params]
    return list(itertools.product(*params))


def run(filters: list[str], quick: bool, repeat: int) -> list[list[str]]:
    rows = []
    for full, cls in _classes(filters):
        names = list(getattr(cls, "param_names", []))
        methods = sorted(m for m in dir(cls) if m.startswith("time_"))
        fresh = getattr(cls, "setup_per_repeat", False)
        for combo in _combinations(cls, quick):
            label = ", ".join(f"{n}={v:,}" if isinstance(v, int) else f"{n}={v}" for n, v in zip(names, combo))
            for method in methods:
                bench = cls()
                setup = getattr(bench, "setup", None)
                teardown = getattr(bench, "teardown", None)
                call = getattr(bench, method)
                if setup:
                    setup(*combo)
                call(*combo)  # warm-up: numba compiles or loads its kernels here
                times = []
                for _ in range(repeat):
                    if fresh:
                        if teardown:
                            teardown(*combo)
                        setup(*combo)
                    t0 = time.perf_counter()
                    call(*combo)
                    times.append(time.perf_counter() - t0)
                if teardown:
                    teardown(*combo)
                row = [f"{full}.{method}", label, _seconds(statistics.median(times)),
                       f"{_seconds(min(times))} – {_seconds(max(times))}", str(repeat)]
                rows.append(row)
                print("  ".join(row), file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("filters", nargs="*", help="run only benchmarks whose module.Class contains one of these")
    parser.add_argument("--quick", action="store_true", help="small sizes (quick_params), 1 repeat")
    parser.add_argument("--repeat", type=int, default=None, help="timed calls per benchmark (default 5; 1 with --quick)")
    args = parser.parse_args(argv)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 5)
    sys.path.insert(0, str(HERE.parent))  # bench/: the suite is the package ``suite``, as asv imports it
    started = time.perf_counter()
    print(f"Machine: {_machine()}")
    print(f"Timing: median of {repeat} call(s) after one untimed warm-up call (compiling excluded)"
          + ("; --quick: small sizes, not figures to quote" if args.quick else ""))
    print()
    rows = run(args.filters, args.quick, repeat)
    header = ["benchmark", "parameters", "median", "min – max", "repeats"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("| " + " | ".join("-" * w if i < 2 else "-" * (w - 1) + ":" for i, w in enumerate(widths)) + " |")
    for r in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
    print(f"\n{len(rows)} benchmarks in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
