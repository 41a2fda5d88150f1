"""Outputs are written safely: never over an input, only over regular files, nothing left behind
on any failure (full disk, signals, kill -9), errors name the user's path, ``-o -`` is stdout."""

from __future__ import annotations

import errno
import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import incrowd
from incrowd import DataError, IncrowdError, write_table
from incrowd.cli import app
from incrowd.generalization import Lattice
from incrowd.incremental import IncrementalMicroaggregation
from incrowd.io import _csv_text

GEN = ["--qi", "a,b", "--intervals", "a=10,20", "--intervals", "b=3"]
CLI = [sys.executable, "-m", "incrowd.cli"]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def table(n: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.integers(0, 50, n), "b": rng.integers(0, 9, n),
                         "z": [f"r{i}" for i in range(n)]})


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "in.csv"
    table().to_csv(path, index=False)
    return path


@pytest.fixture
def state(tmp_path) -> Path:
    path = tmp_path / "state.duckdb"
    IncrementalMicroaggregation.from_base(table(), path, 3, quasi_identifiers=["a", "b"])
    return path


def hidden(folder: Path) -> list[str]:
    """Names a writer may have left behind (temporaries are hidden files)."""
    return sorted(n for n in os.listdir(folder) if n.startswith("."))


def one_error(result, *needles: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert ".tmp" not in lines[0]
    return lines[0]


def same_as(path: Path, form: str) -> str:
    """``path`` spelt as itself, through a symbolic or hard link, or through ``..``."""
    if form == "same":
        return str(path)
    if form == "link":
        link = path.parent / f"link-{path.name}"
        link.symlink_to(path.name)
        return str(link)
    if form == "hardlink":
        link = path.parent / f"hard-{path.name}"
        os.link(path, link)
        return str(link)
    sub = path.parent / "sub"
    sub.mkdir(exist_ok=True)
    return str(sub / ".." / path.name)


# ---------------------------------------------------------------------------------------------
# An output that is one of the inputs is refused


FORMS = ["same", "link", "hardlink", "dotdot"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("command", ["microaggregate", "generalize", "lattice", "base"])
def test_cli_output_equal_to_input_is_refused(runner, data, form, command):
    before = data.read_bytes()
    out = same_as(data, form)
    args = {
        "microaggregate": ["microaggregate", str(data), "-o", out, "--k", "3", "--qi", "a,b"],
        "generalize": ["generalize", str(data), "-o", out, "--levels", "a=1,b=1", "--k", "2", *GEN],
        "lattice": ["lattice", "build", str(data), "-o", out, *GEN],
        "base": ["incremental", "base", str(data), "-o", out, "--k", "3", "--qi", "a,b", "--force"],
    }[command]
    one_error(runner.invoke(app, args), "is the input", out)
    assert data.read_bytes() == before
    assert hidden(data.parent) == []


@pytest.mark.parametrize("form", FORMS)
def test_cli_publish_over_the_state_file_is_refused(runner, state, form):
    before = state.read_bytes()
    out = same_as(state, form)
    one_error(runner.invoke(app, ["incremental", "publish", str(state), "-o", out]), "is the input")
    assert state.read_bytes() == before
    IncrementalMicroaggregation.open(state)  # still a state file


def test_cli_increment_that_is_the_state_file_is_refused(runner, state):
    before = state.read_bytes()
    link = same_as(state, "link")
    one_error(runner.invoke(app, ["incremental", "add", str(state), link, "--strategy", "nn"]),
              "is the state file")
    assert state.read_bytes() == before


def test_cli_output_inside_the_hierarchies_folder_is_refused(runner, data, tmp_path):
    folder = tmp_path / "hier"
    folder.mkdir()
    (folder / "b.csv").write_text("".join(f"{v};{'low' if v < 5 else 'high'};*\n" for v in range(9)))
    args = ["generalize", str(data), "-o", str(folder / "out.csv"), "--levels", "a=1,b=1",
            "--k", "2", "--qi", "a,b", "--intervals", "a=10,20", "--hierarchies", str(folder)]
    one_error(runner.invoke(app, args), "inside the input folder")
    assert sorted(os.listdir(folder)) == ["b.csv"]


def test_api_publish_to_the_state_file_is_refused(state):
    before = state.read_bytes()
    session = IncrementalMicroaggregation.open(state)
    with pytest.raises(DataError, match="is the input"):
        session.publish(same_as(state, "dotdot"))
    assert state.read_bytes() == before


def test_api_lattice_save_over_its_source_is_refused(data):
    before = data.read_bytes()
    lattice = Lattice.build(pd.read_csv(data), ["a", "b"], intervals={"a": [10, 20], "b": [3]},
                            source=str(data))
    with pytest.raises(DataError, match="is the input"):
        lattice.save(same_as(data, "link"))
    assert data.read_bytes() == before


def test_api_dataset_output_inside_its_input_is_refused(tmp_path):
    from incrowd.distributed import microaggregate_dataset

    folder = tmp_path / "dataset"
    folder.mkdir()
    table().to_parquet(folder / "part-0.parquet")
    with pytest.raises(DataError, match="inside the input"):
        microaggregate_dataset(folder, folder / "out", 3, "mona", client=None)
    assert os.listdir(folder) == ["part-0.parquet"]


# ---------------------------------------------------------------------------------------------
# Only regular files are replaced


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    # a private twin of /dev/null: if a bug replaced it, the real one is untouched
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root")


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()


def _loop(path: Path) -> None:
    other = path.parent / "other"
    path.symlink_to(other.name)
    other.symlink_to(path.name)


def _dangling(path: Path) -> None:
    path.symlink_to("missing.csv")


KINDS = {
    "fifo": (_fifo, "FIFO"),
    "device": (_device, "character device"),
    "socket": (_socket, "socket"),
    "loop": (_loop, "link loop"),
    "dangling": (_dangling, "missing file"),
}


def _lstat_mode(path: Path) -> int:
    return os.lstat(path).st_mode


@pytest.mark.parametrize("kind", list(KINDS))
def test_cli_non_regular_output_is_refused(runner, data, tmp_path, kind):
    make, words = KINDS[kind]
    out = tmp_path / "out.csv"
    make(out)
    mode = _lstat_mode(out)
    one_error(runner.invoke(app, ["microaggregate", str(data), "-o", str(out), "--k", "3", "--qi", "a,b"]),
              words, str(out))
    assert _lstat_mode(out) == mode  # same kind, not replaced
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("kind", list(KINDS))
def test_api_non_regular_output_is_refused(tmp_path, kind):
    make, words = KINDS[kind]
    out = tmp_path / "out.csv"
    make(out)
    mode = _lstat_mode(out)
    with pytest.raises(DataError, match=words):
        write_table(table(), out)
    assert _lstat_mode(out) == mode
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("save", ["state", "lattice"])
def test_api_duckdb_file_is_never_written_over_a_fifo(tmp_path, save):
    out = tmp_path / "file.duckdb"
    os.mkfifo(out)
    with pytest.raises(DataError, match="FIFO"):
        if save == "state":
            IncrementalMicroaggregation.from_base(table(), out, 3, quasi_identifiers=["a", "b"],
                                                  overwrite=True)
        else:
            Lattice.build(table(), ["a", "b"], intervals={"a": [10, 20], "b": [3]}).save(out)
    assert stat.S_ISFIFO(_lstat_mode(out))
    assert hidden(tmp_path) == []


def test_cli_link_to_a_regular_file_is_followed_and_its_target_replaced(runner, data, tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "out.csv"
    link.symlink_to(real.name)
    result = runner.invoke(app, ["microaggregate", str(data), "-o", str(link), "--k", "3", "--qi", "a,b"])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == real.name
    assert len(pd.read_csv(real)) == 30
    assert hidden(tmp_path) == []


def test_cli_linked_state_file_stays_linked(runner, state, tmp_path):
    link = tmp_path / "current.duckdb"
    link.symlink_to(state.name)
    table(10, seed=1).to_csv(tmp_path / "new.csv", index=False)
    result = runner.invoke(app, ["incremental", "add", str(link), str(tmp_path / "new.csv"), "--strategy", "nn"])
    assert result.exit_code == 0, result.output
    assert link.is_symlink()
    assert IncrementalMicroaggregation.open(state).n_rows == 40


def test_api_target_that_changes_kind_during_the_write_is_not_replaced(tmp_path, monkeypatch):
    out = tmp_path / "out.csv"
    real_write = _csv_text.write

    def write_then_swap(frame, path, **kwargs):
        real_write(frame, path, **kwargs)
        os.mkfifo(out)  # something else takes the name meanwhile

    monkeypatch.setattr(_csv_text, "write", write_then_swap)
    with pytest.raises(DataError, match="FIFO"):
        write_table(table(), out)
    assert stat.S_ISFIFO(_lstat_mode(out))
    assert hidden(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# Failures leave nothing behind and name the user's path


@pytest.fixture
def full_disk(tmp_path):
    """A 48 KiB tmpfs (root only); skipped where it cannot be mounted."""
    folder = tmp_path / "full"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", str(folder)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.mark.parametrize("command", ["microaggregate", "base", "lattice"])
def test_cli_full_disk_leaves_nothing_and_names_the_path(runner, tmp_path, full_disk, command):
    big = tmp_path / "big.csv"
    table(6000).to_csv(big, index=False)
    if command == "microaggregate":
        out = full_disk / "out.csv"
        args = ["microaggregate", str(big), "-o", str(out), "--k", "3", "--qi", "a,b"]
    elif command == "base":
        out = full_disk / "state.duckdb"
        args = ["incremental", "base", str(big), "-o", str(out), "--k", "3", "--qi", "a,b"]
    else:
        out = full_disk / "lattice.duckdb"
        args = ["lattice", "build", str(big), "-o", str(out), *GEN]
    one_error(runner.invoke(app, args), str(out), "No space left on device")
    assert os.listdir(full_disk) == []


def test_api_full_disk_is_an_output_write_error_naming_the_path(tmp_path, monkeypatch):
    def no_space(frame, path, **kwargs):
        Path(path).write_text("partial")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(_csv_text, "write", no_space)
    out = tmp_path / "out.csv"
    with pytest.raises(incrowd.OutputWriteError) as info:
        write_table(table(), out)
    assert isinstance(info.value, OSError) and isinstance(info.value, DataError)
    assert info.value.errno == errno.ENOSPC
    assert str(info.value) == f"cannot write {str(out)!r}: No space left on device"
    assert os.listdir(tmp_path) == []


def test_duckdb_failure_hides_the_temporary_and_removes_its_log(tmp_path, monkeypatch):
    import duckdb

    real_connect = duckdb.connect

    def connect_then_fail(path, *args, **kwargs):
        con = real_connect(path, *args, **kwargs)
        con.execute("CREATE TABLE t (x INTEGER)")
        con.close()
        Path(str(path) + ".wal").write_bytes(b"log")
        raise duckdb.IOException(f'Could not write file "{path}": No space left on device')

    monkeypatch.setattr(duckdb, "connect", connect_then_fail)
    out = tmp_path / "state.duckdb"
    with pytest.raises(IncrowdError) as info:
        IncrementalMicroaggregation.from_base(table(), out, 3, quasi_identifiers=["a", "b"])
    assert ".tmp" not in str(info.value) and str(out) in str(info.value)
    assert "No space left on device" in str(info.value)
    assert os.listdir(tmp_path) == []


def test_no_permission_for_the_temporary_names_the_path(runner, data, tmp_path, monkeypatch):
    from incrowd.io import _atomic

    def refuse(tmp):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp))

    monkeypatch.setattr(_atomic, "_create", refuse)
    out = tmp_path / "out.csv"
    one_error(runner.invoke(app, ["microaggregate", str(data), "-o", str(out), "--k", "3", "--qi", "a,b"]),
              f"cannot write {str(out)!r}: Permission denied")
    assert not out.exists() and hidden(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# Signals and kill -9 (real processes)

SLOW_CSV = r"""
import sys, time
import incrowd.io._csv_text as c
real = c.write
def slow(frame, path, **kwargs):
    out = real(frame, path, **kwargs)
    if isinstance(path, str) and path.endswith(".tmp"):
        sys.stderr.write("WRITING\n"); sys.stderr.flush()
        time.sleep(120)
    return out
c.write = slow
from incrowd.cli import main
sys.argv = ["incrowd", *sys.argv[1:]]
main()
"""

SLOW_DUCKDB = r"""
import json, sys, time
import incrowd.io._duckdb_file as f
class SlowJson:
    loads = staticmethod(json.loads)
    calls = 0
    def dumps(self, value):
        SlowJson.calls += 1
        if SlowJson.calls == 3:  # the meta table exists: DuckDB has its file and its log
            sys.stderr.write("WRITING\n"); sys.stderr.flush()
            time.sleep(120)
        return json.dumps(value)
f.json = SlowJson()
from incrowd.cli import main
sys.argv = ["incrowd", *sys.argv[1:]]
main()
"""


def start_slow(script: str, args: list[str]) -> subprocess.Popen:
    # a test run started in the background by a non-interactive shell inherits SIGINT ignored,
    # and Python then installs no KeyboardInterrupt handler: give the child the default back
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    line = proc.stderr.readline()  # blocks until the write is under way (or the process ended)
    if "WRITING" not in line:
        proc.kill()
        pytest.fail(f"the slow writer did not start: {line}{proc.stderr.read()}")
    return proc


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_a_csv_write_removes_the_temporary(data, tmp_path, signum):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    proc = start_slow(SLOW_CSV, ["microaggregate", str(data), "-o", str(out), "--k", "3", "--qi", "a,b"])
    assert any(n.startswith(".out.csv.") for n in hidden(tmp_path))
    proc.send_signal(signum)
    proc.wait(timeout=60)
    assert proc.returncode != 0
    assert out.read_text() == "old\n"
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_a_state_write_removes_the_temporary_and_its_log(state, tmp_path, signum):
    before = state.read_bytes()
    table(10, seed=1).to_csv(tmp_path / "new.csv", index=False)
    proc = start_slow(SLOW_DUCKDB, ["incremental", "add", str(state), str(tmp_path / "new.csv"),
                                    "--strategy", "nn"])
    assert any(n.endswith(".tmp.wal") for n in hidden(tmp_path))  # DuckDB's log exists now
    proc.send_signal(signum)
    proc.wait(timeout=60)
    assert proc.returncode != 0
    assert state.read_bytes() == before
    assert [n for n in hidden(tmp_path) if ".tmp" in n] == []


def test_kill_9_keeps_the_old_file_and_a_later_write_sweeps_the_temporary(data, tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    proc = start_slow(SLOW_CSV, ["microaggregate", str(data), "-o", str(out), "--k", "3", "--qi", "a,b"])
    proc.kill()
    proc.wait(timeout=60)
    assert out.read_text() == "old\n"
    left = hidden(tmp_path)
    assert len(left) == 1 and str(proc.pid) in left[0]
    write_table(table(), out)
    assert hidden(tmp_path) == []
    assert len(pd.read_csv(out)) == 30


def test_kill_9_during_a_state_write_keeps_the_state_and_the_next_add_sweeps(state, tmp_path):
    before = state.read_bytes()
    new = tmp_path / "new.csv"
    table(10, seed=1).to_csv(new, index=False)
    proc = start_slow(SLOW_DUCKDB, ["incremental", "add", str(state), str(new), "--strategy", "nn"])
    proc.kill()
    proc.wait(timeout=60)
    assert state.read_bytes() == before
    assert len(hidden(tmp_path)) == 2  # the database and its log
    IncrementalMicroaggregation.open(state).add(pd.read_csv(new), "nn")
    assert hidden(tmp_path) == []
    assert IncrementalMicroaggregation.open(state).n_rows == 40


def test_stale_sweep_keeps_live_processes_and_foreign_files(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(timeout=60)
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = [f".out.csv.{dead.pid}.0123abcd.tmp", f".out.csv.{dead.pid}.0123abcd.tmp.wal",
                 f".out.csv.{alive.pid}.89abcdef.tmp", ".out.csv.backup", ".out.csv.tmp",
                 f".other.csv.{dead.pid}.0123abcd.tmp", f"out.csv.{dead.pid}.0123abcd.tmp"]
        for name in names:
            (tmp_path / name).write_text("x")
        write_table(table(), tmp_path / "out.csv")
        assert sorted(os.listdir(tmp_path)) == sorted(names[2:] + ["out.csv"])
    finally:
        alive.kill()
        alive.wait(timeout=60)


# ---------------------------------------------------------------------------------------------
# -o - writes CSV to stdout


@pytest.mark.parametrize("command", ["microaggregate", "generalize", "publish"])
def test_cli_dash_writes_csv_to_stdout_and_the_report_to_stderr(runner, data, state, tmp_path, command,
                                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = {
        "microaggregate": ["microaggregate", str(data), "-o", "-", "--k", "3", "--qi", "a,b"],
        "generalize": ["generalize", str(data), "-o", "-", "--levels", "a=1,b=1", "--k", "2", *GEN],
        "publish": ["incremental", "publish", str(state), "-o", "-"],
    }[command]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    from io import StringIO

    out = pd.read_csv(StringIO(result.stdout))
    assert list(out.columns) == ["a", "b", "z"] and len(out) >= 2
    assert "standard output" in result.stderr and "error" not in result.stderr
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("command", ["lattice", "base"])
def test_cli_dash_is_refused_for_duckdb_files(runner, data, tmp_path, command, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = (["lattice", "build", str(data), "-o", "-", *GEN] if command == "lattice"
            else ["incremental", "base", str(data), "-o", "-", "--k", "3", "--qi", "a,b"])
    one_error(runner.invoke(app, args), "standard output")
    assert not (tmp_path / "-").exists()


def test_api_write_table_dash_is_stdout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_table(table(3), "-")
    assert capsys.readouterr().out.splitlines() == ["a,b,z", *[
        ",".join(map(str, row)) for row in table(3).itertuples(index=False)]]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_reader_leaving_early_gives_at_most_one_line(tmp_path, unbuffered):
    big = tmp_path / "big.csv"
    table(40000).to_csv(big, index=False)
    proc = subprocess.Popen(CLI + ["generalize", str(big), "-o", "-", "--levels", "a=0,b=0", "--k", "2", *GEN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": unbuffered})
    assert proc.stdout.readline().strip() == "a,b,z"
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "Exception ignored" not in err
    assert len(err.strip().splitlines()) <= 1


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_dash_writes_every_row_of_a_table_larger_than_a_pipe(tmp_path, unbuffered):
    big = tmp_path / "big.csv"
    table(40000).to_csv(big, index=False)
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    done = subprocess.run(CLI + ["generalize", str(big), "-o", "-", "--levels", "a=0,b=0", "--k", "2", *GEN],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == big.read_bytes()

# seconds in all: the full suite (make test) runs them, the quick tier leaves them out
pytestmark = pytest.mark.slow
