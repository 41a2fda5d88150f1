"""docs/guide/spec-reference.md lists every key of a release specification from the one table
the parser checks specs against (docs/gen_spec.py writes it), and that table agrees with what
the parser does: its names, its choices and its defaults."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from incrowd.exceptions import ParameterError
from incrowd.privacy import MODELS
from incrowd.publishing import (
    REPORT_MEANINGS,
    RISK_TARGET_KEYS,
    SPEC_KEYS,
    SPEC_SECTIONS,
    ColumnSpec,
    ReleaseSpec,
    load_spec,
    spec_key,
)

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGE = DOCS / "guide" / "spec-reference.md"
#: the smallest spec the parser takes: what every default is read from
MINIMAL = {"privacy": {"k": 5}, "columns": {"age": "numeric", "sex": "categorical"}}


def _generator():
    spec = importlib.util.spec_from_file_location("gen_spec", DOCS / "gen_spec.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_spec_reference_is_current():
    assert PAGE.read_text(encoding="utf-8") == _generator().render(), (
        "docs/guide/spec-reference.md differs from the spec's key table: run python docs/gen_spec.py")


def test_the_page_names_every_section_and_key():
    page = PAGE.read_text(encoding="utf-8")
    for section in SPEC_SECTIONS:
        # an array of tables ([[perturb]]) is headed as TOML writes it
        assert f"## `[{section}]`" in page or f"## `[[{section}]]`" in page
    for entry in SPEC_KEYS:
        assert f"| `{entry.name}` |" in page, entry
    from incrowd.reporting._verdict import DEFAULTS

    for name in DEFAULTS:
        assert f"| `{name}` |" in page, name


def test_the_page_is_in_the_site_navigation():
    assert "guide/spec-reference.md" in (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8")


def _with_privacy(**privacy):
    return {**MINIMAL, "privacy": {"k": 5, **privacy}}


@pytest.mark.parametrize("entry", [e for e in SPEC_KEYS if e.section == "privacy" and e.name != "k"],
                         ids=lambda e: e.name)
def test_a_privacy_default_is_what_the_parser_gives_when_the_key_is_left_out(entry):
    spec = load_spec(MINIMAL)
    if entry.name in RISK_TARGET_KEYS:
        got = spec.risk_targets.get(entry.name)
    elif entry.name in MODELS:  # a privacy model left out is not among the spec's models
        got = next((m for m in spec.models if m.key == entry.name), None)
    elif entry.name in ("missing_matches", "importance", "max_suppressed_cells"):
        # they mean something only with cells; the dataclass holds their value there
        got = {f.name: f.default for f in dataclasses.fields(ReleaseSpec)}[entry.name]
    else:
        got = getattr(spec, entry.name)
    assert got == entry.default and type(got) is type(entry.default), entry.name


@pytest.mark.parametrize("entry", [e for e in SPEC_KEYS if e.section == "column" and e.name != "role"],
                         ids=lambda e: e.name)
def test_a_column_table_default_is_the_column_specs(entry):
    default = {f.name: f.default for f in dataclasses.fields(ColumnSpec)}[entry.name]
    assert default == entry.default
    assert load_spec(MINIMAL).columns["sex"].__getattribute__(entry.name) == entry.default


def test_missing_numeric_default():
    assert load_spec(MINIMAL).missing_numeric == spec_key("missing", "numeric").default


def _cells(**privacy):
    return _with_privacy(suppression="cells", **privacy)


#: a spec in which each key with choices takes any of them
CONTEXT = {
    "strategy": lambda v: _with_privacy(strategy=v),
    "metric": lambda v: _with_privacy(metric=v),
    "suppression": lambda v: _with_privacy(suppression=v),
    "missing_matches": lambda v: {**_cells(missing_matches=v), "columns": {"sex": "categorical"}},
    # a perturbed column comes with the step that perturbs it
    "role": lambda v: {**MINIMAL, "columns": {**MINIMAL["columns"], "x": {"role": v}},
                       **({"perturb": [{"columns": ["x"], "method": "round"}]} if v == "perturb" else {})},
    "match": lambda v: {**MINIMAL, "columns": {"age": "numeric", "sex": {"role": "categorical", "match": v}}},
    "numeric": lambda v: {**MINIMAL, "missing": {"numeric": v}},
    "household_id": lambda v: {"privacy": {"k": 2, "household_id": v},
                               "columns": {"hid": "household", "sex": "categorical"}},
}


@pytest.mark.parametrize("entry", [e for e in SPEC_KEYS if e.choices], ids=lambda e: e.name)
def test_the_parser_takes_every_choice_and_refuses_another_word_by_the_keys_name(entry):
    for choice in entry.choices:
        load_spec(CONTEXT[entry.name](choice))
    with pytest.raises(ParameterError, match=entry.name):
        load_spec(CONTEXT[entry.name]("no-such-choice"))


def test_the_choices_are_those_the_libraries_check():
    from incrowd.generalization import METRICS
    from incrowd.publishing._risk_targets import RISK_TARGETS
    from incrowd.values import MISSING_MATCHES

    assert spec_key("privacy", "metric").choices == tuple(METRICS)
    assert spec_key("privacy", "missing_matches").choices == tuple(MISSING_MATCHES)
    assert RISK_TARGET_KEYS == tuple(RISK_TARGETS)


@pytest.mark.parametrize("section,spec", [
    ("privacy", _with_privacy(no_such_key=1)),
    ("column", {**MINIMAL, "columns": {"age": {"role": "numeric", "no_such_key": 1}}}),
    ("missing", {**MINIMAL, "missing": {"no_such_key": 1}}),
])
def test_a_key_outside_the_table_is_refused_with_the_tables_names(section, spec):
    with pytest.raises(ParameterError, match="no_such_key") as info:
        load_spec(spec)
    known = [e.name for e in SPEC_KEYS if e.section == section]
    assert ", ".join(known) in str(info.value)


def test_every_report_threshold_has_a_meaning():
    from incrowd.reporting._verdict import DEFAULTS

    assert set(REPORT_MEANINGS) == {name.removesuffix("_fail") for name in DEFAULTS}
