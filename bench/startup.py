"""One-shot commands as a curator runs them: whole-process wall time, warm cache and fresh install,
this checkout against older sources, and sdcMicro and anjana as whole processes beside them.

Run from the repository root: ``.venv/bin/python bench/startup.py [--repeats 3] [--compare OLD/src
--compare-note 'commit ...'] [--states warm,installed,fresh] [--no-peers] [--no-million] [--render]``.
Writes the section ``start-up`` of docs/performance.md and the raw figures to
``bench/results/startup_commands.json`` (``after`` is this checkout, ``before`` the ``--compare``
sources, measured in the same loop, taking turns; ``peers`` sdcMicro and anjana).

Each command is a whole process started as the ``incrowd`` console script starts it, on each cache
state a user meets: *warm* (numba's cache holds every kernel the commands load: a copy of the
installed cache, then one untimed run of every command); *installed* (a copy, new for every run, of
a folder filled by ``incrowd warmup`` alone, which ``make demo``'s install step runs: the first run
after that install); *fresh* (an empty ``NUMBA_CACHE_DIR``: an install that compiled nothing; off by
default, ``--states`` adds it). ``incrowd warmup``'s own time is recorded too. The commands take
turns within a round and the sources within a command, so a burst of load from the other users of
the machine falls on all of them alike; the tables give medians of ``--repeats`` rounds and the CPU
time (user + system) of the process, which that load disturbs far less than the wall time.

Data: sdcMicro's ``testdata`` (4,580 rows, 7 keys, weights, households), ARX's Adult (30,162 rows)
and Adult resampled to 1,000,000 rows (rows drawn with replacement, seed 0; ``--no-million`` leaves
those out; they run on the warm cache only, where the work and not the start-up decides).

Peers, each a whole process (``Rscript`` with sdcMicro from ``$INCROWD_RLIB``, default /work/rlib;
anjana from ``$ANJANA_PYTHON``): sdcMicro's ``measure_risk`` + ``suda2`` on testdata,
``localSuppression`` (k = 3) on testdata's keys and ``microaggregation(method = "mdav")`` on Census;
anjana's ``k_anonymity`` (k = 5, 1 %) on Adult with ARX's hierarchies.

Two more tables: ``python -X importtime`` of ``incrowd --version``, ``incrowd risk`` on testdata and
``incrowd publish`` of Adult (the top-level imports that cost most, one run each); and where one
command's time goes in a fresh Python process (imports, reading, the first call, which loads the
compiled kernels, and a second call in the same process), with numba's own start (one trivial
cached function) beside it.
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

from _common import (  # noqa: E402
    DOCS,
    REPO,
    child_json,
    data_dir,
    machine_line,
    md_table,
    median,
    now_utc,
    update_section,
)
from bench_first_use import ARX_QIS, _spec  # noqa: E402

RESULTS = REPO / "bench" / "results" / "startup_commands.json"
#: the caches a command meets: warm, as an install running ``incrowd warmup`` leaves it, empty
STATES = ("warm", "installed", "fresh")
CENSUS = REPO / "src" / "incrowd" / "datasets" / "census.csv"
#: sdcMicro's own keys for its testdata (its examples and bench/peers/risk_vs_sdcmicro.R)
TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
MILLION = 1_000_000

#: (key, what the table says, data, aim for the warm whole process in seconds or None, peer key or None)
COMMANDS = [
    ("import", "python -c 'import incrowd'", "-", None, None),
    ("version", "incrowd --version", "-", 0.1, None),
    ("help", "incrowd --help", "-", None, None),
    ("plan", "incrowd incremental plan --rows 50000 --varsigma 5 --tau-end 0.5 --model quadratic", "-", None, None),
    ("plan-fit", "incrowd incremental plan --rows 50000 --varsigma 5 --tau-end 0.5 (--model fit: times MDAV)", "-",
     None, None),
    ("risk", "incrowd risk (7 keys, weights, households)", "testdata", 0.5, "sdcmicro-risk"),
    ("risk-adult", "incrowd risk (8 QI, SUDA2)", "Adult", None, None),
    ("local-suppression", "python -c local_suppression(k = 3, 7 keys) (no command runs it alone)", "testdata", None,
     "sdcmicro-local-suppression"),
    ("publish", "incrowd publish --spec (k = 5, 1 %, age microaggregated)", "Adult", None, None),
    ("publish-report", "incrowd publish --spec ... --report report.json", "Adult", None, None),
    ("generalize", "incrowd generalize (8 QI, k = 5, 1 %, least loss)", "Adult", None, "anjana-k"),
    ("lattice", "incrowd lattice build (8 QI)", "Adult", None, None),
    ("negotiate", "incrowd negotiate adult8.lattice --k 5 --max-suppression 1%", "Adult", 0.5, None),
    ("microaggregate", "incrowd microaggregate --k 5 --method mdav", "Census 1,080 x 13", None, "sdcmicro-mdav"),
    ("risk-1m", "incrowd risk (8 QI, no SUDA2)", "1,000,000 rows", None, None),
    ("publish-1m", "incrowd publish --spec (k = 5, 1 %)", "1,000,000 rows", None, None),
    ("generalize-1m", "incrowd generalize (8 QI, k = 5, 1 %)", "1,000,000 rows", None, None),
]
#: the commands on a million rows: warm cache only
BIG = {"risk-1m", "publish-1m", "generalize-1m"}

#: peer key -> what the table says
PEERS = {
    "sdcmicro-risk": "sdcMicro 5.8.0: measure_risk(w, hid) + suda2 on testdata (Rscript)",
    "sdcmicro-local-suppression": "sdcMicro 5.8.0: localSuppression(k = 3) on testdata's 7 keys (Rscript)",
    "sdcmicro-mdav": "sdcMicro 5.8.0: microaggregation(method = 'mdav', aggr = 5) on Census (Rscript)",
    "anjana-k": "anjana 1.2.3: k_anonymity(k = 5, 1 %) on Adult (python)",
}

R_RISK = """.libPaths(c(Sys.getenv("INCROWD_RLIB"), .libPaths())); suppressMessages(library(sdcMicro))
x <- read.csv(commandArgs(trailingOnly = TRUE)[1])
keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
r <- measure_risk(x, keyVars = keys, w = "sampling_weight", hid = "ori_hid")
s <- suda2(x, variables = keys)
cat(r$global_risk, max(s$score), "\\n")"""
R_LOCAL = """.libPaths(c(Sys.getenv("INCROWD_RLIB"), .libPaths())); suppressMessages(library(sdcMicro))
x <- read.csv(commandArgs(trailingOnly = TRUE)[1])
keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
x[keys] <- lapply(x[keys], factor)
ls <- localSuppression(x[, keys], k = 3, keyVars = keys)
cat(sum(is.na(ls$xAnon)), "\\n")"""
R_MDAV = """.libPaths(c(Sys.getenv("INCROWD_RLIB"), .libPaths())); suppressMessages(library(sdcMicro))
x <- read.csv(commandArgs(trailingOnly = TRUE)[1])
m <- microaggregation(x, variables = names(x), aggr = 5, method = "mdav")
cat(nrow(m$mx), "\\n")"""
ANJANA_K = r"""
import sys
import pandas as pd
import anjana.anonymity as anonymity
folder = sys.argv[1]
data = pd.read_csv(folder + "/adult.csv", sep=";", dtype=str)
qis = [c for c in data.columns if c != "salary-class"]
hier = {a: dict(pd.read_csv(f"{folder}/adult_hierarchy_{a}.csv", sep=";", header=None, dtype=str)) for a in qis}
out = anonymity.k_anonymity(data, [], qis, 5, 1, hier)
print(len(out))
"""

LOCAL_SUPPRESSION = """import sys
from incrowd import read_table
from incrowd.generalization import local_suppression
result = local_suppression(read_table(sys.argv[1]), sys.argv[2].split(","), 3)
print(len(result.table))"""

# what the console script does, whichever sources are on the path (the entry point was
# ``incrowd.cli:main`` before it became ``incrowd.cli:run``)
_CONSOLE = "import sys, incrowd.cli as c; sys.argv[0] = 'incrowd'; sys.exit((getattr(c, 'run', None) or c.main)())"

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
elif what.startswith("negotiate"):
    import contextlib
    from incrowd.generalization import Lattice, negotiate
    one = contextlib.nullcontext()
    if what == "negotiate-one":  # as ``incrowd negotiate`` answers: one request per process
        from incrowd.cli._bench_entry import one_request
        one = one_request()
    t1 = time.perf_counter()
    lat = Lattice.open(sys.argv[2])
    t2 = time.perf_counter()
    with one:
        negotiate(lat, k=5, max_suppression="1%")
        t3 = time.perf_counter()
        negotiate(lat, k=5, max_suppression="1%")
        t4 = time.perf_counter()
else:  # risk on testdata through the API (compiled kernels)
    from incrowd import read_table
    from incrowd.reporting import risk
    t1 = time.perf_counter()
    X = read_table(sys.argv[2])
    t2 = time.perf_counter()
    keys = sys.argv[3].split(",")
    risk(X, keys, weight="sampling_weight", household="ori_hid")
    t3 = time.perf_counter()
    risk(X, keys, weight="sampling_weight", household="ori_hid")
    t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "first_s": t3 - t2, "later_s": t4 - t3}))
"""
SPLITS = [("risk", "API risk() on testdata (4,580 rows, 7 keys, weights, households)"),
          ("mdav", "MDAV on census.csv (1080 x 13, k = 5)"),
          ("negotiate", "API negotiate() on the 8-QI Adult lattice (k = 5, 1 %)"),
          ("negotiate-one", "the same, one request per process (as `incrowd negotiate`)"),
          ("numba", "numba alone: a trivial cached function")]


def _env(src: Path, cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    # as an installed package runs: its modules' bytecode written once (pip compiles it at
    # install), never compiled from source again in every process (about 0.3 s for publish)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(src)
    env["NUMBA_CACHE_DIR"] = str(cache)
    env.setdefault("INCROWD_RLIB", "/work/rlib")
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """(wall seconds, child CPU seconds, stdout) of one process; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def _million(work: Path) -> Path:
    """Adult resampled to a million rows (drawn with replacement, seed 0), ``;``-separated as ARX's."""
    import pandas as pd

    adult = pd.read_csv(data_dir() / "adult_arx" / "adult.csv", sep=";", dtype=str)
    path = work / "adult_1m.csv"
    adult.sample(MILLION, replace=True, random_state=0).to_csv(path, sep=";", index=False)
    return path


def _argvs(work: Path, million: bool) -> dict[str, list[str]]:
    data = data_dir()
    adult = data / "adult_arx"
    testdata = str(data / "testdata.csv")
    cli = [sys.executable, "-c", _CONSOLE]
    spec = str(_spec(work, adult))
    gen = ["--hierarchies", str(adult), "--qi", ",".join(ARX_QIS), "--k", "5", "--max-suppression", "1%", "--json"]
    argvs = {
        "import": [sys.executable, "-c", "import incrowd"],
        "version": [*cli, "--version"],
        "help": [*cli, "--help"],
        "plan": [*cli, "incremental", "plan", "--rows", "50000", "--varsigma", "5", "--tau-end", "0.5", "--model",
                 "quadratic"],
        "plan-fit": [*cli, "incremental", "plan", "--rows", "50000", "--varsigma", "5", "--tau-end", "0.5"],
        "risk": [*cli, "risk", testdata, "--qi", ",".join(TESTDATA_KEYS), "--weight", "sampling_weight",
                 "--household", "ori_hid", "--quiet"],
        "risk-adult": [*cli, "risk", str(adult / "adult.csv"), "--qi", ",".join(ARX_QIS), "--quiet"],
        "local-suppression": [sys.executable, "-c", LOCAL_SUPPRESSION, testdata, ",".join(TESTDATA_KEYS)],
        "publish": [*cli, "publish", str(adult / "adult.csv"), "--spec", spec, "-o", str(work / "release.csv"),
                    "--json"],
        "publish-report": [*cli, "publish", str(adult / "adult.csv"), "--spec", spec, "-o", str(work / "release2.csv"),
                           "--report", str(work / "report.json"), "--json"],
        "generalize": [*cli, "generalize", str(adult / "adult.csv"), *gen, "-o", str(work / "gen.csv")],
        "lattice": [*cli, "lattice", "build", str(adult / "adult.csv"), "--hierarchies", str(adult), "--qi",
                    ",".join(ARX_QIS), "-o", str(work / "adult8-timed.lattice"), "--quiet"],
        "negotiate": [*cli, "negotiate", str(work / "adult8.lattice"), "--k", "5", "--max-suppression", "1%",
                      "--json"],
        "microaggregate": [*cli, "microaggregate", str(CENSUS), "--k", "5", "--method", "mdav",
                           "-o", str(work / "mdav.csv"), "--quiet"],
    }
    if million:
        big = str(_million(work))
        argvs["risk-1m"] = [*cli, "risk", big, "--qi", ",".join(ARX_QIS), "--no-suda", "--quiet"]
        argvs["publish-1m"] = [*cli, "publish", big, "--spec", spec, "-o", str(work / "release1m.csv"), "--json"]
        argvs["generalize-1m"] = [*cli, "generalize", big, *gen, "-o", str(work / "gen1m.csv")]
    return argvs


def _peer_argvs(work: Path) -> dict[str, list[str]]:
    data = data_dir()
    anjana = os.environ.get("ANJANA_PYTHON", str(Path.home() / ".local/share/incrowd-peers/anjana-venv/bin/python"))
    testdata = str(data / "testdata.csv")
    argvs = {
        "sdcmicro-risk": ["Rscript", "-e", R_RISK, testdata],
        "sdcmicro-local-suppression": ["Rscript", "-e", R_LOCAL, testdata],
        "sdcmicro-mdav": ["Rscript", "-e", R_MDAV, str(CENSUS)],
        "anjana-k": [anjana, "-c", ANJANA_K, str(data / "adult_arx")],
    }
    if shutil.which("Rscript") is None:
        argvs = {k: v for k, v in argvs.items() if not k.startswith("sdcmicro")}
    if not Path(anjana).exists():
        argvs.pop("anjana-k")
    return argvs


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


def _splits(srcs: dict[str, Path], warm: dict[str, Path], work: Path, repeats: int) -> dict[str, dict]:
    (work / "trivial_kernel.py").write_text(
        "from numba import njit\n\n\n@njit(cache=True)\ndef add_one(x):\n    return x + 1\n")
    testdata = str(data_dir() / "testdata.csv")
    lattice = str(work / "adult8.lattice")
    args = {"risk": [testdata, ",".join(TESTDATA_KEYS)], "mdav": [str(CENSUS)], "numba": [str(work)],
            "negotiate": [lattice], "negotiate-one": [lattice]}
    got: dict[str, dict] = {label: {} for label in srcs}
    for label, src in srcs.items():  # untimed: fills the caches (the trivial kernel's too)
        for what, _ in SPLITS:
            child_json([sys.executable, "-c", SPLIT, what, *args[what]], env=_env(src, warm[label]), cwd=work)
    for what, _ in SPLITS:
        rows: dict[str, list] = {label: [] for label in srcs}
        for _ in range(repeats):
            for label, src in srcs.items():
                rows[label].append(child_json([sys.executable, "-c", SPLIT, what, *args[what]],
                                              env=_env(src, warm[label]), cwd=work))
        for label, runs in rows.items():
            got[label][what] = {key: [r[key] for r in runs] for key in runs[0]}
    return got


def measure(srcs: dict[str, Path], repeats: int, states: tuple[str, ...], peers: bool, million: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="incrowd-startup-") as tmp:
        work = Path(tmp)
        argvs = _argvs(work, million)
        peer_argvs = _peer_argvs(work) if peers else {}
        installed = {label: work / f"installed-cache-{label}" for label in srcs}
        warm = {label: work / f"warm-cache-{label}" for label in srcs}
        warmup = {}
        for src in srcs.values():  # the bytecode an install writes
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=_env(src, work))
        for label, src in srcs.items():  # the cache an install that runs ``incrowd warmup`` leaves
            wall, cpu, _ = _run([sys.executable, "-c", _CONSOLE, "warmup", "--quiet"], _env(src, installed[label]),
                                work)
            warmup[label] = {"wall": wall, "cpu": cpu}
            print(f"{label}: incrowd warmup {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
            shutil.copytree(installed[label], warm[label])
        first = next(iter(srcs))
        adult = data_dir() / "adult_arx"
        _run([sys.executable, "-c", _CONSOLE, "lattice", "build", str(adult / "adult.csv"), "--hierarchies",
              str(adult), "--qi", ",".join(ARX_QIS), "-o", str(work / "adult8.lattice"), "--quiet"],
             _env(srcs[first], warm[first]), work)
        for label, src in srcs.items():  # fill each warm cache
            for argv in argvs.values():
                _run(argv, _env(src, warm[label]), work)
        for argv in peer_argvs.values():  # R's and Python's own files into the OS cache
            _run(argv, dict(os.environ, INCROWD_RLIB=os.environ.get("INCROWD_RLIB", "/work/rlib")), work)
        load_before = os.getloadavg()
        got = {label: {state: {key: {"wall": [], "cpu": [], "release": []} for key in argvs} for state in states}
               for label in srcs}
        peer_runs: dict[str, dict[str, list]] = {key: {"wall": [], "cpu": []} for key in peer_argvs}
        for round_ in range(repeats):
            for key, argv in argvs.items():
                for label, src in srcs.items():
                    for state in states:
                        if key in BIG and state != "warm":
                            continue
                        with tempfile.TemporaryDirectory(prefix=f"{state}-cache-", dir=work) as folder:
                            cache = warm[label] if state == "warm" else Path(folder) / "numba"
                            if state == "installed":
                                shutil.copytree(installed[label], cache)
                            wall, cpu, out = _run(argv, _env(src, cache), work)
                        row = got[label][state][key]
                        row["wall"].append(wall)
                        row["cpu"].append(cpu)
                        if key.startswith("publish"):
                            row["release"].append(_release_seconds(out))
                        print(f"round {round_ + 1} {label:6s} {state:9s} {key:15s} {wall:6.3f} s wall, "
                              f"{cpu:6.3f} s CPU", flush=True)
            for key, argv in peer_argvs.items():
                wall, cpu, _ = _run(argv, _env(REPO / "src", work / "peer-cache"), work)
                peer_runs[key]["wall"].append(wall)
                peer_runs[key]["cpu"].append(cpu)
                print(f"round {round_ + 1} peer   {key:27s} {wall:6.3f} s wall, {cpu:6.3f} s CPU", flush=True)
        load_after = os.getloadavg()
        imports = {label: {key: _importtime(argvs[key], _env(src, warm[label]), work)
                           for key in ("version", "risk", "publish")} for label, src in srcs.items()}
        split = _splits(srcs, warm, work, repeats)
    out: dict = {label: {"when": now_utc(), "machine": machine_line(), "src": str(srcs[label]), "repeats": repeats,
                         "loadavg_before": load_before, "loadavg_after": load_after, "runs": got[label],
                         "warmup": warmup[label], "imports": imports[label], "split": split[label]}
                 for label in srcs}
    out["peers"] = peer_runs
    return out


def _med(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return median(values) if values else None


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def render(saved: dict) -> str:
    labels = [(name, saved[name]) for name in ("after", "before") if name in saved]
    after = labels[0][1]
    states = [st for st in STATES if st in after["runs"]]
    names = {"warm": "warm", "installed": "after install", "fresh": "empty cache"}
    header = ["command", "data", "aim (warm)"]
    for name, _ in labels:
        header += [f"{name}: {names[st]} wall s" for st in states] + [f"{name}: warm CPU s"]
    peers = saved.get("peers", {})
    if peers:
        header += ["peer, whole process: wall s (CPU s)"]
    rows = []
    for key, label, data, aim, peer in COMMANDS:
        if key not in after["runs"]["warm"]:
            continue
        row = [f"`{label}`", data, f"< {aim:g} s" if aim else "-"]
        for _, res in labels:
            runs = res["runs"]
            row += [_s(_med(runs[st][key]["wall"])) if key in runs.get(st, {}) else "-" for st in states]
            row += [_s(_med(runs["warm"][key]["cpu"])) if key in runs["warm"] else "-"]
        if peers:
            row += [f"{PEERS[peer]}: {_s(_med(peers[peer]['wall']))} ({_s(_med(peers[peer]['cpu']))})"
                    if peer in peers else ""]
        rows.append(row)
    warmups = "; ".join(f"{name}: {res['warmup']['wall']:.0f} s wall, {res['warmup']['cpu']:.0f} s CPU"
                        for name, res in labels if "warmup" in res)
    release = []
    for name, res in labels:
        for key in ("publish", "publish-1m"):
            for state in states:
                p = res["runs"][state].get(key)
                if not p:
                    continue
                own, whole = _med(p["release"]), _med(p["wall"])
                if own is not None and whole is not None:
                    release.append([key, name, names[state], f"{whole:.2f}", f"{own:.2f}", f"{whole - own:.2f}"])
    imports = []
    for key, what in (("version", "`incrowd --version`"), ("risk", "`incrowd risk` on testdata"),
                      ("publish", "`incrowd publish` of Adult")):
        for name, res in labels:
            got = res["imports"].get(key)
            if got:
                top = ", ".join(f"{mod} {ms:.0f}" for mod, ms in got["top"])
                imports.append([what, name, f"{got['total_ms']:.0f}", top])
    split_rows = []
    for what, label in SPLITS:
        for name, res in labels:
            s = res.get("split", {}).get(what)
            if s:
                split_rows.append([label, name, f"{median(s['import_s']):.3f}", f"{median(s['load_s']):.3f}",
                                   f"{median(s['first_s']):.3f}", f"{median(s['later_s']):.4f}",
                                   f"{median(s['first_s']) - median(s['later_s']):.3f}"])
    note = "".join(f" '{name}' is {res['note']}." for name, res in labels if res.get("note"))
    if len(labels) > 1:
        note += " Both were measured in the same loop, taking turns."
    lines = [
        "## Start-up",
        "",
        f"Generated by `bench/startup.py` on {after['when']}. Machine: {after['machine']}. The machine's 2 "
        f"cores are shared with five other developers' jobs (load average {after['loadavg_before'][0]:.2f} "
        f"before and {after['loadavg_after'][0]:.2f} after the timed runs): wall times are noisy, CPU times "
        "(user + system of the process) far less so.",
        "",
        "Each command is a whole process, as the `incrowd` console script starts it, with the sources' bytecode "
        f"compiled as an install leaves it; median of {after['repeats']} "
        "rounds, the commands and sources taking turns within a round. *Warm*: numba's cache holds the "
        "kernels. *After install*: a copy, new for every run, of a cache filled by `incrowd warmup` alone, "
        "which `make demo`'s install step runs: the first run of each command after that install"
        + (f" (`incrowd warmup` itself took {warmups})" if warmups else "") + ". "
        + ("*Empty cache*: `NUMBA_CACHE_DIR` a new empty folder for every run (an install that compiled "
           "nothing). " if "fresh" in states else "")
        + "The commands on 1,000,000 rows (Adult resampled with replacement, seed 0) ran on the warm cache only. "
        "Data: sdcMicro's `testdata` (keys " + ", ".join(TESTDATA_KEYS) + "; weight `sampling_weight`, households "
        "`ori_hid`), ARX's Adult (30,162 rows, its hierarchies; `publish` microaggregates `age`), CASC Census "
        "(1,080 x 13). The peers are whole processes too (`Rscript` loading sdcMicro; anjana's Python), "
        "measured in the same rounds." + note,
        "",
        md_table(header, rows),
        "",
        "`publish`: the whole process against the release's own time (`seconds` in its JSON: the work, "
        "without start-up, reading the file or compiling); the difference is what the process adds.",
        "",
        md_table(["command", "sources", "cache", "whole process s", "release's own s", "difference s"], release),
        "",
        "`python -X importtime` (one run, warm file cache): total milliseconds of imports, and the top-level "
        "imports that cost most (cumulative ms).",
        "",
        md_table(["process", "sources", "imports ms", "costliest top-level imports (ms)"], imports),
        "",
        f"Where a command's time goes, in a fresh Python process on the warm cache (seconds, median of "
        f"{after['repeats']}): importing, reading the input, the first call (which loads the compiled kernels) "
        "and a second call in the same process; their difference is the kernels' loading. Where a kernel "
        "is numba's, most of it is numba's own start, paid once per process by the first compiled function "
        "of any kind (the last row: numba sets up its code generator and imports its implementations, "
        "scipy's BLAS bindings among them); a cached kernel then loads in a few hundredths of a second, so "
        "fewer or larger cached kernels would change little. That start is why the kernels a one-shot "
        "command runs on a survey-sized file (risk with SUDA2, publish with k, l, t and cell suppression, "
        "generalize, local suppression, MDAV) are a C extension compiled at install (`incrowd._native`, "
        "each the numba kernel it replaced, bit for bit), and why `incrowd negotiate`, one request per "
        "process, runs its search as plain Python (the kernel's own source): none of them starts numba. "
        "The other microaggregation families, the incremental state and the perturbation kernels stay on "
        "numba, compiled by `incrowd warmup` at install.",
        "",
        md_table(["work", "sources", "import", "read", "first call", "later call", "kernel loading"], split_rows),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--src", type=Path, default=REPO / "src", help="sources to measure")
    parser.add_argument("--note", default="", help="what the sources are")
    parser.add_argument("--compare", type=Path, default=None,
                        help="older sources measured as 'before' in the same loop, taking turns")
    parser.add_argument("--compare-note", default="", help="what the --compare sources are")
    parser.add_argument("--states", default="warm,installed", help="cache states, of warm, installed, fresh")
    parser.add_argument("--no-peers", action="store_true", help="leave sdcMicro and anjana out")
    parser.add_argument("--no-million", action="store_true", help="leave the 1,000,000-row commands out")
    parser.add_argument("--render", action="store_true", help="redraw the docs from the JSON, measure nothing")
    args = parser.parse_args()
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if not args.render:
        states = tuple(s for s in STATES if s in args.states.split(","))
        if "warm" not in states:
            raise SystemExit("--states must include warm")
        srcs = {"after": args.src.resolve()}
        if args.compare is not None:
            srcs["before"] = args.compare.resolve()
        got = measure(srcs, args.repeats, states, not args.no_peers, not args.no_million)
        saved = {"after": {**got["after"], "note": args.note}, "peers": got["peers"]}
        if args.compare is not None:
            saved["before"] = {**got["before"], "note": args.compare_note}
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(saved, indent=1) + "\n")
    update_section(DOCS / "performance.md", "start-up", render(saved), title="Performance")
    print(f"wrote the start-up section of {DOCS / 'performance.md'}")


if __name__ == "__main__":
    main()
