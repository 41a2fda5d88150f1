"""Incremental publication (paper 002): strategies, state file, publishing, bad input."""

from __future__ import annotations

import hashlib
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
from hypothesis import given, settings
from hypothesis import strategies as st

import reference
from incrowd import DataError, ParameterError, information_loss, microaggregate, verify_k_anonymity
from incrowd.incremental import STRATEGIES, IncrementalMicroaggregation
from incrowd.microaggregation.mdav._mdav_kernel import mdav_labels

pytestmark = pytest.mark.filterwarnings("ignore::incrowd.DataWarning")

QIS = ["a", "b", "c"]


def people(n: int, seed: int = 0, m: int = 3) -> pd.DataFrame:
    """n rows: an identifier, m Gaussian QIs, and a pass-through column in between."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"pid": [f"p{seed}-{i:05d}" for i in range(n)]})
    for j, name in enumerate("abcdefgh"[:m]):
        frame[name] = rng.standard_normal(n).round(6)
        if j == 0:
            frame["region"] = rng.choice(["north", "south"], n)
    return frame


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Strategies against the plain reference


@pytest.mark.parametrize("strategy", ["nn", "nn-split-mid", "nn-split-end"])
@pytest.mark.parametrize("inertial", [False, True])
@pytest.mark.parametrize("k", [3, 5])
def test_strategies_equal_the_reference(tmp_path, strategy, inertial, k):
    data = people(400, seed=k)
    n0 = 240  # nu = 0.4: enough increment rows that groups reach 2k and split
    session = IncrementalMicroaggregation.from_base(
        data.iloc[:n0], tmp_path / "s.duckdb", k, identifiers="pid", quasi_identifiers=QIS)
    base_labels = session.labels
    st_ = session._state
    Z_old = st_.points.copy()
    report = session.add(data.iloc[n0:], strategy, inertial=inertial)
    Z_new = (data.iloc[n0:][QIS].to_numpy(float) - st_.mean) / st_.scale
    split = {"nn": "none", "nn-split-mid": "mid", "nn-split-end": "end"}[strategy]
    expected = reference.incremental_adjoin(Z_old, base_labels, Z_new, k, inertial, split)
    np.testing.assert_array_equal(session.labels, expected)
    if strategy != "nn":
        assert report["splits"] > 0  # the case exercises splitting
        assert np.bincount(session.labels).max() <= 2 * k - 1 or strategy == "nn-split-mid"


def test_2mdav_is_mdav_on_the_increment(tmp_path):
    data = people(300, seed=1)
    session = IncrementalMicroaggregation.from_base(
        data.iloc[:200], tmp_path / "s.duckdb", 4, identifiers="pid", quasi_identifiers=QIS)
    g0 = session.n_groups
    st_ = session._state
    report = session.add(data.iloc[200:], "2mdav")
    Z_new = (data.iloc[200:][QIS].to_numpy(float) - st_.mean) / st_.scale
    np.testing.assert_array_equal(session.labels[200:], reference.mdav(Z_new, 4) + g0)
    np.testing.assert_array_equal(session.labels[:200], st_.labels)  # base groups untouched
    assert report["note"] is None and report["groups_after"] == g0 + 25


def test_2mdav_with_fewer_than_k_rows_adjoins_and_says_so(tmp_path):
    data = people(103, seed=2)
    session = IncrementalMicroaggregation.from_base(
        data.iloc[:100], tmp_path / "s.duckdb", 5, identifiers="pid", quasi_identifiers=QIS)
    report = session.add(data.iloc[100:], "2mdav")
    assert report["groups_after"] == report["groups_before"]
    assert "fewer than k=5" in report["note"]
    assert np.bincount(session.labels).min() >= 5


# ---------------------------------------------------------------------------------------------
# Publishing and the distortion report


def test_publish_reports_paper_quantities_and_verifies(tmp_path):
    data = people(600, seed=3)
    session = IncrementalMicroaggregation.from_base(
        data.iloc[:450], tmp_path / "s.duckdb", 5, identifiers="pid", quasi_identifiers=QIS)
    session.add(data.iloc[450:], "nn-split-end")
    out = tmp_path / "release.csv"
    result = session.publish(out, compare=True)
    r = result.summary()
    X = data[QIS].to_numpy(float)
    # DT is the release's information loss, measured as a one-shot run would
    assert r["DT"] == pytest.approx(information_loss(X, session.labels), rel=1e-10)
    assert r["DT"] == pytest.approx((1 - r["nu"]) * r["D0"] + r["nu"] * r["D_plus"], rel=1e-12)
    one_shot = microaggregate(data, 5, quasi_identifiers=QIS, identifiers="pid")
    assert r["D"] == pytest.approx(one_shot.information_loss, rel=1e-12)
    assert r["delta"] == pytest.approx(r["DT"] / r["D"] - 1)
    assert r["nu"] == pytest.approx(0.25)
    written = pd.read_csv(out)
    assert list(written.columns) == ["a", "region", "b", "c"]  # identifier dropped, order kept
    assert written.shape[0] == 600
    assert verify_k_anonymity(written, QIS, 5).ok
    assert (written["region"] == data["region"]).all()  # pass-through, release order = arrival
    # each released QI row is its group's mean in original units
    means = data[QIS].groupby(session.labels).transform("mean").to_numpy()
    np.testing.assert_allclose(written[QIS].to_numpy(), means, rtol=1e-9, atol=1e-12)


def test_state_without_points_holds_no_row_values(tmp_path):
    data = people(200, seed=4)
    path = tmp_path / "s.duckdb"
    session = IncrementalMicroaggregation.from_base(
        data.iloc[:150], path, 5, identifiers="pid", quasi_identifiers=QIS, keep_points=False)
    con = duckdb.connect(str(path), read_only=True)
    tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert "points" not in tables and session.describe()["keeps_points"] is False
    with pytest.raises(ParameterError, match="keep_points=False"):
        session.add(data.iloc[150:], "nn-split-end")
    session.add(data.iloc[150:], "nn")
    r = session.publish().summary()
    assert r["DT"] == pytest.approx(information_loss(data[QIS].to_numpy(float), session.labels), rel=1e-10)
    with pytest.raises(ParameterError, match="compare"):
        session.publish(compare=True)


# ---------------------------------------------------------------------------------------------
# Surviving the process


def _uninterrupted(tmp_path: Path, data: pd.DataFrame) -> pd.DataFrame:
    session = IncrementalMicroaggregation.from_base(
        data.iloc[:300], tmp_path / "one.duckdb", 5, identifiers="pid", quasi_identifiers=QIS)
    session.add(data.iloc[300:], "nn-split-end")
    return session.publish(tmp_path / "one.csv").table


def test_killed_after_the_base_still_publishes_the_same_release(tmp_path):
    data = people(400, seed=5)
    data.iloc[:300].to_csv(tmp_path / "base.csv", index=False)
    state = tmp_path / "killed.duckdb"
    script = textwrap.dedent(f"""
        import sys, time
        import pandas as pd
        from incrowd.incremental import IncrementalMicroaggregation
        base = pd.read_csv({str(tmp_path / "base.csv")!r})
        IncrementalMicroaggregation.from_base(base, {str(state)!r}, 5, identifiers="pid",
                                              quasi_identifiers={QIS!r})
        print("ready", flush=True)
        time.sleep(600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    reopened = IncrementalMicroaggregation.open(state)
    reopened.add(data.iloc[300:], "nn-split-end")
    killed = reopened.publish(tmp_path / "killed.csv").table
    pd.testing.assert_frame_equal(killed, _uninterrupted(tmp_path, data))
    assert (tmp_path / "killed.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()


def test_cli_steps_in_separate_processes_equal_one_api_run(tmp_path):
    data = people(400, seed=5)
    data.iloc[:300].to_csv(tmp_path / "base.csv", index=False)
    data.iloc[300:].to_csv(tmp_path / "inc.csv", index=False)
    exe = [sys.executable, "-m", "incrowd.cli"]
    state = tmp_path / "cli.duckdb"
    for args in (["base", str(tmp_path / "base.csv"), "-o", str(state), "--k", "5", "--id", "pid",
                  "--qi", ",".join(QIS), "--quiet"],
                 ["add", str(state), str(tmp_path / "inc.csv"), "--strategy", "nn-split-end", "--quiet"],
                 ["publish", str(state), "-o", str(tmp_path / "cli.csv"), "--quiet"]):
        done = subprocess.run(exe + ["incremental"] + args, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    _uninterrupted(tmp_path, data)
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "one.csv").read_bytes()


# ---------------------------------------------------------------------------------------------
# Properties


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(6, 80),
    m=st.integers(1, 3),
    k=st.integers(2, 5),
    split_at=st.floats(0.05, 0.95),
    strategy=st.sampled_from(list(STRATEGIES)),
    inertial=st.booleans(),
    ties=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_any_split_and_strategy_publishes_k_anonymous_without_losing_rows(
        tmp_path_factory, n, m, k, split_at, strategy, inertial, ties, seed):
    data = people(n, seed=seed, m=m)
    if ties:
        for name in "abc"[:m]:
            data[name] = data[name].round(0)
    qis = list("abc"[:m])
    n0 = min(n - 1, max(k, int(round((1 - split_at) * n))))
    folder = tmp_path_factory.mktemp("prop")
    session = IncrementalMicroaggregation.from_base(
        data.iloc[:n0], folder / "s.duckdb", k, identifiers="pid", quasi_identifiers=qis)
    session.add(data.iloc[n0:], strategy, inertial=inertial)
    result = session.publish()
    labels = session.labels
    assert labels.shape == (n,) and labels.min() >= 0  # every row once, none lost or doubled
    assert np.bincount(labels).min() >= k
    assert verify_k_anonymity(result.table, qis, k).ok
    assert result.table.shape[0] == n
    assert 0.0 <= result.summary()["DT"] <= 1.0 + 1e-9
    keys = IncrementalMicroaggregation.open(folder / "s.duckdb")._state.keys["pid"]
    assert sorted(keys) == sorted(data["pid"])
    # deterministic: the same steps again give the same groups
    again = IncrementalMicroaggregation.from_base(
        data.iloc[:n0], folder / "s2.duckdb", k, identifiers="pid", quasi_identifiers=qis)
    again.add(data.iloc[n0:], strategy, inertial=inertial)
    np.testing.assert_array_equal(again.labels, labels)


def test_mdav_kernel_used_for_splits_matches_reference():
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((37, 3))
    np.testing.assert_array_equal(mdav_labels(Z, 4), reference.mdav(Z, 4))


# ---------------------------------------------------------------------------------------------
# Bad input: clear errors, nothing written


@pytest.fixture
def built(tmp_path):
    data = people(120, seed=6)
    path = tmp_path / "s.duckdb"
    session = IncrementalMicroaggregation.from_base(
        data.iloc[:100], path, 5, identifiers="pid", quasi_identifiers=QIS)
    return session, data, path


def test_increment_with_other_columns_is_refused(built):
    session, data, path = built
    before = digest(path)
    with pytest.raises(DataError, match=r"missing \['c'\]"):
        session.add(data.iloc[100:].drop(columns=["c"]))
    with pytest.raises(DataError, match=r"not in the base \['extra'\]"):
        session.add(data.iloc[100:].assign(extra=1))
    assert digest(path) == before


def test_increment_with_bad_values_or_known_keys_is_refused(built):
    session, data, path = built
    before = digest(path)
    bad = data.iloc[100:].copy()
    bad.loc[bad.index[3], "b"] = np.nan
    with pytest.raises(DataError, match=r"'b' has a missing value in data row 4"):
        session.add(bad)
    with pytest.raises(DataError, match="already in the state"):
        session.add(data.iloc[95:])
    with pytest.raises(ParameterError, match="unknown strategy"):
        session.add(data.iloc[100:], "nearest")
    assert digest(path) == before


def test_k_mismatch_is_refused(built):
    session, data, path = built
    before = digest(path)
    with pytest.raises(ParameterError, match="differs from the state's k=5"):
        session.add(data.iloc[100:], k=7)
    assert digest(path) == before


def test_state_from_another_version_is_refused(built, tmp_path):
    _, _, path = built
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'format_version'")
    con.close()
    with pytest.raises(DataError, match="format version 99"):
        IncrementalMicroaggregation.open(path)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "foreign", "tampered"])
def test_damaged_state_is_refused(built, tmp_path, damage):
    _, _, path = built
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[: 4096])
    elif damage == "garbage":
        path.write_bytes(b"not a database at all" * 100)
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "foreign":
        path.unlink()
        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
        con.close()
    else:
        con = duckdb.connect(str(path))
        con.execute("UPDATE groups SET size = size + 1 WHERE group_id = 0")
        con.close()
    # an edit that contradicts the file's content is named as such (not as damage)
    with pytest.raises(DataError, match="damaged or not an incrowd state file|modified outside incrowd"):
        IncrementalMicroaggregation.open(path)


def test_base_refuses_to_overwrite_and_checks_keys(built, tmp_path):
    _, data, path = built
    before = digest(path)
    with pytest.raises(DataError, match="already exists"):
        IncrementalMicroaggregation.from_base(data, path, 5, identifiers="pid", quasi_identifiers=QIS)
    assert digest(path) == before
    twice = pd.concat([data.iloc[:50], data.iloc[:1]])
    with pytest.raises(DataError, match="occurs more than once"):
        IncrementalMicroaggregation.from_base(twice, tmp_path / "t.duckdb", 5, identifiers="pid",
                                              quasi_identifiers=QIS)
    assert not (tmp_path / "t.duckdb").exists()
    with pytest.raises(ParameterError, match="k must be an integer"):
        IncrementalMicroaggregation.from_base(data, tmp_path / "t.duckdb", 1, identifiers="pid",
                                              quasi_identifiers=QIS)
    with pytest.raises(ParameterError, match="unknown method"):
        IncrementalMicroaggregation.from_base(data, tmp_path / "t.duckdb", 5, "kmeans")
    assert not (tmp_path / "t.duckdb").exists()


def test_any_library_method_can_be_the_base(tmp_path):
    data = people(200, seed=8)
    for method in ("mdav-star", "ona-star", "mona"):
        session = IncrementalMicroaggregation.from_base(
            data.iloc[:150], tmp_path / f"{method}.duckdb", 4, method, identifiers="pid",
            quasi_identifiers=QIS)
        base = microaggregate(data.iloc[:150], 4, method, identifiers="pid", quasi_identifiers=QIS)
        np.testing.assert_array_equal(session.labels, base.labels)
        session.add(data.iloc[150:], "nn-split-end")
        r = session.publish(compare=True).summary()
        assert r["method"] == method and r["k_anonymous"]


@pytest.mark.parametrize("strategy", ["nn", "nn-split-mid", "nn-split-end"])
def test_reference_equality_across_row_blocks(tmp_path, strategy):
    # 900 new rows span two blocks of the kernel's matrix-product pruning
    data = people(2100, seed=9)
    session = IncrementalMicroaggregation.from_base(
        data.iloc[:1200], tmp_path / "s.duckdb", 5, identifiers="pid", quasi_identifiers=QIS)
    st_ = session._state
    Z_old, base_labels = st_.points.copy(), session.labels
    session.add(data.iloc[1200:], strategy, inertial=strategy == "nn-split-mid")
    Z_new = (data.iloc[1200:][QIS].to_numpy(float) - st_.mean) / st_.scale
    split = {"nn": "none", "nn-split-mid": "mid", "nn-split-end": "end"}[strategy]
    expected = reference.incremental_adjoin(Z_old, base_labels, Z_new, 5, strategy == "nn-split-mid", split)
    np.testing.assert_array_equal(session.labels, expected)
