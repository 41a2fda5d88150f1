"""Compile ahead: run each method on small synthetic data so numba compiles (and caches) the
kernels a real call will use, once, before the user's first real run.

A method picks its kernels by the data's shape: row counts past a threshold switch to threaded
or indexed passes, and some passes exist only for few columns. The shapes below cross each
threshold the methods have (more rows than the threaded and indexed passes need, more groups
than ONA's tree needs at k=5, few and many columns), with the repetition parameters cut down:
they change how often a kernel runs, never which one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

#: (rows, columns) of the synthetic data each method is run on
SHAPES: tuple[tuple[int, int], ...] = ((40, 2), (3_000, 3), (3_000, 8), (20_000, 3))

#: parameters that keep the warm-up short without changing the kernels
_QUICK = {
    "ona": {"runs": 2, "max_rounds": 2},
    "ona-star": {"max_rounds": 2},
    "mona": {"max_rounds": 2},
    "mona-2d": {"max_rounds": 2},
    # a few rounds reach the perturbation kernel on the small shapes (a round changing nothing
    # comes first there), and the whole search on 20,000 rows stays short
    "refine": {"max_rounds": 4},
}
#: the extra targets beyond the methods: the kernels of those commands (``publish`` and ``risk`` on
#: a file past the numpy twins' size, as the web UI and the API always run them)
EXTRA = ("incremental", "generalization", "publish", "risk")
#: the methods that run ONA* (``refine`` starts from it). ONA* takes its fast kernel only once that
#: is compiled or cached (before, data the reference finishes quickly take the reference), so the
#: warm-up compiles the fast kernel itself wherever a real call on a warm machine would take it
_ONA_STAR = ("ona-star", "mona", "mona-2d", "refine")


@dataclass
class Warmed:
    target: str
    compile_seconds: float = 0.0
    seconds: float = 0.0
    compiled: int = 0
    steps: list[str] = field(default_factory=list)


def targets(names: Sequence[str] | None = None) -> list[str]:
    """The warm-up targets: every method and the incremental kernels, or those named."""
    from ..exceptions import ParameterError
    from ..microaggregation import METHODS

    known = list(METHODS) + list(EXTRA)
    if not names:
        return known
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ParameterError(f"--methods: unknown name(s) {', '.join(map(repr, unknown))}; known: "
                             f"{', '.join(known)}")
    return list(dict.fromkeys(names))


def steps(target: str) -> list[tuple[int, int]]:
    return [SHAPES[0], SHAPES[1]] if target in EXTRA else list(SHAPES)


def warm(names: Sequence[str] | None = None,
         on_step: Callable[[str, int, int], None] | None = None) -> list[Warmed]:
    """Compile the kernels of each target; ``on_step(target, rows, columns)`` after each run."""
    from .._runtime import compile_clock

    out = []
    for target in targets(names):
        report = Warmed(target)
        for rows, cols in steps(target):
            with compile_clock() as clock:
                t0 = time.perf_counter()
                _run(target, rows, cols)
                report.seconds += time.perf_counter() - t0
            report.compile_seconds += clock.seconds
            report.compiled += clock.compiles
            report.steps.append(f"{rows}x{cols}")
            if on_step is not None:
                on_step(target, rows, cols)
        out.append(report)
    return out


def _data(rows: int, cols: int):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(rows * 31 + cols)
    return pd.DataFrame(rng.normal(size=(rows, cols)), columns=[f"q{j}" for j in range(cols)])


def _run(target: str, rows: int, cols: int) -> None:
    # the targets that run a whole command's path rather than one microaggregation method
    whole = {"incremental": _run_incremental, "generalization": _run_generalization, "publish": _run_publish,
             "risk": _run_risk}
    if target in whole:
        whole[target](rows, cols)
        return
    from ..microaggregation import microaggregate

    data = _data(rows, cols)
    if target in _ONA_STAR:
        _compile_fast_ona_star(data)
    if target == "mdav" and (rows, cols) == SHAPES[0]:
        _compile_mdav_variants(data)
    params = dict(_QUICK.get(target, {}))
    if target == "refine" and (rows, cols) == SHAPES[0]:
        # the lower bound's kernels, which ``incrowd demo`` runs: the same types on every shape,
        # and the bound itself takes a minute on the larger ones
        params["bound"] = True
    microaggregate(data, 5, target, random_state=0, **params)


def _compile_fast_ona_star(data) -> None:
    import numpy as np

    from ..microaggregation import SMALL_CLUSTERS, ona_star_fast_labels
    from ..microaggregation.ona.ona import use_tree_star

    X = np.ascontiguousarray(data.to_numpy(dtype=np.float64))
    if X.shape[0] // 5 >= SMALL_CLUSTERS:
        ona_star_fast_labels(X, 5, 2, use_tree_star(X.shape[0], X.shape[1], 5))


def _compile_mdav_variants(data) -> None:
    """MDAV's screened kernel in each variant its dispatch picks, called directly on the small
    data (the variant is the kernel's argument types, never the row count): serial, which a
    file of 4,096 to 16,383 rows takes (a survey file's numeric columns, a large class of
    ``publish``, ``incremental plan``'s timing) and any size while another thread holds the
    threads; threaded; and both on int8 codes, which files from 500,000 rows take. The shapes
    reach only the plain scan (fewer rows) and the threaded int16 variant. (Files of up to three
    columns take the k-d tree, compiled ahead with the package: nothing to compile here.)"""
    import numpy as np

    from ..microaggregation import mdav_fast_labels

    X = np.ascontiguousarray(data.to_numpy(dtype=np.float64))
    for narrow in (False, True):
        mdav_fast_labels(X, 5, -1, 1, narrow)
        mdav_fast_labels(X, 5, 0, 2, narrow)


def _run_incremental(rows: int, cols: int) -> None:
    """A base and one add per strategy in a temporary state file, as ``incremental add`` runs."""
    import tempfile
    import warnings
    from pathlib import Path

    from ..incremental import STRATEGIES, IncrementalMicroaggregation
    from ..io import DATABASE_SUFFIX

    data = _data(rows + 2 * max(rows // 10, 5), cols)
    base, late = data.iloc[:rows], data.iloc[rows:]
    with tempfile.TemporaryDirectory(prefix="incrowd-warmup-") as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = Path(folder) / f"warmup{DATABASE_SUFFIX}"
        session = IncrementalMicroaggregation.from_base(base, state, 5, method="mdav")
        chunk = max(len(late) // len(STRATEGIES), 1)
        for i, strategy in enumerate(STRATEGIES):
            part = late.iloc[i * chunk:(i + 1) * chunk]
            if len(part):
                session.add(part, strategy)


def _run_generalization(rows: int, cols: int) -> None:
    """A lattice over interval hierarchies (with and without a sensitive column), a negotiation
    and a generalization: the kernels ``lattice build``, ``negotiate`` and ``generalize`` use."""
    import numpy as np
    import pandas as pd

    from ..generalization import Lattice, generalize, local_suppression, negotiate
    from ..privacy import DistinctL

    rng = np.random.default_rng(rows + cols)
    names = [f"q{j}" for j in range(max(cols, 2))]
    frame = pd.DataFrame({name: rng.integers(0, 100, rows) for name in names})
    frame["s"] = rng.integers(0, 4, rows)
    intervals = {name: [10, 20] for name in names}
    for sensitive in (None, "s"):
        lattice = Lattice.build(frame, names, intervals=intervals, sensitive=sensitive)
        negotiate(lattice, k=3, max_suppression="5%")
        if sensitive is not None:
            negotiate(lattice, models=[DistinctL(2)], max_suppression="5%")
    generalize(frame, {names[0]: 1, names[1]: 1}, k=3,
               intervals={name: intervals[name] for name in names[:2]})
    # cell suppression (``publish`` with ``suppression = "cells"``, the API), both meanings of a
    # missing value, on keys with missing values as a survey file has them
    keys = frame[names[:3]].astype("float64") % 7
    keys.iloc[::11, 0] = np.nan
    for missing_matches in ("any", "itself"):
        local_suppression(keys, list(keys.columns), 3, missing_matches=missing_matches)


def _run_publish(rows: int, cols: int) -> None:
    """A release as ``publish`` makes one: categorical columns generalized over interval
    hierarchies, a numeric one microaggregated within their classes, with suppression; then
    with l-diversity and t-closeness on a sensitive column (their counts and the merge of a
    class's groups below l or above t are kernels of their own)."""
    import numpy as np
    import pandas as pd

    from ..publishing import publish

    rng = np.random.default_rng(rows * 7 + cols)
    names = [f"q{j}" for j in range(max(cols, 2))]
    frame = pd.DataFrame({name: rng.integers(0, 100, rows) for name in names})
    frame["x"] = rng.normal(size=rows)
    columns: dict = {"x": "numeric", **{name: {"role": "categorical", "intervals": [10, 20]} for name in names}}
    privacy = {"k": 3, "max_suppression": "5%", "allow_full_suppression": True}
    publish(frame, {"privacy": privacy, "columns": columns})
    frame["s"] = rng.integers(0, 4, rows)
    for model in ({"l": 2}, {"t": 0.3}):
        publish(frame, {"privacy": {**privacy, **model}, "columns": {**columns, "s": "sensitive"}})


def _run_risk(rows: int, cols: int) -> None:
    """The risk measures with weights and households: SUDA2's search and the sample risk."""
    import numpy as np
    import pandas as pd

    from ..reporting import risk

    rng = np.random.default_rng(rows * 11 + cols)
    names = [f"q{j}" for j in range(max(cols, 3))]
    frame = pd.DataFrame({name: rng.integers(0, 5, rows) for name in names})
    frame["w"] = rng.uniform(1.0, 50.0, rows)
    frame["h"] = np.arange(rows) // 3
    risk(frame, names, weight="w", household="h")
