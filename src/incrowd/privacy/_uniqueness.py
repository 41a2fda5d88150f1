"""Population uniqueness estimated from a sample: Pitman, Zayatz, SNB and Dankar's rule.

A sample of n records is drawn from a population of N = n / f (f the sampling fraction). From
the sample's equivalence classes (c_k classes of k records, u classes in all) each model
estimates how many records of the population are unique in the population on the
quasi-identifiers, as ARX's ``RiskModelPopulationUniqueness`` does:

- Pitman (Hoshino 2001): the sample partition follows Pitman's sampling formula with
  parameters (theta, alpha), fitted by maximum likelihood; population uniques
  ``Gamma(theta + 1) / Gamma(theta + alpha) * N^alpha``. As in ARX, the search starts from
  Hoshino's moment guess and keeps theta >= 0 (alpha may be negative, as in ARX).
- Zayatz (1991): the share of sample uniques that are population uniques is
  ``(c_1 P_1(1)) / sum_k c_k P_k(1)``, P_k(1) the hypergeometric chance that a population class
  of k records (N records in all, n drawn) shows one record in the sample; population uniques
  ``c_1 * share / f``.
- SNB (slide negative binomial; Chen & Keller-McNulty 1998): population class sizes are
  1 + NegBin(alpha, beta) over K classes; alpha and beta solve the equations of the expected
  sample uniques and pairs, and population uniques are ``K * beta^alpha``; K is Shlosser's
  estimate of the population's classes (Haas et al. 1995, their D_Sh3).
- Dankar et al. (2012): with f <= 0.1 Pitman's estimate (Zayatz's when Pitman has none), else
  the smaller of Zayatz's and SNB's (Zayatz's when SNB has none).

Two places where ARX's code departs from the published formulas, and this module follows the
formulas: ARX multiplies the expected pairs of the SNB model by ``(1 - d)^(alpha + 2)`` where
the model divides by it (its own derivative function divides), and its Shlosser denominator
subtracts 1 per class size where D_Sh3 subtracts ``(1 - f)^k c_k``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import math
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from ..exceptions import ParameterError

__all__ = ["population_uniqueness"]

#: residual the fitted equations must reach, relative to the counts they match
_TOLERANCE = 1e-8


def population_uniqueness(sample_class_sizes, sampling_fraction: float) -> dict:
    """Estimated population uniques from a sample's class sizes, by ARX's four models.

    Parameters
    ----------
    sample_class_sizes : array-like or mapping
        The sample's equivalence classes: either the size of each class (one entry per class,
        e.g. the distinct ``fk`` of the classes), or frequencies of frequencies as a mapping
        ``{size: number of classes}`` or an array of shape (m, 2) with rows (size, classes).
    sampling_fraction : float
        n / N, the share of the population the sample holds, in (0, 1].

    Returns
    -------
    dict
        ``pitman``, ``zayatz``, ``snb``, ``dankar``: the estimated share of the population's
        records that are population uniques (None where the model has no estimate);
        ``pitman_uniques`` ... ``dankar_uniques``: the same as numbers of records;
        ``dankar_model``: the model Dankar's rule chose (``"pitman"``, ``"zayatz"``, ``"snb"``,
        or None when the sample has no uniques); the fitted parameters ``pitman_theta``,
        ``pitman_alpha``, ``snb_alpha``, ``snb_beta``, ``snb_classes``; and
        ``sample_size``, ``population_size``, ``sampling_fraction``, ``sample_uniques``.
    """
    sizes, counts = _histogram(sample_class_sizes)
    if isinstance(sampling_fraction, bool) or not isinstance(sampling_fraction, (int, float, np.integer, np.floating)) \
            or not (0.0 < float(sampling_fraction) <= 1.0):
        shown = sampling_fraction if isinstance(sampling_fraction, (bool, str)) or not isinstance(
            sampling_fraction, (int, float, np.integer, np.floating)) else float(sampling_fraction)
        raise ParameterError(f"sampling_fraction must be a number in (0, 1]; got {shown!r}")
    f = float(sampling_fraction)
    n = float(np.dot(sizes, counts))
    big_n = n / f
    c1 = float(counts[sizes == 1].sum())
    out: dict[str, float | str | None] = {
        "sample_size": int(n),
        "population_size": big_n,
        "sampling_fraction": f,
        "sample_uniques": int(c1),
        "pitman_theta": None, "pitman_alpha": None,
        "snb_alpha": None, "snb_beta": None, "snb_classes": None,
    }
    if c1 == 0:  # no sample unique: no population unique is sampled (ARX: every estimate 0)
        for name in ("pitman", "zayatz", "snb", "dankar"):
            out[name] = 0.0
            out[f"{name}_uniques"] = 0.0
        out["dankar_model"] = None
        return out
    if not math.isfinite(big_n):  # n / f beyond the largest float: no model has a population to scale to
        for name in ("pitman", "zayatz", "snb", "dankar"):
            out[name] = out[f"{name}_uniques"] = None
        out["dankar_model"] = None
        return out
    estimates = {
        "zayatz": zayatz_uniques(sizes, counts, f),
    }
    theta_alpha, estimates["pitman"] = pitman_uniques(sizes, counts, f)
    if theta_alpha is not None:
        out["pitman_theta"], out["pitman_alpha"] = theta_alpha
    snb_params, estimates["snb"] = snb_uniques(sizes, counts, f)
    if snb_params is not None:
        out["snb_alpha"], out["snb_beta"], out["snb_classes"] = snb_params
    if f <= 0.1:
        model = "pitman" if estimates["pitman"] is not None else "zayatz"
    elif estimates["snb"] is not None and not (estimates["zayatz"] is not None and estimates["zayatz"] < estimates["snb"]):
        model = "snb"
    else:
        model = "zayatz"
    estimates["dankar"] = estimates[model]
    for name, value in estimates.items():
        out[f"{name}_uniques"] = value
        out[name] = None if value is None else value / big_n
    out["dankar_model"] = model if estimates[model] is not None else None
    return out


def _histogram(sample_class_sizes) -> tuple[np.ndarray, np.ndarray]:
    """(sizes, number of classes of each size), sizes ascending and distinct."""
    try:
        if isinstance(sample_class_sizes, Mapping):
            a = np.array([[k, v] for k, v in sample_class_sizes.items()], dtype=np.float64).reshape(-1, 2)
        else:
            a = np.asarray(sample_class_sizes, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("sample_class_sizes must hold numbers (class sizes, or size and number of "
                             "classes)") from None
    if isinstance(sample_class_sizes, Mapping):
        pairs = a
    else:
        if a.ndim == 2 and a.shape[1] == 2:
            pairs = a
        elif a.ndim == 1:
            s, c = np.unique(a, return_counts=True)
            pairs = np.column_stack([s, c]).astype(np.float64) if a.size else np.zeros((0, 2))
        else:
            raise ParameterError("sample_class_sizes must be class sizes (1-D), a {size: classes} mapping, "
                                 f"or rows (size, classes); got an array of shape {a.shape}")
    if pairs.shape[0] == 0:
        raise ParameterError("sample_class_sizes is empty; the sample needs at least one class")
    if not np.all(np.isfinite(pairs)) or np.any(pairs != np.round(pairs)) or np.any(pairs[:, 0] < 1) \
            or np.any(pairs[:, 1] < 0):
        raise ParameterError("sample_class_sizes must hold whole class sizes >= 1 (and whole, non-negative "
                             "numbers of classes)")
    sizes, inverse = np.unique(pairs[:, 0], return_inverse=True)
    counts = np.bincount(inverse, weights=pairs[:, 1])
    keep = counts > 0
    if not keep.any():
        raise ParameterError("sample_class_sizes has no class")
    return sizes[keep], counts[keep]


# ---------------------------------------------------------------------------------------------
# Zayatz


def zayatz_uniques(sizes: np.ndarray, counts: np.ndarray, f: float) -> float | None:
    """Zayatz's estimate of the number of population uniques.

    P_k(1) / P_1(1) = k * C(N-k, n-1) / C(N-1, n-1) = k * prod_{i<k} (N-n+1-i) / (N-i), summed in
    logarithms (the binomials themselves overflow)."""
    n = float(np.dot(sizes, counts))
    big_n = max(float(math.floor(n / f + 1e-9)), n)  # ARX passes the population size as an integer
    kmax = int(sizes.max())
    i = np.arange(1.0, kmax)
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.log(np.maximum(big_n - n + 1.0 - i, 0.0)) - np.log(big_n - i)
    log_ratio = np.concatenate([[0.0], np.cumsum(steps)])  # log prod_{i<k}, k = 1..kmax
    ratio = sizes * np.exp(log_ratio[sizes.astype(np.int64) - 1])
    c1 = float(counts[sizes == 1].sum())
    total = float(np.dot(counts, ratio))
    if not (math.isfinite(total) and total > 0):
        return None
    return float(c1 * (c1 / total) / f)


# ---------------------------------------------------------------------------------------------
# scipy's compiled modules, without their packages
#
# Pitman's and SNB's fits solve their equations with scipy.optimize.root(method="hybr"), MINPACK's
# modified Powell method, and Pitman's likelihood needs digamma, trigamma and log-gamma from
# scipy.special. Importing scipy.optimize loads its whole toolbox (linear programming, global
# optimizers, sparse algebra) and scipy.special its array-API layer (which walks all of numpy):
# together about half a second, most of a one-shot ``incrowd risk`` on a survey-sized file. Both
# sit in extension modules of scipy that need nothing of the package around them; each is loaded
# by itself and called as the package calls it, so every answer is the package's bit for bit.
# Where this scipy keeps them elsewhere, the package itself runs.

#: ``root``'s defaults for method "hybr" (scipy.optimize._minpack_py._root_hybr)
_XTOL = 1.49012e-08
_FACTOR = 100
_NAME = "scipy.optimize._minpack"
_SPECIAL = "scipy.special._special_ufuncs"

_loaded: list[Any] = []
_special_loaded: list[Any] = []


def _minpack() -> Any | None:
    """scipy's MINPACK extension module, loaded once without its package; None where absent."""
    if not _loaded:
        _loaded.append(_extension(_NAME, ("_hybrd", "_hybrj")))
    return _loaded[0]


def _special() -> Any | None:
    """scipy.special's compiled ufuncs (digamma is its ``psi``, polygamma is built on its
    ``gamma`` and ``_zeta``), loaded once without the package; None where absent."""
    if not _special_loaded:
        _special_loaded.append(_extension(_SPECIAL, ("psi", "gammaln", "gamma", "_zeta")))
    return _special_loaded[0]


def _extension(name: str, needed: tuple[str, ...]) -> Any | None:
    """The extension module ``name`` of scipy, from its package's copy where that is loaded
    already, else from its file alone; None unless it has every attribute in ``needed``."""
    module: Any = sys.modules[name] if name in sys.modules else _load(name)
    return module if module is not None and all(hasattr(module, a) for a in needed) else None


def _load(name: str) -> Any | None:
    spec = importlib.util.find_spec("scipy")
    if spec is None or spec.origin is None:
        return None
    *folders, stem = name.split(".")[1:]
    folder = Path(spec.origin).parent.joinpath(*folders)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"{stem}{suffix}"
        if path.is_file():
            loader = importlib.machinery.ExtensionFileLoader(name, str(path))
            module_spec = importlib.util.spec_from_file_location(name, path, loader=loader)
            if module_spec is None:
                return None
            try:
                module = importlib.util.module_from_spec(module_spec)
            except ImportError:
                return None
            # the module registers itself under its package's name; left there, the package
            # imported later would find it without its attribute on the package
            sys.modules.pop(name, None)
            return module
    return None


def _function(own: str, public: str) -> Callable:
    """scipy.special's ``public`` function: the extension's ufunc ``own``, or the package's."""
    special = _special()
    if special is None:
        import scipy.special

        return getattr(scipy.special, public)
    return getattr(special, own)


def _digamma(x):
    return _function("psi", "digamma")(x)


def _gammaln(x):
    return _function("gammaln", "gammaln")(x)


def _trigamma(x):
    """``scipy.special.polygamma(1, x)``, by its own formula on the extension's ufuncs."""
    if _special() is None:
        return _function("", "polygamma")(1, x)
    gamma, zeta = _function("gamma", "gamma"), _function("_zeta", "zeta")
    n, x = np.asarray(1), np.asarray(x)
    return np.where(n == 0, _digamma(x), (-1.0) ** (n + 1) * gamma(n + 1.0) * zeta(n + 1, x))


class _Memo:
    """``fun`` returning (values, Jacobian), asked for each apart, evaluated once per point
    (scipy.optimize's ``MemoizeJac``, which ``root(jac=True)`` wraps around it)."""

    def __init__(self, fun: Callable) -> None:
        self.fun = fun
        self.x: np.ndarray | None = None
        self.value: Any = None
        self.jac: Any = None

    def _at(self, x: np.ndarray) -> None:
        if self.x is None or not np.all(x == self.x) or self.value is None or self.jac is None:
            self.x = np.asarray(x).copy()
            self.value, self.jac = self.fun(x)

    def __call__(self, x: np.ndarray) -> Any:
        self._at(x)
        return self.value

    def derivative(self, x: np.ndarray) -> Any:
        self._at(x)
        return self.jac


def _hybr_root(fun: Callable, x0, jac: bool = False) -> np.ndarray:
    """The ``x`` of ``scipy.optimize.root(fun, x0, jac=jac, method="hybr")`` (with ``jac``,
    ``fun`` returns the values and the Jacobian)."""
    x0 = np.asarray(x0, dtype=np.float64).flatten()
    minpack = _minpack()
    if minpack is None:
        from scipy.optimize import root

        return np.asarray(root(fun, x0, jac=jac, method="hybr").x)
    n = len(x0)
    if jac:
        memo = _Memo(fun)
        memo(x0[:n])  # root checks the shapes of both at x0 first: the same first evaluation
        memo.derivative(x0[:n])
        got = minpack._hybrj(memo, memo.derivative, x0, (), 1, 0, _XTOL, 100 * (n + 1), _FACTOR, None)
    else:
        values = np.atleast_1d(fun(x0[:n]))
        # root's difference step: the machine epsilon of what fun returns (float64 unless inexact)
        dtype: Any = values.dtype if np.issubdtype(values.dtype, np.inexact) else np.dtype(float)
        got = minpack._hybrd(fun, x0, (), 1, _XTOL, 200 * (n + 1), -10, -10, np.finfo(dtype).eps, _FACTOR, None)
    return np.asarray(got[0])


# ---------------------------------------------------------------------------------------------
# Pitman


#: sums of up to this many terms are summed term by term (the closed forms in digamma lose
#: digits to cancellation when theta / alpha is large)
_DIRECT = 200_000


def _pitman_terms(theta: float, alpha: float, sizes: np.ndarray, counts: np.ndarray):
    """(o1, o2, o3, o4, s2, s3, s4, d2, d4): the sums of the likelihood equations
    sum_{i<u} 1/(t+ia), sum_{i<n} 1/(t+i), sum_{i<u} i/(t+ia), sum_k c_k sum_{j<k} 1/(j-a), and
    of their derivatives sum 1/(t+ia)^2, sum i/(t+ia)^2, sum i^2/(t+ia)^2, sum_{i<n} 1/(t+i)^2,
    sum_k c_k sum_{j<k} 1/(j-a)^2."""
    n = float(np.dot(sizes, counts))
    u = float(counts.sum())
    if u - 1 <= _DIRECT or abs(alpha) < 1e-3:
        i = np.arange(1.0, u)
        w = 1.0 / (theta + i * alpha)
        o1, o3 = float(w.sum()), float((i * w).sum())
        w2 = w * w
        s2, s3, s4 = float(w2.sum()), float((i * w2).sum()), float((i * i * w2).sum())
    else:
        z = theta / alpha
        o1 = float((_digamma(z + u) - _digamma(z + 1.0)) / alpha)
        s2 = float((_trigamma(z + 1.0) - _trigamma(z + u)) / alpha**2)
        o3 = ((u - 1.0) - theta * o1) / alpha
        s3 = (o1 - theta * s2) / alpha
        s4 = ((u - 1.0) - 2.0 * theta * o1 + theta**2 * s2) / alpha**2
    if n - 1 <= _DIRECT:
        w = 1.0 / (theta + np.arange(1.0, n))
        o2, d2 = float(w.sum()), float((w * w).sum())
    else:
        o2 = float(_digamma(theta + n) - _digamma(theta + 1.0))
        d2 = float(_trigamma(theta + 1.0) - _trigamma(theta + n))
    big = sizes >= 2
    o4 = float(np.dot(counts[big], _digamma(sizes[big] - alpha) - _digamma(1.0 - alpha)))
    d4 = float(np.dot(counts[big], _trigamma(1.0 - alpha) - _trigamma(sizes[big] - alpha)))
    return o1, o2, o3, o4, s2, s3, s4, d2, d4


def pitman_equations(theta: float, alpha: float, sizes: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """The two maximum-likelihood equations of Pitman's sampling formula (zero at the fit):
    d logL / d theta and d logL / d alpha (Hoshino 2001)."""
    o1, o2, o3, o4 = _pitman_terms(theta, alpha, sizes, counts)[:4]
    return o1 - o2, o3 - o4


def _pitman_loglik(theta, alpha, sizes, counts):
    n = float(np.dot(sizes, counts))
    u = float(counts.sum())
    big = sizes >= 2
    return (float(np.sum(np.log(theta + np.arange(1.0, u) * alpha)))
            - (_gammaln(theta + n) - _gammaln(theta + 1.0))
            + float(np.dot(counts[big], _gammaln(sizes[big] - alpha) - _gammaln(1.0 - alpha))))


def pitman_uniques(sizes: np.ndarray, counts: np.ndarray, f: float):
    """((theta, alpha), number of population uniques) by Pitman's model, or (None, None)."""
    n = float(np.dot(sizes, counts))
    u = float(counts.sum())
    c1 = float(counts[sizes == 1].sum())
    c2 = float(counts[sizes == 2].sum()) or 1.0  # ARX's guess overestimates when there are no pairs
    if u >= n:  # every class a unique: the likelihood grows without bound
        return None, None
    c = c1 * (c1 - 1.0) / c2
    den = 2.0 * c1 * u + c1 * c - n * c
    t0 = (n * u * c - c1 * (n - 1.0) * (2.0 * u + c)) / den if den != 0 else 1.0
    a0 = (t0 * (c1 - n) + (n - 1.0) * c1) / (n * u)
    scale = max(1.0, u)

    def ok(x):
        # theta >= 0 as ARX keeps it; alpha < 1, and every theta + i alpha (i < u) positive
        return (np.all(np.isfinite(x)) and x[0] >= 0.0 and x[1] < 1.0 and x[1] != 0.0
                and x[0] + x[1] > 0.0 and x[0] + (u - 1.0) * x[1] > 0.0)

    def fun(x):
        if not ok(x):
            return np.array([1e10, 1e10]), np.eye(2)
        o1, o2, o3, o4, s2, s3, s4, d2, d4 = _pitman_terms(x[0], x[1], sizes, counts)
        return np.array([o1 - o2, o3 - o4]), np.array([[d2 - s2, -s3], [-s3, -s4 - d4]])

    fit = None
    starts = [(t0, a0)] if ok(np.array([t0, a0])) else []
    starts += [(1.0, 0.5), (max(t0, 1.0), 0.1), (10.0, 0.9)]
    for start in starts:
        x = _hybr_root(fun, np.array(start, dtype=np.float64), jac=True)
        if ok(x) and np.all(np.abs(fun(x)[0]) <= _TOLERANCE * scale):
            fit = x
            break
    if fit is None:  # maximise the likelihood directly; an interior maximum solves the equations
        from scipy.optimize import minimize  # rarely reached: the whole toolbox only then

        res = minimize(lambda x: (-_pitman_loglik(x[0], x[1], sizes, counts),
                                  -np.array(pitman_equations(x[0], x[1], sizes, counts))),
                       np.array([1.0, 0.5]), jac=True, method="L-BFGS-B",
                       bounds=[(0.0, 1e12), (1e-9, 1.0 - 1e-9)])
        if ok(res.x) and np.all(np.abs(pitman_equations(res.x[0], res.x[1], sizes, counts)) <= 1e-6 * scale):
            fit = res.x
    if fit is None:
        return None, None
    theta, alpha = float(fit[0]), float(fit[1])
    big_n = n / f
    log_estimate = float(_gammaln(theta + 1.0) - _gammaln(theta + alpha) + alpha * math.log(big_n))
    if not (math.isfinite(log_estimate) and log_estimate <= math.log(big_n)):  # ARX: within [0, N]
        return (theta, alpha), None
    return (theta, alpha), math.exp(log_estimate)


# ---------------------------------------------------------------------------------------------
# SNB


def shlosser_classes(sizes: np.ndarray, counts: np.ndarray, f: float) -> float:
    """Shlosser's estimate of the number of classes in the population (Haas et al. 1995, D_Sh3).

    D_Sh3 = u + c1 (num1 / den1) (num2 / den2)^2 with num1, den1 and den2 each a multiple of q
    (the sampling fraction). The q's are taken out first and ``(1 + q)^k - 1`` summed as
    ``expm1(k log1p(q))``: at q near 1e-16 (weights near 1e16) ``1 + q`` rounds to 1, den1 to 0,
    and the formula as written divides by zero; below that ``q * q`` underflows."""
    q = f
    u = float(counts.sum())
    c1 = float(counts[sizes == 1].sum())
    num2 = float(np.sum((1.0 - q) ** sizes * counts))
    if num2 == 0.0:  # the whole population is in the sample
        return u
    num1_q2 = float(np.sum(sizes * (1.0 - q * q) ** (sizes - 1.0) * counts))  # num1 / q^2
    den1_q = float(np.sum((1.0 - q) ** sizes * counts * np.expm1(sizes * np.log1p(q)) / q))  # den1 / q
    den2_q = float(np.sum(sizes * (1.0 - q) ** (sizes - 1.0) * counts))  # den2 / q
    with np.errstate(over="ignore"):
        return float(u + c1 * (num1_q2 / den1_q) * (num2 / den2_q) ** 2 / np.float64(q))


def snb_equations(alpha: float, beta: float, classes: float, f: float, c1: float, c2: float) -> tuple[float, float]:
    """Expected sample uniques and pairs under the SNB model minus the observed ones (zero at the
    fit; Chen & Keller-McNulty 1998)."""
    d = (1.0 - f) * (1.0 - beta)
    e1 = classes * f * (beta / (1.0 - d)) ** alpha * (alpha * d / (1.0 - d) + 1.0)
    e2 = classes * alpha * beta**alpha * f * f * (1.0 - beta) / 2.0 * (2.0 - (1.0 - alpha) * d) / (1.0 - d) ** (alpha + 2.0)
    return float(e1 - c1), float(e2 - c2)


def snb_uniques(sizes: np.ndarray, counts: np.ndarray, f: float):
    """((alpha, beta, K), number of population uniques) by the SNB model, or (None, None)."""
    c1 = float(counts[sizes == 1].sum())
    c2 = float(counts[sizes == 2].sum())
    if c2 == 0.0:  # the pairs equation has no solution with alpha > 0 and beta < 1
        return None, None
    k = shlosser_classes(sizes, counts, f)
    if not (np.isfinite(k) and k > 0):
        return None, None

    def ok(x):
        return np.all(np.isfinite(x)) and x[0] > 0.0 and 0.0 < x[1] < 1.0

    def fun(x):
        if not ok(x):
            return [1e10, 1e10]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # a trial step far out: rejected
            return list(snb_equations(x[0], x[1], k, f, c1, c2))

    scale = max(1.0, c1, c2)
    for start in ((1.0, 0.5), (0.5, 0.1), (2.0, 0.9), (0.1, 0.01), (5.0, 0.5)):
        x = _hybr_root(fun, np.array(start))
        if ok(x) and np.all(np.abs(fun(x)) <= _TOLERANCE * scale):
            alpha, beta = float(x[0]), float(x[1])
            estimate = k * beta**alpha
            big_n = float(np.dot(sizes, counts)) / f
            if not (0.0 <= estimate <= big_n):
                return (alpha, beta, k), None
            return (alpha, beta, k), float(estimate)
    return None, None
