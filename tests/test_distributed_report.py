"""The report of a partitioned release beside its partitioned original on a LocalCluster of 2
worker processes: the figures of the in-process report, from Parquet and CSV partitions.

Equal means equal for every count (classes, their sizes, rows below k, changed and suppressed
cells, the frequency tables) and, for the sums taken per partition and then across the
partitions in another order than in one process (means, variances, co-moments, IL, IL1s, the
eigenvalues, the average risk), equal to float rounding (relative 1e-9). The measures that need
more than sums are left out, and the report names them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
from _dask_tests import WorkerKiller, _close, assert_same_report, cli, client  # noqa: E402,F401
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.exceptions import DataError, ParameterError  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

ADULT_QIS = ["age", "hours-per-week", "education-num", "race", "sex", "workclass"]
#: sdcMicro's testdata keys (as in its vignette) and its age
TESTDATA_QIS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex", "age"]


def _file(name: str) -> Path:
    path = data_dir() / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (set INCROWD_DATA)")
    return path


def _adult_pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """6,000 rows of Adult and a release of them: age in five-year bands (their middles),
    hours top- and bottom-coded, race in two groups, education-num blanked in every seventh row,
    every eleventh row suppressed; the other columns pass through and tell the kept rows."""
    adult = pd.read_csv(_file("adult.csv.gz"), skipinitialspace=True).iloc[:6000].reset_index(drop=True)
    release = adult.copy()
    release["age"] = (release["age"] // 5) * 5 + 2
    release["hours-per-week"] = release["hours-per-week"].clip(20, 60)
    release["race"] = np.where(release["race"] == "White", "White", "Other")
    release.loc[release.index % 7 == 3, "education-num"] = np.nan
    return adult, release[release.index % 11 != 5]


def _testdata_pair() -> tuple[pd.DataFrame, pd.DataFrame]:
    """sdcMicro's testdata and a release: age in ten-year bands, relat's codes above 4 grouped
    into 5, water blanked in every ninth row, every thirteenth row suppressed."""
    frame = pd.read_csv(_file("testdata.csv"))
    release = frame.copy()
    release["age"] = (release["age"] // 10) * 10 + 5
    release["relat"] = release["relat"].clip(upper=5)
    release.loc[release.index % 9 == 4, "water"] = np.nan
    return frame, release[release.index % 13 != 6]


def _split(original: pd.DataFrame, release: pd.DataFrame, folder: Path, kind: str, bounds) -> tuple[Path, Path]:
    """Partition i of each side holds original rows bounds[i]..bounds[i + 1] (the release its
    published ones)."""
    out = []
    for side, frame in (("original", original), ("release", release)):
        where = folder / side
        where.mkdir(parents=True)
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            part = frame[(frame.index >= a) & (frame.index < b)]
            if kind == "csv":
                part.to_csv(where / f"part-{i}.csv", index=False)
            else:
                part.to_parquet(where / f"part-{i}.parquet", index=False)
        out.append(where)
    return out[0], out[1]


def test_adult_in_five_parquet_partitions_equals_in_process(client, tmp_path):
    original, release = _adult_pair()
    o, r = _split(original, release, tmp_path, "parquet", [0, 1000, 2300, 2300, 4800, 6000])  # one empty
    here = incrowd.report(original, release, ADULT_QIS, ["income"], k=3, figures=False)
    lines = []
    there = incrowd.report(o, r, ADULT_QIS, ["income"], k=3, scheduler=client, progress=lines.append)
    assert "attribute_disclosure" in here.risk and "attribute_disclosure" in there.about["left_out"]
    assert there.about["partitions"] == 5
    assert here.about["numeric"] == ["age", "hours-per-week", "education-num"]
    assert here.utility["numeric"]["il1s"] > 0 and here.risk["classes"]["records_below_k"] > 0
    assert_same_report(here, there)
    assert "measuring the partitions: 5/5 partitions" in lines
    json.loads(there.to_json())  # JSON-ready


def test_testdata_in_csv_partitions_equals_in_process(client, tmp_path):
    # CSV cells are text, read on each worker as the in-process report reads the whole file
    original, release = _testdata_pair()
    o, r = _split(original, release, tmp_path, "csv", [0, 1000, 1701, 3100, 4580])
    original.to_csv(tmp_path / "original.csv", index=False)
    release.to_csv(tmp_path / "release.csv", index=False)
    here = incrowd.report(tmp_path / "original.csv", tmp_path / "release.csv", TESTDATA_QIS, figures=False)
    there = incrowd.report(str(o / "part-*.csv"), str(r / "part-*.csv"), TESTDATA_QIS, scheduler=client)
    assert here.about["numeric"] == TESTDATA_QIS  # every key holds numbers on both sides
    assert here.about["suppressed"] == 352
    assert_same_report(here, there)


def test_partitions_that_disagree_on_a_numeric_column_measure_it_as_categorical(client, tmp_path):
    # one partition's release publishes age as text bands: age is no number in the whole release
    original, release = _testdata_pair()
    release = release.astype({"age": object})
    late = release.index >= 3100
    release.loc[late, "age"] = release.loc[late, "age"].map(lambda a: f"{a - 5}-{a + 4}")
    o, r = _split(original, release, tmp_path, "parquet", [0, 1701, 3100, 4580])
    here = incrowd.report(original, release, TESTDATA_QIS, figures=False)
    there = incrowd.report(o, r, TESTDATA_QIS, scheduler=client)
    assert "age" in here.about["categorical"]
    assert_same_report(here, there)


def test_what_a_report_on_dask_cannot_do_is_refused_in_one_line(client, tmp_path):
    original, release = _testdata_pair()
    o, r = _split(original, release, tmp_path, "parquet", [0, 2000, 4580])
    with pytest.raises(ParameterError, match=r"^a report on Dask \(scheduler=\) does not take attacks, weight: "):
        incrowd.report(o, r, TESTDATA_QIS, weight="sampling_weight", attacks=True, scheduler=client)
    with pytest.raises(ParameterError, match="memory_limit= bounds the workers of a report on Dask"):
        incrowd.report(original, release, TESTDATA_QIS, memory_limit="2GiB")
    empty = _split(original, release, tmp_path / "empty", "parquet", [0, 0, 0])
    with pytest.raises(DataError, match="^the original has no rows; there is nothing to report$"):
        incrowd.report(*empty, TESTDATA_QIS, scheduler=client)
    (r / "part-1.parquet").unlink()
    with pytest.raises(DataError, match="^the original has 2 partitions and the release 1: the report pairs"):
        incrowd.report(o, r, TESTDATA_QIS, scheduler=client)
    # a release partition whose rows are not in its original partition's order: named, in one line
    part = release[release.index >= 2000]
    part.iloc[::-1].to_parquet(r / "part-1.parquet", index=False)
    with pytest.raises(DataError, match=r"^partition \S+original/part-1.parquet / \S+release/part-1.parquet: "
                                        r"release row 2 matches no later original row on the columns that pass"):
        incrowd.report(o, r, TESTDATA_QIS, scheduler=client)


def test_cli_on_a_scheduler_address_writes_the_in_process_figures(client, tmp_path):
    original, release = _testdata_pair()
    o, r = _split(original, release, tmp_path, "parquet", [0, 1000, 2500, 4580])
    done = cli("report", str(o), str(r), "--qi", ",".join(TESTDATA_QIS), "--k", "3", "--scheduler", client.scheduler.address,
                "-o", str(tmp_path / "report.json"))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    got = json.loads((tmp_path / "report.json").read_text())
    here = json.loads(incrowd.report(original, release, TESTDATA_QIS, k=3, figures=False).to_json())
    _close(here["risk"]["classes"], got["risk"]["classes"], "classes")
    _close(here["utility"]["numeric"], got["utility"]["numeric"], "numeric")
    assert "verdict" in got["about"]["left_out"]
    refused = cli("report", str(o), str(r), "--qi", "age", "--spec", "release.toml", "--scheduler", "local:1")
    assert refused.returncode == 2
    assert refused.stderr.strip() == ("error: --spec need the whole file in one process; a report on Dask "
                                      "(--scheduler) does not take them")


def test_ctrl_c_cancels_the_run(client, tmp_path):
    original, release = _testdata_pair()
    o, r = _split(original, release, tmp_path, "parquet", [0, 1000, 2500, 4580])

    def interrupt(line):
        if line.startswith("measuring the partitions"):
            raise KeyboardInterrupt  # as Ctrl-C arrives in the client while the partitions run

    with pytest.raises(KeyboardInterrupt):
        incrowd.report(o, r, TESTDATA_QIS, scheduler=client, progress=interrupt)
    # the cluster is free again: the next run completes
    assert incrowd.report(o, r, TESTDATA_QIS, scheduler=client).about["rows_original"] == len(original)


def test_a_worker_killed_mid_run_changes_nothing(client, tmp_path):
    original, release = _testdata_pair()
    o, r = _split(original, release, tmp_path, "parquet", [0, 1000, 2500, 4580])
    # the partitions' sums live on the workers now; the victim's are recomputed
    kill_one = WorkerKiller(client, "combining the partitions' sums")
    there = incrowd.report(o, r, TESTDATA_QIS, scheduler=client, progress=kill_one)
    assert kill_one.replaced()
    assert_same_report(incrowd.report(original, release, TESTDATA_QIS, figures=False), there)
