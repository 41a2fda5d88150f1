"""Publish on Dask (generalize-then-microaggregate) over a partitioned file, on a LocalCluster of 2
worker processes: the in-process release, row for row and value for value; nothing written
unless the whole release passed; a worker killed mid-run changes nothing."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

pytest.importorskip("distributed")
from _dask_tests import WorkerKiller, assert_same_report, cli, client  # noqa: E402,F401
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.exceptions import DataError, ParameterError  # noqa: E402
from incrowd.io import read_table  # noqa: E402
from incrowd.publishing import load_spec, part_bottom, part_facts, whole_of  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

#: ARX's Adult: its hierarchies for the categorical QIs
CATEGORICAL = ["sex", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


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


def _read_part(path: Path) -> pd.DataFrame:
    """A written partition, as incrowd reads it; one whose rows were all suppressed (or whose
    input partition is empty) holds the columns alone, which incrowd's reader refuses."""
    return read_table(path) if pq.ParquetFile(path).metadata.num_rows else pd.read_parquet(path)


def assert_same_release(here, folder: Path, tmp_path: Path, parts: Path) -> None:
    """The written dataset is the in-process release row by row, in file order: release
    partition i holds the published rows of original partition i (``parts``), in their order."""
    path = tmp_path / "here.parquet"
    here.write(path)
    want = read_table(path)
    originals = sorted(parts.iterdir())
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == [f"part-{i:05d}.parquet" for i in range(len(originals))]
    written = [_read_part(f) for f in files]
    got = pd.concat([w for w in written if len(w)], ignore_index=True)
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for column in want.columns:
        assert np.array_equal(got[column].to_numpy(), want[column].to_numpy()) or \
            got[column].equals(want[column]), column
    published = set(want["id"])
    for original, release in zip(originals, written):
        assert release["id"].tolist() == [i for i in _read_part(original)["id"] if i in published], original.name


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
    assert_same_release(here, tmp_path / "release", tmp_path, parts)
    assert any(line.startswith("writing the release: 5/5 partitions") for line in lines)
    # the release's phase starts as its tasks start, not when the first one is done
    assert lines.index("writing the release: 0/5 partitions") < lines.index("writing the release: 1/5 partitions")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here.parquet", "parts", "release"]


def test_t_closeness_partitions_publish_the_in_process_release(client, adult, tmp_path):
    # t merges groups inside a class against the whole file's distribution, on the class's worker
    frame = adult.iloc[:12000]
    parts = _split(frame, tmp_path / "parts", [0, 3000, 7000, 12000])
    for t in (0.2, 0.08):
        here = incrowd.publish(frame, _spec(t=t))
        there = incrowd.publish(parts, _spec(t=t), scheduler=client, output=tmp_path / f"release-{t}")
        a, b = here.summary(), there.summary()
        for key in ("levels", "rows_out", "suppressed", "classes", "min_class_size"):
            assert b[key] == a[key], key
        assert f"{t:g}-close in every sensitive column" in b["models"]
        assert_same_release(here, tmp_path / f"release-{t}", tmp_path, parts)
    # t binds: without it the node is another
    assert incrowd.publish(frame, _spec()).summary()["levels"] != a["levels"]


def test_the_largest_classes_go_to_the_least_filled_class_tasks(client, adult, tmp_path):
    # a class is microaggregated whole on one worker: two large classes in one task would keep
    # that worker busy while the others wait; the rows then go back to their partitions
    from incrowd.distributed._publish import spread_classes

    sizes = np.array([5, 40, 7, 40, 3, 12, 1])
    where = spread_classes(sizes, 3)
    assert where[1] != where[3]  # the two largest apart
    loads = [0, 0, 0]
    for size in sorted(sizes.tolist(), reverse=True):  # the largest first, to the least filled
        loads[loads.index(min(loads))] += size
    assert sorted(np.bincount(where, weights=sizes, minlength=3).astype(int).tolist()) == sorted(loads)
    n = len(adult)
    parts = _split(adult, tmp_path / "parts", [0, 5000, 5000, 14000, 22000, n])
    incrowd.publish(parts, _spec(), scheduler=client, output=tmp_path / "release")
    files = sorted((tmp_path / "release").iterdir())
    written = [len(_read_part(f)) for f in files]
    # one output partition per input partition, the empty one too, each holding its own rows
    assert len(written) == 5 and written[1] == 0 and all(0 < w <= b - a for w, (a, b) in
                                                         zip(written[2:], [(5000, 14000), (14000, 22000), (22000, n)]))


def test_class_tasks_are_dealt_to_the_workers_the_largest_first_and_start_before_the_rest(client):
    # left to the scheduler, a class task went where most of its pieces lay, and the pieces for
    # another worker's task waited behind a long task: a worker idled while others ran three each
    from incrowd.distributed._publish import _FIRST, _Run

    run = _Run(None, lambda text: None)
    run.client = client
    workers = sorted(client.scheduler_info()["workers"])
    rows = np.array([10, 900, 30, 700, 20, 600])
    placed = run.placed(rows)
    assert all(p["allow_other_workers"] for p in placed)  # a lost worker's tasks run elsewhere
    assert [p["priority"] for p in placed] == rows.tolist() and _FIRST > rows.max()  # largest first, pieces before
    at = [workers.index(p["workers"][0]) for p in placed]
    loads = np.bincount(at, weights=rows, minlength=len(workers))
    assert len({at[1], at[3], at[5]}) == min(3, len(workers))  # the three largest apart
    assert loads.max() - loads.min() <= rows.max()


def test_each_row_is_prepared_once(adult, tmp_path):
    # preparing a partition (codes, standardization, bottom classes) was its costliest step: the
    # split, and then the release, prepared its rows again; now each row's bottom class and
    # prepared values stay on its worker from the search and travel with the row to its release
    from unittest import mock

    from distributed import Client, LocalCluster

    from incrowd.publishing import _partitioned

    n = len(adult)
    parts = _split(adult, tmp_path / "parts", [0, 10000, 20000, n])
    prepared: list[int] = []
    real = _partitioned.prepare

    def counting(frame, *args, **kwargs):
        prepared.append(len(frame))
        return real(frame, *args, **kwargs)

    # worker threads in this process, so that the count sees every task
    with mock.patch.object(_partitioned, "prepare", counting), \
            LocalCluster(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as cluster, \
            Client(cluster) as threads:
        there = incrowd.publish(parts, _spec(), scheduler=threads, output=tmp_path / "release")
    assert there.summary()["rows_out"] > 0
    # the search reads every row once (and an empty frame, its columns); the release none again
    assert sum(prepared) == n


def test_what_a_partition_sends_for_the_search_does_not_grow_with_its_rows(adult):
    # the client sums every partition's bottom classes: a billion-row file's 2,000 partitions
    # would send it their rows' class numbers too (8 bytes a row), which it never reads
    spec = load_spec(_spec(), None)

    def sent(frame: pd.DataFrame) -> int:
        whole = whole_of(spec, [part_facts(frame, spec)])
        return len(pickle.dumps(part_bottom(frame, spec, whole)[0]))

    small = adult.iloc[:3000]
    assert sent(pd.concat([small] * 20, ignore_index=True)) < 1.5 * sent(small)


@pytest.mark.parametrize("when", ["grouping the rows by class", "writing the release"])
def test_a_worker_killed_mid_run_changes_nothing(client, adult, tmp_path, when):
    frame = adult.iloc[:9000]
    parts = _split(frame, tmp_path / "parts", [0, 2500, 6000, 9000])
    # the partitions' pieces by class live on the workers; the victim's are recomputed, while
    # writing from the rows' bottom classes the client has let go of (the graph still holds them)
    kill_one = WorkerKiller(client, when)

    incrowd.publish(parts, _spec(), scheduler=client, output=tmp_path / "release", progress=kill_one)
    assert kill_one.replaced()  # the nanny started a fresh process
    assert_same_release(incrowd.publish(frame, _spec()), tmp_path / "release", tmp_path, parts)


def test_ctrl_c_while_writing_leaves_no_partial_release(client, adult, tmp_path):
    parts = _split(adult.iloc[:6000], tmp_path / "parts", [0, 3000, 6000])

    def interrupt(line):
        if line.startswith("writing the release"):
            raise KeyboardInterrupt  # as Ctrl-C arrives in the client while the partitions write

    with pytest.raises(KeyboardInterrupt):
        incrowd.publish(parts, _spec(), scheduler=client, output=tmp_path / "release", progress=interrupt)
    assert [p.name for p in tmp_path.iterdir()] == ["parts"]
    # the cluster is free again: the next run completes
    done = incrowd.publish(parts, _spec(), scheduler=client, output=tmp_path / "release")
    assert done.summary()["rows_in"] == 6000 and (tmp_path / "release").is_dir()


def test_what_it_does_not_do_yet_is_refused_in_one_line_before_any_work(client, adult, tmp_path):
    parts = _split(adult.iloc[:2000], tmp_path / "parts", [0, 1000, 2000])
    with pytest.raises(ParameterError, match=r"^a partitioned file is published with k, l, t, risk targets, a household "
                                             r"column, .* and rows or cell suppression, .*; "
                                             r"not with strategy 'joint': publish it in one process$"):
        incrowd.publish(parts, _spec(l=None, strategy="joint"), scheduler=client, output=tmp_path / "out")
    (tmp_path / "taken").mkdir()
    with pytest.raises(DataError, match="already exists; a folder is never overwritten"):
        incrowd.publish(parts, _spec(), scheduler=client, output=tmp_path / "taken")
    with pytest.raises(ParameterError, match=r"^output= is for a partitioned dataset on Dask"):
        incrowd.publish(adult, _spec(), output=tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts", "taken"]


def test_cli_publishes_a_partitioned_dataset_on_a_scheduler(client, adult, tmp_path):
    from incrowd.publishing import spec_to_toml

    frame = adult.iloc[:6000]
    parts = _split(frame, tmp_path / "parts", [0, 2000, 6000])
    (tmp_path / "release.toml").write_text(spec_to_toml(_spec()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(incrowd.__file__).parents[1]),
                                                         os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "incrowd.cli", "publish", str(parts), "--spec",
                           str(tmp_path / "release.toml"), "--scheduler", client.scheduler.address, "-o",
                           str(tmp_path / "release"), "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    got = json.loads(done.stdout)
    here = incrowd.publish(frame, _spec())
    assert got["rows_out"] == here.summary()["rows_out"] and got["levels"] == here.summary()["levels"]
    assert_same_release(here, tmp_path / "release", tmp_path, parts)
    bad = subprocess.run([sys.executable, "-m", "incrowd.cli", "publish", str(parts), "--spec",
                          str(tmp_path / "release.toml"), "--scheduler", client.scheduler.address, "-o",
                          str(tmp_path / "release")], capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and bad.stderr.strip().startswith("error: output folder") \
        and len(bad.stderr.strip().splitlines()) == 1


def test_the_whole_release_is_verified_from_the_written_partitions_counts():
    # a class of equal published values may span partitions: k, l and t hold over their union
    from incrowd.exceptions import VerificationError
    from incrowd.publishing import check_written_classes, load_spec

    spec = load_spec({"privacy": {"k": 5, "l": 2}, "columns": {"a": "categorical", "s": "sensitive"}})
    sizes = [pd.DataFrame({"a": ["x", "y"], "rows": [3, 5]}), pd.DataFrame({"a": ["x"], "rows": [3]})]
    # the sensitive values as codes of the whole file's: "1" is 0, "2" is 1 (rows per class and code)
    values = [{"s": pd.DataFrame({"a": ["x", "y", "y"], "__value__": [0, 0, 1], "rows": [3, 2, 3]})},
              {"s": pd.DataFrame({"a": ["x"], "__value__": [1], "rows": [3]})}]
    whole = {"s": (["1", "2"], False, np.array([5, 6]), False)}
    assert check_written_classes(spec, sizes, values, ["a"], 11, whole) == (2, 5)
    with pytest.raises(VerificationError, match=r"^the written release is not 5-anonymous \(smallest class 3\)"):
        check_written_classes(spec, sizes[:1], values[:1], ["a"], 8, whole)
    one_value = [{"s": pd.DataFrame({"a": ["x", "y", "y"], "__value__": [0, 0, 1], "rows": [3, 2, 3]})},
                 {"s": pd.DataFrame({"a": ["x"], "__value__": [0], "rows": [3]})}]
    with pytest.raises(VerificationError,
                       match=r"^the written release does not meet distinct 2-diverse .* in 's' \(a class holds 1 distinct"):
        check_written_classes(spec, sizes, one_value, ["a"], 11, whole)
    with pytest.raises(ParameterError, match=r"would suppress 4 rows, more than max_suppression=0"):
        check_written_classes(spec, sizes, values, ["a"], 15, whole)
    # t against the whole file's distribution (5 and 6 rows): class x holds 3 and 3 (distance
    # 1/2 - 5/11 = 0.045), class y 2 and 3 (0.055)
    close = load_spec({"privacy": {"k": 5, "t": 0.05}, "columns": {"a": "categorical", "s": "sensitive"}})
    with pytest.raises(VerificationError,
                       match=r"^the written release does not meet 0.05-close .* in 's' \(a class at distance 0.05455\)"):
        check_written_classes(close, sizes, values, ["a"], 11, whole)
    wider = load_spec({"privacy": {"k": 5, "t": 0.06}, "columns": {"a": "categorical", "s": "sensitive"}})
    assert check_written_classes(wider, sizes, values, ["a"], 11, whole) == (2, 5)


def test_a_split_file_standardizes_to_the_bit_as_the_whole_file():
    # the mean and spread come from exact sums: the parts' partials add up to the whole file's
    import math

    from incrowd.publishing._prepare import sum_partials

    rng = np.random.default_rng(11)
    values = np.concatenate([rng.normal(40, 12, 5000), rng.normal(1e9, 3, 10), [1e-9, 0.1, 0.7]])
    whole = math.fsum(values)
    for cuts in ([0, 1, 2500, len(values)], [0, 1234, 1235, 4000, len(values)]):
        parts = [sum_partials(values[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
        assert math.fsum([x for p in parts for x in p]) == whole
        # adding the parts' rounded sums is not the same in general: that is why partials travel
    assert sum_partials(np.array([1e308, 1e308])) is None  # an overflowing sum is refused, not rounded


@pytest.fixture(scope="module")
def weighted(adult) -> pd.DataFrame:
    """Adult with a sampling weight per row (deterministic, 20 to 116) and no numeric QI."""
    frame = adult.drop(columns=["hours"])
    frame["weight"] = 20.0 + (frame["id"] * 7919 % 97)
    return frame


def _risk_spec(**privacy) -> dict:
    spec = _spec(k=3, l=privacy.pop("l", None), **privacy)
    spec["columns"].update({"age": "other", "weight": "weight"})
    del spec["columns"]["hours"]
    return spec


@pytest.mark.parametrize("target", [{"max_individual_risk": 0.01}, {"max_global_risk": 0.00015},
                                    {"max_expected_reidentifications": 4},
                                    {"l": 2, "max_individual_risk": 0.005, "max_expected_reidentifications": 4}])
def test_risk_targets_partitions_publish_the_in_process_release(client, weighted, tmp_path, target):
    # the weights of a class come from several partitions: the search judges the summed ones
    n = len(weighted)
    parts = _split(weighted, tmp_path / "parts", [0, 7000, 7000, 19000, n])
    here = incrowd.publish(weighted, _risk_spec(**target))
    there = incrowd.publish(parts, _risk_spec(**target), scheduler=client, output=tmp_path / "release")
    a, b = here.summary(), there.summary()
    # each target binds: without it the release is another
    plain = incrowd.publish(weighted, _risk_spec(**{k: v for k, v in target.items() if k == "l"})).summary()
    assert (plain["levels"], plain["suppressed"]) != (a["levels"], a["suppressed"])
    for key in ("levels", "rows_out", "suppressed", "classes", "min_class_size", "nodes_evaluated"):
        assert b[key] == a[key], key
    assert set(b["risk_targets"]) == set(a["risk_targets"]) == set(target) - {"l"}
    for key, want in a["risk_targets"].items():
        assert b["risk_targets"][key]["achieved"] == pytest.approx(want["achieved"], rel=1e-9)
        assert b["risk_targets"][key]["target"] == want["target"] and want["achieved"] <= want["target"]
    assert_same_release(here, tmp_path / "release", tmp_path, parts)


def test_a_risk_target_no_node_meets_is_refused_as_in_process(client, weighted, tmp_path):
    parts = _split(weighted.iloc[:8000], tmp_path / "parts", [0, 3000, 8000])
    spec = _risk_spec(max_global_risk=1e-9)
    with pytest.raises(ParameterError) as here:
        incrowd.publish(weighted.iloc[:8000], spec)
    with pytest.raises(ParameterError) as there:
        incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    assert str(there.value) == str(here.value) and "\n" not in str(there.value)
    assert str(there.value).startswith("no generalization meets max_global_risk=1e-09")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts"]


def test_the_whole_releases_risk_is_verified_from_the_written_partitions_keys():
    # a key may span partitions, and a missing cell matches any value in every partition: the
    # risk of the union is the risk incrowd.risk measures on the whole written file
    from incrowd.exceptions import VerificationError
    from incrowd.publishing import check_written_risk, written_keys
    from incrowd.publishing._risk_targets import measured

    one = pd.DataFrame({"a": ["x", "x", "y", None], "b": [1.0, 1.0, 2.0, 2.0], "w": [10.0, 30.0, 20.0, 5.0]})
    two = pd.DataFrame({"a": ["x ", "y", "y"], "b": [1, 2, 2], "w": [40.0, 10.0, 10.0]})
    whole = pd.concat([one, two], ignore_index=True)
    want = measured(whole, ["a", "b"], "w")
    targets = {"max_individual_risk": 1.0, "max_global_risk": 1.0, "max_expected_reidentifications": 10.0}
    parts = [written_keys(one, ["a", "b"], "w"), written_keys(two, ["a", "b"], "w")]
    got = check_written_risk(targets, "w", parts, ["a", "b"])["targets"]
    for key in targets:
        assert got[key]["achieved"] == pytest.approx(want[key], rel=1e-12), key
    # the first partition alone is riskier than the union: a missing partition is not verified
    alone = check_written_risk(targets, "w", parts[:1], ["a", "b"])["targets"]["max_individual_risk"]["achieved"]
    assert alone > want["max_individual_risk"]
    limit = (alone + want["max_individual_risk"]) / 2
    check_written_risk({"max_individual_risk": limit}, "w", parts, ["a", "b"])
    with pytest.raises(VerificationError, match=rf"^the written release does not meet max_individual_risk={limit:g}: "
                                                r"it reaches .*; nothing was written$"):
        check_written_risk({"max_individual_risk": limit}, "w", parts[:1], ["a", "b"])
    with pytest.raises(VerificationError, match=r"^the written release does not meet max_global_risk=0.01"):
        check_written_risk({"max_global_risk": 0.01}, "w", parts, ["a", "b"])


def test_a_weight_column_without_risk_targets_publishes_the_in_process_release(client, weighted, tmp_path):
    # the weight is a column like any other then: the search reads no weight
    frame = weighted.iloc[:6000]
    parts = _split(frame, tmp_path / "parts", [0, 2500, 6000])
    here = incrowd.publish(frame, _risk_spec())
    incrowd.publish(parts, _risk_spec(), scheduler=client, output=tmp_path / "release")
    assert_same_release(here, tmp_path / "release", tmp_path, parts)


def test_risk_targets_with_missing_key_cells_publish_the_in_process_release(client, weighted, tmp_path):
    # a missing race matches every race, in every partition: its fk and Fk count rows of other
    # partitions, in the search and in the whole release's check
    frame = weighted.copy()
    frame.loc[frame["id"] % 71 == 0, "race"] = np.nan
    hierarchy = tmp_path / "race.csv"
    hierarchy.write_text((data_dir() / "adult_arx" / "adult_hierarchy_race.csv").read_text().rstrip("\n") + "\nNA;*\n")
    parts = _split(frame, tmp_path / "parts", [0, 9000, 21000, len(frame)])

    def spec(**privacy):
        out = _risk_spec(**privacy)
        out["columns"]["race"]["hierarchy"] = str(hierarchy)
        return out

    here = incrowd.publish(frame, spec(max_individual_risk=0.01))
    assert here.summary()["levels"]["race"] == 0  # published missing: the cells match any value
    assert here.summary()["suppressed"] > incrowd.publish(frame, spec()).summary()["suppressed"]
    there = incrowd.publish(parts, spec(max_individual_risk=0.01), scheduler=client, output=tmp_path / "release")
    for key in ("levels", "rows_out", "suppressed", "classes"):
        assert there.summary()[key] == here.summary()[key], key
    assert there.summary()["risk_targets"]["max_individual_risk"]["achieved"] == \
        pytest.approx(here.summary()["risk_targets"]["max_individual_risk"]["achieved"], rel=1e-9)
    assert_same_release(here, tmp_path / "release", tmp_path, parts)


def test_cli_says_each_risk_target_reached_on_partitions(client, weighted, tmp_path):
    from incrowd.publishing import spec_to_toml

    frame = weighted.iloc[:5000]
    parts = _split(frame, tmp_path / "parts", [0, 2000, 5000])
    (tmp_path / "release.toml").write_text(spec_to_toml(_risk_spec(max_individual_risk=0.02)))
    done = cli("publish", str(parts), "--spec", str(tmp_path / "release.toml"), "--scheduler",
               client.scheduler.address, "-o", str(tmp_path / "release"), timeout=300)
    assert done.returncode == 0, done.stderr
    want = incrowd.publish(frame, _risk_spec(max_individual_risk=0.02)).summary()["risk_targets"]
    line = next(x for x in done.stdout.splitlines() if x.startswith("risk targets"))
    assert line.split(None, 2)[2] == f"max_individual_risk {want['max_individual_risk']['achieved']:.4g} (at most 0.02)"


def test_a_weight_below_one_in_a_partition_is_one_line_naming_it(client, weighted, tmp_path):
    frame = weighted.iloc[:4000].copy()
    frame.loc[2500, "weight"] = 0.5
    parts = _split(frame, tmp_path / "parts", [0, 2000, 4000])
    with pytest.raises(DataError) as raised:
        incrowd.publish(parts, _risk_spec(max_individual_risk=0.1), scheduler=client, output=tmp_path / "release")
    text = str(raised.value)
    assert "\n" not in text and "part-1.parquet" in text and "row 501" in text and "'weight'" in text and "np." not in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts"]


def _in_process_report(frame: pd.DataFrame, here):
    return incrowd.report(frame, here.table, **here.report_options(), figures=False)


def test_cli_publish_with_report_on_partitions_writes_the_in_process_reports_figures(client, adult, tmp_path):
    from incrowd.publishing import spec_to_toml

    frame = adult.iloc[:9000]
    parts = _split(frame, tmp_path / "parts", [0, 3000, 3000, 9000])  # one empty
    (tmp_path / "release.toml").write_text(spec_to_toml(_spec()))
    done = cli("publish", str(parts), "--spec", str(tmp_path / "release.toml"), "--scheduler",
               client.scheduler.address, "-o", str(tmp_path / "release"), "--report", str(tmp_path / "report.json"),
               timeout=300)
    assert done.returncode == 0, done.stderr
    here = incrowd.publish(frame, _spec())
    assert 0 < here.summary()["suppressed"]  # rows suppressed: the pairs align by the kept rows
    got = json.loads((tmp_path / "report.json").read_text())
    want = _in_process_report(frame, here)
    assert_same_report(want, got)
    assert got["about"]["partitions"] == 3 and got["about"]["k"] == 5
    assert "attribute_disclosure" in want.risk and "attribute_disclosure" in got["about"]["left_out"]
    assert got["utility"]["numeric"]["il1s"] > 0
    assert "written" in done.stdout and "report" in done.stdout


def test_publish_with_report_on_partitions_writes_nothing_when_the_release_fails(client, adult, tmp_path):
    # the release and its report are written together or not at all
    parts = _split(adult.iloc[:3000], tmp_path / "parts", [0, 1000, 3000])
    with pytest.raises(ParameterError, match="max_suppression"):
        incrowd.publish(parts, _spec(k=200, max_suppression=0), scheduler=client, output=tmp_path / "release",
                        report=tmp_path / "report.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts"]
    with pytest.raises(ParameterError, match=r"^report= is for a partitioned dataset on Dask"):
        incrowd.publish(adult.iloc[:3000], _spec(), report=tmp_path / "report.json")


def test_report_of_a_dask_published_release_equals_the_in_process_releases(client, adult, tmp_path):
    frame = adult.iloc[:12000]
    parts = _split(frame, tmp_path / "parts", [0, 4000, 4000, 7500, 12000])
    incrowd.publish(parts, _spec(), scheduler=client, output=tmp_path / "release")
    here = incrowd.publish(frame, _spec())
    options = here.report_options()
    there = incrowd.report(parts, tmp_path / "release", options["quasi_identifiers"], options["sensitive"],
                           k=5, numeric=options["numeric"], scheduler=client)
    assert_same_report(_in_process_report(frame, here), there)
    assert there.about["partitions"] == 4 and there.about["suppressed"] == here.summary()["suppressed"] > 0
