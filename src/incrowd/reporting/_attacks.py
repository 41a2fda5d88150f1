"""Attack-based disclosure risk: anonymeter's singling-out, linkability and inference attacks.

The attacks and their risk figures are anonymeter's (Giomi, Boenisch, Wehmeyer and Tasnadi,
"A Unified Framework for Quantifying Privacy Risk in Synthetic Data", PoPETs 2023; package
``anonymeter`` 1.0, ``anonymeter/evaluators/*.py`` and ``anonymeter/stats/confidence.py``). This
module only prepares the tables for them (control split, column names and types, seeds) and turns
their results into a JSON-ready dict.

Each attack is run three times: on the *training* rows (those the release was made from), on
*control* rows (original rows the release was not made from) and as a random-guessing baseline.
The risk is the attack's excess success over the control attack,
``(attack_rate - control_rate) / (1 - control_rate)``, clipped to [0, 1], with a confidence
interval propagated from the Wilson score intervals of both rates
(``anonymeter/stats/confidence.py``: ``success_rate``, ``residual_success``, ``bind_value``).
"""

from __future__ import annotations

import logging
import threading
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ..exceptions import DataError, IncrowdError, ParameterError, name_list

#: anonymeter keeps its random generators in module state, and pandas' ``DataFrame.sample`` draws
#: from numpy's global one: runs that seed them must not interleave.
_SEED_LOCK = threading.Lock()

_HELD_OUT_NOTE = (
    "the release was made from every original row, so no original row is truly unseen: "
    "{n_control} original rows (control_fraction={fraction}) were held out as control and the "
    "release rows at the same positions were dropped; the attacks measure the remaining release "
    "({n_training} rows) against its own original rows, with the held-out rows as control "
    "(where the held-out rows shaped the remaining release, e.g. through group means, the excess "
    "risk over control may be understated)"
)
_GIVEN_NOTE = ("control rows given by the caller, assumed not used to make the release; the "
               "attacks measure the whole release ({n_training} rows) against the whole original")


def attacks(original: pd.DataFrame, release: pd.DataFrame, *, quasi_identifiers: list[str],
            secret: str | None = None, control: pd.DataFrame | None = None,
            control_fraction: float = 0.3, n_attacks: int = 500, random_state: int | None = 0,
            confidence: float = 0.95, n_cols: int = 3, max_attempts: int | None = None) -> dict:
    """Singling-out, linkability and inference risk of ``release`` by anonymeter's attacks.

    Rows align by position: row i of ``release`` was made from row i of ``original``.

    Control rows. anonymeter's protocol needs original rows that were *not* used to make the
    release, to tell what the release gives away from what anyone would guess from the
    population. When ``control`` is given, its rows are that sample and the whole release is
    attacked. Otherwise (incrowd makes a release from every row) a random ``control_fraction``
    of the original rows is held out as control *and the release rows at the same positions are
    dropped*, so the attacked release covers only the remaining training rows: the figures
    measure that remaining release. In an aggregated release the held-out rows still shaped the
    remaining rows (a group mean includes them), so the control attack can do better than on
    truly unseen rows and the excess risk may be understated; pass real control rows (a sample
    kept out of the release) where that matters. ``result["split"]`` says which was done.

    Attacks (anonymeter's evaluators, on the quasi-identifiers plus ``secret`` when given):

    - ``singling_out``: ``SinglingOutEvaluator`` in ``univariate`` and ``multivariate`` mode
      (predicates on ``n_cols`` columns); a query that singles out one row of the deduplicated
      release succeeds when it singles out one row of the deduplicated original. The
      deduplicated training and control sides are first cut to the same size (a random sample
      of the larger one), because anonymeter's own size correction is slow and can fail to
      converge; ``singling_out["n_rows_each"]`` gives that size.
    - ``linkability``: ``LinkabilityEvaluator`` with the quasi-identifiers split into two halves
      (first half, second half) as the attacker's two auxiliary tables; needs two
      quasi-identifiers (else ``None``).
    - ``inference``: ``InferenceEvaluator`` guessing ``secret`` from the quasi-identifiers
      (nearest release row by anonymeter's Gower-like distance; a numeric secret counts as
      guessed within 5 % relative error); ``None`` without ``secret``.

    Each attack gives ``risk`` and ``ci`` (at ``confidence``), the attack, control and baseline
    success rates with their error bounds, and the counts. ``n_attacks`` is capped at the
    number of training and control rows (the evaluators sample targets without replacement).

    Column types. A column numeric in the original, the release and the control is compared as
    numbers (anonymeter scales it by its range); any other column is compared as text labels on
    all sides, so a generalized value (``[30, 35)``, ``*``) matches only an equal label: the
    attacks then model an intruder who uses exact matches only on that column.

    Determinism. With an integer ``random_state`` the result is a function of the inputs:
    the split, numpy's global generator (which ``DataFrame.sample`` draws from when anonymeter
    picks targets), anonymeter's module generator for singling-out queries and its baseline
    link generator are seeded for the duration of each evaluator and restored afterwards. These
    are process-wide: numpy's global generator is re-seeded while the call runs, so another
    thread drawing from it at the same time sees seeded values (and perturbs this result).
    ``random_state=None`` leaves all of them unseeded.

    ``max_attempts`` caps the multivariate singling-out attacker's query attempts; ``None``
    means ``max(4 * n_attacks, 1000)``. Each attempt is one pandas query over the release
    (milliseconds), and anonymeter's default of ten million attempts runs for hours on a release
    that has few singling-out predicates: on Adult k = 5 fewer than one attempt in 400 succeeds
    even on the raw data, so the cap bounds the time and the attack reports fewer queries than
    ``n_attacks`` (its success is still counted out of ``n_attacks``, so the risk is then a lower
    bound). ``result["warnings"]`` lists what anonymeter warned about (fewer queries than asked,
    an attack no better than the baseline).

    Raises :class:`DataError` for unknown columns, a release whose row count differs from the
    original's, or too few rows to split; :class:`ParameterError` for bad parameters;
    :class:`IncrowdError` when anonymeter is not installed.
    """
    qis = _check_parameters(quasi_identifiers, secret, control_fraction, n_attacks, random_state,
                            confidence, n_cols, max_attempts)
    columns = qis + ([secret] if secret is not None else [])
    _check_frames(original, release, control, columns)

    train, syn, ctrl, split = _split(original, release, control, columns, control_fraction,
                                     random_state)
    safe = {name: f"c{i}" for i, name in enumerate(columns)}
    train, syn, ctrl = _harmonize([f.rename(columns=safe) for f in (train, syn, ctrl)])
    n = min(n_attacks, len(train), len(ctrl))
    attempts = max_attempts if max_attempts is not None else max(4 * n_attacks, 1000)

    from importlib.metadata import version

    try:
        from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
    except ImportError as exc:
        raise IncrowdError(
            "the attacks need the anonymeter package (>= 1.0); install it with "
            "pip install --no-deps 'anonymeter>=1.0,<1.1' (its numpy<1.27 pin would downgrade numpy, "
            "and it runs on current numpy)") from exc
    _cache_kernels()

    messages: list[str] = []
    result: dict[str, Any] = {
        "method": "anonymeter",
        "anonymeter_version": version("anonymeter"),
        "quasi_identifiers": qis,
        "secret": secret,
        "confidence": float(confidence),
        "random_state": None if random_state is None else int(random_state),
        "n_attacks_requested": int(n_attacks),
        "n_attacks": int(n),
        "split": split,
    }

    cols = max(1, min(n_cols, len(columns)))
    so_train, so_ctrl = _same_size(train, ctrl, random_state)
    singling: dict[str, Any] = {}
    for i, mode in enumerate(("univariate", "multivariate")):
        with _seeded(random_state, 1 + i), _captured(messages, f"singling_out {mode}"):
            ev = SinglingOutEvaluator(ori=so_train, syn=syn, n_attacks=n, n_cols=cols, control=so_ctrl,
                                      max_attempts=attempts)
            ev.evaluate(mode=mode)
            singling[mode] = _summary(ev, confidence)
        if mode == "multivariate":
            singling[mode]["n_cols"] = cols
    singling["n_rows_each"] = len(so_train)
    singling["max_attempts"] = int(attempts)
    result["singling_out"] = singling

    if len(qis) >= 2:
        half = (len(qis) + 1) // 2
        aux = ([safe[c] for c in qis[:half]], [safe[c] for c in qis[half:]])
        with _seeded(random_state, 3), _captured(messages, "linkability"):
            ev = LinkabilityEvaluator(ori=train[[safe[c] for c in qis]], syn=syn[[safe[c] for c in qis]],
                                      aux_cols=aux, n_attacks=n, n_neighbors=1,
                                      control=ctrl[[safe[c] for c in qis]])
            ev.evaluate(n_jobs=-2)
            link = _summary(ev, confidence)
        link["aux_cols"] = [qis[:half], qis[half:]]
        result["linkability"] = link
    else:
        result["linkability"] = None

    if secret is not None:
        with _seeded(random_state, 4), _captured(messages, "inference"):
            ev = InferenceEvaluator(ori=train, syn=syn, aux_cols=[safe[c] for c in qis],
                                    secret=safe[secret], n_attacks=n, control=ctrl)
            ev.evaluate(n_jobs=-2)
            inf = _summary(ev, confidence)
        inf["aux_cols"] = list(qis)
        inf["regression"] = bool(pd.api.types.is_numeric_dtype(train[safe[secret]]))
        result["inference"] = inf
    else:
        result["inference"] = None

    names = {v: k for k, v in safe.items()}
    result["warnings"] = [_rename_text(m, names) for m in dict.fromkeys(messages)]
    return result


def _check_parameters(quasi_identifiers, secret, control_fraction, n_attacks, random_state,
                      confidence, n_cols, max_attempts) -> list[str]:
    if isinstance(quasi_identifiers, str):
        quasi_identifiers = [quasi_identifiers]
    qis = list(quasi_identifiers)
    if not qis:
        raise ParameterError("quasi_identifiers must name at least one column; got none")
    if len(set(qis)) != len(qis):
        raise ParameterError(f"quasi_identifiers must not repeat a column; got {qis}")
    if secret is not None and secret in qis:
        raise ParameterError(f"secret {secret!r} is also a quasi-identifier; the attacker is given "
                             "the quasi-identifiers and guesses the secret")
    if not _is_int(n_attacks) or n_attacks < 1:
        raise ParameterError(f"n_attacks must be an integer >= 1; got {n_attacks!r}")
    if not _is_int(n_cols) or n_cols < 1:
        raise ParameterError(f"n_cols must be an integer >= 1; got {n_cols!r}")
    if max_attempts is not None and (not _is_int(max_attempts) or max_attempts < 1):
        raise ParameterError(f"max_attempts must be an integer >= 1 or None; got {max_attempts!r}")
    if random_state is not None and (not _is_int(random_state) or not 0 <= random_state < 2**32):
        raise ParameterError(f"random_state must be an integer in [0, 2**32) or None; got {random_state!r}")
    if not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ParameterError(f"confidence must be a number in (0, 1); got {confidence!r}")
    if not isinstance(control_fraction, (int, float)) or not 0 < control_fraction < 1:
        raise ParameterError(f"control_fraction must be a number in (0, 1); got {control_fraction!r}")
    return qis


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_frames(original, release, control, columns: list[str]) -> None:
    for name, frame in (("original", original), ("release", release), ("control", control)):
        if frame is None:
            continue
        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"{name} must be a pandas DataFrame; got {type(frame).__name__}")
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise DataError(f"unknown column(s) {name_list(missing)} in the {name}; it has {name_list(frame.columns)}")
    if len(release) != len(original):
        raise DataError(f"the release has {len(release)} rows and the original {len(original)}; "
                        "rows must align by position (row i of the release made from row i of "
                        "the original), remove suppressed rows from both first")


def _split(original, release, control, columns, control_fraction, random_state):
    original = original[columns].reset_index(drop=True)
    release = release[columns].reset_index(drop=True)
    if control is not None:
        ctrl = control[columns].reset_index(drop=True)
        if len(original) < 1 or len(ctrl) < 1:
            raise DataError(f"the attacks need at least one original and one control row; got "
                            f"{len(original)} original and {len(ctrl)} control rows")
        split = {"control": "given", "n_original": len(original), "n_training": len(original),
                 "n_control": len(ctrl), "control_fraction": None,
                 "note": _GIVEN_NOTE.format(n_training=len(original))}
        return original, release, ctrl, split
    n = len(original)
    n_control = int(round(control_fraction * n))
    if n_control < 1 or n - n_control < 1:
        raise DataError(f"cannot hold out control_fraction={control_fraction} of {n} original rows "
                        "as control and keep training rows; give more rows or a control table")
    order = np.random.default_rng(random_state).permutation(n)
    held, kept = np.sort(order[:n_control]), np.sort(order[n_control:])
    split = {"control": "held_out", "n_original": n, "n_training": int(kept.size),
             "n_control": int(held.size), "control_fraction": float(control_fraction),
             "note": _HELD_OUT_NOTE.format(n_control=int(held.size), fraction=control_fraction,
                                           n_training=int(kept.size))}
    return (original.iloc[kept].reset_index(drop=True), release.iloc[kept].reset_index(drop=True),
            original.iloc[held].reset_index(drop=True), split)


def _cache_kernels() -> None:
    """Let numba cache anonymeter's nearest-neighbour kernels on disk.

    anonymeter 1.0 compiles them without ``cache=True``, which costs every process several
    seconds before the first linkability or inference attack.
    """
    try:
        from anonymeter.neighbors import mixed_types_kneighbors as kn

        for kernel in (kn.gower_distance, kn._nearest_neighbors):
            if type(getattr(kernel, "_cache", None)).__name__ == "NullCache":
                kernel.enable_caching()
    except Exception:  # noqa: BLE001 - no cache folder, other numba: compile as anonymeter does
        pass


def _same_size(train: pd.DataFrame, ctrl: pd.DataFrame, random_state) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both sides deduplicated, the larger cut to a random sample of the smaller's size.

    Whether a query singles out a row depends on how many rows it is tried on; for sides of
    different sizes anonymeter 1.0 fits a correction curve (``fit_correction_term``), which
    costs fifty more passes of every query and on some data fails to converge (scipy's
    ``curve_fit`` raises). Equal sizes need no correction.
    """
    # anonymeter deduplicates both sides before comparing their sizes
    train = train.drop_duplicates().reset_index(drop=True)
    ctrl = ctrl.drop_duplicates().reset_index(drop=True)
    m = min(len(train), len(ctrl))
    rng = np.random.default_rng(None if random_state is None else [random_state, 5])

    def cut(frame: pd.DataFrame) -> pd.DataFrame:
        if len(frame) == m:
            return frame
        return frame.iloc[np.sort(rng.choice(len(frame), size=m, replace=False))].reset_index(drop=True)

    return cut(train), cut(ctrl)


def _harmonize(frames: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Numeric where every side is numeric, else text labels everywhere.

    anonymeter requires the same column types on all sides and evaluates its singling-out
    queries as pandas expressions, where a value's Python type decides how it is quoted.
    """
    out = [pd.DataFrame(index=f.index) for f in frames]
    for col in frames[0].columns:
        numeric = all(pd.api.types.is_numeric_dtype(f[col]) and not pd.api.types.is_bool_dtype(f[col])
                      for f in frames)
        for o, f in zip(out, frames):
            s = f[col]
            if numeric:
                o[col] = s.astype(np.float64)
            else:
                values = s.astype(object)
                mask = values.isna().to_numpy()
                labels = np.array([None if m else str(v) for v, m in zip(values, mask)], dtype=object)
                labels[mask] = np.nan
                o[col] = pd.Series(labels, index=f.index, dtype=object)
    return out


@contextmanager
def _seeded(random_state: int | None, stream: int) -> Iterator[None]:
    if random_state is None:
        yield
        return
    from anonymeter.evaluators import linkability_evaluator as lk
    from anonymeter.evaluators import singling_out_evaluator as so

    with _SEED_LOCK:
        state = np.random.get_state()
        saved = {m: (m.__dict__.get("rng"), m.__dict__.get("_random_links")) for m in (so, lk)}
        np.random.seed([random_state, stream])
        if hasattr(so, "rng"):
            so.rng = np.random.default_rng([random_state, stream, 1])
        if hasattr(lk, "_random_links"):
            gen = np.random.default_rng([random_state, stream, 2])

            # anonymeter 1.0 draws the baseline links from a fresh unseeded generator
            def _random_links(n_synthetic: int, n_attacks: int, n_neighbors: int) -> np.ndarray:
                return np.array([gen.choice(n_synthetic, size=n_neighbors, replace=False)
                                 for _ in range(n_attacks)])

            lk._random_links = _random_links
        try:
            yield
        finally:
            np.random.set_state(state)
            for module, (rng, links) in saved.items():
                if rng is not None:
                    module.rng = rng
                if links is not None:
                    module._random_links = links


class _Collect(logging.Handler):
    def __init__(self, sink: list[str], label: str):
        super().__init__(logging.WARNING)
        self.sink, self.label = sink, label

    def emit(self, record: logging.LogRecord) -> None:
        self.sink.append(f"{self.label}: {record.getMessage()}")


@contextmanager
def _captured(sink: list[str], label: str) -> Iterator[None]:
    """anonymeter's warnings and warning logs go to the result instead of stderr."""
    logger = logging.getLogger("anonymeter")
    handler = _Collect(sink, label)
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        sink.extend(f"{label}: {w.message}" for w in caught)
    finally:
        logger.removeHandler(handler)


def _summary(evaluator, confidence: float) -> dict:
    res = evaluator.results(confidence_level=confidence)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # risk() rebuilds the results: the same warnings again
        risk = evaluator.risk(confidence_level=confidence)

    def rate(r) -> dict | None:
        return None if r is None else {"value": float(r.value), "error": float(r.error)}

    return {
        "risk": float(risk.value),
        "ci": [float(risk.ci[0]), float(risk.ci[1])],
        "attack_rate": rate(res.attack_rate),
        "control_rate": rate(res.control_rate),
        "baseline_rate": rate(res.baseline_rate),
        "n_attacks": int(res.n_attacks),
        "n_success": int(res.n_success),
        "n_control": None if res.n_control is None else float(res.n_control),
        "n_baseline": int(res.n_baseline),
    }


def _rename_text(text: str, names: dict[str, str]) -> str:
    import re

    return re.sub(r"\bc\d+\b", lambda m: names.get(m.group(0), m.group(0)), text)
