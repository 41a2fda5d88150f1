"""A small rank swap, shuffle or microaggregation (MDAV) through the API, in a process that has
not started numba, runs plain twins of the compiled loops and of scipy's normal quantiles: the
same values bit for bit (same draws in the same order, same arithmetic, same ties), and a fresh
process never imports numba or scipy for them."""

from __future__ import annotations

import json
import subprocess
import sys
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import ndtri
from scipy.stats import norm, rankdata

from incrowd._runtime import small as _small
from incrowd.perturbation import perturb
from incrowd.perturbation import rank_swap as rank_swap_module
from incrowd.perturbation import shuffle as shuffle_module
from incrowd.perturbation._rank_swap_kernel import swap as swap_kernel

TESTDATA = data_dir() / "testdata.csv"
needs_data = pytest.mark.skipif(not TESTDATA.is_file(), reason="benchmark data not found")

# small integer grids give many exact ties; NaN stands for a missing cell
_cells = st.one_of(st.integers(-3, 3).map(float), st.floats(-1e9, 1e9, allow_nan=False), st.just(np.nan))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 80), st.integers(0, 90), st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_rank_swap_twin_equals_the_kernel(n, window, tries, seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(-3, 4, n).astype(np.float64)
    done = rng.random(n) < rng.random()
    draws = rng.random((n, tries + 1))
    kernel_values, kernel_done = values.copy(), done.copy()
    kernel = swap_kernel(kernel_values, kernel_done, window, draws)
    twin = _small.rank_swap(values, done, window, draws)
    assert twin == kernel
    assert values.tobytes() == kernel_values.tobytes()
    np.testing.assert_array_equal(done, kernel_done)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(1, 4)), elements=_cells))
def test_average_ranks_equal_scipy_rankdata(X):
    np.testing.assert_array_equal(shuffle_module._average_ranks(X), rankdata(X, axis=0))


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(1, 200), elements=st.floats(0, 1, exclude_min=True, exclude_max=True)))
def test_normal_quantiles_equal_scipy(q):
    twin = _small.normal_quantiles(q)
    assert twin.tobytes() == ndtri(q).tobytes() == norm.ppf(q).tobytes()


def test_normal_quantiles_equal_scipy_in_the_far_tails_and_at_every_rank_of_a_file():
    rng = np.random.default_rng(5)
    for q in (np.exp(-rng.random(20_000) * 700), 1 - np.exp(-rng.random(20_000) * 36),
              (np.arange(1, 4581) - 0.5) / 4580, np.array([np.nan, 0.5, np.nextafter(0.5, 1)])):
        assert _small.normal_quantiles(q).tobytes() == ndtri(q).tobytes()


def twins(call):
    """``call()`` with the twins, then with the compiled loop and scipy: both results."""
    with mock.patch.object(_small, "prefer_plain", lambda *_: True):
        plain = call()
    with mock.patch.object(_small, "prefer_plain", lambda *_: False):
        return plain, call()


def _frame(draw_cells, n, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": draw_cells, "b": rng.integers(0, 3, n).astype(float),
                         "g": rng.integers(0, 2, n), "s": rng.choice(["x", "y", "z"], n)})


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(3, 60), elements=_cells), st.integers(0, 1000), st.booleans())
def test_rank_swap_shuffle_and_microaggregation_steps_are_the_same_either_way(cells, seed, by_stratum):
    frame = _frame(cells, cells.size, seed)
    steps = [{"columns": ["a", "b"], "method": "rank_swap", "p": 20, "top_percent": 5},
             {"columns": ["a"], "method": "shuffle", "by": ["b", "s"]},
             {"columns": ["a", "b"], "method": "microaggregation", "k": 2 + seed % 3},
             {"columns": ["a", "b"], "method": "microaggregation", "k": 3, "jointly": False, "aggregate": "median"}]
    plain, compiled = twins(lambda: perturb(frame, steps, strata="g" if by_stratum else None, random_state=seed))
    for column in ("a", "b"):
        assert plain.table[column].to_numpy().tobytes() == compiled.table[column].to_numpy().tobytes()
    assert [s.details for s in plain.steps] == [s.details for s in compiled.steps]


@needs_data
def test_rank_swap_shuffle_and_microaggregation_of_testdata_are_the_same_either_way():
    testdata = pd.read_csv(TESTDATA)
    steps = [{"columns": ["income", "expend", "savings"], "method": "rank_swap", "p": 5},
             {"columns": ["income", "expend"], "method": "shuffle", "by": ["age", "sex"]},
             {"columns": ["income", "expend", "savings"], "method": "microaggregation", "k": 3}]
    for strata in ("urbrur", None):
        plain, compiled = twins(lambda strata=strata: perturb(testdata, steps, strata=strata, random_state=3))
        pd.testing.assert_frame_equal(plain.table, compiled.table, check_exact=True)
        assert [s.details for s in plain.steps] == [s.details for s in compiled.steps]
        assert plain.steps[0].details["swaps"] > 0


def test_twins_stop_once_they_have_cost_numbas_start_up(monkeypatch):
    monkeypatch.setattr(_small, "_plain_seconds", [0.0])
    assert _small.prefer_plain(100) or _small.jit_runtime_loaded()
    assert not _small.prefer_plain(_small.SMALL_CELLS + 1)
    assert not _small.prefer_plain(_small.mdav_work(5_000, 3, 3), _small.PLAIN_MDAV_WORK)
    monkeypatch.setattr(_small, "_plain_seconds", [_small.START_UP])
    assert not _small.prefer_plain(100)


FRESH = """
import json, sys
import pandas as pd
from incrowd.perturbation import perturb
d = pd.read_csv(sys.argv[1])
out = perturb(d, [json.loads(sys.argv[2])])
print(json.dumps([m for m in ("numba", "scipy", "scipy.stats", "scipy.special") if m in sys.modules]))
"""


@needs_data
@pytest.mark.parametrize("step", [
    {"columns": ["income", "expend", "savings"], "method": "rank_swap", "p": 5},
    {"columns": ["income", "expend"], "method": "shuffle", "by": ["age", "sex"]},
    {"columns": ["income", "expend", "savings"], "method": "microaggregation", "k": 3},
])
def test_a_small_rank_swap_shuffle_or_microaggregation_in_a_fresh_process_loads_neither_numba_nor_scipy(step):
    done = subprocess.run([sys.executable, "-c", FRESH, str(TESTDATA), json.dumps(step)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert rank_swap_module._TRIES == 8  # the kernel's draws per value: one shape both paths read
