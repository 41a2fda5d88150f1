"""Utility metrics of a node and the search for the least one, against brute force: every
metric read from the lattice equals the same metric computed on the released table, and the
chosen node equals an enumeration of every node (random small lattices, and ARX Adult)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from _thresholds import as_models, thresholds  # noqa: E402
from benchdata import data_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_hierarchies import random_hierarchy_rows

from incrowd.exceptions import ParameterError
from incrowd.generalization import (
    METRICS,
    Lattice,
    _utility_metrics,
    generalize,
    negotiate,
    node_metrics,
    released_metrics,
)
from incrowd.generalization._hierarchy import hierarchy_from_rows


def _random_case(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    m = draw(st.integers(2, 3))
    n = draw(st.integers(20, 120))
    frame = pd.DataFrame(index=range(n))
    hier = {}
    for j in range(m):
        rows = random_hierarchy_rows(rng, j)
        card = len(rows)
        name = f"q{j}"
        hier[name] = hierarchy_from_rows(name, rows, f"random {name}")
        # skewed values, so that classes of many sizes (and suppression) occur
        frame[name] = [f"a{j}v{c}" for c in rng.zipf(1.6, size=n) % card]
    frame["s"] = rng.integers(0, 3, size=n)
    return frame, hier


def _released(frame, hier, levels, k=None, l=None):
    result = generalize(frame, levels, k=k, sensitive="s" if l is not None else None, hierarchies=hier,
                        models=thresholds(l=l))
    suppressed = np.setdiff1d(np.arange(frame.shape[0]), result.kept_rows)
    original = pd.concat([frame.iloc[result.kept_rows], frame.iloc[suppressed]])
    return result, original


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_node_metrics_equal_the_released_table(data):
    frame, hier = _random_case(data.draw)
    qis = list(hier)
    lattice = Lattice.build(frame, qis, hierarchies=hier, sensitive="s")
    node = data.draw(st.integers(0, lattice.n_nodes - 1))
    levels = lattice.level_dict(node)
    criterion = data.draw(st.sampled_from(["k", "l"]))
    t = data.draw(st.integers(2, 5)) if criterion == "k" else data.draw(st.integers(2, 3))
    weights = data.draw(st.sampled_from([None, {qis[0]: 2.0}, {qis[-1]: 0.5, qis[0]: 0.0}]))
    got = node_metrics(lattice, levels, weights=weights, **as_models({criterion: t}))
    result, original = _released(frame, hier, levels, **{criterion: t})
    expected = released_metrics(result.table, hier, n_rows=frame.shape[0], levels=levels, original=original,
                                target="s", weights=weights)
    assert set(got) == set(METRICS)
    for name in METRICS:
        assert got[name] == pytest.approx(expected[name], rel=1e-12, abs=1e-12), name


def test_released_metrics_by_hand():
    # two attributes; 'x' has 4 leaves, 'y' 2; one class of 3 rows, one suppressed row
    hier = {"x": hierarchy_from_rows("x", [["1", "12", "*"], ["2", "12", "*"], ["3", "34", "*"],
                                           ["4", "34", "*"]], "x"),
            "y": hierarchy_from_rows("y", [["a", "*"], ["b", "*"]], "y")}
    released = pd.DataFrame({"x": ["12", "12", "12"], "y": ["a", "a", "a"], "t": [0, 0, 1]})
    got = released_metrics(released, hier, n_rows=4, levels={"x": 1, "y": 0}, target="t")
    # cells: x costs (2-1)/(4-1) per published row, y 0; the suppressed row costs 1 per cell
    assert got["loss"] == pytest.approx((3 * (1 / 3) + 0 + 2) / 8)
    assert got["discernibility"] == 3 * 3 + 4 * 1
    assert got["aecs"] == 4 / 2
    assert got["precision"] == pytest.approx((3 * (1 / 2 + 0) + 2) / 8)
    assert got["height"] == 1
    assert got["classification"] == pytest.approx((1 + 1) / 4)  # one non-majority row, one suppressed
    assert got["entropy"] is None  # needs the original rows


def _brute(lattice, metric, criterion, t, limit, vmax=None, weights=None):
    """Every node of the sublattice within the limit, by its own evaluation: the least
    (value, height, suppression, id)."""
    hist = lattice.k_histograms if criterion == "k" else lattice.l_histograms
    limit = min(limit, lattice.n_rows - 1)
    best = None
    for node in range(lattice.n_nodes):
        if not lattice.materialized[node] or vmax is not None and np.any(lattice.levels[node] > vmax):
            continue
        supp = hist.below(node, t)[0]
        if supp > limit:
            continue
        value = node_metrics(lattice, lattice.level_dict(node), weights=weights, **as_models({criterion: t}))[metric]
        key = (value, int(lattice.levels[node].sum()), supp, node)
        if best is None or key < best:
            best = key
    return best


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_chosen_node_equals_brute_force_and_beats_random_nodes(data):
    frame, hier = _random_case(data.draw)
    qis = list(hier)
    # a partial lattice answers with the best of the nodes it holds
    lattice = Lattice.build(frame, qis, hierarchies=hier, sensitive="s",
                            fraction=data.draw(st.sampled_from([1.0, 1.0, 0.5])))
    metric = data.draw(st.sampled_from(METRICS))
    criterion = data.draw(st.sampled_from(["k", "l"]))
    t = data.draw(st.integers(2, 6)) if criterion == "k" else data.draw(st.integers(2, 3))
    limit = data.draw(st.integers(0, frame.shape[0] // 4))
    vmax = np.array([data.draw(st.integers(0, hier[a].max_level)) for a in qis])
    weights = data.draw(st.sampled_from([None, {qis[0]: 3.0}]))
    result = negotiate(lattice, max_levels=dict(zip(qis, vmax.tolist())), max_suppression=limit, metric=metric,
                       weights=weights, **as_models({criterion: t}))
    expected = _brute(lattice, metric, criterion, t, limit, vmax, weights)
    if expected is None:
        assert result.exact is None
        return
    assert result.exact is not None and result.optimality_gap == 0.0
    chosen = lattice.node_id(result.exact.levels)
    assert chosen == expected[3]
    assert result.exact.metrics[metric] == expected[0]
    # never worse than any node a random search finds among those within the limit
    hist = lattice.k_histograms if criterion == "k" else lattice.l_histograms
    for node in data.draw(st.lists(st.integers(0, lattice.n_nodes - 1), min_size=1, max_size=10)):
        if not lattice.materialized[node] or np.any(lattice.levels[node] > vmax) \
                or hist.below(node, t)[0] > min(limit, lattice.n_rows - 1):
            continue
        value = node_metrics(lattice, lattice.level_dict(node), weights=weights, **as_models({criterion: t}))[metric]
        assert result.exact.metrics[metric] <= value


def test_relaxed_answers_minimize_the_metric_among_their_candidates():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"q0": rng.choice(["a", "b", "c", "d"], 60), "q1": rng.choice(["x", "y", "z"], 60),
                          "s": rng.integers(0, 3, 60)})
    hier = {"q0": hierarchy_from_rows("q0", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"],
                                             ["d", "cd", "*"]], "q0"),
            "q1": hierarchy_from_rows("q1", [["x", "*"], ["y", "*"], ["z", "*"]], "q1")}
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=hier, sensitive="s")
    # v_max at the bottom with k = 30: no exact answer, the height relaxation searches everywhere
    result = negotiate(lattice, k=30, max_levels={"q0": 0, "q1": 0}, max_suppression=5, metric="loss")
    assert result.exact is None
    relaxed = result.relaxations["height"]
    expected = _brute(lattice, "loss", "k", 30, 5)
    assert relaxed is not None and lattice.node_id(relaxed.levels) == expected[3]
    assert relaxed.metrics["loss"] == expected[0]


def test_fallback_past_the_evaluation_limit_reports_its_gap(monkeypatch):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"q0": rng.choice(list("abcd"), 80), "q1": rng.choice(list("xyz"), 80),
                          "s": rng.integers(0, 3, 80)})
    hier = {"q0": hierarchy_from_rows("q0", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"],
                                             ["d", "cd", "*"]], "q0"),
            "q1": hierarchy_from_rows("q1", [["x", "*"], ["y", "*"], ["z", "*"]], "q1")}
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=hier, sensitive="s")
    exact = negotiate(lattice, k=4, max_suppression=8, metric="entropy")
    monkeypatch.setattr(_utility_metrics, "MAX_EVALUATIONS", 1)
    capped = negotiate(lattice, k=4, max_suppression=8, metric="entropy")
    assert capped.metric_evaluated == 1
    # the gap bounds how far the capped answer may be from the optimum
    best = exact.exact.metrics["entropy"]
    assert capped.exact.metrics["entropy"] - capped.optimality_gap <= best + 1e-9
    assert capped.optimality_gap >= 0


def test_metric_errors_name_the_parameter():
    frame = pd.DataFrame({"q0": list("abab"), "q1": list("xxyy")})
    hier = {"q0": hierarchy_from_rows("q0", [["a", "*"], ["b", "*"]], "q0"),
            "q1": hierarchy_from_rows("q1", [["x", "*"], ["y", "*"]], "q1")}
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=hier)
    with pytest.raises(ParameterError, match="metric must be one of"):
        negotiate(lattice, k=2, metric="utility")
    with pytest.raises(ParameterError, match="classification.*target"):
        negotiate(lattice, k=2, metric="classification")
    with pytest.raises(ParameterError, match="weight of 'q0'"):
        negotiate(lattice, k=2, weights={"q0": -1})
    with pytest.raises(ParameterError, match="not quasi-identifiers"):
        negotiate(lattice, k=2, weights={"zz": 1})


# -- ARX Adult: the chosen node equals an enumeration of all 6480 nodes ----------------------

@pytest.fixture(scope="module")
def adult_all():
    folder = data_dir() / "adult_arx"
    if not folder.is_dir():
        pytest.skip(f"benchmark data folder {folder} is absent (set INCROWD_DATA)")
    frame = pd.read_csv(folder / "adult.csv", sep=";")
    qis = [c for c in frame.columns if c != "salary-class"]
    return Lattice.build(frame, qis, hierarchies=str(folder))


def _adult_brute(lattice):
    """Per node, its class sizes and each class's summed LM cell cost, grouped from the bottom
    classes by the node's generalized codes (the formula written out here, not the search's)."""
    m = len(lattice.attributes)
    bottom = lattice.bottom_codes[:, :m].astype(np.int64)
    counts = lattice.bottom_counts.astype(np.float64)
    leaves = []
    for j, a in enumerate(lattice.attributes):
        h = lattice.hierarchies[a]
        total = h.labels[0].size
        per_level = []
        for level in range(h.depth):
            cmap = h.code_map(level).astype(np.int64)
            per_level.append((cmap[bottom[:, j]], ((np.bincount(cmap)[cmap] - 1) / (total - 1))[bottom[:, j]],
                              h.labels[level].size))
        leaves.append(per_level)
    out = []
    for node in range(lattice.n_nodes):
        lv = lattice.levels[node]
        key = np.zeros(bottom.shape[0], np.int64)
        cost = np.zeros(bottom.shape[0])
        for j in range(m):
            codes, cell, width = leaves[j][lv[j]]
            key = key * width + codes
            cost += cell
        _, inverse = np.unique(key, return_inverse=True)
        out.append((np.bincount(inverse, weights=counts).astype(np.int64), np.bincount(inverse, weights=cost * counts)))
    return out


@pytest.mark.slow
def test_adult_loss_and_discernibility_equal_brute_force(adult_all):
    lattice = adult_all
    n, m = lattice.n_rows, len(lattice.attributes)
    per_node = _adult_brute(lattice)
    heights = lattice.levels.sum(axis=1)
    for k, pct in itertools.product((2, 5, 10), (0, 1)):
        limit = n * pct // 100
        brute: dict[str, list] = {"loss": [], "discernibility": []}
        for node, (sizes, cost) in enumerate(per_node):
            small = sizes < k
            supp = int(sizes[small].sum())
            if supp > limit:
                continue
            lm = (cost[~small].sum() + supp * m) / (n * m)
            dm = float((sizes[~small].astype(float) ** 2).sum() + n * supp)
            brute["loss"].append((lm, heights[node], supp, node))
            brute["discernibility"].append((dm, heights[node], supp, node))
        for metric, rows in brute.items():
            best = min(rows)
            result = negotiate(lattice, k=k, max_suppression=f"{pct}%", metric=metric)
            chosen = lattice.node_id(result.exact.levels)
            assert result.exact.metrics[metric] == pytest.approx(best[0], rel=1e-12), (metric, k, pct)
            ties = [r[3] for r in rows if r[0] == pytest.approx(best[0], rel=1e-12)]
            assert chosen in ties, (metric, k, pct)
            assert result.optimality_gap == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["loss", "discernibility", "entropy", "height"])
def test_publish_chooses_the_node_the_lattice_negotiates(metric):
    import incrowd

    folder = data_dir() / "adult_arx"
    if not folder.is_dir():
        pytest.skip(f"benchmark data folder {folder} is absent (set INCROWD_DATA)")
    frame = pd.read_csv(folder / "adult.csv", sep=";").head(3000)
    qis = ["sex", "race", "marital-status", "education"]
    columns = {a: {"role": "categorical", "hierarchy": str(folder / f"adult_hierarchy_{a}.csv")} for a in qis}
    spec = {"privacy": {"k": 5, "max_suppression": "1%", "metric": metric, "allow_full_suppression": True},
            "columns": columns}
    report = incrowd.publish(frame[qis + ["age"]], spec).summary()
    answer = negotiate(Lattice.build(frame, qis, hierarchies=str(folder)), k=5, max_suppression="1%", metric=metric)
    assert report["metric"] == metric
    assert report["levels"] == answer.exact.levels
    for name in ("loss", "discernibility", "entropy", "aecs", "precision", "height"):
        assert report["metrics"][name] == pytest.approx(answer.exact.metrics[name], rel=1e-12), name


def _small_lattice_file(tmp_path):
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"q0": rng.choice(list("abcd"), 200), "q1": rng.choice(list("xyz"), 200),
                          "s": rng.integers(0, 3, 200)})
    hier = {"q0": hierarchy_from_rows("q0", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"],
                                             ["d", "cd", "*"]], "q0"),
            "q1": hierarchy_from_rows("q1", [["x", "xy", "*"], ["y", "xy", "*"], ["z", "z", "*"]], "q1")}
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=hier, sensitive="s")
    return lattice, lattice.save(tmp_path / "L.duckdb")


def test_cli_negotiate_metric_answers_like_the_api_and_refuses_unknown_names(tmp_path):
    import json

    from typer.testing import CliRunner

    from incrowd.cli import app

    lattice, path = _small_lattice_file(tmp_path)
    runner = CliRunner()
    for metric in ("height", "discernibility", "classification"):
        out = runner.invoke(app, ["negotiate", str(path), "--k", "20", "--max-suppression", "5%", "--metric", metric,
                                  "--json"])
        assert out.exit_code == 0, out.output
        got = json.loads(out.stdout)
        api = negotiate(lattice, k=20, max_suppression="5%", metric=metric).to_dict()
        assert got["metric"] == metric and got["exact"] == api["exact"]
        assert set(got["exact"]["metrics"]) == set(METRICS)
    text = runner.invoke(app, ["negotiate", str(path), "--k", "20", "--metric", "loss"])
    assert text.exit_code == 0 and "loss" in text.stdout
    bad = runner.invoke(app, ["negotiate", str(path), "--k", "20", "--metric", "utility"])
    assert bad.exit_code == 2 and "metric must be one of" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_publish_spec_refuses_an_unknown_metric_and_reports_every_metric():
    import incrowd
    from incrowd.publishing import load_spec

    with pytest.raises(ParameterError, match="metric must be one of"):
        load_spec({"privacy": {"k": 2, "metric": "utility"}, "columns": {"a": "numeric"}})
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.normal(size=120), "c": rng.choice(list("pqr"), 120)})
    report = incrowd.publish(frame, {"privacy": {"k": 3, "max_suppression": "5%"},
                                     "columns": {"a": "numeric", "c": "categorical"}}).summary()
    assert report["metric"] == "loss"
    assert set(report["metrics"]) == set(METRICS) and report["metrics"]["classification"] is None


def test_publish_metric_weights_choose_the_node_negotiate_chooses_with_those_weights(tmp_path):
    import incrowd
    from incrowd.publishing import load_spec

    rng = np.random.default_rng(6)
    frame = pd.DataFrame({"q0": rng.choice(list("abcd"), 300, p=[0.4, 0.3, 0.2, 0.1]),
                          "q1": rng.choice(list("wxyz"), 300, p=[0.4, 0.3, 0.2, 0.1]),
                          "a": rng.normal(size=300)})
    rows = {"q0": [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]],
            "q1": [["w", "wx", "*"], ["x", "wx", "*"], ["y", "yz", "*"], ["z", "yz", "*"]]}
    for a, r in rows.items():
        (tmp_path / f"{a}.csv").write_text("".join(";".join(row) + "\n" for row in r))
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=str(tmp_path))
    chosen = set()
    for weights in ({"q0": 1.0, "q1": 1.0}, {"q0": 10.0, "q1": 0.1}, {"q0": 0.1, "q1": 10.0}):
        answer = negotiate(lattice, k=25, max_suppression=6, metric="loss", weights=weights).exact
        spec = load_spec({"privacy": {"k": 25, "max_suppression": 6, "metric_weights": weights,
                                      "allow_full_suppression": True},
                          "columns": {a: {"role": "categorical", "hierarchy": str(tmp_path / f"{a}.csv")}
                                      for a in rows} | {"a": "numeric"}})
        assert spec.metric_weights == weights and load_spec(spec.to_dict()).metric_weights == weights
        summary = incrowd.publish(frame, spec).summary()
        assert summary["levels"] == answer.levels, weights
        assert summary["metrics"]["loss"] == pytest.approx(answer.metrics["loss"], rel=1e-12)
        chosen.add(tuple(sorted(answer.levels.items())))
    assert len(chosen) > 1  # the weights changed the answer, so the test tells them apart
    for bad, said in (({"a": 1.0}, "'a', which is not a categorical column"), ({"q0": -1}, "'q0' must be a finite"),
                      ({"q0": 0, "q1": 0}, "must not all be 0"), ([1, 2], "must be a table")):
        with pytest.raises(ParameterError, match=said):
            load_spec({"privacy": {"k": 2, "metric_weights": bad},
                       "columns": {"q0": "categorical", "q1": "categorical", "a": "numeric"}})


def test_generalize_without_levels_applies_the_least_metric_node(tmp_path):
    import json

    from typer.testing import CliRunner

    from incrowd.cli import app

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"q0": rng.choice(list("abcd"), 150, p=[0.5, 0.3, 0.15, 0.05]),
                          "q1": rng.choice(list("xyz"), 150), "s": rng.integers(0, 3, 150)})
    rows = {"q0": [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]],
            "q1": [["x", "xy", "*"], ["y", "xy", "*"], ["z", "z", "*"]]}
    hier = {a: hierarchy_from_rows(a, r, a) for a, r in rows.items()}
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=hier)
    for metric in ("loss", "discernibility", "height"):
        answer = negotiate(lattice, k=12, max_suppression=10, metric=metric)
        result = generalize(frame, k=12, quasi_identifiers=["q0", "q1"], hierarchies=hier, metric=metric,
                            max_suppression=10)
        assert result.levels == answer.exact.levels and result.suppressed == answer.exact.suppressed
        for name in ("loss", "discernibility", "entropy", "aecs", "precision", "height"):
            assert result.metrics[name] == pytest.approx(answer.exact.metrics[name], rel=1e-12), (metric, name)
    # k and l together: the node the k+l negotiation answers, both promises verified
    lattice_s = Lattice.build(frame, ["q0", "q1"], hierarchies=hier, sensitive="s")
    both = negotiate(lattice_s, k=12, max_suppression=10, metric="loss", models=thresholds(l=2)).exact
    result = generalize(frame, k=12, sensitive="s", quasi_identifiers=["q0", "q1"], hierarchies=hier,
                        max_suppression=10, models=thresholds(l=2))
    assert result.levels == both.levels and result.suppressed == both.suppressed
    assert result.min_class_size >= 12 and result.min_distinct >= 2
    with pytest.raises(ParameterError, match="give k"):
        generalize(frame, quasi_identifiers=["q0", "q1"], hierarchies=hier)
    with pytest.raises(ParameterError, match="metric must be one of"):
        generalize(frame, {"q0": 1}, k=12, hierarchies=hier, metric="utility")
    # the command: the same node, its metrics in the JSON
    frame.to_csv(tmp_path / "d.csv", index=False)
    folder = tmp_path / "h"
    folder.mkdir()
    for a, r in rows.items():
        (folder / f"{a}.csv").write_text("".join(";".join(row) + "\n" for row in r))
    out = CliRunner().invoke(app, ["generalize", str(tmp_path / "d.csv"), "--hierarchies", str(folder),
                                   "--qi", "q0,q1", "--k", "12", "--max-suppression", "10", "--metric", "loss",
                                   "-o", str(tmp_path / "o.csv"), "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)
    expected = negotiate(lattice, k=12, max_suppression=10, metric="loss").exact
    assert got["levels"] == expected.levels
    assert got["metrics"]["loss"] == pytest.approx(expected.metrics["loss"], rel=1e-12)


def test_cli_metric_weights_answer_like_the_api(tmp_path):
    import json

    from typer.testing import CliRunner

    from incrowd.cli import app

    lattice, path = _small_lattice_file(tmp_path)
    weights = {"q0": 5.0, "q1": 0.5}
    out = CliRunner().invoke(app, ["negotiate", str(path), "--k", "6", "--max-suppression", "5",
                                   "--metric-weights", "q0=5,q1=0.5", "--json"])
    assert out.exit_code == 0, out.output
    expected = negotiate(lattice, k=6, max_suppression=5, weights=weights).exact
    got = json.loads(out.stdout)["exact"]
    assert got["levels"] == expected.levels
    assert got["metrics"]["loss"] == pytest.approx(expected.metrics["loss"], rel=1e-12)
    bad = CliRunner().invoke(app, ["negotiate", str(path), "--k", "6", "--metric-weights", "q0=heavy"])
    assert bad.exit_code == 2 and "--metric-weights" in bad.output and "Traceback" not in bad.output


@pytest.mark.parametrize("metric", ["loss", "precision", "entropy", "discernibility", "height"])
def test_a_numeric_only_release_has_no_generalization_loss(metric):
    import incrowd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    summary = incrowd.publish(frame, {"privacy": {"k": 3, "metric": metric},
                                      "columns": {"a": "numeric", "b": "numeric"}}).summary()
    assert summary["metrics"]["loss"] == 0.0 and summary["metrics"]["precision"] == 0.0
    assert summary["metrics"]["discernibility"] == 60.0 ** 2  # one class, nothing generalized
