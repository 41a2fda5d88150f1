"""The planner against paper 002's formulas (sections 3.2.2, 3.2.3, 4.2.1; Figures 6.1, 6.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from incrowd import ParameterError
from incrowd.incremental import (
    VARSIGMA_MINUS,
    RuntimeModel,
    critical_ratio,
    deadline_ratio,
    earliest_finish,
    fit_runtime_model,
    optimal_ratio,
    plan,
)


def test_thesis_figures():
    assert VARSIGMA_MINUS == pytest.approx(2 * (2 / math.sqrt(3) - 1))
    assert VARSIGMA_MINUS == pytest.approx(0.309, abs=5e-4)
    # Figure 6.1: varsigma = 5 (10-hour vote, 2-hour MDAV), nu* = nu- = 14.6 %
    assert critical_ratio(5) == pytest.approx(0.146, abs=5e-4)
    assert optimal_ratio(5) == critical_ratio(5)
    # Figure 6.2: the same with a deadline of one hour (tau_end = 0.5): nu_end = 7.2 %
    assert deadline_ratio(5, 0.5) == pytest.approx(0.072, abs=1.5e-3)
    # ... whose base starts 44 min before the end and runs 1 h 43 min (of a 2 h one-shot)
    nu = deadline_ratio(5, 0.5)
    assert 5 * nu * 120 == pytest.approx(44, abs=0.5)
    assert (1 - nu) ** 2 * 120 == pytest.approx(103, abs=0.5)


def test_the_ratios_solve_their_defining_equations():
    for s in (0.05, 0.2, VARSIGMA_MINUS, 0.5, 1, 5, 40):
        nu = critical_ratio(s)
        assert s * nu == pytest.approx((1 - nu) ** 2)  # head start = base time
        for te in (0.3, 0.6, 0.9):
            ne = deadline_ratio(s, te)
            if ne is None:
                assert te < earliest_finish(s)
            else:
                assert (1 - ne) ** 2 + ne**2 == pytest.approx(te + s * ne)
                assert 0 <= ne <= optimal_ratio(s) + 1e-12
    # below varsigma- the gain (2+s) nu - 2 nu^2 peaks before saturation
    assert optimal_ratio(0.1) == pytest.approx(2.1 / 4)
    assert optimal_ratio(0.1) < critical_ratio(0.1)
    assert deadline_ratio(5, 1.0) == 0.0
    assert deadline_ratio(5, 0.01) is None  # below the earliest finish nu-^2 = 0.0213


@pytest.mark.parametrize("varsigma", [0.1, 0.25, 0.5, 1.0, 5.0, 20.0])
def test_numeric_solution_equals_the_closed_form_for_the_quadratic_model(varsigma):
    closed = plan(50_000, varsigma=varsigma, tau_end=0.6, model=RuntimeModel.quadratic())
    numeric = plan(50_000, varsigma=varsigma, tau_end=0.6, model=RuntimeModel.quadratic(),
                   closed_form=False)
    assert closed.solved.startswith("closed") and numeric.solved.startswith("numeric")
    assert numeric.nu_minus == pytest.approx(closed.nu_minus, abs=1e-9)
    assert numeric.nu_star == pytest.approx(closed.nu_star, abs=1e-6)
    assert numeric.tau_end_min == pytest.approx(closed.tau_end_min, abs=1e-9)
    if closed.nu_end is None:
        assert numeric.nu_end is None
    else:
        assert numeric.nu_end == pytest.approx(closed.nu_end, abs=1e-6)


def test_a_measured_exponent_moves_the_ratios():
    cubic = RuntimeModel(exponent=3.0, coefficient=1e-12)
    p = plan(10_000, varsigma=5, tau_end=0.5, model=cubic)
    # nu- solves varsigma nu = (1 - nu)^3
    assert 5 * p.nu_minus == pytest.approx((1 - p.nu_minus) ** 3, abs=1e-9)
    assert p.nu_end is not None
    nu = p.nu_end
    assert (1 - nu) ** 3 + nu**3 - 5 * nu == pytest.approx(0.5, abs=1e-9)
    assert p.seconds_one_shot == pytest.approx(1e-12 * 1e12)
    assert p.at["nu_star"]["seconds"]["base"] == pytest.approx((1 - p.nu_star) ** 3 * 1.0)


def test_an_arrival_schedule_equal_to_uniform_arrivals_gives_the_same_plan():
    model = RuntimeModel(exponent=2.0, coefficient=3600.0 / 50_000**2)  # one-shot: 1 hour
    uniform = plan(50_000, varsigma=5, tau_end=0.5, model=model, closed_form=False)
    # 5 hours of uniform arrivals, as (seconds, rows so far) points
    times = np.linspace(0, 5 * 3600, 11)
    counts = np.linspace(0, 50_000, 11)
    scheduled = plan(50_000, arrivals=(times, counts), tau_end=0.5, model=model)
    assert scheduled.nu_minus == pytest.approx(uniform.nu_minus, abs=1e-9)
    assert scheduled.nu_end == pytest.approx(uniform.nu_end, abs=1e-9)
    # a deadline in seconds is the same as its tau_end
    by_seconds = plan(50_000, varsigma=5, deadline_seconds=1800, model=model)
    assert by_seconds.nu_end == pytest.approx(uniform.nu_end, abs=1e-6)


def test_fitted_model_is_measured_not_assumed():
    model = fit_runtime_model("mdav", 5, columns=3, sizes=(400, 800, 1600), repeats=1)
    assert model.source.startswith("fitted") and len(model.samples) == 3
    assert [n for n, _ in model.samples] == [400, 800, 1600] and all(s > 0 for _, s in model.samples)
    # the model is the log-log line through what was measured (timings themselves are too noisy
    # on a shared machine to bound the exponent in a test)
    logn = np.log([n for n, _ in model.samples])
    logt = np.log([s for _, s in model.samples])
    slope, intercept = np.polyfit(logn, logt, 1)
    assert model.exponent == pytest.approx(slope) and model.coefficient == pytest.approx(np.exp(intercept))
    assert model.seconds(1600) == pytest.approx(model.coefficient * 1600**model.exponent)


def test_bad_planner_input():
    with pytest.raises(ParameterError, match="varsigma"):
        plan(1000, varsigma=-1)
    with pytest.raises(ParameterError, match="exactly one of varsigma"):
        plan(1000)
    with pytest.raises(ParameterError, match="tau_end"):
        plan(1000, varsigma=1, tau_end=float("nan"))
    with pytest.raises(ParameterError, match="needs a runtime model with a coefficient"):
        plan(1000, varsigma=1, deadline_seconds=10)
    with pytest.raises(ParameterError, match="rows"):
        plan(1, varsigma=1)
