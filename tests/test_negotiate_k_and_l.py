"""``negotiate`` with k and l together (a class fails when it has fewer than k rows or fewer
than l distinct sensitive values), against a brute force over every node that groups the rows
itself with pandas, against ``publish`` on the same data and spec, and through the CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from _thresholds import as_models, thresholds  # noqa: E402
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from random_hierarchies import random_hierarchy_rows

from incrowd.exceptions import ParameterError
from incrowd.generalization import METRICS, Lattice, negotiate, released_metrics
from incrowd.generalization._hierarchy import hierarchy_from_rows


def _random_case(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    m = draw(st.integers(2, 3))
    n = draw(st.integers(20, 100))
    frame = pd.DataFrame(index=range(n))
    hier = {}
    for j in range(m):
        rows = random_hierarchy_rows(rng, j)
        hier[f"q{j}"] = hierarchy_from_rows(f"q{j}", rows, f"random q{j}")
        # skewed values: classes of many sizes, some failing k, some failing l
        frame[f"q{j}"] = [f"a{j}v{c}" for c in rng.zipf(1.6, size=n) % len(rows)]
    frame["s"] = rng.integers(0, 3, size=n)
    return frame, hier


def _node_facts(frame, hier, levels, k, l):
    """(rows suppressed, published classes, the released table, the input rows in released
    order then suppressed) at ``levels``, grouping the rows with pandas."""
    gen = frame.copy()
    for a, level in levels.items():
        h = hier[a]
        to_label = dict(zip(h.labels[0].tolist(), h.labels[level][h.code_map(level)].tolist()))
        gen[a] = frame[a].map(to_label)
    qis = list(levels)
    groups = gen.groupby(qis, sort=False)
    fails = (groups["s"].transform("size") < k) | (groups["s"].transform("nunique") < l)
    kept = gen.loc[~fails]
    classes = kept.groupby(qis, sort=False).ngroups if len(kept) else 0
    original = pd.concat([frame.loc[~fails], frame.loc[fails]])
    return int(fails.sum()), classes, kept.reset_index(drop=True), original


def _brute(lattice, frame, hier, k, l, metric, limit, vmax):
    """Per node of the lattice (materialized): (in v_max's sublattice, suppression, classes,
    metric value), each from the rows."""
    n = frame.shape[0]
    out = {}
    for node in range(lattice.n_nodes):
        if not lattice.materialized[node]:
            continue
        levels = lattice.level_dict(node)
        supp, classes, released, original = _node_facts(frame, hier, levels, k, l)
        value = released_metrics(released, hier, n_rows=n, levels=levels, original=original, target="s")[metric]
        out[node] = (bool(np.all(lattice.levels[node] <= vmax)), supp, classes, value)
    return out


def _assert_best(answer, lattice, brute, candidates, metric):
    """``answer`` is one of ``candidates`` with the least metric (within rounding: the brute
    force computes it another way), then the lowest height, least suppression, lowest id."""
    if not candidates:
        assert answer is None
        return
    assert answer is not None
    chosen = lattice.node_id(answer.levels)
    assert chosen in candidates
    _, supp, classes, value = brute[chosen]
    assert answer.suppressed == supp and answer.classes == classes
    assert answer.metrics[metric] == pytest.approx(value, rel=1e-9, abs=1e-12)
    least = min(brute[v][3] for v in candidates)
    assert value == pytest.approx(least, rel=1e-9, abs=1e-12)
    tied = [v for v in candidates if brute[v][3] == pytest.approx(least, rel=1e-9, abs=1e-12)]
    heights = lattice.levels.sum(axis=1)
    assert (heights[chosen], supp) == min((heights[v], brute[v][1]) for v in tied)


def _assert_shared_relaxations(result, lattice, brute, n, within, metric):
    """A relaxed answer: its max_suppression relaxation is the best node of the sublattice with
    the least suppression short of every row, and its height relaxation the best node within the
    limit, as the brute force finds them."""
    assert result.status == "relaxed"
    relax = result.relaxations
    sub = [v for v, facts in brute.items() if facts[0] and facts[1] < n]
    least = min((brute[v][1] for v in sub), default=None)
    _assert_best(relax["max_suppression"], lattice, brute, [v for v in sub if brute[v][1] == least], metric)
    _assert_best(relax["height"], lattice, brute, [v for v, f in brute.items() if f[1] <= within], metric)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_k_and_l_together_equal_brute_force(data):
    frame, hier = _random_case(data.draw)
    every = data.draw(st.sampled_from([0, 0, 2, 5]))
    if every:  # missing cells: never a distinct value (pandas' nunique leaves them out too)
        frame["s"] = frame["s"].astype(float)
        frame.loc[frame.index % every == 0, "s"] = np.nan
    qis = list(hier)
    lattice = Lattice.build(frame, qis, hierarchies=hier, sensitive="s",
                            fraction=data.draw(st.sampled_from([1.0, 1.0, 0.5])))
    metric = data.draw(st.sampled_from(METRICS))
    # l up to the distinct values left once missing cells are drawn (a larger l is refused, as
    # publish refuses it)
    assume(lattice.sensitive_values >= 2)
    k, l = data.draw(st.integers(2, 6)), data.draw(st.integers(2, min(3, lattice.sensitive_values)))
    limit = data.draw(st.integers(0, frame.shape[0] // 4))
    vmax = np.array([data.draw(st.integers(0, hier[a].max_level)) for a in qis])
    result = negotiate(lattice, k=k, max_levels=dict(zip(qis, vmax.tolist())), max_suppression=limit,
                       metric=metric, models=thresholds(l=l))
    n = frame.shape[0]
    within = min(limit, n - 1)
    brute = _brute(lattice, frame, hier, k, l, metric, limit, vmax)
    exact = [v for v, (sub, supp, _, _) in brute.items() if sub and supp <= within]
    assert result.to_dict()["request"]["k"] == k and result.to_dict()["request"]["l"] == l
    _assert_best(result.exact, lattice, brute, exact, metric)
    if exact:
        assert result.status == "exact" and result.optimality_gap == 0.0
        assert result.exact.to_dict()["k"] == k and result.exact.to_dict()["l"] == l
        return
    _assert_shared_relaxations(result, lattice, brute, n, within, metric)
    relax = result.relaxations
    # relaxing k keeps l, relaxing l keeps k: the largest threshold some sublattice node meets
    for name in ("k", "l"):
        got = relax[name]
        top, meets = None, []
        for t in range((k if name == "k" else l) - 1, 1, -1):
            pair = (t, l) if name == "k" else (k, t)
            facts = _brute(lattice, frame, hier, *pair, metric, limit, vmax)
            meets = [v for v, f in facts.items() if f[0] and f[1] <= within]
            if meets:
                top = t
                break
        if top is None:
            assert got is None, name
            continue
        assert got is not None and got.to_dict()[name] == top, name
        _assert_best(got, lattice, facts, meets, metric)


def test_k_and_l_answer_differs_from_either_alone():
    # a class of 6 rows holding one sensitive value passes k=5, fails l=2; a class of 2 rows
    # with two values passes l=2, fails k=5: together both are suppressed
    frame = pd.DataFrame({"q": ["a"] * 6 + ["b"] * 2 + ["c"] * 6,
                          "s": [0] * 6 + [0, 1] + [0, 1, 2, 0, 1, 2]})
    hier = {"q": hierarchy_from_rows("q", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]], "q")}
    lattice = Lattice.build(frame, ["q"], hierarchies=hier, sensitive="s")
    both = negotiate(lattice, k=5, max_suppression=6, metric="height", models=thresholds(l=2))
    assert negotiate(lattice, k=5, max_suppression=6, metric="height").exact.levels == {"q": 0}
    assert negotiate(lattice, max_suppression=6, metric="height", models=thresholds(l=2)).exact.levels == {"q": 0}
    # level 0 suppresses a (l) and b (k): 8 rows; level 1 groups a and b into 8 rows, 2 values
    assert both.exact.levels == {"q": 1} and both.exact.suppressed == 0 and both.exact.classes == 2
    at_zero = negotiate(lattice, k=5, max_suppression=8, metric="height", models=thresholds(l=2))
    assert at_zero.exact.levels == {"q": 0} and at_zero.exact.suppressed == 8 and at_zero.exact.classes == 1
    relaxed = negotiate(lattice, k=5, max_levels={"q": 0}, max_suppression=2, metric="height", models=thresholds(l=2))
    assert relaxed.status == "relaxed"
    assert relaxed.relaxations["max_suppression"].suppressed == 8
    assert relaxed.relaxations["k"] is None  # a fails l whatever k: 6 rows over the limit
    assert relaxed.relaxations["l"] is None  # b fails k=5 whatever l
    assert relaxed.relaxations["height"].levels == {"q": 1}


def test_relaxing_k_keeps_l_and_relaxing_l_keeps_k():
    hier = {"q": hierarchy_from_rows("q", [["a", "*"], ["b", "*"], ["c", "*"]], "q")}
    # a: 6 rows, 2 values; b: 3 rows, 2 values; c: 4 rows, 1 value (fails l=2 whatever k)
    frame = pd.DataFrame({"q": ["a"] * 6 + ["b"] * 3 + ["c"] * 4, "s": [0, 1] * 3 + [0, 1, 0] + [2] * 4})
    lattice = Lattice.build(frame, ["q"], hierarchies=hier, sensitive="s")
    got = negotiate(lattice, k=5, max_levels={"q": 0}, max_suppression=4, metric="height", models=thresholds(l=2))
    assert got.status == "relaxed"
    # c's 4 rows use the whole limit: k may rise to 3 (b survives k=3), not 4
    assert got.relaxations["k"].to_dict()["k"] == 3 and got.relaxations["k"].to_dict()["l"] == 2
    assert got.relaxations["k"].suppressed == 4 and got.relaxations["k"].classes == 2
    assert got.relaxations["l"] is None  # b and c fail k=5: 7 rows
    # a: 6 rows, 3 values; b: 3 rows, 3 values; c: 4 rows, 2 values
    frame = pd.DataFrame({"q": ["a"] * 6 + ["b"] * 3 + ["c"] * 4, "s": [0, 1, 2] * 2 + [0, 1, 2] + [0, 1] * 2})
    lattice = Lattice.build(frame, ["q"], hierarchies=hier, sensitive="s")
    got = negotiate(lattice, k=4, max_levels={"q": 0}, max_suppression=3, metric="height", models=thresholds(l=3))
    assert got.relaxations["l"].to_dict()["l"] == 2 and got.relaxations["l"].to_dict()["k"] == 4
    assert got.relaxations["l"].suppressed == 3
    assert got.relaxations["k"] is None  # c fails l=3 whatever k: 4 rows
    assert got.to_dict()["relaxations"]["l"]["l"] == 2


def test_t_is_refused_with_the_reason_by_a_lattice_without_the_sensitive_order(tmp_path):
    frame = pd.DataFrame({"q": ["a", "b"] * 5, "s": [0, 1, 2, 0, 1] * 2})
    hier = {"q": hierarchy_from_rows("q", [["a", "*"], ["b", "*"]], "q")}
    lattice = Lattice.build(frame, ["q"], hierarchies=hier, sensitive="s")
    lattice.sensitive_order = lattice.sensitive_ordered = None  # as a lattice file from before t
    with pytest.raises(ParameterError, match="t cannot be negotiated on this lattice: .* values and their order"):
        negotiate(lattice, k=2, models=thresholds(l=2, t=0.3))
    with pytest.raises(ParameterError, match="rebuild it with 'incrowd lattice build"):
        negotiate(lattice, k=2, models=thresholds(t=0.3))


def _small_file(tmp_path):
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"q0": rng.choice(list("abcd"), 200), "q1": rng.choice(list("xyz"), 200),
                          "s": rng.integers(0, 3, 200)})
    hier = {"q0": hierarchy_from_rows("q0", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"],
                                             ["d", "cd", "*"]], "q0"),
            "q1": hierarchy_from_rows("q1", [["x", "xy", "*"], ["y", "xy", "*"], ["z", "z", "*"]], "q1")}
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=hier, sensitive="s")
    return frame, lattice, lattice.save(tmp_path / "L.duckdb")


def test_cli_negotiate_k_and_l_answers_with_json(tmp_path):
    from typer.testing import CliRunner

    from incrowd.cli import app

    _, lattice, path = _small_file(tmp_path)
    runner = CliRunner()
    out = runner.invoke(app, ["negotiate", str(path), "--k", "5", "--l", "2", "--max-suppression", "5%", "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)
    api = negotiate(lattice, k=5, max_suppression="5%", models=thresholds(l=2)).to_dict()
    assert got["request"]["k"] == 5 and got["request"]["l"] == 2
    assert got["exact"] == api["exact"] and got["exact"]["k"] == 5 and got["exact"]["l"] == 2
    text = runner.invoke(app, ["negotiate", str(path), "--k", "40", "--l", "3", "--max-levels", "q0=0,q1=0"])
    assert text.exit_code == 0, text.output
    assert "k=40, l=3" in text.stdout and "relax l " in text.stdout and "relax k " in text.stdout
    bad = runner.invoke(app, ["negotiate", str(path), "--k", "5", "--t", "1.3"])
    assert bad.exit_code == 2 and "t must be a number in (0, 1]" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def _correlated(tmp_path):
    """Rows whose sensitive value depends on the quasi-identifiers (one value where q0 = a and
    q1 = x, two where q0 = c), so that k and l together choose a node neither chooses alone."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"q0": rng.choice(list("abcd"), 200, p=[.4, .3, .2, .1]),
                          "q1": rng.choice(list("xyz"), 200, p=[.5, .3, .2]), "s": rng.integers(0, 3, 200)})
    frame.loc[(frame.q0 == "a") & (frame.q1 == "x"), "s"] = 0
    frame.loc[frame.q0 == "c", "s"] = rng.integers(0, 2, int((frame.q0 == "c").sum()))
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "q0.csv").write_text("a;ab;*\nb;ab;*\nc;cd;*\nd;cd;*\n")
    (folder / "q1.csv").write_text("x;xy;*\ny;xy;*\nz;z;*\n")
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=str(folder), sensitive="s")
    return frame, folder, lattice


@pytest.mark.parametrize("metric", ["loss", "discernibility", "entropy", "height"])
def test_publish_chooses_the_node_negotiate_answers_for_k_and_l(tmp_path, metric):
    import incrowd

    frame, folder, lattice = _correlated(tmp_path)
    spec = {"privacy": {"k": 15, "l": 3, "max_suppression": "2%", "metric": metric,
                        "allow_full_suppression": True},
            "columns": {"q0": {"role": "categorical", "hierarchy": str(folder / "q0.csv")},
                        "q1": {"role": "categorical", "hierarchy": str(folder / "q1.csv")},
                        "s": "sensitive"}}
    report = incrowd.publish(frame, spec).summary()
    answer = negotiate(lattice, k=15, max_suppression="2%", metric=metric, models=thresholds(l=3))
    assert answer.exact is not None
    # neither threshold alone leads to this node
    assert answer.exact.levels != negotiate(lattice, k=15, max_suppression="2%", metric=metric).exact.levels
    assert answer.exact.levels != negotiate(lattice, max_suppression="2%", metric=metric, models=thresholds(l=3)).exact.levels
    assert report["levels"] == answer.exact.levels
    assert report["suppressed"] == answer.exact.suppressed
    for name in ("loss", "discernibility", "entropy", "aecs", "precision", "height"):
        assert report["metrics"][name] == pytest.approx(answer.exact.metrics[name], rel=1e-12), name


def _web_answer_equals_api(client, lattice_id, lattice, request):
    """The web's answer to ``request`` on lattice ``lattice_id``: the API's (``negotiate`` on
    ``lattice``, the same data), field for field. Returns the page's JSON."""
    r = client.post("/api/negotiate", json={"lattice": lattice_id, **request})
    assert r.status_code == 200, r.text
    page = r.json()
    api = negotiate(lattice, **as_models(request)).to_dict()
    for field in ("status", "exact", "relaxations", "request"):
        assert page[field] == api[field], (request, field)
    return page


def test_web_negotiation_takes_k_and_l_together():
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"region": rng.choice(["n1", "n2", "s1", "s2"], 300), "age": rng.integers(18, 80, 300),
                          "disease": rng.choice(["flu", "cold", "asthma", "none"], 300)})
    region = b"n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\n"
    app = create_app(max_upload_mb=1)
    try:
        client = TestClient(app)
        ds = client.post("/api/datasets", files={"file": ("people.csv", frame.to_csv(index=False).encode())})
        up = client.post("/api/hierarchies", files=[("files", ("people_hierarchy_region.csv", region))])
        assert up.status_code == 200, up.text
        built = client.post("/api/lattice/build", json={"dataset": ds.json()["dataset"],
                                                        "quasi_identifiers": ["age", "region"],
                                                        "intervals": {"age": [5, 10, 20]}, "sensitive": "disease"})
        assert built.status_code == 200, built.text
        hier = {"region": hierarchy_from_rows("region", [r.split(";") for r in region.decode().split()], "region")}
        lattice = Lattice.build(frame, ["age", "region"], hierarchies=hier, intervals={"age": [5, 10, 20]},
                                sensitive="disease")
        supp = lattice.suppressed_all(k=10, models=thresholds(l=3))
        for request in ({"k": 10, "l": 3, "max_suppression": "2%"},
                        {"k": 10, "l": 3, "max_suppression": 3, "max_levels": {"age": 1, "region": 0}}):
            page = _web_answer_equals_api(client, built.json()["lattice"], lattice, request)
            assert "--k 10 --l 3" in page["command"]
            vmax = lattice.level_vector(page["request"]["max_levels"])
            meet = (np.all(lattice.levels <= vmax, axis=1) & (supp >= 0)
                    & (supp <= page["request"]["max_suppression"]))
            heights = lattice.heights
            assert [v["meet"] for v in page["view"]] == [int((meet & (heights == v["height"])).sum())
                                                          for v in page["view"]]
        assert page["status"] == "relaxed"
        assert {a for v in page["view"] for a in v["answers"]} <= {"max_suppression", "height", "k", "l"}
    finally:
        app.state.sessions.close()


def test_suppressed_all_for_k_and_l_equals_the_rows():
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"q0": rng.choice(list("abcd"), 120, p=[.4, .3, .2, .1]),
                          "q1": rng.choice(list("xyz"), 120), "s": rng.integers(0, 3, 120)})
    hier = {"q0": hierarchy_from_rows("q0", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"],
                                             ["d", "cd", "*"]], "q0"),
            "q1": hierarchy_from_rows("q1", [["x", "xy", "*"], ["y", "xy", "*"], ["z", "z", "*"]], "q1")}
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=hier, sensitive="s", fraction=0.5)
    got = lattice.suppressed_all(k=8, models=thresholds(l=3))
    for node in range(lattice.n_nodes):
        if not lattice.materialized[node]:
            assert got[node] == -1
            continue
        assert got[node] == _node_facts(frame, hier, lattice.level_dict(node), 8, 3)[0], node


def test_runtime_histogram_adds_v_max_to_the_candidates_of_k_and_l():
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"q0": rng.choice(list("abcd"), 120, p=[.4, .3, .2, .1]),
                          "q1": rng.choice(list("xyz"), 120), "s": rng.integers(0, 3, 120)})
    hier = {"q0": hierarchy_from_rows("q0", [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"],
                                             ["d", "cd", "*"]], "q0"),
            "q1": hierarchy_from_rows("q1", [["x", "xy", "*"], ["y", "xy", "*"], ["z", "z", "*"]], "q1")}
    lattice = Lattice.build(frame, ["q0", "q1"], hierarchies=hier, sensitive="s", fraction=0.3)
    missing = [v for v in range(lattice.n_nodes) if not lattice.materialized[v]]
    vmax = lattice.level_dict(missing[-1])
    without = negotiate(lattice, k=4, max_levels=vmax, max_suppression=120 - 1, metric="height", models=thresholds(l=2))
    with_it = negotiate(lattice, k=4, max_levels=vmax, max_suppression=120 - 1, metric="height",
                        runtime_histogram=True, models=thresholds(l=2))
    assert without.runtime_histogram_seconds is None and with_it.runtime_histogram_seconds is not None
    built = [v for v in range(lattice.n_nodes) if lattice.materialized[v]
             and np.all(lattice.levels[v] <= lattice.levels[missing[-1]])]
    facts = {v: _node_facts(frame, hier, lattice.level_dict(v), 4, 2)[0] for v in built + [missing[-1]]}
    for answer, nodes in ((without, built), (with_it, built + [missing[-1]])):
        kept = [v for v in nodes if facts[v] < 120]
        if not kept:
            assert answer.exact is None
            continue
        best = min(kept, key=lambda v: (lattice.levels[v].sum(), facts[v], v))
        assert lattice.node_id(answer.exact.levels) == best and answer.exact.suppressed == facts[best]
