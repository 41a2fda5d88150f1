"""A state file edited outside incrowd is refused on open: invariants first, then the checksum.

Refused by the API (DataError naming the file and what is wrong) and by every CLI command
that opens a state (show, add, publish): one ``error:`` line, exit status 2, nothing written.
"""

from __future__ import annotations

import hashlib
import json
import warnings

import duckdb
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from incrowd import DataError
from incrowd.cli import app
from incrowd.incremental import IncrementalMicroaggregation


def people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": rng.normal(50, 10, n).round(2),
        "b": rng.integers(0, 30, n),
        "c": [f"t{seed}-{i}" for i in range(n)],
    })


@pytest.fixture
def state(tmp_path):
    path = tmp_path / "s.duckdb"
    session = IncrementalMicroaggregation.from_base(people(60, 0), path, 5, quasi_identifiers=["a", "b"])
    session.add(people(12, 1), "nn-split-end")
    people(8, 2).to_csv(tmp_path / "late.csv", index=False)
    return path


def edit(path, *sql):
    con = duckdb.connect(str(path))
    try:
        for statement in sql:
            con.execute(statement)
    finally:
        con.close()


def set_meta(key: str, value: str) -> str:
    return f"UPDATE meta SET value = '{value}' WHERE key = '{key}'"


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


CONTRADICTIONS = {
    "k=1": ([set_meta("k", "1")], "k is 1, must be an integer >= 2"),
    "k=0": ([set_meta("k", "0")], "k is 0, must be an integer >= 2"),
    "k=5.7": ([set_meta("k", "5.7")], "k is 5.7, must be an integer >= 2"),
    "sums": (["UPDATE groups SET sum_0 = sum_0 + 1 WHERE group_id = 0"], "group sums disagree with the member rows"),
    "sizes": (["UPDATE groups SET size = size + 1 WHERE group_id = 0"], "group sizes disagree with the member rows"),
    "renamed-qi": ([set_meta("quasi_identifiers", '["a", "bb"]')], "do not partition the columns"),
    "nan-mean": ([set_meta("mean", "[NaN, 1.0]")], "mean is [nan, 1.0], must be 2 finite number(s)"),
    "zero-scale": ([set_meta("scale", "[0.0, 1.0]")], "scale is [0.0, 1.0], must be positive"),
    "batch-log": ([set_meta("batches", '[{"batch": 0}]')], "batch log entry 0 has kind None"),
    "batch-rows": (["UPDATE meta SET value = replace(value, '\"rows\": 12', '\"rows\": 13') WHERE key = 'batches'"],
                   "the batch log says [60, 13] rows per batch"),
    "renamed-column": (['ALTER TABLE groups RENAME COLUMN sum_1 TO sum_9'], "table 'groups' has columns"),
}


@pytest.mark.parametrize("case", list(CONTRADICTIONS))
def test_contradicting_state_is_refused_by_the_api(state, case):
    sql, message = CONTRADICTIONS[case]
    edit(state, *sql)
    with pytest.raises(DataError) as info:
        IncrementalMicroaggregation.open(state)
    text = str(info.value)
    assert text.startswith(f"state file {str(state)!r} was modified outside incrowd: "), text
    assert message in text, text


@pytest.mark.parametrize("command", ["show", "add", "publish"])
@pytest.mark.parametrize("case", ["k=1", "k=5.7", "sums", "renamed-qi", "nan-mean", "batch-log"])
def test_contradicting_state_is_refused_by_every_cli_command(state, tmp_path, case, command):
    sql, message = CONTRADICTIONS[case]
    edit(state, *sql)
    before = digest(state)
    args = {"show": ["show", str(state), "--json"],
            "add": ["add", str(state), str(tmp_path / "late.csv")],
            "publish": ["publish", str(state), "-o", str(tmp_path / "out.csv")]}[command]
    out = CliRunner().invoke(app, ["incremental"] + args)
    assert out.exit_code == 2, out.output
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], out.stderr
    assert "modified outside incrowd" in lines[0]
    assert out.exception is None or isinstance(out.exception, SystemExit)
    assert digest(state) == before
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("sql", [
    "UPDATE passthrough SET \"col:c\" = 'someone else' WHERE row = 3",
    "UPDATE meta SET value = '[50.5, ' || json_extract(value, '$[1]')::VARCHAR || ']' WHERE key = 'mean'",
    "UPDATE members SET batch = 1 - batch WHERE row IN (0, 70)",
])
def test_edit_that_breaks_no_invariant_is_caught_by_the_checksum(state, sql):
    edit(state, sql)
    with pytest.raises(DataError, match="modified outside incrowd: .*checksum mismatch"):
        IncrementalMicroaggregation.open(state)


def _stored_checksum(path):
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'checksum'").fetchone()
    finally:
        con.close()
    return None if row is None else json.loads(row[0])


def test_every_write_records_a_checksum_the_next_open_accepts(tmp_path):
    path = tmp_path / "w.duckdb"
    checksums = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "no checksum" warning on any open
        session = IncrementalMicroaggregation.from_base(people(40, 3), path, 4, quasi_identifiers=["a", "b"])
        checksums.append(_stored_checksum(path))
        for i, strategy in enumerate(["nn", "2mdav", "nn-split-mid"]):
            session.add(people(9, 10 + i), strategy)
            checksums.append(_stored_checksum(path))
            IncrementalMicroaggregation.open(path)
        CliRunner().invoke(app, ["incremental", "base", "x.csv", "-o", str(path)])  # refused: exists
    assert all(isinstance(c, str) and c.startswith("sha256:") for c in checksums)
    assert len(set(checksums)) == len(checksums)


def test_state_without_a_checksum_is_refused(state, tmp_path):
    # every incrowd that writes format version 1 stores a checksum: a missing one was removed
    before = digest(state)
    edit(state, "DELETE FROM meta WHERE key = 'checksum'")
    edited = digest(state)
    with pytest.raises(DataError, match="has no content checksum"):
        IncrementalMicroaggregation.open(state)
    for argv in (["show", str(state)], ["add", str(state), str(tmp_path / "late.csv")]):
        out = CliRunner().invoke(app, ["incremental", *argv])
        assert out.exit_code == 2 and "no content checksum" in out.stderr, out.output
        assert "warning" not in out.stderr
    assert digest(state) == edited != before

# seconds in all: the full suite (make test) runs them, the quick tier leaves them out
pytestmark = pytest.mark.slow
