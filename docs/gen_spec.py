"""Write docs/guide/spec-reference.md: every key of a release specification with its type, default
and meaning, rendered from the key table the parser checks specs against
(``incrowd.publishing.SPEC_KEYS``) and the report's thresholds (``incrowd.reporting``'s defaults).

Run ``python docs/gen_spec.py`` after changing a key; ``--check`` (``make docs-check``) and
tests/test_spec_reference.py fail while the page differs from what this script writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

PAGE = Path(__file__).parent / "guide" / "spec-reference.md"

INTRO = """# Specification reference

Every key a release specification (`incrowd publish --spec release.toml`, `incrowd.publish(data,
spec)`, the web's Publish page) may hold: its type, its value when left out and what it means. A
key not listed here is refused with a message that names it. See [Mixed releases](publishing.md)
for a walk-through and [Publish a survey file](survey.md) for a labelled survey.

This page is generated from the table of keys the parser checks specs against
(`python docs/gen_spec.py`); do not edit it by hand.
"""

SECTION_TEXT = {
    "privacy": "The privacy targets and how they are met.",
    "columns": ("One entry per column: its role as a string (`age = \"numeric\"`) or a table with `role` "
                "and the keys below (`sex = { role = \"categorical\", hierarchy = \"sex.csv\" }`). A column "
                "the spec does not name is `other`: it passes through unchanged."),
    "missing": "How missing values in the quasi-identifiers are met.",
    "method_params": ("The microaggregation method's own parameters, by the names the method takes "
                      "(`gamma` of `vmdav`, `rho` of `mona`, ...; see `incrowd.METHODS`)."),
    "levels": ("Fixed generalization levels: a categorical column's name and its level (an integer "
               ">= 0, 0 being the value itself); the columns left out are chosen by the search."),
    "report": ("Thresholds of the report's verdict (`incrowd publish --report`): each measure passes up "
               "to its threshold and is marked for review beyond it; `NAME_fail`, where it exists, is "
               "the value beyond which the measure fails. A promise of `[privacy]` (k, l, t) is judged "
               "against the promise instead."),
    "perturb": ("Perturbation steps, each a `[[perturb]]` table, applied in order to the release after its keys "
                "are protected (see [Perturbation](perturbation.md)): `columns`, `method`, then the method's own "
                "keys. A perturbed column is not a quasi-identifier: the keys' release and its check are the "
                "same with or without the steps."),
    "benchmarks": ("The figures an office publishes from the survey, compared before and after protection in "
                   "the report (`incrowd report --spec`, `incrowd publish --report`): weighted by the `weight` "
                   "column where there is one. See [Reports](report.md)."),
}


def _value(value) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f"`\"{value}\"`"
    return f"`{value:g}`" if isinstance(value, float) else f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(entries) -> str:
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for e in entries:
        kind = e.type + (" (" + ", ".join(f"`{c}`" for c in e.choices) + ")" if e.choices else "")
        rows.append(f"| `{e.name}` | {_cell(kind)} | {_value(e.default)} | {_cell(e.meaning)} |")
    return "\n".join(rows) + "\n"


def _report_table() -> str:
    from incrowd.publishing import REPORT_HIGHER_IS_BETTER as HIGHER_IS_BETTER
    from incrowd.publishing import REPORT_MEANINGS
    from incrowd.publishing import REPORT_THRESHOLDS as DEFAULTS

    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for name, default in DEFAULTS.items():
        base = name.removesuffix("_fail")
        what = REPORT_MEANINGS[base]
        if name != base:
            what = f"fail threshold of `{base}`"
        elif base in HIGHER_IS_BETTER:
            what = f"{what}; the least that passes"
        else:
            what = f"{what}; the most that passes"
        rows.append(f"| `{name}` | number >= 0 | {_value(default)} | {_cell(what)} |")
    return "\n".join(rows) + "\n"


def _methods_tables() -> str:
    """One table per perturbation method: its own keys, from the method's declared parameters."""
    from incrowd.perturbation import METHODS, REQUIRED

    parts = []
    for key, method in METHODS.items():
        rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
        for name, p in method.params.items():
            kind = p.kind + (" (" + ", ".join(f"`{c}`" for c in p.choices) + ")" if p.choices else "")
            default = "required" if p.default is REQUIRED else _value(p.default)
            rows.append(f"| `{name}` | {_cell(kind)} | {default} | {_cell(p.meaning)} |")
        parts.append(f"### `method = \"{key}\"`\n\n{method.summary} (sdcMicro: `{method.sdcmicro}`)"
                     + (", seeded by `random_state`" if method.draws else "") + ".\n\n" + "\n".join(rows) + "\n")
    return "\n".join(parts)


def render() -> str:
    from incrowd.publishing import SPEC_KEYS, SPEC_SECTIONS

    parts = [INTRO]
    for section in SPEC_SECTIONS:
        heading = f"[[{section}]]" if section == "perturb" else f"[{section}]"
        parts.append(f"## `{heading}`\n\n{SECTION_TEXT[section]}\n")
        if section == "columns":
            parts.append("### A column's table\n\n" + _table([e for e in SPEC_KEYS if e.section == "column"]))
        elif section == "report":
            parts.append(_report_table())
        elif section == "perturb":
            parts.append(_table([e for e in SPEC_KEYS if e.section == section]) + "\n" + _methods_tables())
        else:
            entries = [e for e in SPEC_KEYS if e.section == section]
            if entries:
                parts.append(_table(entries))
    return "\n".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is out of date: run python docs/gen_spec.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
