"""Every public name is in the API reference: the ``__all__`` of ``incrowd`` and of its
documented subpackages against the names the pages under docs/api/ document.

A name counts as documented on its page by a mkdocstrings directive (``::: incrowd.NAME``) or,
for a module or a plain value without a docstring, by a heading that names it
(``### `incrowd.NAME` ``).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

API = Path(__file__).resolve().parents[1] / "docs" / "api"

#: module -> its reference page
PAGES = {
    "incrowd": "incrowd.md",
    "incrowd.values": "values.md",
    "incrowd.incremental": "incremental.md",
    "incrowd.generalization": "generalization.md",
    "incrowd.io": "io.md",
    "incrowd.privacy": "privacy.md",
    "incrowd.publishing": "publishing.md",
    "incrowd.perturbation": "perturbation.md",
    "incrowd.reporting": "reporting.md",
    "incrowd.distributed": "distributed.md",
    "incrowd.web": "web.md",
}

_DIRECTIVE = re.compile(r"^:::\s+([\w.]+)\s*$", re.M)
_HEADING = re.compile(r"^#+\s+`([\w.]+)`\s*$", re.M)


def documented(module: str, text: str) -> set[str]:
    """The names of ``module`` that ``text`` (a reference page) documents."""
    found = set()
    for full in _DIRECTIVE.findall(text) + _HEADING.findall(text):
        parent, _, name = full.rpartition(".")
        if parent == module:
            found.add(name)
    return found


def _public(module: str) -> list[str]:
    if module == "incrowd.distributed":
        pytest.importorskip("dask")
        pytest.importorskip("distributed")
    if module == "incrowd.web":
        pytest.importorskip("fastapi")
    return list(importlib.import_module(module).__all__)


@pytest.mark.parametrize("module", sorted(PAGES))
def test_every_public_name_is_in_the_api_reference(module):
    page = API / PAGES[module]
    names = documented(module, page.read_text(encoding="utf-8"))
    missing = [n for n in _public(module) if n not in names]
    assert not missing, "\n".join(
        [f"{len(missing)} public name(s) of {module} missing from docs/api/{PAGES[module]}; add:"]
        + [f"    ::: {module}.{n}" for n in missing])


@pytest.mark.parametrize("module", sorted(PAGES))
def test_the_api_reference_documents_only_public_names(module):
    # a page that outlives a rename would document a name nobody can import any more
    page = API / PAGES[module]
    extra = sorted(documented(module, page.read_text(encoding="utf-8")) - set(_public(module)))
    assert not extra, f"docs/api/{PAGES[module]} documents {extra}, which are not in {module}.__all__"


def test_every_api_page_is_listed():
    assert sorted(p.name for p in API.glob("*.md")) == sorted(PAGES.values())


def test_the_comparison_reads_directives_and_headings():
    text = "::: incrowd.MDAV\n\n### `incrowd.__version__`\n\n::: incrowd.microaggregation.sse\n`incrowd.ONA` in prose\n"
    assert documented("incrowd", text) == {"MDAV", "__version__"}
    assert documented("incrowd.microaggregation", text) == {"sse"}


def _checker():
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_api_pages", API.parent / "check_api_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_built_page_checker_tells_a_docstring_from_a_stub(tmp_path):
    # make docs-check runs it on the built site; here on pages shaped as mkdocstrings writes them
    check = _checker()
    shown = ('<h2 id="incrowd.io.read_table" class="doc doc-heading">read_table</h2>'
             '<div class="doc doc-contents first"><p>A table from a file.</p></div>'
             '<h2 id="incrowd.io.write_table" class="doc doc-heading">write_table</h2>'
             '<div class="doc doc-contents first"></div>')
    assert check.rendered_text(shown, "incrowd.io.read_table") == "A table from a file."
    assert check.rendered_text(shown, "incrowd.io.write_table") == ""
    assert check.rendered_text(shown, "incrowd.io.table_format") is None
    site = tmp_path / "site"
    for page in API.glob("*.md"):
        (site / "api" / page.stem).mkdir(parents=True)
        (site / "api" / page.stem / "index.html").write_text(shown, encoding="utf-8")
    found = check.problems(site)
    assert "docs/api/io.md: incrowd.io.write_table is rendered without its docstring" in found
    assert "docs/api/io.md: incrowd.io.table_format is not rendered" in found
    assert not any("incrowd.io.read_table" in line for line in found)
