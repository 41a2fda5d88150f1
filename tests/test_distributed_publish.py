"""Publish on Dask (generalize-then-microaggregate) over a partitioned file, on a LocalCluster of 2
worker processes: the in-process release, row for row and value for value; nothing written
unless the whole release passed; a worker killed mid-run changes nothing."""

from __future__ import annotations

import os
import signal
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.distributed import connect  # noqa: E402
from incrowd.exceptions import DataError, ParameterError  # noqa: E402
from incrowd.io import read_table  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

#: ARX's Adult: its hierarchies for the categorical QIs
CATEGORICAL = ["sex", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with connect("local:2") as c:
            yield c


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    path = data_dir() / "adult_arx" / "adult.csv"
    if not path.is_file():
        pytest.skip(f"{path} is absent (set INCROWD_DATA)")
    frame = read_table(path)
    rng = np.random.default_rng(7)
    frame.insert(0, "id", np.arange(1, len(frame) + 1))
    # a second numeric QI: hours, with missing cells published by their pattern
    hours = rng.integers(10, 70, len(frame)).astype(float)
    hours[rng.choice(len(frame), 300, replace=False)] = np.nan
    frame["hours"] = hours
    frame["age"] = frame["age"].astype(float)
    return frame


def _spec(k: int = 5, l: int | None = 2, **privacy) -> dict:
    columns: dict = {a: {"role": "categorical", "hierarchy": str(data_dir() / "adult_arx" /
                                                                  f"adult_hierarchy_{a}.csv")}
                     for a in CATEGORICAL}
    columns.update({"age": "numeric", "hours": "numeric", "salary-class": "sensitive", "id": "other"})
    return {"privacy": {"k": k, **({"l": l} if l else {}), "max_suppression": "2%", **privacy},
            "missing": {"numeric": "separate"}, "columns": columns}


def _split(frame: pd.DataFrame, folder: Path, bounds) -> Path:
    folder.mkdir()
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        frame.iloc[a:b].to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder


def _written(folder: Path) -> pd.DataFrame:
    files = sorted(folder.iterdir())
    return pd.concat([read_table(f) for f in files], ignore_index=True).sort_values("id").reset_index(drop=True)


def assert_same_release(here, folder: Path, tmp_path: Path) -> None:
    """The written dataset holds the in-process release's rows and values (compared by id)."""
    path = tmp_path / "here.parquet"
    here.write(path)
    want = read_table(path).sort_values("id").reset_index(drop=True)
    got = _written(folder)
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for column in want.columns:
        assert np.array_equal(got[column].to_numpy(), want[column].to_numpy()) or \
            got[column].equals(want[column]), column


def test_adult_partitions_publish_the_in_process_release(client, adult, tmp_path):
    n = len(adult)
    parts = _split(adult, tmp_path / "parts", [0, 5000, 5000, 14000, 22000, n])  # one empty
    here = incrowd.publish(adult, _spec())
    lines: list[str] = []
    there = incrowd.publish(parts, _spec(), scheduler=client, output=tmp_path / "release", progress=lines.append)
    a, b = here.summary(), there.summary()
    for key in ("levels", "rows_out", "suppressed", "classes", "min_class_size", "nodes_evaluated"):
        assert b[key] == a[key], key
    assert a["numeric"] == ["age", "hours"] and 0 < a["suppressed"]
    assert b["metrics"] == pytest.approx(a["metrics"], rel=1e-12)
    assert_same_release(here, tmp_path / "release", tmp_path)
    assert any(line.startswith("writing the release: 5/5 partitions") for line in lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here.parquet", "parts", "release"]
