"""The ``incrowd`` program ends without tearing numba or pandas down, and loses nothing by it: outputs,
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


def test_a_publish_of_a_table_ends_without_tearing_pandas_down(tmp_path):
    """A one-shot ``publish`` (which loads pandas and pyarrow, not numba) skips the interpreter's
    teardown, as a command that ran numba does: an object the teardown would free is never
    freed, while the exit handlers run and the release and its summary are complete."""
    data = tmp_path / "d.csv"
    data.write_text("age,sex,income\n" + "".join(f"{20 + i % 7},{'MF'[i % 2]},{i}\n" for i in range(60)),
                    encoding="utf-8")
    spec = tmp_path / "s.toml"
    spec.write_text('[privacy]\nk = 3\n\n[columns]\nage = "numeric"\nsex = "categorical"\n', encoding="utf-8")
    marker = tmp_path / "ran"
    code = (
        "import atexit, sys; from pathlib import Path\n"
        "class Freed:\n"
        "    def __del__(self):\n"
        "        sys.stderr.write('torn down\\n')\n"
        "held = type(sys)('held'); held.value = Freed(); sys.modules['held'] = held\n"
        f"atexit.register(Path({str(marker)!r}).write_text, 'yes')\n"
        f"sys.argv = ['incrowd', 'publish', {str(data)!r}, '--spec', {str(spec)!r}, '-o', "
        f"{str(tmp_path / 'r.csv')!r}, '--json']\n"
        "from incrowd.cli import run\nrun()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # never torn down
    assert marker.read_text() == "yes"
    assert '"k": 3' in done.stdout and len((tmp_path / "r.csv").read_text().splitlines()) == 61
