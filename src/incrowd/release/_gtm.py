"""Generalize, then microaggregate: pick the categorical generalization, then microaggregate the
numeric quasi-identifiers inside each of its classes.

The node (one level per categorical quasi-identifier) is the lowest in the lattice whose
suppression stays within the limit, ties to the least suppression, then to the first node in
the lattice's order (``Lattice`` numbers nodes the same way): a class is suppressed when it has
fewer than k rows, or, when asked, fewer than l distinct values or a distance above t in a
sensitive column. Merging groups inside a class can always reach l and t when the whole class
does (the distance of a union is at most the largest of its parts'), so those are the only
classes that must go. With ``missing.numeric = "separate"`` the missing pattern is part of the
class, as it is part of what the published row shows.

Inside a class of at least 2k rows the chosen method forms groups of at least k rows on the
standardized numeric columns the class has; a smaller class is one group.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..exceptions import ParameterError
from ..generalization._negotiate import max_suppression_count
from . import _distance
from ._prepare import Prepared


@dataclass
class GtmChoice:
    levels: dict[str, int]
    class_of: np.ndarray      # (n,) class id at the chosen node
    keep: np.ndarray          # (n,) bool: rows of classes that are published
    suppressed: int
    nodes_evaluated: int


def class_ids(prep: Prepared, levels: dict[str, int]) -> tuple[np.ndarray, int]:
    """Class id per row at ``levels`` (the missing pattern included), and the class count."""
    key = prep.pattern.astype(np.int64)
    for name in prep.categorical:
        codes = prep.hierarchies[name].code_map(levels[name])[prep.codes0[name]].astype(np.int64)
        width = int(prep.hierarchies[name].labels[levels[name]].size)
        key = key * width + codes
        if key.max(initial=0) > 2**62 // max(width, 1):  # keep the radix key in int64
            _, key = np.unique(key, return_inverse=True)
            key = key.astype(np.int64)
    _, class_of = np.unique(key, return_inverse=True)
    class_of = class_of.ravel().astype(np.int64)
    return class_of, int(class_of.max()) + 1


def failing_classes(prep: Prepared, class_of: np.ndarray, n_classes: int) -> np.ndarray:
    """Per class: True when it cannot be published (k, and l and t when asked)."""
    spec = prep.spec
    sizes = np.bincount(class_of, minlength=n_classes)
    bad = sizes < spec.k
    for s in prep.sensitive:
        if spec.l is not None:
            bad |= _distance.distinct_per_class(class_of, s.codes, n_classes, len(s.values)) < spec.l
        if spec.t is not None:
            d = _distance.emd_per_class(class_of, s.codes, n_classes, s.reference_counts, s.ordered)
            bad |= d > spec.t + _distance.T_TOLERANCE
    return bad


def nodes(prep: Prepared) -> list[tuple[int, ...]]:
    """Level vectors to try, lowest height first, then in the lattice's order."""
    fixed = prep.spec.levels or {}
    ranges = []
    for name in prep.categorical:
        if name in fixed:
            ranges.append((fixed[name],))
        else:
            ranges.append(tuple(range(prep.hierarchies[name].max_level + 1)))
    every = list(itertools.product(*ranges)) if ranges else [()]
    return sorted(every, key=lambda v: sum(v))


def choose(prep: Prepared) -> GtmChoice:
    limit = max_suppression_count(prep.spec.max_suppression, prep.n)
    best = None
    evaluated = 0
    height_found = None
    for vector in nodes(prep):
        height = sum(vector)
        if height_found is not None and height > height_found:
            break
        levels = dict(zip(prep.categorical, vector))
        class_of, n_classes = class_ids(prep, levels)
        bad = failing_classes(prep, class_of, n_classes)
        evaluated += 1
        suppressed = int(np.bincount(class_of, minlength=n_classes)[bad].sum())
        if suppressed <= limit and (best is None or suppressed < best.suppressed):
            best = GtmChoice(levels, class_of, ~bad[class_of], suppressed, 0)
            height_found = height
    if best is None:
        top = ", ".join(f"{a}={prep.hierarchies[a].max_level}" for a in prep.categorical) or "no categorical column"
        raise ParameterError(
            f"no generalization of the categorical quasi-identifiers keeps suppression within "
            f"max_suppression={prep.spec.max_suppression!r} ({limit} rows), not even the top ({top}); "
            "allow more suppression, lower k, l or raise t, or leave a level free in [levels]")
    best.nodes_evaluated = evaluated
    return best


def microaggregate_classes(prep: Prepared, choice: GtmChoice) -> np.ndarray:
    """Group id per row (-1 for suppressed rows): the method's groups inside each kept class."""
    from .._microaggregate import make_estimator

    spec = prep.spec
    labels = np.full(prep.n, -1, np.int64)
    rows = np.flatnonzero(choice.keep)
    if rows.size == 0:
        return labels
    order = rows[np.argsort(choice.class_of[rows], kind="stable")]
    bounds = np.flatnonzero(np.diff(choice.class_of[order])) + 1
    estimator = make_estimator(spec.method, spec.k, spec.random_state, **spec.method_params)
    estimator._check_params()
    next_id = 0
    for members in np.split(order, bounds):
        present = prep.pattern_masks[int(prep.pattern[members[0]])]
        if members.size < 2 * spec.k or not present.any():
            labels[members] = next_id
            next_id += 1
            continue
        Z = np.ascontiguousarray(prep.Z[np.ix_(members, np.flatnonzero(present))])
        rng = np.random.default_rng(spec.random_state)
        local = np.asarray(estimator._labels(Z, spec.k, rng), dtype=np.int64)
        _, local = np.unique(local, return_inverse=True)
        labels[members] = next_id + local.ravel()
        next_id += int(local.max()) + 1
    return labels
