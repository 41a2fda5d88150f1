"""``negotiate`` with t (t-closeness) alone or with k and l: a class is suppressed when it has
fewer than k rows, fewer than l distinct sensitive values or lies farther than t (earth mover's
distance) from the whole table's sensitive values, as ``publish`` suppresses it. Checked
against a brute force over every node that groups the rows with pandas and computes the
distance with exact fractions, against ``publish`` on the same data and spec, through the
lattice file, the CLI and the web."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from _thresholds import as_models, thresholds  # noqa: E402
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_negotiate_k_and_l import _assert_best, _assert_shared_relaxations, _random_case, _web_answer_equals_api

from incrowd.exceptions import ParameterError
from incrowd.generalization import METRICS, Lattice, negotiate, released_metrics
from incrowd.generalization._hierarchy import hierarchy_from_rows


def _missing(values: pd.Series) -> pd.Series:
    """Which cells are missing as publish reads them: system missing and the text NA."""
    return values.isna() | (values.astype(object) == "NA")


def _distance(values: pd.Series, reference: pd.Series, ordered: bool) -> Fraction:
    """Li, Li and Venkatasubramanian's distance of a class's values to the reference, exactly;
    missing cells are one category, after every value."""
    order = sorted(reference[~_missing(reference)].unique().tolist())
    n_ref, s = len(reference), len(values)
    q = [Fraction(int((values[~_missing(values)] == v).sum()), s) for v in order]
    p = [Fraction(int((reference[~_missing(reference)] == v).sum()), n_ref) for v in order]
    if _missing(reference).any():
        order.append(None)
        q.append(Fraction(int(_missing(values).sum()), s))
        p.append(Fraction(int(_missing(reference).sum()), n_ref))
    if len(order) == 1:
        return Fraction(0)
    if ordered:
        total, run = Fraction(0), Fraction(0)
        for qi, pi in zip(q[:-1], p[:-1]):
            run += qi - pi
            total += abs(run)
        return total / (len(order) - 1)
    return sum((abs(qi - pi) for qi, pi in zip(q, p)), Fraction(0)) / 2


def _classes(frame, hier, levels):
    gen = frame.copy()
    for a, level in levels.items():
        h = hier[a]
        gen[a] = frame[a].map(dict(zip(h.labels[0].tolist(), h.labels[level][h.code_map(level)].tolist())))
    return gen, gen.groupby(list(levels), sort=False)


def _facts(frame, hier, levels, ordered):
    """Per class of the node: (row index, size, distinct values, distance as a float)."""
    gen, groups = _classes(frame, hier, levels)
    out = []
    for _, rows in groups.groups.items():
        values = frame.loc[rows, "s"]
        out.append((rows, len(rows), values[~_missing(values)].nunique(),
                    float(_distance(values, frame["s"], ordered))))
    return gen, out


def _node(frame, hier, levels, ordered, k, l, t):
    """(rows suppressed, published classes, released table, input rows released then suppressed)."""
    gen, facts = _facts(frame, hier, levels, ordered)
    fails = pd.Series(False, index=frame.index)
    classes = 0
    for rows, size, distinct, distance in facts:
        bad = size < k or distinct < l or distance > t + 1e-12
        fails.loc[rows] = bad
        classes += not bad
    kept = gen.loc[~fails].reset_index(drop=True)
    return int(fails.sum()), classes, kept, pd.concat([frame.loc[~fails], frame.loc[fails]])


def _brute(lattice, frame, hier, ordered, k, l, t, metric, vmax):
    n = frame.shape[0]
    out = {}
    for node in np.flatnonzero(lattice.materialized).tolist():
        levels = lattice.level_dict(node)
        supp, classes, released, original = _node(frame, hier, levels, ordered, k, l, t)
        value = released_metrics(released, hier, n_rows=n, levels=levels, original=original, target="s")[metric]
        out[node] = (bool(np.all(lattice.levels[node] <= vmax)), supp, classes, value)
    return out


def _case(draw):
    frame, hier = _random_case(draw)
    text = draw(st.booleans())
    if text:  # text: the equal distance
        frame["s"] = frame["s"].map({0: "flu", 1: "cold", 2: "none"})
    # the sensitive value depends on q0 in part, so that some classes lie far from the table
    far = frame["q0"] == frame["q0"].iloc[0]
    frame.loc[far, "s"] = frame.loc[far, "s"].iloc[0]
    share = draw(st.sampled_from([0.0, 0.0, 0.15, 0.4]))
    if share:  # missing cells: system missing, and the text NA in a text column
        rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
        gone = rng.random(len(frame)) < share
        frame["s"] = frame["s"].astype(object if text else float)
        frame.loc[gone, "s"] = np.where(rng.random(int(gone.sum())) < 0.5, "NA", None) if text else np.nan
    return frame, hier, not text


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_t_with_k_and_l_equals_brute_force(data):
    frame, hier, ordered = _case(data.draw)
    qis = list(hier)
    lattice = Lattice.build(frame, qis, hierarchies=hier, sensitive="s",
                            fraction=data.draw(st.sampled_from([1.0, 1.0, 0.5])))
    assert lattice.sensitive_ordered is ordered
    metric = data.draw(st.sampled_from(METRICS))
    k = data.draw(st.sampled_from([None, 2, 4]))
    # l = 2 where two distinct values are left once missing cells are drawn (publish refuses more)
    l = data.draw(st.sampled_from([None, 2])) if lattice.sensitive_values >= 2 else None
    t = data.draw(st.sampled_from([0.05, 0.1, 0.2, 0.3, 0.5]))
    limit = data.draw(st.integers(0, frame.shape[0] // 4))
    vmax = np.array([data.draw(st.integers(0, hier[a].max_level)) for a in qis])
    result = negotiate(lattice, k=k, max_levels=dict(zip(qis, vmax.tolist())), max_suppression=limit,
                       metric=metric, models=thresholds(l=l, t=t))
    n = frame.shape[0]
    within = min(limit, n - 1)
    kk, ll = k or 1, l or 0
    brute = _brute(lattice, frame, hier, ordered, kk, ll, t, metric, vmax)
    every = lattice.suppressed_all(k=k, models=thresholds(l=l, t=t))  # publish's compiled node kernels
    assert all(every[v] == facts[1] for v, facts in brute.items())
    request = result.to_dict()["request"]
    assert request["t"] == t and request.get("k") == k and request.get("l") == l
    exact = [v for v, (sub, supp, _, _) in brute.items() if sub and supp <= within]
    _assert_best(result.exact, lattice, brute, exact, metric)
    if exact:
        assert result.status == "exact" and result.exact.to_dict()["t"] == t
        return
    _assert_shared_relaxations(result, lattice, brute, n, within, metric)
    relax = result.relaxations
    # relaxing t keeps k and l: the least distance at which some sublattice node fits the limit
    reach = []
    for v, facts in brute.items():
        if not facts[0]:
            continue
        _, classes = _facts(frame, hier, lattice.level_dict(v), ordered)
        held = sum(size for _, size, distinct, _ in classes if size < kk or distinct < ll)
        for cut in sorted({0.0} | {d for *_, d in classes}):
            if held + sum(size for _, size, distinct, d in classes
                          if not (size < kk or distinct < ll) and d > cut + 1e-12) <= within:
                reach.append(cut)
                break
    if not reach:
        assert relax["t"] is None
    else:
        top = min(reach)
        got = relax["t"]
        assert got is not None and got.to_dict()["t"] == pytest.approx(top, abs=1e-12)
        facts = _brute(lattice, frame, hier, ordered, kk, ll, got.to_dict()["t"], metric, vmax)
        _assert_best(got, lattice, facts, [v for v, f in facts.items() if f[0] and f[1] <= within], metric)
    for name, value in (("k", k), ("l", l)):
        if value is None:
            assert name not in relax
            continue
        got = relax[name]
        top, meets = None, []
        for lower in range(value - 1, 1, -1):
            pair = (lower, ll) if name == "k" else (kk, lower)
            facts = _brute(lattice, frame, hier, ordered, *pair, t, metric, vmax)
            meets = [v for v, f in facts.items() if f[0] and f[1] <= within]
            if meets:
                top = lower
                break
        if top is None:
            assert got is None, name
            continue
        assert got is not None and got.to_dict()[name] == top and got.to_dict()["t"] == t, name
        _assert_best(got, lattice, facts, meets, metric)


def _skewed(tmp_path):
    """Rows whose disease depends on region and age band, so that t suppresses classes k and l
    keep, and k, l and t together choose a node none of them chooses alone."""
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({"region": rng.choice(["n1", "n2", "s1", "s2"], n, p=[.4, .3, .2, .1]),
                          "band": rng.choice(["a", "b", "c"], n, p=[.5, .3, .2]),
                          "disease": rng.choice(["flu", "cold", "asthma", "none"], n)})
    frame.loc[(frame.region == "n1") & (frame.band == "a"), "disease"] = rng.choice(["flu", "cold"], 1)[0]
    frame.loc[frame.region == "s2", "disease"] = rng.choice(["asthma", "none"], int((frame.region == "s2").sum()))
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "region.csv").write_text("n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\n")
    (folder / "band.csv").write_text("a;ab;*\nb;ab;*\nc;c;*\n")
    lattice = Lattice.build(frame, ["region", "band"], hierarchies=str(folder), sensitive="disease")
    return frame, folder, lattice


def _spec(folder, metric, **privacy):
    return {"privacy": {"max_suppression": "5%", "metric": metric, "allow_full_suppression": True, **privacy},
            "columns": {"region": {"role": "categorical", "hierarchy": str(folder / "region.csv")},
                        "band": {"role": "categorical", "hierarchy": str(folder / "band.csv")},
                        "disease": "sensitive"}}


@pytest.mark.parametrize("metric", ["loss", "discernibility", "entropy", "height"])
@pytest.mark.parametrize("privacy", [{"k": 5, "t": 0.3}, {"k": 5, "l": 2, "t": 0.25}, {"k": 5, "l": 2, "t": 0.4},
                                     {"k": 10, "l": 3, "t": 0.12}])
def test_publish_chooses_the_node_negotiate_answers_with_t(tmp_path, metric, privacy):
    import incrowd

    frame, folder, lattice = _skewed(tmp_path)
    report = incrowd.publish(frame, _spec(folder, metric, **privacy)).summary()
    answer = negotiate(lattice, max_suppression="5%", metric=metric, **as_models(privacy))
    assert answer.exact is not None
    # t changes the answer: another node, or classes suppressed that k and l keep
    without = negotiate(lattice, max_suppression="5%", metric=metric,
                        **as_models({name: value for name, value in privacy.items() if name != "t"})).exact
    assert (answer.exact.levels, answer.exact.suppressed) != (without.levels, without.suppressed)
    assert report["levels"] == answer.exact.levels
    assert report["suppressed"] == answer.exact.suppressed
    for name in ("loss", "discernibility", "entropy", "aecs", "precision", "height"):
        assert report["metrics"][name] == pytest.approx(answer.exact.metrics[name], rel=1e-12), name


def test_t_suppresses_classes_k_and_l_keep_as_publish_does(tmp_path):
    import incrowd

    frame, folder, lattice = _skewed(tmp_path)
    # at the bottom node, classes far from the table are suppressed for t alone
    without = negotiate(lattice, k=5, max_levels={"region": 0, "band": 0}, max_suppression=400 - 1,
                        metric="height", models=thresholds(l=2))
    with_t = negotiate(lattice, k=5, max_levels={"region": 0, "band": 0}, max_suppression=400 - 1,
                       metric="height", models=thresholds(l=2, t=0.15))
    assert with_t.exact.levels == without.exact.levels == {"region": 0, "band": 0}
    assert with_t.exact.suppressed > without.exact.suppressed
    spec = _spec(folder, "height", k=5, l=2, t=0.15)
    spec["privacy"]["max_suppression"] = 399
    spec["levels"] = {"region": 0, "band": 0}
    report = incrowd.publish(frame, spec).summary()
    assert report["suppressed"] == with_t.exact.suppressed
    # t alone, as publish takes it (its k is at least 2: every class here has 2 rows or more)
    assert negotiate(lattice, k=2, max_levels={"region": 0, "band": 0}, max_suppression=399,
                     metric="height", models=thresholds(t=0.15)).exact.suppressed == negotiate(
        lattice, max_levels={"region": 0, "band": 0}, max_suppression=399, metric="height",
        models=thresholds(t=0.15)).exact.suppressed


def test_lattice_file_keeps_what_t_needs_and_an_old_file_refuses_t(tmp_path):
    frame, _, lattice = _skewed(tmp_path)
    assert lattice.sensitive_order == ("asthma", "cold", "flu", "none") and lattice.sensitive_ordered is False
    path = lattice.save(tmp_path / "L.duckdb")
    opened = Lattice.open(path)
    assert opened.sensitive_order == lattice.sensitive_order and opened.sensitive_ordered is False
    assert opened.describe()["sensitive_distance"] == "equal"
    for request in ({"k": 5, "l": 2, "t": 0.15}, {"k": 50, "t": 0.05, "max_levels": {"region": 0}}):
        assert opened.negotiate(max_suppression="5%", **as_models(request)).to_dict() | {"seconds": 0} == \
            lattice.negotiate(max_suppression="5%", **as_models(request)).to_dict() | {"seconds": 0}
    lattice.sensitive_order = lattice.sensitive_ordered = None  # as a file written before t
    old = Lattice.open(lattice.save(tmp_path / "old.duckdb"))
    with pytest.raises(ParameterError, match="rebuild it with 'incrowd lattice build"):
        old.negotiate(k=5, models=thresholds(t=0.2))
    assert old.negotiate(k=5, max_suppression="5%", models=thresholds(l=2)).to_dict()["exact"] == \
        opened.negotiate(k=5, max_suppression="5%", models=thresholds(l=2)).to_dict()["exact"]


def test_numbers_take_the_ordered_distance_as_in_publish():
    frame = pd.DataFrame({"q": ["a", "b"] * 6, "s": [10, 20, 30, 10, 20, 30, 10, 10, 30, 30, 20, 20]})
    hier = {"q": hierarchy_from_rows("q", [["a", "*"], ["b", "*"]], "q")}
    lattice = Lattice.build(frame, ["q"], hierarchies=hier, sensitive="s")
    assert lattice.sensitive_order == (10.0, 20.0, 30.0) and lattice.sensitive_ordered is True
    frame["s"] = frame["s"].astype(str) + "x"
    assert Lattice.build(frame, ["q"], hierarchies=hier, sensitive="s").sensitive_ordered is False


def test_bad_t_is_one_clear_error():
    frame = pd.DataFrame({"q": ["a", "b"] * 5, "s": [0, 1, 2, 0, 1] * 2})
    hier = {"q": hierarchy_from_rows("q", [["a", "*"], ["b", "*"]], "q")}
    lattice = Lattice.build(frame, ["q"], hierarchies=hier, sensitive="s")
    for bad in (0, -0.1, 1.5, float("nan"), True, "0.2"):
        with pytest.raises(ParameterError, match=r"t must be a number in \(0, 1\]"):
            negotiate(lattice, k=2, models=thresholds(t=bad))
    plain = Lattice.build(frame, ["q"], hierarchies=hier)
    with pytest.raises(ParameterError, match="t-closeness needs a lattice built with a sensitive attribute"):
        negotiate(plain, k=2, models=thresholds(t=0.3))


def test_cli_negotiate_takes_t(tmp_path):
    from typer.testing import CliRunner

    from incrowd.cli import app

    frame, _, lattice = _skewed(tmp_path)
    path = lattice.save(tmp_path / "L.duckdb")
    runner = CliRunner()
    out = runner.invoke(app, ["negotiate", str(path), "--k", "5", "--l", "2", "--t", "0.15",
                              "--max-suppression", "5%", "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.stdout)
    api = negotiate(lattice, k=5, max_suppression="5%", models=thresholds(l=2, t=0.15)).to_dict()
    assert got["request"]["t"] == 0.15 and got["request"]["k"] == 5 and got["request"]["l"] == 2
    assert got["exact"] == api["exact"] and got["exact"]["t"] == 0.15
    text = runner.invoke(app, ["negotiate", str(path), "--k", "5", "--t", "0.01", "--max-levels", "region=0,band=0"])
    assert text.exit_code == 0, text.output
    assert "k=5, t=0.01" in text.stdout and "relax t " in text.stdout
    plain = Lattice.build(frame, ["region", "band"], hierarchies={a: lattice.hierarchies[a] for a in lattice.attributes})
    plain_path = plain.save(tmp_path / "plain.duckdb")
    for args in ([str(path), "--k", "5", "--t", "1.5"], [str(path), "--k", "5", "--t", "0"],
                 [str(plain_path), "--k", "5", "--t", "0.2"]):
        bad = runner.invoke(app, ["negotiate", *args, "--json"])
        assert bad.exit_code == 2 and bad.stdout == "", (args, bad.output)
        assert len(bad.stderr.strip().splitlines()) == 1 and ("t must be" in bad.stderr or "sensitive" in bad.stderr)
    lattice.sensitive_order = lattice.sensitive_ordered = None  # as a file written before t
    old = lattice.save(tmp_path / "old.duckdb")
    refused = runner.invoke(app, ["negotiate", str(old), "--k", "5", "--t", "0.2"])
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [refused.stderr.strip()] and "incrowd lattice build" in refused.stderr
    assert runner.invoke(app, ["negotiate", str(old), "--k", "5", "--l", "2"]).exit_code == 0


def test_suppressed_all_with_t_equals_the_rows(tmp_path):
    frame, folder, lattice = _skewed(tmp_path)
    hier = lattice.hierarchies
    got = lattice.suppressed_all(k=5, models=thresholds(l=2, t=0.12))
    rows = frame.rename(columns={"disease": "s"})
    assert (got > 0).any()
    for node in range(lattice.n_nodes):
        assert got[node] == _node(rows, hier, lattice.level_dict(node), False, 5, 2, 0.12)[0], node


def test_web_negotiation_takes_t_with_k_and_l(tmp_path):
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    frame, folder, lattice = _skewed(tmp_path)
    app = create_app(max_upload_mb=1)
    try:
        client = TestClient(app)
        ds = client.post("/api/datasets", files={"file": ("people.csv", frame.to_csv(index=False).encode())})
        up = client.post("/api/hierarchies", files=[("files", (f"people_hierarchy_{a}.csv", (folder / f"{a}.csv")
                                                               .read_bytes())) for a in ("region", "band")])
        assert up.status_code == 200, up.text
        built = client.post("/api/lattice/build", json={"dataset": ds.json()["dataset"],
                                                        "quasi_identifiers": ["region", "band"],
                                                        "sensitive": "disease"})
        assert built.status_code == 200, built.text
        supp = lattice.suppressed_all(k=5, models=thresholds(l=2, t=0.12))
        for request in ({"k": 5, "l": 2, "t": 0.12, "max_suppression": "5%"},
                        {"k": 5, "t": 0.01, "max_suppression": 3, "max_levels": {"region": 0, "band": 0}}):
            page = _web_answer_equals_api(client, built.json()["lattice"], lattice, request)
            assert f"--t {request['t']}" in page["command"]
        assert page["status"] == "relaxed" and page["relaxations"]["t"] is not None
        view = client.post("/api/negotiate", json={"lattice": built.json()["lattice"], "k": 5, "l": 2, "t": 0.12,
                                                   "max_suppression": "5%"}).json()["view"]
        meet = (supp >= 0) & (supp <= 20)
        assert [v["meet"] for v in view] == [int((meet & (lattice.heights == v["height"])).sum()) for v in view]
        bad = client.post("/api/negotiate", json={"lattice": built.json()["lattice"], "k": 5, "t": 2})
        assert bad.status_code in (400, 422) and "t must be a number in (0, 1]" in bad.text
    finally:
        app.state.sessions.close()


def test_runtime_histogram_adds_v_max_to_the_candidates_with_t(tmp_path):
    frame, folder, full = _skewed(tmp_path)
    lattice = Lattice.build(frame, ["region", "band"], hierarchies=str(folder), sensitive="disease", fraction=0.3)
    missing = [v for v in range(lattice.n_nodes) if not lattice.materialized[v]]
    assert missing
    vmax = lattice.level_dict(missing[-1])
    request = {"k": 5, "t": 0.15, "max_levels": vmax, "max_suppression": 399, "metric": "height"}
    without = negotiate(lattice, **as_models(request))
    with_it = negotiate(lattice, runtime_histogram=True, **as_models(request))
    assert without.runtime_histogram_seconds is None and with_it.runtime_histogram_seconds is not None
    supp = full.suppressed_all(k=5, models=thresholds(t=0.15))
    built = [v for v in range(lattice.n_nodes) if lattice.materialized[v]
             and np.all(lattice.levels[v] <= lattice.levels[missing[-1]])]
    for answer, nodes in ((without, built), (with_it, built + [missing[-1]])):
        kept = [v for v in nodes if supp[v] < 400]
        if not kept:
            assert answer.exact is None
            continue
        best = min(kept, key=lambda v: (lattice.levels[v].sum(), supp[v], v))
        assert lattice.node_id(answer.exact.levels) == best and answer.exact.suppressed == supp[best]


# -- missing sensitive values: one missing value, never distinct for l, one category for t --------


def _with_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """The skewed rows with missing diseases as publish meets them: system missing, the NA
    vocabulary ("NA") and a class of only missing values."""
    rng = np.random.default_rng(11)
    frame = frame.copy()
    frame["disease"] = frame["disease"].astype(object)
    frame.loc[rng.random(len(frame)) < 0.1, "disease"] = None
    frame.loc[rng.random(len(frame)) < 0.05, "disease"] = "NA"
    frame.loc[(frame.region == "s2") & (frame.band == "c"), "disease"] = None
    # one value and missing cells: one distinct value, never two
    frame.loc[(frame.region == "n2") & (frame.band == "c"), "disease"] = \
        np.where(np.arange(int(((frame.region == "n2") & (frame.band == "c")).sum())) % 2, "flu", None)
    return frame


@pytest.mark.parametrize("metric", ["loss", "height"])
@pytest.mark.parametrize("privacy", [{"k": 5, "l": 2}, {"k": 5, "t": 0.3}, {"k": 5, "l": 2, "t": 0.25},
                                     {"k": 3, "l": 3, "t": 0.2}])
def test_missing_sensitive_values_negotiate_as_publish(tmp_path, metric, privacy):
    import incrowd

    frame, folder, _ = _skewed(tmp_path)
    frame = _with_missing(frame)
    lattice = Lattice.build(frame, ["region", "band"], hierarchies=str(folder), sensitive="disease")
    assert lattice.sensitive_missing and lattice.sensitive_values == 4
    assert lattice.sensitive_order == ("asthma", "cold", "flu", "none")
    opened = Lattice.open(lattice.save(tmp_path / "L.duckdb"))
    assert opened.sensitive_missing and opened.describe()["sensitive_missing"] is True
    report = incrowd.publish(frame, _spec(folder, metric, **privacy)).summary()
    for answer in (negotiate(lattice, max_suppression="5%", metric=metric, **as_models(privacy)),
                   negotiate(opened, max_suppression="5%", metric=metric, **as_models(privacy))):
        assert answer.exact is not None
        assert report["levels"] == answer.exact.levels
        assert report["suppressed"] == answer.exact.suppressed
        for name in ("loss", "discernibility", "entropy", "aecs", "precision", "height"):
            assert report["metrics"][name] == pytest.approx(answer.exact.metrics[name], rel=1e-12), name
    # every node as publish's kernels and as the rows say (missing: never distinct, one category)
    supp = lattice.suppressed_all(**as_models(privacy))
    rows = frame.rename(columns={"disease": "s"})
    for node in range(lattice.n_nodes):
        assert supp[node] == _node(rows, lattice.hierarchies, lattice.level_dict(node), False,
                                   privacy.get("k", 1), privacy.get("l", 0), privacy.get("t", 1.0))[0], node


def test_a_class_of_one_value_and_missing_cells_fails_l_2(tmp_path):
    frame, folder, _ = _skewed(tmp_path)
    frame = _with_missing(frame)
    lattice = Lattice.build(frame, ["region", "band"], hierarchies=str(folder), sensitive="disease")
    bottom = lattice.node_id({"region": 0, "band": 0})
    only_missing = int(((frame.region == "s2") & (frame.band == "c")).sum())
    one_and_missing = int(((frame.region == "n2") & (frame.band == "c")).sum())
    assert only_missing and one_and_missing
    # the l histogram: a class of only missing values has 0 distinct values
    assert lattice.l_histograms.below(bottom, 1) == (only_missing, 1)
    _, k_part, l_part = lattice.node_histograms(bottom)  # the runtime path counts alike
    assert l_part[0][0] == 0 and l_part[2][0] == only_missing
    got = negotiate(lattice, k=2, max_levels={"region": 0, "band": 0}, max_suppression=399, metric="height",
                    models=thresholds(l=2))
    rows = frame.rename(columns={"disease": "s"})
    assert got.exact.suppressed == _node(rows, lattice.hierarchies, {"region": 0, "band": 0}, False, 2, 2, 1.0)[0]
    assert got.exact.suppressed >= only_missing + one_and_missing


def test_an_old_lattice_file_without_the_missing_flag_reads_as_none(tmp_path):
    import duckdb

    frame, _, lattice = _skewed(tmp_path)
    path = lattice.save(tmp_path / "L.duckdb")
    with duckdb.connect(str(path)) as con:
        assert con.execute("select count(*) from meta where key = 'sensitive_missing'").fetchone()[0] == 1
        con.execute("delete from meta where key = 'sensitive_missing'")
    old = Lattice.open(path)
    assert old.sensitive_missing is False and old.describe()["sensitive_missing"] is False
    assert old.negotiate(k=5, max_suppression="5%", models=thresholds(l=2, t=0.15)).to_dict()["exact"] == \
        lattice.negotiate(k=5, max_suppression="5%", models=thresholds(l=2, t=0.15)).to_dict()["exact"]


def test_cli_lattice_with_empty_and_na_cells_answers_as_publish(tmp_path):
    from typer.testing import CliRunner

    import incrowd
    from incrowd.cli import app
    from incrowd.io import read_table

    frame, folder, _ = _skewed(tmp_path)
    frame = _with_missing(frame)
    data = tmp_path / "people.csv"
    frame.to_csv(data, index=False)  # None as an empty cell, "NA" as the text NA
    text = data.read_text()
    assert ",NA\n" in text and ",\n" in text
    runner = CliRunner()
    out = tmp_path / "L.duckdb"
    built = runner.invoke(app, ["lattice", "build", str(data), "--qi", "region,band", "--hierarchies", str(folder),
                                "--sensitive", "disease", "-o", str(out), "--json"])
    assert built.exit_code == 0, built.output
    assert json.loads(built.stdout)["sensitive_missing"] is True
    read = read_table(data)
    for privacy in ({"k": 5, "l": 2}, {"k": 5, "t": 0.3}, {"k": 5, "l": 2, "t": 0.25}):
        args = [a for name, value in privacy.items() for a in (f"--{name}", str(value))]
        got = runner.invoke(app, ["negotiate", str(out), *args, "--max-suppression", "5%", "--json"])
        assert got.exit_code == 0, got.output
        exact = json.loads(got.stdout)["exact"]
        report = incrowd.publish(read, _spec(folder, "loss", **privacy)).summary()
        assert exact["levels"] == report["levels"] and exact["suppressed"] == report["suppressed"], privacy


# -- the order of a text sensitive column -----------------------------------------------------------


def _graded(tmp_path):
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame({"region": rng.choice(["n1", "n2", "s1", "s2"], n), "band": rng.choice(["a", "b", "c"], n),
                          "grade": rng.choice(["low", "mid", "high"], n, p=[.5, .3, .2]).astype(object)})
    frame.loc[frame.region == "s2", "grade"] = rng.choice(["mid", "high"], int((frame.region == "s2").sum()))
    frame.loc[rng.random(n) < 0.05, "grade"] = None
    folder = tmp_path / "h"
    folder.mkdir(exist_ok=True)
    (folder / "region.csv").write_text("n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\n")
    (folder / "band.csv").write_text("a;ab;*\nb;ab;*\nc;c;*\n")
    return frame, folder


@pytest.mark.parametrize("privacy", [{"k": 5, "t": 0.15}, {"k": 3, "l": 2, "t": 0.1}])
def test_sensitive_order_gives_t_the_ordered_distance_of_publish(tmp_path, privacy):
    from typer.testing import CliRunner

    import incrowd
    from incrowd.cli import app
    from incrowd.io import read_table

    frame, folder = _graded(tmp_path)
    order = ["low", "mid", "high"]
    lattice = Lattice.build(frame, ["region", "band"], hierarchies=str(folder), sensitive="grade",
                            sensitive_order=order)
    assert lattice.sensitive_order == tuple(order) and lattice.sensitive_ordered is True
    spec = _spec(folder, "loss", **privacy)
    spec["columns"]["grade"] = {"role": "sensitive", "ordered": order}
    del spec["columns"]["disease"]
    report = incrowd.publish(frame, spec).summary()
    answer = negotiate(lattice, max_suppression="5%", **as_models(privacy))
    assert (answer.exact.levels, answer.exact.suppressed) == (report["levels"], report["suppressed"])
    # the order matters: the equal distance answers otherwise
    equal = negotiate(Lattice.build(frame, ["region", "band"], hierarchies=str(folder), sensitive="grade"),
                      max_suppression="5%", **as_models(privacy))
    assert (equal.exact.levels, equal.exact.suppressed, equal.exact.metrics) != \
        (answer.exact.levels, answer.exact.suppressed, answer.exact.metrics)
    data = tmp_path / "graded.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "L.duckdb"
    runner = CliRunner()
    built = runner.invoke(app, ["lattice", "build", str(data), "--qi", "region,band", "--hierarchies", str(folder),
                                "--sensitive", "grade", "--sensitive-order", "low, mid,high", "-o", str(out)])
    assert built.exit_code == 0, built.output
    args = [a for name, value in privacy.items() for a in (f"--{name}", str(value))]
    got = runner.invoke(app, ["negotiate", str(out), *args, "--max-suppression", "5%", "--json"])
    assert got.exit_code == 0, got.output
    exact = json.loads(got.stdout)["exact"]
    on_file = incrowd.publish(read_table(data), spec).summary()
    assert (exact["levels"], exact["suppressed"]) == (on_file["levels"], on_file["suppressed"])


def test_sensitive_order_errors_are_one_line_as_in_publish(tmp_path):
    from typer.testing import CliRunner

    import incrowd
    from incrowd.cli import app
    from incrowd.exceptions import DataError

    frame, folder = _graded(tmp_path)
    with pytest.raises(DataError) as publish_error:
        spec = _spec(folder, "loss", k=5, t=0.2)
        spec["columns"]["grade"] = {"role": "sensitive", "ordered": ["low", "mid"]}
        del spec["columns"]["disease"]
        incrowd.publish(frame, spec)
    with pytest.raises(DataError) as lattice_error:
        Lattice.build(frame, ["region", "band"], hierarchies=str(folder), sensitive="grade",
                      sensitive_order=["low", "mid"])
    assert str(lattice_error.value) == str(publish_error.value)
    assert "'high' is not in the order given" in str(lattice_error.value)
    with pytest.raises(ParameterError, match="sensitive_order needs sensitive"):
        Lattice.build(frame, ["region", "band"], hierarchies=str(folder), sensitive_order=["low", "mid", "high"])
    data = tmp_path / "graded.csv"
    frame.to_csv(data, index=False)
    runner = CliRunner()
    for extra, says in ((["--sensitive", "grade", "--sensitive-order", "low,mid"], "'high' is not in the order"),
                        (["--sensitive-order", "low,mid,high"], "--sensitive-order needs --sensitive"),
                        (["--sensitive", "grade", "--sensitive-order", "low,,high"], "separated by commas")):
        out = tmp_path / "L.duckdb"
        bad = runner.invoke(app, ["lattice", "build", str(data), "--qi", "region,band", "--hierarchies",
                                  str(folder), *extra, "-o", str(out)])
        assert bad.exit_code == 2, (extra, bad.output)
        assert says in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, (extra, bad.stderr)
        assert not out.exists()
