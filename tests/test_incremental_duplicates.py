"""Without identifiers, a record already in the state is recognised by its fingerprint.

Re-adding rows (the same increment twice, the whole base again) would make groups of copies of
one record while the release claims k-anonymity; such an increment is refused unless the
caller says the rows are different people (--allow-duplicates / allow_duplicates=True), and the
report says how many distinct records the smallest group holds.
"""

from __future__ import annotations

import hashlib
import json

import duckdb
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from incrowd import DataError, DataWarning, read_table
from incrowd.cli import app
from incrowd.incremental import IncrementalMicroaggregation

K = 4


def people(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": rng.normal(50, 10, n).round(2),
        "b": rng.integers(0, 1000, n),
        "zip": [f"{v:05d}" for v in rng.integers(0, 3000, n)],
        "z": rng.integers(0, 5, n),
    })


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def built(tmp_path):
    # the base is built from its CSV file, as the CLI does, so re-adding that file meets the
    # same column types
    people(60, 0).to_csv(tmp_path / "base.csv", index=False)
    people(12, 1).to_csv(tmp_path / "late.csv", index=False)
    base, late = read_table(tmp_path / "base.csv"), read_table(tmp_path / "late.csv")
    path = tmp_path / "s.duckdb"
    IncrementalMicroaggregation.from_base(base, path, K, quasi_identifiers=["a", "b"])
    return path, base, late


def test_same_increment_twice_is_refused(built):
    path, _, late = built
    session = IncrementalMicroaggregation.open(path)
    session.add(late, "nn")
    before = digest(path)
    again = pd.concat([people(5, 7), late.iloc[3:6]], ignore_index=True)
    with pytest.raises(DataError, match=r"3 row\(s\) of the increment are already in state file .*"
                                        r"\(first: increment data row 6\).*--allow-duplicates"):
        session.add(again, "nn")
    assert digest(path) == before


def test_same_increment_twice_is_refused_by_the_cli(built, tmp_path):
    path, _, _ = built
    runner = CliRunner()
    assert runner.invoke(app, ["incremental", "add", str(path), str(tmp_path / "late.csv")]).exit_code == 0
    before = digest(path)
    out = runner.invoke(app, ["incremental", "add", str(path), str(tmp_path / "late.csv")])
    assert out.exit_code == 2
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: 12 row(s) of the increment are already in state"), out.stderr
    assert "(first: increment data row 1)" in lines[0]
    assert digest(path) == before


def test_whole_base_again_is_refused(built, tmp_path):
    path, base, _ = built
    before = digest(path)
    with pytest.raises(DataError, match=r"60 row\(s\) of the increment are already"):
        IncrementalMicroaggregation.open(path).add(base, "nn-split-end")
    out = CliRunner().invoke(app, ["incremental", "add", str(path), str(tmp_path / "base.csv")])
    assert out.exit_code == 2 and "60 row(s) of the increment are already" in out.stderr
    assert digest(path) == before


def test_allow_duplicates_accepts_and_the_report_counts_distinct_records(built, tmp_path):
    path, base, _ = built
    runner = CliRunner()
    out = runner.invoke(app, ["incremental", "add", str(path), str(tmp_path / "base.csv"),
                              "--allow-duplicates", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["duplicates_allowed"] == 60
    out = runner.invoke(app, ["incremental", "publish", str(path), "-o", str(tmp_path / "r.csv"), "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    # recount from the release: rows of a group that agree on every published value are one record
    session = IncrementalMicroaggregation.open(path)
    frame = pd.concat([base, base], ignore_index=True).assign(g=session.labels)
    distinct = frame.drop_duplicates().groupby("g").size()
    assert report["min_distinct_records"] == int(distinct.min()) < report["min_group_size"]
    assert report["groups_below_k_distinct"] == int((distinct < K).sum()) > 0
    shown = json.loads(runner.invoke(app, ["incremental", "show", str(path), "--json"]).stdout)
    assert shown["min_distinct_records"] == report["min_distinct_records"]
    text = runner.invoke(app, ["incremental", "publish", str(path), "-o", str(tmp_path / "r2.csv")]).stdout
    assert f"smallest group holds {report['min_distinct_records']} distinct record(s)" in text
    assert f"{report['groups_below_k_distinct']} group(s) hold fewer than k={K}" in text


def test_rows_repeated_within_one_increment_are_accepted(built):
    path, _, _ = built
    twins = pd.concat([people(3, 9)] * 3, ignore_index=True)  # three people with equal values, thrice
    session = IncrementalMicroaggregation.open(path)
    report = session.add(twins, "nn")
    assert report["rows"] == 9 and "duplicates_allowed" not in report
    with pytest.raises(DataError, match="already in state file"):
        session.add(twins.iloc[:1], "nn")


def test_fingerprints_ignore_int_versus_float_typing(built):
    path, base, _ = built
    session = IncrementalMicroaggregation.open(path)
    retyped = base.iloc[:5].astype({"b": "float64", "z": "float64"})
    with pytest.raises(DataError, match=r"5 row\(s\) of the increment are already"):
        session.add(retyped, "nn")
    as_text = base.iloc[:5].astype({"z": str})
    as_text["z"] = as_text["z"] + ".0"  # "3.0" is the number 3
    with pytest.raises(DataError, match=r"5 row\(s\) of the increment are already"):
        session.add(as_text, "nn")


def test_fingerprint_normalisation():
    from incrowd.incremental._fingerprint import fingerprints, new_key

    key = new_key()
    qi = np.array([[1.0], [2.0], [-0.0]])

    def fp(values):
        return fingerprints(qi, pd.DataFrame({"v": values}), key).tolist()

    assert fp([7, 8, 0]) == fp([7.0, 8.0, -0.0]) == fp(["7", "8.0", "0"])
    assert fp([7.0, np.nan, 1.0]) == fp(["7", "", "1"]) == fp(["7", None, "1.0"])
    assert fp(["00042", "x", "1"]) != fp([42, "x", "1"])  # a leading zero is a code, kept as text
    assert fp([7, 8, 0])[:2] == fingerprints(np.array([[1], [2]]), pd.DataFrame({"v": [7, 8]}), key).tolist()
    assert fp([7, 8, 0]) != fingerprints(qi, pd.DataFrame({"v": [7, 8, 0]}), new_key()).tolist()


def test_with_identifiers_every_row_is_a_distinct_record(tmp_path):
    base = people(40, 3).assign(pid=[f"p{i}" for i in range(40)])
    path = tmp_path / "ids.duckdb"
    session = IncrementalMicroaggregation.from_base(base, path, K, quasi_identifiers=["a", "b"], identifiers="pid")
    # equal values under new identifiers are new people: accepted, no duplicate check
    same_values = base.assign(pid=[f"q{i}" for i in range(40)])
    session.add(same_values, "nn")
    report = session.publish().summary()
    assert report["min_distinct_records"] == report["min_group_size"]
    assert report["groups_below_k_distinct"] == 0
    with pytest.raises(DataError, match="already in the state"):  # the same identifiers again
        session.add(base.iloc[:3], "nn")


def test_state_without_fingerprints_warns_on_add(built):
    path, _, late = built
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE members DROP COLUMN fingerprint")
    con.execute("UPDATE meta SET value = 'false' WHERE key = 'fingerprints'")
    con.execute("DELETE FROM meta WHERE key IN ('fingerprint_key', 'checksum')")
    # as an incrowd that stored checksums but no fingerprints wrote it
    from incrowd.incremental import _integrity, _state

    meta, tables = _state._read_back(con)
    con.execute("INSERT INTO meta VALUES (?, ?)",
                [_integrity.CHECKSUM_KEY, json.dumps(_integrity.content_checksum(meta, _state._named(tables)))])
    con.close()
    session = IncrementalMicroaggregation.open(path)
    with pytest.warns(DataWarning, match="keeps no row fingerprints"):
        session.add(late, "nn")
    assert session.publish().summary()["min_distinct_records"] is None
