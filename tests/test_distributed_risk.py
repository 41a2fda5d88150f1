"""The risk of a partitioned dataset on a LocalCluster of 2 worker processes: the figures of the
in-process run, from Parquet and CSV partitions, and a worker killed mid-run changes nothing.

Equal means equal for every count (fk, sample uniques, k violations, SUDA2's scores) and, without
weights, every risk. Sums of weights (Fk) and of risks are taken per partition and then across
the partitions, in another order than in one process: those, and what is computed from them
(the individual risk with weights, the global and household risks, the sampling fraction and
the uniqueness estimates), agree to float rounding (relative 1e-12)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
from _dask_tests import WorkerKiller, cli, client  # noqa: E402,F401
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.exceptions import DataError, ParameterError  # noqa: E402
from incrowd.io import read_table  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

#: sdcMicro's testdata keys (as in its vignette), its weight and household id
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
SURVEY = {"weight": "sampling_weight", "household": "ori_hid"}
#: uneven partitions; households straddle the bounds
BOUNDS = [0, 1000, 1701, 3100, 4580]
ROUNDED = ("global_risk", "global_risk_percent", "expected_reidentifications", "household_risk",
           "household_expected_reidentifications", "sampling_fraction")


def _testdata() -> Path:
    path = data_dir() / "testdata.csv"
    if not path.is_file():
        pytest.skip(f"{path} is absent (set INCROWD_DATA)")
    return path


def _split(frame: pd.DataFrame, folder: Path, kind: str, bounds) -> Path:
    folder.mkdir()
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        part = frame.iloc[a:b]
        if kind == "csv":
            part.to_csv(folder / f"part-{i}.csv", index=False)
        else:
            part.to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder


def _close(a, b, where: str) -> None:
    if isinstance(a, dict):
        assert set(a) == set(b), where
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, float) and isinstance(b, float):
        assert b == pytest.approx(a, rel=1e-12, nan_ok=True), where
    else:
        assert a == b, where


def assert_same_risk(here, there, records_folder: Path | None = None, exact: bool = False) -> None:
    """``there`` (on Dask) has ``here``'s figures; ``exact``: no weights, every risk bit for bit
    but the sums over all rows."""
    a, b = here.summary(), there.summary()
    # the log-linear model risk is measured in one process only, and said so on Dask
    assert ("model_risk" in a) == ("model_risk_skipped" in b)
    a.pop("model_risk", None), b.pop("model_risk_skipped", None)
    assert set(a) == set(b)
    for key, value in a.items():
        if key in ROUNDED or not exact:
            _close(value, b[key], key)
        else:
            assert b[key] == value, key
    for mine, theirs in zip(here.to_dict()["riskiest"], there.to_dict()["riskiest"], strict=True):
        _close(mine, theirs, "riskiest")
    assert there.records is None and there.about["rows"] == here.about["rows"]
    if records_folder is not None:
        files = sorted(records_folder.iterdir())
        assert len(files) == there.about["partitions"]  # an empty partition writes its header
        written = pd.concat([f for f in (pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p)
                                         for p in files) if len(f)], ignore_index=True)
        table = here.records_table()
        assert list(written.columns) == list(table.columns)
        for column in table.columns:
            got, want = written[column].to_numpy(), table[column].to_numpy()
            if column in ("Fk", "individual_risk", "household_risk") and not exact or column == "household_risk":
                assert np.allclose(got, want, rtol=1e-12, atol=0), column
            else:
                assert np.array_equal(got, want, equal_nan=True), column


def test_testdata_parquet_partitions_equal_in_process(client, tmp_path):
    frame = pd.read_csv(_testdata())
    parts = _split(frame, tmp_path / "parts", "parquet", [0, 1000, 1000, 1701, 3100, 4580])  # one empty
    here = incrowd.risk(frame, KEYS, **SURVEY)
    there = incrowd.risk(parts, KEYS, scheduler=client, records=tmp_path / "records.parquet", **SURVEY)
    assert there.about["partitions"] == 5
    assert "suda_score" in here.records and "population_uniqueness" in there.summary()
    assert there.summary()["sample_uniques"] > 0
    assert_same_risk(here, there, tmp_path / "records.parquet")


def test_testdata_csv_partitions_equal_in_process(client, tmp_path):
    # CSV cells are text, read on each worker as the in-process command reads the whole file
    source = _testdata()
    parts = _split(read_table(source), tmp_path / "parts", "csv", [*BOUNDS, 4580])  # the last one empty
    here = incrowd.risk(source, KEYS, **SURVEY)
    there = incrowd.risk(str(parts / "part-*.csv"), KEYS, scheduler=client, records=tmp_path / "records.csv",
                         **SURVEY)
    assert there.about["partitions"] == 5
    assert_same_risk(here, there, tmp_path / "records.csv")


def test_missing_keys_match_any_value_across_partitions(client, tmp_path):
    # a missing key in one partition matches rows of the others: fk is not a per-partition count
    frame = pd.read_csv(_testdata())
    rng = np.random.default_rng(5)
    for key in ("water", "relat", "roof"):
        frame.loc[rng.choice(len(frame), 60, replace=False), key] = np.nan
    frame.loc[[7, 2500], KEYS] = np.nan  # missing everywhere: fk is the whole sample
    parts = _split(frame, tmp_path / "parts", "parquet", BOUNDS)
    here = incrowd.risk(frame, KEYS, population=40_000)
    there = incrowd.risk(parts, KEYS, population=40_000, scheduler=client, records=tmp_path / "r.parquet")
    assert here.records["fk"].iloc[7] == len(frame)
    assert_same_risk(here, there, tmp_path / "r.parquet")


def test_adult_partitions_equal_in_process(client, tmp_path):
    path = data_dir() / "adult.csv.gz"
    if not path.is_file():
        pytest.skip(f"{path} is absent (set INCROWD_DATA)")
    frame = pd.read_csv(path)
    keys = ["age", "sex", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
    n = len(frame)
    parts = _split(frame, tmp_path / "parts", "parquet", np.linspace(0, n, 7).astype(int))
    here = incrowd.risk(frame, keys)
    there = incrowd.risk(parts, keys, scheduler=client, records=tmp_path / "records.parquet")
    assert there.about["partitions"] == 6 and there.summary()["suda_records_with_msu"] > 0
    assert_same_risk(here, there, tmp_path / "records.parquet", exact=True)


def test_labelled_survey_file_on_a_worker_equals_in_process(client, tmp_path):
    # the curator's .sav: user-missing "Not stated" (9) counts as a value of its own on a worker too
    from _household import write_household

    _testdata()
    sav = write_household(data_dir(), tmp_path / "household.sav")
    here = incrowd.risk(sav, KEYS, **SURVEY)
    there = incrowd.risk(sav, KEYS, scheduler=client, **SURVEY)
    assert_same_risk(here, there)


def test_a_bad_partition_is_named_in_one_line(client, tmp_path):
    frame = pd.read_csv(_testdata())
    parts = _split(frame, tmp_path / "parts", "parquet", BOUNDS)
    broken = pd.read_parquet(parts / "part-2.parquet").astype({"sampling_weight": float})
    broken.loc[broken.index[3], "sampling_weight"] = 0.5
    broken.to_parquet(parts / "part-2.parquet", index=False)
    with pytest.raises(DataError, match=r"^partition .*part-2\.parquet: weight column 'sampling_weight', row 4: "
                                        r"0\.5 is below 1.*\(rows count within the partition\)$"):
        incrowd.risk(parts, KEYS, scheduler=client, records=tmp_path / "records.parquet", **SURVEY)
    assert not (tmp_path / "records.parquet").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["parts"]  # no staging folder left behind


def test_wrong_requests_are_refused_in_one_line_before_any_work(client, tmp_path):
    frame = pd.read_csv(_testdata())
    parts = _split(frame, tmp_path / "parts", "parquet", BOUNDS)
    with pytest.raises(DataError, match="is inside the dataset"):
        incrowd.risk(parts, KEYS, scheduler=client, records=parts / "records.parquet")
    (tmp_path / "taken.parquet").mkdir()
    with pytest.raises(DataError, match="already exists; a folder is never overwritten"):
        incrowd.risk(parts, KEYS, scheduler=client, records=tmp_path / "taken.parquet")
    with pytest.raises(ParameterError, match=r"^--memory-limit must be a size of at least 64MiB, such as 2GiB "
                                             r"or 500MB; got '2 lots'$"):
        incrowd.risk(parts, KEYS, scheduler="local:1", memory_limit="2 lots")
    with pytest.raises(ParameterError, match="bounds the workers that --scheduler local:N starts"):
        incrowd.risk(parts, KEYS, scheduler=client.scheduler.address, memory_limit="2GiB")
    assert sorted(p.name for p in parts.iterdir()) == [f"part-{i}.parquet" for i in range(4)]
    empty = _split(frame, tmp_path / "empty", "parquet", [0, 0, 0])
    with pytest.raises(DataError, match="^the dataset has no rows; there is no risk to measure$"):
        incrowd.risk(empty, KEYS, scheduler=client)


def test_ctrl_c_cancels_the_run_and_writes_nothing(client, tmp_path):
    frame = pd.read_csv(_testdata())
    parts = _split(frame, tmp_path / "parts", "parquet", BOUNDS)

    def interrupt(line):
        if line.startswith("writing the records"):
            raise KeyboardInterrupt  # as Ctrl-C arrives in the client while the partitions write

    with pytest.raises(KeyboardInterrupt):
        incrowd.risk(parts, KEYS, scheduler=client, records=tmp_path / "records.parquet", progress=interrupt,
                     **SURVEY)
    assert [p.name for p in tmp_path.iterdir()] == ["parts"]
    # the cluster is free again: the next run completes
    assert incrowd.risk(parts, KEYS, scheduler=client).about["rows"] == len(frame)


def test_cli_on_a_scheduler_address_prints_the_in_process_figures(client, tmp_path):
    frame = pd.read_csv(_testdata())
    parts = _split(frame, tmp_path / "parts", "parquet", BOUNDS)
    done = cli("risk", str(parts), "--qi", ",".join(KEYS), "--weight", "sampling_weight", "--household", "ori_hid",
                "--scheduler", client.scheduler.address, "--json", "-o", str(tmp_path / "records.parquet"))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    got = json.loads(done.stdout)
    here = incrowd.risk(frame, KEYS, **SURVEY)
    assert got["summary"]["sample_uniques"] == here.summary()["sample_uniques"]
    assert got["summary"]["global_risk"] == pytest.approx(here.summary()["global_risk"], rel=1e-12)
    assert got["riskiest"] == json.loads(here.to_json())["riskiest"]
    assert len(list((tmp_path / "records.parquet").iterdir())) == 4


def test_cli_ctrl_c_ends_with_one_line(monkeypatch):
    from typer.testing import CliRunner

    from incrowd.cli import _risk as cli_risk
    from incrowd.cli import app

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_risk, "measure_risk", interrupted)
    monkeypatch.setattr("incrowd.distributed.connect", _no_cluster)
    out = CliRunner().invoke(app, ["risk", "parts/", "--qi", "a", "--scheduler", "local:1"])
    assert out.exit_code == 130
    assert out.output.strip() == "cancelled: the risk was not measured; nothing was written"


def test_ctrl_c_in_a_terminal_ends_the_command_with_one_line(tmp_path):
    # a terminal's Ctrl-C reaches every process of the command, the local workers too
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.integers(0, 50, 100_000), "b": rng.integers(0, 40, 100_000),
                          "c": rng.integers(0, 30, 100_000)})
    parts = _split(frame, tmp_path / "parts", "parquet", np.linspace(0, len(frame), 41).astype(int))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(incrowd.__file__).parents[1]),
                                                         os.environ.get("PYTHONPATH", "")])}
    command = subprocess.Popen([sys.executable, "-m", "incrowd.cli", "risk", str(parts), "--qi", "a,b,c",
                                "--scheduler", "local:2", "-o", str(tmp_path / "records.parquet")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                               start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".records.parquet.*.tmp/part-*")) and command.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(command.pid, signal.SIGINT)  # while the partitions write their records
    out, err = command.communicate(timeout=60)
    assert command.returncode == 130, err
    assert err.strip() == "cancelled: the risk was not measured; nothing was written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts"]


class _no_cluster:
    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return object()

    def __exit__(self, *exc):
        return False


def test_a_worker_killed_mid_run_changes_nothing(client, tmp_path):
    frame = pd.read_csv(_testdata())
    parts = _split(frame, tmp_path / "parts", "parquet", BOUNDS)
    # the partitions' key counts live on the workers now; the victim's are recomputed
    kill_one = WorkerKiller(client, "multiplying the households' survival")

    there = incrowd.risk(parts, KEYS, scheduler=client, progress=kill_one, records=tmp_path / "r.parquet",
                         **SURVEY)
    assert kill_one.replaced()  # the nanny started a fresh process
    assert_same_risk(incrowd.risk(frame, KEYS, **SURVEY), there, tmp_path / "r.parquet")
