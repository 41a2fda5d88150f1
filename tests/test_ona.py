"""ONA and ONA* (paper 000 Algorithms 2 and 3): the kernels equal the plain references in
tests/reference.py, the invariants hold on invented data, bad parameters are refused, and the
published information losses (paper 000 Table 1 and the Adult row of Table 6) are reproduced."""

from __future__ import annotations

import numpy as np
import pytest
import reference as ref
from conftest import benchmark_matrix
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from incrowd import MDAVStar, ParameterError, verify_k_anonymity
from incrowd.microaggregation.ona._ona_kernel import ona_best_labels, ona_star_labels
from incrowd.microaggregation.ona._ona_star_fast import ona_star_fast_labels
from incrowd.microaggregation.ona.ona import ONA, ONAStar

KS = (2, 3, 4, 5, 7, 10)

# Paper 000 Table 1, IL in %: ONA* (run once, deterministic) and ONA (best of 100 runs).
PAPER_ONA_STAR = {
    "census": (3.06, 5.26, 6.81, 7.99, 10.07, 12.46),
    "tarragona": (9.06, 15.11, 17.79, 20.69, 26.34, 31.15),
    "eia": (0.20, 0.37, 0.52, 0.79, 1.63, 1.99),
    "cloud1": (1.15, 2.02, 3.25, 3.92, 5.07, 6.28),
    "cloud2": (0.60, 1.04, 1.40, 1.70, 2.22, 2.92),
}
PAPER_ONA = {
    "census": (3.44, 5.47, 6.92, 8.16, 10.08, 12.45),
    "cloud2": (0.67, 1.08, 1.46, 1.73, 2.28, 2.96),
}
# Paper 000 Table 6, Adult (age, education-num, hours-per-week), ONA*.
PAPER_ADULT_ONA_STAR = dict(zip(KS, (0.04, 0.08, 0.12, 0.16, 0.24, 0.36)))

pytestmark = pytest.mark.filterwarnings("ignore::incrowd.DataWarning")


# ---------------------------------------------------------------------------------------------
# Kernel == reference


@st.composite
def tie_heavy_data(draw):
    """Small integer grids: duplicate rows, equidistant centroids and exactly tied costs."""
    n = draw(st.integers(2, 60))
    m = draw(st.integers(1, 3))
    k = draw(st.integers(2, max(2, min(n, 8))))
    levels = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    X = np.random.default_rng(seed).integers(0, levels, (n, m)).astype(np.float64)
    std = X.std(axis=0)
    Z = np.ascontiguousarray((X - X.mean(axis=0)) / np.where(std > 0, std, 1.0))
    return Z, k


def assert_ona_star_equals_reference(Z, k, max_rounds=100):
    expected, rounds, converged = ref.ona_star(Z, k, max_rounds)
    for spare in (-1, 0):  # spare=0 makes every split grow the cluster arrays
        got, got_rounds, got_converged = ona_star_labels(Z, k, max_rounds, spare)
        np.testing.assert_array_equal(got, expected)
        assert (got_rounds, got_converged) == (rounds, converged)


def assert_ona_equals_reference(Z, k, seeds, max_rounds=30):
    expected, costs, best = ref.ona(Z, k, seeds, max_rounds)
    for use_tree in (False, True):
        got, got_costs, _, _, got_best = ona_best_labels(Z, k, max_rounds, seeds, use_tree)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(got_costs, costs)
        assert got_best == best


@settings(max_examples=150, deadline=None)
@given(tie_heavy_data())
def test_ona_star_kernel_equals_reference_on_tie_heavy_data(data):
    Z, k = data
    assert_ona_star_equals_reference(Z, k)


@settings(max_examples=60, deadline=None)
@given(tie_heavy_data(), st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=3))
def test_ona_kernel_equals_reference_on_tie_heavy_data(data, seeds):
    Z, k = data
    assert_ona_equals_reference(Z, k, np.array(seeds, dtype=np.uint64))


@pytest.mark.parametrize("n,m,k", [(300, 3, 2), (200, 5, 3), (120, 1, 4), (400, 2, 7)])
def test_kernels_equal_reference_on_gaussian_data(n, m, k):
    Z = np.random.default_rng(n + m).standard_normal((n, m))
    assert_ona_star_equals_reference(Z, k)
    assert_ona_equals_reference(Z, k, np.array([11, 2**63 + 1], dtype=np.uint64))


@pytest.mark.parametrize("name,k", [("tarragona", 5), ("census", 10)])
def test_ona_star_kernel_equals_reference_on_benchmark_files(name, k):
    assert_ona_star_equals_reference(benchmark_matrix(name), k)


@pytest.mark.slow
def test_ona_kernel_equals_reference_on_a_benchmark_file():
    assert_ona_equals_reference(benchmark_matrix("census"), 10, np.array([7], dtype=np.uint64))


@pytest.mark.parametrize("k", [2, 5])
def test_tree_and_brute_force_search_agree_on_skewed_data(k):
    Z = benchmark_matrix("eia")  # heavy-tailed: many clusters piled near one corner
    a = ona_star_labels(Z, k, 100)  # every question a scan of all centroids
    b = ona_star_fast_labels(Z, k, 100, True)  # through the k-d tree
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1:] == b[1:]


# ---------------------------------------------------------------------------------------------
# Invariants


@st.composite
def datasets(draw):
    n = draw(st.integers(2, 60))
    m = draw(st.integers(1, 4))
    elements = st.one_of(
        st.integers(-3, 3).map(float),  # duplicates and ties
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=64),
    )
    X = draw(arrays(np.float64, (n, m), elements=elements))
    k = draw(st.integers(2, n))
    return X, k


def check_partition(model, X, k):
    n = X.shape[0]
    labels = model.labels_
    assert labels.shape == (n,)
    sizes = np.bincount(labels)
    assert labels.min() == 0 and sizes.sum() == n and np.all(sizes > 0)  # one group per row
    assert sizes.min() >= k
    assert sizes.max() <= (2 * k - 1 if n >= 2 * k else n)
    assert 0.0 <= model.information_loss_ <= 1.0 + 1e-12
    assert verify_k_anonymity(model.centroids_[labels], None, k).ok


@settings(max_examples=60, deadline=None)
@given(data=datasets())
def test_ona_star_invariants(data):
    X, k = data
    model = ONAStar(k=k).fit(X)
    check_partition(model, X, k)
    assert model.converged_ and 0 <= model.n_rounds_ <= 100
    # every change lowers the SSE: never worse than the MDAV* start
    assert model.information_loss_ <= MDAVStar(k=k).fit(X).information_loss_ + 1e-12
    np.testing.assert_array_equal(ONAStar(k=k, random_state=3).fit(X).labels_, model.labels_)


@settings(max_examples=40, deadline=None)
@given(data=datasets(), seed=st.integers(0, 2**32 - 1))
def test_ona_invariants_and_reproducibility(data, seed):
    X, k = data
    model = ONA(k=k, runs=4, random_state=seed).fit(X)
    check_partition(model, X, k)
    assert model.run_information_losses_.shape == (4,)
    assert model.information_loss_ == pytest.approx(model.run_information_losses_.min(), abs=1e-12)
    # the kept run is the one of least SSE; two SSEs an ulp apart may divide by SST to one
    # loss, so the kept run's loss is the least, not necessarily argmin's first index
    assert model.run_information_losses_[model.best_run_] == model.run_information_losses_.min()
    again = ONA(k=k, runs=4, random_state=seed).fit(X)
    np.testing.assert_array_equal(again.labels_, model.labels_)


def test_ona_seeds_come_from_one_generator():
    X = benchmark_matrix("cloud2")
    many = ONA(k=3, runs=6, random_state=5).fit(X)
    one = ONA(k=3, runs=1, random_state=5).fit(X)
    # run r uses the r-th seed the generator draws, so the first run is the same in both
    assert one.run_information_losses_[0] == many.run_information_losses_[0]
    assert many.information_loss_ <= one.information_loss_
    other = ONA(k=3, runs=6, random_state=6).fit(X)
    assert not np.array_equal(other.run_information_losses_, many.run_information_losses_)


def test_small_inputs_form_one_group():
    X = np.arange(5.0)
    for model in (ONAStar(k=3), ONA(k=3, runs=2, random_state=0)):
        model.fit(X)
        np.testing.assert_array_equal(model.labels_, np.zeros(5, dtype=int))
        assert model.n_rounds_ == 0 and model.converged_


def test_max_rounds_caps_the_rounds():
    X = benchmark_matrix("census")
    capped = ONAStar(k=5, max_rounds=1).fit(X)
    assert capped.n_rounds_ == 1 and not capped.converged_
    full = ONAStar(k=5).fit(X)
    assert full.converged_ and full.n_rounds_ > 1
    assert full.information_loss_ <= capped.information_loss_
    model = ONA(k=5, runs=3, max_rounds=1, random_state=0).fit(X)
    assert np.all(model.run_n_rounds_ == 1)


# ---------------------------------------------------------------------------------------------
# Parameters


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: ONA(k=3, runs=0), "runs must be an integer >= 1; got 0"),
        (lambda: ONA(k=3, runs=2.5), "runs must be an integer >= 1; got 2.5"),
        (lambda: ONA(k=3, runs=True), "runs must be an integer >= 1; got True"),
        (lambda: ONA(k=3, max_rounds=0), "max_rounds must be an integer >= 1; got 0"),
        (lambda: ONAStar(k=3, max_rounds=-2), "max_rounds must be an integer >= 1; got -2"),
        (lambda: ONAStar(k=3, max_rounds="9"), "max_rounds must be an integer >= 1; got '9'"),
        (lambda: ONAStar(k=1), "k must be an integer in [2, n_rows=20]; got 1"),
    ],
)
def test_bad_parameters_are_refused_clearly(make, message):
    with pytest.raises(ParameterError) as info:
        make().fit(np.arange(20.0))
    assert str(info.value) == message


def test_parameters_are_only_stored_by_init():
    model = ONA(k=4, runs=0, max_rounds=-1)  # validated by fit, not here (scikit-learn style)
    assert model.get_params() == {"k": 4, "runs": 0, "max_rounds": -1, "random_state": None}
    assert ONAStar().get_params() == {"k": 5, "max_rounds": 100, "random_state": None}


# ---------------------------------------------------------------------------------------------
# Published values


@pytest.mark.parametrize("name", sorted(PAPER_ONA_STAR))
def test_paper_000_table_1_ona_star(name):
    Z = benchmark_matrix(name)
    published = np.array(PAPER_ONA_STAR[name])
    got = np.array([100 * ONAStar(k=k).fit(Z).information_loss_ for k in KS])
    assert np.all(np.abs(got / published - 1) <= 0.03)  # the acceptance rule
    # In fact every cell is within one unit of the last published digit (29 of 30 round to it).
    assert np.all(np.abs(got - published) < 0.01)


@pytest.mark.parametrize("name,k", [("census", 10), ("cloud2", 5)])
def test_paper_000_table_1_ona_best_of_100(name, k):
    Z = benchmark_matrix(name)
    got = 100 * ONA(k=k, runs=100, random_state=0).fit(Z).information_loss_
    published = PAPER_ONA[name][KS.index(k)]
    assert abs(got / published - 1) <= 0.05


@pytest.mark.parametrize("k", [5, 10])
def test_paper_000_table_6_adult_ona_star(k):
    # Two published decimals on values of 0.04..0.36 % are coarser than 3 %: the check is that
    # ours rounds to the published value.
    Z = benchmark_matrix("adult")
    got = 100 * ONAStar(k=k).fit(Z).information_loss_
    assert round(got, 2) == PAPER_ADULT_ONA_STAR[k]


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 3, 4, 7])
def test_paper_000_table_6_adult_ona_star_slow(k):
    Z = benchmark_matrix("adult")
    got = 100 * ONAStar(k=k).fit(Z).information_loss_
    assert round(got, 2) == PAPER_ADULT_ONA_STAR[k]


@settings(max_examples=20, deadline=None)
@given(tie_heavy_data(), st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_runs_on_python_threads_equal_the_parallel_kernel(data, runs, seed):
    import numba

    from incrowd.microaggregation.ona.ona import _best_of_runs

    Z, k = data
    seeds = np.random.default_rng(seed).integers(0, 2**63, size=runs, dtype=np.uint64)
    expected = ona_best_labels(Z, k, 30, seeds, False)
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, before}):
            numba.set_num_threads(threads)
            got = _best_of_runs(Z, k, 30, seeds, False)
            np.testing.assert_array_equal(got[0], expected[0])
            for a, b in zip(got[1:4], expected[1:4]):
                np.testing.assert_array_equal(a, b)
            assert got[4] == expected[4]
    finally:
        numba.set_num_threads(before)

# seconds in all: the full suite (make test) runs them, the quick tier leaves them out
pytestmark = [pytestmark, pytest.mark.slow]
