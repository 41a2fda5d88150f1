"""The plain-Python twin of the negotiation search (what ``incrowd negotiate`` runs, one request
per process) answers exactly as the compiled kernel: same nodes, suppression, thresholds and
visited counts, on full and partial lattices, for k and l."""

from __future__ import annotations

import numpy as np
import pytest
from _thresholds import as_models  # noqa: E402
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_generalization import _random_case

from incrowd.generalization import Lattice, _negotiate, negotiate
from incrowd.generalization._search import negotiate_kernel
from incrowd.generalization._search_plain import PLAIN_MAX_NODES, one_request, plain_negotiate_kernel, search_kernel


def _answer(lattice, kernel, monkeypatch, **request) -> dict:
    with monkeypatch.context() as patch:
        patch.setattr(_negotiate, "search_kernel", lambda *_: kernel)
        result = negotiate(lattice, metric="height", **as_models(request))
    # timings differ by nature (the compiled kernel may compile on its first call): not compared
    return {**result.to_dict(), "visited": result.visited, "seconds": None, "compile_seconds": None}


def _same(lattice, monkeypatch, **request):
    plain = _answer(lattice, plain_negotiate_kernel, monkeypatch, **request)
    compiled = _answer(lattice, negotiate_kernel, monkeypatch, **request)
    assert plain == compiled, request


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_lattices_answer_alike(data, monkeypatch):
    frame, _, hier = _random_case(data.draw)
    qis = list(hier)
    lattice = Lattice.build(frame, qis, hierarchies=hier, sensitive="s",
                            fraction=data.draw(st.sampled_from([1.0, 0.5])))
    tops = [lattice.hierarchies[a].max_level for a in qis]
    for _ in range(5):
        vmax = {a: data.draw(st.integers(0, t)) for a, t in zip(qis, tops)}
        limit = data.draw(st.integers(0, len(frame)))
        distinct = int(frame["s"].nunique())
        if distinct >= 2 and data.draw(st.booleans()):
            _same(lattice, monkeypatch, l=data.draw(st.integers(2, distinct)), max_levels=vmax, max_suppression=limit)
        else:
            _same(lattice, monkeypatch, k=data.draw(st.integers(2, len(frame))), max_levels=vmax,
                  max_suppression=limit)


@pytest.fixture(scope="module")
def census_lattice():
    from incrowd.datasets import load_census

    census = load_census()
    cols = list(census.columns[:4])
    return Lattice.build(census, cols, intervals={c: [2, 4, 8] for c in cols}), cols


@pytest.mark.parametrize("fraction", [1.0, 0.3])
def test_a_grid_of_requests_answers_alike(census_lattice, monkeypatch, fraction):
    lattice, cols = census_lattice
    if fraction < 1.0:
        from incrowd.datasets import load_census

        lattice = Lattice.build(load_census(), cols, intervals={c: [2, 4, 8] for c in cols}, fraction=fraction)
    rng = np.random.default_rng(3)
    for k in (2, 3, 10, 50, 500):
        for supp in ("0", "1%", "10%"):
            vmax = {c: int(rng.integers(0, 4)) for c in cols}
            _same(lattice, monkeypatch, k=k, max_levels=vmax, max_suppression=supp)


def test_one_request_picks_the_plain_kernel_only_while_the_compiled_one_is_not_loaded(monkeypatch):
    import sys

    assert search_kernel() is negotiate_kernel  # outside one_request: always compiled
    with one_request():
        assert search_kernel() is negotiate_kernel  # this process has loaded it already
        with monkeypatch.context() as patch:  # as in a fresh process
            patch.delitem(sys.modules, "incrowd.generalization._search")
            assert search_kernel() is plain_negotiate_kernel
            assert search_kernel(PLAIN_MAX_NODES) is plain_negotiate_kernel
            # a lattice too large for the interpreter's worst case gets the compiled search
            assert search_kernel(PLAIN_MAX_NODES + 1) is not plain_negotiate_kernel
    assert search_kernel() is negotiate_kernel
