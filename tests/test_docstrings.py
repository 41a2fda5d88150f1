"""Every public function and class constructor documents its parameters and what it returns in
numpydoc sections (``Parameters``, ``Returns``), which the API pages render.

Walks the ``__all__`` of the public modules; a class is checked on its constructor's
parameters (documented in the class docstring, as numpydoc and mkdocstrings merge ``__init__``
into the class; a dataclass's fields may be its ``Attributes``), a function on its parameters
and its ``Returns`` (or ``Yields``) section.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re

import pytest

#: the modules whose ``__all__`` is the public API the site documents
MODULES = ("incrowd", "incrowd.generalization", "incrowd.incremental", "incrowd.io", "incrowd.values",
           "incrowd.microaggregation", "incrowd.privacy", "incrowd.publishing", "incrowd.reporting")

_HEADER = re.compile(r"^(?P<indent>[ \t]*)(?P<name>[A-Z][A-Za-z ]+)\n(?P=indent)-{3,}[ \t]*$", re.M)


def sections(doc: str) -> dict[str, str]:
    """numpydoc section name -> its body (the text up to the next section header)."""
    doc = inspect.cleandoc(doc or "")
    found = list(_HEADER.finditer(doc))
    out = {}
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(doc)
        out[match["name"].strip()] = doc[match.end():end]
    return out


def documented_parameters(body: str) -> set[str]:
    """The names a ``Parameters`` section describes: its unindented ``name : type`` lines
    (``a, b : int`` names two; ``*args`` and ``**kwargs`` are written with their stars)."""
    names: set[str] = set()
    for line in body.splitlines():
        if not line.strip() or line[0].isspace():
            continue
        head = line.split(" : ", 1)[0]
        names.update(n.strip() for n in head.split(",") if n.strip())
    return names


def _public(module_name: str):
    module = importlib.import_module(module_name)
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield f"{module_name}.{name}", obj


def _callables():
    seen: dict[int, str] = {}
    for module_name in MODULES:
        for label, obj in _public(module_name):
            if id(obj) not in seen:  # re-exported names are checked once, under their first home
                seen[id(obj)] = label
                yield label, obj


CALLABLES = dict(_callables())


def _expected(obj) -> list[str]:
    """The parameters a reader must find described: the constructor's for a class."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # a class whose constructor has no Python signature
        return []
    out = []
    for p in signature.parameters.values():
        if p.name in ("self", "cls"):
            continue
        out.append({p.VAR_POSITIONAL: f"*{p.name}", p.VAR_KEYWORD: f"**{p.name}"}.get(p.kind, p.name))
    return out


def problems(obj) -> list[str]:
    doc = obj.__doc__ if inspect.isfunction(obj) or obj.__doc__ is not object.__doc__ else None
    if not doc:
        return ["no docstring"]
    found = sections(doc)
    out = []
    expected = _expected(obj)
    # a dataclass's constructor parameters are its fields, which numpydoc lists as Attributes
    section = "Attributes" if dataclasses.is_dataclass(obj) and "Parameters" not in found else "Parameters"
    if expected:
        if section not in found:
            out.append("no Parameters section")
        else:
            named = documented_parameters(found[section])
            # ``**params`` may be described as ``**params`` or ``params``
            absent = [p for p in expected if p not in named and p.lstrip("*") not in named]
            if absent:
                out.append(f"Parameters does not describe {absent}")
    if inspect.isfunction(obj) and not ({"Returns", "Yields"} & set(found)):
        out.append("no Returns section")
    return out


def test_the_walk_finds_the_public_api():
    """The names the site documents are all reached (a broken walk would pass vacuously)."""
    for name in ("incrowd.microaggregate", "incrowd.publish", "incrowd.report", "incrowd.Report",
                 "incrowd.generalization.generalize", "incrowd.incremental.IncrementalMicroaggregation",
                 "incrowd.read_table", "incrowd.io.sniff_delimiter",
                 "incrowd.microaggregation.group_size_stats", "incrowd.MDAV"):
        assert name in CALLABLES
    assert len(CALLABLES) > 60


def test_the_section_reader_reads_numpydoc():
    def sample(a, b, *args, c=1, **kwargs):
        """Summary.

        Parameters
        ----------
        a, b : int
            Two numbers.
        *args
            More.
        c : int, default 1
            A third, described over
            two lines : with a colon.
        **kwargs
            Options.

        Returns
        -------
        int
            The sum.
        """

    assert problems(sample) == []
    found = sections(sample.__doc__)
    assert set(found) == {"Parameters", "Returns"}
    assert documented_parameters(found["Parameters"]) == {"a", "b", "*args", "c", "**kwargs"}

    def partial(a, b):
        """Summary.

        Parameters
        ----------
        a : int
            One.
        """

    assert problems(partial) == ["Parameters does not describe ['b']", "no Returns section"]


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_public_callable_documents_parameters_and_returns(name):
    assert problems(CALLABLES[name]) == [], name
