"""The joint strategy as a release: one clustering over all quasi-identifiers (per missing
pattern when ``missing.numeric = "separate"``), each group published as its numeric means and,
per categorical column, the lowest common ancestor of its values."""

from __future__ import annotations

import numpy as np

from .._runtime import check_cancelled
from ..exceptions import ParameterError
from ..microaggregation import group_lca, joint_labels
from ._prepare import Prepared


def joint_groups(prep: Prepared):
    spec = prep.spec
    if spec.levels:
        raise ParameterError("[levels] fixes the generalization of the generalize-then-microaggregate "
                             "strategy; the joint strategy generalizes each group as far as its values need")
    groups = np.full(prep.n, -1, np.int64)
    next_id = 0
    for pattern_id, present in enumerate(prep.pattern_masks):
        check_cancelled()
        rows = np.flatnonzero(prep.pattern == pattern_id)
        if rows.size == 0:
            continue
        if rows.size < spec.k:
            continue  # too few rows share this missing pattern: suppressed
        numeric = np.ascontiguousarray(prep.Z[np.ix_(rows, np.flatnonzero(present))])
        categorical = [(prep.codes0[a][rows], prep.hierarchies[a]) for a in prep.categorical]
        local = joint_labels(numeric, categorical, spec.k, refine=spec.refine,
                             random_state=spec.random_state, max_seconds=spec.max_seconds)
        groups[rows] = next_id + local
        next_id += int(local.max()) + 1
    suppressed = int((groups < 0).sum())
    if suppressed:
        from ..generalization import max_suppression_count

        limit = max_suppression_count(spec.max_suppression, prep.n)
        if suppressed > limit:
            raise ParameterError(f"{suppressed} rows share a missing pattern with fewer than k={spec.k} rows "
                                 f"and must be suppressed, more than max_suppression={spec.max_suppression!r} "
                                 f"({limit} rows)")
    extra = {"refined": bool(spec.refine), "blocks": prep.pattern if prep.pattern.any() else None}
    return groups, joint_levels(prep, groups), extra


def joint_levels(prep: Prepared, groups: np.ndarray) -> dict[str, np.ndarray]:
    """Per categorical column, the level each row is published at: its group's lowest common
    ancestor (computed again after groups were merged for l or t)."""
    levels_per_row = {}
    kept = groups >= 0
    for name in prep.categorical:
        level = np.zeros(prep.n, np.int64)
        if kept.any():
            lca_level, _ = group_lca(groups[kept], prep.codes0[name][kept], prep.hierarchies[name])
            level[kept] = lca_level[groups[kept]]
        levels_per_row[name] = level
    return levels_per_row


def categorical_embedding(prep: Prepared, rows: np.ndarray) -> np.ndarray:
    """Points whose squared distance is the joint distance's categorical part: per column and
    level below the top, a one-hot of the value's ancestor at that level, scaled by
    1 / sqrt(2 * max_level). Two values differ exactly at the levels below their lowest common
    ancestor, each difference adding 2 * 1 / (2 * max_level)."""
    blocks = []
    for name in prep.categorical:
        hierarchy = prep.hierarchies[name]
        top = max(hierarchy.max_level, 1)
        scale = 1.0 / np.sqrt(2.0 * top)
        codes0 = prep.codes0[name][rows]
        for level in range(hierarchy.max_level):
            codes = hierarchy.code_map(level)[codes0]
            width = int(hierarchy.labels[level].size)
            onehot = np.zeros((rows.size, width))
            onehot[np.arange(rows.size), codes] = scale
            blocks.append(onehot)
    return np.hstack(blocks) if blocks else np.zeros((rows.size, 0))
