"""``negotiate`` with more privacy models than k, l and t (``models=``, ``--model``): the node
it answers against a brute force over every node of random lattices, the same node as
``publish`` on ARX's Adult, and the command line's option."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_negotiate_k_and_l import _random_case
from typer.testing import CliRunner

from incrowd.exceptions import ParameterError
from incrowd.generalization import Lattice, negotiate, read_hierarchy
from incrowd.privacy import (
    AlphaK,
    AverageRisk,
    BetaLikeness,
    ClassStats,
    DeltaDisclosure,
    EntropyL,
    KAnonymity,
    RecursiveL,
)

MODELS = [EntropyL(l=1.8), RecursiveL(c=2, l=2), AlphaK(alpha=0.7, k=2), DeltaDisclosure(delta=1.2),
          BetaLikeness(beta=1.0), BetaLikeness(beta=0.8, variant="enhanced"), AverageRisk(value=0.3)]


def _brute_lowest(lattice, frame, hier, k, model, limit):
    """(height, suppressed) of the lowest feasible node, least suppression first, from the rows;
    None when no node is feasible."""
    n = frame.shape[0]
    values = sorted(frame["s"].unique())
    code = frame["s"].map({v: i for i, v in enumerate(values)}).to_numpy()
    table = np.bincount(code, minlength=len(values))
    best = None
    for node in range(lattice.n_nodes):
        levels = lattice.level_dict(node)
        keys = []
        for a, level in levels.items():
            h = hier[a]
            to_label = dict(zip(h.labels[0].tolist(), h.labels[level][h.code_map(level)].tolist()))
            keys.append(frame[a].map(to_label).astype(str).to_numpy())
        ids = pd.factorize(pd.Series(["\x1f".join(parts) for parts in zip(*keys)]))[0]
        n_classes = int(ids.max()) + 1
        counts = np.zeros((n_classes, len(values)), np.int64)
        np.add.at(counts, (ids, code), 1)

        def stats(keep, counts=counts):
            return ClassStats(sizes=counts[keep].sum(axis=1), counts=counts[keep], table_counts=table,
                              ordered=True, values=tuple(values), first_rows=np.zeros(int(keep.sum()), np.int64))

        every = np.ones(n_classes, dtype=bool)
        bad = ~np.asarray(KAnonymity(k=k).classes_ok(stats(every))) | ~np.asarray(model.classes_ok(stats(every)))
        suppressed = int(counts[bad].sum())
        if suppressed > limit or suppressed == n or not model.release_ok(stats(~bad)):
            continue
        key = (sum(levels.values()), suppressed)
        best = key if best is None or key < best else best
    return best


@st.composite
def cases(draw):
    return _random_case(draw)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.key + ("-" + m.variant if hasattr(m, "variant") else ""))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(case=cases(), share=st.sampled_from([0.0, 0.1, 0.3]))
def test_the_answer_is_the_lowest_node_the_brute_force_finds(model, case, share):
    frame, hier = case
    qis = [c for c in frame.columns if c != "s"]
    lattice = Lattice.build(frame, qis, hierarchies=hier, sensitive="s")
    limit = int(share * len(frame))
    got = negotiate(lattice, k=2, models=[model], max_suppression=limit, metric="height")
    expected = _brute_lowest(lattice, frame, hier, 2, model, limit)
    if expected is None:
        assert got.exact is None
        return
    assert got.exact is not None
    assert (got.exact.height, got.exact.suppressed) == expected


def test_negotiate_and_publish_choose_the_same_node_on_adult():
    from benchdata import data_dir as benchmark_data

    data_dir = benchmark_data()
    import incrowd

    folder = data_dir / "adult_arx"
    if not folder.exists():
        pytest.skip("ARX's Adult is not in the benchmark data")
    frame = pd.read_csv(folder / "adult.csv", sep=";")
    qis = [c for c in frame.columns if c != "salary-class"]
    hier = {a: read_hierarchy(folder / f"adult_hierarchy_{a}.csv", a) for a in qis}
    lattice = Lattice.build(frame, qis, hierarchies=hier, sensitive="salary-class")
    columns = {a: {"role": "categorical", "hierarchy": str(folder / f"adult_hierarchy_{a}.csv")} for a in qis}
    columns["salary-class"] = "sensitive"
    for key, value, model in (("entropy_l", 1.5, EntropyL(l=1.5)), ("beta", 1.0, BetaLikeness(beta=1.0))):
        answer = negotiate(lattice, k=5, models=[model], max_suppression="1%")
        release = incrowd.publish(frame, {"privacy": {"k": 5, "max_suppression": "1%", key: value},
                                          "columns": columns})
        summary = release.summary()
        assert answer.exact.levels == summary["levels"], key
        assert answer.exact.suppressed == summary["suppressed"], key
        assert answer.exact.metrics["loss"] == pytest.approx(summary["metrics"]["loss"], rel=1e-12), key


def test_the_command_line_takes_models_as_the_spec_writes_them(tmp_path):
    from incrowd.cli import app

    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.integers(20, 70, 200), "b": rng.integers(0, 10, 200),
                          "s": rng.choice(["flu", "cold", "hiv"], 200)})
    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)
    runner = CliRunner()
    lattice = tmp_path / "lattice.duckdb"
    built = runner.invoke(app, ["lattice", "build", str(data), "--qi", "a,b", "--intervals", "a=5,10",
                                 "--intervals", "b=2,4", "--sensitive", "s", "-o", str(lattice)])
    assert built.exit_code == 0, built.output
    got = runner.invoke(app, ["negotiate", str(lattice), "--k", "3", "--max-suppression", "5%", "--json",
                              "--model", "entropy_l=1.5", "--model", "recursive_l={ c = 3, l = 2 }"])
    assert got.exit_code == 0, got.output
    answer = json.loads(got.output)
    assert answer["request"]["k"] == 3
    assert set(answer["request"]["models"]) == {"entropy_l", "recursive_l"}
    expected = negotiate(Lattice.open(lattice), k=3, max_suppression="5%",
                         models=[EntropyL(l=1.5), RecursiveL(c=3, l=2)])
    assert (answer["exact"] or {}).get("levels") == (expected.exact.levels if expected.exact else None)
    bad = runner.invoke(app, ["negotiate", str(lattice), "--k", "3", "--model", "entropy_l"])
    assert bad.exit_code == 2 and "--model takes KEY=VALUE" in bad.output
    bad = runner.invoke(app, ["negotiate", str(lattice), "--k", "3", "--model", "l=2"])
    assert bad.exit_code == 2 and "own options" in bad.output
    bad = runner.invoke(app, ["negotiate", str(lattice), "--k", "3", "--model", "entropy_l=two"])
    assert bad.exit_code == 2 and "--model entropy_l" in bad.output


def test_a_model_of_the_sensitive_values_needs_a_lattice_with_them():
    frame = pd.DataFrame({"a": list(range(6)) * 5})
    lattice = Lattice.build(frame, ["a"], intervals={"a": [2]})
    with pytest.raises(ParameterError, match="sensitive"):
        negotiate(lattice, k=2, models=[EntropyL(l=2)])
    assert negotiate(lattice, k=2, models=[AverageRisk(value=0.5)]).exact is not None


def test_generalize_suppresses_the_classes_a_model_refuses_and_checks_the_release(tmp_path):
    from incrowd.generalization import generalize
    from incrowd.privacy import check_table

    rng = np.random.default_rng(9)
    n = 300
    frame = pd.DataFrame({"age": rng.integers(18, 80, n), "income": rng.integers(0, 10, n),
                          "s": rng.choice(["flu", "cold", "hiv"], n, p=[0.6, 0.3, 0.1])})
    model = EntropyL(l=1.8)
    levels = {"age": 1, "income": 1}
    plain = generalize(frame, levels, k=2, sensitive="s", intervals={"age": [5, 10], "income": [2, 4]})
    got = generalize(frame, levels, k=2, sensitive="s", intervals={"age": [5, 10], "income": [2, 4]},
                     models=[model])
    assert check_table(plain.table, ["age", "income"], [model], sensitive=["s"], reference={"s": frame["s"]})
    assert not check_table(got.table, ["age", "income"], [model], sensitive=["s"], reference={"s": frame["s"]})
    assert got.suppressed > plain.suppressed
    assert got.summary()["privacy_models"] == [model.describe()]
    # without levels the node is negotiate's, models included
    chosen = generalize(frame, k=2, sensitive="s", intervals={"age": [5, 10], "income": [2, 4]},
                        quasi_identifiers=["age", "income"], max_suppression="5%", models=[model])
    lattice = Lattice.build(frame, ["age", "income"], intervals={"age": [5, 10], "income": [2, 4]}, sensitive="s")
    assert chosen.levels == negotiate(lattice, k=2, max_suppression="5%", models=[model]).exact.levels
    with pytest.raises(ParameterError, match="average re-identification risk"):
        generalize(frame, {"age": 0, "income": 0}, k=2, sensitive="s", intervals={"age": [5, 10], "income": [2, 4]},
                   models=[AverageRisk(value=0.01)])
    # the command line
    from incrowd.cli import app

    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "out.csv"
    runner = CliRunner()
    done = runner.invoke(app, ["generalize", str(data), "-o", str(out), "--levels", "age=1,income=1", "--k", "2",
                               "--sensitive", "s", "--intervals", "age=5,10", "--intervals", "income=2,4",
                               "--model", "entropy_l=1.8", "--json"])
    assert done.exit_code == 0, done.output
    written = pd.read_csv(out)
    assert not check_table(written, ["age", "income"], [model], sensitive=["s"], reference={"s": frame["s"]})


def test_differential_privacy_is_publishs_not_a_lattices():
    from incrowd.generalization import generalize
    from incrowd.privacy import DifferentialPrivacy

    frame = pd.DataFrame({"a": list(range(6)) * 5})
    lattice = Lattice.build(frame, ["a"], intervals={"a": [2]})
    model = DifferentialPrivacy(epsilon=1.0, delta=1e-6)
    with pytest.raises(ParameterError, match="met by publish"):
        negotiate(lattice, k=2, models=[model])
    with pytest.raises(ParameterError, match="met by publish"):
        generalize(frame, {"a": 1}, k=2, intervals={"a": [2]}, models=[model])

# seconds in all: the full suite (make test) runs them, the quick tier leaves them out
pytestmark = pytest.mark.slow
