"""Local recoding over hierarchies (each class at its own levels) against brute force: k on the
published table, every published value covering its rows' values, each class at its rows'
lowest common ancestor, no class left that could be split, the metrics equal to the row-by-row
reference, and never above a global start node's loss; the CLI's ``--recoding local``."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_hierarchies import random_hierarchy_rows
from typer.testing import CliRunner

from incrowd.cli import app
from incrowd.exceptions import DataError, ParameterError
from incrowd.generalization import (
    Lattice,
    generalize,
    load_hierarchies,
    local_recoding,
    negotiate,
    released_metrics,
)
from incrowd.generalization._cells import encode_cells
from incrowd.generalization._hierarchy import hierarchy_from_rows
from incrowd.generalization._utility_metrics import cell_losses, cell_metrics

ADULT_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


def _hier(name, rows):
    return hierarchy_from_rows(name, [r.split(";") for r in rows], f"test {name}")


def _random_case(draw, n_min=1, n_max=40):
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    m = draw(st.integers(1, 3))
    n = draw(st.integers(n_min, n_max))
    frame = pd.DataFrame(index=range(n))
    hier = {}
    for j in range(m):
        rows = random_hierarchy_rows(rng, j)
        name = f"q{j}"
        hier[name] = hierarchy_from_rows(name, rows, f"random {name}")
        frame[name] = [f"a{j}v{c}" for c in rng.zipf(1.5, size=n) % len(rows)]
    frame["other"] = np.arange(n)
    return frame, hier


def _check_release(frame, hier, result, k, weights=None):
    """Everything local recoding promises, checked from the tables alone."""
    qis = list(hier)
    out = result.table
    kept = frame.iloc[result.kept_rows].reset_index(drop=True)
    assert out["other"].tolist() == kept["other"].tolist()  # other columns and row order kept
    # k on the published values themselves
    sizes = out.groupby(qis, sort=False).size()
    assert sizes.min() >= k and result.classes == sizes.size and result.min_class_size == sizes.min()
    assert result.verification["k_anonymity"]["min_class_size"] >= k
    codes0 = {a: encode_cells(hier[a], kept[a]).astype(np.int64) for a in qis}
    for j, a in enumerate(qis):
        h = hier[a]
        levels = result.row_levels[:, j]
        # each published value is the row's own value's ancestor at the row's level
        expected = [h.labels[L][h.code_map(L)[c]] for L, c in zip(levels.tolist(), codes0[a].tolist())]
        assert out[a].tolist() == expected
    # each class at the lowest level its rows share a value (brute force per class and level),
    # and no class could be split further: some child of every generalized value holds < k rows
    class_id = out.groupby(qis, sort=False).ngroup().to_numpy()
    for c in np.unique(class_id):
        rows = np.flatnonzero(class_id == c)
        for j, a in enumerate(qis):
            h = hier[a]
            L = int(result.row_levels[rows[0], j])
            assert (result.row_levels[rows, j] == L).all()
            shared = [lv for lv in range(h.depth) if len(set(h.code_map(lv)[codes0[a][rows]].tolist())) == 1]
            assert L == min(shared)
            if L > 0:
                children = h.code_map(L - 1)[codes0[a][rows]]
                assert np.unique(children, return_counts=True)[1].min() < k
    # the metrics equal the row-by-row reference computed from the published labels
    reference = released_metrics(out, hier, n_rows=frame.shape[0], weights=weights)
    assert result.metrics["loss"] == pytest.approx(reference["loss"], abs=1e-12)
    assert result.metrics["discernibility"] == reference["discernibility"]
    assert result.metrics["aecs"] == pytest.approx(reference["aecs"])


def test_hand_example_splits_the_dense_region_only():
    # the north's towns hold 2 rows of each sex, the south's two towns one row each: a global
    # node must publish every town as '*' or every sex as '*'; local recoding keeps the north
    # exact and publishes the south's two rows as (south, *)
    hier = {"town": _hier("town", ["t1;north;*", "t2;north;*", "t3;south;*", "t4;south;*"]),
            "sex": _hier("sex", ["F;*", "M;*"])}
    frame = pd.DataFrame({"town": ["t1", "t1", "t1", "t1", "t2", "t2", "t2", "t2", "t3", "t4"],
                          "sex": ["F", "F", "M", "M", "F", "F", "M", "M", "F", "M"]})
    result = local_recoding(frame, hier, 2)
    assert result.table["town"].tolist() == ["t1"] * 4 + ["t2"] * 4 + ["south", "south"]
    assert result.table["sex"].tolist() == ["F", "F", "M", "M", "F", "F", "M", "M", "*", "*"]
    # loss: the south's two town cells cost (2 - 1) / 3, its two sex cells 1; over 20 cells
    assert result.metrics["loss"] == pytest.approx((2 / 3 + 2) / 20)
    assert result.metrics["discernibility"] == 4 * 2**2 + 2**2
    assert result.classes == 5 and result.suppressed == 0
    assert result.level_ranges == {"town": (0, 1), "sex": (0, 1)}
    # the best global node with nothing suppressed (brute force over the 6 nodes): every town
    # as '*', sex kept (loss 10 / 20)
    nodes = [generalize(frame, {"town": t, "sex": x}, k=2, hierarchies=hier) for t in range(3) for x in range(2)]
    best = min((r for r in nodes if r.suppressed == 0), key=lambda r: r.metrics["loss"])
    assert best.levels == {"town": 2, "sex": 0}
    assert best.metrics["loss"] == pytest.approx(0.5)
    # the split by sex gains more at once (10 cells against 20 / 3) but leaves no town split
    # below it: without looking ahead the greedy stops at the global node's loss
    myopic = local_recoding(frame, hier, 2, lookahead=False)
    assert myopic.table["town"].tolist() == ["*"] * 10
    assert myopic.metrics["loss"] == pytest.approx(0.5)


def test_cell_losses_equal_the_reference_on_every_global_node():
    hier = {"town": _hier("town", ["t1;north;*", "t2;north;*", "t3;south;*", "t4;south;*", "t5;south;*"]),
            "sex": _hier("sex", ["F;*", "M;*"])}
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"town": rng.choice(["t1", "t2", "t3", "t4", "t5"], 40), "sex": rng.choice(["F", "M"], 40)})
    codes0 = np.column_stack([encode_cells(hier[a], frame[a]) for a in hier]).astype(np.int64)
    for levels in itertools.product(range(3), range(2)):
        node = dict(zip(hier, levels))
        released = generalize(frame, node, k=2, hierarchies=hier)
        kept = released.kept_rows
        cell_levels = np.tile(np.array(levels), (kept.size, 1))
        class_of = released.table.groupby(list(hier), sort=False).ngroup().to_numpy()
        got = cell_metrics(list(hier.values()), codes0[kept], cell_levels, class_of, 40)
        reference = released_metrics(released.table, hier, n_rows=40, levels=node)
        for name in ("loss", "discernibility", "aecs", "precision"):
            assert got[name] == pytest.approx(reference[name], abs=1e-12), (node, name)
        assert got["loss"] == pytest.approx(released.metrics["loss"], abs=1e-12)
    # one cell per level of a 5-leaf hierarchy: 0, (2 - 1) / 4 or (3 - 1) / 4, 1
    losses = cell_losses(hier["town"], np.array([0, 0, 2, 4]), np.array([0, 1, 1, 2]))
    assert losses.tolist() == [0.0, 0.25, 0.5, 1.0]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_tables_meet_k_and_equal_the_brute_force(data):
    frame, hier = _random_case(data.draw)
    n = frame.shape[0]
    k = data.draw(st.integers(2, 4))
    if n < k:
        with pytest.raises(ParameterError, match="k="):
            local_recoding(frame, hier, k)
        return
    metric = data.draw(st.sampled_from(["loss", "discernibility"]))
    weights = data.draw(st.sampled_from([None, {"q0": 3.0}, {"q0": 0.5}]))
    result = local_recoding(frame, hier, k, metric=metric, metric_weights=weights)
    assert result.suppressed == 0  # one top value per random hierarchy: nothing to suppress
    _check_release(frame, hier, result, k, weights)


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_from_the_best_global_node_never_loses_more(data):
    frame, hier = _random_case(data.draw, n_min=6)
    k = data.draw(st.integers(2, 3))
    qis = list(hier)
    lattice = Lattice.build(frame, qis, hierarchies=hier)
    answer = negotiate(lattice, k=k, max_suppression=data.draw(st.sampled_from([0, 0.2])), metric="loss")
    node = answer.exact
    assert node is not None  # the top node of a single-top hierarchy suppresses nothing
    # the brute force: the least loss over every node within the limit is the node's
    every = [generalize(frame, lattice.level_dict(v), k=k, hierarchies=hier) for v in range(lattice.n_nodes)]
    brute = min(r.metrics["loss"] for r in every if r.suppressed <= answer.max_suppression)
    global_release = generalize(frame, dict(node.levels), k=k, hierarchies=hier)
    assert global_release.metrics["loss"] == pytest.approx(brute, abs=1e-12)
    result = local_recoding(frame, hier, k, levels=dict(node.levels))
    assert result.suppressed == global_release.suppressed
    assert np.array_equal(result.kept_rows, global_release.kept_rows)
    assert result.metrics["loss"] <= global_release.metrics["loss"] + 1e-12
    sub = frame.iloc[result.kept_rows].reset_index(drop=True)
    reference = released_metrics(result.table, hier, n_rows=frame.shape[0])
    assert result.metrics["loss"] == pytest.approx(reference["loss"], abs=1e-12)
    assert result.table.groupby(qis).size().min() >= k and len(sub) == len(result.table)


def test_a_start_node_suppresses_its_classes_below_k():
    hier = {"town": _hier("town", ["t1;north;*", "t2;north;*", "t3;south;*", "t4;south;*"])}
    frame = pd.DataFrame({"town": ["t1", "t1", "t2", "t2", "t3"]})
    result = local_recoding(frame, hier, 2, levels={"town": 1})
    assert result.suppressed == 1 and result.kept_rows.tolist() == [0, 1, 2, 3]
    assert result.table["town"].tolist() == ["t1", "t1", "t2", "t2"]
    assert result.metrics["loss"] == pytest.approx(1 / 5)  # the suppressed row's cell costs 1


def test_bad_input_gives_one_clear_error():
    hier = {"town": _hier("town", ["t1;north;*", "t2;north;*"])}
    frame = pd.DataFrame({"town": ["t1", "t2", "t1"]})
    with pytest.raises(ParameterError, match="k must be an integer"):
        local_recoding(frame, hier)
    with pytest.raises(ParameterError, match="k=4 is more than the 3 rows"):
        local_recoding(frame, hier, 4)
    with pytest.raises(ParameterError, match="metric of local recoding must be one of loss, discernibility"):
        local_recoding(frame, hier, 2, metric="entropy")
    with pytest.raises(DataError, match="unknown quasi-identifier column 'sex'"):
        local_recoding(frame, hier, 2, quasi_identifiers=["town"], levels={"sex": 1})
    with pytest.raises(ParameterError, match="name the quasi-identifiers"):
        local_recoding(frame, "hierarchies/", 2)
    with pytest.raises(ParameterError, match="level of 'town' must be an integer in \\[0, 2\\]"):
        local_recoding(frame, hier, 2, levels={"town": 3})
    with pytest.raises(DataError, match="'t9' is not in hierarchy"):
        local_recoding(pd.DataFrame({"town": ["t9", "t1"]}), hier, 2)
    # 'G' names {t2, t5} at level 1 and {t1, t2, t5} at level 2: the women's class publishes the
    # one, the men's the other, and the file could not tell them apart
    clash = {"town": _hier("town", ["t1;A;G;*", "t2;G;G;*", "t5;G;G;*"]), "sex": _hier("sex", ["F;*", "M;*"])}
    frame = pd.DataFrame({"town": ["t1", "t2", "t2", "t5"], "sex": ["F", "F", "M", "M"]})
    with pytest.raises(DataError, match="label 'G' names different groups at levels 1 and 2"):
        local_recoding(frame, clash, 2)


@pytest.mark.slow
def test_adult_local_loss_is_below_the_optimal_global_node():
    folder = data_dir() / "adult_arx"
    if not folder.is_dir():
        pytest.skip(f"benchmark data folder {folder} is absent (set INCROWD_DATA)")
    frame = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    hier = load_hierarchies(str(folder), ADULT_QIS)
    lattice = Lattice.build(frame, ADULT_QIS, hierarchies=hier)
    for k in (2, 5, 10):
        node = negotiate(lattice, k=k, max_suppression=0, metric="loss").exact
        global_release = generalize(frame, dict(node.levels), k=k, hierarchies=hier)
        local = local_recoding(frame, hier, k)
        assert local.suppressed == 0 and local.min_class_size >= k
        assert local.metrics["loss"] < global_release.metrics["loss"]
        assert local.classes > global_release.classes
        reference = released_metrics(local.table, hier, n_rows=frame.shape[0])
        assert local.metrics["loss"] == pytest.approx(reference["loss"], abs=1e-12)
        assert local.metrics["discernibility"] == reference["discernibility"]


def test_cli_recoding_local_writes_a_verified_file(tmp_path):
    runner = CliRunner()
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"id": [f"p{i}" for i in range(200)], "age": rng.integers(18, 80, 200),
                          "region": rng.choice(["n1", "n2", "s1", "s2", "s3"], 200)})
    frame.to_csv(tmp_path / "people.csv", index=False)
    hier = tmp_path / "hier"
    hier.mkdir()
    (hier / "region.csv").write_text("n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\ns3;south;*\n")
    out = tmp_path / "out.csv"
    base = ["generalize", str(tmp_path / "people.csv"), "--hierarchies", str(hier), "--intervals", "age=10,20",
            "--qi", "age,region", "--id", "id", "--k", "5", "-o", str(out)]
    run = runner.invoke(app, [*base, "--recoding", "local", "--json"])
    assert run.exit_code == 0, run.output
    info = json.loads(run.stdout)
    assert info["recoding"] == "local" and info["verification"]["verified_on"] != "table in memory"
    written = pd.read_csv(out, dtype=str)
    assert "id" not in written and written.groupby(["age", "region"]).size().min() >= 5
    assert info["classes"] == written.groupby(["age", "region"]).size().size
    glob = runner.invoke(app, [*base, "--json"])
    assert glob.exit_code == 0, glob.output
    assert info["metrics"]["loss"] < json.loads(glob.stdout)["metrics"]["loss"]
    for extra, message in ((["--recoding", "local", "--l", "2"], "does not take --l"),
                           (["--recoding", "local", "--max-suppression", "1%"], "leave out --max-suppression"),
                           (["--recoding", "sideways"], "--recoding must be global or local")):
        out.unlink(missing_ok=True)
        bad = runner.invoke(app, [*base, *extra])
        assert bad.exit_code == 2, bad.output
        assert "error:" in bad.stderr and message in bad.stderr and "Traceback" not in bad.output
        assert not out.exists()
