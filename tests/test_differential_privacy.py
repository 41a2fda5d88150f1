"""(epsilon, delta)-differential privacy by SafePub: the model's parameters (beta and the derived
k) against the published formulas evaluated by brute force, the exponential mechanism's draws
against its distribution, the search's release against its definition, and reproducibility.

The formulas (Li, Qardaji and Su 2012; Bild, Kuhn and Prasser 2018, as ARX's
``ParameterCalculation``): beta = 1 - e^(-eps), gamma = (e^eps - 1 + beta) / e^eps,
a_n = sum over j > floor(n gamma) of Binomial(n, beta)(j), delta(k) = max over
n >= ceil(k / gamma - 1) of a_n; ARX's k is one more than the smallest k with delta(k) < delta.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_hierarchies import random_hierarchy_rows
from scipy import stats

from incrowd.exceptions import ParameterError
from incrowd.generalization import exponential_mechanism, load_hierarchies, node_score, safepub
from incrowd.generalization._hierarchy import hierarchy_from_rows
from incrowd.privacy import MODELS, DifferentialPrivacy, check_table, models_from_spec
from incrowd.privacy.differential_privacy import delta_of_k, derived_k

sys.path.insert(0, str(Path(__file__).parent))
import _household as household  # noqa: E402
from benchdata import data_dir  # noqa: E402

# -- beta and k against the published formulas ------------------------------------------------


def _brute_tails(epsilon: float, n_max: int) -> tuple[np.ndarray, float, float]:
    """a_n for n = 0..n_max, each the binomial tail summed term by term."""
    beta = 1.0 - math.exp(-epsilon)
    gamma = (math.exp(epsilon) - 1.0 + beta) / math.exp(epsilon)
    a = np.zeros(n_max + 1)
    for n in range(1, n_max + 1):
        j = np.arange(math.floor(n * gamma) + 1, n + 1)
        a[n] = stats.binom.pmf(j, n, beta).sum()
    return a, beta, gamma


def _brute_k(epsilon: float, delta: float, n_max: int = 3000) -> int:
    a, _, gamma = _brute_tails(epsilon, n_max)
    # past n_max the tail is far below any delta asked here: the cut-off cannot hide a maximum
    assert a[-50:].max() < delta * 1e-6
    k = 1
    while a[max(math.ceil(k / gamma - 1.0), 0):].max() >= delta:
        k += 1
    return k + 1  # ARX's loop answers one past the smallest k that reaches delta


@pytest.mark.parametrize(("epsilon", "delta"), [(0.9, 1e-6), (1.0, 1e-5), (0.1, 1e-5), (2.0, 1e-9), (1.5, 1e-3)])
def test_derived_k_is_the_brute_force_of_the_delta_sum(epsilon, delta):
    assert derived_k(epsilon, delta) == _brute_k(epsilon, delta)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.9, 1e-6), (0.5, 1e-4)])
def test_derived_k_is_arx_walk_over_k(epsilon, delta):
    # ARX's calculateK: k = 1; for (delta_k = MAX; !(delta_k < delta); ++k) delta_k = calculateDelta(k)
    k, delta_k = 1, math.inf
    while not delta_k < delta:
        delta_k = delta_of_k(k, epsilon)
        k += 1
    assert derived_k(epsilon, delta) == k


def test_delta_of_k_is_the_brute_force_maximum():
    epsilon = 1.0
    a, _, gamma = _brute_tails(epsilon, 2000)
    for k in (2, 10, 40, 75):
        assert delta_of_k(k, epsilon) == pytest.approx(a[max(math.ceil(k / gamma - 1.0), 0):].max(), rel=1e-9)


def test_beta_and_the_budget_split():
    model = DifferentialPrivacy(epsilon=1.0, delta=1e-6)
    assert model.epsilon_search == pytest.approx(0.1)  # ARX's default share of the search
    assert model.epsilon_anonymization == pytest.approx(0.9)
    assert model.beta == pytest.approx(1.0 - math.exp(-0.9), rel=1e-15)
    assert model.k == _brute_k(0.9, 1e-6)
    other = DifferentialPrivacy(epsilon=2.0, delta=1e-6, search_budget=0.25)
    assert other.beta == pytest.approx(1.0 - math.exp(-1.5), rel=1e-15)
    assert other.k == _brute_k(1.5, 1e-6)


# -- the model ---------------------------------------------------------------------------------


def test_model_reads_the_spec_and_states_its_budget():
    (model,) = models_from_spec({"differential_privacy": {"epsilon": 1.0, "delta": 1e-6}})
    assert isinstance(model, DifferentialPrivacy) and MODELS["differential_privacy"] is DifferentialPrivacy
    assert not model.monotone_generalization and not model.monotone_suppression and not model.needs_sensitive
    assert model.describe() == (f"(1, 1e-06)-differentially private: sampling {100 * (1 - math.exp(-0.9)):.1f} % of "
                                f"rows, k = {model.k}, search budget 0.1 of epsilon")
    assert model.search_steps(8) == 125 and model.search_steps(3) == 333  # ARX: 1000 checks / QIs
    (tuned,) = models_from_spec({"differential_privacy": {"epsilon": 2, "delta": 1e-5, "steps": 50,
                                                          "metric": "discernibility", "search_budget": 0.2}})
    assert (tuned.steps, tuned.metric, tuned.search_steps(8)) == (50, "discernibility", 50)


def test_classes_ok_is_class_size_at_least_k():
    model = DifferentialPrivacy(epsilon=1.0, delta=1e-6)
    frame = pd.DataFrame({"a": ["x"] * model.k + ["y"] * (model.k - 1)})
    failures = check_table(frame, ["a"], [model])
    assert len(failures) == 1 and "1 class(es)" in str(failures[0])
    assert check_table(frame.iloc[: model.k], ["a"], [model]) == []


@pytest.mark.parametrize(("value", "words"), [
    ({"epsilon": 0, "delta": 1e-6}, "differential_privacy's epsilon must be a number in (0, 5]"),
    ({"epsilon": 6, "delta": 1e-6}, "differential_privacy's epsilon must be a number in (0, 5]"),
    ({"epsilon": "1", "delta": 1e-6}, "differential_privacy's epsilon"),
    ({"epsilon": 1, "delta": 1}, "differential_privacy's delta must be a number in (0, 1)"),
    ({"epsilon": 1, "delta": float("nan")}, "differential_privacy's delta"),
    ({"epsilon": 1}, "differential_privacy needs delta"),
    ({"epsilon": 1, "delta": 1e-6, "steps": 0}, "differential_privacy's steps must be an integer >= 1"),
    ({"epsilon": 1, "delta": 1e-6, "steps": 2.5}, "differential_privacy's steps"),
    ({"epsilon": 1, "delta": 1e-6, "search_budget": 1}, "differential_privacy's search_budget"),
    ({"epsilon": 1, "delta": 1e-6, "metric": "height"}, "differential_privacy's metric must be one of loss"),
    ({"epsilon": 1, "delta": 1e-6, "sigma": 2}, "differential_privacy: unknown entry 'sigma'"),
    ({"epsilon": 1, "delta": 1e-6, "column": "income"}, "differential_privacy protects every row"),
    (1.0, "differential_privacy must be a table"),
])
def test_bad_parameters_are_one_line_naming_the_key(value, words):
    with pytest.raises(ParameterError) as error:
        models_from_spec({"differential_privacy": value})
    message = str(error.value)
    assert words in message and "\n" not in message and "np.float64" not in message


# -- the exponential mechanism -----------------------------------------------------------------


def test_exponential_mechanism_draws_exp_epsilon_score_over_two_sensitivity():
    rng = np.random.default_rng(20260107)
    raw = np.array([-3.0, 0.0, -10.0, 4.0, 1.5, -0.5])
    sensitivity, epsilon = 2.0, 1.2
    expected = np.exp(epsilon * raw / (2 * sensitivity))
    expected /= expected.sum()
    draws = 30_000
    counts = np.bincount([exponential_mechanism(raw / sensitivity, epsilon, rng) for _ in range(draws)],
                         minlength=raw.size)
    _, p_value = stats.chisquare(counts, expected * draws)
    assert p_value > 1e-3, (counts, expected * draws)


def test_exponential_mechanism_is_uniform_at_zero_budget_and_takes_huge_scores():
    rng = np.random.default_rng(7)
    counts = np.bincount([exponential_mechanism(np.array([1.0, 2.0, 3.0]), 0.0, rng) for _ in range(9000)],
                         minlength=3)
    assert stats.chisquare(counts).pvalue > 1e-3
    assert exponential_mechanism(np.array([-1e6, 1e6]), 1.0, rng) == 1  # no overflow: exp of shifted exponents


# -- ARX's own test cases ------------------------------------------------------------------------


class JavaRandom:
    """java.util.Random (a 48-bit linear congruential generator, its published constants): ARX
    draws the sample with ``new Random(0xDEADBEEF)`` in its deterministic test mode."""

    MASK = (1 << 48) - 1

    def __init__(self, seed: int):
        self.seed = (seed ^ 0x5DEECE66D) & self.MASK

    def next(self, bits: int) -> int:
        self.seed = (self.seed * 0x5DEECE66D + 0xB) & self.MASK
        return self.seed >> (48 - bits)

    def next_double(self) -> float:
        return ((self.next(26) << 27) + self.next(27)) * 2.0**-53


#: ARX's TestAnonymizationDifferentialPrivacy, data-dependent cases on adult.csv (epsilon 2,
#: search budget 1, delta 1e-5): the score function, the node it returned and that node's score
ARX_CASES = [
    ("loss", (1, 4, 0, 2, 2, 1, 1, 2, 0), -387.20969001288375),
    ("loss", (0, 3, 1, 0, 2, 1, 1, 2, 0), -364.91072721704967),
    ("precision", (0, 4, 0, 1, 1, 1, 2, 1, 0), -347.1666666666667),
    ("precision", (0, 4, 0, 0, 2, 2, 1, 2, 0), -349.6703096539162),
    ("discernibility", (1, 3, 1, 2, 3, 2, 2, 0, 1), -189.1673041207017),
    ("discernibility", (0, 4, 1, 1, 3, 2, 2, 0, 1), -184.58604046896227),
    ("aecs", (0, 4, 0, 0, 2, 2, 2, 1, 1), 46.0),
    ("aecs", (1, 3, 1, 1, 1, 2, 2, 0, 1), 88.0),
]


def test_sample_k_and_scores_equal_arx_on_its_own_test_cases():
    folder = data_dir() / "adult_arx"
    if not (folder / "adult.csv").is_file():
        pytest.skip("ARX's Adult not found")
    frame = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    attributes = list(frame.columns)  # ARX's test makes every attribute with a hierarchy file a QI
    found = load_hierarchies(folder, attributes)
    hierarchies = [found[a] for a in attributes]
    codes = [h.encode(frame[a]) for h, a in zip(hierarchies, attributes)]
    model = DifferentialPrivacy(epsilon=2.0, delta=1e-5, search_budget=0.5)  # ARX's absolute search budget 1
    assert model.k == derived_k(1.0, 1e-5) == 62
    # ARX draws row i when nextDouble() < beta, rows in file order; 0xDEADBEEF is a Java int, sign-extended
    java = JavaRandom((0xDEADBEEF - (1 << 32)) & ((1 << 64) - 1))
    sampled = np.array([java.next_double() < model.beta for _ in range(len(frame))])
    for metric, levels, expected in ARX_CASES:
        assert node_score(codes, hierarchies, sampled, levels, model.k, metric) == pytest.approx(expected, rel=1e-12)


# -- the search --------------------------------------------------------------------------------


def _hierarchies(seed: int, columns: int) -> list:
    rng = np.random.default_rng(seed)
    return [hierarchy_from_rows(f"q{j}", random_hierarchy_rows(rng, j), f"<q{j}>") for j in range(columns)]


def _table(seed: int, rows: int, hierarchies) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, h.labels[0].size, rows) for h in hierarchies])


def _classes(codes: np.ndarray, hierarchies, levels) -> np.ndarray:
    generalized = np.column_stack([h.code_map(level)[codes[:, j]] for j, (h, level) in
                                   enumerate(zip(hierarchies, levels))])
    _, inverse, sizes = np.unique(generalized, axis=0, return_inverse=True, return_counts=True)
    return sizes[inverse.reshape(-1)]


def _brute_score(metric, codes, sampled, hierarchies, levels, k):
    """The score of ``levels`` from its definition, row by row and cell by cell."""
    n, d = codes.shape
    sample = codes[sampled]
    size_of = _classes(sample, hierarchies, levels) if sample.size else np.zeros(0, int)
    suppressed = n - int((size_of >= k).sum())
    if metric == "aecs":
        kept = sample[size_of >= k]
        classes = len({tuple(h.code_map(lv)[row[j]] for j, (h, lv) in enumerate(zip(hierarchies, levels)))
                       for row in kept})
        return classes + (1 if suppressed else 0)
    if metric == "discernibility":
        squares = sum(int(s) for s in size_of[size_of >= k])  # each row adds its class's size: sum of squares
        return -(n * suppressed + squares) / (max(n, 1) * (k * k / (k - 1) + 1))  # an empty table: 0
    if metric == "precision":
        released = n - suppressed
        return -sum(released * (lv / h.max_level if h.max_level else 0) + suppressed
                    for h, lv in zip(hierarchies, levels)) / d / (k - 1)
    share = 0.0
    for row, size in zip(sample, size_of):
        if size < k:
            continue
        for j, (h, lv) in enumerate(zip(hierarchies, levels)):
            code = h.code_map(lv)[row[j]]
            share += int((h.code_map(lv) == code).sum()) / h.labels[0].size
    return -(suppressed + share / d) / (k - 1)


LOOSE = {"epsilon": 2.0, "delta": 0.05}  # a small k, so that small tables keep rows


@pytest.mark.parametrize("metric", ["loss", "precision", "discernibility", "aecs"])
def test_release_is_the_sample_at_the_chosen_node_with_small_classes_suppressed(metric):
    hierarchies = _hierarchies(3, 3)
    codes = _table(4, 600, hierarchies)
    model = DifferentialPrivacy(**LOOSE, steps=8, metric=metric)
    result = safepub(codes, hierarchies, model, seed=11)
    assert result.k == model.k and result.beta == model.beta and result.metric == metric
    size_of = np.zeros(codes.shape[0], dtype=np.int64)
    size_of[result.sampled] = _classes(codes[result.sampled], hierarchies, result.levels)
    np.testing.assert_array_equal(result.kept, result.sampled & (size_of >= model.k))
    assert result.kept.any() and not result.kept.all()
    assert result.score == pytest.approx(_brute_score(metric, codes, result.sampled, hierarchies, result.levels,
                                                      model.k), rel=1e-12)


def test_every_kept_class_has_at_least_k_rows_on_the_household_file_read_back(tmp_path):
    folder = data_dir()
    if not (folder / "testdata.csv").is_file():
        pytest.skip("benchmark data not found")
    import pyreadstat

    path = household.write_household(folder, tmp_path / "household.sav")
    frame, _ = pyreadstat.read_sav(str(path), apply_value_formats=True, user_missing=True)
    keys = ["age", "relat", "sex", "urbrur"]
    hierarchies = load_hierarchies(household.write_hierarchies(tmp_path / "hierarchies"), ["age", "relat"])
    frame["age"] = frame["age"].astype(int).astype(str)
    for key in ("sex", "urbrur"):
        hierarchies[key] = hierarchy_from_rows(key, [[v, "*"] for v in sorted(frame[key].unique())], f"<{key}>")
    hs = [hierarchies[key] for key in keys]
    model = DifferentialPrivacy(epsilon=2.0, delta=1e-6)
    result = safepub([h.encode(frame[key]) for h, key in zip(hs, keys)], hs, model, seed=5)
    assert 0 < result.kept.sum() < result.sampled.sum() < len(frame)
    released = frame.loc[result.kept, keys].copy()
    for h, key, level in zip(hs, keys, result.levels):
        released[key] = h.generalize(h.encode(released[key]), level)
    out = tmp_path / "release.sav"
    pyreadstat.write_sav(released.reset_index(drop=True), str(out))
    back, _ = pyreadstat.read_sav(str(out))
    assert len(back) == result.kept.sum()
    assert check_table(back, keys, [model]) == []
    assert back.groupby(keys).size().min() >= model.k


def test_the_same_seed_gives_the_same_release_another_seed_another():
    hierarchies = _hierarchies(8, 4)
    codes = _table(9, 800, hierarchies)
    model = DifferentialPrivacy(**LOOSE, steps=20)
    first, again = safepub(codes, hierarchies, model, seed=123), safepub(codes, hierarchies, model, seed=123)
    assert first.levels == again.levels and first.seed == 123
    np.testing.assert_array_equal(first.sampled, again.sampled)
    np.testing.assert_array_equal(first.kept, again.kept)
    others = [safepub(codes, hierarchies, model, seed=s) for s in (124, 125)]
    assert any(not np.array_equal(first.sampled, other.sampled) for other in others)
    # a generator continues its stream; a recorded fresh seed replays the release
    fresh = safepub(codes, hierarchies, model)
    replay = safepub(codes, hierarchies, model, seed=fresh.seed)
    assert fresh.levels == replay.levels and np.array_equal(fresh.kept, replay.kept)


def test_budget_spent_counts_the_steps_taken():
    hierarchies = [hierarchy_from_rows("a", [["x", "*"], ["y", "*"]], "<a>")]
    codes = np.array([[0], [1]] * 50)
    model = DifferentialPrivacy(epsilon=1.0, delta=0.05, steps=10)
    result = safepub(codes, hierarchies, model, seed=1)
    # the top's one predecessor is drawn at step 1; it has none: the lattice is spent
    assert result.budget.steps_taken == 1 and result.visited == 2
    assert result.budget.spent == pytest.approx(0.9 + 0.1 / 10)
    full = safepub(_table(2, 300, _hierarchies(1, 3)), _hierarchies(1, 3), DifferentialPrivacy(**LOOSE, steps=3),
                   seed=2)
    assert full.budget.steps_taken == 3 and full.budget.spent == pytest.approx(2.0)
    assert "of 2, delta 0.05" in full.budget.describe()


def test_bad_input_is_one_line():
    hierarchies = _hierarchies(1, 2)
    model = DifferentialPrivacy(**LOOSE)
    with pytest.raises(ParameterError, match="one code column per hierarchy"):
        safepub(_table(1, 10, hierarchies)[:, :1], hierarchies, model)
    with pytest.raises(ParameterError, match="level-0 codes must lie in"):
        safepub(_table(1, 10, hierarchies) + 100, hierarchies, model)
    for seed in (-1, np.int64(-1), "1"):
        with pytest.raises(ParameterError, match="seed must be an integer") as error:
            safepub(_table(1, 10, hierarchies), hierarchies, model, seed=seed)
        assert "np." not in str(error.value)
    with pytest.raises(ParameterError, match="metric must be one of"):
        safepub(_table(1, 10, hierarchies), hierarchies, model, metric="height")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), columns=st.integers(1, 3), rows=st.integers(0, 300),
       epsilon=st.floats(0.2, 3.0), steps=st.integers(1, 15), metric=st.sampled_from(["loss", "precision",
                                                                                        "discernibility", "aecs"]))
def test_release_properties_on_random_tables(seed, columns, rows, epsilon, steps, metric):
    hierarchies = _hierarchies(seed, columns)
    codes = _table(seed + 1, rows, hierarchies)
    model = DifferentialPrivacy(epsilon=epsilon, delta=0.05, steps=steps, metric=metric)
    result = safepub(codes, hierarchies, model, seed=seed)
    assert all(0 <= lv <= h.max_level for lv, h in zip(result.levels, hierarchies))
    assert not (result.kept & ~result.sampled).any()
    if result.kept.any():
        assert _classes(codes[result.kept], hierarchies, result.levels).min() >= model.k
    size_of = np.zeros(rows, dtype=np.int64)
    if result.sampled.any():
        size_of[result.sampled] = _classes(codes[result.sampled], hierarchies, result.levels)
    np.testing.assert_array_equal(result.kept, result.sampled & (size_of >= model.k))
    top = tuple(h.max_level for h in hierarchies)
    assert result.score >= _brute_score(metric, codes, result.sampled, hierarchies, top, model.k) - 1e-9
    assert result.budget.steps_taken <= steps and result.budget.spent <= epsilon * (1 + 1e-12)


@pytest.mark.parametrize("metric", ["loss", "precision", "discernibility", "aecs"])
def test_an_empty_table_releases_nothing(metric):
    hierarchies = _hierarchies(5, 2)
    result = safepub(np.zeros((0, 2), dtype=np.int64), hierarchies, DifferentialPrivacy(**LOOSE, metric=metric),
                     seed=3)
    assert result.kept.size == 0 and result.score == 0.0


@pytest.mark.parametrize("metric", ["loss", "discernibility"])
def test_the_path_walks_down_from_the_top_and_the_answer_is_its_best_node(metric):
    hierarchies = _hierarchies(12, 4)
    codes = _table(13, 900, hierarchies)
    model = DifferentialPrivacy(**LOOSE, steps=25, metric=metric)
    result = safepub(codes, hierarchies, model, seed=21)
    top = tuple(h.max_level for h in hierarchies)
    assert result.path[0] == top and len(result.path) == result.budget.steps_taken + 1
    for i, node in enumerate(result.path[1:], start=1):
        # a candidate is a predecessor (one attribute one level finer) of a node drawn before it
        assert any(sum(a - b for a, b in zip(earlier, node)) == 1 and all(a >= b for a, b in zip(earlier, node))
                   for earlier in result.path[:i]), (i, node)
        assert node != result.path[i - 1]
    scores = {node: _brute_score(metric, codes, result.sampled, hierarchies, node, model.k) for node in result.path}
    best = max(scores.values())
    assert result.score == pytest.approx(best, rel=1e-12) and result.levels in result.path
    # a tie goes to the lower node, the first drawn of the lowest
    tied = [node for node in result.path if scores[node] >= best - 1e-9 * abs(best)]
    assert sum(result.levels) == min(sum(node) for node in tied)
