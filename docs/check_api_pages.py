"""Check the built API reference: every name a page under docs/api/ names with a mkdocstrings
directive (``::: incrowd.NAME``) is rendered on the built page with its docstring.

A directive whose object mkdocstrings cannot load, or whose object has no docstring, renders as
nothing at all (the site's ``show_if_no_docstring`` is off), which a strict build does not
report: the page would be an empty stub. Run after ``mkdocs build`` (``make docs-check``):
``python docs/check_api_pages.py build/site``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

API = Path(__file__).with_name("api")
_DIRECTIVE = re.compile(r"^:::\s+([\w.]+)\s*$", re.M)
_TAG = re.compile(r"<[^>]+>")


def rendered_text(html: str, name: str) -> str | None:
    """The text of ``name``'s docstring on a built page (None: the object is not on the page)."""
    anchor = re.search(rf'id="{re.escape(name)}"', html)
    if anchor is None:
        return None
    rest = html[anchor.end():]
    start = rest.find('class="doc doc-contents')
    if start < 0:
        return ""
    start = rest.find(">", start) + 1
    # up to the tag of the next object's heading: this object's docstring (its members have
    # headings of their own)
    end = rest.find('class="doc doc-heading"', start)
    body = rest[start:rest.rfind("<", start, end) if end > start else len(rest)]
    return " ".join(_TAG.sub(" ", body).split())


def problems(site: Path) -> list[str]:
    found = []
    for page in sorted(API.glob("*.md")):
        built = site / "api" / page.stem / "index.html"
        if not built.is_file():
            found.append(f"{built} is missing: build the site first")
            continue
        html = built.read_text(encoding="utf-8")
        for name in _DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            text = rendered_text(html, name)
            if text is None:
                found.append(f"docs/api/{page.name}: {name} is not rendered")
            elif not text.strip():
                found.append(f"docs/api/{page.name}: {name} is rendered without its docstring")
    return found


def main() -> int:
    site = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/site")
    found = problems(site)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
