"""The population models of ``incrowd.privacy`` (k-map, delta-presence, average re-identification
risk, population uniqueness): each against a brute force of its definition on random small
tables (plain loops over rows and population records, exact fractions), their spec keys and
refusals, the one-line errors of a population table or weight column that cannot serve, and the
curator's household survey read back from its .sav."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import poisson

from incrowd.exceptions import DataError, IncrowdError, ParameterError
from incrowd.io import read_table
from incrowd.privacy import (
    MODELS,
    AverageRisk,
    ClassStats,
    DeltaPresence,
    KAnonymity,
    KMap,
    PopulationUniqueness,
    check_table,
    class_stats,
    models_from_spec,
    uniqueness_estimates,
)

QIS = ["q1", "q2"]
TOL = 1e-12


def _key(row):
    return tuple(None if pd.isna(v) else v for v in row)


def _rows(frame):
    return [_key(r) for r in frame[QIS].itertuples(index=False)]


@st.composite
def samples(draw):
    """A small population (q1, q2 with missing values) and a research subset of its records."""
    size = draw(st.integers(1, 40))
    q1 = draw(st.lists(st.sampled_from(["x", "y", None]), min_size=size, max_size=size))
    q2 = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=size, max_size=size))
    population = pd.DataFrame({"q1": pd.Series(q1, dtype=object), "q2": q2})
    chosen = draw(st.lists(st.booleans(), min_size=size, max_size=size))
    if not any(chosen):
        chosen[0] = True
    data = population[np.array(chosen)].reset_index(drop=True)
    # quarters: their sum is exact in any order, so n / N is one number however it is summed
    weights = draw(st.lists(st.integers(4, 200).map(lambda q: q / 4), min_size=len(data), max_size=len(data)))
    data["w"] = weights
    return data, population.sample(frac=1, random_state=draw(st.integers(0, 99))).reset_index(drop=True)


def _verdict(model, data, qis=QIS, **given_):
    return not check_table(data, qis, [model], **given_)


# ---------------------------------------------------------------------------------------------
# k-map


@pytest.mark.parametrize("k", [2, 3, 5])
@settings(max_examples=60, deadline=None)
@given(drawn=samples())
def test_k_map_with_a_population_table_equals_counting_its_records(k, drawn):
    data, population = drawn
    records = Counter(_rows(population))
    expected_rows = [records[r] >= k for r in _rows(data)]
    stats = class_stats(data, QIS, population=population)
    ok = KMap(k=k, population="p.csv").classes_ok(stats)
    ids = [next(i for i, f in enumerate(stats.first_rows) if _rows(data)[f] == r) for r in _rows(data)]
    assert [bool(ok[i]) for i in ids] == expected_rows
    failures = check_table(data, QIS, [KMap(k=k, population="p.csv")], population=population)
    assert (not failures) == all(expected_rows)
    if failures:
        assert failures[0].n_rows == expected_rows.count(False)


def _arx_k(k, fraction, significance, estimator):
    """ARX's ``KMap.calculateKPoisson`` / ``calculateKZeroPoisson``, step by step, on scipy's
    Poisson distribution."""
    lam = fraction * k
    if estimator == "poisson":
        counter, value = 0, 0.0
        while value < 1 - significance:
            value = poisson.cdf(counter, lam)
            counter += 1
            if counter >= k:
                break
        return counter + 1
    counter, value = 1, 0.0
    while value < 1 - significance:
        value += poisson.pmf(counter, lam) / (1 - poisson.pmf(0, lam))
        counter += 1
        if counter >= k:
            break
    return counter


@pytest.mark.parametrize("estimator", ["poisson", "zero_truncated_poisson"])
@pytest.mark.parametrize(("k", "significance"), [(3, 0.01), (5, 0.05), (10, 0.01), (20, 0.1)])
@settings(max_examples=40, deadline=None)
@given(drawn=samples())
def test_k_map_estimated_from_the_weights_follows_arx(estimator, k, significance, drawn):
    data, _ = drawn
    n, total = len(data), sum(data["w"])
    floor = min(k, _arx_k(k, n / total, significance, estimator), n)
    sizes = Counter(_rows(data))
    expected = all(sizes[r] >= floor for r in _rows(data))
    model = KMap(k=k, estimator=estimator, significance=significance)
    assert _verdict(model, data, weight="w") == expected
    assert model.class_floor(class_stats(data, QIS, weight="w")) == floor


def test_k_map_estimate_is_k_anonymity_with_a_smaller_k_at_a_small_sampling_fraction():
    """One in a hundred sampled (lambda = 0.05): ARX's k' is 3, so classes of 3 rows meet 5-map
    where 5-anonymity fails, and a class of 2 rows fails both."""
    data = pd.DataFrame({"q1": ["x"] * 3 + ["y"] * 3, "q2": [1] * 6, "w": [100.0] * 6})
    assert KMap(k=5, estimator="poisson").class_floor(class_stats(data, QIS, weight="w")) == 3
    assert check_table(data, QIS, [KAnonymity(k=5)])
    assert _verdict(KMap(k=5, estimator="poisson"), data, weight="w")
    assert not _verdict(KMap(k=5, estimator="poisson"), data.iloc[1:], weight="w")
    # sampled whole, k-map is k-anonymity
    data["w"] = 1.0
    assert not _verdict(KMap(k=5, estimator="poisson"), data, weight="w")


# ---------------------------------------------------------------------------------------------
# delta-presence


@pytest.mark.parametrize(("low", "high"), [(0.0, 0.5), (0.2, 0.8), (0.0, 1.0), (0.5, 1.0)])
@settings(max_examples=60, deadline=None)
@given(drawn=samples())
def test_delta_presence_bounds_the_share_of_every_population_class(low, high, drawn):
    data, population = drawn
    in_data, in_population = Counter(_rows(data)), Counter(_rows(population))
    expected = all(low - TOL <= Fraction(in_data[c], n) <= high + TOL for c, n in in_population.items())
    model = DeltaPresence(min=low, max=high, population="p.csv")
    failures = check_table(data, QIS, [model], population=population)
    assert (not failures) == expected
    if failures:
        assert str(failures[0]).startswith(f"not ({low:g}, {high:g})-present") and "\n" not in str(failures[0])


def test_a_population_class_without_data_fails_a_positive_min_naming_it():
    population = pd.DataFrame({"q1": ["x", "x", "y", "y"], "q2": [1, 1, 1, 1]})
    data = population.iloc[[0]].reset_index(drop=True)
    assert _verdict(DeltaPresence(min=0.0, max=0.5, population="p.csv"), data, population=population)
    failures = check_table(data, QIS, [DeltaPresence(min=0.1, max=0.5, population="p.csv")], population=population)
    assert len(failures) == 1 and failures[0].n_classes == 0
    assert "1 class(es) of the population (2 record(s)) hold no row of the data" in str(failures[0])
    assert "below min 0.1" in str(failures[0])


# ---------------------------------------------------------------------------------------------
# average re-identification risk


@pytest.mark.parametrize("bound", [0.1, 0.25, 0.5, 1.0])
@settings(max_examples=60, deadline=None)
@given(drawn=samples())
def test_average_risk_is_the_mean_prosecutor_risk_of_the_released_records(bound, drawn):
    data, _ = drawn
    sizes = Counter(_rows(data))
    mean = sum(Fraction(1, sizes[r]) for r in _rows(data)) / len(data)  # each record's 1 / its class size
    assert mean == Fraction(len(sizes), len(data))
    failures = check_table(data, QIS, [AverageRisk(value=bound)])
    assert (not failures) == (mean <= bound)
    if failures:
        assert f"average re-identification risk {float(mean):.6g} > {bound:g}" in str(failures[0])


def _arx_size_threshold(highest):
    """The smallest class size whose risk 1 / size is below the highest risk by ARX's 1 % margin:
    ``1 / size < 1.01 h``."""
    size = 1
    while Fraction(1, size) >= Fraction(101, 100) * Fraction(highest):
        size += 1
    return size


@pytest.mark.parametrize(("bound", "highest", "share"), [(0.5, 0.2, 0.1), (0.5, 0.34, 0.3), (1.0, 0.5, 0.0),
                                                         (0.3, 0.15, 0.5), (1.0, 0.099, 0.2)])
@settings(max_examples=50, deadline=None)
@given(drawn=samples())
def test_average_risk_with_records_at_risk_follows_arxs_second_form(bound, highest, share, drawn):
    data, _ = drawn
    sizes = Counter(_rows(data))
    threshold = _arx_size_threshold(highest)
    at_risk = Fraction(sum(1 for r in _rows(data) if sizes[r] < threshold), len(data))
    # the model absorbs 1e-12 of rounding in both comparisons (a share of exactly 0.3 meets 0.3,
    # which as a float lies a hair below 3/10)
    expected = Fraction(len(sizes), len(data)) <= bound and at_risk <= Fraction(share) + Fraction(1, 10**12)
    model = AverageRisk(value=bound, highest_risk=highest, records_at_risk=share)
    failures = check_table(data, QIS, [model])
    assert (not failures) == expected
    if failures and Fraction(len(sizes), len(data)) <= bound:
        assert f"in classes of fewer than {threshold} rows (risk above {highest:g})" in str(failures[0])


@settings(max_examples=100, deadline=None)
@given(sizes=st.lists(st.integers(1, 9), min_size=2, max_size=8), bound=st.sampled_from([0.2, 0.35, 0.5]))
def test_average_risk_passes_after_a_merge_or_the_suppression_of_a_class_below_average(sizes, bound):
    """What ARX's monotonicity flags rest on: merging two classes, or suppressing a class no larger
    than the average, never raises classes per record."""
    model = AverageRisk(value=bound)
    whole = ClassStats(sizes=np.array(sizes))
    merged = ClassStats(sizes=np.array([sizes[0] + sizes[1], *sizes[2:]]))
    smallest = int(np.argmin(sizes))
    dropped = ClassStats(sizes=np.array(sizes[:smallest] + sizes[smallest + 1:]))
    if model.release_ok(whole):
        assert model.release_ok(merged) and model.release_ok(dropped)


def test_a_release_with_no_row_meets_the_global_models():
    empty = pd.DataFrame({"q1": pd.Series([], dtype=object), "q2": pd.Series([], dtype=np.int64),
                          "w": pd.Series([], dtype=float)})
    assert _verdict(AverageRisk(value=0.01), empty)
    assert _verdict(PopulationUniqueness(value=0.01), empty, weight="w")


# ---------------------------------------------------------------------------------------------
# population uniqueness


def _arx_uniqueness(data, bound, model):
    """ARX's ``PopulationUniqueness.isFulfilled``: the estimate at f = n / (the weights' sum) from
    class sizes counted row by row."""
    sizes = list(Counter(_rows(data)).values())
    fraction = len(data) / sum(data["w"])
    found = uniqueness_estimates(sizes, fraction)
    share = found[model]
    if model == "dankar" and fraction <= 0.1:
        share = found["pitman"]  # ARX's criterion: Pitman's, no fallback
    if share is not None and share > 0:
        return share <= bound + TOL
    return 1 not in sizes  # no estimate: passes only without a sample unique


@pytest.mark.parametrize("model", ["pitman", "zayatz", "snb", "dankar"])
@pytest.mark.parametrize("bound", [0.01, 0.2])
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=samples())
def test_population_uniqueness_follows_arxs_rule(model, bound, drawn):
    data, _ = drawn
    assert _verdict(PopulationUniqueness(value=bound, model=model), data, weight="w") == \
        _arx_uniqueness(data, bound, model)


@settings(max_examples=40, deadline=None)
@given(drawn=samples(), bound=st.sampled_from([0.05, 0.2, 0.5, 0.9]))
def test_a_population_sampled_whole_has_its_sample_uniques_as_population_uniques(drawn, bound):
    data, _ = drawn
    data["w"] = 1.0
    sizes = Counter(_rows(data))
    uniques = Fraction(sum(1 for s in sizes.values() if s == 1), len(data))
    model = PopulationUniqueness(value=bound, model="zayatz")
    assert _verdict(model, data, weight="w") == (uniques <= bound)


# ---------------------------------------------------------------------------------------------
# monotonicity the models declare


@settings(max_examples=100, deadline=None)
@given(a=st.integers(1, 6), b=st.integers(1, 6), pa=st.integers(0, 6), pb=st.integers(0, 6),
       low=st.sampled_from([0.0, 0.2, 0.4]), high=st.sampled_from([0.5, 0.8, 1.0]))
def test_merging_two_passing_classes_passes_for_k_map_and_delta_presence(a, b, pa, pb, low, high):
    stats = ClassStats(sizes=np.array([a, b, a + b]), population=np.array([a + pa, b + pb, a + b + pa + pb]))
    for model in (KMap(k=4, population="p.csv"), DeltaPresence(min=low, max=high, population="p.csv")):
        assert model.monotone_generalization
        ok = model.classes_ok(stats)
        if ok[0] and ok[1]:
            assert ok[2], model


# ---------------------------------------------------------------------------------------------
# the spec, and what cannot serve


def test_models_from_spec_reads_the_population_keys():
    privacy = {"k": 5, "k_map": {"k": 5, "population": "pop.csv"},
               "delta_presence": {"min": 0.0, "max": 0.5, "population": "pop.csv"},
               "max_average_risk": 0.05, "max_population_uniqueness": {"value": 0.01, "model": "dankar"},
               "max_suppression": "1%"}
    models = models_from_spec(privacy)
    assert [m.key for m in models] == [k for k in MODELS if k in privacy]
    assert models[1:] == [KMap(k=5, population="pop.csv"), DeltaPresence(min=0.0, max=0.5, population="pop.csv"),
                          AverageRisk(value=0.05), PopulationUniqueness(value=0.01, model="dankar")]
    estimated = models_from_spec({"k_map": {"k": 10, "estimator": "zero_truncated_poisson", "significance": 0.05}})
    assert estimated == [KMap(k=10, estimator="zero_truncated_poisson", significance=0.05)]
    assert models_from_spec({"k_map": {"k": 3, "estimator": "poisson"}})[0].significance == 0.01
    assert models_from_spec({"max_population_uniqueness": 0.02}) == [PopulationUniqueness(value=0.02)]
    assert models_from_spec({"max_average_risk": {"value": 0.05, "highest_risk": 0.2, "records_at_risk": 0.1}}) == \
        [AverageRisk(value=0.05, highest_risk=0.2, records_at_risk=0.1)]
    assert models_from_spec({"delta_presence": {"max": 0.3, "population": "p.csv"}})[0].min == 0.0


@pytest.mark.parametrize(("privacy", "key"), [
    ({"k_map": 5}, "k_map"), ({"k_map": {"k": 5}}, "k_map"),
    ({"k_map": {"k": 5, "population": "p.csv", "estimator": "poisson"}}, "k_map"),
    ({"k_map": {"k": 1, "estimator": "poisson"}}, "k_map's k"),
    ({"k_map": {"k": 5, "estimator": "binomial"}}, "k_map's estimator"),
    ({"k_map": {"k": 5, "estimator": "poisson", "significance": 1.5}}, "k_map's significance"),
    ({"k_map": {"k": 5, "population": "p.csv", "significance": 0.05}}, "k_map's significance"),
    ({"k_map": {"k": 5, "population": 3}}, "k_map's population"),
    ({"k_map": {"k": 5, "estimator": "poisson", "alpha": 1}}, "k_map"),
    ({"delta_presence": 0.5}, "delta_presence"), ({"delta_presence": {"max": 0.5}}, "delta_presence's population"),
    ({"delta_presence": {"min": 0.6, "max": 0.5, "population": "p.csv"}}, "delta_presence's min"),
    ({"delta_presence": {"max": 1.5, "population": "p.csv"}}, "delta_presence's max"),
    ({"delta_presence": {"min": -0.1, "max": 0.5, "population": "p.csv"}}, "delta_presence's min"),
    ({"max_average_risk": 0}, "max_average_risk"), ({"max_average_risk": 1.5}, "max_average_risk"),
    ({"max_average_risk": float("nan")}, "max_average_risk"), ({"max_average_risk": "5%"}, "max_average_risk"),
    ({"max_average_risk": {"value": 0.05, "highest_risk": 0.2}}, "max_average_risk's highest_risk"),
    ({"max_average_risk": {"value": 0.05, "highest_risk": 0, "records_at_risk": 0.1}},
     "max_average_risk's highest_risk"),
    ({"max_average_risk": {"value": 0.05, "highest_risk": 0.2, "records_at_risk": 1.5}},
     "max_average_risk's records_at_risk"),
    ({"max_population_uniqueness": {"value": 0.01, "model": "poisson"}}, "max_population_uniqueness's model"),
    ({"max_population_uniqueness": {"model": "dankar"}}, "max_population_uniqueness"),
    ({"max_population_uniqueness": 2}, "max_population_uniqueness"),
])
def test_a_bad_population_spec_is_refused_in_one_line_naming_the_key(privacy, key):
    with pytest.raises(ParameterError) as info:
        models_from_spec(privacy)
    message = str(info.value)
    assert message.startswith(key) and "\n" not in message
    assert "np." not in message


def test_what_the_population_models_need_is_refused_in_one_line():
    data = pd.DataFrame({"q1": ["x", "x", "y"], "q2": [1, 1, 2], "w": [2.0, np.nan, 3.0]})
    population = pd.DataFrame({"q1": ["x", "x", "x"], "q2": [1, 1, 1]})
    cases = [
        (lambda: check_table(data, QIS, [KMap(k=2, population="p.csv")]), ParameterError,
         "k_map needs a population table"),
        (lambda: check_table(data, QIS, [PopulationUniqueness(value=0.1)]), ParameterError,
         "max_population_uniqueness needs the sampling weights"),
        (lambda: check_table(data, QIS, [KMap(k=2, estimator="poisson")], weight="w"), DataError,
         "weight column 'w': data row 2 holds nan"),
        (lambda: check_table(data.assign(w=0.5), QIS, [KMap(k=2, estimator="poisson")], weight="w"), DataError,
         "k_map: the sampling weights sum to 1.5, fewer than the table's 3 rows"),
        (lambda: check_table(data, QIS, [KMap(k=2, population="p.csv")], population=population), DataError,
         "data row 3 (q1=y, q2=2): its class has 1 row(s) but the population table only 0 record(s)"),
        (lambda: check_table(data, QIS, [DeltaPresence(max=0.5, min=0.0, population="p.csv")],
                             population=population[["q1"]]), DataError,
         "the population table lacks the quasi-identifier column(s) ['q2']"),
    ]
    for run, kind, start in cases:
        with pytest.raises(kind) as info:
            run()
        assert isinstance(info.value, IncrowdError)
        assert str(info.value).startswith(start) and "\n" not in str(info.value), str(info.value)
        assert "np." not in str(info.value)


# ---------------------------------------------------------------------------------------------
# the curator's household survey, written as a labelled .sav and read back


@pytest.fixture(scope="module")
def household(tmp_path_factory):
    from _household import KEYS, WEIGHT, write_household
    from benchdata import data_dir

    if not (data_dir() / "testdata.csv").is_file():
        pytest.skip("benchmark data not found")
    path = write_household(data_dir(), tmp_path_factory.mktemp("household") / "household.sav")
    return read_table(path), list(KEYS), WEIGHT


def test_on_the_household_sav_the_population_models_agree_with_the_risk_report(household):
    """The written file read back: population uniqueness as ``incrowd.risk`` estimates it, average
    risk as classes per record, k-map from the weights as ARX derives its k'."""
    import incrowd

    back, keys, weight = household
    summary = incrowd.risk(back, keys, weight=weight).summary()["population_uniqueness"]
    dankar = summary["dankar"]
    assert dankar is not None and 0 < dankar < 1
    assert _verdict(PopulationUniqueness(value=dankar * 1.001), back, keys, weight=weight)
    assert not _verdict(PopulationUniqueness(value=dankar * 0.999), back, keys, weight=weight)
    sizes = back.groupby(keys, dropna=False).size()
    risk = len(sizes) / len(back)
    assert _verdict(AverageRisk(value=risk), back, keys) and not _verdict(AverageRisk(value=risk * 0.99), back, keys)
    fraction = len(back) / back[weight].sum()
    for estimator in ("poisson", "zero_truncated_poisson"):
        floor = min(5, _arx_k(5, fraction, 0.01, estimator), len(back))
        assert _verdict(KMap(k=5, estimator=estimator), back, keys, weight=weight) == bool(sizes.min() >= floor)

# seconds in all: the full suite (make test) runs them, the quick tier leaves them out
pytestmark = pytest.mark.slow
