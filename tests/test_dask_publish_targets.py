"""Risk targets on a partitioned file (Dask, a LocalCluster of 2 worker processes) where one
process meets them beyond the node's classes: with ``suppression = "cells"`` (more cells
blanked, decided from every row's weight) and beside numeric quasi-identifiers (the
microaggregation groups above a target suppressed). The in-process release, row by row; what
one process refuses is refused in the same line, nothing written."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
from _dask_tests import cli, client  # noqa: E402,F401,F811
from test_distributed_publish import _risk_spec, _spec, _split, adult, assert_same_release  # noqa: E402,F401,F811

import incrowd  # noqa: E402
from incrowd.exceptions import ParameterError  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]


@pytest.fixture(scope="module")
def weighted(adult) -> pd.DataFrame:
    """3,000 rows of Adult with a sampling weight per row (deterministic, 1 to 5: a small
    population, so that the targets bind)."""
    frame = adult.iloc[:3000].drop(columns=["hours"]).reset_index(drop=True)
    frame["weight"] = 1.0 + (frame["id"] * 7919 % 5)
    return frame


def _cell_targets(**privacy) -> dict:
    return _risk_spec(suppression="cells", **privacy)


def _same(here, there, keys=("levels", "rows_out", "suppressed", "classes", "suppressed_cells")) -> None:
    a, b = here.summary(), there.summary()
    for key in keys:
        assert b[key] == a[key], key
    assert set(b["risk_targets"]) == set(a["risk_targets"])
    for key, want in a["risk_targets"].items():
        assert b["risk_targets"][key]["achieved"] == pytest.approx(want["achieved"], rel=1e-9), key


@pytest.mark.parametrize("target", [{"max_individual_risk": 0.02},
                                    {"max_global_risk": 0.002},
                                    {"max_individual_risk": 0.2, "max_expected_reidentifications": 20,
                                     "missing_matches": "any"}])
def test_cell_suppression_for_risk_targets_on_partitions_blanks_the_in_process_cells(client, weighted, tmp_path,
                                                                                      target):
    # the rows of a key sit in several partitions, their weights too: the blanks are decided
    # from the summed weights, as one process decides them from every row's
    parts = _split(weighted, tmp_path / "parts", [0, 700, 700, 1900, len(weighted)])  # one empty
    here = incrowd.publish(weighted, _cell_targets(**target))
    plain = incrowd.publish(weighted, _cell_targets(**{k: v for k, v in target.items()
                                                       if not k.startswith("max_")})).summary()
    # the targets blank more than k alone
    assert sum(here.summary()["suppressed_cells"].values()) > sum(plain["suppressed_cells"].values())
    there = incrowd.publish(parts, _cell_targets(**target), scheduler=client, output=tmp_path / "release")
    _same(here, there)
    assert_same_release(here, tmp_path / "release", tmp_path, parts)


def test_cells_that_cannot_meet_a_target_are_refused_on_partitions_as_in_process(client, weighted, tmp_path):
    frame = weighted
    parts = _split(frame, tmp_path / "parts", [0, 1000, 3000])
    spec = _cell_targets(max_global_risk=1e-6)
    with pytest.raises(ParameterError) as here:
        incrowd.publish(frame, spec)
    with pytest.raises(ParameterError) as there:
        incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    assert str(there.value) == str(here.value) and "\n" not in str(there.value)
    assert str(there.value).startswith("cell suppression cannot meet max_global_risk=1e-06")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts"]


def test_the_cell_limit_counts_the_targets_blanks_on_partitions_as_in_process(client, weighted, tmp_path):
    frame = weighted
    parts = _split(frame, tmp_path / "parts", [0, 2000, 3000])
    k_alone = sum(incrowd.publish(frame, _cell_targets()).summary()["suppressed_cells"].values())
    spec = _cell_targets(max_individual_risk=0.02, max_suppressed_cells=k_alone)
    with pytest.raises(ParameterError) as here:
        incrowd.publish(frame, spec)
    with pytest.raises(ParameterError) as there:
        incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    assert str(there.value) == str(here.value) and str(here.value).startswith("local suppression needs ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts"]


def test_counted_quantile_is_numpys_quantile_of_the_repeated_values():
    from incrowd.publishing._risk_targets import counted_quantile

    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 12))
        values = rng.choice([0.001, 0.5, 1 / 3, 0.2, 0.7, 1e-9, 0.25], n)
        counts = rng.integers(1, 40, n)
        q = float(rng.choice([0.99, 0.5, 0.0, 1.0, 0.37]))
        assert counted_quantile(values, counts, q) == np.quantile(np.repeat(values, counts), q)


@pytest.fixture(scope="module")
def numeric(adult) -> pd.DataFrame:
    """3,000 rows of Adult with age a numeric quasi-identifier and a sampling weight (1 to 5)."""
    frame = adult.iloc[:3000].reset_index(drop=True)
    frame["weight"] = 1.0 + (frame["id"] * 7919 % 5)
    return frame


def _numeric_targets(**privacy) -> dict:
    spec = _spec(l=privacy.pop("l", None), **privacy)
    spec["columns"].update({"weight": "weight", "hours": "other"})
    return spec


@pytest.mark.parametrize("target", [{"max_individual_risk": 0.13}, {"max_global_risk": 0.05}])
def test_risk_targets_beside_numeric_quasi_identifiers_on_partitions_publish_the_in_process_release(
        client, numeric, tmp_path, target):
    # a class's rows come from several partitions and are microaggregated on one worker; the
    # groups above a target, and the nodes the search passes over for them, are decided from
    # every group's key, rows and weight, as one process decides them
    parts = _split(numeric, tmp_path / "parts", [0, 800, 800, 2100, len(numeric)])  # one empty
    here = incrowd.publish(numeric, _numeric_targets(**target))
    plain = incrowd.publish(numeric, _numeric_targets()).summary()
    assert (plain["levels"], plain["suppressed"]) != (here.summary()["levels"], here.summary()["suppressed"])
    there = incrowd.publish(parts, _numeric_targets(**target), scheduler=client, output=tmp_path / "release")
    _same(here, there, keys=("levels", "rows_out", "suppressed", "classes", "min_class_size", "nodes_evaluated"))
    assert_same_release(here, tmp_path / "release", tmp_path, parts)


def test_groups_that_miss_a_global_target_are_refused_on_partitions_as_in_process(client, numeric, tmp_path):
    parts = _split(numeric, tmp_path / "parts", [0, 1200, 3000])
    spec = _numeric_targets(max_global_risk=0.01)
    # the search judges by its groups every node that passes on its classes: a lattice of a few
    # nodes keeps the test short (each node judged is a pass over the partitions)
    spec["levels"] = {"sex": 0, "race": 1, "marital-status": 1, "education": 2, "native-country": 2}
    with pytest.raises(ParameterError) as here:
        incrowd.publish(numeric, spec)
    with pytest.raises(ParameterError) as there:
        incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    assert str(there.value) == str(here.value) and "\n" not in str(there.value)
    assert str(there.value).startswith("the numeric quasi-identifiers (age) are published as their microaggregation")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts"]


def test_a_partitioned_release_takes_risk_targets_with_cells_and_beside_numeric_keys():
    from incrowd.publishing import load_spec, partitioned_refusal

    cells = load_spec(_cell_targets(max_individual_risk=0.1))
    beside = load_spec(_numeric_targets(max_individual_risk=0.1))
    assert cells.suppression == "cells" and cells.risk_targets and partitioned_refusal(cells) is None
    assert beside.risk_targets and partitioned_refusal(beside) is None
    # what a partitioned release still does not take is refused in one line, and names only that
    perturbed = _numeric_targets(max_individual_risk=0.1)
    perturbed["columns"]["hours"] = "perturb"
    perturbed = load_spec({**perturbed, "perturb": [{"columns": ["hours"], "method": "microaggregation", "k": 3}]})
    said = partitioned_refusal(perturbed)
    assert said is not None and "\n" not in said and "[[perturb]] steps" in said and "risk targets" not in said.split(
        "not with ")[1]


def test_cli_publishes_cells_for_risk_targets_on_partitions(client, weighted, tmp_path):
    from incrowd.publishing import spec_to_toml

    parts = _split(weighted, tmp_path / "parts", [0, 1300, 3000])
    (tmp_path / "release.toml").write_text(spec_to_toml(_cell_targets(max_individual_risk=0.02)))
    done = cli("publish", str(parts), "--spec", str(tmp_path / "release.toml"), "--scheduler", "local:2",
               "-o", str(tmp_path / "release"), timeout=300)
    assert done.returncode == 0, done.stderr
    here = incrowd.publish(weighted, _cell_targets(max_individual_risk=0.02))
    line = next(x for x in done.stdout.splitlines() if x.startswith("risk targets"))
    want = here.summary()["risk_targets"]["max_individual_risk"]["achieved"]
    assert line.split(None, 2)[2] == f"max_individual_risk {want:.4g} (at most 0.02)"
    assert_same_release(here, tmp_path / "release", tmp_path, parts)
