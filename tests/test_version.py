"""The version is written once (pyproject.toml) and read back from the package metadata."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import incrowd

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_the_package_metadata():
    assert incrowd.__version__ == version("incrowd")
    assert "__version__" in incrowd.__all__


def test_pyproject_is_the_one_place_the_version_is_written():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert incrowd.__version__ == declared
    # no second copy in the sources that could drift from it
    copies = [p for p in (ROOT / "src" / "incrowd").rglob("*.py") if f'"{declared}"' in p.read_text(encoding="utf-8")]
    assert copies == []


def test_import_incrowd_reads_the_metadata_only_when_the_version_is_asked():
    code = ("import json, sys, incrowd\n"
            "before = 'importlib.metadata' in sys.modules\n"
            "v = incrowd.__version__\n"
            "print(json.dumps([before, 'importlib.metadata' in sys.modules, v]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == [False, True, incrowd.__version__]


def test_py_typed_ships_with_the_package():
    assert (Path(incrowd.__file__).parent / "py.typed").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"incrowd" = ["py.typed"]' in pyproject
