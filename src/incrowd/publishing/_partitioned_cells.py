"""``suppression = "cells"`` on a partitioned file, with the in-process answer (:mod:`._cells`).

Local suppression decides from the node's combinations (each missing pattern's categorical
codes at the chosen levels) and their rows: rows of one combination are alike but for their
place in the file, and where it picks one row of a combination it takes the last in file order.
So the client runs :func:`._cells.pattern_blanks` itself on a stand-in of each pattern: every
combination with the rows it has, a large one cut to its last ``cap`` rows, where

    cap = 2k + (rows of the combinations below k) x (categorical quasi-identifiers).

But for the step below, only rows of combinations below k are blanked (a combination of k rows or more matches k
rows however the others move), and blanks are at most those rows' cells, so a combination's
count, or its matches, compared with k during the search and the restoring pass, is on the same
side of k whether it holds its rows or ``cap``. One step reads a large combination's exact size:
when the combination missing everywhere is below k (``missing_matches = "itself"``), rows of
the largest combination join it (fewer than k, all from the largest: it keeps k); the stand-in
gives that combination one row more than ``cap``, so it is the largest there too. The stand-in
holds at most ``cap`` rows per combination, and its blanks go back to the parts as
(combination, place in it) pairs: a part finds its rows' places from the rows of each
combination in the parts before it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..exceptions import DataError
from ..privacy import sample_risk
from . import _gtm, _risk_targets
from ._cells import check_cell_limit, pattern_blanks
from ._partitioned import carried_columns
from ._prepare import Prepared, with_whole


@dataclass
class CellPlan:
    """The blanks of a partitioned cell release, as the parts apply them."""

    #: per bottom class of the file: its combination at the node
    combo_of: np.ndarray
    #: per part: rows of each combination in the parts before it
    offsets: list[np.ndarray]
    #: per combination: the class of its rows left as they are (-1: a pattern below k, suppressed)
    class_of: np.ndarray
    #: the rows with a blank: their combination's and place's key (sorted), class and blanks
    changed: np.ndarray
    changed_class: np.ndarray
    changed_blank: np.ndarray
    #: the key's stride: a place is below it
    stride: int
    #: rows per class
    sizes: np.ndarray
    #: blanked cells per categorical quasi-identifier
    cells: dict[str, int]
    #: per combination: its pattern and codes at the node (-1 missing where a missing cell
    #: matches any value)
    combos: np.ndarray | None = None
    #: the importance local suppression used per column (what more blanks for risk targets follow)
    importance: np.ndarray | None = None
    #: with risk targets (:func:`plan_targets`): each kind of row's key (:func:`kind_keys`,
    #: sorted), its class and its blanks; a row takes its kind's in place of the above
    kind_key: np.ndarray | None = None
    kind_class: np.ndarray | None = None
    kind_blank: np.ndarray | None = None


def part_missing(bottom) -> dict[str, np.ndarray]:
    """A part's level-0 codes of missing cells per categorical column (``bottom``: its
    :func:`._partitioned.part_bottom`): with ``missing_matches = "any"`` such a cell, published
    as it is, matches any value, as a blank does."""
    prep = bottom[4]
    return {a: np.unique(prep.codes0[a][prep.missing0[a]]) for a in prep.categorical}


def plan_cells(prep: Prepared, bottoms: list, maps: list[np.ndarray], choice: _gtm.GtmChoice,
               missing: list[dict[str, np.ndarray]] | None = None, cap: int | None = None) -> CellPlan:
    """The cells blanked for ``choice`` over the parts' bottom classes (``bottoms``, each with
    ``maps``' numbers in the file; ``prep``: the file without rows, as the search made it;
    ``missing``: the parts' :func:`part_missing`, with ``missing_matches = "any"``). ``cap``:
    the stand-in's rows per combination (module docstring; a larger one gives the same answer)."""
    spec = prep.spec
    names = list(prep.categorical)
    k, m = int(spec.k), len(names)
    bottom, _ = _gtm.combine_bottoms(prep, bottoms)
    codes = np.column_stack([prep.hierarchies[a].code_map(choice.levels[a])[bottom.codes[a]].astype(np.int64)
                             for a in names])
    if spec.missing_matches == "any":
        for j, a in enumerate(names):
            if choice.levels[a] == 0:
                absent = np.unique(np.concatenate([p[a] for p in missing or []] or [np.zeros(0, np.int64)]))
                codes[np.isin(bottom.codes[a], absent), j] = -1
    key = np.column_stack([bottom.pattern.astype(np.int64), codes])
    combos, combo_of = np.unique(key, axis=0, return_inverse=True)
    combo_of = combo_of.ravel().astype(np.int64)
    n_combos = combos.shape[0]
    counts = np.bincount(combo_of, weights=bottom.counts, minlength=n_combos).astype(np.int64)
    per_part = [np.bincount(combo_of[w], weights=b.counts, minlength=n_combos).astype(np.int64)
                for b, w in zip(bottoms, maps)]
    offsets = list(np.cumsum([np.zeros(n_combos, np.int64), *per_part[:-1]], axis=0)) if per_part else []
    importance = None if not spec.importance else [spec.importance[a] for a in names]
    used = importance
    keys, owner, place, blanks = [combos[:, 1:]], [np.arange(n_combos)], [np.full(n_combos, -1)], \
        [np.zeros((n_combos, m), bool)]
    suppressed = np.zeros(n_combos, bool)
    for p in np.unique(combos[:, 0]):
        mine = np.flatnonzero(combos[:, 0] == p)
        if counts[mine].sum() < k:  # no blank gives such a pattern k rows: its rows go whole
            suppressed[mine] = True
            continue
        size = counts[mine]
        limit = cap if cap is not None else 2 * k + m * int(size[size < k].sum())
        held = np.minimum(size, limit)
        if (size > limit).any():  # the largest (the first of equals) stays the largest
            held[np.argmax(size)] += 1
        rows = np.repeat(np.arange(mine.size), held)
        first = np.repeat(size - held, held)
        within = np.arange(rows.size) - np.repeat(np.cumsum(held) - held, held)
        mask, used = pattern_blanks(combos[mine][rows, 1:], names, k, importance, spec.missing_matches)
        hit = mask.any(axis=1)
        keys.append(np.where(mask[hit], -1, combos[mine][rows[hit], 1:]))
        owner.append(mine[rows[hit]])
        place.append(first[hit] + within[hit])
        blanks.append(mask[hit])
    all_owner, all_place = np.concatenate(owner), np.concatenate(place)
    all_blank = np.concatenate(blanks)
    pattern_of = combos[all_owner, 0]
    classes = np.unique(np.column_stack([pattern_of, np.concatenate(keys)]), axis=0, return_inverse=True)[1]
    classes = classes.ravel().astype(np.int64)
    classes[suppressed[all_owner]] = -1
    default = classes[:n_combos]
    changed = np.flatnonzero(all_place >= 0)
    stride = int(counts.max(initial=0)) + 1
    if n_combos * stride >= 2**62:
        raise DataError("the file has too many rows and classes to blank cells on partitions; publish it with "
                        "suppression = \"rows\"")
    changed_key = all_owner[changed] * stride + all_place[changed]
    order = np.argsort(changed_key)
    changed = changed[order]
    n_classes = int(classes.max(initial=-1)) + 1
    kept = default >= 0
    untouched = counts - np.bincount(all_owner[changed], minlength=n_combos)
    sizes = np.bincount(default[kept], weights=untouched[kept], minlength=n_classes).astype(np.int64)
    sizes += np.bincount(classes[changed][classes[changed] >= 0], minlength=n_classes)
    total = all_blank[changed].sum(axis=0)
    if not spec.risk_targets:  # else the blanks for the targets come first (:func:`plan_targets`)
        check_cell_limit(spec, int(total.sum()), int(counts.sum()) * m)
    return CellPlan(combo_of, offsets, default, changed_key[order], classes[changed], all_blank[changed], stride,
                    sizes, {a: int(total[j]) for j, a in enumerate(names)}, combos,
                    None if used is None else np.asarray(used))


def _planned(bottom, number: np.ndarray, plan: CellPlan, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's class (-1: suppressed) and blanked cells in the part (``bottom``: its
    :func:`._partitioned.part_bottom`), as ``plan`` gives them."""
    combo = plan.combo_of[number[bottom[3]]]
    order = np.argsort(combo, kind="stable")
    runs = np.bincount(combo, minlength=plan.class_of.size)
    place = np.empty(combo.size, np.int64)
    place[order] = np.arange(combo.size) - np.repeat(np.cumsum(runs) - runs, runs)
    place += offsets[combo]
    classes = plan.class_of[combo].copy()
    blank = np.zeros((combo.size, plan.changed_blank.shape[1]), bool)
    at = np.searchsorted(plan.changed, combo * plan.stride + place)
    at = np.minimum(at, max(plan.changed.size - 1, 0))
    hit = plan.changed[at] == combo * plan.stride + place if plan.changed.size else np.zeros(combo.size, bool)
    classes[hit] = plan.changed_class[at[hit]]
    blank[hit] = plan.changed_blank[at[hit]]
    if plan.kind_key is not None and plan.kind_class is not None and plan.kind_blank is not None:
        kind = np.searchsorted(plan.kind_key, kind_keys(number[bottom[3]], blank))
        classes, blank = plan.kind_class[kind], plan.kind_blank[kind]
    return classes, blank


def part_cell_pieces(frame, bottom, whole, number: np.ndarray, plan: CellPlan, offsets: np.ndarray,
                     where: np.ndarray, n_out: int) -> list[tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray]]:
    """The part's rows to publish, prepared, with their classes, their positions in the part and
    their blanked cells (rows x categorical quasi-identifiers), one piece per output partition
    (``where``: each class's), as :func:`._partitioned.part_pieces` splits them; ``offsets``:
    the part's row of the plan's."""
    prep = with_whole(bottom[4], whole, frame)
    classes, blank = _planned(bottom, number, plan, offsets)
    kept = np.flatnonzero(classes >= 0)
    out = where[classes[kept]]
    pieces = []
    for b in range(n_out):
        rows = kept[out == b]
        pieces.append((prep.rows_of(rows, carried_columns(prep.spec)), classes[rows], rows, blank[rows]))
    return pieces


def kind_keys(number: np.ndarray, blank: np.ndarray) -> np.ndarray:
    """A row's kind for the risk targets: its bottom class (``number``: in the file) and the
    cells blanked for k (a bit per column). Rows of one kind show one key, whatever more is
    blanked for the targets, so they get the same blanks (:func:`plan_targets`)."""
    bits = (blank.astype(np.int64) << np.arange(blank.shape[1], dtype=np.int64)).sum(axis=1) \
        if blank.size else np.zeros(number.size, np.int64)
    return (np.asarray(number, np.int64) << blank.shape[1]) + bits


def part_kinds(frame, bottom, number: np.ndarray, plan: CellPlan, offsets: np.ndarray,
               weight: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The part's kinds of rows (:func:`kind_keys`, sorted), each one's rows and the sum of their
    sampling weights (``weight``: the weight column), at ``plan``'s blanks for k."""
    _, blank = _planned(bottom, number, plan, offsets)
    keys, kind = np.unique(kind_keys(number[bottom[3]], blank), return_inverse=True)
    w = sample_risk.sampling_weights(frame[weight].reset_index(drop=True), weight)
    return keys, np.bincount(kind.ravel(), minlength=keys.size), np.bincount(kind.ravel(), weights=w,
                                                                             minlength=keys.size)


def plan_targets(prep: Prepared, bottoms: list, maps: list[np.ndarray], choice: _gtm.GtmChoice, plan: CellPlan,
                 kinds: list, missing: list[dict[str, np.ndarray]]) -> CellPlan:
    """``plan`` with more cells blanked until the risk targets hold, as one process blanks them
    (:func:`._risk_targets.blank_kinds_for_targets`, the steps of ``blank_for_targets``),
    decided over the parts' kinds of rows (``kinds``: their :func:`part_kinds`; ``missing``:
    their :func:`part_missing`), and its cells checked against ``max_suppressed_cells``."""
    spec = prep.spec
    names = list(prep.categorical)
    m = len(names)
    bottom, _ = _gtm.combine_bottoms(prep, bottoms)
    if (int(bottom.counts.size) << m) >= 2**62:
        raise DataError("the file has too many classes and quasi-identifiers to meet risk targets by blanking cells "
                        "on partitions; publish it with suppression = \"rows\"")
    keys = np.concatenate([k[0] for k in kinds] or [np.zeros(0, np.int64)])
    kind_key, kind = np.unique(keys, return_inverse=True)
    kind = kind.ravel()
    rows = np.bincount(kind, weights=np.concatenate([k[1] for k in kinds] or [np.zeros(0)]),
                       minlength=kind_key.size).astype(np.int64)
    weight = np.bincount(kind, weights=np.concatenate([k[2] for k in kinds] or [np.zeros(0)]),
                         minlength=kind_key.size)
    number = kind_key >> m
    blank = ((kind_key[:, None] >> np.arange(m, dtype=np.int64)) & 1).astype(bool)
    assert plan.combos is not None
    combo = plan.combo_of[number]
    codes = plan.combos[combo, 1:]
    base = codes.copy()
    for j, a in enumerate(names):
        if choice.levels[a] == 0:  # missing as published; a user-missing code is a value
            absent = np.unique(np.concatenate([p[a] for p in missing] or [np.zeros(0, np.int64)]))
            base[np.isin(bottom.codes[a][number], absent), j] = -1
    importance = plan.importance if plan.importance is not None else np.ones(m, np.int64)
    blank = _risk_targets.blank_kinds_for_targets(spec.risk_targets, base, blank, rows, weight, importance)
    key = np.column_stack([plan.combos[combo, 0], np.where(blank, -1, codes)])
    classes = np.unique(key, axis=0, return_inverse=True)[1].ravel().astype(np.int64)
    classes[plan.class_of[combo] < 0] = -1
    kept = classes >= 0
    total = (blank * rows[:, None]).sum(axis=0)
    check_cell_limit(spec, int(total.sum()), int(rows.sum()) * m)
    sizes = np.bincount(classes[kept], weights=rows[kept], minlength=int(classes.max(initial=-1)) + 1)
    return replace(plan, sizes=sizes.astype(np.int64), cells={a: int(total[j]) for j, a in enumerate(names)},
                   kind_key=kind_key, kind_class=classes, kind_blank=blank)
