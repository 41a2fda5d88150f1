"""Hostile CSV text for the pass-through tests: texts pandas would rewrite if it guessed types.

Files are written with minimal quoting (the canonical form), so a tool that leaves a column
alone must reproduce its bytes exactly.
"""

from __future__ import annotations

import csv
import io

QIS = ["age", "income"]
ID = "id"
HEADER = ["id", "zip", "age", "na", "ratio", "income", "count", "note", "city"]
PASSTHROUGH = ["zip", "na", "ratio", "count", "note", "city"]

#: per pass-through column, values that type guessing or NA guessing would change
HOSTILE = {
    "zip": ["02134", "00501", "0", "007", "+49", "1e5"],
    "na": ["NA", "None", "null", "#N/A", "", "N/A", "nan", "NULL", ".", "-"],
    "ratio": ["1.10", "2.50", "1e3", "0.0", "-0", "3."],
    "count": ["7", "", "8", "9", "", "10"],
    "note": ['Smith, John', 'say "hi"', "two\nlines", "  padded  ", "a;b|c\td", "'single'"],
    "city": ["Zürich", "Åre", "東京", "São Paulo", "naïve", "x"],
}


def rows(n: int, start: int = 0) -> list[list[str]]:
    out = []
    for i in range(start, start + n):
        row = {"id": f"p{i:03d}", "age": str(20 + (i * 7) % 45), "income": f"{1000 + (i * 37) % 900}.5"}
        for name, values in HOSTILE.items():
            row[name] = values[i % len(values)]
        out.append([row[c] for c in HEADER])
    return out


def _field(value: str, sep: str) -> str:
    # minimal quoting, as csv.writer does, except that a carriage return is always quoted
    # (csv.writer quotes only the characters of its line terminator)
    if any(ch in value for ch in (sep, '"', "\n", "\r")):
        return '"' + value.replace('"', '""') + '"'
    return value


def to_text(header: list[str], body: list[list[str]], sep: str = ",", newline: str = "\n") -> str:
    return "".join(sep.join(_field(v, sep) for v in record) + newline for record in [header, *body])


def parse(text: str, sep: str = ",") -> tuple[list[str], list[list[str]]]:
    records = list(csv.reader(io.StringIO(text, newline=""), delimiter=sep))
    return records[0], records[1:]


def expected_release(text_in: str, text_out: str, sep: str = ",", newline: str = "\n",
                     drop: tuple[str, ...] = (ID,), rows_kept: list[int] | None = None,
                     qis: list[str] = QIS) -> str:
    """The output a tool must write if it left every pass-through field alone: the input's
    records without the dropped columns, with the output's own quasi-identifier fields."""
    header_in, body_in = parse(text_in, sep)
    header_out, body_out = parse(text_out, sep)
    keep = [c for c in header_in if c not in drop]
    assert header_out == keep
    if rows_kept is not None:
        body_in = [body_in[i] for i in rows_kept]
    assert len(body_in) == len(body_out)
    rebuilt = []
    for rec_in, rec_out in zip(body_in, body_out):
        fields = dict(zip(header_in, rec_in))
        got = dict(zip(header_out, rec_out))
        rebuilt.append([got[c] if c in qis else fields[c] for c in keep])
    return to_text(keep, rebuilt, sep, newline)
