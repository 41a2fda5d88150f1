"""Population uniqueness from a sample (ARX's Pitman, Zayatz, SNB and Dankar's rule) against
the published formulas, computed here independently of the module."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.exceptions import ParameterError
from incrowd.privacy._uniqueness import population_uniqueness

# classes of the sample: size -> number of classes
HIST = {1: 30, 2: 12, 3: 6, 4: 3, 6: 2, 10: 1}


def _expand(hist):
    return [k for k, c in hist.items() for _ in range(c)]


def test_zayatz_by_hand():
    """Zayatz (1991): share of sample uniques that are population uniques
    c1 P_1(1) / sum_k c_k P_k(1), P_k(1) = k C(N-k, n-1) / C(N, n); uniques c1 * share / f."""
    sizes = [1, 1, 1, 2, 3]
    n, f = 8, 0.5
    big_n = 16

    def p(k):
        return k * math.comb(big_n - k, n - 1) / math.comb(big_n, n)

    share = 3 * p(1) / (3 * p(1) + p(2) + p(3))
    r = population_uniqueness(sizes, f)
    assert r["zayatz_uniques"] == pytest.approx(3 * share / f, rel=1e-12)
    assert r["zayatz"] == pytest.approx(3 * share / f / big_n, rel=1e-12)
    assert r["sample_uniques"] == 3 and r["sample_size"] == 8 and r["population_size"] == 16


def test_pitman_parameters_solve_the_likelihood_equations():
    """Hoshino (2001): at the ML fit, sum_{i<u} 1/(t + i a) = sum_{i<n} 1/(t + i) and
    sum_{i<u} i/(t + i a) = sum_k c_k sum_{j<k} 1/(j - a); uniques Gamma(t+1)/Gamma(t+a) N^a."""
    f = 0.05
    r = population_uniqueness(HIST, f)
    t, a = r["pitman_theta"], r["pitman_alpha"]
    u = sum(HIST.values())
    # ARX keeps theta >= 0 and lets alpha be negative (a finite number of classes)
    assert t is not None and t >= 0 and a < 1 and t + (u - 1) * a > 0
    n = sum(k * c for k, c in HIST.items())
    eq1 = sum(1 / (t + i * a) for i in range(1, u)) - sum(1 / (t + i) for i in range(1, n))
    eq2 = sum(i / (t + i * a) for i in range(1, u)) - sum(
        c * sum(1 / (j - a) for j in range(1, k)) for k, c in HIST.items())
    assert abs(eq1) < 1e-6 and abs(eq2) < 1e-6
    big_n = n / f
    expected = math.exp(math.lgamma(t + 1) - math.lgamma(t + a)) * big_n**a
    assert r["pitman_uniques"] == pytest.approx(expected, rel=1e-12)
    assert r["dankar_model"] == "pitman" and r["dankar"] == r["pitman"]  # f <= 0.1


def _shlosser_sh3(hist, q):
    """Haas et al. (1995), D_Sh3."""
    d = sum(hist.values())
    f1 = hist.get(1, 0)
    s = lambda g: sum(g(i) * fi for i, fi in hist.items())  # noqa: E731
    num1 = s(lambda i: i * q * q * (1 - q * q) ** (i - 1))
    den1 = s(lambda i: (1 - q) ** i * ((1 + q) ** i - 1))
    num2 = s(lambda i: (1 - q) ** i)
    den2 = s(lambda i: i * q * (1 - q) ** (i - 1))
    return d + f1 * num1 / den1 * (num2 / den2) ** 2


def test_snb_parameters_match_expected_uniques_and_pairs():
    """Chen & Keller-McNulty (1998): K classes of population size 1 + NegBin(alpha, beta),
    sampled by f: the fit makes the expected sample uniques and pairs the observed ones
    (expectations summed here over the class-size distribution); uniques K beta^alpha."""
    f = 0.3
    r = population_uniqueness(_expand(HIST), f)
    alpha, beta, k = r["snb_alpha"], r["snb_beta"], r["snb_classes"]
    assert alpha is not None and alpha > 0 and 0 < beta < 1
    assert k == pytest.approx(_shlosser_sh3(HIST, f), rel=1e-12)
    j = np.arange(1, 20000)
    log_pf = (math.lgamma(alpha) * -1 + np.array([math.lgamma(x - 1 + alpha) - math.lgamma(x) for x in j])
              + alpha * math.log(beta) + (j - 1) * math.log(1 - beta))
    pf = np.exp(log_pf)
    e1 = k * np.sum(pf * j * f * (1 - f) ** (j - 1))
    e2 = k * np.sum(pf * j * (j - 1) / 2 * f * f * (1 - f) ** (j - 2))
    assert e1 == pytest.approx(HIST[1], rel=1e-6)
    assert e2 == pytest.approx(HIST[2], rel=1e-6)
    assert r["snb_uniques"] == pytest.approx(k * beta**alpha, rel=1e-12)


def test_dankar_rule_above_a_tenth_takes_the_smaller_of_zayatz_and_snb():
    r = population_uniqueness(HIST, 0.3)
    assert r["zayatz"] is not None and r["snb"] is not None
    assert r["dankar"] == min(r["zayatz"], r["snb"])
    assert r["dankar_model"] == ("zayatz" if r["zayatz"] < r["snb"] else "snb")


def test_no_sample_uniques_means_no_population_uniques():
    r = population_uniqueness({2: 5, 3: 1}, 0.01)
    for name in ("pitman", "zayatz", "snb", "dankar"):
        assert r[name] == 0.0 and r[f"{name}_uniques"] == 0.0
    assert r["dankar_model"] is None


def test_all_sample_uniques():
    r = population_uniqueness([1] * 10, 0.2)
    assert r["pitman"] is None  # the likelihood has no maximum
    assert r["zayatz_uniques"] == pytest.approx(50.0) and r["zayatz"] == pytest.approx(1.0)
    assert r["snb"] is None  # no pairs to fit
    assert r["dankar_model"] == "zayatz" and r["dankar"] == pytest.approx(1.0)


def test_whole_population_sampled_gives_the_sample_uniques():
    r = population_uniqueness(HIST, 1.0)
    assert r["zayatz_uniques"] == pytest.approx(HIST[1], rel=1e-12)
    assert r["snb_uniques"] == pytest.approx(HIST[1], rel=1e-9)
    assert r["dankar_uniques"] == pytest.approx(HIST[1], rel=1e-9)
    assert r["population_size"] == sum(k * c for k, c in HIST.items())


def test_class_sizes_mapping_and_pairs_agree():
    a = population_uniqueness(_expand(HIST), 0.05)
    b = population_uniqueness(HIST, 0.05)
    c = population_uniqueness(np.array([[k, v] for k, v in HIST.items()]), 0.05)
    assert a == b == c


@pytest.mark.parametrize("sizes, fraction, word", [
    ([1, 2], 0, "sampling_fraction"), ([1, 2], 1.5, "sampling_fraction"), ([1, 2], "x", "sampling_fraction"),
    ([], 0.1, "sample_class_sizes"), ([0, 1], 0.1, "sample_class_sizes"), ([1.5], 0.1, "sample_class_sizes"),
    (np.ones((2, 3)), 0.1, "sample_class_sizes"), (["a", "b"], 0.1, "sample_class_sizes"),
])
def test_bad_input_names_the_parameter(sizes, fraction, word):
    with pytest.raises(ParameterError, match=word):
        population_uniqueness(sizes, fraction)


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.integers(1, 15), st.integers(1, 25), min_size=1, max_size=6),
       st.floats(0.001, 1.0))
def test_estimates_lie_between_zero_and_the_population(hist, fraction):
    r = population_uniqueness(hist, fraction)
    big_n = r["population_size"]
    for name in ("pitman", "zayatz", "snb", "dankar"):
        count, share = r[f"{name}_uniques"], r[name]
        if count is not None:
            assert -1e-9 <= count <= big_n * (1 + 1e-12)
            assert share == pytest.approx(count / big_n)
    if r["dankar_model"] is not None:
        assert r["dankar"] == r[r["dankar_model"]]
    if hist.get(1, 0) == 0:
        assert r["dankar"] == 0.0


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(st.integers(1, 15), st.integers(1, 25), min_size=1, max_size=6),
       st.floats(5e-324, 1e-3))
def test_a_vanishing_sampling_fraction_gives_estimates_or_withholds_them(hist, fraction):
    # weights near 1e16 or a population of 1e17: 1 + f rounds to 1 and (1 + f)^k - 1 to 0
    r = population_uniqueness(hist, fraction)
    big_n = r["population_size"]
    for name in ("pitman", "zayatz", "snb", "dankar"):
        count = r[f"{name}_uniques"]
        assert count is None or (math.isfinite(count) and -1e-9 <= count <= big_n * (1 + 1e-12)), (name, count)


@pytest.mark.parametrize("fraction", [1e-10, 1e-17, 1e-200])
def test_shlosser_at_a_tiny_fraction_equals_its_exact_sum(fraction):
    from fractions import Fraction

    from incrowd.privacy._uniqueness import shlosser_classes

    # D_Sh3 summed in exact rational arithmetic: the float formula lost it to rounding
    q = Fraction(fraction)
    d, f1 = sum(HIST.values()), HIST[1]
    s = lambda g: sum(g(i) * c for i, c in HIST.items())  # noqa: E731
    exact = d + f1 * (s(lambda i: i * q * q * (1 - q * q) ** (i - 1)) / s(lambda i: (1 - q) ** i * ((1 + q) ** i - 1))
                      * (s(lambda i: (1 - q) ** i) / s(lambda i: i * q * (1 - q) ** (i - 1))) ** 2)
    sizes = np.array(sorted(HIST), dtype=float)
    counts = np.array([HIST[k] for k in sorted(HIST)], dtype=float)
    assert shlosser_classes(sizes, counts, fraction) == pytest.approx(float(exact), rel=1e-9)


def _with_scipy_root(monkeypatch, hist, fraction):
    """The estimates with MINPACK reached through ``scipy.optimize.root`` itself."""
    from incrowd.privacy import _uniqueness as _hybr

    with monkeypatch.context() as patch:
        patch.setattr(_hybr, "_loaded", [None])
        return population_uniqueness(hist, fraction)


@pytest.mark.parametrize("hist, fraction", [
    (HIST, 0.05), (HIST, 0.3), (HIST, 0.01), ({1: 157, 2: 62, 3: 41, 4: 30, 5: 22, 8: 15, 20: 9, 60: 3}, 0.0016),
    ({1: 5, 2: 1}, 0.5), ({1: 400, 2: 3}, 0.02), ({1: 1, 3: 4, 9: 7}, 0.2)])
def test_minpack_without_scipy_optimize_answers_exactly_as_root(monkeypatch, hist, fraction):
    """Pitman's and SNB's fits load MINPACK by itself (not scipy.optimize's toolbox) and call it
    as ``scipy.optimize.root(method="hybr")`` does: every figure is root's, to the last bit."""
    from incrowd.privacy import _uniqueness as _hybr

    assert _hybr._minpack() is not None  # the direct route is the one under test
    assert population_uniqueness(hist, fraction) == _with_scipy_root(monkeypatch, hist, fraction)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.integers(1, 30), st.integers(1, 60), min_size=2, max_size=8),
       st.floats(1e-4, 0.9))
def test_minpack_direct_equals_root_on_any_histogram(hist, fraction):
    from incrowd.privacy import _uniqueness as _hybr

    direct = population_uniqueness(hist, fraction)
    saved = _hybr._loaded[:]
    _hybr._loaded[:] = [None]
    try:
        through_root = population_uniqueness(hist, fraction)
    finally:
        _hybr._loaded[:] = saved
    assert direct == through_root


def test_the_special_functions_without_scipy_special_are_the_package_s_to_the_last_bit():
    """Pitman's digamma, trigamma and log-gamma come from scipy.special's compiled ufuncs loaded
    alone: on fixed and random arguments (negative, poles, huge) every value is the package's."""
    import scipy.special

    from incrowd.privacy import _uniqueness as fits

    assert fits._special() is not None  # the direct route is the one under test
    rng = np.random.default_rng(62)
    x = np.concatenate([[0.5, 1.0, 2.0, 25.5, 1e-300, 1e300, -1.0, -2.5, 0.0, np.inf, -np.inf, np.nan],
                        rng.uniform(-50, 50, 2000), rng.uniform(0, 1e7, 2000), 10.0 ** rng.uniform(-12, 12, 500)])
    for ours, theirs in ((fits._digamma, scipy.special.digamma), (fits._gammaln, scipy.special.gammaln),
                         (fits._trigamma, lambda v: scipy.special.polygamma(1, v))):
        np.testing.assert_array_equal(ours(x), theirs(x))
        assert all(float(ours(v)) == float(theirs(v)) or (np.isnan(ours(v)) and np.isnan(theirs(v)))
                   for v in x[:40])


@pytest.mark.parametrize("hist, fraction", [
    (HIST, 0.05), (HIST, 0.01), ({1: 157, 2: 62, 3: 41, 4: 30, 5: 22, 8: 15, 20: 9, 60: 3}, 0.0016),
    ({1: 400, 2: 3}, 0.02), ({1: 1, 3: 4, 9: 7}, 0.2), ({1: 1000, 2: 300, 500: 400}, 0.01)])
def test_the_estimates_are_the_same_with_scipy_special_itself(monkeypatch, hist, fraction):
    from incrowd.privacy import _uniqueness as fits

    direct = population_uniqueness(hist, fraction)
    with monkeypatch.context() as patch:
        patch.setattr(fits, "_special_loaded", [None])
        assert population_uniqueness(hist, fraction) == direct


def test_the_estimates_load_neither_scipy_special_nor_scipy_optimize():
    import json
    import subprocess
    import sys

    code = ("import json, sys\nfrom incrowd.privacy._uniqueness import population_uniqueness\n"
            "out = population_uniqueness({1: 157, 2: 62, 3: 41, 4: 30, 5: 22, 8: 15, 20: 9, 60: 3}, 0.0016)\n"
            "print(json.dumps([out['pitman'] is not None, sorted(m for m in sys.modules if m in "
            "('scipy.special', 'scipy.optimize', 'scipy._lib._array_api'))]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [True, []]
