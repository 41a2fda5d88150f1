"""The plain numpy twins used for small inputs in a fresh process compute exactly what the
kernels compute: same figures, bit for bit. (MDAV's scan, the group sums and the sum of squared
deviations have no twin: they are the compiled extension's, tested in test_native.py and
test_native_sensitive.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

import incrowd
from incrowd.cli import app


def test_small_file_in_the_program_skips_numba_and_writes_the_same_release(tmp_path):
    """The point of the twins: the ``incrowd`` program never loads numba's runtime for a small
    MDAV, and writes byte for byte the release (and the figures) the kernels give."""
    census = Path(incrowd.__file__).parent / "datasets" / "census.csv"
    args = ["microaggregate", str(census), "--k", "3", "--method", "mdav", "--json", "--quiet"]
    code = (
        "import json, sys\n"
        "from incrowd._runtime import _process\n"
        "from incrowd.cli import main\n"
        "_process.program = True\n"
        f"sys.argv = ['incrowd', *{args!r}, '-o', {str(tmp_path / 'twin.csv')!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps({'loaded': 'numba.np.npyimpl' in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert json.loads(lines[-1]) == {"loaded": False}
    twin_report = json.loads("\n".join(lines[:-1]))
    done = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "kernel.csv")])
    assert done.exit_code == 0, done.output
    kernel_report = json.loads(done.stdout)
    assert (tmp_path / "twin.csv").read_bytes() == (tmp_path / "kernel.csv").read_bytes()
    assert twin_report["information_loss"] == kernel_report["information_loss"]
    assert twin_report["compile_seconds"] == 0.0

