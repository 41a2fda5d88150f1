"""Other packages reach ``incrowd.io`` and ``incrowd._runtime`` through the package, never
through a private module: each package lists what it offers the rest of incrowd (its internal
API) in its ``__init__`` and its docstring, and loads each name on first use.

Read from the source with ``ast``, as ``tests/test_architecture.py`` reads it.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("incrowd.io", "incrowd._runtime")
#: private modules of these packages that other packages may import by their full name (none:
#: compiling ahead, which calls the algorithms, is the command line's, in ``cli/_compile_ahead.py``)
BY_FULL_NAME: set[str] = set()


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str, src: Path) -> bool:
    rel = Path(*name.split("."))
    return (src / rel).with_suffix(".py").is_file() or (src / rel / "__init__.py").is_file()


def private_reaches(src: Path = SRC) -> list[str]:
    """``module:line -> target`` for every import (any level, inside functions too) of a private
    module of ``incrowd.io`` or ``incrowd._runtime`` from outside that package."""
    found = []
    for path in sorted((src / "incrowd").rglob("*.py")):
        module = _module_name(path, src)
        is_package = path.name == "__init__.py"
        own = module if is_package else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if _is_module(full, src) else base
                for package in PACKAGES:
                    inside = own == package or own.startswith(package + ".")
                    if (not inside and target.startswith(package + "._") and target not in BY_FULL_NAME):
                        found.append(f"{module}:{node.lineno} -> {target}")
    return found


def test_no_package_reaches_into_io_or_runtime_private_modules():
    found = private_reaches()
    assert not found, ("import these from the package (its internal API, see its docstring):\n"
                       + "\n".join(found))


def test_the_check_sees_a_private_import(tmp_path):
    """The walk is not vacuous: a module that reaches into ``io._atomic`` is found."""
    package = tmp_path / "incrowd"
    (package / "io").mkdir(parents=True)
    (package / "cli").mkdir()
    for name in ("__init__.py", "io/__init__.py", "io/_atomic.py", "cli/__init__.py"):
        (package / name).write_text("")
    (package / "cli" / "_app.py").write_text("def f():\n    from ..io._atomic import is_stdout\n")
    assert private_reaches(tmp_path) == ["incrowd.cli._app:2 -> incrowd.io._atomic"]


@pytest.mark.parametrize("package_name", PACKAGES)
def test_every_internal_name_is_the_object_its_module_defines_and_is_listed(package_name):
    package = importlib.import_module(package_name)
    names = {**package._LAZY, **getattr(package, "_INTERNAL", {})}
    for name, spec in names.items():
        module, _, attribute = spec.partition(":")
        defined = getattr(importlib.import_module(module, package_name), attribute or name)
        assert getattr(package, name) is defined, name
    for name, module in package._MODULES.items():
        assert getattr(package, name) is importlib.import_module(module, package_name), name
    doc = package.__doc__
    public = set(getattr(package, "__all__", ()))
    unlisted = [n for n in [*names, *package._MODULES]
                if n not in public and not re.search(rf"``{re.escape(n)}``", doc)]
    assert not unlisted, f"{package_name}'s docstring does not list {unlisted}"


def test_importing_the_runtime_loads_only_what_is_asked_for():
    code = ("import sys, incrowd._runtime as r\n"
            "before = {m for m in sys.modules if m.startswith('incrowd._runtime.')}\n"
            "r.check_cancelled\n"
            "after = {m for m in sys.modules if m.startswith('incrowd._runtime.')}\n"
            "print(sorted(before), sorted(after - before))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    before, added = done.stdout.strip().split("] [")
    assert "_cancel" not in before and "'incrowd._runtime._cancel'" in added
