"""Microaggregation of the perturbed numeric columns on their own: groups of at least k alike
rows, each value replaced by its group's mean or median (sdcMicro's ``microaggregation`` of
numVars)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._native import mdav_labels
from .._runtime import METHOD_NAMES
from .._runtime import lazy as _lazy
from .._runtime import small as _small
from ..values import Standardizer
from ._base import Method, Outcome, Param, is_bool, is_integer, numbers, one_of

# the microaggregation package is loaded by the first step that groups rows with it, not by
# every spec or call that only names the perturbation methods; a small MDAV in a process that
# has not started numba runs the compiled scan alone (``_plain_mdav_labels``), without the
# estimator's measures (numba's kernels on a large file)
make_estimator = _lazy.function("incrowd.microaggregation", "make_estimator")


class Microaggregation(Method):
    key = "microaggregation"
    sdcmicro = "microaggregation"
    summary = "replaces each value by the mean or median of a group of at least k alike rows"
    draws = True
    aliases = {name: {"method": name} for name in METHOD_NAMES}
    params = {
        "k": Param("an integer >= 2", 3, is_integer(2), "the smallest group (sdcMicro's aggr)"),
        # the step's own method key names the perturbation method: a microaggregation method
        # is given there instead (method = "mondrian"), see ``aliases``
        "method": Param("text", "mdav", one_of(*METHOD_NAMES),
                        "set by the step's method: \"microaggregation\" is mdav, sdcMicro's; any incrowd "
                        "microaggregation method (incrowd.METHODS) names itself, e.g. method = \"mondrian\""),
        "aggregate": Param("text", "mean", one_of("mean", "median"),
                           "what replaces a group's values (sdcMicro's measure)", ("mean", "median")),
        "jointly": Param("true or false", True, is_bool,
                         "true: the columns grouped together (on their standardized values); false: each column "
                         "grouped on its own"),
    }

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Outcome:
        X = np.column_stack([numbers(frame, name, "microaggregation") for name in self.columns])
        seed = int(rng.integers(0, 2**32 - 1))
        out = X.copy()
        groups = 0
        sets = [list(range(X.shape[1]))] if self.jointly else [[j] for j in range(X.shape[1])]
        for columns in sets:
            part = X[:, columns]
            missing = np.isnan(part)
            # rows alike in which values they miss are grouped together, on the values they have
            patterns = missing.astype(np.int64) @ (np.int64(1) << np.arange(missing.shape[1], dtype=np.int64))
            for pattern in np.unique(patterns):
                rows = np.flatnonzero(patterns == pattern)
                present = np.array([c for c, m in zip(columns, missing[rows[0]]) if not m], dtype=np.int64)
                if present.size == 0 or rows.size < self.k:
                    continue
                labels = _labels(X[np.ix_(rows, present)], self.method, self.k, seed)
                groups += int(labels.max()) + 1
                values = pd.DataFrame(X[np.ix_(rows, present)]).groupby(labels)
                summary = values.transform(self.aggregate).to_numpy()
                out[np.ix_(rows, present)] = summary
        return Outcome({name: out[:, j] for j, name in enumerate(self.columns)}, {"groups": groups})


def _labels(values: np.ndarray, method: str, k: int, seed: int) -> np.ndarray:
    """The groups ``make_estimator(method, k).fit(values)`` forms, by MDAV's scan alone where the
    estimator could start numba."""
    n, m = values.shape
    if method == "mdav" and _small.prefer_plain(_small.mdav_work(n, m, k), _small.PLAIN_MDAV_WORK):
        return _small.timed_plain(_plain_mdav_labels, values, k)
    return make_estimator(method, k, random_state=seed).fit(values).labels_


def _plain_mdav_labels(values: np.ndarray, k: int) -> np.ndarray:
    """MDAV's groups as its estimator forms them: the same scaling, then the scan's groups (which
    every exact kernel of the estimator forms too)."""
    return mdav_labels(Standardizer.fit(values).transform(values), k)
