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

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataError, ParameterError, name_list
from ..generalization import as_value_labels, encode_cells, qi_labels
from ..io import read_table
from ..privacy import CodedColumn, Judge, Pairs, PrivacyModel

if TYPE_CHECKING:
    from ._prepare import Prepared


def judge_of(prep: Prepared, rows: np.ndarray, pairs: Pairs, weights: np.ndarray | None,
             models: Sequence[PrivacyModel] | None = None) -> Judge:
    """The spec's models (or ``models``) judging units (bottom classes or rows) of the prepared table."""
    columns = [CodedColumn(s.name, tuple(s.values), bool(s.ordered), s.reference_counts, bool(s.missing))
               for s in prep.sensitive]
    return Judge(prep.spec.models if models is None else models, columns, rows, pairs, weights)


def row_judge(prep: Prepared) -> Judge:
    """A judge whose units are the rows of the table. A model of a population table is left
    out: its release has no numeric quasi-identifier (the spec refuses one), so its groups are
    the classes the search judged against the population."""
    ones = np.ones(prep.n, dtype=np.int64)
    index = np.arange(prep.n, dtype=np.int64)
    models = [m for m in prep.spec.models if population_file(m) is None]
    return judge_of(prep, ones, [(index, s.codes.astype(np.int64), ones) for s in prep.sensitive], prep.weights,
                    models)


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


@dataclass
class Population:
    """The population table of k-map and delta-presence (one row per person), as the search
    reads it: the level-0 codes of its distinct rows over the categorical quasi-identifiers, and
    how many people each stands for."""

    path: str
    codes: dict[str, np.ndarray]
    counts: np.ndarray
    #: per quasi-identifier, the population's own cell of each level-0 code (what a column left
    #: at level 0 publishes: the cells as given)
    cells: dict[str, dict[int, object]]

    def at(self, prep: Prepared, bottom_codes: dict[str, np.ndarray], levels: dict[str, int], class_of: np.ndarray,
           n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """(the population's records in each class of the node ``levels``, the sizes of the
        population's classes at that node that hold no row of the data); ``class_of``: the
        class of each bottom class of the data, whose level-0 codes are ``bottom_codes``."""
        first = np.zeros(n_classes, np.int64)
        first[class_of] = np.arange(class_of.size)
        cols = prep.categorical
        data = np.column_stack([prep.hierarchies[a].code_map(levels[a])[bottom_codes[a][first]] for a in cols])
        people = np.column_stack([prep.hierarchies[a].code_map(levels[a])[self.codes[a]] for a in cols])
        _, ids = np.unique(np.vstack([data, people]), axis=0, return_inverse=True)
        ids = ids.ravel()
        per_key = np.bincount(ids[n_classes:], weights=self.counts, minlength=int(ids.max()) + 1).astype(np.int64)
        in_data = np.zeros(per_key.size, dtype=bool)
        in_data[ids[:n_classes]] = True
        return per_key[ids[:n_classes]], per_key[~in_data & (per_key > 0)]

    def labelled(self, prep: Prepared, levels: dict[str, int]) -> pd.DataFrame:
        """The population as the release spells it at ``levels`` (one row per person): what the
        written file's check compares the release's classes with."""
        out = {}
        for a in prep.categorical:
            level = levels[a]
            hierarchy = prep.hierarchies[a]
            codes = np.repeat(self.codes[a], self.counts)
            if level > 0:
                out[a] = hierarchy.generalize(codes, level)
            else:
                out[a] = pd.Series(codes).map(self.cells[a]).to_numpy()
        return pd.DataFrame(out)


def population_file(model: PrivacyModel) -> str | None:
    """The population table a model reads (k-map's, delta-presence's), or None."""
    value = getattr(model, "population", None)
    return value if isinstance(value, str) else None


def population_of(prep: Prepared, bottom_codes: dict[str, np.ndarray], bottom_counts: np.ndarray) -> Population | None:
    """The spec's population table read and coded with the data's hierarchies (None without a
    model that needs one); a value a hierarchy lacks, or a class of the data with more rows than
    the population has people, is refused in one line."""
    paths = {path for path in map(population_file, prep.spec.models) if path is not None}
    if not paths:
        return None
    if len(paths) > 1:
        raise ParameterError(f"k_map and delta_presence name different population tables ({', '.join(sorted(paths))}); "
                             "a release has one population")
    (path,) = paths
    if not os.path.exists(path):
        raise DataError(f"the population table {path!r} of k_map or delta_presence does not exist")
    table = read_table(path)
    cols = prep.categorical
    absent = [a for a in cols if a not in table.columns]
    if absent:
        raise DataError(f"the population table {path!r} lacks the quasi-identifier column(s) {name_list(absent)}")
    codes = {}
    for a in cols:
        labels, user = qi_labels(table[a])
        shown = as_value_labels(table[a], labels) if prep.match.get(a) == "label" else labels
        try:
            codes[a] = encode_cells(prep.hierarchies[a], table[a], shown, user).astype(np.int64)
        except DataError as exc:
            raise DataError(f"the population table {path!r}: {exc}; every value of the population needs a row in "
                            f"the hierarchy of {a!r} (give it a hierarchy file)") from None
    stacked = np.column_stack([codes[a] for a in cols])
    distinct, counts = np.unique(stacked, axis=0, return_counts=True)
    cells = {a: dict(zip(codes[a].tolist(), table[a].tolist())) for a in cols}
    population = Population(path, {a: distinct[:, j] for j, a in enumerate(cols)}, counts.astype(np.int64), cells)
    # the data must be part of the population: each bottom class's people at level 0
    level0 = {a: 0 for a in cols}
    bottom_keys = np.column_stack([bottom_codes[a] for a in cols])
    found, short = population.at(prep, bottom_codes, level0, np.arange(bottom_keys.shape[0]), bottom_keys.shape[0])
    del short
    fewer = np.flatnonzero(found < bottom_counts)
    if fewer.size:
        values = ", ".join(f"{a}={prep.hierarchies[a].labels[0][bottom_codes[a][fewer[0]]]}" for a in cols)
        raise DataError(f"the population table {path!r} has {int(found[fewer[0]])} person(s) with {values}, but the "
                        f"data {int(bottom_counts[fewer[0]])} row(s); the data must be a part of the population")
    return population
