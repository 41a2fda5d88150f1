"""A read-only install still runs, caches its compiled kernels in the user's cache folder, and
says so; with no writable folder at all it compiles once per process and says that.

Tests run as root here, and root writes through any mode bits, so the child process gives up
the two capabilities that let it (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) before it starts: the
package's mode bits then bind it as they bind an ordinary user. Where that is impossible (not
Linux, or not allowed) the test checks that a write into the read-only copy really fails, and
skips otherwise.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import incrowd

pytestmark = pytest.mark.slow  # seconds a test: in make test, not in make test-fast

NOTICE_ONCE = "compiling kernels for this machine, once"
NOTICE_EACH = "every process compiles again"
TIMEOUT = 300
_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 1, 2


def _drop_file_capabilities() -> None:  # runs in the child, before exec
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _read_only(tree: Path) -> None:
    for path in [tree, *tree.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _writable_again(tree: Path) -> None:
    for path in [tree, *tree.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def _run(args, env, cwd):
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=TIMEOUT,
                          preexec_fn=_drop_file_capabilities)


@pytest.fixture
def install(tmp_path):
    """A copy of the package, read-only, and an environment that imports it from there."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the capability drop that makes mode bits bind root is Linux's")
    site = tmp_path / "site"
    shutil.copytree(Path(incrowd.__file__).parent, site / "incrowd",
                    ignore=shutil.ignore_patterns("__pycache__"))
    _read_only(site)
    probe = _run([sys.executable, "-c", f"open({str(site / 'incrowd' / 'probe')!r}, 'w')"],
                 dict(os.environ), tmp_path)
    if probe.returncode == 0:
        _writable_again(site)
        pytest.skip("this process cannot make a folder read-only for its children")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env.update(PYTHONPATH=str(site), HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "home" / "cache"),
               PYTHONDONTWRITEBYTECODE="1")
    (tmp_path / "home").mkdir()
    yield site, env
    _writable_again(site)


def _microaggregate(site: Path, out: Path):
    return [sys.executable, "-m", "incrowd.cli", "microaggregate",
            str(site / "incrowd" / "datasets" / "census.csv"), "--k", "5", "--method", "mdav-plus",
            "-o", str(out)]


def test_read_only_install_caches_in_the_user_folder(install, tmp_path):
    site, env = install
    first = _run(_microaggregate(site, tmp_path / "a.csv"), env, tmp_path)
    assert first.returncode == 0, first.stderr
    assert NOTICE_ONCE in first.stderr
    assert not list(site.rglob("*.nbi")), "numba wrote into the read-only package"
    assert list((tmp_path / "home" / "cache" / "numba").rglob("*.nbi"))
    second = _run(_microaggregate(site, tmp_path / "b.csv"), env, tmp_path)
    assert second.returncode == 0, second.stderr
    assert "compiling kernels" not in second.stderr
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_read_only_install_and_home_compiles_per_process_and_says_so(install, tmp_path):
    site, env = install
    _read_only(tmp_path / "home")
    try:
        done = _run(_microaggregate(site, tmp_path / "a.csv"), env, tmp_path)
    finally:
        _writable_again(tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert NOTICE_EACH in done.stderr and NOTICE_ONCE not in done.stderr
    assert "Traceback" not in done.stderr
