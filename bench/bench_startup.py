"""Process start-up: how long a fresh ``incrowd`` process takes, warm caches, for everyday commands.

Run from the repository root: ``.venv/bin/python bench/bench_startup.py [--repeats 5]
[--compare OLD/src --compare-note 'commit ...']`` (``--compare``: older sources measured in the
same loop, taking turns, so both see the same machine)
(``--render`` redraws the section from the JSON without measuring).
Writes the section ``startup`` of ``docs/performance.md`` and the raw figures to
``bench/results/startup.json`` (one entry per ``--label``).

``--src DIR --label before --note 'commit ...'`` measures other sources (e.g. an older checkout's ``src``) with this
interpreter, keeps the figures under that label and leaves the Markdown alone; the table shows
the ``after`` figures (this checkout) with the ``before`` ones beside them when there are some.

Each command is run once untimed (numba's on-disk cache and the OS file cache are warm after
it), then ``--repeats`` times as a new process, the commands taking turns so that a burst of
load from other processes spreads over all of them. Wall time is the whole process, interpreter
start to exit; CPU time is the child's user + system time, which other processes on the machine
disturb far less than wall time.

A second table splits one command's work in a fresh process into imports, the first call
(which loads the compiled kernels from numba's cache) and a later call in the same process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    DOCS,
    REPO,
    child_json,
    data_dir,
    machine_line,
    md_table,
    median,
    now_utc,
    run_code,
    update_section,
)

RESULTS = REPO / "bench" / "results" / "startup.json"
CENSUS = REPO / "src" / "incrowd" / "datasets" / "census.csv"
ADULT_QI = ["age", "education", "marital-status", "occupation", "race", "workclass", "sex", "native-country"]

#: (key, what the table says, aim in seconds or None)
COMMANDS = [
    ("import", "python -c 'import incrowd'", None),
    ("version", "incrowd --version", 0.3),
    ("help", "incrowd --help", None),
    ("negotiate", "incrowd negotiate adult8.duckdb --k 10 --max-levels (v_max middle-low) --max-suppression 1% --json", 0.5),
    ("microaggregate", "incrowd microaggregate census.csv --k 5 --method mdav -o out.csv", 1.0),
    ("plan", "incrowd incremental plan --rows 50000 --varsigma 5 --tau-end 0.5 --model quadratic", 0.5),
    ("plan-fit", "incrowd incremental plan --rows 50000 --varsigma 5 --tau-end 0.5 (default --model fit: times MDAV)", None),
]

SPLIT = r"""
import json, sys, time
t0 = time.perf_counter()
what = sys.argv[1]
if what == "mdav":
    from incrowd import MDAV, read_table
    t1 = time.perf_counter()
    X = read_table(sys.argv[2])
    t2 = time.perf_counter()
    MDAV(5).fit(X)
    t3 = time.perf_counter()
    MDAV(5).fit(X)
    t4 = time.perf_counter()
elif what == "numba":  # numba's own fixed cost: one trivial cached function
    sys.path.insert(0, sys.argv[2])
    import numba, trivial_kernel
    t1 = t2 = time.perf_counter()
    trivial_kernel.add_one(1)
    t3 = time.perf_counter()
    trivial_kernel.add_one(2)
    t4 = time.perf_counter()
else:
    import contextlib
    from incrowd.generalization import Lattice, negotiate
    one = contextlib.nullcontext()
    if what == "negotiate-one":  # as ``incrowd negotiate`` answers: one request per process
        from incrowd.cli._bench_entry import one_request
        one = one_request()
    t1 = time.perf_counter()
    lat = Lattice.open(sys.argv[2])
    t2 = time.perf_counter()
    vm = json.loads(sys.argv[3])
    with one:
        negotiate(lat, k=10, max_levels=vm, max_suppression="1%")
        t3 = time.perf_counter()
        negotiate(lat, k=10, max_levels=vm, max_suppression="1%")
        t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "first_s": t3 - t2, "later_s": t4 - t3}))
"""


def _env(src: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src)
    env.pop("NUMBA_CACHE_DIR", None)  # the caches next to the sources, as a user has them
    return env


# what the console script does, for whichever sources are on the path: the entry point is
# ``incrowd.cli:run`` now and was ``incrowd.cli:main`` before (the console script installed in
# this environment names only one of them)
_CONSOLE = "import sys, incrowd.cli as c; sys.exit((getattr(c, 'run', None) or c.main)())"


def _incrowd() -> list[str]:
    """The ``incrowd`` program as the console script starts it."""
    return [sys.executable, "-c", _CONSOLE]


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one process; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _vmax(lattice: Path, env: dict[str, str]) -> dict[str, int]:
    """v_max 'middle-low' (half of each attribute's top level), as docs/negotiation.md uses it."""
    code = ("import json, sys\nfrom incrowd.generalization import Lattice\nlat = Lattice.open(sys.argv[1])\n"
            "print(json.dumps({a: lat.hierarchies[a].max_level // 2 for a in lat.attributes}))")
    return run_code(code, lattice, env=env)


def measure(srcs: dict[str, Path], repeats: int) -> dict[str, dict]:
    """Each label's sources, measured in one loop that takes turns between them (and between
    the commands), so that a slow spell of the shared machine falls on all of them alike."""
    envs = {label: _env(src) for label, src in srcs.items()}
    cli = _incrowd()
    adult = data_dir() / "adult_arx"
    if not (adult / "adult.csv").exists():
        raise SystemExit(f"{adult / 'adult.csv'} not found; set INCROWD_DATA to the folder holding adult_arx/")
    first = next(iter(envs.values()))
    with tempfile.TemporaryDirectory(prefix="incrowd-startup-") as tmp:
        work = Path(tmp)
        lattice = work / "adult8.duckdb"
        _run([*cli, "lattice", "build", str(adult / "adult.csv"), "--hierarchies", str(adult),
              "--qi", ",".join(ADULT_QI), "-o", str(lattice), "--quiet"], first, work)
        vmax = _vmax(lattice, first)
        levels = ",".join(f"{a}={v}" for a, v in vmax.items())
        plan = ["incremental", "plan", "--rows", "50000", "--varsigma", "5", "--tau-end", "0.5"]
        argvs = {
            "import": [sys.executable, "-c", "import incrowd"],
            "version": [*cli, "--version"],
            "help": [*cli, "--help"],
            "negotiate": [*cli, "negotiate", str(lattice), "--k", "10", "--max-levels", levels,
                          "--max-suppression", "1%", "--json"],
            "microaggregate": [*cli, "microaggregate", str(CENSUS), "--k", "5", "--method", "mdav",
                               "-o", str(work / "out.csv"), "--quiet"],
            "plan": [*cli, *plan, "--model", "quadratic"],
            "plan-fit": [*cli, *plan],
        }
        for env in envs.values():  # warm: numba's cache written/loaded, files in the OS cache
            for argv in argvs.values():
                _run(argv, env, work)
        load_before = os.getloadavg()
        walls = {label: {key: [] for key in argvs} for label in envs}
        cpus = {label: {key: [] for key in argvs} for label in envs}
        for _ in range(repeats):
            for key, argv in argvs.items():
                for label, env in envs.items():
                    wall, cpu = _run(argv, env, work)
                    walls[label][key].append(wall)
                    cpus[label][key].append(cpu)
                    print(f"{label:7s} {key:15s} {wall:.3f} s wall, {cpu:.3f} s CPU", flush=True)
        load_after = os.getloadavg()
        (work / "trivial_kernel.py").write_text(
            "from numba import njit\n\n\n@njit(cache=True)\ndef add_one(x):\n    return x + 1\n")
        subprocess.run([sys.executable, "-c", SPLIT, "numba", str(work)], env=first, capture_output=True, check=True,
                       cwd=work)  # writes its cache
        split: dict[str, dict] = {label: {} for label in envs}
        whats = [("mdav", [str(CENSUS)]), ("negotiate", [str(lattice), json.dumps(vmax)]), ("numba", [str(work)]),
                 ("negotiate-one", [str(lattice), json.dumps(vmax)])]
        for what, args in whats:
            rows: dict[str, list] = {label: [] for label in envs}
            for _ in range(repeats):
                for label, env in envs.items():
                    if what == "negotiate-one" and not (srcs[label] / "incrowd" / "generalization"
                                                        / "_search_plain.py").exists():
                        continue
                    rows[label].append(child_json([sys.executable, "-c", SPLIT, what, *args], env=env, cwd=work))
            for label, got in rows.items():
                if got:
                    split[label][what] = {key: [r[key] for r in got] for key in got[0]}
    return {label: {
        "when": now_utc(), "machine": machine_line(), "src": str(srcs[label]), "repeats": repeats,
        "loadavg_before": load_before, "loadavg_after": load_after, "vmax": levels,
        "wall": walls[label], "cpu": cpus[label], "split": split[label],
    } for label in envs}


def _s(values: list[float] | None) -> str:
    if not values:
        return "-"
    return f"{median(values):.3f} (worst {max(values):.3f})"


def render(saved: dict) -> str:
    after, before = saved["after"], saved.get("before")
    header = ["command", "aim", "median within it", "wall s, median (worst)", "CPU s, median (worst)"]
    if before:
        header += ["before: wall s", "before: CPU s"]
    rows = []
    for key, label, aim in COMMANDS:
        walls = after["wall"].get(key)
        within = "-" if not aim or not walls else ("yes" if median(walls) < aim else "**no**")
        row = [f"`{label}`", f"< {aim:g} s" if aim else "-", within, _s(walls), _s(after["cpu"].get(key))]
        if before:
            row += [_s(before["wall"].get(key)), _s(before["cpu"].get(key))]
        rows.append(row)
    split_rows = []
    for what, label in (("mdav", "MDAV on census.csv (1080 x 13, k = 5)"),
                        ("negotiate", "API negotiate() on the 8-QI Adult lattice (k = 10, 1 %)"),
                        ("negotiate-one", "the same, one request per process (as `incrowd negotiate`)"),
                        ("numba", "numba alone: a trivial cached function")):
        for name, res in (("after", after), ("before", before)):
            if not res or what not in res["split"]:
                continue
            s = res["split"][what]
            split_rows.append([label, name, f"{median(s['import_s']):.3f}", f"{median(s['load_s']):.3f}",
                               f"{median(s['first_s']):.3f}", f"{median(s['later_s']):.4f}",
                               f"{median(s['first_s']) - median(s['later_s']):.3f}"])
    lines = [
        "## Process start-up (warm caches)",
        "",
        f"Generated by `bench/bench_startup.py` on {after['when']}. Machine: {after['machine']}. "
        "The machine is shared with other jobs (load average "
        f"{after['loadavg_before'][0]:.2f} before and {after['loadavg_after'][0]:.2f} after the timed runs), "
        "so wall times are noisy; CPU time (user + system of the process) is disturbed far less.",
        "",
        f"Each command ran once untimed (numba's kernel cache and the OS file cache warm), then "
        f"{after['repeats']} times as a fresh process, the commands taking turns. Data: the bundled CASC "
        "Census sample (1080 x 13) and the 8-QI ARX Adult lattice (30,162 rows, 6480 nodes, QI "
        f"{', '.join(ADULT_QI)}; v_max {after['vmax']})."
        + (" 'before' is the same bench on the sources before the start-up work, measured in the same "
           "loop, taking turns with this checkout " + (f"({before['note']})." if before.get("note") else ".")
           if before and before.get("interleaved") else
           " 'before' is the same bench on the sources before the start-up work "
           + (f"({before['note']}; " if before.get("note") else "(")
           + f"measured {before['when']}, load average {before['loadavg_before'][0]:.2f} / "
           f"{before['loadavg_after'][0]:.2f})." if before else ""),
        "",
        md_table(header, rows),
        "",
        ("" if median(after["wall"]["microaggregate"]) < 1.0 else
         "`incrowd microaggregate` misses its aim (figures measured apart, on this machine): it needs pandas (with numpy and pyarrow, about 0.37 s "
        "to import here), numba (about 0.17 s more to import, then about 0.28 s to start, below) and "
        "typer's parameter checking (typer 0.29 validates each option with pydantic: about 0.07 s); "
        "what is left is reading, MDAV, verifying and writing. Importing only the chosen method instead "
        "of all eleven would save a few hundredths more. (The program no longer tears numba and LLVM "
        "down at exit, which had cost every kernel-running command another 0.3-0.4 s.)"),
        "",
        "Where a command's time goes, in a fresh Python process (seconds, median of "
        f"{after['repeats']}): importing, reading the input, the first call (which loads the compiled "
        "kernels from numba's on-disk cache) and a second call in the same process; the difference "
        "of the two calls is the cache loading. Most of it is numba's own start, paid once per process "
        "by the first compiled function of any kind (the last row: numba sets up its code generator and "
        "imports its implementations, scipy's BLAS bindings among them); MDAV's four kernels then load in "
        "a few hundredths of a second, so fewer or larger cached kernels would not change it. "
        "That start is why the `incrowd microaggregate` program computes a small file (MDAV up to "
        "about 0.15 s of numpy work, e.g. 2,000 x 13 at k = 2) with numpy twins of its kernels, "
        "which do the same arithmetic in the same order and so give the same groups bit for bit, "
        "and never starts numba (the API, the web UI and larger files keep the kernels). "
        "`incrowd negotiate` answers one request per process, so it runs the search as plain Python "
        "(the kernel's own source) and never starts numba; the API and the web UI keep the compiled kernel.",
        "",
        md_table(["work", "sources", "import", "read/open", "first call", "later call", "kernel loading"],
                 split_rows),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--src", type=Path, default=REPO / "src", help="sources to measure")
    parser.add_argument("--label", default="after", help="'after' (default) updates the docs")
    parser.add_argument("--note", default="", help="what the sources are, e.g. 'commit 0f9ca64'")
    parser.add_argument("--compare", type=Path, default=None,
                        help="older sources measured as 'before' in the same loop, taking turns")
    parser.add_argument("--compare-note", default="", help="what the --compare sources are")
    parser.add_argument("--render", action="store_true", help="redraw the docs from the JSON, measure nothing")
    args = parser.parse_args()
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if not args.render:
        srcs = {args.label: args.src.resolve()}
        if args.compare is not None:
            srcs["before"] = args.compare.resolve()
        got = measure(srcs, args.repeats)
        saved[args.label] = {**got[args.label], "note": args.note}
        if args.compare is not None:
            saved["before"] = {**got["before"], "note": args.compare_note, "interleaved": True}
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(saved, indent=1) + "\n")
    if args.label == "after" or args.render:
        update_section(DOCS / "performance.md", "startup", render(saved), title="Performance")
        print(f"wrote the startup section of {DOCS / 'performance.md'}")


if __name__ == "__main__":
    main()
