"""The commands that run only the compiled extension's kernels, before and after it: whole processes.

``incrowd publish`` of ARX's Adult (k = 5 within 1 %, ``age`` numeric, seven categorical
quasi-identifiers on ARX's hierarchies, salary-class sensitive: bench_first_use.py's spec),
``incrowd generalize`` of Adult (8 QIs, k = 5, 1 %) and ``incrowd microaggregate`` of CASC's Census
(MDAV, k = 5), each started as the ``incrowd`` console script starts it, with the sources given
by ``--before`` (e.g. a worktree of the commit before the extension) and this checkout's, taking
turns within each round; warm numba caches (one per source, filled by an untimed run of every
command), bytecode compiled first (``PYTHONDONTWRITEBYTECODE`` unset, as an installed package
runs). Medians of ``--repeats`` rounds: wall and CPU (user + system) seconds, the release's own
``seconds`` from its JSON, and whether the process imported numba. Then ``incrowd warmup``'s CPU
on an empty numba cache, once per source (what an install compiles).

    .venv/bin/python bench/native_before_after.py --before /tmp/old/src [--repeats 5] [--no-warmup] [--work DIR] [--render]

Writes the section ``native`` of docs/performance.md and bench/results/native_before_after.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DOCS, REPO, data_dir, machine_line, md_table, median, now_utc, update_section  # noqa: E402
from bench_first_use import ARX_QIS, _spec  # noqa: E402
from startup import _CONSOLE, _env, _run  # noqa: E402

RESULTS = REPO / "bench" / "results" / "native_before_after.json"
CENSUS = REPO / "src" / "incrowd" / "datasets" / "census.csv"
# the console script (as ``_CONSOLE``), and at exit a line saying whether numba was imported (an
# exit handler: the command's quick exit runs those, then skips the interpreter's teardown)
_PROBE = ("import atexit, sys, incrowd.cli as c\n"
          "atexit.register(lambda: print('\\n@@numba=' + str('numba' in sys.modules), flush=True))\n"
          "sys.argv[0] = 'incrowd'\nsys.exit(c.run())")


def _commands(work: Path) -> dict[str, list[str]]:
    adult = data_dir() / "adult_arx"
    cli = [sys.executable, "-c", _PROBE]
    gen = ["--hierarchies", str(adult), "--qi", ",".join(ARX_QIS), "--k", "5", "--max-suppression", "1%", "--json"]
    return {
        "publish": [*cli, "publish", str(adult / "adult.csv"), "--spec", str(_spec(work, adult)),
                    "-o", str(work / "release.csv"), "--json"],
        "generalize": [*cli, "generalize", str(adult / "adult.csv"), *gen, "-o", str(work / "gen.csv")],
        "microaggregate": [*cli, "microaggregate", str(CENSUS), "--k", "5", "--method", "mdav", "--json",
                           "-o", str(work / "mdav.csv")],
    }


def _one(argv: list[str], env: dict[str, str], cwd: Path) -> dict:
    wall, cpu, out = _run(argv, env, cwd)
    body, _, flag = out.rpartition("\n@@numba=")
    seconds = None
    try:
        seconds = json.loads(body).get("seconds")
    except ValueError:
        pass
    return {"wall": wall, "cpu": cpu, "seconds": seconds, "numba": flag.strip() == "True"}


def _save(res: dict) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    update_section(DOCS / "performance.md", "native", render(res), title="Performance")


def measure(before: Path, repeats: int, warmup: bool, work_dir: Path | None) -> dict:
    sources = {"before": before.resolve(), "after": REPO / "src"}
    with tempfile.TemporaryDirectory(prefix="incrowd-native-") as tmp:
        work = work_dir or Path(tmp)
        envs = {}
        for name, src in sources.items():
            (work / name).mkdir(parents=True, exist_ok=True)
            envs[name] = _env(src, work / name / "cache")
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=envs[name])
        commands = _commands(work)
        for name in sources:  # fill each source's numba cache
            for argv in commands.values():
                _one(argv, envs[name], work / name)
        runs: dict[str, dict[str, list[dict]]] = {c: {s: [] for s in sources} for c in commands}
        for _ in range(repeats):
            for command, argv in commands.items():
                for name in sources:
                    runs[command][name].append(_one(argv, envs[name], work / name))
        res = {"when": now_utc(), "machine": machine_line(), "repeats": repeats, "runs": runs, "warmup": {}}
        _save(res)  # the commands' table first: the warm-ups take minutes
        for name in sources if warmup else ():
            env = dict(envs[name], NUMBA_CACHE_DIR=str(work / name / "empty-cache"))
            wall, cpu, _ = _run([sys.executable, "-c", _CONSOLE, "warmup", "--quiet"], env, work / name)
            res["warmup"][name] = {"wall": wall, "cpu": cpu}
    return res


LABELS = {"publish": "`incrowd publish` of Adult (k = 5, 1 %, salary-class sensitive)",
          "generalize": "`incrowd generalize` of Adult (8 QIs, k = 5, 1 %)",
          "microaggregate": "`incrowd microaggregate` of Census (MDAV, k = 5)"}


def render(res: dict) -> str:
    rows = []
    for command, by_source in res["runs"].items():
        for name in ("before", "after"):
            runs = by_source[name]
            secs = [r["seconds"] for r in runs if r["seconds"] is not None]
            rows.append([LABELS[command] if name == "before" else "", name,
                         f"{median([r['wall'] for r in runs]):.2f}", f"{median([r['cpu'] for r in runs]):.2f}",
                         f"{median(secs):.3f}" if secs else "-", "yes" if any(r["numba"] for r in runs) else "no"])
    warm = res["warmup"]
    warmup_line = (f"`incrowd warmup` on an empty numba cache (what an install compiles), once each: CPU "
                   f"{warm['before']['cpu']:.0f} s before, {warm['after']['cpu']:.0f} s after (wall "
                   f"{warm['before']['wall']:.0f} s and {warm['after']['wall']:.0f} s)"
                   + (f"; {warm['note']}." if warm.get("note") else ".")
                   if {"before", "after"} <= set(warm) else "`incrowd warmup`: not measured in this run.")
    return "\n".join([
        "### The kernels of a one-shot command, compiled ahead of time: before and after",
        "",
        f"Generated by `bench/native_before_after.py` on {res['when']}. Machine: {res['machine']}; shared with "
        "other developers' jobs, so the CPU column is the steadier. Whole processes as the `incrowd` console "
        "script starts them, warm numba caches, bytecode compiled; *before* the sources without the compiled "
        "extension, *after* with it, taking turns; medians of "
        f"{res['repeats']} rounds (seconds; *release* is the command's own `seconds` in its JSON).",
        "",
        md_table(["command", "sources", "wall", "CPU", "release", "numba imported"], rows),
        "",
        warmup_line,
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the sources (a src folder) without the extension")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-warmup", action="store_true", help="leave incrowd warmup's timing out")
    parser.add_argument("--work", type=Path, default=None,
                        help="a folder kept between runs (its numba caches stay warm); default a temporary one")
    parser.add_argument("--render", action="store_true", help="redraw the docs from the JSON, measure nothing")
    args = parser.parse_args()
    if args.render:
        res = json.loads(RESULTS.read_text())
    else:
        if args.before is None:
            parser.error("--before is required unless --render")
        res = measure(args.before, args.repeats, not args.no_warmup, args.work)
    _save(res)
    print(f"wrote the native section of {DOCS / 'performance.md'}")


if __name__ == "__main__":
    main()
