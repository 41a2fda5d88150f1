"""The one-call path: ``microaggregate(data, k, method=...)`` and its result object."""

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._runtime import DISTRIBUTED_METHODS, METHOD_CLASSES, compile_clock
from ..exceptions import DataError, ParameterError, VerificationError
from ..io import Promise, Verification, in_memory, mark_changed, numeric_matrix, resolve_roles
from ..privacy import KAnonymity, ReleaseCheck, verify_k_anonymity
from ._measures import group_size_stats


@dataclass
class MicroaggregationResult:
    """What a microaggregation produced, and what was checked about it (what
    :func:`microaggregate` returns).

    Attributes
    ----------
    method : str
        The method's name (a key of :data:`incrowd.METHODS`).
    k : int
        The smallest group size.
    params : dict
        The method's parameters as used (JSON-ready).
    labels : numpy.ndarray
        One group id per input row (row order kept).
    information_loss : float
        SSE/SST on the standardized quasi-identifiers, in [0, 1].
    group_sizes : numpy.ndarray
        Size per group id.
    table : pandas.DataFrame or numpy.ndarray
        The publishable data in the input's type: a DataFrame keeps its columns that are not
        quasi-identifiers unchanged and drops the identifiers.
    seconds : float
        Time of the microaggregation itself, without compiling.
    quasi_identifiers : list of str or None
        The aggregated columns (None for an array: every column).
    identifiers : list of str
        The columns dropped.
    centroids : numpy.ndarray
        One row of group means per group id.
    verification : Verification
        The k-anonymity check of ``table`` (:class:`incrowd.Verification`).
    timings : dict of str to float
        Seconds per phase, without compiling.
    warnings : list of str
        The warnings the run gave.
    compile_seconds : float
        Time numba spent compiling kernels (or loading them from its cache) during the call,
        0 when all were loaded already.
    lower_bound : float or None
        A proven lower bound on the information loss of any k-partition of these rows (with
        ``bound=True``; see :func:`incrowd.lower_bound`).
    """

    method: str
    k: int
    params: dict[str, Any]
    labels: np.ndarray
    information_loss: float
    group_sizes: np.ndarray
    table: Any
    seconds: float
    quasi_identifiers: list[str] | None
    identifiers: list[str]
    centroids: np.ndarray
    verification: Verification
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    compile_seconds: float = 0.0
    #: a proven lower bound on the information loss of any k-partition of these rows (set when
    #: asked for with ``bound=True``; see :func:`incrowd.lower_bound`)
    lower_bound: float | None = None

    @property
    def gap(self) -> float | None:
        """information_loss / lower_bound - 1: the result is at most this far (relatively) from
        the best possible partition at this k; None without a bound (or a bound of 0 under a
        positive loss)."""
        if self.lower_bound is None:
            return None
        if self.lower_bound <= 0.0:
            return 0.0 if self.information_loss <= 0.0 else None
        return max(self.information_loss / self.lower_bound - 1.0, 0.0)

    @property
    def n_rows(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_groups(self) -> int:
        return int(self.group_sizes.shape[0])

    def summary(self) -> dict[str, Any]:
        """What the CLI's ``--json`` prints for this release.

        Returns
        -------
        dict
            JSON-ready: the method, k, parameters, columns, rows and groups, the group sizes,
            the information loss, the times, ``k_anonymous``, ``min_class_size``,
            ``verification`` and the warnings; with a bound (``microaggregate(...,
            bound=True)``) ``lower_bound`` and ``gap`` too.
        """
        stats = group_size_stats(self.labels)
        out = {
            "method": self.method,
            "k": self.k,
            "params": self.params,
            "quasi_identifiers": self.quasi_identifiers,
            "identifiers_dropped": self.identifiers,
            "rows": self.n_rows,
            "groups": self.n_groups,
            "min_group_size": stats.min,
            "max_group_size": stats.max,
            "mean_group_size": stats.mean,
            "group_size_histogram": stats.to_dict()["histogram"],
            "information_loss": self.information_loss,
            "information_loss_percent": 100.0 * self.information_loss,
            "seconds": self.seconds,
            "compile_seconds": self.compile_seconds,
            "timings": self.timings,
            "k_anonymous": bool(self.verification.ok),
            "min_class_size": self.verification.min_class_size,
            "verification": self.verification,
            "warnings": self.warnings,
        }
        if self.lower_bound is not None:
            out["lower_bound"] = self.lower_bound
            out["lower_bound_percent"] = 100.0 * self.lower_bound
            out["gap"] = self.gap
        return out


_DISTRIBUTED = DISTRIBUTED_METHODS


def check_distributed_method(method: str) -> None:
    """Only the MONA methods run on Dask; any other is refused in the one message shape."""
    if method not in _DISTRIBUTED:
        raise ParameterError(
            f"--scheduler runs the MONA methods only ({', '.join(_DISTRIBUTED)}); method {method!r} "
            "runs in process: leave --scheduler out"
        )


def _fit_on_dask(estimator, fit_input, scheduler, timings: dict) -> None:
    """Fill the estimator's fitted attributes from a distributed run (same groups)."""
    from .._runtime import backends as _backends
    from ._base import as_quasi_identifier_matrix, check_k

    values, _ = as_quasi_identifier_matrix(fit_input)
    check_k(estimator.k, values.shape[0])
    estimator._check_params()
    result = _backends.get("dask").fit(estimator, values, scheduler)  # registered by incrowd.distributed
    estimator.labels_ = result.labels
    estimator.n_groups_ = result.n_groups
    estimator.group_sizes_ = result.group_sizes
    estimator.centroids_ = result.centroids
    estimator.information_loss_ = result.information_loss
    estimator.seconds_ = result.seconds["total"]
    timings.update({f"dask_{name}": v for name, v in result.seconds.items()})
    timings["distributed_cuts"] = float(result.distributed_cuts)
    timings["leaf_parts"] = float(result.leaf_parts)


def method_names() -> list[str]:
    return list(_package().METHODS)


def _package():
    return sys.modules[__package__]


def _method_class(method: str) -> type | None:
    """The estimator class of a method name, loading only its family: until :data:`METHODS` is
    first looked up nobody can have added a method to it, so the one table of names decides;
    from then on the table itself does (a caller may have added one)."""
    package = _package()
    table = vars(package).get("METHODS")
    if table is not None:
        return table.get(method)
    name = METHOD_CLASSES.get(method)
    return None if name is None else getattr(package, name)


def make_estimator(method: str, k: int, random_state=None, **params):
    """The estimator for a method name, with unknown names and parameters refused clearly."""
    cls = _method_class(method) if isinstance(method, str) else None
    if cls is None:
        raise ParameterError(f"unknown method {method!r}; known methods: {', '.join(method_names())}")
    allowed = sorted(set(cls().get_params()) - {"k", "random_state"})
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        hint = ", ".join(allowed) if allowed else "none"
        raise ParameterError(
            f"method {method!r} has no parameter(s) {unknown}; its parameters: {hint}"
        )
    return cls(k=k, random_state=random_state, **params)


def microaggregate(
    data: pd.DataFrame | np.ndarray,
    k: int,
    method: str = "mdav",
    *,
    quasi_identifiers: Sequence[str] | str | None = None,
    identifiers: Sequence[str] | str | None = None,
    random_state: int | None = None,
    scheduler: Any = None,
    bound: bool = False,
    **params: Any,
) -> MicroaggregationResult:
    """Microaggregate the quasi-identifiers of ``data`` into groups of at least ``k`` rows.

    ``data``: a DataFrame (``quasi_identifiers`` names the numeric columns to aggregate, default
    every column that is not an identifier; ``identifiers`` are dropped from the output; other
    columns pass through unchanged) or a numpy array (every column a quasi-identifier).
    ``method``: one of :data:`incrowd.METHODS`; ``params``: the method's own parameters (e.g.
    ``gamma`` for ``v-mdav``). ``scheduler`` (methods ``mona`` and ``mona-2d``): run on Dask,
    "local:N" or a scheduler address or a ``distributed.Client`` (:mod:`incrowd.distributed`;
    same groups as in process). ``bound``: also compute :func:`incrowd.lower_bound` of the
    quasi-identifiers, so the result's ``lower_bound`` and ``gap`` say how far it is at most from
    the best possible partition. Returns a :class:`MicroaggregationResult`; the aggregated data
    has been verified k-anonymous.

    Parameters
    ----------
    data : pandas.DataFrame or numpy.ndarray
        The table (or a numeric array, every column a quasi-identifier).
    k : int
        The smallest group size.
    method : str, default "mdav"
        A method name of :data:`incrowd.METHODS`.
    quasi_identifiers : str, sequence of str or None, default None
        The numeric columns to aggregate (None: every column that is not an identifier).
    identifiers : str, sequence of str or None, default None
        Columns dropped from the output.
    random_state : int or None, default None
        The seed of a randomized method.
    scheduler : str, distributed.Client or None, default None
        Run ``mona`` or ``mona-2d`` on Dask: ``"local:N"``, a scheduler address or a client.
    bound : bool, default False
        Also compute :func:`incrowd.lower_bound` (the result's ``lower_bound`` and ``gap``).
    **params
        The method's own parameters (``gamma`` for ``v-mdav``, ``rho`` for ``mona``, ...).

    Returns
    -------
    MicroaggregationResult
        The release (``table``, verified k-anonymous: ``verification``), the groups and the
        information loss.
    """
    if not isinstance(bound, bool):
        raise ParameterError(f"bound must be True or False; got {bound!r}")
    with compile_clock() as clock:
        result = _microaggregate(data, k, method, quasi_identifiers, identifiers, random_state,
                                 scheduler, params, clock, bound)
    result.compile_seconds = clock.seconds
    return result


def _fit_input(data, quasi_identifiers, identifiers) -> tuple[Any, list[str] | None, list[str]]:
    """(what the estimator fits, the quasi-identifiers, the identifiers): a DataFrame's roles
    resolved and its quasi-identifiers as numbers; an array as given, every column a
    quasi-identifier."""
    if isinstance(data, pd.DataFrame):
        if data.shape[0] == 0:
            raise DataError("the data has no rows")
        roles = resolve_roles(data, quasi_identifiers, identifiers)
        qis = list(roles.quasi_identifiers)
        values = numeric_matrix(data, qis)
        return pd.DataFrame(values, columns=qis, copy=False), qis, list(roles.identifiers)
    if quasi_identifiers is not None or identifiers is not None:
        raise ParameterError(
            "quasi_identifiers and identifiers name DataFrame columns; with an array every "
            "column is a quasi-identifier (pass a DataFrame to choose columns)"
        )
    return data, None, []


def _microaggregate(data, k, method, quasi_identifiers, identifiers, random_state, scheduler,
                    params, clock, bound=False) -> MicroaggregationResult:
    # each phase's timing leaves out what numba spent compiling in it, as ``seconds`` does
    t0, c0 = time.perf_counter(), clock.seconds
    estimator = make_estimator(method, k, random_state, **params)
    if scheduler is not None:
        check_distributed_method(method)
    fit_input, qis, ids = _fit_input(data, quasi_identifiers, identifiers)
    t1, c1 = time.perf_counter(), clock.seconds
    extra_timings: dict[str, float] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if scheduler is None:
            estimator.fit(fit_input)
        else:
            _fit_on_dask(estimator, fit_input, scheduler, extra_timings)
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=3)
    t2, c2 = time.perf_counter(), clock.seconds
    labels = estimator.labels_
    centroids = estimator.centroids_
    published = centroids[labels]
    if isinstance(data, pd.DataFrame):
        aggregated = data.drop(columns=ids)
        for j, name in enumerate(qis):
            aggregated[name] = published[:, j]
        mark_changed(aggregated, qis)  # a statistical file's labels no longer describe them
        checked = verify_k_anonymity(aggregated, qis, estimator.k)
    else:
        aggregated = published[:, 0] if np.ndim(data) == 1 else published
        checked = verify_k_anonymity(published, None, estimator.k)
    # an array's quasi-identifiers are its columns, named by position
    promise = Promise(tuple(qis) if qis is not None else tuple(range(published.shape[1])),
                      ReleaseCheck((KAnonymity(int(estimator.k)),)))
    verification = in_memory(promise, k_anonymity=checked.to_dict())
    t3, c3 = time.perf_counter(), clock.seconds
    if not (np.isfinite(centroids).all() and np.isfinite(estimator.information_loss_)):
        # the standardization is scale-safe, so this is a bug: never publish inf or NaN
        raise VerificationError("the aggregated data holds a value that is not finite; nothing is returned")
    if not verification.ok:
        raise VerificationError(
            f"the aggregated data is not {estimator.k}-anonymous (smallest class "
            f"{verification.min_class_size}); nothing is returned"
        )
    params_used = {p: v for p, v in estimator.get_params().items() if p not in ("k", "random_state")}
    if not isinstance(params_used.get("start", ""), str):
        params_used["start"] = type(params_used["start"]).__name__  # JSON-ready: an estimator by its name
    lower = None
    if bound:
        from ._bound import lower_bound

        t4, c4 = time.perf_counter(), clock.seconds
        lower = lower_bound(fit_input, estimator.k)
        extra_timings["lower_bound"] = (time.perf_counter() - t4) - (clock.seconds - c4)
    return MicroaggregationResult(
        method=method,
        k=int(estimator.k),
        params=params_used,
        labels=labels,
        information_loss=float(estimator.information_loss_),
        group_sizes=estimator.group_sizes_,
        table=aggregated,
        seconds=float(estimator.seconds_),
        quasi_identifiers=qis,
        identifiers=ids,
        centroids=centroids,
        verification=verification,
        timings={"validate": (t1 - t0) - (c1 - c0), "microaggregate": (t2 - t1) - (c2 - c1),
                 "aggregate_and_verify": (t3 - t2) - (c3 - c2), **extra_timings},
        warnings=[str(w.message) for w in caught],
        lower_bound=lower,
    )
