"""User-facing text speaks to users: no internal work items ("issue 8") and no internal paper
numbers ("paper 002") in the README, the hand-written documentation pages, the CLI reference
(the program's help) or the web pages' templates.

The pages that bench scripts write (benchmarks, reproduction, ...) are checked where their
scripts are changed, not here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"\b(issue|fix)\s*#?\d+\b|\bpapers?\s+0\d\d\b|\bslides\s+0\d\d\b", re.IGNORECASE)

HAND_WRITTEN = [
    "README.md", "CONTRIBUTING.md", "CHANGELOG.md",
    "docs/index.md", "docs/getting-started.md", "docs/architecture.md", "docs/glossary.md",
    "docs/guarantees.md", "docs/cli.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "guide").glob("*.md")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "api").glob("*.md")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src" / "incrowd" / "web" / "templates").glob("*.html")),
]


@pytest.mark.parametrize("name", HAND_WRITTEN)
def test_no_internal_work_items_in_user_text(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    found = [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}" for m in INTERNAL.finditer(text)]
    assert not found, f"{name} mentions internal work items: {found}"


def test_the_pattern_finds_what_it_should():
    assert INTERNAL.search("as in issue 8") and INTERNAL.search("paper 002's model")
    assert not INTERNAL.search("Thaeter & Reischuk 2021, Table 6") and not INTERNAL.search("42 issues remain")
