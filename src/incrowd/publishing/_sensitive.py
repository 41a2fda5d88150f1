"""Merge groups until every group meets the merging models (distinct l, t) in every sensitive column.

This is the merging variant of Soria-Comas, Domingo-Ferrer, Sanchez and Martinez,
"t-Closeness through microaggregation" (IEEE TKDE 2015): after microaggregation, while some
group fails, the worst failing group is merged with its nearest group (by centroid of the
quasi-identifiers) until it passes. Here a group fails a model that ``merges`` when its
:meth:`~incrowd.privacy.PrivacyModel.merge_gap` says so, from the group's distinct present values
of a sensitive column and its earth mover's distance (:mod:`incrowd.privacy._emd`) from the
column's reference distribution: distinct l (too few values) and t-closeness (too far).

Merging only helps: a union holds every value of its parts, and its distribution is a mixture
of theirs, so its distance is at most the larger of the two. Hence merging inside a block always
ends with every group passing when the whole block passes, and never does when it fails: the
rows of such blocks are returned as failed (the caller suppresses them), their groups untouched.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._native import centroid_nearest, centroid_tree, dense_status, nearest_slots
from .._runtime import check_cancelled
from ..exceptions import ParameterError
from ..privacy import PrivacyModel
from ..privacy import emd as _emd


@dataclass(frozen=True)
class SensitiveColumn:
    """A sensitive column as codes: ``codes[i]`` in ``0..n_values-1`` (sorted by value when
    ``ordered``; a missing value is a code of its own), and ``reference_counts`` the counts of
    each code in the distribution the groups are compared with (for a release: the whole input,
    suppressed rows included). Codes the reference never takes are not among its m values.
    ``missing``: the last code is the missing value, which is never a distinct value for l (a
    class of one value and missing cells holds one value)."""

    name: str
    codes: np.ndarray
    n_values: int
    ordered: bool
    reference_counts: np.ndarray
    missing: bool = False


#: above this many groups x values cells a column keeps its counts per group, sparse
_DENSE_CELLS = 1 << 24


class _DenseCounts:
    """Value counts of every group in one groups x values matrix: vectorized merges and
    partner choices, for columns with few values."""

    def __init__(self, group, codes, n_groups: int, reference: np.ndarray, ordered: bool, missing: bool = False):
        m = reference.size
        self.counts = np.bincount(group * m + codes, minlength=n_groups * m).reshape(n_groups, m).astype(np.int64)
        self.reference, self.ordered, self.missing = reference, ordered, missing
        # the compiled status keeps the numpy form's integer numerators, so only where they are exact
        self.compiled = _emd.exact_counts(int(reference.sum()), m)

    def _status(self, counts) -> tuple[np.ndarray, np.ndarray]:
        if self.compiled:
            return dense_status(counts, self.reference, self.ordered, self.missing)
        return _python_status(counts, self.reference, self.ordered, self.missing)

    def status(self, groups) -> tuple[np.ndarray, np.ndarray]:
        """(distinct values, distance) of each group in ``groups``."""
        return self._status(self.counts[groups])

    def union_status(self, g: int, others: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(distinct values, distance) of the union of g with each group in ``others``."""
        return self._status(self.counts[others] + self.counts[g])

    def merge(self, keep: int, gone: int) -> None:
        self.counts[keep] += self.counts[gone]


def _python_status(counts, reference: np.ndarray, ordered: bool, missing: bool) -> tuple[np.ndarray, np.ndarray]:
    values = counts[:, :-1] if missing else counts
    return (values > 0).sum(axis=1), _emd.dense_distances(counts, reference, ordered)


class _SparseCounts:
    """Per group, the values it takes and how often: memory O(n) whatever the number of
    values (a numeric sensitive column with thousands of them), at some speed."""

    def __init__(self, group, codes, n_groups: int, reference: np.ndarray, ordered: bool, missing: bool = False):
        m = reference.size
        self.missing = missing
        pairs, cnt = np.unique(group * m + codes, return_counts=True)
        cls, val = pairs // m, pairs % m
        bounds = np.searchsorted(cls, np.arange(n_groups + 1))
        self.vals = [val[bounds[i]:bounds[i + 1]] for i in range(n_groups)]
        self.cnts = [cnt[bounds[i]:bounds[i + 1]].astype(np.int64) for i in range(n_groups)]
        self.reference, self.ordered = reference, ordered

    def _status(self, cls, key_vals, key_cnts, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        m = self.reference.size
        pairs, inv = np.unique(cls * m + key_vals, return_inverse=True)
        cnt = np.bincount(inv.ravel(), weights=key_cnts).astype(np.int64)
        p_cls = pairs // m
        p_val = pairs % m
        distance = _emd.emd_pairs(p_cls, p_val, cnt, n_classes, self.reference, self.ordered)
        counted = p_cls[p_val != m - 1] if self.missing else p_cls
        return np.bincount(counted, minlength=n_classes), distance

    def status(self, groups) -> tuple[np.ndarray, np.ndarray]:
        groups = np.asarray(groups)
        lens = np.array([self.vals[g].size for g in groups], dtype=np.int64)
        cls = np.repeat(np.arange(groups.size), lens)
        return self._status(cls, np.concatenate([self.vals[g] for g in groups]),
                            np.concatenate([self.cnts[g] for g in groups]), groups.size)

    def union_status(self, g: int, others: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lens = np.array([self.vals[h].size for h in others], dtype=np.int64)
        n_others, own = others.size, self.vals[g].size
        cls = np.concatenate([np.repeat(np.arange(n_others), lens), np.repeat(np.arange(n_others), own)])
        vals = np.concatenate([*(self.vals[h] for h in others), np.tile(self.vals[g], n_others)])
        cnts = np.concatenate([*(self.cnts[h] for h in others), np.tile(self.cnts[g], n_others)])
        return self._status(cls, vals, cnts, n_others)

    def merge(self, keep: int, gone: int) -> None:
        vals, inv = np.unique(np.concatenate([self.vals[keep], self.vals[gone]]), return_inverse=True)
        cnts = np.bincount(inv.ravel(), weights=np.concatenate([self.cnts[keep], self.cnts[gone]]))
        self.vals[keep], self.cnts[keep] = vals, cnts.astype(np.int64)
        self.vals[gone] = self.cnts[gone] = None


def enforce_sensitive(labels, points, sensitive: list[SensitiveColumn], models: Sequence[PrivacyModel], *,
                      blocks=None) -> tuple[np.ndarray, np.ndarray]:
    """``(new_labels, failed_rows)``: groups merged until each meets every model of ``models``
    (each one that ``merges``: distinct l, t) in every column of ``sensitive``.

    ``labels`` are group ids (int, one per row); ``points`` (n, p) the standardized numeric
    quasi-identifiers, whose group centroids say which group is nearest (squared Euclidean); p
    may be 0. ``blocks`` (one id per row, constant within a group) confines merges to groups of
    the same block (the classes of a generalization); by default all groups form one block.

    Order, for determinism: the failing group with the largest gap of the first model (its
    :meth:`~incrowd.privacy.PrivacyModel.merge_gap`, the largest over columns: for distinct l
    the shortfall of distinct values), then of the next (for t the distance above t), then the
    lowest id, merges first. Its partner is the live group of its block with the nearest
    centroid; among equally near ones (all of them when p is 0) the one whose union with it is
    closest to passing (the smallest gaps in the models' order, a passing union counting 0),
    then the lowest id. A merged group keeps the lower of the two ids, so
    every new label is the smallest old label among the groups it unites.

    ``failed_rows`` marks the rows of blocks that fail as a whole; their labels are returned
    unchanged. Memory: a groups x values count matrix per sensitive column while it stays under
    2**24 cells; above, each group keeps the values it takes (O(n), slower partner choices).
    """
    lab, pts = _checked_inputs(labels, points, models)
    n = lab.shape[0]
    new_labels = lab.astype(np.int64, copy=True)
    failed = np.zeros(n, dtype=bool)
    if n == 0 or not sensitive or not models:
        return new_labels, failed

    ids, group = np.unique(new_labels, return_inverse=True)
    group = group.ravel().astype(np.int64)
    n_groups = ids.size
    block_of_group, n_blocks = _group_blocks(blocks, group, n_groups, n)
    coded = [_codes(c, n) for c in sensitive]
    columns = [_store(group, codes, n_groups, ref, c.ordered, missing) for (codes, ref, missing), c in zip(coded, sensitive)]
    sizes = np.bincount(group, minlength=n_groups).astype(np.int64)
    centroids = np.empty((n_groups, pts.shape[1]))
    for j in range(pts.shape[1]):
        centroids[:, j] = np.bincount(group, weights=pts[:, j], minlength=n_groups) / sizes

    gaps = _gaps([c.status(np.arange(n_groups)) for c in columns], models)
    block_of_row = block_of_group[group]
    block_fails = _fails(_gaps(
        [_SparseCounts(block_of_row, codes, n_blocks, ref, c.ordered, missing).status(np.arange(n_blocks))
         for (codes, ref, missing), c in zip(coded, sensitive)], models))
    failed = block_fails[block_of_group[group]]

    alive = np.ones(n_groups, dtype=bool)
    version = np.zeros(n_groups, dtype=np.int64)
    parent = np.arange(n_groups, dtype=np.int64)
    live = _LiveGroups(block_of_group, n_blocks, centroids)
    work = [(tuple(-float(gap[g]) for gap in gaps), int(g), 0)
            for g in np.flatnonzero(_fails(gaps) & ~block_fails[block_of_group])]
    heapq.heapify(work)
    while work:
        check_cancelled()  # one merge per step: a cancelled web job stops here
        _, g, ver = heapq.heappop(work)
        if not alive[g] or version[g] != ver:
            continue
        h = _partner(g, live, columns, models)
        keep, gone = (g, h) if g < h else (h, g)
        total = sizes[g] + sizes[h]
        live.merge(keep, gone, (live.centroid(g) * sizes[g] + live.centroid(h) * sizes[h]) / total)
        sizes[keep] = total
        for c in columns:
            c.merge(keep, gone)
        alive[gone] = False
        parent[gone] = keep
        version[keep] += 1
        now = _gaps([c.status([keep]) for c in columns], models)
        if _fails(now)[0]:
            heapq.heappush(work, (tuple(-float(gap[0]) for gap in now), int(keep), int(version[keep])))

    while True:  # pointer jumping: every group to the group it was finally merged into
        up = parent[parent]
        if np.array_equal(up, parent):
            break
        parent = up
    return ids[parent[group]], failed


def _checked_inputs(labels, points, models: Sequence[PrivacyModel]) -> tuple[np.ndarray, np.ndarray]:
    """(labels, points as one row of floats per label), or a ``ParameterError`` naming what is wrong."""
    lab = np.asarray(labels)
    if lab.ndim != 1 or (lab.size and not np.issubdtype(lab.dtype, np.integer)):
        raise ParameterError(f"labels must be one integer group id per row; got shape {lab.shape}")
    n = lab.shape[0]
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim == 1:
        pts = pts.reshape(n, -1) if pts.size else np.zeros((n, 0))
    if pts.ndim != 2 or pts.shape[0] != n:
        raise ParameterError(f"points must be one row of features per label ({n}); got shape {pts.shape}")
    for model in models:
        if not (isinstance(model, PrivacyModel) and model.merges):
            raise ParameterError(f"models: {model!r} is not a privacy model met by merging groups (distinct l, t)")
        model.checked()
    return lab, pts


def _group_blocks(blocks, group: np.ndarray, n_groups: int, n: int) -> tuple[np.ndarray, int]:
    if blocks is None:
        return np.zeros(n_groups, dtype=np.int64), 1
    blk = np.asarray(blocks)
    if blk.shape != (n,):
        raise ParameterError(f"blocks must be one block id per row ({n}); got shape {blk.shape}")
    _, dense = np.unique(blk, return_inverse=True)
    dense = dense.ravel().astype(np.int64)
    lo = np.full(n_groups, np.iinfo(np.int64).max)
    hi = np.full(n_groups, -1)
    np.minimum.at(lo, group, dense)
    np.maximum.at(hi, group, dense)
    if (lo != hi).any():
        raise ParameterError("every group must lie in one block; a group has rows in two blocks")
    return lo, int(dense.max()) + 1


def _codes(col: SensitiveColumn, n: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(codes over the reference's m values, their positive reference counts, whether the last
    of them is the missing value)."""
    codes = np.asarray(col.codes, dtype=np.int64)
    ref = np.asarray(col.reference_counts, dtype=np.int64)
    if codes.shape != (n,) or ref.shape != (int(col.n_values),):
        raise ParameterError(f"sensitive column {col.name!r}: codes must be one per row ({n}) and reference "
                             f"counts one per value ({col.n_values}); got {codes.shape} and {ref.shape}")
    if codes.size and (codes.min() < 0 or codes.max() >= col.n_values):
        raise ParameterError(f"sensitive column {col.name!r}: codes must lie in 0..{col.n_values - 1}")
    present = ref > 0
    if not present.any():
        raise ParameterError(f"sensitive column {col.name!r}: the reference distribution is empty")
    if not present[codes].all():
        raise ParameterError(f"sensitive column {col.name!r}: row {int(np.flatnonzero(~present[codes])[0])} "
                             "holds a value the reference distribution never takes")
    # values the reference lacks are not among its m values (nor do the rows hold them)
    return (np.cumsum(present) - 1)[codes], ref[present], bool(col.missing and present[-1])


def _store(group, codes, n_groups: int, reference: np.ndarray, ordered: bool, missing: bool = False):
    kind = _DenseCounts if n_groups * reference.size <= _DENSE_CELLS else _SparseCounts
    return kind(group, codes, n_groups, reference, bool(ordered), missing)


def _gaps(statuses, models: Sequence[PrivacyModel]) -> list[np.ndarray]:
    """From (distinct, distance) per column: each model's gap per group, the largest over columns."""
    return [np.maximum.reduce([model.merge_gap(distinct, distance) for distinct, distance in statuses])
            for model in models]


def _fails(gaps: list[np.ndarray]) -> np.ndarray:
    return np.logical_or.reduce([gap > _emd.TOLERANCE for gap in gaps])


#: a block of more live groups than this finds its groups' partners on a k-d tree of their
#: centroids (a scan of each live centroid per merge is quadratic in a large class)
_INDEXED = 2048
_LEAF = 16


class _CentroidIndex:
    """A block's live centroids on a k-d tree (:func:`centroid_tree`) built at one moment: a group
    merged since is dead in it, and a merged group's new centroid is scanned beside it (moved:
    ``moved_ids[:n_moved]`` and their centroids ``moved_points``) until the tree is built again."""

    def __init__(self, gids: np.ndarray, points: np.ndarray):
        self.points = points
        self.perm, self.lo, self.hi = centroid_tree(points, _LEAF)
        self.gid = gids[self.perm]
        self.alive = np.ones(gids.size, np.int8)
        self.n_alive = gids.size
        # stale() rebuilds past sqrt(m) moved; a merge adds one after the query that checked it
        room = math.isqrt(gids.size) + 4
        self.moved_ids = np.empty(room, np.int64)
        self.moved_points = np.empty((room, points.shape[1]))
        self.n_moved = 0
        self.out = np.empty(gids.size + room, np.int64)

    def stale(self) -> bool:
        # a rebuild costs about one scan of the tree's points; moved centroids cost one each per query
        return self.n_moved * self.n_moved > self.gid.size or 2 * self.n_alive < self.gid.size


class _LiveGroups:
    """The live groups of each block in one contiguous run of slots, with their centroids
    stored feature by feature, so a nearest-group search reads one slice (no gather); a merged
    group's slot is refilled by the block's last live group. A block of more than ``_INDEXED``
    live groups searches a :class:`_CentroidIndex` instead; both find the same nearest groups."""

    def __init__(self, block_of_group: np.ndarray, n_blocks: int, centroids: np.ndarray):
        order = np.argsort(block_of_group, kind="stable")
        counts = np.bincount(block_of_group, minlength=n_blocks)
        self.start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self.count = counts.astype(np.int64)
        self.block = block_of_group
        self.gid = order.astype(np.int64)
        self.slot = np.empty_like(self.gid)
        self.slot[order] = np.arange(order.size)
        self.cent = np.ascontiguousarray(centroids[order].T)  # (p, slots)
        self.index: dict[int, _CentroidIndex | None] = {}
        self.position = np.full(order.size, -1, np.int64)  # a group's live, unmoved point in its block's tree
        self.moved_at = np.full(order.size, -1, np.int64)  # a group's row among its block's moved centroids

    def centroid(self, g: int) -> np.ndarray:
        return self.cent[:, self.slot[g]]

    def others(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        """(slot range start, ids of the block's live groups), g among them."""
        b = self.block[g]
        lo = self.start[b]
        return lo, self.gid[lo:lo + self.count[b]]

    def nearest(self, g: int) -> np.ndarray:
        """The ids of the live groups of g's block nearest to g (squared Euclidean distance of
        the centroids), g left out; every one of them where p is 0."""
        lo, ids = self.others(g)
        own = int(self.slot[g] - lo)
        if not self.cent.shape[0]:
            return np.delete(ids, own)
        b = int(self.block[g])
        index = self._index(b) if ids.size > _INDEXED else None
        if index is None:
            return ids[nearest_slots(self.cent, int(lo), ids.size, own)]
        found = centroid_nearest(index.points, _LEAF, index.perm, index.lo, index.hi, index.alive, self.centroid(g),
                                 int(self.position[g]), index.moved_points, index.n_moved, int(self.moved_at[g]),
                                 index.out)
        return np.where(found >= 0, index.gid[np.maximum(found, 0)], index.moved_ids[np.maximum(-1 - found, 0)])

    def _index(self, b: int) -> _CentroidIndex | None:
        """Block b's index, built (again) where it has none or its own is stale; None where its
        centroids are not all finite (the scan then decides)."""
        if b in self.index:
            index = self.index[b]
            if index is None or not index.stale():
                return index
            self.moved_at[index.moved_ids[:index.n_moved]] = -1
        lo, count = self.start[b], self.count[b]
        gids = self.gid[lo:lo + count]
        points = np.ascontiguousarray(self.cent[:, lo:lo + count].T)
        if not np.isfinite(points).all():
            self.index[b] = None
            return None
        made = self.index[b] = _CentroidIndex(gids, points)
        self.position[made.gid] = np.arange(made.gid.size)
        return made

    def merge(self, keep: int, gone: int, centroid: np.ndarray) -> None:
        self.cent[:, self.slot[keep]] = centroid
        b = self.block[gone]
        last = self.start[b] + self.count[b] - 1
        hole = self.slot[gone]
        moved = self.gid[last]
        self.gid[hole] = moved
        self.cent[:, hole] = self.cent[:, last]
        self.slot[moved] = hole
        self.count[b] -= 1
        index = self.index.get(int(b))
        if index:
            for h in (keep, gone):
                if self.position[h] >= 0:
                    index.alive[self.position[h]] = 0
                    index.n_alive -= 1
                    self.position[h] = -1
            j = self.moved_at[gone]
            if j >= 0:  # the last moved centroid fills its row
                last = index.n_moved - 1
                index.moved_ids[j], index.moved_points[j] = index.moved_ids[last], index.moved_points[last]
                self.moved_at[index.moved_ids[j]] = j
                index.n_moved = last
                self.moved_at[gone] = -1
            j = self.moved_at[keep]
            if j < 0:
                if index.n_moved == index.moved_ids.size:
                    # a block scanned since it fell to _INDEXED groups checks no staleness: its
                    # tree goes, and is built again if it is searched so
                    self.moved_at[index.moved_ids] = -1
                    self.position[index.gid] = -1
                    del self.index[int(b)]
                    return
                j = self.moved_at[keep] = index.n_moved
                index.moved_ids[j] = keep
                index.n_moved += 1
            index.moved_points[j] = centroid


def _partner(g: int, live: _LiveGroups, columns, models: Sequence[PrivacyModel]) -> int:
    if live.others(g)[1].size < 2:  # cannot happen: the block passes as a whole, so g is not all of it
        raise AssertionError("a failing group has no group to merge with in its block")
    ties = live.nearest(g)
    if ties.size == 1:
        return int(ties[0])
    gaps = [np.where(gap > _emd.TOLERANCE, gap, 0) for gap in _gaps([c.union_status(g, ties) for c in columns], models)]
    return int(ties[np.lexsort((ties, *reversed(gaps)))[0]])
