"""Command-line parameters: one error line for every bad value, checked before any input is read."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from incrowd import ONA, ParameterError, microaggregate, read_table, verify_k_anonymity
from incrowd.cli import app
from incrowd.generalization import max_suppression_count


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def one_error_line(out, *fragments):
    assert out.exit_code == 2, out.output
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert "Traceback" not in out.output and "╭" not in out.output  # no boxed usage panel
    assert out.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def people(tmp_path):
    rng = np.random.default_rng(2)
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


def commands_with_k(tmp):
    data, absent = str(tmp / "people.csv"), str(tmp / "absent")
    return {
        "microaggregate": ["microaggregate", data, "-o", absent + ".csv"],
        "incremental base": ["incremental", "base", data, "-o", absent + ".duckdb"],
        "incremental add": ["incremental", "add", absent + ".duckdb", data],
        "incremental plan": ["incremental", "plan", "--rows", "1000"],
        "generalize": ["generalize", data, "-o", absent + ".csv", "--levels", "sex=1"],
        "negotiate": ["negotiate", absent + ".duckdb"],
        "demo": ["demo"],
    }


@pytest.mark.parametrize("command", list(commands_with_k(__import__("pathlib").Path("."))))
@pytest.mark.parametrize("value", ["2.5", "five"])
def test_a_non_integer_k_is_one_error_line_on_every_command(runner, people, command, value):
    args = commands_with_k(people.parent)[command] + ["--k", value]
    one_error_line(runner.invoke(app, args), "'--k'", "integer")


def test_a_missing_option_or_unknown_command_is_one_error_line(runner, people):
    one_error_line(runner.invoke(app, ["microaggregate", str(people), "--k", "3"]), "--output")
    one_error_line(runner.invoke(app, ["microaggregat", str(people)]), "microaggregat")
    one_error_line(runner.invoke(app, ["microaggregate", str(people), "-o", "x.csv", "--k", "3", "--frobnicate"]),
                   "--frobnicate")


@pytest.mark.parametrize("seed", ["-1", "4294967296"])
@pytest.mark.parametrize("command", ["microaggregate", "incremental base"])
def test_a_seed_out_of_range_is_refused_by_name(runner, tmp_path, people, command, seed):
    out = tmp_path / ("o.csv" if command == "microaggregate" else "s.duckdb")
    args = [*command.split(), str(people), "-o", str(out), "--k", "3", "--method", "ona", "--seed", seed]
    one_error_line(runner.invoke(app, args), "'--seed'", "[0, 4294967295]", seed)
    assert not out.exists()


def test_the_largest_seed_is_accepted(runner, tmp_path, people):
    out = tmp_path / "o.csv"
    result = runner.invoke(app, ["microaggregate", str(people), "-o", str(out), "--k", "3", "--qi", "age,income",
                                 "--method", "ona", "--runs", "2", "--seed", "4294967295", "--json"])
    assert result.exit_code == 0, result.output


def test_a_negative_random_state_is_refused_by_name_in_the_api():
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ParameterError, match="random_state"):
        microaggregate(X, 3, "ona", random_state=-1)


@pytest.mark.parametrize("flag,value", [("--runs", "1000000000000"), ("--max-rounds", "99999999999999999999")])
@pytest.mark.parametrize("command", ["microaggregate", "incremental base"])
def test_caps_are_checked_before_the_input_is_read(runner, tmp_path, command, flag, value):
    absent = tmp_path / "absent.csv"  # a read would fail with "does not exist"
    args = [*command.split(), str(absent), "-o", str(tmp_path / "o.out"), "--k", "3", "--method", "ona", flag, value]
    line = one_error_line(runner.invoke(app, args), f"'{flag}'", "at most")
    assert "does not exist" not in line


def test_plan_columns_are_capped_before_any_timing(runner):
    one_error_line(runner.invoke(app, ["incremental", "plan", "--rows", "1000", "--columns", "100000000"]),
                   "'--columns'", "[1, 1000]")


def test_caps_in_the_api():
    with pytest.raises(ParameterError, match=r"runs must be an integer in \[1, 10000\]"):
        ONA(k=3, runs=10**12).fit(np.random.default_rng(0).normal(size=(20, 2)))
    with pytest.raises(ParameterError, match=r"max_rounds must be an integer in \[1, 1000000\]"):
        ONA(k=3, max_rounds=10**20).fit(np.random.default_rng(0).normal(size=(20, 2)))


def test_max_suppression_forms_and_exponent_notation():
    assert max_suppression_count("1000", 30162) == 1000
    assert max_suppression_count("0.05", 30162) == 1508
    assert max_suppression_count("5%", 30162) == 1508
    for bad in ("1e3", "1E-2", "2.5", "5e1%"):
        with pytest.raises(ParameterError, match="max_suppression must be a whole row count") as info:
            max_suppression_count(bad, 30162)
        assert "0.05" in str(info.value) and "5%" in str(info.value)
    with pytest.raises(ParameterError, match="exponent notation"):
        max_suppression_count("1e3", 30162)


@pytest.fixture
def lattice(runner, tmp_path, people):
    hier = tmp_path / "hier"
    hier.mkdir()
    (hier / "sex.csv").write_text("F;*\nM;*\n")
    path = tmp_path / "L.duckdb"
    out = runner.invoke(app, ["lattice", "build", str(people), "--hierarchies", str(hier), "--qi", "age,sex",
                              "--intervals", "age=5,10,20", "-o", str(path), "--json"])
    assert out.exit_code == 0, out.output
    return path


def test_negotiate_says_how_max_suppression_was_read(runner, lattice):
    one_error_line(runner.invoke(app, ["negotiate", str(lattice), "--k", "3", "--max-suppression", "1e3"]),
                   "exponent notation", "5%")
    for given, count in (("5%", 3), ("0.05", 3), ("3", 3)):
        out = runner.invoke(app, ["negotiate", str(lattice), "--k", "3", "--max-suppression", given, "--json"])
        assert out.exit_code == 0, out.output
        request = json.loads(out.stdout)["request"]
        assert request["max_suppression"] == count and request["max_suppression_given"] == given
    text = runner.invoke(app, ["negotiate", str(lattice), "--k", "3", "--max-suppression", "5%"]).stdout
    assert "max suppression 3 of 60 rows (--max-suppression 5%)" in text


def test_negotiate_on_a_data_file_says_it_is_not_a_lattice(runner, people):
    one_error_line(runner.invoke(app, ["negotiate", str(people), "--k", "3"]),
                   "not an incrowd lattice file", "not a DuckDB database", "incrowd lattice build")
    assert "Catalog Error" not in runner.invoke(app, ["negotiate", str(people), "--k", "3"]).stderr


def test_incremental_add_on_a_data_file_says_it_is_not_a_state_file(runner, people):
    rows = people.with_name("new.csv")
    rows.write_bytes(people.read_bytes())
    one_error_line(runner.invoke(app, ["incremental", "add", str(people), str(rows)]),
                   "not an incrowd state file", "incrowd incremental base")


@pytest.fixture
def comma_names(tmp_path):
    rng = np.random.default_rng(4)
    n = 30
    frame = pd.DataFrame({
        "id, internal": [f"r{i}" for i in range(n)],
        "a": rng.normal(size=n).round(3),
        "b,c": rng.normal(size=n).round(3),
        "note": [f"n{i}" for i in range(n)],
    })
    path = tmp_path / "commas.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("qi", [['"b,c",a'], ["a", '"b,c"'], ['a, "b,c"']])
def test_a_column_name_holding_a_comma_can_be_named_in_qi_and_id(runner, tmp_path, comma_names, qi):
    out = tmp_path / "out.csv"
    args = ["microaggregate", str(comma_names), "-o", str(out), "--k", "3", "--id", '"id, internal"', "--json"]
    for value in qi:
        args += ["--qi", value]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert sorted(summary["quasi_identifiers"]) == ["a", "b,c"]
    assert summary["identifiers_dropped"] == ["id, internal"]
    release = read_table(out)
    assert list(release.columns) == ["a", "b,c", "note"]
    assert verify_k_anonymity(release, ["a", "b,c"], 3).ok


def test_an_unbalanced_quote_in_qi_is_one_error_line(runner, tmp_path, comma_names):
    one_error_line(runner.invoke(app, ["microaggregate", str(comma_names), "-o", str(tmp_path / "o.csv"),
                                       "--k", "3", "--qi", '"b,c']), "--qi", "quoted")
