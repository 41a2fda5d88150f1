"""One-shot commands as a curator runs them: whole-process wall time, warm cache and fresh install.

Run from the repository root: ``.venv/bin/python bench/startup.py [--repeats 5] [--compare OLD/src
--compare-note 'commit ...'] [--render]``. Writes the section ``start-up`` of docs/performance.md
and the raw figures to ``bench/results/startup_commands.json`` (one entry per label: ``after`` is
this checkout, ``before`` the ``--compare`` sources, measured in the same loop, taking turns).

Each command is a whole process started as the ``incrowd`` console script starts it, three times
per round: on a warm numba cache (a folder filled by one untimed run of every command); on the
cache an install leaves (a copy, new for every run, of a folder filled by ``incrowd warmup``
alone, which ``make demo``'s install step runs: the first run after that install); and on an
empty one (a new ``NUMBA_CACHE_DIR`` per run: the first run after an install that compiled
nothing). ``incrowd warmup``'s own time is recorded too. The commands take turns within a round and
the sources take turns within a command, so a burst of load from the other users of the machine
falls on all of them alike; the tables give medians of ``--repeats`` rounds and the CPU time
(user + system) of the process, which that load disturbs far less than the wall time.

``publish`` prints its release's own time (``seconds`` in its JSON, the work without start-up,
reading or compiling); the table gives it apart so that the start-up is the difference.

``python -X importtime`` of ``incrowd --version`` and of ``incrowd risk`` on testdata lists the
top-level imports that cost most (cumulative milliseconds, one run each, warm file cache).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DOCS, REPO, data_dir, machine_line, md_table, median, now_utc, update_section  # noqa: E402
from bench_first_use import ARX_QIS, _spec  # noqa: E402

RESULTS = REPO / "bench" / "results" / "startup_commands.json"
#: the caches a command meets: warm, as an install running ``incrowd warmup`` leaves it, empty
STATES = ("warm", "installed", "fresh")
CENSUS = REPO / "src" / "incrowd" / "datasets" / "census.csv"
#: sdcMicro's own keys for its testdata (its examples and bench/peers/risk_vs_sdcmicro.R)
TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]

#: (key, what the table says, aim for the warm whole process in seconds or None)
COMMANDS = [
    ("version", "incrowd --version", 0.1),
    ("help", "incrowd --help", None),
    ("risk", "incrowd risk testdata.csv (4,580 rows, 7 keys, weights, households)", 0.5),
    ("publish", "incrowd publish adult.csv --spec (k = 5, 1 %)", None),
    ("generalize", "incrowd generalize adult.csv (8 QI, k = 5, 1 %, least loss)", None),
    ("negotiate", "incrowd negotiate adult8.lattice --k 5 --max-suppression 1%", None),
    ("microaggregate", "incrowd microaggregate census.csv --k 5 --method mdav (1,080 x 13)", None),
]

# what the console script does, whichever sources are on the path (the entry point was
# ``incrowd.cli:main`` before it became ``incrowd.cli:run``)
_CONSOLE = "import sys, incrowd.cli as c; sys.argv[0] = 'incrowd'; sys.exit((getattr(c, 'run', None) or c.main)())"


def _env(src: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src)
    env["NUMBA_CACHE_DIR"] = str(cache)
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """(wall seconds, child CPU seconds, stdout) of one process; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def _argvs(work: Path) -> dict[str, list[str]]:
    data = data_dir()
    adult = data / "adult_arx"
    cli = [sys.executable, "-c", _CONSOLE]
    spec = _spec(work, adult)
    return {
        "version": [*cli, "--version"],
        "help": [*cli, "--help"],
        "risk": [*cli, "risk", str(data / "testdata.csv"), "--qi", ",".join(TESTDATA_KEYS), "--weight",
                 "sampling_weight", "--household", "ori_hid", "--quiet"],
        "publish": [*cli, "publish", str(adult / "adult.csv"), "--spec", str(spec), "-o", str(work / "release.csv"),
                    "--json"],
        "generalize": [*cli, "generalize", str(adult / "adult.csv"), "--hierarchies", str(adult), "--qi",
                       ",".join(ARX_QIS), "--k", "5", "--max-suppression", "1%", "-o", str(work / "gen.csv"),
                       "--json"],
        "negotiate": [*cli, "negotiate", str(work / "adult8.lattice"), "--k", "5", "--max-suppression", "1%",
                      "--json"],
        "microaggregate": [*cli, "microaggregate", str(CENSUS), "--k", "5", "--method", "mdav",
                           "-o", str(work / "mdav.csv"), "--quiet"],
    }


def _release_seconds(stdout: str) -> float | None:
    try:
        return float(json.loads(stdout)["seconds"])
    except (ValueError, KeyError, TypeError):
        return None


def _importtime(argv: list[str], env: dict[str, str], cwd: Path, top: int = 8) -> dict:
    """The costliest top-level imports of one process (``python -X importtime``), in ms."""
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=900)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        if not name.startswith("  "):  # a top-level import (its children are indented)
            rows.append((name.strip(), int(cumulative) / 1000))
    rows.sort(key=lambda r: -r[1])
    return {"total_ms": sum(ms for _, ms in rows), "top": rows[:top]}


def measure(srcs: dict[str, Path], repeats: int) -> dict[str, dict]:
    with tempfile.TemporaryDirectory(prefix="incrowd-startup-") as tmp:
        work = Path(tmp)
        argvs = _argvs(work)
        warm = {label: work / f"warm-cache-{label}" for label in srcs}
        first_label = next(iter(srcs))
        adult = data_dir() / "adult_arx"
        _run([sys.executable, "-c", _CONSOLE, "lattice", "build", str(adult / "adult.csv"), "--hierarchies",
              str(adult), "--qi", ",".join(ARX_QIS), "-o", str(work / "adult8.lattice"), "--quiet"],
             _env(srcs[first_label], warm[first_label]), work)
        for label, src in srcs.items():  # fill each warm cache
            for argv in argvs.values():
                _run(argv, _env(src, warm[label]), work)
        installed = {label: work / f"installed-cache-{label}" for label in srcs}
        warmup = {}
        for label, src in srcs.items():  # the cache an install that runs ``incrowd warmup`` leaves
            wall, cpu, _ = _run([sys.executable, "-c", _CONSOLE, "warmup", "--quiet"], _env(src, installed[label]),
                                work)
            warmup[label] = {"wall": wall, "cpu": cpu}
            print(f"{label}: incrowd warmup {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
        load_before = os.getloadavg()
        got = {label: {state: {key: {"wall": [], "cpu": [], "release": []} for key in argvs}
                       for state in STATES} for label in srcs}
        for round_ in range(repeats):
            for key, argv in argvs.items():
                for label, src in srcs.items():
                    for state in STATES:
                        with tempfile.TemporaryDirectory(prefix=f"{state}-cache-", dir=work) as folder:
                            cache = warm[label] if state == "warm" else Path(folder) / "numba"
                            if state == "installed":
                                shutil.copytree(installed[label], cache)
                            wall, cpu, out = _run(argv, _env(src, cache), work)
                        row = got[label][state][key]
                        row["wall"].append(wall)
                        row["cpu"].append(cpu)
                        if key == "publish":
                            row["release"].append(_release_seconds(out))
                        print(f"round {round_ + 1} {label:6s} {state:9s} {key:15s} {wall:6.3f} s wall, "
                              f"{cpu:6.3f} s CPU", flush=True)
        load_after = os.getloadavg()
        imports = {label: {key: _importtime(argvs[key], _env(src, warm[label]), work) for key in ("version", "risk")}
                   for label, src in srcs.items()}
    return {label: {"when": now_utc(), "machine": machine_line(), "src": str(srcs[label]), "repeats": repeats,
                    "loadavg_before": load_before, "loadavg_after": load_after, "runs": got[label],
                    "warmup": warmup[label],
                    "imports": imports[label]} for label in srcs}


def _med(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return median(values) if values else None


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def render(saved: dict) -> str:
    labels = [(name, saved[name]) for name in ("after", "before") if name in saved]
    after = labels[0][1]
    header = ["command", "aim (warm)"]
    for name, _ in labels:
        header += [f"{name}: warm wall s", f"{name}: warm CPU s", f"{name}: after warmup wall s",
                   f"{name}: empty cache wall s"]
    rows = []
    for key, label, aim in COMMANDS:
        row = [f"`{label}`", f"< {aim:g} s" if aim else "-"]
        for _, res in labels:
            runs = res["runs"]
            row += [_s(_med(runs["warm"][key]["wall"])), _s(_med(runs["warm"][key]["cpu"])),
                    _s(_med(runs["installed"][key]["wall"])) if "installed" in runs else "-",
                    _s(_med(runs["fresh"][key]["wall"]))]
        rows.append(row)
    warmups = "; ".join(f"{name}: {res['warmup']['wall']:.0f} s wall, {res['warmup']['cpu']:.0f} s CPU"
                        for name, res in labels if "warmup" in res)
    release = []
    for name, res in labels:
        for state in [st for st in STATES if st in res["runs"]]:
            p = res["runs"][state]["publish"]
            own, whole = _med(p["release"]), _med(p["wall"])
            if own is not None and whole is not None:
                release.append([name, state, f"{whole:.2f}", f"{own:.2f}", f"{whole - own:.2f}"])
    imports = []
    for name, res in labels:
        for key, what in (("version", "`incrowd --version`"), ("risk", "`incrowd risk` on testdata")):
            got = res["imports"][key]
            top = ", ".join(f"{mod} {ms:.0f}" for mod, ms in got["top"])
            imports.append([what, name, f"{got['total_ms']:.0f}", top])
    note = "".join(f" '{name}' is {res['note']}." for name, res in labels if res.get("note"))
    if len(labels) > 1:
        note += " Both were measured in the same loop, taking turns."
    lines = [
        "## Start-up",
        "",
        f"Generated by `bench/startup.py` on {after['when']}. Machine: {after['machine']}. The machine is "
        f"shared with five other developers' jobs (load average {after['loadavg_before'][0]:.2f} before and "
        f"{after['loadavg_after'][0]:.2f} after the timed runs): wall times are noisy, CPU times (user + "
        "system of the process) far less so.",
        "",
        f"Each command is a whole process, as the `incrowd` console script starts it; median of {after['repeats']} "
        "rounds, the commands and sources taking turns within a round. *Warm*: numba's cache holds the "
        "kernels (one untimed run of every command filled it). *After warmup*: a copy, new for every run, "
        "of a cache filled by `incrowd warmup` alone, which `make demo`'s install step now runs: the first "
        "run of each command after that install"
        + (f" (`incrowd warmup` itself took {warmups})" if warmups else "") + ". *Empty cache*: "
        "`NUMBA_CACHE_DIR` a new empty folder for every run: the first run of each command after an "
        "install that compiled nothing. Data: sdcMicro's `testdata` (keys " + ", ".join(TESTDATA_KEYS) + "; weight "
        "`sampling_weight`, households `ori_hid`), ARX's Adult (30,162 rows, its hierarchies; `publish` "
        "microaggregates `age`), CASC Census (1,080 x 13)." + note,
        "",
        md_table(header, rows),
        "",
        "`publish`: the whole process against the release's own time (`seconds` in its JSON: the work, "
        "without start-up, reading the file or compiling); the difference is what the process adds.",
        "",
        md_table(["sources", "cache", "whole process s", "release's own s", "difference s"], release),
        "",
        "`python -X importtime` (one run, warm file cache): total milliseconds of imports, and the top-level "
        "imports that cost most (cumulative ms).",
        "",
        md_table(["process", "sources", "imports ms", "costliest top-level imports (ms)"], imports),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--src", type=Path, default=REPO / "src", help="sources to measure")
    parser.add_argument("--note", default="", help="what the sources are")
    parser.add_argument("--compare", type=Path, default=None,
                        help="older sources measured as 'before' in the same loop, taking turns")
    parser.add_argument("--compare-note", default="", help="what the --compare sources are")
    parser.add_argument("--render", action="store_true", help="redraw the docs from the JSON, measure nothing")
    args = parser.parse_args()
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if not args.render:
        srcs = {"after": args.src.resolve()}
        if args.compare is not None:
            srcs["before"] = args.compare.resolve()
        got = measure(srcs, args.repeats)
        saved = {"after": {**got["after"], "note": args.note}}
        if args.compare is not None:
            saved["before"] = {**got["before"], "note": args.compare_note}
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(saved, indent=1) + "\n")
    update_section(DOCS / "performance.md", "start-up", render(saved), title="Performance")
    print(f"wrote the start-up section of {DOCS / 'performance.md'}")


if __name__ == "__main__":
    main()
