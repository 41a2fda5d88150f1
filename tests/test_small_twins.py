"""The plain numpy twins used for small inputs in a fresh process compute exactly what the
kernels compute: same figures, bit for bit. (MDAV's scan and the group sums have no twin: they
are the compiled extension's, tested in test_native.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from typer.testing import CliRunner

import incrowd
from incrowd._runtime import small as _small
from incrowd._runtime import _process
from incrowd.cli import app
from incrowd.microaggregation._measures import _squared_deviations
from incrowd._native import group_sums

# small integer grids give many exact ties, where tie-breaking must agree
_values = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e6, 1e6, allow_nan=False))


@st.composite
def _data(draw):
    n = draw(st.integers(1, 60))
    m = draw(st.integers(1, 5))
    X = draw(arrays(np.float64, (n, m), elements=_values))
    k = draw(st.integers(2, 7))
    return X, k


@settings(max_examples=200, deadline=None)
@given(_data(), st.integers(1, 6))
def test_squared_deviations_twin_equals_kernel(case, g):
    X, _ = case
    rng = np.random.default_rng(X.shape[0])
    labels = rng.integers(0, g, X.shape[0]).astype(np.int64)
    sums = group_sums(X, labels, g)
    centers = np.where(np.isfinite(sums), sums, 0.0) / max(X.shape[0], 1)
    twin = _small.squared_deviations(X, labels, centers)
    kernel = _squared_deviations(X, labels, centers)
    assert twin == kernel or (np.isnan(twin) and np.isnan(kernel))


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


def test_library_calls_keep_the_kernels():
    """Outside the program (a notebook, the web server, a benchmark) small inputs still run on
    the kernels: their start-up is paid once there, and numpy would be slower every call."""
    assert _process.program is False
    assert not _small.prefer_numpy(100, 3)
