"""The format registry: one file per format, read by the CLI help and the web's upload list."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import incrowd.io as iio
from incrowd.web import create_app

TESTS = Path(__file__).parent


@pytest.fixture
def toy():
    import _toy_format

    iio.register_format(_toy_format.FORMAT)  # again, should an earlier test have removed it
    yield _toy_format.FORMAT
    iio.unregister_format("toy")


def test_builtin_formats_and_their_functions():
    assert list(iio.FORMATS) == ["csv", "parquet", "spss", "stata", "sas7bdat", "xport"]
    assert iio.FORMATS["spss"].label == "SPSS (.sav, .zsav)"
    assert iio.format_of("survey.SAV").name == "spss"
    assert iio.format_of("a.csv.gz").name == "csv"
    assert iio.format_of("notes.txt") is None
    assert iio.suffixes(written=True) == (".csv", ".parquet", ".pq", ".sav", ".zsav", ".dta", ".xpt")
    # the registry points at the existing functions, it does not copy them
    assert iio.FORMATS["csv"].function("reader") is iio.read_table
    assert iio.FORMATS["stata"].function("writer").__module__ == "incrowd.io._statfiles"
    with pytest.raises(LookupError):
        iio.FORMATS["sas7bdat"].function("writer")


def test_a_suffix_belongs_to_one_format():
    with pytest.raises(ValueError, match=r"'\.sav' is already 'spss'"):
        iio.register_format(iio.Format(name="other", title="Other", suffixes=(".sav",)))
    assert "other" not in iio.FORMATS


def test_a_toy_format_shows_in_the_registry(toy, tmp_path):
    assert iio.format_of("x.toy") is toy
    assert ".toy" in iio.suffixes() and ".toy" not in iio.suffixes(written=True)
    assert "Toy (.toy)" in iio.describe_formats()
    assert ".toy" in iio.upload_accept().split(",")
    (tmp_path / "a.toy").write_text("a|b\n1|2\n")
    assert toy.function("reader")(tmp_path / "a.toy").to_dict("list") == {"a": [1], "b": [2]}


def test_a_toy_format_shows_in_the_web_upload_list(toy):
    application = create_app()
    try:
        text = TestClient(application).get("/publish").text
    finally:
        application.state.sessions.close()
    accept = text.split('id="file" name="file" accept="')[1].split('"')[0].split(",")
    assert ".toy" in accept and ".sav" in accept
    assert "Toy (.toy)" in text


def test_a_toy_format_shows_in_the_cli_help():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    code = "import _toy_format; from incrowd.cli import app; app(['publish', '--help'], prog_name='incrowd')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120, cwd=TESTS)
    help_text = " ".join(done.stdout.replace("\u2502", " ").split())  # rich's box border out
    assert "Toy (.toy)" in help_text, done.stdout + done.stderr
