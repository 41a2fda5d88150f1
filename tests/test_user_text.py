"""User-facing text speaks to users: no internal work items ("issue 8") and no internal paper
numbers ("paper 002") in the README, the documentation pages, the CLI reference (the program's
help) or the web pages' templates.

The pages that bench scripts write (benchmarks, reproduction, ...) are user text too: every
``docs/*.md`` is checked, and so are the docstrings of the public names (``incrowd.__all__``,
their public methods and the public names of the subpackages listed there), which the API
reference renders.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import incrowd

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"\b(issue|fix)\s*#?\d+\b|\bpapers?\s+0\d\d\b|paper_?0\d\d\b|\bslides\s+0\d\d\b", re.IGNORECASE)

USER_PAGES = [
    "README.md", "CONTRIBUTING.md", "CHANGELOG.md",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "guide").glob("*.md")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "api").glob("*.md")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src" / "incrowd" / "web" / "templates").glob("*.html")),
]


@pytest.mark.parametrize("name", USER_PAGES)
def test_no_internal_work_items_in_user_text(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    found = [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}" for m in INTERNAL.finditer(text)]
    assert not found, f"{name} mentions internal work items: {found}"


def test_the_pattern_finds_what_it_should():
    assert INTERNAL.search("as in issue 8") and INTERNAL.search("paper 002's model")
    assert INTERNAL.search("written by `bench/bench_paper000.py`")
    assert not INTERNAL.search("Thaeter & Reischuk 2021, Table 6") and not INTERNAL.search("42 issues remain")


def _public_docstrings():
    """(name, docstring) of every public name of incrowd, its public members and the public
    names of the subpackages in ``incrowd.__all__``."""
    seen: set[int] = set()
    out: list[tuple[str, str]] = []

    def add(name, obj):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        doc = inspect.getdoc(obj)
        if doc:
            out.append((name, doc))

    for name in incrowd.__all__:
        obj = getattr(incrowd, name)
        if inspect.ismodule(obj):
            add(f"incrowd.{name}", obj)
            for sub in getattr(obj, "__all__", []):
                member = getattr(obj, sub)
                add(f"incrowd.{name}.{sub}", member)
                if inspect.isclass(member):
                    for attr, value in vars(member).items():
                        if not attr.startswith("_"):
                            add(f"incrowd.{name}.{sub}.{attr}", value)
            continue
        add(f"incrowd.{name}", obj)
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if not attr.startswith("_"):
                    add(f"incrowd.{name}.{attr}", value)
    return out


def test_no_internal_work_items_in_public_docstrings():
    docs = _public_docstrings()
    assert len(docs) > 40  # the walk reaches the estimators' methods, not just the names
    found = [f"{name}: {m.group(0)!r}" for name, doc in docs for m in INTERNAL.finditer(doc)]
    assert not found, f"public docstrings mention internal work items: {found}"
