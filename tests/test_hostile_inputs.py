"""Inputs a hostile tester tried: state files reached through links or stripped of their
checksum, transport and CSV files cut short, reports asked to guess.

Each one is refused with one ``error:`` line (exit status 2 in the CLI, nothing written) or
handled as a user expects; none is read silently as something else.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from test_incremental_lock import rows
from test_statfiles import _sas7bdat_sample
from typer.testing import CliRunner

from incrowd import DataError
from incrowd.cli import app
from incrowd.incremental import IncrementalMicroaggregation

EXE = [sys.executable, "-m", "incrowd.cli"]
TIMEOUT = 300




def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def tags_in(state: Path) -> list[str]:
    release, _ = IncrementalMicroaggregation.open(state).release()
    return sorted(release["tag"])


# --------------------------------------------------------------------------------------------
# One state file, whatever name it is reached by

HOLDER = textwrap.dedent("""
    import sys, time
    from incrowd.incremental._lock import describe_as, state_lock
    with describe_as("lock-holder-test"), state_lock(sys.argv[1], wait=60):
        print("held", flush=True)
        time.sleep(600)
""")


@pytest.mark.slow
def test_state_lock_is_per_file_not_per_name(tmp_path):
    real = tmp_path / "real.duckdb"
    IncrementalMicroaggregation.from_base(rows(40, "base", 0), real, 3, quasi_identifiers=["a", "b"])
    link = tmp_path / "link.duckdb"
    link.symlink_to(real.name)
    incs = []
    for i in range(4):
        frame = rows(5, f"inc{i}", 100 + i)
        frame.to_csv(tmp_path / f"inc{i}.csv", index=False)
        incs.append((tmp_path / f"inc{i}.csv", list(frame["tag"])))

    # a writer holding the real file's lock makes a writer through the link wait
    holder = subprocess.Popen(EXE[:1] + ["-c", HOLDER, str(real)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = digest(real)
        done = subprocess.run(EXE + ["incremental", "add", str(link), str(incs[0][0]), "--wait", "0"],
                              capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == 2, done.stderr
        lines = error_lines(done.stderr)
        assert len(lines) == 1 and "is being written by pid" in lines[0], done.stderr
        assert digest(real) == before
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=60)

    # concurrent adds through both names keep every increment once
    procs = [subprocess.Popen(EXE + ["incremental", "add", str(link if i % 2 else real), str(csv),
                                     "--strategy", "nn", "--quiet", "--wait", "300"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, (csv, _) in enumerate(incs)]
    results = [(p.wait(timeout=TIMEOUT), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert [rc for rc, _ in results] == [0, 0, 0, 0], results
    assert tags_in(real) == sorted([f"base-{i}" for i in range(40)] + [t for _, tags in incs for t in tags])
    assert link.is_symlink() and os.readlink(link) == real.name  # the link is kept, still a link

    # a second hard link would keep the old state after the rename: refused, nothing written
    hard = tmp_path / "hard.duckdb"
    os.link(real, hard)
    before = digest(real)
    out = CliRunner().invoke(app, ["incremental", "add", str(hard), str(incs[0][0]), "--quiet"])
    assert out.exit_code == 2, out.output
    lines = error_lines(out.stderr)
    assert len(lines) == 1 and "hard link" in lines[0] and "hard.duckdb" in lines[0], out.stderr
    assert digest(real) == before == digest(hard)
    assert os.stat(real).st_ino == os.stat(hard).st_ino  # still one file
    with pytest.raises(DataError, match="hard link"):
        IncrementalMicroaggregation.open(real).add(rows(4, "late", 9), "nn")
    assert os.stat(real).st_ino == os.stat(hard).st_ino


# --------------------------------------------------------------------------------------------
# A state file stripped of its checksum


def test_state_without_its_checksum_is_refused(tmp_path):
    state = tmp_path / "s.duckdb"
    IncrementalMicroaggregation.from_base(rows(40, "base", 0), state, 4, quasi_identifiers=["a", "b"])
    con = duckdb.connect(str(state))
    try:  # a tampered pass-through cell and mean, then the checksum row deleted
        con.execute("UPDATE passthrough SET \"col:tag\" = 'forged' WHERE row = 0")
        mean = json.loads(con.execute("SELECT value FROM meta WHERE key = 'mean'").fetchone()[0])
        con.execute("UPDATE meta SET value = ? WHERE key = 'mean'", [json.dumps([mean[0] + 10.0, *mean[1:]])])
        con.execute("DELETE FROM meta WHERE key = 'checksum'")
    finally:
        con.close()
    with pytest.raises(DataError, match="has no content checksum"):
        IncrementalMicroaggregation.open(state)
    out_path = tmp_path / "release.csv"
    out = CliRunner().invoke(app, ["incremental", "publish", str(state), "-o", str(out_path)])
    assert out.exit_code == 2, out.output
    lines = error_lines(out.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no content checksum" in lines[0], out.stderr
    assert "warning" not in out.stderr
    assert not out_path.exists()


# --------------------------------------------------------------------------------------------
# Statistical files cut short


def test_truncated_statistical_files_are_one_error_line(tmp_path):
    import pyreadstat

    from incrowd.io._tables import read_table

    frame = pd.DataFrame({"age": np.arange(300.0) % 90, "income": np.arange(300.0) * 7.5,
                          "town": [f"t{i % 13}" for i in range(300)]})
    whole = {}
    for name, write in [("v8.xpt", lambda p: pyreadstat.write_xport(frame, p)),
                        ("v5.xpt", lambda p: pyreadstat.write_xport(frame, p, file_format_version=5)),
                        ("s.sav", lambda p: pyreadstat.write_sav(frame, p)),
                        ("s.zsav", lambda p: pyreadstat.write_sav(frame, p, compress=True)),
                        ("s.dta", lambda p: pyreadstat.write_dta(frame, p))]:
        path = tmp_path / name
        write(str(path))
        assert len(read_table(path)) == 300  # whole files read as they are
        whole[name] = path.read_bytes()
    sample = _sas7bdat_sample()
    if sample is not None:  # pyreadstat cannot write sas7bdat: a sample file where one is installed
        whole["s.sas7bdat"] = Path(sample).read_bytes()
    for name, data in whole.items():
        cuts = {len(data) // 2, len(data) - 1, len(data) * 9 // 10}
        if name == "v8.xpt":  # at record boundaries too: the size alone does not show those
            cuts |= {len(data) // 2 // 80 * 80, len(data) - 80}
        for cut in sorted(cuts):
            path = tmp_path / f"cut-{cut}-{name}"
            path.write_bytes(data[:cut])
            with pytest.raises(DataError, match="cannot read") as caught:
                read_table(path)
            assert "\n" not in str(caught.value) and str(path) in str(caught.value), (name, cut)
    # version 5 records no row count; a cut at a record boundary inside a row is still seen
    numbers = tmp_path / "numbers.xpt"
    pyreadstat.write_xport(frame[["age", "income"]].assign(more=1.5), str(numbers), file_format_version=5)
    data = numbers.read_bytes()
    start = data.index(b"HEADER RECORD*******OBS     HEADER RECORD") + 80
    for records in (1, 2, 4):  # 80, 160, 320 bytes: 3 rows of 24 bytes and part of a fourth, ...
        path = tmp_path / f"v5-{records}.xpt"
        path.write_bytes(data[:start + 80 * records])
        with pytest.raises(DataError, match="last row, row .* is cut short"):
            read_table(path)
    assert len(read_table(numbers)) == 300
    # the command: one line, exit status 2, nothing written
    cut = tmp_path / "half.xpt"
    cut.write_bytes(whole["v8.xpt"][:len(whole["v8.xpt"]) // 2 // 80 * 80])
    out = tmp_path / "released.csv"
    done = CliRunner().invoke(app, ["microaggregate", str(cut), "--k", "3", "--qi", "age,income",
                                    "-o", str(out)])
    assert done.exit_code == 2, done.output
    lines = error_lines(done.stderr)
    assert len(lines) == 1 and "truncated" in lines[0] and "declares 300 rows" in lines[0], done.stderr
    assert not out.exists()


# --------------------------------------------------------------------------------------------
# A CSV quote that never closes


def test_csv_with_an_unclosed_quote_is_refused_by_every_reader(tmp_path):
    from incrowd.io._tables import read_table

    state = tmp_path / "s.duckdb"
    IncrementalMicroaggregation.from_base(rows(40, "base", 0), state, 4, quasi_identifiers=["a", "b"])
    late = rows(50, "late", 5)
    lines = late.to_csv(index=False).splitlines()
    lines[9] = lines[9] + ' "open'  # record 10: a quote in the middle of a field is text ...
    lines[10] = lines[10].rsplit(",", 1)[0] + ',"never closed'  # ... one opening a field must close
    bad = tmp_path / "late.csv"
    bad.write_text("\n".join(lines) + "\n")
    before = digest(state)
    out = CliRunner().invoke(app, ["incremental", "add", str(state), str(bad), "--quiet"])
    assert out.exit_code == 2, out.output
    errors = error_lines(out.stderr)
    assert len(errors) == 1 and str(bad) in errors[0] and "record 11" in errors[0] \
        and "never closed" in errors[0], out.stderr
    assert digest(state) == before
    for parse in (None, ["a", "b"], True):
        with pytest.raises(DataError, match="record 11 .* never closed"):
            read_table(bad, parse=parse)
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    resp = TestClient(create_app(max_upload_mb=1)).post(
        "/api/datasets", files={"file": ("late.csv", bad.read_bytes(), "text/csv")})
    assert resp.status_code == 400 and "record 11" in resp.text and "never closed" in resp.text, resp.text
    # quoted fields that close, a quote inside an unquoted field, a multi-line last field: read
    good = tmp_path / "good.csv"
    good.write_text('a,b,tag\n1,2,"x, ""y"""\n3,4,5 " inch\n5,6,"two\nlines"\n')
    assert read_table(good)["tag"].tolist() == ['x, "y"', '5 " inch', "two\nlines"]


# --------------------------------------------------------------------------------------------
# report --target on a CSV column of numbers


def test_report_models_a_numeric_csv_target_as_regression(tmp_path):
    import json
    import warnings as _warnings

    from incrowd.io._tables import read_table
    from incrowd.reporting import report

    rng = np.random.default_rng(3)
    n = 300
    age = rng.integers(18, 90, n)
    original = pd.DataFrame({
        "age": age.astype(str),
        "hours": (20 + age // 3 + rng.integers(0, 10, n)).astype(str),
        "income": (1000 + 40 * age + rng.normal(0, 50, n)).round(1).astype(str),
    })
    original.loc[7, "income"] = "NA"  # the NA vocabulary: a missing value, not a class
    (tmp_path / "orig.csv").write_text(original.to_csv(index=False))
    done = CliRunner().invoke(app, ["microaggregate", str(tmp_path / "orig.csv"), "--k", "5",
                                    "--qi", "age,hours", "-o", str(tmp_path / "rel.csv")])
    assert done.exit_code == 0, done.output
    out = CliRunner().invoke(app, ["report", str(tmp_path / "orig.csv"), str(tmp_path / "rel.csv"),
                                   "--qi", "age,hours", "--target", "income", "--json"])
    assert out.exit_code == 0, out.output
    assert "warning" not in out.stderr.lower(), out.stderr
    model = json.loads(out.stdout)["utility"]["model"]
    assert model["task"] == "regression", model
    assert model["dropped_rows"] == 1
    assert model["r2"]["original"] > 0.9 and model["r2"]["release"] > 0.5, model
    with _warnings.catch_warnings():
        _warnings.simplefilter("error")  # nothing leaks from scikit-learn either
        result = report(read_table(tmp_path / "orig.csv"), read_table(tmp_path / "rel.csv"),
                        ["age", "hours"], target="age", figures=False)
    assert result.utility["model"]["task"] == "regression"
    # a text target stays a classification, and its warnings stay inside
    labelled = original.assign(band=np.where(age < 40, "young", np.where(age < 65, "mid", "old")))
    with _warnings.catch_warnings():
        _warnings.simplefilter("error")
        result = report(labelled, labelled.assign(band=labelled["band"]), ["age", "hours"],
                        target="band", figures=False)
    assert result.utility["model"]["task"] == "classification"


# --------------------------------------------------------------------------------------------
# report without kept rows, on pass-through columns that do not tell rows apart


def test_report_refuses_an_ambiguous_alignment_and_takes_kept_rows(tmp_path):
    import json

    from incrowd.reporting import report

    rng = np.random.default_rng(11)
    n = 40
    original = pd.DataFrame({"age": rng.integers(20, 80, n), "income": rng.integers(1000, 5000, n),
                             "grp": ["a"] * (n - 3) + ["b"] * 3, "tag": [f"r{i}" for i in range(n)]})
    kept = np.array([i for i in range(n) if i not in (5, 6, 30)])
    release = original.iloc[kept].assign(age=lambda f: f["age"] // 10 * 10,
                                         income=lambda f: f["income"] // 500 * 500)
    o, r = tmp_path / "original.csv", tmp_path / "release.csv"
    original.drop(columns="tag").to_csv(o, index=False)
    release.drop(columns="tag").to_csv(r, index=False)
    base = ["report", str(o), str(r), "--qi", "age,income", "--json"]

    out = CliRunner().invoke(app, base)
    assert out.exit_code == 2, out.output
    lines = error_lines(out.stderr)
    assert len(lines) == 1 and "--kept-rows" in lines[0] and "'grp'" in lines[0], out.stderr
    with pytest.raises(DataError, match="kept_rows="):
        report(original.drop(columns="tag"), release.drop(columns="tag"), ["age", "income"], figures=False)

    rows_file = tmp_path / "kept.txt"
    rows_file.write_text("\n".join(str(i + 1) for i in kept) + "\n")  # data rows, the first is 1
    out = CliRunner().invoke(app, base + ["--kept-rows", str(rows_file)])
    assert out.exit_code == 0, out.output
    given = json.loads(out.stdout)
    truth = report(original.drop(columns="tag"), release.drop(columns="tag"), ["age", "income"],
                   kept_rows=kept, figures=False)
    assert given["about"]["suppressed"] == 3
    assert given["utility"]["numeric"]["il"] == pytest.approx(truth.utility["numeric"]["il"])

    # a pass-through column that tells every row apart still aligns by itself
    original.to_csv(o, index=False)
    release.to_csv(r, index=False)
    out = CliRunner().invoke(app, base)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["utility"]["numeric"]["il"] == pytest.approx(truth.utility["numeric"]["il"])

    for content, words in (("1\n3\n2\n", "increasing"), ("1\nx\n", "line 2"), ("0\n", "line 1")):
        rows_file.write_text(content)
        out = CliRunner().invoke(app, base + ["--kept-rows", str(rows_file)])
        assert out.exit_code == 2 and words in out.stderr, out.output
        assert len(error_lines(out.stderr)) == 1, out.stderr
