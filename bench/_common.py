"""The harness every bench/ script shares, so that each script keeps only its experiment.

Machine description, data loading, fresh-process runs and their JSON hand-back, timing,
comparison with published values, Markdown tables and sections, figures and saved results.

The scripts are run from the repository root as ``.venv/bin/python bench/<script>.py``. The
benchmark data are read from :func:`incrowd.data.data_dir` (``$INCROWD_DATA`` or
``../shared/data`` beside the checkout). Several scripts write into the same Markdown files
(``docs/reproduction.md``, ``docs/benchmarks.md``); each owns one section delimited by
``<!-- BEGIN name -->`` / ``<!-- END name -->`` and :func:`update_section` replaces only that
section, under a file lock, with an atomic write.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import platform
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from incrowd._atomic import atomic_output, write_text_atomic
from incrowd.data import data_dir

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
FIGURES = DOCS / "figures"

# ---------------------------------------------------------------------------------------------
# Machine


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _ram_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return None


def machine() -> dict[str, str]:
    """CPU, cores, RAM, OS and the versions that matter for the numbers."""
    import numba

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        usable = os.cpu_count() or 0
    ram = _ram_gib()
    return {
        "cpu": _cpu_model(),
        "cores": f"{usable} usable ({os.cpu_count()} logical CPUs)",
        "ram": f"{ram:.1f} GiB" if ram is not None else "unknown",
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "pandas": pd.__version__,
    }


def machine_line() -> str:
    m = machine()
    return (
        f"{m['cpu']}, {m['cores']}, {m['ram']} RAM; {m['os']}; Python {m['python']}, "
        f"numpy {m['numpy']}, numba {m['numba']}, pandas {m['pandas']}"
    )


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# ---------------------------------------------------------------------------------------------
# Data

EIA_COLUMNS = [
    "UTILITYID", "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE",
    "INDSALES", "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES",
]  # attributes 1 and 6..15, as in Thaeter & Reischuk's (2021) appendix and Thaeter & Reischuk (2018), section 5
ADULT_COLUMNS = ["age", "education-num", "hours-per-week"]  # Thaeter & Reischuk (2021), appendix


def _read(name: str, columns: list[str] | None = None) -> np.ndarray:
    path = data_dir() / name
    if not path.exists():
        raise SystemExit(
            f"benchmark file {path} not found; set INCROWD_DATA to the folder holding it"
        )
    frame = pd.read_csv(path)
    if columns is not None:
        frame = frame[columns]
    return np.ascontiguousarray(frame.to_numpy(dtype=np.float64))


def load_census() -> np.ndarray:
    """1080 x 13, all columns."""
    return _read("census.csv")


def load_tarragona() -> np.ndarray:
    """834 x 13, all columns."""
    return _read("tarragona.csv")


def load_eia() -> np.ndarray:
    """4092 x 11: attributes 1 and 6..15."""
    return _read("eia.csv", EIA_COLUMNS)


def load_cloud1() -> np.ndarray:
    """1024 x 10, all columns."""
    return _read("cloud1.csv")


def load_cloud2() -> np.ndarray:
    """1024 x 10, all columns."""
    return _read("cloud2.csv")


def load_adult() -> np.ndarray:
    """48842 x 3: age, education-num, hours-per-week (adult.data then adult.test)."""
    return _read("adult.csv.gz", ADULT_COLUMNS)


def load_credit() -> np.ndarray:
    """30000 x 24: every attribute of the UCI credit card clients data but ID."""
    path = data_dir() / "credit_default.csv.gz"
    if not path.exists():
        raise SystemExit(f"benchmark file {path} not found; set INCROWD_DATA to its folder")
    frame = pd.read_csv(path).drop(columns="ID")
    return np.ascontiguousarray(frame.to_numpy(dtype=np.float64))


LOADERS: dict[str, Callable[[], np.ndarray]] = {
    "census": load_census,
    "tarragona": load_tarragona,
    "eia": load_eia,
    "cloud1": load_cloud1,
    "cloud2": load_cloud2,
    "adult": load_adult,
}

DISPLAY = {
    "census": "Census",
    "tarragona": "Tarragona",
    "eia": "EIA",
    "cloud1": "Cloud1",
    "cloud2": "Cloud2",
    "adult": "Adult",
}

DATA_NOTES = {
    "census": "census.csv, 1080 x 13 (all columns)",
    "tarragona": "tarragona.csv, 834 x 13 (all columns)",
    "eia": "eia.csv, 4092 x 11 (attributes 1 and 6..15: " + ", ".join(EIA_COLUMNS) + ")",
    "cloud1": "cloud1.csv, 1024 x 10 (all columns)",
    "cloud2": "cloud2.csv, 1024 x 10 (all columns)",
    "adult": "adult.csv.gz, 48842 x 3 (" + ", ".join(ADULT_COLUMNS) + ")",
}


def load(name: str) -> np.ndarray:
    return LOADERS[name]()


def gaussian(n: int, m: int = 15, seed: int = 0) -> np.ndarray:
    """n x m standard Gaussian rows from ``np.random.default_rng(seed)``."""
    return np.random.default_rng(seed).standard_normal((n, m))


# ---------------------------------------------------------------------------------------------
# Timing and comparison


def time_runs(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> tuple[list[float], object]:
    """Wall times of ``repeats`` calls after ``warmup`` untimed calls, and the last result."""
    result = None
    for _ in range(warmup):
        result = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def timed_kernel(fn: Callable, Z: np.ndarray, k: int, repeats: int = 3) -> tuple[float, object]:
    """Median wall time of ``fn(Z, k)`` over ``repeats`` calls after a warm-up on at most 500 rows
    (numba loading), and the last result."""
    fn(Z[: min(len(Z), 500)], k)
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn(Z, k)
        times.append(time.perf_counter() - t0)
    return median(times), out


# ---------------------------------------------------------------------------------------------
# Fresh processes: a child prints one JSON line last, the parent reads it back


def hand_back(result: object) -> None:
    """The child's side: print ``result`` as the last stdout line, as JSON."""
    print(json.dumps(result), flush=True)


def child_json(argv: list[str], *, timeout: float | None = None, env: dict | None = None,
               cwd: str | os.PathLike | None = None) -> dict:
    """Run ``argv`` in a fresh process; its last stdout line, read as JSON. Raises
    subprocess.CalledProcessError when it fails and subprocess.TimeoutExpired past ``timeout``
    (the child is killed)."""
    done = subprocess.run(list(map(str, argv)), capture_output=True, text=True, timeout=timeout, check=True,
                          env=env, cwd=cwd)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_child(script: str, *args: object, timeout: float | None = None, flag: str = "--one") -> dict:
    """Run ``python script --one *args`` in a fresh process; its last stdout line, read as JSON.
    Raises subprocess.TimeoutExpired past ``timeout`` (the child is killed)."""
    return child_json([sys.executable, script, flag, *args], timeout=timeout)


def run_code(code: str, *args: object, timeout: float | None = None, env: dict | None = None) -> dict:
    """Run ``python -c code *args`` in a fresh process; its last stdout line, read as JSON."""
    return child_json([sys.executable, "-c", code, *args], timeout=timeout, env=env)


class Burner:
    """A Python busy loop in its own process, keeping one core busy while the context is open."""

    pid = -1

    def __enter__(self):
        # The loop ends by itself if this process dies without killing it.
        self.proc = subprocess.Popen([sys.executable, "-c", f"import os\nwhile os.getppid() == {os.getpid()}: pass"])
        Burner.pid = self.proc.pid
        time.sleep(0.5)  # let it reach the run queue before the first timing
        return self

    def __exit__(self, *exc):
        alive = self.proc.poll() is None
        Burner.pid = -1
        self.proc.kill()
        self.proc.wait()
        if not alive:
            raise SystemExit("the CPU burner ended early; the contention figures are not valid")


def proc_status(field: str, pid: int | str = "self") -> int:
    """A size field of /proc/<pid>/status (VmRSS, VmHWM, ...) in bytes."""
    with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def git_state(where: str | os.PathLike = REPO, paths: tuple[str, ...] = ("src",)) -> dict:
    """Commit of the checkout at ``where`` and the uncommitted changes under ``paths``
    (``git status --short``); None and [] outside a git checkout."""
    def run(*args):
        try:
            done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=where)
        except OSError:
            return None
        return done.stdout.strip() if done.returncode == 0 else None
    return {"commit": run("rev-parse", "HEAD"), "modified": (run("status", "--short", *paths) or "").splitlines()}


def median(values: list[float]) -> float:
    return float(np.median(values))


def quantile(values: list[float], q: float) -> float:
    """The q-quantile (q in hundredths) of ``values``, linear between the samples."""
    import statistics

    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


# ---------------------------------------------------------------------------------------------
# Comparison with published values


def il_percent(Z: np.ndarray, labels: np.ndarray) -> float:
    """Information loss in % of ``labels`` on already standardized data ``Z``."""
    from incrowd.metrics import information_loss

    return 100.0 * information_loss(Z, labels, standardized=True)


def same_at(ours: float, published: float, decimals: int = 2) -> bool:
    """Our value printed to the published number of decimals is the published one."""
    return f"{ours:.{decimals}f}" == f"{published:.{decimals}f}"


def same2(ours: float, published: float) -> bool:
    return same_at(ours, published, 2)


def rel_gap(ours: float, published: float) -> float:
    """Relative gap of ours to the published value (0.01 = 1 % above it)."""
    return (ours - published) / published


def fmt_gap(gap: float) -> str:
    """A relative gap as a signed percentage; a gap that rounds to zero has no sign."""
    text = f"{100 * gap:+.2f} %"
    return "0.00 %" if text in ("+0.00 %", "-0.00 %") else text


def yes_no(ok: bool) -> str:
    return "yes" if ok else "**no**"


def pass_fail(ok: bool) -> str:
    return "pass" if ok else "**FAIL**"


def same_groups(a: np.ndarray, b: np.ndarray) -> bool:
    """True when two labelings define the same partition of the rows (ids may differ)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return False
    if np.array_equal(a, b):
        return True
    # Same partition iff the pairs (a_i, b_i) form a bijection between the two id sets.
    pairs = np.unique(np.stack([a, b]), axis=1)
    return len(np.unique(pairs[0])) == pairs.shape[1] == len(np.unique(pairs[1]))


def fmt_s(seconds: float) -> str:
    if seconds >= 100:
        return f"{seconds:.0f} s"
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 0.01:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds * 1000:.2f} ms"


def md_table(header: list[str], rows: list[list[object]], align: str | None = None) -> str:
    """A GitHub Markdown table; ``align`` is one char per column: l, r or c."""
    align = align or "l" * len(header)
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Markdown output


def write_markdown(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` atomically: a temporary file in the same folder, then ``os.replace``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(target, text if text.endswith("\n") else text + "\n")


@contextmanager
def _locked(path: Path):
    """An exclusive lock on the folder of ``path`` (flock on the directory itself, so no lock
    file is left behind), so concurrent scripts do not lose each other's sections."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def update_section(path: str | os.PathLike, name: str, body: str, title: str) -> Path:
    """Replace the section ``name`` of a Markdown file, leaving every other section alone.

    The section is everything between ``<!-- BEGIN name -->`` and ``<!-- END name -->``. A file
    that does not exist yet is created with ``# title``; a section that is not in the file yet
    is appended at the end.
    """
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"section name must be [A-Za-z0-9_.-]+; got {name!r}")
    target = Path(path)
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    block = f"{begin}\n{body.strip()}\n{end}"
    with _locked(target):
        text = target.read_text(encoding="utf-8") if target.exists() else f"# {title}\n"
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
        if pattern.search(text):
            text = pattern.sub(lambda _m: block, text, count=1)
        else:
            text = text.rstrip("\n") + "\n\n" + block + "\n"
        write_markdown(target, text)
    return target


# ---------------------------------------------------------------------------------------------
# Figures and saved results


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | os.PathLike, **savefig) -> Path:
    """Save ``fig`` as PNG atomically (a temporary file in the same folder, then os.replace),
    then close it."""
    import matplotlib.pyplot as plt

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(target) as tmp:
        fig.savefig(tmp, format="png", **savefig)
    plt.close(fig)
    return target


def save_json(path: str | os.PathLike, data: object, indent: int | None = 1) -> Path:
    """Raw results, so a page can be redrawn without measuring again."""
    return write_markdown(path, json.dumps(data, indent=indent))


def load_json(path: str | os.PathLike) -> object:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def reference_module():
    """tests/reference.py (the plain numpy MDAV), importable without making tests a package."""
    tests = str(REPO / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import reference  # noqa: E402

    return reference
