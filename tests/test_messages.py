"""Inputs that used to hang or crash, and the messages a user reads: every one is a single
``error:`` line naming the path, the column or the parameter (exit status 2 in the CLI, a JSON
4xx in the web), never a wait, a traceback or a megabyte of names."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from incrowd import DataError, IncrowdError, ParameterError
from incrowd.cli import app
from incrowd.generalization import interval_hierarchy, read_hierarchy
from incrowd.publishing import load_spec

EXE = [sys.executable, "-m", "incrowd.cli"]
#: a bound on each subprocess, so a regression that waits on a FIFO fails instead of hanging
TIMEOUT = 120

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def one_error_line(out, *fragments: str) -> str:
    assert out.exit_code == 2, out.output
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert "Traceback" not in out.output and out.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*EXE, *args], capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd)


def one_error_line_of(done: subprocess.CompletedProcess, *fragments: str) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def people(tmp_path) -> Path:
    rng = np.random.default_rng(3)
    n = 60
    frame = pd.DataFrame({
        "id": [f"p{i}" for i in range(n)],
        "age": rng.integers(18, 80, n),
        "sex": rng.choice(["F", "M"], n),
        "income": rng.normal(3e4, 8e3, n).round(2),
    })
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    return path


def write_spec(folder: Path, columns: str, name: str = "spec.toml", privacy: str = "k = 3") -> Path:
    path = folder / name
    path.write_text(f"[privacy]\n{privacy}\n\n[columns]\nid = \"identifier\"\n{columns}\n", encoding="utf-8")
    return path


# -- inputs that are not regular files --------------------------------------------------------


@needs_fifo
@pytest.mark.parametrize("what", ["spec", "hierarchy", "data", "lattice", "state", "kept rows"])
def test_a_fifo_is_refused_by_kind_and_never_waited_on(tmp_path, people, what):
    suffix = {"spec": "toml", "hierarchy": "csv", "data": "csv", "kept rows": "txt"}.get(what, "duckdb")
    fifo = tmp_path / f"pipe.{suffix}"
    os.mkfifo(fifo)
    out = str(tmp_path / "out.csv")
    if what == "spec":
        args = ["publish", str(people), "--spec", str(fifo), "-o", out]
    elif what == "hierarchy":
        spec = write_spec(tmp_path, f'sex = {{ role = "categorical", hierarchy = "{fifo.name}" }}')
        args = ["publish", str(people), "--spec", str(spec), "-o", out]
    elif what == "data":
        args = ["microaggregate", str(fifo), "-o", out, "--k", "3"]
    elif what == "lattice":
        args = ["negotiate", str(fifo), "--k", "3"]
    elif what == "state":
        args = ["incremental", "add", str(fifo), str(people)]
    else:
        args = ["report", str(people), str(people), "--qi", "age", "--kept-rows", str(fifo), "--json"]
    line = one_error_line_of(run_cli(*args, cwd=tmp_path), "is a FIFO (named pipe)", fifo.name)
    assert "does not exist" not in line and not (tmp_path / "out.csv").exists()


@needs_fifo
def test_a_fifo_in_a_hierarchy_folder_is_named_not_skipped(tmp_path, people):
    folder = tmp_path / "hier"
    folder.mkdir()
    os.mkfifo(folder / "sex.csv")
    done = run_cli("lattice", "build", str(people), "-o", str(tmp_path / "out.duckdb"), "--qi", "sex",
                   "--hierarchies", str(folder), cwd=tmp_path)
    one_error_line_of(done, "sex.csv", "is a FIFO (named pipe)")


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
@pytest.mark.parametrize("kind", ["directory", "device"])
def test_a_hierarchy_that_is_a_directory_or_device_says_so(runner, tmp_path, people, kind):
    if kind == "directory":
        target, said = tmp_path / "sexdir", "is a directory"
        target.mkdir()
    else:
        target, said = Path("/dev/null"), "is a character device"
    spec = write_spec(tmp_path, f'sex = {{ role = "categorical", hierarchy = "{target}" }}')
    line = one_error_line(runner.invoke(app, ["publish", str(people), "--spec", str(spec), "-o",
                                              str(tmp_path / "out.csv")]), str(target), said)
    assert "does not exist" not in line
    with pytest.raises(DataError, match=said):
        read_hierarchy(target)


def test_a_missing_spec_names_the_path(runner, tmp_path, people):
    for name in ("absent", "absent.toml"):
        line = one_error_line(runner.invoke(app, ["publish", str(people), "--spec", str(tmp_path / name), "-o",
                                                  str(tmp_path / "out.csv")]), name, "does not exist")
        assert "PosixPath" not in line and "got" not in line
    with pytest.raises(DataError, match="does not exist"):
        load_spec(tmp_path / "absent")


def test_a_spec_with_a_byte_order_mark_is_read(runner, tmp_path, people):
    spec = write_spec(tmp_path, 'sex = "categorical"\nage = "numeric"')
    spec.write_bytes(b"\xef\xbb\xbf" + spec.read_bytes())
    assert load_spec(spec).k == 3
    assert load_spec("\ufeff" + spec.read_text(encoding="utf-8-sig")).k == 3
    out = runner.invoke(app, ["publish", str(people), "--spec", str(spec), "-o", str(tmp_path / "out.csv")])
    assert out.exit_code == 0, out.output


# -- interval widths and deep nesting ---------------------------------------------------------

BAD_WIDTHS = [
    ([1e-300, 1e300], "1e-300"),
    ([1e-320], "subnormal"),
    ([3, 1e20], "multiple"),
    ([1e308, 1.7e308], "multiple"),
]


@pytest.mark.parametrize("widths,said", BAD_WIDTHS)
def test_bad_interval_widths_in_a_spec_are_one_line(runner, tmp_path, people, widths, said):
    shown = ", ".join(repr(float(w)) for w in widths)
    spec = write_spec(tmp_path, f'age = {{ role = "categorical", intervals = [{shown}] }}\nsex = "categorical"')
    one_error_line(runner.invoke(app, ["publish", str(people), "--spec", str(spec), "-o",
                                       str(tmp_path / "out.csv")]), "'age'", said)
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("widths,said", BAD_WIDTHS)
@pytest.mark.parametrize("command", ["generalize", "lattice build"])
def test_bad_interval_widths_on_the_command_line_are_one_line(runner, tmp_path, people, widths, said, command):
    given = "age=" + ",".join(repr(float(w)) for w in widths)
    out = tmp_path / ("out.csv" if command == "generalize" else "out.duckdb")
    args = [*command.split(), str(people), "-o", str(out), "--qi", "age", "--intervals", given]
    if command == "generalize":
        args += ["--k", "3", "--levels", "age=1"]
    one_error_line(runner.invoke(app, args), "'age'", said)
    assert not out.exists()


def test_a_width_that_cannot_bin_the_data_in_float64_is_refused_by_name():
    column = pd.Series([1e308, -1e308, 0.0], name="x")
    with pytest.raises(ParameterError, match=r"'x'.*1e\+308"):
        interval_hierarchy(column, [1e308])
    with pytest.raises(ParameterError, match=r"'x'.*0\.5"):
        interval_hierarchy(pd.Series([1e300, 1e300 + 2**1000], name="x"), [0.5])
    with pytest.raises(DataError, match=r"'x'.*infinite.*data row 2"):
        interval_hierarchy(pd.Series([1.0, float("inf")], name="x"), [5])


def test_decimal_widths_nest_exactly_and_large_ones_are_exact():
    # 0.3 is three times 0.1 as written, though not as binary floats
    assert interval_hierarchy(pd.Series([0.05, 0.25, 0.7], name="x"), [0.1, 0.3]).depth == 4
    labels = interval_hierarchy(pd.Series([5, 10**15], name="x"), [10**16]).labels[1].tolist()
    assert labels == [f"0-{10**16 - 1}"]
    with pytest.raises(ParameterError, match="multiple"):
        load_spec({"privacy": {"k": 2}, "columns": {"x": {"role": "categorical", "intervals": [3, 1e20]}}})


def test_bad_widths_in_the_web_are_a_json_400(tmp_path):
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    application = create_app(max_upload_mb=1)
    try:
        client = TestClient(application, raise_server_exceptions=False)
        frame = pd.DataFrame({"age": np.arange(60) % 50 + 20, "sex": ["m", "f"] * 30})
        ds = client.post("/api/datasets", files={"file": ("p.csv", frame.to_csv(index=False).encode())}).json()["dataset"]
        for widths, said in BAD_WIDTHS:
            spec = {"privacy": {"k": 3}, "columns": {"age": {"role": "categorical", "intervals": widths},
                                                     "sex": "categorical"}}
            for r in (client.post("/api/publish", json={"dataset": ds, "spec": spec}),
                      client.post("/api/lattice/build", json={"dataset": ds, "quasi_identifiers": ["age"],
                                                              "intervals": {"age": widths}})):
                assert r.status_code == 400, r.text
                message = r.json()["error"]
                assert "\n" not in message and said in message and "'age'" in message, message
        deep = {"privacy": {"k": 3}, "columns": {"sex": "categorical"}, "method_params": {"x": 1}}
        for _ in range(600):
            deep["method_params"] = {"x": [deep["method_params"]["x"]]}
        r = client.post("/api/publish", json={"dataset": ds, "spec": deep})
        assert r.status_code == 400 and "nests too deeply" in r.json()["error"], r.text
    finally:
        application.state.sessions.close()


def test_a_deeply_nested_spec_is_one_line(runner, tmp_path, people):
    text = "a = " + "[" * 100_000
    spec = tmp_path / "deep.toml"
    spec.write_text(text, encoding="utf-8")
    one_error_line(runner.invoke(app, ["publish", str(people), "--spec", str(spec), "-o",
                                       str(tmp_path / "out.csv")]), "nests too deeply", "deep.toml")
    with pytest.raises(DataError, match="nests too deeply"):
        load_spec(text + "\n")
    nested: object = 1
    for _ in range(5000):
        nested = [nested]
    with pytest.raises(ParameterError, match="nests too deeply"):
        load_spec({"privacy": {"k": 2}, "columns": {"x": "numeric"}, "method_params": {"x": nested}})


# -- messages ---------------------------------------------------------------------------------


def _help_text(runner, *command: str) -> str:
    out = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "100"})
    assert out.exit_code == 0, out.output
    return " ".join(out.stdout.replace("│", " ").split())


def test_report_help_and_behaviour_agree_that_qi_is_required(runner, tmp_path, people):
    text = _help_text(runner, "report")
    qi = text[text.index("--qi"):text.index("--sensitive")]
    assert "Required" in qi and "Default" not in qi, qi
    one_error_line(runner.invoke(app, ["report", str(people), str(people), "-o", str(tmp_path / "r.json")]),
                   "--qi is required")


@pytest.mark.parametrize("k", ["0", "1", "-3"])
def test_demo_range_checks_k_by_name(runner, tmp_path, k):
    line = one_error_line(runner.invoke(app, ["demo", "--k", k, "--output-dir", str(tmp_path / "d")]),
                          f"k must be an integer in [2, n_rows=1080]; got {k}")
    assert "no rows" not in line and "n_rows=4" not in line


def test_publish_help_shows_its_sections(runner):
    text = _help_text(runner, "publish")
    assert "[privacy]" in text and "[columns]" in text and "[missing]" in text, text


def test_infinite_values_are_called_infinite_and_printed_plainly(runner, tmp_path):
    path = tmp_path / "inf.csv"
    path.write_text("a,b\n" + "".join(f"{i},{2 * i}\n" for i in range(10)) + "inf,3\n-inf,4\n,5\n1e300,6\n")
    for command in (["microaggregate", str(path), "-o", str(tmp_path / "o.csv")],
                    ["incremental", "base", str(path), "-o", str(tmp_path / "o.duckdb")]):
        line = one_error_line(runner.invoke(app, [*command, "--k", "3"]), "'a'", "infinite value inf",
                              "data row 11", "(2 such row(s)")
        assert "np." not in line and "missing" not in line
    path.write_text("a,b\n" + "".join(f"{i},{2 * i}\n" for i in range(10)) + ",5\ninf,3\n")
    line = one_error_line(runner.invoke(app, ["microaggregate", str(path), "-o", str(tmp_path / "o.csv"),
                                              "--k", "3"]), "'a'", "missing value", "data row 11", "(1 such")
    assert "np." not in line


def test_name_list_names_a_few_and_counts_the_rest():
    from incrowd.exceptions import name_list

    assert name_list(["a", "b"]) == "['a', 'b']"
    assert name_list([f"c{i}" for i in range(200_000)]) == "['c0', 'c1', 'c2', 'c3', 'c4'] and 199,995 more"


@pytest.mark.slow
def test_many_unknown_columns_give_a_short_line(runner, tmp_path, people):
    columns = "\n".join(f'u{i} = "numeric"' for i in range(200_000))
    spec = write_spec(tmp_path, columns)
    line = one_error_line(runner.invoke(app, ["publish", str(people), "--spec", str(spec), "-o",
                                              str(tmp_path / "out.csv")]), "'u0'", "and 199,995 more")
    assert len(line) < 500, len(line)
    wide = pd.DataFrame(np.zeros((3, 20_000)), columns=[f"w{i}" for i in range(20_000)])
    wide_path = tmp_path / "wide.csv"
    wide.to_csv(wide_path, index=False)
    for args in (["microaggregate", str(wide_path), "-o", str(tmp_path / "o.csv"), "--k", "2", "--qi", "nope"],
                 ["generalize", str(wide_path), "-o", str(tmp_path / "o.csv"), "--k", "2", "--qi", "nope",
                  "--intervals", "nope=5", "--levels", "nope=1"],
                 ["report", str(wide_path), str(wide_path), "--qi", "nope", "--json"]):
        line = one_error_line(runner.invoke(app, args), "'nope'", "and 19,995 more")
        assert len(line) < 500, (args[0], len(line))


def test_messages_lists_in_the_api_are_capped():
    from incrowd.privacy import verify_k_anonymity

    wide = pd.DataFrame(np.zeros((3, 20_000)), columns=[f"w{i}" for i in range(20_000)])
    with pytest.raises(IncrowdError) as info:
        verify_k_anonymity(wide, [f"x{i}" for i in range(1000)], 2)
    message = str(info.value)
    assert len(message) < 500 and re.search(r"and [\d,]+ more", message), message


@pytest.mark.parametrize("seed", [2**32, 2**70, -1])
def test_a_spec_seed_outside_the_clis_range_is_refused_by_name(runner, tmp_path, people, seed):
    # the spec's random_state takes the same range as --seed and the web's seed
    spec = write_spec(tmp_path, 'sex = "categorical"\nage = "numeric"', privacy=f"k = 3\nrandom_state = {seed}")
    with pytest.raises(ParameterError, match="random_state"):
        load_spec(spec)
    one_error_line(runner.invoke(app, ["publish", str(people), "--spec", str(spec), "-o", str(tmp_path / "out.csv")]),
                   "random_state", str(2**32 - 1))
    assert not (tmp_path / "out.csv").exists()


def _commands(group, path=()):
    from typer.main import get_command

    command = get_command(group) if not path else group
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name)) if getattr(sub, "commands", None) else [(*path, name)]


def test_every_command_s_help_wraps_each_paragraph_as_one(runner):
    """A paragraph of a command's description fills its lines: the program's help once kept the
    docstring's line breaks in every paragraph after the first, and the terminal's wrapping then
    left lines of a word or two ("order (a CSV")."""
    for command in _commands(app):
        out = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "80"})
        assert out.exit_code == 0, out.output
        lines = out.stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip().startswith("Usage:")) + 1
        end = next(i for i, line in enumerate(lines) if line.lstrip().startswith("╭"))
        paragraphs = [[]]
        for line in lines[start:end]:
            if line.strip():
                paragraphs[-1].append(line.rstrip())
            elif paragraphs[-1]:
                paragraphs.append([])
        for paragraph in paragraphs:
            for line, following in zip(paragraph, paragraph[1:]):
                # rich breaks a line only where the next word would pass the width
                assert len(line) + 1 + len(following.split()[0]) > 78, (command, line, following)
