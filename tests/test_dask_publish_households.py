"""A household survey published on Dask from a partitioned file (sdcMicro's testdata: 4,580
persons in 1,000 households, split by household into partitions): household-level variables
recoded for the whole household, ``max_household_risk`` as a target, the household check on
the written partitions and the household id kept, renumbered or dropped, each the in-process
release row by row; a household split over two partitions is refused in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
sys.path.insert(0, str(Path(__file__).parent))

import _household as household  # noqa: E402
from _dask_tests import cli, client  # noqa: E402,F401
from benchdata import data_dir  # noqa: E402
from test_distributed_publish import _read_part, assert_same_release  # noqa: E402

import incrowd  # noqa: E402
from incrowd.exceptions import DataError, ParameterError  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

HOUSEHOLD_LEVEL = ["urbrur", "water"]
#: relat's codes grouped as the curator groups its labels (household._household.RELAT_GROUPS)
RELAT_GROUPS = {1: 1, 2: 2, 3: 3, 4: 7, 5: 3, 6: 7, 7: 7, 8: 8, 9: 9}


@pytest.fixture(scope="module")
def survey(tmp_path_factory) -> tuple[pd.DataFrame, Path]:
    """The curator's survey as codes with a person id, and the hierarchy files of its keys."""
    if not (data_dir() / "testdata.csv").exists():
        pytest.skip("benchmark data folder not found")
    frame = household.household_frame(data_dir())
    frame.insert(0, "id", np.arange(1, len(frame) + 1))
    folder = household.write_hierarchies(tmp_path_factory.mktemp("households") / "h")
    # a partitioned file is published with a hierarchy file for every categorical key
    for c in ["urbrur", "water", "sex", "hhcivil"]:
        (folder / f"{c}.csv").write_text("".join(f"{v};*\n" for v in sorted(frame[c].unique())))
    (folder / "relat.csv").write_text("".join(f"{v};{RELAT_GROUPS[v]};*\n" for v in sorted(frame["relat"].unique())))
    return frame, folder


def _spec(folder: Path, suppression: str = "rows", **privacy) -> dict:
    columns: dict = {c: {"role": "categorical", "hierarchy": str(folder / f"{c}.csv")} for c in household.KEYS}
    columns["age"]["match"] = "code"
    for c in HOUSEHOLD_LEVEL:
        columns[c]["household_level"] = True
    columns.update({household.WEIGHT: "weight", household.HOUSEHOLD_ID: "household", "id": "other"})
    return {"privacy": {"k": 3, "max_suppression": "10%", "suppression": suppression, **privacy}, "columns": columns}


def _by_household(frame: pd.DataFrame, folder: Path, n: int) -> Path:
    """``frame`` in ``n`` Parquet partitions, each household's persons in one."""
    starts = np.flatnonzero(np.r_[True, frame["ori_hid"].to_numpy()[1:] != frame["ori_hid"].to_numpy()[:-1]])
    bounds = [0, *(int(starts[np.searchsorted(starts, len(frame) * i // n)]) for i in range(1, n)), len(frame)]
    return _write_parts(frame, folder, bounds)


def _write_parts(frame: pd.DataFrame, folder: Path, bounds) -> Path:
    folder.mkdir()
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        frame.iloc[a:b].to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder


def _one_value_per_household(folder: Path, ids: str = "ori_hid") -> None:
    for f in sorted(folder.iterdir()):
        part = _read_part(f)
        for c in HOUSEHOLD_LEVEL:
            assert part.groupby(ids)[c].nunique(dropna=False).max() <= 1, (f.name, c)


def test_household_level_variables_on_partitions_are_the_in_process_release(client, survey, tmp_path):
    frame, folder = survey
    parts = _by_household(frame, tmp_path / "parts", 4)
    here = incrowd.publish(frame, _spec(folder))
    there = incrowd.publish(parts, _spec(folder), scheduler=client, output=tmp_path / "release")
    a, b = here.summary(), there.summary()
    for key in ("levels", "rows_out", "suppressed", "classes", "min_class_size", "household_level"):
        assert b[key] == a[key], key
    assert b["household_level"] == HOUSEHOLD_LEVEL and b["household"] == "ori_hid"
    assert_same_release(here, tmp_path / "release", tmp_path, parts)
    _one_value_per_household(tmp_path / "release")


def test_a_column_household_level_in_one_partition_only_is_a_persons_variable(client, survey, tmp_path):
    # hhcivil is the same for every member in the first partition's households (made so here):
    # unflagged, it is household-level only where the whole file holds it so, as in process
    frame, folder = survey
    frame = frame.copy()
    first = frame.index < 1200
    frame.loc[first, "hhcivil"] = frame.loc[first].groupby("ori_hid")["hhcivil"].transform("first")
    parts = _by_household(frame, tmp_path / "parts", 3)
    assert frame.iloc[:1200].groupby("ori_hid")["hhcivil"].nunique().max() == 1
    here = incrowd.publish(frame, _spec(folder))
    there = incrowd.publish(parts, _spec(folder), scheduler=client, output=tmp_path / "release")
    assert there.summary()["household_level"] == here.summary()["household_level"] == HOUSEHOLD_LEVEL
    assert_same_release(here, tmp_path / "release", tmp_path, parts)


def test_max_household_risk_on_partitions_is_met_verified_and_the_in_process_release(client, survey, tmp_path):
    frame, folder = survey
    parts = _by_household(frame, tmp_path / "parts", 3)
    here = incrowd.publish(frame, _spec(folder, max_household_risk=0.01))
    # the target binds: rows go for it
    assert here.summary()["suppressed"] > incrowd.publish(frame, _spec(folder)).summary()["suppressed"]
    there = incrowd.publish(parts, _spec(folder, max_household_risk=0.01), scheduler=client,
                            output=tmp_path / "release")
    for key in ("levels", "rows_out", "suppressed", "classes"):
        assert there.summary()[key] == here.summary()[key], key
    achieved = there.summary()["risk_targets"]["max_household_risk"]["achieved"]
    assert achieved == pytest.approx(here.summary()["risk_targets"]["max_household_risk"]["achieved"], rel=1e-9)
    assert achieved <= 0.01
    assert_same_release(here, tmp_path / "release", tmp_path, parts)
    # measured on the written release as incrowd risk measures a file
    written = pd.concat([_read_part(f) for f in sorted((tmp_path / "release").iterdir())], ignore_index=True)
    measured = incrowd.risk(written, household.KEYS, weight=household.WEIGHT, household="ori_hid", suda=False)
    assert measured.summary()["highest_household_risk"] == pytest.approx(achieved, rel=1e-9)


@pytest.mark.parametrize("how", ["renumber", "drop"])
def test_the_household_id_renumbered_or_dropped_on_partitions(client, survey, tmp_path, how):
    frame, folder = survey
    parts = _by_household(frame, tmp_path / "parts", 3)
    spec = _spec(folder, household_id=how, max_household_risk=0.01)
    here = incrowd.publish(frame, spec)
    incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    assert_same_release(here, tmp_path / "release", tmp_path, parts)
    columns = _read_part(next((tmp_path / "release").iterdir())).columns
    if how == "drop":
        assert "ori_hid" not in columns
    else:
        written = pd.concat([_read_part(f) for f in sorted((tmp_path / "release").iterdir())], ignore_index=True)
        # numbered 1, 2, ... over the whole release, in order of first appearance
        assert written["ori_hid"].tolist() == (pd.factorize(written["ori_hid"])[0] + 1).tolist()
        assert written["ori_hid"].max() > written["ori_hid"].iloc[0] + 500


def test_a_household_split_over_two_partitions_is_refused_in_one_line(client, survey, tmp_path):
    frame, folder = survey
    cut = int(np.flatnonzero(frame["ori_hid"].to_numpy() == frame["ori_hid"].iloc[2000])[0]) + 1  # inside it
    assert frame["ori_hid"].iloc[cut - 1] == frame["ori_hid"].iloc[cut]
    parts = _write_parts(frame, tmp_path / "parts", [0, 1000, cut, len(frame)])
    hid = frame["ori_hid"].iloc[cut]
    with pytest.raises(DataError, match=rf"^household {hid} \(column 'ori_hid'\) has rows in \S*part-1.parquet and "
                                        r"\S*part-2.parquet; each household must lie in one partition: .*$") as got:
        incrowd.publish(parts, _spec(folder), scheduler=client, output=tmp_path / "release")
    assert "\n" not in str(got.value)
    assert not (tmp_path / "release").exists()


def test_cells_beside_a_household_column_are_refused_on_partitions(survey, tmp_path):
    frame, folder = survey
    parts = _by_household(frame, tmp_path / "parts", 2)
    with pytest.raises(ParameterError, match=r"^a partitioned file is published with .*; not with a household column "
                                             r"with cell suppression: publish it in one process$"):
        incrowd.publish(parts, _spec(folder, "cells"), scheduler="local:1", output=tmp_path / "release")


def test_a_household_column_beside_risk_targets_and_numeric_keys_is_refused_on_partitions(survey):
    """One process suppresses the group of a household's riskiest member for max_household_risk;
    the partitions' decision over groups has no households, so that release is refused there."""
    from incrowd.publishing import load_spec, partitioned_refusal

    frame, folder = survey
    spec = _spec(folder, max_household_risk=0.2)
    spec["columns"]["age"] = "numeric"
    said = partitioned_refusal(load_spec(spec))
    assert said is not None and "\n" not in said
    assert said.endswith("not with a household column beside risk targets and numeric quasi-identifiers (age): "
                         "publish it in one process"), said
    del spec["columns"][household.HOUSEHOLD_ID]
    spec["privacy"] = {**spec["privacy"], "max_individual_risk": 0.2}
    del spec["privacy"]["max_household_risk"]
    for c in HOUSEHOLD_LEVEL:
        del spec["columns"][c]["household_level"]
    assert partitioned_refusal(load_spec(spec)) is None  # without the household column it is taken


def test_cli_publishes_a_household_survey_on_partitions(client, survey, tmp_path):
    from incrowd.publishing import spec_to_toml

    frame, folder = survey
    parts = _by_household(frame, tmp_path / "parts", 3)
    (tmp_path / "release.toml").write_text(spec_to_toml(_spec(folder, max_household_risk=0.01)))
    done = cli("publish", str(parts), "--spec", str(tmp_path / "release.toml"), "--scheduler",
               client.scheduler.address, "-o", str(tmp_path / "release"), timeout=300)
    assert done.returncode == 0, done.stderr
    assert any(line.startswith("risk targets") and "max_household_risk" in line for line in done.stdout.splitlines())
    _one_value_per_household(tmp_path / "release")
    # a split household: one line, exit 2
    split = _write_parts(frame, tmp_path / "split", [0, 1001, len(frame)])
    done = cli("publish", str(split), "--spec", str(tmp_path / "release.toml"), "--scheduler",
               client.scheduler.address, "-o", str(tmp_path / "again"), timeout=300)
    assert done.returncode == 2
    assert done.stderr.startswith("error: household ") and done.stderr.count("\n") == 1, done.stderr


# --------------------------------------------------------------------------------------------
# [[perturb]] steps on partitions: those that change a cell from itself alone


ROW_BY_ROW_STEPS = [{"columns": ["income"], "method": "top_code", "value": 90_000_000},
                    {"columns": ["savings"], "method": "bottom_code", "value": 500_000, "replacement": 0},
                    {"columns": ["expend", "income"], "method": "round", "base": 1_000_000}]


def _perturb_spec(folder: Path, steps: list[dict]) -> dict:
    spec = _spec(folder)
    changed = {c for step in steps for c in step["columns"]}
    spec["columns"].update({c: "perturb" for c in changed})
    spec["perturb"] = steps
    return spec


def test_top_and_bottom_coding_and_rounding_on_partitions_are_the_in_process_release(client, survey, tmp_path):
    frame, folder = survey
    parts = _by_household(frame, tmp_path / "parts", 3)
    spec = _perturb_spec(folder, ROW_BY_ROW_STEPS)
    here = incrowd.publish(frame, spec)
    there = incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    assert_same_release(here, tmp_path / "release", tmp_path, parts)

    def steps(summary):
        return [{k: v for k, v in s.items() if k != "seconds"} for s in summary["perturbation"]]

    assert steps(there.summary()) == steps(here.summary())
    assert [s["method"] for s in there.summary()["perturbation"]] == ["top_code", "bottom_code", "round"]
    assert there.summary()["perturbation"][0]["top_coded"] > 0
    written = pd.concat([_read_part(f) for f in sorted((tmp_path / "release").iterdir())], ignore_index=True)
    assert written["income"].max() == 90_000_000 and (written["expend"] % 1_000_000 == 0).all()


def test_perturb_steps_that_read_the_whole_column_are_refused_on_partitions_in_one_line(survey, tmp_path):
    frame, folder = survey
    parts = _by_household(frame, tmp_path / "parts", 2)
    steps = [ROW_BY_ROW_STEPS[0], {"columns": ["savings"], "method": "rank_swap", "p": 5},
             {"columns": ["expend"], "method": "noise", "amount": 10}]
    with pytest.raises(ParameterError, match=r"^a partitioned file is published with .*; not with \[\[perturb\]\] "
                                             r"steps rank_swap, noise \(each reads the whole column: ranks, a "
                                             r"regression, groups or one random stream over all rows, while "
                                             r"top_code, bottom_code and round run partition by partition\): "
                                             r"publish it in one process$"):
        incrowd.publish(parts, _perturb_spec(folder, steps), scheduler="local:1", output=tmp_path / "release")
    assert not (tmp_path / "release").exists()
