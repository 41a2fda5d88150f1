"""A griffe extension for the documentation build: the docstrings' Sphinx roles as Markdown.

The docstrings cross-reference with reStructuredText roles (``:class:`Lattice```,
``:meth:`~IncrementalMicroaggregation.add```), which mkdocstrings would print literally; here
each becomes an inline code span with the name as written (``~`` keeps only the last part).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|mod|data|attr|obj|exc|const):`(~?)([^`]+)`")


def _code(match: re.Match) -> str:
    short, target = match.group(1), match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if short else target}`"


class SphinxRoles(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _ROLE.sub(_code, obj.docstring.value)
