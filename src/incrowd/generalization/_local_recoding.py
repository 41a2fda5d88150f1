"""Local recoding over hierarchies: each class gets its own generalization levels.

Global (full-domain) recoding publishes every value of a quasi-identifier at one level of its
hierarchy, the level of a lattice node; local recoding lets the level differ between classes,
so a dense region of the data keeps fine values while a sparse one is generalized further
(LeFevre, DeWitt & Ramakrishnan 2006, "Mondrian multidimensional k-anonymity", with
hierarchies for categorical attributes as in Fung, Wang & Yu 2005, "Top-down specialization").

Top-down specialization, as Mondrian does it over hierarchies:

1. start from one partition per class of a start node (default: the top of every hierarchy,
   one partition of every row); a class below k there is suppressed, as :func:`generalize`
   suppresses it;
2. a partition publishes, per quasi-identifier, the lowest common ancestor of its rows'
   values (the lowest level at which they share one value);
3. a partition may be split on a quasi-identifier by replacing that common ancestor with its
   children one level down, when every child holds at least k rows; of the allowed splits the
   one that lowers ``metric`` the most is taken (``loss``: Iyengar's LM of the partition's
   cells, ``discernibility``: the sum of squared class sizes; each breaks the other's ties),
   counting by default one step ahead: its own gain plus, for each of its parts, the gain of
   the part's best split (a split that gains little at once but opens large gains below wins);
4. repeated until no partition can be split.

Each split keeps every partition at least k rows and the partitions' regions of the domain
disjoint, so the published classes are the partitions and the release is k-anonymous without
suppressing a row (beyond the start node's classes below k). Every split lowers the loss, and
the published value is a partition's lowest common ancestor, so starting from a global node
gives a release never worse than that node's for ``loss``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, VerificationError
from ..io import Promise, Verification, in_memory, mark_changed, resolve_roles
from ..privacy import KAnonymity, ReleaseCheck, verify_k_anonymity
from ._hierarchy import Hierarchy
from ._lattice import resolve_hierarchies
from ._table import _as_level
from ._utility_metrics import cell_metrics, check_weights

__all__ = ["local_recoding", "LocalRecodingResult", "SPLIT_METRICS"]

#: what a split may lower
SPLIT_METRICS = ("loss", "discernibility")


@dataclass
class LocalRecodingResult:
    """The table :func:`local_recoding` releases, and how it was made.

    Attributes
    ----------
    table : pandas.DataFrame
        The released rows: each class's quasi-identifiers at its own levels, identifiers
        dropped, rows of start classes below k suppressed, row order kept.
    quasi_identifiers : list of str
        The quasi-identifiers.
    k : int
        The k that holds.
    n_rows : int
        Rows of the input.
    suppressed : int
        Rows suppressed (only classes of the start node below k).
    classes : int
        Equivalence classes of the release.
    min_class_size : int
        Size of its smallest class.
    seconds : float
        Time of the call.
    kept_rows : numpy.ndarray
        Positions in the input of the released rows.
    class_levels : pandas.DataFrame
        One row per class: the level of each quasi-identifier and the class's ``size``.
    row_levels : numpy.ndarray
        (released rows, quasi-identifiers): the level each cell is published at.
    verification : Verification
        What was verified about ``table``, and where (:class:`incrowd.Verification`).
    metrics : dict or None
        The release's utility metrics: ``loss``, ``discernibility``, ``aecs`` and
        ``precision`` (the others need one level per quasi-identifier: None).
    metric : str
        What the splits lowered.
    start : dict of str to int or None
        The start node (None: the top of every hierarchy).
    lookahead : bool
        Whether splits were scored one step ahead.
    """

    table: pd.DataFrame
    quasi_identifiers: list[str]
    k: int
    n_rows: int
    suppressed: int
    classes: int
    min_class_size: int
    seconds: float
    kept_rows: np.ndarray = field(repr=False)
    class_levels: pd.DataFrame = field(repr=False)
    row_levels: np.ndarray = field(repr=False)
    verification: Verification = field(default_factory=Verification)
    metrics: dict | None = None
    metric: str = "loss"
    start: dict[str, int] | None = None
    lookahead: bool = True

    @property
    def level_ranges(self) -> dict[str, tuple[int, int]]:
        """Per quasi-identifier, the lowest and the highest level a class publishes it at."""
        lv = self.class_levels
        return {a: (int(lv[a].min()), int(lv[a].max())) if len(lv) else (0, 0) for a in self.quasi_identifiers}

    def summary(self) -> dict:
        """What the CLI's ``--json`` prints for this release.

        Returns
        -------
        dict
            JSON-ready: ``recoding`` ("local"), the quasi-identifiers' level ranges, the start
            node, rows in and out, suppressed rows, classes, the smallest class, k, the split
            metric and ``lookahead``, the utility metrics, the time and ``verification``.
        """
        return {
            "recoding": "local",
            "level_ranges": {a: list(r) for a, r in self.level_ranges.items()},
            "start": dict(self.start) if self.start is not None else None,
            "rows_in": self.n_rows, "rows_out": self.n_rows - self.suppressed, "suppressed": self.suppressed,
            "suppressed_fraction": self.suppressed / self.n_rows if self.n_rows else 0.0,
            "classes": self.classes, "min_class_size": self.min_class_size, "k": self.k,
            "metric": self.metric, "lookahead": self.lookahead,
            "metrics": dict(self.metrics) if self.metrics is not None else None,
            "seconds": self.seconds, "verification": self.verification,
        }


def _names(value: Sequence[str] | str | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [q.strip() for q in value.split(",") if q.strip()]
    return [str(q) for q in value]


def local_recoding(data: pd.DataFrame, hierarchies: Mapping[str, Hierarchy] | str | None = None,
                   k: int | None = None, *, quasi_identifiers: Sequence[str] | str | None = None,
                   intervals: Mapping[str, Sequence[float]] | None = None,
                   identifiers: Sequence[str] | str | None = None, levels: Mapping[str, int] | None = None,
                   metric: str = "loss", lookahead: bool = True,
                   metric_weights: Mapping[str, float] | None = None) -> LocalRecodingResult:
    """Generalize each class of ``data`` to its own levels (local recoding, Mondrian over the
    hierarchies) so that every class holds at least ``k`` rows, and verify the table.

    The quasi-identifiers start at ``levels`` (default: the top of every hierarchy) and each
    partition of the rows is split, one hierarchy level at a time, on the quasi-identifier
    whose split lowers ``metric`` the most while every part keeps at least ``k`` rows; each
    class publishes the lowest common ancestor of its values. Rows of start classes below
    ``k`` are suppressed (from the top of hierarchies with one top value: none). Identifiers
    are dropped; other columns pass unchanged; rows keep their order.

    Parameters
    ----------
    data : pandas.DataFrame
        The table.
    hierarchies : mapping of str to Hierarchy, str or None, default None
        A hierarchy per quasi-identifier, or a folder of ARX-style hierarchy files.
    k : int
        The smallest class size (>= 2).
    quasi_identifiers : str, sequence of str or None, default None
        The quasi-identifiers, with those of ``levels`` (default: those of ``levels``, or
        without ``levels`` those of a mapping ``hierarchies`` and of ``intervals``).
    intervals : mapping of str to sequence of float or None, default None
        Interval widths per numeric attribute without a hierarchy.
    identifiers : str, sequence of str or None, default None
        Columns dropped.
    levels : mapping of str to int or None, default None
        The start node (a level per quasi-identifier, 0 where left out when given; e.g. the
        optimal global node: the result's loss is then never above that node's). None: the
        top of every hierarchy.
    metric : {"loss", "discernibility"}, default "loss"
        What each split lowers the most.
    lookahead : bool, default True
        Score a split by its gain plus the best gain of a split of each of its parts (one step
        ahead: a split that gains little itself but opens large gains below wins); False: by
        its own gain alone (faster, often a higher loss).
    metric_weights : mapping of str to float or None, default None
        A weight per quasi-identifier in ``loss`` and ``precision`` (1 where left out), as
        :func:`generalize` takes them: a split of a heavier column gains more.

    Returns
    -------
    LocalRecodingResult
        The release (``table``), verified k-anonymous (``verification``), with the level of
        every class and its metrics.
    """
    t0 = time.perf_counter()
    if not isinstance(metric, str) or metric.strip().lower() not in SPLIT_METRICS:
        raise ParameterError(f"metric of local recoding must be one of {', '.join(SPLIT_METRICS)}; got {metric!r}")
    metric = metric.strip().lower()
    if levels is not None and not isinstance(levels, Mapping):
        raise ParameterError(f"levels must map quasi-identifiers to levels; got {levels!r}")
    qis = _names(quasi_identifiers)
    if quasi_identifiers is None and not levels:
        qis = [str(a) for a in [*(hierarchies if isinstance(hierarchies, Mapping) else {}), *(intervals or {})]]
    qis += [str(a) for a in levels or {} if str(a) not in qis]  # as generalize: levels name quasi-identifiers
    if not qis:
        raise ParameterError("name the quasi-identifiers: give quasi_identifiers, levels, or a hierarchy per "
                             "attribute")
    n = int(data.shape[0])
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ParameterError(f"k must be an integer of at least 2; got {k!r}")
    if n < k:
        raise ParameterError(f"k={k} is more than the {n} rows of the data")
    k = int(k)
    roles = resolve_roles(data, qis, identifiers)
    qis, hier = resolve_hierarchies(data, list(roles.quasi_identifiers), hierarchies, intervals, None)
    weights = check_weights(metric_weights, qis)
    start = None if levels is None else {a: _as_level(levels.get(a, 0), a, hier[a].max_level) for a in qis}
    from ._cells import attach_recodes, encode_cells, recode_groups

    hs = [hier[a] for a in qis]
    codes0 = np.column_stack([encode_cells(hier[a], data[a]).astype(np.int64) for a in qis])
    # codes[j][L]: each row's code at level L of quasi-identifier j
    codes = [[h.code_map(L).astype(np.int64)[codes0[:, j]] for L in range(h.depth)] for j, h in enumerate(hs)]
    top = np.array([start[a] if start is not None else h.max_level for a, h in zip(qis, hs)], dtype=np.int64)
    parts, keep = _recode(codes, hs, top, k, metric, lookahead, weights)
    part_of = np.full(n, -1, dtype=np.int64)
    for p, idx in enumerate(parts):
        part_of[idx] = p
    part_levels = _common_ancestors(codes, part_of, len(parts), top)
    row_levels_all = part_levels[np.maximum(part_of, 0)]
    _check_labels(hs, codes, part_levels, parts)
    out = data.drop(columns=list(roles.identifiers)).copy()
    for j, a in enumerate(qis):
        column = np.empty(n, dtype=object)
        for L in np.unique(row_levels_all[:, j]).tolist():
            at = row_levels_all[:, j] == L
            column[at] = hs[j].labels[L][codes[j][L][at]]
        out[a] = column
    out = out.loc[keep].reset_index(drop=True)
    mark_changed(out, qis)  # a statistical file's labels no longer describe them
    attach_recodes(out, {a: recode_groups(data[a], hier[a]) for a in qis})
    kept_rows = np.flatnonzero(keep)
    verification = in_memory(Promise(tuple(qis), check=ReleaseCheck((KAnonymity(k),))))
    report = verify_k_anonymity(out, qis, k)
    verification["k_anonymity"] = report.to_dict()
    if not report:
        raise VerificationError(f"locally recoded table is not {k}-anonymous ({report.to_dict()}); nothing written")
    row_levels = row_levels_all[kept_rows]
    metrics = cell_metrics(hs, codes0[kept_rows], row_levels, part_of[kept_rows], n, weights)
    sizes = np.array([idx.size for idx in parts], dtype=np.int64)
    class_levels = pd.DataFrame(part_levels, columns=qis)
    class_levels["size"] = sizes
    return LocalRecodingResult(
        table=out, quasi_identifiers=list(qis), k=k, n_rows=n, suppressed=int(n - keep.sum()),
        classes=int(report.n_classes), min_class_size=int(report.min_class_size),
        seconds=time.perf_counter() - t0, kept_rows=kept_rows, class_levels=class_levels, row_levels=row_levels,
        verification=verification, metrics=metrics, metric=metric, start=start, lookahead=bool(lookahead),
    )


def _leaf_loss(h: Hierarchy) -> list[np.ndarray]:
    """Per level, the LM cost of a cell published as each code."""
    total = int(h.labels[0].size)
    out = []
    for L in range(h.depth):
        leaves = np.bincount(h.code_map(L), minlength=h.labels[L].size)
        out.append((leaves - 1) / (total - 1) if total > 1 else np.zeros(leaves.size))
    return out


class _Splitter:
    """The allowed splits of a partition and their gains."""

    def __init__(self, codes: list[list[np.ndarray]], hs: list[Hierarchy], k: int, metric: str,
                 weights: np.ndarray):
        self.codes, self.k, self.metric = codes, k, metric
        self.losses = [[w * x for x in _leaf_loss(h)] for h, w in zip(hs, weights.tolist())]
        self.sizes = [[int(x.size) for x in h.labels] for h in hs]

    def candidates(self, idx: np.ndarray, lv: np.ndarray) -> list[tuple]:
        """Every split of the rows ``idx`` that leaves each part k rows, as (gain key, quasi-
        identifier, the rows' codes one level down, the parts' sizes); ``lv`` is lowered in
        place to the rows' lowest common ancestors."""
        size, k = idx.size, self.k
        out = []
        for j, per_level in enumerate(self.codes):
            L = int(lv[j])
            below = None
            while L > 0:  # the common ancestor: down while the rows share one value
                below = per_level[L - 1][idx]
                if below.min() != below.max():
                    break
                L -= 1
                below = None
            lv[j] = L
            if below is None or size < 2 * k:
                continue
            labels = self.sizes[j][L - 1]
            if labels <= 4 * size + 64:  # counting beats sorting while the labels are few
                every = np.bincount(below, minlength=labels)
                children = np.flatnonzero(every)
                counts = every[children]
            else:
                children, counts = np.unique(below, return_counts=True)
            if counts.min() < k:
                continue
            loss = self.losses[j]
            gain_loss = size * loss[L][per_level[L][idx[0]]] - float(counts @ loss[L - 1][children])
            gain_dm = float(size) ** 2 - float(counts.astype(np.float64) @ counts)
            key = (gain_loss, gain_dm) if self.metric == "loss" else (gain_dm, gain_loss)
            out.append((key, j, below, counts))
        return out

    @staticmethod
    def parts(idx: np.ndarray, below: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
        return np.split(idx[np.argsort(below, kind="stable")], np.cumsum(counts)[:-1])

    def best(self, idx: np.ndarray, lv: np.ndarray, lookahead: bool, found: list[tuple] | None = None):
        """The split to take (None: none allowed): the largest gain, or with ``lookahead`` the
        largest gain plus the best gain of each of its parts; with its parts as (rows, levels,
        their splits or None where not computed). ``found``: the splits of ``idx`` when known
        (``lv`` then already lowered)."""
        if found is None:
            found = self.candidates(idx, lv)
        if not found:
            return None, []
        if len(found) == 1 or not lookahead:
            cand = max(found, key=lambda c: c[0])
            return cand, [(part, self.lowered(lv, cand[1]), None) for part in self.parts(idx, cand[2], cand[3])]
        best, best_score, best_parts = None, None, []
        for cand in found:
            key, j, below, counts = cand
            score = list(key)
            parts = []
            for part in self.parts(idx, below, counts):
                child_lv = self.lowered(lv, j)
                ahead = self.candidates(part, child_lv) if part.size >= 2 * self.k else None
                if ahead:
                    top = max(c[0] for c in ahead)
                    score = [score[0] + top[0], score[1] + top[1]]
                parts.append((part, child_lv, ahead))
            if best_score is None or tuple(score) > best_score:
                best, best_score, best_parts = cand, tuple(score), parts
        return best, best_parts

    @staticmethod
    def lowered(lv: np.ndarray, j: int) -> np.ndarray:
        out = lv.copy()
        out[j] -= 1
        return out


def _recode(codes: list[list[np.ndarray]], hs: list[Hierarchy], top: np.ndarray, k: int,
            metric: str, lookahead: bool, weights: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """(the final partitions as row positions, which rows are kept)."""
    m = len(hs)
    splitter = _Splitter(codes, hs, k, metric, weights)
    # the start node's classes; those below k are suppressed
    start_codes = np.column_stack([codes[j][int(top[j])] for j in range(m)])
    _, class_of, counts = np.unique(start_codes, axis=0, return_inverse=True, return_counts=True)
    class_of = class_of.ravel()
    keep = counts[class_of] >= k
    order = np.argsort(class_of, kind="stable")
    stack: list[tuple] = [(idx, top.copy(), None) for idx in np.split(order, np.cumsum(counts)[:-1])
                          if idx.size >= k]
    final: list[np.ndarray] = []
    while stack:
        idx, lv, found = stack.pop()
        if idx.size < 2 * k:  # no split leaves two parts of k rows; the common ancestors come later
            final.append(idx)
            continue
        # the splits a look ahead computed are reused: the rows and levels are the same
        chosen, parts = splitter.best(idx, lv, lookahead, found)
        if chosen is None:
            final.append(idx)
            continue
        stack.extend(parts)
    final.sort(key=lambda idx: int(idx.min()))  # classes in the order of their first row
    return final, keep


def _common_ancestors(codes: list[list[np.ndarray]], part_of: np.ndarray, n_parts: int,
                      top: np.ndarray) -> np.ndarray:
    """(partitions, quasi-identifiers): the lowest level at which each partition's rows share
    one value (at most the start level, where they do)."""
    out = np.tile(top, (n_parts, 1)).astype(np.int64)
    if n_parts == 0:
        return out
    rows = np.flatnonzero(part_of >= 0)
    rows = rows[np.argsort(part_of[rows], kind="stable")]
    starts = np.flatnonzero(np.r_[True, np.diff(part_of[rows]) != 0])
    for j, per_level in enumerate(codes):
        for L in range(int(top[j]), -1, -1):  # sharing a value at L means sharing one above
            c = per_level[L][rows]
            one = np.minimum.reduceat(c, starts) == np.maximum.reduceat(c, starts)
            out[one, j] = L
    return out


def _check_labels(hs: list[Hierarchy], codes: list[list[np.ndarray]], part_levels: np.ndarray,
                  parts: list[np.ndarray]) -> None:
    """Refuse a release where one published label would name two different groups of values
    (a hierarchy spelling a group at one level as a value or group at another): a reader of
    the file could not tell the classes apart by what they cover."""
    first = np.array([int(idx[0]) for idx in parts], dtype=np.int64)
    for j, h in enumerate(hs):
        seen: dict[str, tuple[int, int]] = {}
        pairs = {(int(L), int(codes[j][int(L)][r])) for L, r in zip(part_levels[:, j], first)}
        for L, code in sorted(pairs):
            label = str(h.labels[L][code])
            if label not in seen:
                seen[label] = (L, code)
                continue
            L0, code0 = seen[label]
            if not np.array_equal(h.code_map(L0) == code0, h.code_map(L) == code):
                raise DataError(f"hierarchy {h.source}: label {label!r} names different groups at levels {L0} "
                                f"and {L}; local recoding publishes both levels side by side, so give the groups "
                                "distinct labels")
