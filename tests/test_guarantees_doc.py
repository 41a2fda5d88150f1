"""docs/guarantees.md names, for each promise, tests that exist: a renamed or deleted test
must not leave a promise pointing at nothing."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def functions_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_test_named_in_the_guarantees_exists():
    text = (ROOT / "docs" / "guarantees.md").read_text()
    named, current = [], None
    for line in text.splitlines():
        for ref in re.findall(r"`([^`]*::[^`]*|test_\w+\.py)[^`]*`", line):
            file, _, name = ref.partition("::")
            if file:
                current = file
            if name:
                named.append((current, name.split("[")[0]))
    assert len(named) > 80
    missing = [f"{file}::{name}" for file, name in named
               if not (ROOT / "tests" / file).is_file() or name not in functions_of(ROOT / "tests" / file)]
    assert missing == []


def test_the_readme_links_the_guarantees():
    assert "(docs/guarantees.md)" in (ROOT / "README.md").read_text()
