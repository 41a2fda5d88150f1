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

from .. import _emd
from ..exceptions import ParameterError
from ..generalization._negotiate import max_suppression_count
from ._prepare import Prepared


@dataclass
class GtmChoice:
    levels: dict[str, int]
    class_of: np.ndarray      # (n,) class id at the chosen node
    keep: np.ndarray          # (n,) bool: rows of classes that are published
    suppressed: int
    nodes_evaluated: int


@dataclass
class _Bottom:
    """The rows grouped by their level-0 codes (and missing pattern): every node's classes are
    unions of these, so a node is judged on them, not on every row."""

    codes: dict[str, np.ndarray]       # per categorical QI: (B,) level-0 code
    pattern: np.ndarray                # (B,)
    counts: np.ndarray                 # (B,) rows
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # per sensitive column: (bottom, value, rows)
    of_row: np.ndarray                 # (n,) bottom class of each row


def _radix_key(first: np.ndarray, digits) -> np.ndarray:
    """One int64 key per row for the tuple (first, *codes): ``digits`` gives (codes, width)
    pairs; the key is renumbered densely before a digit would carry it past int64."""
    key = first.astype(np.int64)
    for codes, width in digits:
        if key.max(initial=0) >= 2**62 // max(width, 1):
            key = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)
        key = key * width + codes.astype(np.int64)
    return key


def _bottom(prep: Prepared) -> _Bottom:
    key = _radix_key(prep.pattern, ((prep.codes0[a], int(prep.hierarchies[a].labels[0].size))
                                    for a in prep.categorical))
    _, first, of_row = np.unique(key, return_index=True, return_inverse=True)
    of_row = of_row.ravel()
    n_bottom = first.size
    pairs = []
    for s in prep.sensitive:  # sparse: a many-valued numeric column never makes a dense matrix
        m = len(s.values)
        keys, counts = np.unique(of_row * m + s.codes, return_counts=True)
        pairs.append((keys // m, keys % m, counts.astype(np.int64)))
    return _Bottom({a: prep.codes0[a][first] for a in prep.categorical}, prep.pattern[first],
                   np.bincount(of_row, minlength=n_bottom), pairs, of_row)


def _classes(prep: Prepared, bottom: _Bottom, levels: dict[str, int]) -> tuple[np.ndarray, int]:
    """Class id of each bottom class at ``levels``, and the class count."""
    hier = prep.hierarchies
    key = _radix_key(bottom.pattern, ((hier[a].code_map(levels[a])[bottom.codes[a]],
                                       int(hier[a].labels[levels[a]].size)) for a in prep.categorical))
    _, class_of = np.unique(key, return_inverse=True)
    class_of = class_of.ravel().astype(np.int64)
    return class_of, int(class_of.max()) + 1


def _failing(prep: Prepared, bottom: _Bottom, class_of: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(per class: True when it cannot be published, per class: rows)."""
    spec = prep.spec
    sizes = np.bincount(class_of, weights=bottom.counts, minlength=n_classes).astype(np.int64)
    bad = sizes < spec.k
    for s, (b, value, count) in zip(prep.sensitive, bottom.pairs):
        if spec.l is None and spec.t is None:
            break
        m = len(s.values)
        keys, where = np.unique(class_of[b] * m + value, return_inverse=True)
        per_pair = np.bincount(where.ravel(), weights=count).astype(np.int64)
        cls, val = keys // m, keys % m
        if spec.l is not None:
            bad |= np.bincount(cls, minlength=n_classes) < spec.l
        if spec.t is not None:
            # exactly the verifier's distance (integer counts, one rounding), so a class kept
            # here is one the merging can make pass and the verification accepts
            distance = _emd.emd_pairs(cls, val, per_pair, n_classes, s.reference_counts.astype(np.int64),
                                      s.ordered)
            bad |= _emd.exceeds(distance, spec.t)
    return bad, sizes


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
    bottom = _bottom(prep)
    best = None
    evaluated = 0
    height_found = None
    for vector in nodes(prep):
        height = sum(vector)
        if height_found is not None and height > height_found:
            break
        levels = dict(zip(prep.categorical, vector))
        class_of, n_classes = _classes(prep, bottom, levels)
        bad, sizes = _failing(prep, bottom, class_of, n_classes)
        evaluated += 1
        suppressed = int(sizes[bad].sum())
        if suppressed <= limit and (best is None or suppressed < best.suppressed):
            rows_class = class_of[bottom.of_row]
            best = GtmChoice(levels, rows_class, ~bad[rows_class], suppressed, 0)
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
