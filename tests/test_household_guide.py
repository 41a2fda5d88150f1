"""docs/guide/household-survey.md's whole release, run as the page says: its spec, its command,
and the lines the page prints, on the curator's labelled file (tests/_household.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _household import write_hierarchies, write_household
from benchdata import data_dir
from typer.testing import CliRunner

from incrowd.cli import app

pyreadstat = pytest.importorskip("pyreadstat")

PAGE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "household-survey.md"


def _section(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def _blocks(section: str, kind: str) -> list[str]:
    """The fenced blocks of ``section`` whose fence names ``kind`` ("" for a bare fence)."""
    return [body for fence, body in re.findall(r"^```(\w*)\n(.*?)^```$", section, re.S | re.M) if fence == kind]


@pytest.mark.skipif(not (data_dir() / "testdata.csv").is_file(), reason="benchmark data not found")
def test_the_guides_release_publishes_as_printed(tmp_path):
    section = _section("7. The whole release")
    (spec,) = _blocks(section, "toml")
    (shown,) = _blocks(section, "")
    write_household(data_dir(), tmp_path / "household.sav")
    write_hierarchies(tmp_path / "hierarchies")
    (tmp_path / "release.toml").write_text(spec, encoding="utf-8")
    command = shown.splitlines()[0].removeprefix("$ incrowd ").split()
    assert command[:2] == ["publish", "household.sav"]
    done = CliRunner().invoke(app, [str(tmp_path / a) if a.endswith((".sav", ".toml", ".html")) else a
                                    for a in command])
    assert done.exit_code == 0, done.output
    printed = [line for line in shown.splitlines()[1:] if line != "..."]
    for line in printed:
        if line.startswith("written"):
            continue
        assert line in done.output.splitlines(), line
    table, meta = pyreadstat.read_sav(str(tmp_path / "release.sav"), user_missing=True)
    assert meta.variable_value_labels["urbrur"] == {1.0: "Urban", 2.0: "Rural"}
    assert meta.missing_ranges["water"] == [{"lo": 9.0, "hi": 9.0}]
    assert meta.variable_value_labels["age"][100.0] == "0-9"
    assert (tmp_path / "report.html").is_file()
