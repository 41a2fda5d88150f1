"""The ``incrowd`` command line, run in-process with typer's CliRunner."""

from __future__ import annotations

import gzip
import inspect
import json

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

import incrowd
from incrowd import METHODS, microaggregate, read_table, verify_k_anonymity
from incrowd.cli import _console, app

QIS = ["age", "income", "weight"]
N_ROWS = 23


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def people() -> pd.DataFrame:
    """23 rows: an identifier, three numeric QIs, and two pass-through columns between them."""
    rng = np.random.default_rng(7)
    return pd.DataFrame({
        "name": [f"person{i:02d}" for i in range(N_ROWS)],
        "age": rng.integers(18, 90, N_ROWS),
        "region": rng.choice(["north", "south", "east"], N_ROWS),
        "income": rng.normal(30000, 9000, N_ROWS).round(2),
        "weight": rng.normal(70, 12, N_ROWS).round(1),
        "note": [f"n{i}" for i in range(N_ROWS)],
    })


@pytest.fixture
def semicolon_csv(tmp_path, people):
    path = tmp_path / "people.csv"
    people.to_csv(path, sep=";", index=False)
    return path


def run_json(runner, args):
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return json.loads(result.stdout)  # fails unless stdout is exactly one JSON document


def check_published(out: pd.DataFrame, people: pd.DataFrame, k: int) -> None:
    """Identifier dropped, other columns in order and unchanged, QIs k-anonymous group means."""
    assert list(out.columns) == [c for c in people.columns if c != "name"]
    assert len(out) == len(people)
    for col in ("region", "note"):
        assert out[col].tolist() == people[col].tolist()
    report = verify_k_anonymity(out, QIS, k)
    assert report.ok and report.min_class_size >= k
    # Each published QI row is the mean of the original rows that share it.
    for _, idx in out.groupby(QIS).groups.items():
        np.testing.assert_allclose(out.loc[idx, QIS].iloc[0], people.loc[idx, QIS].mean(), rtol=1e-9)
    assert not np.allclose(out[QIS].to_numpy(float), people[QIS].to_numpy(float))


# ---------------------------------------------------------------------------------------------
# microaggregate: round trips


def test_csv_round_trip_keeps_delimiter_and_matches_the_api(runner, tmp_path, semicolon_csv, people):
    output = tmp_path / "published.csv"
    summary = run_json(runner, [
        "microaggregate", str(semicolon_csv), "-o", str(output), "--k", "3",
        "--method", "mdav-star", "--qi", ",".join(QIS), "--id", "name",
    ])
    assert summary["k_anonymous"] is True
    assert summary["min_group_size"] >= 3
    assert summary["rows"] == N_ROWS
    assert summary["method"] == "mdav-star" and summary["k"] == 3
    assert summary["quasi_identifiers"] == QIS and summary["identifiers_dropped"] == ["name"]
    assert summary["input"] == str(semicolon_csv) and summary["output"] == str(output)
    assert output.read_text().splitlines()[0] == "age;region;income;weight;note"
    out = read_table(output, parse=True)
    check_published(out, people, 3)
    expected = microaggregate(people, 3, "mdav-star", quasi_identifiers=QIS, identifiers="name")
    pd.testing.assert_frame_equal(out, expected.table, check_dtype=False)
    assert summary["information_loss"] == pytest.approx(expected.information_loss)


def test_parquet_round_trip_with_gamma(runner, tmp_path, people):
    source = tmp_path / "people.parquet"
    people.to_parquet(source, index=False)
    output = tmp_path / "published.parquet"
    summary = run_json(runner, [
        "microaggregate", str(source), "--output", str(output), "--k", "4",
        "--method", "v-mdav", "--gamma", "0.5", "--qi", "age", "--qi", "income,weight",
        "--id", "name",
    ])
    assert summary["params"] == {"gamma": 0.5}
    assert summary["k_anonymous"] is True and summary["min_group_size"] >= 4
    assert summary["rows"] == N_ROWS
    out = pd.read_parquet(output)
    check_published(out, people, 4)


@pytest.mark.parametrize("method,options,params", [
    ("mona-2d", ["--rho", "0.6", "--no-split-2k", "--diagonals", "unit"],
     {"rho": 0.6, "split_2k": False, "diagonals": "unit"}),
    ("ona", ["--runs", "3", "--max-rounds", "5", "--seed", "11"], {"runs": 3, "max_rounds": 5}),
])
def test_method_parameters(runner, tmp_path, semicolon_csv, people, method, options, params):
    output = tmp_path / "published.csv"
    summary = run_json(runner, ["microaggregate", str(semicolon_csv), "-o", str(output), "--k", "3",
                                "--method", method, "--qi", ",".join(QIS), "--id", "name", *options])
    for name, value in params.items():
        assert summary["params"][name] == value
    check_published(read_table(output, parse=True), people, 3)


def test_gzip_tab_csv_in_and_out(runner, tmp_path, people):
    source = tmp_path / "people.tsv.gz"
    with gzip.open(source, "wt") as fh:
        people.to_csv(fh, sep="\t", index=False)
    output = tmp_path / "published.csv.gz"
    summary = run_json(runner, ["microaggregate", str(source), "-o", str(output), "--k", "5",
                                "--qi", ",".join(QIS), "--id", "name"])
    assert summary["method"] == "mdav"  # the default
    with gzip.open(output, "rt") as fh:
        assert fh.readline().rstrip("\n") == "age\tregion\tincome\tweight\tnote"
    check_published(read_table(output, parse=True), people, 5)


def test_human_report(runner, tmp_path, semicolon_csv):
    output = tmp_path / ("a-long-output-file-name-that-would-not-fit-in-80-columns" * 2 + ".csv")
    result = runner.invoke(app, ["microaggregate", str(semicolon_csv), "-o", str(output),
                                 "--k", "3", "--qi", ",".join(QIS), "--id", "name"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # no progress when stderr is not a terminal
    lines = {line.split("  ", 1)[0]: line.split("  ", 1)[1].strip()
             for line in result.stdout.splitlines() if "  " in line}
    assert lines["rows"] == str(N_ROWS)
    assert int(lines["groups"]) == N_ROWS // 3
    assert lines["group size"].startswith("min 3, max ")
    assert lines["information loss"].split(" ")[0].replace(".", "").isdigit()
    assert lines["k-anonymous"].startswith("yes")
    assert lines["output"] == str(output)
    assert output.exists()


def test_progress_only_on_a_terminal_and_not_when_quiet(runner, tmp_path, semicolon_csv, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # as a terminal's console says: let rich decide
    monkeypatch.setattr(_console, "stderr_console",
                        lambda: Console(stderr=True, force_terminal=True, width=100))
    args = ["microaggregate", str(semicolon_csv), "-o", str(tmp_path / "o.csv"), "--k", "3",
            "--qi", ",".join(QIS), "--id", "name"]
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert "/4" in shown.stderr  # the step counter of the four stages
    quiet = runner.invoke(app, [*args, "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    as_json = runner.invoke(app, [*args, "--json"])
    assert as_json.exit_code == 0 and as_json.stderr == ""
    json.loads(as_json.stdout)


def test_lines_off_a_terminal_are_rich_s_byte_for_byte(capsys, monkeypatch):
    """``key  value`` lines written without rich (off a terminal) are what rich writes there:
    control characters, tabs, wide and combining characters, markup and emoji codes, long lines."""
    import io

    from rich.text import Text

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    rng = np.random.default_rng(62)
    alphabet = list("ab  ,.:[]/\\\t\r\n\a\b\v\f\x1b\x00\x7f\x85é漢字\u0301\u2028😀") + [":smile:", "[bold]", "x" * 120]
    cases = [[("rows", "4580"), ("output", "a\tb")], [("k", "x\ry")], [("key", "[red]not markup[/]")]]
    cases += [[(f"k{j}" * int(rng.integers(1, 4)), "".join(rng.choice(alphabet, int(rng.integers(0, 30)))))
               for j in range(int(rng.integers(1, 5)))] for _ in range(300)]
    for rows in cases:
        _console.print_lines(rows)
        buffer = io.StringIO()
        console = Console(file=buffer, highlight=False)
        width = max(len(key) for key, _ in rows) + 2
        for key, value in rows:
            console.print(Text.assemble((key.ljust(width), "bold"), value), soft_wrap=True)
        assert capsys.readouterr().out == buffer.getvalue(), rows


def test_warning_is_one_line_on_stderr(runner, tmp_path, people):
    source = tmp_path / "people.csv"
    people.assign(weight=1.0).to_csv(source, index=False)
    result = runner.invoke(app, ["microaggregate", str(source), "-o", str(tmp_path / "o.csv"),
                                 "--k", "3", "--qi", ",".join(QIS), "--id", "name", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["warnings"]
    assert result.stderr.startswith("warning: ") and "'weight'" in result.stderr
    assert len(result.stderr.splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# microaggregate: errors exit 2 with one line on stderr and write nothing


def _csv(edit=None):
    """Setup writing the people table, edited by ``edit(frame)``, as a semicolon CSV."""
    def setup(directory, people):
        frame = edit(people.astype(object)) if edit else people
        frame.to_csv(directory / "in.csv", sep=";", index=False)
        return directory / "in.csv"
    return setup


def _text(text):
    def setup(directory, people):
        (directory / "in.csv").write_text(text)
        return directory / "in.csv"
    return setup


def _set(column, row, value):
    def edit(frame):
        frame.loc[row, column] = value
        return frame
    return edit


# case: (input setup, options replacing the defaults, fragments the error line must contain)
ERROR_CASES = {
    "missing value in a QI": (
        _csv(_set("income", 3, None)), {}, ["'income'", "missing value", "data row 4"],
    ),
    "non-numeric text in a QI": (
        _csv(_set("age", 5, "forty")), {}, ["'age'", "must be numeric", "data row 6", "'forty'"],
    ),
    "k below 2": (_csv(), {"--k": "1"}, ["k must be an integer in [2, n_rows=23]; got 1"]),
    "k above rows": (_csv(), {"--k": "24"}, ["k must be an integer in [2, n_rows=23]; got 24"]),
    "unknown method": (
        _csv(), {"--method": "mdav-turbo"},
        ["unknown method 'mdav-turbo'", "known methods: mdav, mdav-plus, v-mdav, mdav-star, ona, ona-star, mondrian, mondrian-v, mondrian-v2d, mona, mona-2d, refine"],
    ),
    "unknown column": (_csv(), {"--qi": "age,salary"}, ["unknown quasi-identifier column 'salary'"]),
    "unknown identifier": (_csv(), {"--id": "nom"}, ["unknown identifier column 'nom'"]),
    "gamma with mdav": (
        _csv(), {"--method": "mdav", "--gamma": "0.3"},
        ["method 'mdav' has no parameter(s) ['gamma']"],
    ),
    "negative gamma": (
        _csv(), {"--method": "v-mdav", "--gamma": "-1"}, ["gamma must be >= 0.0; got -1.0"],
    ),
    "rho out of range": (_csv(), {"--method": "mona", "--rho": "1.5"}, ["rho must be in [0.0, 1.0]; got 1.5"]),
    "runs below 1": (_csv(), {"--method": "ona", "--runs": "0"}, ["runs must be an integer >= 1; got 0"]),
    "rho with mdav": (_csv(), {"--method": "mdav", "--rho": "0.5"}, ["method 'mdav' has no parameter(s) ['rho']"]),
    "empty file": (_text(""), {}, ["is empty"]),
    "header only": (_text("name;age;income;weight\n"), {}, ["no data rows"]),
    "missing input": (lambda directory, people: directory / "absent.csv", {}, ["does not exist"]),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors(runner, tmp_path, people, case):
    setup, options, fragments = ERROR_CASES[case]
    source = setup(tmp_path, people)
    output = tmp_path / "out.csv"
    options = {"--k": "3", "--qi": ",".join(QIS), "--id": "name", **options}
    args = ["microaggregate", str(source), "-o", str(output)]
    for name, value in options.items():
        args += [name, value]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    assert not output.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file


def test_error_leaves_an_existing_output_untouched(runner, tmp_path, semicolon_csv):
    output = tmp_path / "out.csv"
    output.write_text("earlier result\n")
    result = runner.invoke(app, ["microaggregate", str(semicolon_csv), "-o", str(output),
                                 "--k", "99", "--qi", ",".join(QIS), "--id", "name"])
    assert result.exit_code == 2
    assert output.read_text() == "earlier result\n"


@pytest.mark.parametrize("where", ["missing directory", "a directory"])
def test_output_location_errors(runner, tmp_path, semicolon_csv, where):
    output = tmp_path / "nowhere" / "out.csv" if where == "missing directory" else tmp_path
    named = output.parent if where == "missing directory" else output
    result = runner.invoke(app, ["microaggregate", str(semicolon_csv), "-o", str(output),
                                 "--k", "3", "--qi", ",".join(QIS), "--id", "name"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and repr(str(named)) in result.stderr


def test_usage_errors_are_one_error_line(runner, semicolon_csv):
    # typer's boxed usage panel became the one error shape of every command
    bad_int = runner.invoke(app, ["microaggregate", str(semicolon_csv), "-o", "x.csv", "--k", "five"])
    assert bad_int.exit_code == 2 and "--k" in bad_int.stderr
    missing = runner.invoke(app, ["microaggregate", str(semicolon_csv), "--k", "3"])
    assert missing.exit_code == 2 and "--output" in missing.stderr
    for out in (bad_int, missing):
        assert out.stderr.startswith("error: ") and len(out.stderr.splitlines()) == 1, out.stderr


# ---------------------------------------------------------------------------------------------
# demo, methods, --version


@pytest.mark.slow
def test_demo_writes_the_mdav_star_file_and_prints_the_table(runner, tmp_path):
    out_dir = tmp_path / "demo"
    result = runner.invoke(app, ["demo", "--k", "3", "--output-dir", str(out_dir)])
    assert result.exit_code == 0, result.output
    path = out_dir / "census_mdav-star_k3.csv"
    assert path.exists()
    published = read_table(path, parse=True)
    assert published.shape == (1080, 13)
    assert verify_k_anonymity(published, None, 3).ok
    text = result.stdout
    assert "CASC Census" in text and "1080 rows x 13" in text and "SSE/SST" in text
    assert str(path) in text
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert [r.split("│")[1].strip() for r in rows] == list(METHODS)
    for row in rows:
        cells = [c.strip() for c in row.split("│")[1:-1]]
        assert int(cells[2]) >= 3 and int(cells[3]) >= int(cells[2]) and cells[6] == "yes"
        assert 0 < float(cells[4]) < 100


@pytest.mark.slow
def test_demo_json(runner, tmp_path):
    summary = run_json(runner, ["demo", "--k", "4", "--output-dir", str(tmp_path)])
    assert [r["method"] for r in summary["results"]] == list(METHODS)
    assert all(r["k_anonymous"] and r["min_group_size"] >= 4 for r in summary["results"])
    assert summary["results"][2]["params"] == {"gamma": 0.2}
    assert summary["output"] == str(tmp_path / "census_mdav-star_k4.csv")


def test_demo_bad_k(runner, tmp_path):
    result = runner.invoke(app, ["demo", "--k", "1081", "--output-dir", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: k must be an integer in [2, n_rows=1080]")
    assert not (tmp_path / "d").exists()


def test_methods_json(runner):
    listing = run_json(runner, ["methods"])["methods"]
    assert [m["name"] for m in listing] == list(METHODS)
    for m in listing:
        cls = METHODS[m["name"]]
        assert m["estimator"] == cls.__name__
        assert m["description"] == inspect.getdoc(cls).splitlines()[0]
    assert [m["parameters"] for m in listing if m["name"] == "v-mdav"] == [{"gamma": 0.2}]


def test_methods_table(runner):
    result = runner.invoke(app, ["methods"])
    assert result.exit_code == 0
    names = [line.split()[0] for line in result.stdout.splitlines()[1:] if line[:1].strip()]
    assert names == list(METHODS)


def test_version(runner):
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"incrowd {incrowd.__version__}"
