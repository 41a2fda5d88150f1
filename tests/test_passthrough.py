"""Columns that are not quasi-identifiers pass through unchanged: byte-identical CSV text,
identical Parquet types; a named pandas index is kept; duplicated column names are refused."""

from __future__ import annotations

import datetime
import json

import csvcases as cc
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from incrowd import DataError, microaggregate, read_table, write_table
from incrowd.cli import app

N = 30


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def invoke_ok(runner, args):
    result = runner.invoke(app, [*args, "--json", "-q"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def invoke_error(runner, args):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def write_csv(path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# CSV text, byte for byte


@pytest.mark.parametrize("sep,newline", [(",", "\n"), (";", "\r\n"), ("\t", "\n")])
def test_cli_microaggregate_passes_text_through_byte_identical(runner, tmp_path, sep, newline):
    text = cc.to_text(cc.HEADER, cc.rows(N), sep, newline)
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    write_csv(src, text)
    invoke_ok(runner, ["microaggregate", str(src), "-o", str(out), "--k", "3",
                       "--qi", ",".join(cc.QIS), "--id", cc.ID])
    got = out.read_bytes().decode("utf-8")
    assert got == cc.expected_release(text, got, sep, newline)
    _, body = cc.parse(got, sep)
    zips = [r[0] for r in body]
    assert zips[:2] == ["02134", "00501"] and "NA" in [r[2] for r in body]


def test_cli_microaggregate_compressed_output_keeps_text(runner, tmp_path):
    import gzip

    text = cc.to_text(cc.HEADER, cc.rows(N))
    src, out = tmp_path / "in.csv", tmp_path / "out.csv.gz"
    write_csv(src, text)
    invoke_ok(runner, ["microaggregate", str(src), "-o", str(out), "--k", "3",
                       "--qi", ",".join(cc.QIS), "--id", cc.ID])
    got = gzip.decompress(out.read_bytes()).decode("utf-8")
    assert got == cc.expected_release(text, got)


def test_cli_generalize_passes_text_through_byte_identical(runner, tmp_path):
    text = cc.to_text(cc.HEADER, cc.rows(N), ",", "\r\n")
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    write_csv(src, text)
    invoke_ok(runner, ["generalize", str(src), "-o", str(out), "--levels", "age=2",
                       "--intervals", "age=10", "--k", "2", "--id", cc.ID])
    got = out.read_bytes().decode("utf-8")
    assert got == cc.expected_release(text, got, ",", "\r\n", qis=["age"])
    assert {r[1] for r in cc.parse(got)[1]} == {"*"}


def test_cli_incremental_passes_text_through_byte_identical(runner, tmp_path):
    base_rows, inc_rows = cc.rows(N), cc.rows(12, start=N)
    base, inc = tmp_path / "base.csv", tmp_path / "inc.csv"
    write_csv(base, cc.to_text(cc.HEADER, base_rows, ";", "\r\n"))
    write_csv(inc, cc.to_text(cc.HEADER, inc_rows, ";", "\r\n"))
    state, out = tmp_path / "s.db", tmp_path / "release.csv"
    invoke_ok(runner, ["incremental", "base", str(base), "-o", str(state), "--k", "3",
                       "--qi", ",".join(cc.QIS), "--id", cc.ID])
    invoke_ok(runner, ["incremental", "add", str(state), str(inc), "--strategy", "nn"])
    invoke_ok(runner, ["incremental", "publish", str(state), "-o", str(out)])
    got = out.read_bytes().decode("utf-8")
    everything = cc.to_text(cc.HEADER, base_rows + inc_rows, ";", "\r\n")
    assert got == cc.expected_release(everything, got, ";", "\r\n")


def test_api_file_helpers_round_trip_byte_identical(tmp_path):
    text = cc.to_text(cc.HEADER, cc.rows(N))
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    write_csv(src, text)
    frame = read_table(src)
    assert frame["zip"].tolist()[:2] == ["02134", "00501"] and frame["count"].tolist()[1] == ""
    result = microaggregate(frame, 3, quasi_identifiers=cc.QIS, identifiers=cc.ID)
    write_table(result.table, out)
    got = out.read_bytes().decode("utf-8")
    assert got == cc.expected_release(text, got)
    # read and written untouched: the same bytes
    again = tmp_path / "again.csv"
    write_table(read_table(src), again)
    assert again.read_bytes() == src.read_bytes()


def test_api_leaves_non_qi_frame_columns_alone():
    frame = pd.DataFrame({
        "age": np.arange(12, dtype=float), "zip": ["02134"] * 12,
        "n": pd.array([1, None] * 6, dtype="Int64"), "s": pd.array(["a", None] * 6, dtype="string"),
    })
    result = microaggregate(frame, 3, quasi_identifiers=["age"])
    for col in ("zip", "n", "s"):
        pd.testing.assert_series_equal(result.table[col], frame[col])


def test_qi_na_vocabulary_and_non_numeric_errors(runner, tmp_path):
    from incrowd.io._tables import NA_VALUES

    assert {"NA", "null", "None", "#N/A", ""} <= set(NA_VALUES)
    rows = cc.rows(N)
    rows[4][cc.HEADER.index("age")] = "null"
    src = tmp_path / "in.csv"
    write_csv(src, cc.to_text(cc.HEADER, rows))
    line = invoke_error(runner, ["microaggregate", str(src), "-o", str(tmp_path / "o.csv"), "--k", "3",
                                 "--qi", "age", "--id", cc.ID])
    assert "'age'" in line and "missing value in data row 5" in line
    rows[4][cc.HEADER.index("age")] = "abc"
    write_csv(src, cc.to_text(cc.HEADER, rows))
    line = invoke_error(runner, ["microaggregate", str(src), "-o", str(tmp_path / "o.csv"), "--k", "3",
                                 "--qi", "age", "--id", cc.ID])
    assert "'age'" in line and "data row 5" in line and "'abc'" in line
    assert not (tmp_path / "o.csv").exists()
    with pytest.raises(DataError, match="data row 5"):
        microaggregate(read_table(src), 3, quasi_identifiers=["age"], identifiers=cc.ID)


# ---------------------------------------------------------------------------------------------
# Parquet types


def typed_table(n: int = N) -> pa.Table:
    rng = np.random.default_rng(3)
    return pa.table({
        "age": pa.array(rng.integers(18, 80, n), pa.int64()),
        "income": pa.array(rng.normal(3e4, 5e3, n)),
        "n32": pa.array([None if i % 4 == 0 else i for i in range(n)], pa.int32()),
        "big": pa.array([None if i % 3 == 0 else 2**62 + i for i in range(n)], pa.int64()),
        "label": pa.array([None if i % 5 == 0 else f"x{i}" for i in range(n)], pa.large_string()),
        "day": pa.array([datetime.date(2024, 1, 1 + i % 28) for i in range(n)], pa.date32()),
        "ok": pa.array([None if i % 7 == 0 else bool(i % 2) for i in range(n)], pa.bool_()),
        "f32": pa.array(np.arange(n, dtype=np.float32)),
    })


def assert_passthrough_types(src, out, qis):
    s_in, s_out = pq.read_schema(src), pq.read_schema(out)
    t_in, t_out = pq.read_table(src), pq.read_table(out)
    for name in s_in.names:
        if name in qis:
            continue
        assert s_out.field(name).type == s_in.field(name).type, name
        assert t_out.column(name).to_pylist() == t_in.column(name).to_pylist(), name


def test_cli_parquet_keeps_arrow_types_of_pyarrow_file(runner, tmp_path):
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(typed_table(), src)
    invoke_ok(runner, ["microaggregate", str(src), "-o", str(out), "--k", "3", "--qi", "age,income"])
    assert_passthrough_types(src, out, ["age", "income"])


def test_parquet_keeps_pandas_nullable_types_cli_and_api(runner, tmp_path):
    frame = pd.DataFrame({
        "age": np.arange(N) % 40 + 20, "income": np.linspace(1, 2, N),
        "n": pd.array([None if i % 3 == 0 else i for i in range(N)], dtype="Int64"),
        "s": pd.array([None if i % 4 == 0 else f"s{i}" for i in range(N)], dtype="string"),
        "c": pd.Categorical(["a", "b", "c"] * (N // 3)),
    })
    src = tmp_path / "in.parquet"
    frame.to_parquet(src, index=False)
    out = tmp_path / "out.parquet"
    invoke_ok(runner, ["microaggregate", str(src), "-o", str(out), "--k", "3", "--qi", "age,income"])
    assert_passthrough_types(src, out, ["age", "income"])
    back = pd.read_parquet(out)
    for col in ("n", "s", "c"):
        assert back[col].dtype == frame[col].dtype, col
        pd.testing.assert_series_equal(back[col], frame[col])
    api_out = tmp_path / "api.parquet"
    result = microaggregate(read_table(src), 3, quasi_identifiers=["age", "income"])
    write_table(result.table, api_out)
    assert_passthrough_types(src, api_out, ["age", "income"])
    gen_out = tmp_path / "gen.parquet"
    invoke_ok(runner, ["generalize", str(src), "-o", str(gen_out), "--levels", "age=2",
                       "--intervals", "age=10", "--k", "2"])
    assert_passthrough_types(src, gen_out, ["age"])


def test_incremental_parquet_release_keeps_arrow_types(runner, tmp_path):
    table = typed_table(40)
    base, inc = tmp_path / "base.parquet", tmp_path / "inc.parquet"
    pq.write_table(table.slice(0, 30), base)
    pq.write_table(table.slice(30), inc)
    state, out = tmp_path / "s.db", tmp_path / "release.parquet"
    invoke_ok(runner, ["incremental", "base", str(base), "-o", str(state), "--k", "3", "--qi", "age,income"])
    invoke_ok(runner, ["incremental", "add", str(state), str(inc), "--strategy", "nn"])
    invoke_ok(runner, ["incremental", "publish", str(state), "-o", str(out)])
    whole = tmp_path / "whole.parquet"
    pq.write_table(table, whole)
    assert_passthrough_types(whole, out, ["age", "income"])


def test_named_pandas_index_is_kept_as_a_column(runner, tmp_path):
    frame = pd.DataFrame({"age": np.arange(N) % 30 + 20, "income": np.linspace(0, 1, N),
                          "pid": [f"id{i}" for i in range(N)]}).set_index("pid")
    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    frame.to_parquet(src)
    read = read_table(src)
    assert "pid" in read.columns and read["pid"].tolist() == [f"id{i}" for i in range(N)]
    invoke_ok(runner, ["microaggregate", str(src), "-o", str(out), "--k", "3", "--qi", "age,income"])
    assert pd.read_parquet(out)["pid"].tolist() == [f"id{i}" for i in range(N)]
    csv_out = tmp_path / "out.csv"
    invoke_ok(runner, ["microaggregate", str(src), "-o", str(csv_out), "--k", "3", "--qi", "age,income"])
    assert csv_out.read_text().splitlines()[0].split(",") == ["age", "income", "pid"]


# ---------------------------------------------------------------------------------------------
# duplicated column names


def test_duplicated_csv_column_names_are_refused(runner, tmp_path):
    src = tmp_path / "dup.csv"
    src.write_text("a,a,b\n" + "".join(f"{i},{i},{i}\n" for i in range(10)))
    out = tmp_path / "o.csv"
    for args in (["microaggregate", str(src), "-o", str(out), "--k", "2"],
                 ["generalize", str(src), "-o", str(out), "--levels", "b=1", "--intervals", "b=5", "--k", "2"],
                 ["incremental", "base", str(src), "-o", str(tmp_path / "s.db"), "--k", "2"]):
        line = invoke_error(runner, args)
        assert "'a'" in line and "more than once" in line
    assert not out.exists() and not (tmp_path / "s.db").exists()
    with pytest.raises(DataError, match="column 'a' more than once"):
        read_table(src)


def test_duplicated_parquet_column_names_are_refused(runner, tmp_path):
    src = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1, 2]), pa.array([3, 4]), pa.array([5, 6])],
                                        names=["x", "b", "x"]), src)
    with pytest.raises(DataError, match="column 'x' more than once"):
        read_table(src)
    line = invoke_error(runner, ["microaggregate", str(src), "-o", str(tmp_path / "o.csv"), "--k", "2"])
    assert "'x'" in line


def test_duplicated_column_names_refused_on_web_upload():
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    client = TestClient(create_app(max_upload_mb=1))
    body = ("a,a,b\n" + "".join(f"{i},{i},{i}\n" for i in range(10))).encode()
    resp = client.post("/api/datasets", files={"file": ("dup.csv", body, "text/csv")})
    assert resp.status_code == 400, resp.text
    assert "'a'" in resp.text and "more than once" in resp.text and "dup.csv" in resp.text


def test_bom_and_padded_numbers_round_trip(runner, tmp_path):
    body = cc.rows(N)
    for i, row in enumerate(body):
        row[cc.HEADER.index("age")] = f" {20 + i % 9} "  # padded numbers are still numbers
    text = "\ufeff" + cc.to_text(cc.HEADER, body)
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    write_csv(src, text)
    invoke_ok(runner, ["microaggregate", str(src), "-o", str(out), "--k", "3",
                       "--qi", ",".join(cc.QIS), "--id", cc.ID])
    got = out.read_bytes().decode("utf-8")
    assert got.startswith("\ufeffzip,")
    assert got[1:] == cc.expected_release(text[1:], got[1:])


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_carriage_return_inside_a_field_stays_quoted(tmp_path, suffix):
    import gzip

    body = cc.rows(N)
    for row in body[:3]:
        row[cc.HEADER.index("note")] = "one\rtwo"
    text = cc.to_text(cc.HEADER, body)
    assert '"one\rtwo"' in text
    src, out = tmp_path / "in.csv", tmp_path / f"out{suffix}"
    write_csv(src, text)
    frame = read_table(src)
    assert frame["note"].tolist()[:3] == ["one\rtwo"] * 3
    write_table(frame, out)
    raw = out.read_bytes()
    got = (gzip.decompress(raw) if suffix.endswith(".gz") else raw).decode("utf-8")
    assert got == text
