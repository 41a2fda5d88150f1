"""One writer at a time on an incremental state file, checked with real processes.

Every writer (CLI base/add, API from_base/add) holds ``<state>.lock`` over its whole
read-modify-write; concurrent writers either wait (--wait) and all their increments are kept,
or are refused with one error line naming the holder, exit status 2, nothing written.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incrowd import StateLockedError
from incrowd.incremental import IncrementalMicroaggregation

pytestmark = pytest.mark.slow  # seconds a test: in make test, not in make test-fast

EXE = [sys.executable, "-m", "incrowd.cli", "incremental"]
TIMEOUT = 300


def rows(n: int, tag: str, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": rng.normal(size=n).round(3),
        "b": rng.integers(0, 50, n),
        "tag": [f"{tag}-{i}" for i in range(n)],  # every row distinct, so each is traceable
    })


def make_base(folder: Path, n: int = 40) -> Path:
    state = folder / "s.duckdb"
    IncrementalMicroaggregation.from_base(rows(n, "base", 0), state, 3, quasi_identifiers=["a", "b"])
    return state


def tags_in(state: Path) -> list[str]:
    release, _ = IncrementalMicroaggregation.open(state).release()
    return sorted(release["tag"])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_increments(folder: Path, sizes: list[int]) -> list[tuple[Path, list[str]]]:
    out = []
    for i, n in enumerate(sizes):
        frame = rows(n, f"inc{i}", 100 + i)
        path = folder / f"inc{i}.csv"
        frame.to_csv(path, index=False)
        out.append((path, list(frame["tag"])))
    return out


def cli_add(state: Path, csv: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(EXE + ["add", str(state), str(csv), "--strategy", "nn", "--quiet", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


API_ADD = textwrap.dedent("""
    import sys, time
    import pandas as pd
    from incrowd.incremental import IncrementalMicroaggregation
    state, csv, go, delay = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    session = IncrementalMicroaggregation.open(state)  # opened before the others write
    data = pd.read_csv(csv)
    while not __import__("os").path.exists(go):
        time.sleep(0.01)
    time.sleep(delay)
    session.add(data, "nn", wait=300)
""")


def api_add(state: Path, csv: Path, go: Path, delay: float = 0.0) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", API_ADD, str(state), str(csv), str(go), str(delay)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(procs: list[subprocess.Popen]) -> list[tuple[int, str]]:
    out = []
    for proc in procs:
        _, err = proc.communicate(timeout=TIMEOUT)
        out.append((proc.returncode, err))
    return out


HOLDER = textwrap.dedent("""
    import sys, time
    from incrowd.incremental._lock import describe_as, state_lock
    with describe_as("lock-holder-test"), state_lock(sys.argv[1], wait=60):
        print("held", flush=True)
        time.sleep(600)
""")


@pytest.fixture
def holder():
    procs = []

    def start(state: Path) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(state)], stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in procs:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)


def test_four_concurrent_cli_adds_keep_all_four(tmp_path):
    state = make_base(tmp_path)
    incs = write_increments(tmp_path, [5, 6, 7, 8])
    results = finish([cli_add(state, csv, "--wait", "300") for csv, _ in incs])
    assert [rc for rc, _ in results] == [0, 0, 0, 0], results
    expected = sorted([f"base-{i}" for i in range(40)] + [t for _, tags in incs for t in tags])
    assert tags_in(state) == expected  # each increment exactly once: 40 + 26 rows
    assert len(IncrementalMicroaggregation.open(state).batches) == 5


def test_four_concurrent_api_adds_keep_all_four(tmp_path):
    state = make_base(tmp_path)
    incs = write_increments(tmp_path, [4, 5, 6, 7])
    go = tmp_path / "go"
    procs = [api_add(state, csv, go) for csv, _ in incs]
    time.sleep(0.5)
    go.touch()
    results = finish(procs)
    assert [rc for rc, _ in results] == [0, 0, 0, 0], results
    expected = sorted([f"base-{i}" for i in range(40)] + [t for _, tags in incs for t in tags])
    assert tags_in(state) == expected


def test_adds_without_waiting_are_kept_or_refused_with_one_line(tmp_path):
    state = make_base(tmp_path)
    incs = write_increments(tmp_path, [5, 5, 5, 5])
    results = finish([cli_add(state, csv, "--wait", "0") for csv, _ in incs])
    kept = [tags for (rc, _), (_, tags) in zip(results, incs) if rc == 0]
    for rc, err in results:
        assert rc in (0, 2), err
        if rc == 2:
            lines = [ln for ln in err.splitlines() if ln.strip()]
            assert len(lines) == 1 and lines[0].startswith("error: ") and "is being written by" in lines[0], err
            assert "Traceback" not in err
    assert kept, results  # the first writer always gets the lock
    expected = sorted([f"base-{i}" for i in range(40)] + [t for tags in kept for t in tags])
    assert tags_in(state) == expected


def test_refused_writer_names_the_holder_and_writes_nothing(tmp_path, holder):
    state = make_base(tmp_path)
    (csv, _), = write_increments(tmp_path, [5])
    before = digest(state)
    proc = holder(state)
    done = subprocess.run(EXE + ["add", str(state), str(csv), "--wait", "0.5"], capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert done.returncode == 2, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: state file {str(state)!r} is being written by pid {proc.pid} "
                               "(lock-holder-test, since "), lines[0]
    assert lines[0].endswith("try again or pass --wait")
    with pytest.raises(StateLockedError, match=f"pid {proc.pid}"):
        IncrementalMicroaggregation.open(state).add(pd.read_csv(csv), "nn", wait=0)
    assert digest(state) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["s.duckdb", "s.duckdb.lock", "inc0.csv"])


def test_base_force_takes_the_lock_too(tmp_path, holder):
    state = make_base(tmp_path)
    rows(30, "other", 9).to_csv(tmp_path / "other.csv", index=False)
    before = digest(state)
    holder(state)
    done = subprocess.run(EXE + ["base", str(tmp_path / "other.csv"), "-o", str(state), "--k", "3",
                                 "--qi", "a,b", "--force", "--wait", "0"],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 2 and "is being written by pid" in done.stderr, done.stderr
    with pytest.raises(StateLockedError, match="is being written by"):
        IncrementalMicroaggregation.from_base(rows(30, "other", 9), state, 3,
                                              quasi_identifiers=["a", "b"], overwrite=True, wait=0)
    assert digest(state) == before


def test_a_session_opened_before_another_add_keeps_that_add(tmp_path):
    state = make_base(tmp_path)
    (first, first_tags), (second, second_tags) = write_increments(tmp_path, [5, 6])
    session = IncrementalMicroaggregation.open(state)
    done = subprocess.run(EXE + ["add", str(state), str(first), "--strategy", "nn", "--quiet"],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    session.add(pd.read_csv(second), "nn")
    assert session.n_rows == 40 + 5 + 6
    assert tags_in(state) == sorted([f"base-{i}" for i in range(40)] + first_tags + second_tags)
    assert [b["batch"] for b in session.batches] == [0, 1, 2]


def test_lock_leaves_nothing_behind(tmp_path):
    state = make_base(tmp_path)
    IncrementalMicroaggregation.open(state).add(rows(4, "x", 3), "nn")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.duckdb"]


@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(schedule=st.lists(st.tuples(st.integers(1, 8), st.floats(0.0, 0.4), st.booleans()),
                         min_size=2, max_size=3))
def test_random_concurrent_add_schedules_keep_every_increment_once(tmp_path_factory, schedule):
    folder = tmp_path_factory.mktemp("schedule")
    state = make_base(folder, 30)
    incs = write_increments(folder, [n for n, _, _ in schedule])
    go = folder / "go"
    procs = []
    for (csv, _), (_, delay, via_cli) in zip(incs, schedule):
        if via_cli:
            script = f"import time, sys; time.sleep({delay}); from incrowd.cli import main; main()"
            procs.append(subprocess.Popen(
                [sys.executable, "-c", script, "incremental", "add", str(state), str(csv), "--strategy",
                 "nn", "--quiet", "--wait", "300"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        else:
            procs.append(api_add(state, csv, go, delay))
    go.touch()
    results = finish(procs)
    assert all(rc == 0 for rc, _ in results), results
    expected = sorted([f"base-{i}" for i in range(30)] + [t for _, tags in incs for t in tags])
    assert tags_in(state) == expected
    assert len(IncrementalMicroaggregation.open(state).batches) == 1 + len(schedule)
