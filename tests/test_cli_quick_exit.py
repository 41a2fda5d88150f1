"""The ``incrowd`` program ends without tearing numba down, and loses nothing by it: outputs,
piped tables, reports, exit codes and exit handlers are as with a normal exit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import incrowd

CENSUS = Path(incrowd.__file__).parent / "datasets" / "census.csv"
EXE = [sys.executable, "-m", "incrowd.cli"]


def _run(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*EXE, *args], capture_output=True, text=True, timeout=600, **kwargs)


def test_a_file_output_and_its_report_are_complete(tmp_path):
    out = tmp_path / "o.csv"
    done = _run("microaggregate", str(CENSUS), "--k", "5", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "k-anonymous" in done.stdout and str(out) in done.stdout
    assert len(out.read_text().splitlines()) == 1081


def test_a_table_on_stdout_is_complete_and_the_report_goes_to_stderr():
    done = _run("microaggregate", str(CENSUS), "--k", "5", "-o", "-")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1081 and "k-anonymous" in done.stderr


def test_errors_keep_their_exit_status_and_line():
    done = _run("microaggregate", str(CENSUS), "--k", "1", "-o", "-")
    assert done.returncode == 2 and done.stderr.startswith("error: ") and done.stdout == ""


def test_exit_handlers_still_run(tmp_path):
    marker = tmp_path / "ran"
    code = (
        "import atexit, sys; from pathlib import Path\n"
        f"atexit.register(Path({str(marker)!r}).write_text, 'yes')\n"
        f"sys.argv = ['incrowd', 'microaggregate', {str(CENSUS)!r}, '--k', '5', '-o', {str(tmp_path / 'o.csv')!r}]\n"
        "from incrowd.cli import run\nrun()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "yes"
