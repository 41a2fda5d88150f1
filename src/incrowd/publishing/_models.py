"""The privacy models of ``[privacy]`` beyond k, l and t (:data:`incrowd.privacy.MODELS`: entropy
and recursive l, (alpha, k), delta-disclosure, beta-likeness, k-map, average risk, population
uniqueness, ...) in publish's search, in the release and in its verification.

The search judges each node's classes with every model: a class a model refuses is suppressed
with those failing k, l or t (:func:`failing_classes`); a model of the whole release (average
risk, population uniqueness) then judges the classes left, and a node whose release it refuses
is not an answer (:func:`release_fails`). No model needs code here: each reads the
:class:`~incrowd.privacy.ClassStats` of a node, built from the bottom classes the search groups.

Inside a class the numeric quasi-identifiers are microaggregated into groups of at least k rows:
a group is a part of its class, and a model that its class meets may refuse a part (entropy l
of a part can be lower than its class's). :func:`enforce` then merges every group of such a
class back into the class, which the search judged and found to pass; a model of the whole
release is judged on the groups, and when it refuses them every class becomes one group again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..privacy import CodedColumn, Judge, Pairs

if TYPE_CHECKING:
    from ._prepare import Prepared


def judge_of(prep: Prepared, rows: np.ndarray, pairs: Pairs, weights: np.ndarray | None) -> Judge:
    """The spec's models judging units (bottom classes or rows) of the prepared table."""
    columns = [CodedColumn(s.name, tuple(s.values), bool(s.ordered), s.reference_counts, bool(s.missing))
               for s in prep.sensitive]
    return Judge(prep.spec.models, columns, rows, pairs, weights)


def row_judge(prep: Prepared) -> Judge:
    """A judge whose units are the rows of the table."""
    ones = np.ones(prep.n, dtype=np.int64)
    index = np.arange(prep.n, dtype=np.int64)
    return judge_of(prep, ones, [(index, s.codes.astype(np.int64), ones) for s in prep.sensitive], prep.weights)


def enforce(prep: Prepared, groups: np.ndarray, blocks: np.ndarray | None) -> np.ndarray:
    """``groups`` (a group id per row, -1 suppressed) with every group of a class that a model
    refuses in part merged into one group per class (``blocks``: the class of each row, the
    search's classes; None: each group is its own), and a merged class a model still refuses
    suppressed (an incremental release's classes were chosen for earlier rows)."""
    judge = row_judge(prep)
    if not judge or not (groups >= 0).any():
        return groups
    failing, whole = _judged(judge, groups)
    if not failing.any() and not whole:
        return groups
    kept = groups >= 0
    block = blocks if blocks is not None else groups
    ids = np.unique(groups[kept])
    block_of_group = np.zeros(int(ids.size), np.int64)
    local = np.searchsorted(ids, groups[kept])
    block_of_group[local] = block[kept]
    merged_blocks = np.unique(block_of_group) if whole else np.unique(block_of_group[failing])
    out = groups.copy()
    # a merged class takes an id past every group's, so that it never joins an untouched group
    base = int(groups.max()) + 1
    rows = kept & np.isin(block, merged_blocks)
    out[rows] = base + np.unique(block[rows], return_inverse=True)[1].ravel()
    still, _ = _judged(judge, out)
    if still.any():
        ids = np.unique(out[out >= 0])
        out[np.isin(out, ids[still])] = -1
    return out


def _judged(judge: Judge, groups: np.ndarray) -> tuple[np.ndarray, bool]:
    """(per group, in the order of its id: refused by a model; whether a model of the whole
    release refuses them all)."""
    kept = groups >= 0
    local = np.unique(groups[kept], return_inverse=True)[1].ravel().astype(np.int64)
    n_groups = int(local.max()) + 1
    sub = judge.subset(kept)
    stats = sub.stats(local, n_groups)
    failing = sub.failing_classes(stats, n_groups)
    return failing, sub.release_fails(stats, ~failing) is not None
