"""How much to leave for the increment: the incremental thesis' head-start model and a measured runtime model.

Times are relative to the one-shot run on all n rows (t). With nu the increment's share,
tau0(nu) = t_base((1-nu) n)/t, tau+(nu) = t_increment(nu n)/t, and the head start
tau-(nu) = the time between the arrival of the base's last row and of the increment's last row,
over t (varsigma*nu for uniform arrivals, section 3.2.1). Then (sections 3.2.2, 3.2.3, 4.2.1):

- critical ratio nu-: tau-(nu-) = tau0(nu-), the largest nu whose head start is fully used;
- relative gain Delta_tau(nu) = min(tau- + 1 - tau0, 1) - tau+, optimal ratio nu* = argmax;
- deadline ratio nu_end: the smallest nu whose finish after the last arrival,
  tau0 + tau+ - tau-, meets tau_end (the time available after the last arrival, over t).

For MDAV-like quadratic runtimes (t ~ n^2, the thesis' model) and uniform arrivals these have
closed forms (functions below). A :class:`RuntimeModel` fitted on this machine replaces the
assumed exponent by a measured one; the same definitions are then solved numerically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..exceptions import DataError, ParameterError

#: critical head-start coefficient varsigma- = 2 (2/sqrt(3) - 1) (the incremental thesis, section 4.2.1)
VARSIGMA_MINUS = 2.0 * (2.0 / math.sqrt(3.0) - 1.0)


def _check_varsigma(varsigma) -> float:
    if isinstance(varsigma, bool) or not isinstance(varsigma, (int, float, np.integer, np.floating)) \
            or not np.isfinite(varsigma) or varsigma < 0:
        raise ParameterError(f"varsigma (head-start coefficient) must be a real number >= 0; got {varsigma!r}")
    return float(varsigma)


def _check_tau_end(tau_end) -> float:
    if isinstance(tau_end, bool) or not isinstance(tau_end, (int, float, np.integer, np.floating)) \
            or not np.isfinite(tau_end) or tau_end < 0:
        raise ParameterError(f"tau_end (time available after the last arrival, relative to the "
                             f"one-shot run) must be a real number >= 0; got {tau_end!r}")
    return float(tau_end)


# ---------------------------------------------------------------------------------------------
# Closed forms (quadratic runtime, uniform arrivals)


def critical_ratio(varsigma: float) -> float:
    """nu- = (2 + varsigma - sqrt(varsigma (4 + varsigma))) / 2: solves varsigma nu = (1-nu)^2.

    Parameters
    ----------
    varsigma : float
        The collection time over the one-shot run's time (uniform arrivals).

    Returns
    -------
    float
        nu-, the largest increment share that still saves time.
    """
    s = _check_varsigma(varsigma)
    return (2.0 + s - math.sqrt(s * (4.0 + s))) / 2.0


def optimal_ratio(varsigma: float) -> float:
    """nu* = (2 + varsigma)/4 below varsigma-, else nu- (Delta_tau = (2+varsigma) nu - 2 nu^2).

    Parameters
    ----------
    varsigma : float
        The collection time over the one-shot run's time (uniform arrivals).

    Returns
    -------
    float
        nu*, the increment share that finishes earliest.
    """
    s = _check_varsigma(varsigma)
    return (2.0 + s) / 4.0 if s <= VARSIGMA_MINUS else critical_ratio(s)


def earliest_finish(varsigma: float) -> float:
    """tau_end_min: the finish after the last arrival at nu* (the lower bound of tau_end).

    Parameters
    ----------
    varsigma : float
        The collection time over the one-shot run's time (uniform arrivals).

    Returns
    -------
    float
        tau_end_min, relative to the one-shot run.
    """
    s = _check_varsigma(varsigma)
    nu = optimal_ratio(s)
    return (1.0 - nu) ** 2 + nu**2 - s * nu


def deadline_ratio(varsigma: float, tau_end: float) -> float | None:
    """nu_end = (2 + varsigma - sqrt((2+varsigma)^2 - 8 (1 - tau_end))) / 4.

    Solves (1-nu)^2 + nu^2 = tau_end + varsigma nu. Returns 0.0 when tau_end >= 1 (the
    one-shot run meets the deadline: no increment needed) and None when tau_end is below
    :func:`earliest_finish` (no split meets the deadline).

    Parameters
    ----------
    varsigma : float
        The collection time over the one-shot run's time (uniform arrivals).
    tau_end : float
        The deadline after the last arrival, relative to the one-shot run.

    Returns
    -------
    float or None
        nu_end (0.0 or None, see above).
    """
    s = _check_varsigma(varsigma)
    te = _check_tau_end(tau_end)
    if te >= 1.0:
        return 0.0
    if te < earliest_finish(s) - 1e-12:
        return None
    disc = max((2.0 + s) ** 2 - 8.0 * (1.0 - te), 0.0)
    return (2.0 + s - math.sqrt(disc)) / 4.0


# ---------------------------------------------------------------------------------------------
# Runtime model


@dataclass
class RuntimeModel:
    """seconds(n) = coefficient * n ** exponent; ``coefficient`` None = relative use only.

    Attributes
    ----------
    exponent : float
        b in seconds = c * n^b.
    coefficient : float or None
        c (None: only ratios are known).
    source : str
        Where the model comes from ("assumed", the thesis, or fitted on this machine).
    method : str or None
        The method timed.
    k : int or None
        The group size timed.
    columns : int or None
        Columns of the rows timed.
    samples : list of (int, float)
        The (rows, seconds) timings fitted.
    """

    exponent: float
    coefficient: float | None = None
    source: str = "assumed"
    method: str | None = None
    k: int | None = None
    columns: int | None = None
    samples: list[tuple[int, float]] = field(default_factory=list)

    @classmethod
    def quadratic(cls) -> RuntimeModel:
        """The thesis' model: MDAV time ~ n^2/k, so only ratios are known."""
        return cls(exponent=2.0, source="thesis (t ~ n^2)")

    def seconds(self, n: float) -> float | None:
        if self.coefficient is None:
            return None
        return float(self.coefficient * float(n) ** self.exponent)

    def relative(self, n_part: float, n_all: float) -> float:
        """t(n_part) / t(n_all), which does not need the coefficient."""
        if n_part <= 0:
            return 0.0
        return float((n_part / n_all) ** self.exponent)

    def to_dict(self) -> dict[str, Any]:
        return {
            "exponent": self.exponent, "coefficient": self.coefficient, "source": self.source,
            "method": self.method, "k": self.k, "columns": self.columns,
            "samples": [{"rows": n, "seconds": s} for n, s in self.samples],
        }


def _median_fit_seconds(X: np.ndarray, method: str, k: int, seed: int, repeats: int, params: dict) -> float:
    """The median of ``repeats`` fits' own time on ``X``, without compiling: a kernel
    specialization that the warm-up did not meet (another size takes another path) must not
    bend the model."""
    from ..microaggregation import make_estimator

    times = []
    for _ in range(repeats):
        est = make_estimator(method, k, seed, **params)
        est.fit(X)
        times.append(est.seconds_)
    return float(np.median(times))


def fit_runtime_model(
    method: str = "mdav",
    k: int = 10,
    *,
    columns: int = 15,
    data: np.ndarray | None = None,
    sizes: Sequence[int] = (2000, 4000, 8000, 16000),
    repeats: int = 3,
    seed: int = 0,
    **params,
) -> RuntimeModel:
    """Time ``method`` on this machine at several sizes and fit seconds = c * n^b (log-log).

    Rows are standard Gaussian with ``columns`` columns, or rows drawn without replacement from
    ``data`` (the user's own quasi-identifiers). Each size is timed ``repeats`` times after one
    untimed warm-up run (which also compiles the kernels); the median is fitted.

    Parameters
    ----------
    method : str, default "mdav"
        A method name of :data:`incrowd.METHODS`.
    k : int, default 10
        The group size.
    columns : int, default 15
        Columns of the generated rows.
    data : numpy.ndarray or None, default None
        Rows to sample from instead of generated ones.
    sizes : sequence of int, default (2000, 4000, 8000, 16000)
        The row counts timed.
    repeats : int, default 3
        Timings per size (the median is fitted).
    seed : int, default 0
        The seed of the rows.
    **params
        The method's own parameters.

    Returns
    -------
    RuntimeModel
        The fitted model, with the timings it was fitted on.
    """
    from ..microaggregation import make_estimator

    rng = np.random.default_rng(seed)
    if data is not None:
        pool = np.asarray(data, dtype=np.float64)
        if pool.ndim != 2:
            raise DataError("data for the runtime model must be 2-D (rows x quasi-identifiers)")
        sizes = [int(s) for s in sizes if s <= pool.shape[0]]
        if len(sizes) < 2:
            raise DataError(f"the data has {pool.shape[0]} rows; the runtime model needs two "
                            "sizes to fit, give smaller sizes")
    if len(sizes) < 2 or min(sizes) < 2 * k:
        raise ParameterError(f"sizes must hold at least two sizes >= 2k={2 * k}; got {list(sizes)!r}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ParameterError(f"repeats must be an integer >= 1; got {repeats!r}")

    def sample(n: int) -> np.ndarray:
        if data is None:
            return rng.standard_normal((n, columns))
        return pool[rng.choice(pool.shape[0], size=n, replace=False)]

    make_estimator(method, k, seed, **params).fit(sample(min(sizes)))  # compile and warm up
    samples = [(int(n), _median_fit_seconds(sample(n), method, k, seed, repeats, params)) for n in sorted(sizes)]
    logn = np.log([n for n, _ in samples])
    logt = np.log([max(s, 1e-9) for _, s in samples])
    b, a = np.polyfit(logn, logt, 1)
    return RuntimeModel(
        exponent=float(b), coefficient=float(math.exp(a)), source="fitted on this machine",
        method=method, k=int(k), columns=int(columns if data is None else pool.shape[1]),
        samples=samples,
    )


# ---------------------------------------------------------------------------------------------
# Arrivals


def uniform_head_start(varsigma: float) -> Callable[[float], float]:
    s = _check_varsigma(varsigma)
    return lambda nu: s * nu


def schedule_head_start(times: Sequence[float], counts: Sequence[float], t_total: float
                        ) -> tuple[Callable[[float], float], int]:
    """tau-(nu) from an arrival schedule: (time in seconds, rows arrived so far) points.

    Linear between the points. Returns the function and the number of rows at the end.
    """
    t = np.asarray(times, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    if t.ndim != 1 or t.shape != c.shape or t.size < 2:
        raise DataError("an arrival schedule needs at least two (time, rows arrived) points")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(c))):
        raise DataError("the arrival schedule has a missing or infinite value")
    if np.any(np.diff(t) <= 0) or np.any(np.diff(c) < 0) or c[0] < 0:
        bad = int(np.flatnonzero((np.diff(t) <= 0) | (np.diff(c) < 0))[0]) + 2 if t.size > 1 else 1
        raise DataError(f"the arrival schedule must have increasing times and non-decreasing row "
                        f"counts (row {bad} breaks this)")
    n = int(round(c[-1]))
    if n < 2:
        raise DataError("the arrival schedule ends with fewer than 2 rows")
    if t_total is None or t_total <= 0:
        raise ParameterError("an arrival schedule needs the one-shot time in seconds: use a "
                             "runtime model with a coefficient (fitted on this machine)")
    end = t[-1]

    def head_start(nu: float) -> float:
        arrived = (1.0 - nu) * c[-1]
        # the first moment this many rows had arrived
        when = float(np.interp(arrived, c, t)) if arrived > c[0] else float(t[0])
        return (end - when) / t_total

    return head_start, n


# ---------------------------------------------------------------------------------------------
# Solving


def _bisect(f: Callable[[float], float], lo: float, hi: float, iters: int = 200) -> float:
    """Root of an increasing f on [lo, hi] with f(lo) <= 0 <= f(hi)."""
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if f(mid) <= 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return 0.5 * (lo + hi)


def _argmax(f: Callable[[float], float], lo: float, hi: float, grid: int = 4001) -> float:
    """Maximizer of f on [lo, hi]: a grid, then golden-section search around the best point."""
    xs = np.linspace(lo, hi, grid)
    values = np.array([f(x) for x in xs])
    i = int(np.argmax(values))
    a, b = xs[max(i - 1, 0)], xs[min(i + 1, grid - 1)]
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    for _ in range(200):
        if f(c) >= f(d):
            b = d
        else:
            a = c
        c, d = b - g * (b - a), a + g * (b - a)
        if b - a < 1e-14:
            break
    x = 0.5 * (a + b)
    return x if f(x) >= values[i] else float(xs[i])


@dataclass
class Plan:
    """Where to split, and what that buys. All tau values are relative to the one-shot run.

    Attributes
    ----------
    rows : int
        The rows to be published.
    varsigma : float or None
        The collection time over the one-shot run's time.
    tau_end : float or None
        The deadline, relative to the one-shot run.
    nu_minus : float
        The critical ratio nu-.
    nu_star : float
        The optimal ratio nu*.
    nu_end : float or None
        The deadline ratio.
    delta_tau_star : float
        The time saved at nu*.
    tau_end_min : float
        The earliest finish.
    varsigma_minus : float or None
        The varsigma below which nu* is (2 + varsigma)/4.
    solved : str
        How the ratios were found (closed form or numerically).
    model, increment_model : RuntimeModel
        The runtime models used.
    seconds_one_shot : float or None
        The one-shot run's seconds, when the model knows them.
    at : dict of str to dict
        The figures at each ratio.
    notes : list of str
        What the plan assumed or could not meet.
    """

    rows: int
    varsigma: float | None
    tau_end: float | None
    nu_minus: float
    nu_star: float
    nu_end: float | None
    delta_tau_star: float
    tau_end_min: float
    varsigma_minus: float | None
    solved: str
    model: RuntimeModel
    increment_model: RuntimeModel
    seconds_one_shot: float | None
    at: dict[str, dict[str, Any]]
    notes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "varsigma": self.varsigma,
            "tau_end": self.tau_end,
            "varsigma_minus": self.varsigma_minus,
            "nu_minus": self.nu_minus,
            "nu_star": self.nu_star,
            "nu_end": self.nu_end,
            "delta_tau_star": self.delta_tau_star,
            "tau_end_min": self.tau_end_min,
            "solved": self.solved,
            "model": self.model.to_dict(),
            "increment_model": self.increment_model.to_dict(),
            "seconds_one_shot": self.seconds_one_shot,
            "at": self.at,
            "notes": self.notes,
        }


def plan(
    rows: int,
    *,
    varsigma: float | None = None,
    arrivals: tuple[Sequence[float], Sequence[float]] | None = None,
    tau_end: float | None = None,
    deadline_seconds: float | None = None,
    model: RuntimeModel | None = None,
    increment_model: RuntimeModel | None = None,
    closed_form: bool | None = None,
) -> Plan:
    """Critical, optimal and deadline ratios for splitting ``rows`` into base and increment.

    Arrivals: ``varsigma`` (uniform; the collection takes varsigma times the one-shot run) or
    ``arrivals`` = (times in seconds, rows arrived so far). Deadline: ``tau_end`` (relative) or
    ``deadline_seconds`` after the last arrival. ``model``: the base method's runtime model
    (default: the thesis' quadratic one); ``increment_model``: the increment's (default: the
    same, as for 2MDAV with an MDAV base). ``closed_form``: use the thesis' formulas (default:
    when the model is quadratic, the increment's is the same, and arrivals are uniform).

    Parameters
    ----------
    rows : int
        The rows to be published.
    varsigma : float or None, default None
        Uniform arrivals: the collection time over the one-shot run's time.
    arrivals : tuple of two sequences of float, or None, default None
        Measured arrivals: times in seconds and the rows arrived by then.
    tau_end : float or None, default None
        The deadline after the last arrival, relative to the one-shot run.
    deadline_seconds : float or None, default None
        The deadline after the last arrival, in seconds.
    model : RuntimeModel or None, default None
        The base method's runtime model.
    increment_model : RuntimeModel or None, default None
        The increment's runtime model.
    closed_form : bool or None, default None
        Use the thesis' closed formulas (None: when they apply).

    Returns
    -------
    Plan
        The critical, optimal and deadline ratios and what each buys.
    """
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 2:
        raise ParameterError(f"rows must be an integer >= 2; got {rows!r}")
    base_model = model or RuntimeModel.quadratic()
    inc_model = increment_model or base_model
    t_total = base_model.seconds(rows)
    notes: list[str] = []
    if (varsigma is None) == (arrivals is None):
        raise ParameterError("give exactly one of varsigma (uniform arrivals) and arrivals (a schedule)")
    if arrivals is not None:
        head_start, n_sched = schedule_head_start(arrivals[0], arrivals[1], t_total)
        if n_sched != rows:
            notes.append(f"the schedule ends with {n_sched} rows; planned for {rows} as asked")
        s = None
    else:
        s = _check_varsigma(varsigma)
        head_start = uniform_head_start(s)
    if tau_end is not None and deadline_seconds is not None:
        raise ParameterError("give at most one of tau_end and deadline_seconds")
    if deadline_seconds is not None:
        if t_total is None:
            raise ParameterError("deadline_seconds needs a runtime model with a coefficient "
                                 "(fitted on this machine); give tau_end for the relative model")
        if not np.isfinite(deadline_seconds) or deadline_seconds < 0:
            raise ParameterError(f"deadline_seconds must be >= 0; got {deadline_seconds!r}")
        tau_end = deadline_seconds / t_total
    te = None if tau_end is None else _check_tau_end(tau_end)
    if inc_model is not base_model and (t_total is None or inc_model.coefficient is None):
        raise ParameterError("an increment model different from the base model needs both "
                             "fitted with coefficients (seconds)")

    def tau0(nu: float) -> float:
        return base_model.relative((1.0 - nu) * rows, rows)

    def tau_plus(nu: float) -> float:
        if inc_model is base_model:
            return base_model.relative(nu * rows, rows)
        return inc_model.seconds(nu * rows) / t_total

    def gain(nu: float) -> float:
        return min(head_start(nu) + 1.0 - tau0(nu), 1.0) - tau_plus(nu)

    def finish(nu: float) -> float:  # after the last arrival
        return max(tau0(nu) - head_start(nu), 0.0) + tau_plus(nu)

    quadratic_uniform = (s is not None and inc_model is base_model and base_model.exponent == 2.0)
    use_closed = quadratic_uniform if closed_form is None else bool(closed_form)
    if use_closed and not quadratic_uniform:
        raise ParameterError("the closed forms hold for a quadratic model, one model for base and "
                             "increment, and uniform arrivals only")
    if use_closed:
        nu_minus = critical_ratio(s)
        nu_star = optimal_ratio(s)
        te_min = earliest_finish(s)
        nu_end = deadline_ratio(s, te) if te is not None else None
        solved = "closed form (the incremental thesis, section 4.2.1)"
    else:
        nu_minus = _bisect(lambda nu: head_start(nu) - tau0(nu), 0.0, 1.0)
        nu_star = _argmax(gain, 0.0, nu_minus)
        te_min = finish(nu_star)
        nu_end = None
        if te is not None:
            if te >= 1.0:
                nu_end = 0.0
            elif te >= te_min - 1e-12:
                nu_end = _bisect(lambda nu: te - finish(nu), 0.0, nu_star)
        solved = "numeric (same definitions, measured runtime model)"
    if te is not None and nu_end is None:
        notes.append(f"no split meets tau_end={te:.4g}: the earliest finish after the last "
                     f"arrival is tau={te_min:.4g} (at nu*={nu_star:.4g})")
    if te is not None and te >= 1.0:
        notes.append("the one-shot run finishes within the deadline: no increment is needed "
                     "(and it gives the lowest distortion)")

    def point(nu: float) -> dict[str, Any]:
        d = {
            "nu": nu,
            "rows_base": int(round((1.0 - nu) * rows)),
            "rows_increment": int(round(nu * rows)),
            "tau_minus": head_start(nu),
            "tau0": tau0(nu),
            "tau_plus": tau_plus(nu),
            "delta_tau": gain(nu),
            "finish_after_last_arrival": finish(nu),
        }
        if t_total is not None:
            d["seconds"] = {
                "one_shot": t_total,
                "base": tau0(nu) * t_total,
                "increment": tau_plus(nu) * t_total,
                "start_base_before_last_arrival": head_start(nu) * t_total,
                "finish_after_last_arrival": finish(nu) * t_total,
            }
        return d

    at = {"nu_minus": point(nu_minus), "nu_star": point(nu_star)}
    if nu_end is not None:
        at["nu_end"] = point(nu_end)
    return Plan(
        rows=int(rows), varsigma=s, tau_end=te, nu_minus=nu_minus, nu_star=nu_star,
        nu_end=nu_end, delta_tau_star=gain(nu_star), tau_end_min=te_min,
        varsigma_minus=VARSIGMA_MINUS if quadratic_uniform else None, solved=solved,
        model=base_model, increment_model=inc_model, seconds_one_shot=t_total, at=at, notes=notes,
    )
