"""SafePub's search: a full-domain generalization scheme chosen by the exponential mechanism.

Bild, Kuhn and Prasser, "SafePub: A Truthful Data Anonymization Algorithm With Strong Privacy
Guarantees", PoPETs 2018(1), as ARX implements it (``algorithm/DataDependentEDDPAlgorithm.java``,
``dp/ExponentialMechanism.java``, the score functions ``metric/v2/*.getScore``):

1. every row is drawn into the sample with probability beta (:attr:`DifferentialPrivacy.beta`);
2. the search starts at the top of the lattice (every quasi-identifier at its highest level). At
   each of its steps the current node's predecessors (one attribute one level lower) join the
   candidates, the current node leaves them, and the exponential mechanism draws the next node
   among them: node v with probability proportional to exp(epsilon_step * u(v) / (2 Delta u)),
   epsilon_step = epsilon_search / steps, u the score, Delta u its sensitivity;
3. the answer is the best-scoring node drawn (the top included; a tie goes to the lower node, as
   ARX's ``trackOptimum``);
4. the sample is generalized to it and every row of a class smaller than k is suppressed.

The scores (ARX's, a higher score is better, already divided by their sensitivity, so the
mechanism's weight is exp(epsilon_step * score / 2)); the rows not drawn count as suppressed, as
ARX counts them, which shifts every node's score alike and so changes no probability:

- ``loss`` (ARX's granularity, its default quality model, and the default here: it measures the
  cells' precision, what a statistician reading the release loses):
  -(suppressed rows + mean over the quasi-identifiers of the kept cells' domain shares) / (k - 1),
  the domain share of a cell being the share of the hierarchy's leaves its value covers;
  sensitivity k - 1 (1 when k = 1);
- ``precision``: -(mean over the quasi-identifiers of kept rows x level / height + suppressed
  rows) / (k - 1); sensitivity k - 1;
- ``discernibility``: -(n x suppressed rows + the sum of the kept classes' squared sizes) /
  (n (k^2 / (k - 1) + 1)), n the table's rows; sensitivity n (k^2 / (k - 1) + 1) (5 n when k = 1);
- ``aecs``: the classes kept, plus one when any row is suppressed (the suppressed rows as one
  class); sensitivity 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..exceptions import ParameterError
from ..privacy import DP_SCORES, DifferentialPrivacy
from ._hierarchy import Hierarchy

_KEY_LIMIT = 1 << 62  # a combined class key past this is renumbered before the next column joins


@dataclass(frozen=True)
class PrivacyBudget:
    """What a SafePub release spent of its (epsilon, delta) budget.

    Attributes
    ----------
    epsilon, delta : float
        The model's parameters.
    anonymization : float
        epsilon_anon: the budget of the sampling and the suppression.
    search : float
        epsilon_search: the budget the search may spend.
    steps : int
        The search's steps; each spends ``search / steps``.
    steps_taken : int
        The steps taken (fewer when the lattice ran out of candidates).
    """

    epsilon: float
    delta: float
    anonymization: float
    search: float
    steps: int
    steps_taken: int

    @property
    def per_step(self) -> float:
        return self.search / self.steps

    @property
    def spent(self) -> float:
        """The epsilon spent: the anonymization's and the steps taken."""
        return self.anonymization + self.per_step * self.steps_taken

    def describe(self) -> str:
        """The budget in one line ("epsilon 0.9 + 125 steps x 0.0008 = 1 of 1, delta 1e-06")."""
        return (f"epsilon {self.anonymization:g} (sampling and suppression) + {self.steps_taken} step(s) x "
                f"{self.per_step:.3g} (search) = {self.spent:.6g} of {self.epsilon:g}, delta {self.delta:g}")


@dataclass(frozen=True)
class SafePubResult:
    """The scheme SafePub chose and the rows it releases.

    Attributes
    ----------
    levels : tuple of int
        The chosen level of each quasi-identifier.
    sampled : numpy.ndarray
        Per row of the table, whether it was drawn into the sample.
    kept : numpy.ndarray
        Per row, whether it is released: sampled and in a class of at least k rows at ``levels``.
    score : float
        The chosen node's score (divided by its sensitivity; higher is better).
    k : int
        The model's derived k.
    beta : float
        The sampling probability.
    metric : str
        The score's name.
    budget : PrivacyBudget
        What the release spent.
    seed : int or None
        The seed that reproduces the release (None when a generator was given).
    visited : int
        The lattice nodes scored.
    path : tuple of tuple of int
        The nodes the mechanism drew, in order, the top first: the release's audit trail (the
        answer is the best-scoring of them).
    """

    levels: tuple[int, ...]
    sampled: np.ndarray
    kept: np.ndarray
    score: float
    k: int
    beta: float
    metric: str
    budget: PrivacyBudget
    seed: int | None
    visited: int
    path: tuple[tuple[int, ...], ...] = ()


def exponential_mechanism(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> int:
    """Draw an index with probability proportional to exp(epsilon * score / 2) (McSherry and
    Talwar 2007, as ARX's ``ExponentialMechanism``: the scores already divided by their
    sensitivity).

    Parameters
    ----------
    scores : numpy.ndarray
        One score per candidate.
    epsilon : float
        The step's budget.
    rng : numpy.random.Generator

    Returns
    -------
    int
        The drawn candidate's index.
    """
    exponents = 0.5 * epsilon * np.asarray(scores, dtype=np.float64)
    # shifting by the largest exponent keeps exp() finite and cancels in the normalization
    weights = np.exp(exponents - exponents.max())
    cumulative = np.cumsum(weights)
    drawn = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(drawn, weights.size - 1)


class _Scorer:
    """The sample's classes and score at any node, worked out on the sample's distinct rows
    (its bottom classes) with their counts rather than row by row."""

    def __init__(self, codes: np.ndarray, hierarchies: Sequence[Hierarchy], n_rows: int, k: int, metric: str):
        if metric not in DP_SCORES:
            raise ParameterError(f"metric must be one of {', '.join(DP_SCORES)}; got {metric!r}")
        self.hierarchies, self.n_rows, self.k, self.metric = hierarchies, n_rows, k, metric
        if codes.shape[0]:
            self.bottom, row_bottom, self.counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
            self.row_bottom = row_bottom.reshape(-1)
        else:
            self.bottom, self.row_bottom, self.counts = codes, np.zeros(0, np.int64), np.zeros(0, np.int64)
        self._maps = [[h.code_map(level).astype(np.int64) for level in range(h.depth)] for h in hierarchies]
        # a level's code -> the share of the hierarchy's leaves it covers (ARX's domain share)
        self._shares = [[np.bincount(m, minlength=h.labels[level].size) / h.labels[0].size
                         for level, m in enumerate(maps)] for h, maps in zip(hierarchies, self._maps)]
        self._generalized: dict[tuple[int, int], np.ndarray] = {}

    def generalized(self, j: int, level: int) -> np.ndarray:
        key = (j, level)
        if key not in self._generalized:
            self._generalized[key] = self._maps[j][level][self.bottom[:, j]]
        return self._generalized[key]

    def shares(self, j: int, level: int) -> np.ndarray:
        """Each bottom class's domain share in quasi-identifier ``j`` at ``level``."""
        key = (-1 - j, level)
        if key not in self._generalized:
            self._generalized[key] = self._shares[j][level][self.generalized(j, level)]
        return self._generalized[key]

    def classes(self, levels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Each bottom class's class at ``levels`` and the classes' sizes (rows)."""
        key = np.zeros(self.bottom.shape[0], dtype=np.int64)
        span = 1
        for j, level in enumerate(levels):
            size = int(self.hierarchies[j].labels[level].size)
            if span * size >= _KEY_LIMIT:
                _, renumbered = np.unique(key, return_inverse=True)
                key = renumbered.astype(np.int64).reshape(-1)
                span = int(key.max()) + 1 if key.size else 1
            key = key * size + self.generalized(j, level)
            span *= size
        if span <= 4 * key.size + 4096:  # a dense renumbering costs no sort
            present = np.zeros(span, dtype=bool)
            present[key] = True
            inverse = (np.cumsum(present) - 1)[key]
        else:
            inverse = np.unique(key, return_inverse=True)[1].reshape(-1)
        return inverse, np.bincount(inverse, weights=self.counts).astype(np.int64)

    def row_classes(self, levels: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Each sampled row's class at ``levels`` and the classes' sizes."""
        inverse, sizes = self.classes(levels)
        return inverse[self.row_bottom], sizes

    def score(self, levels: Sequence[int]) -> float:
        inverse, sizes = self.classes(levels)
        k, n, d = self.k, self.n_rows, len(levels)
        kept_classes = sizes >= k
        kept = kept_classes[inverse]
        suppressed = n - int(self.counts[kept].sum())  # the rows not drawn included
        if self.metric == "aecs":
            return float(int(kept_classes.sum()) + (1 if suppressed else 0))
        if self.metric == "discernibility":
            penalty = n * suppressed + float(np.square(sizes[kept_classes].astype(np.float64)).sum())
            # an empty table scores 0 at every node: max(n, 1) keeps the division defined
            return -penalty / (max(n, 1) * (k * k / (k - 1) + 1 if k > 1 else 5))
        scale = k - 1 if k > 1 else 1
        if self.metric == "precision":
            released = n - suppressed
            total = sum(released * (level / h.max_level if h.max_level else 0.0) + suppressed
                        for level, h in zip(levels, self.hierarchies))
            return -total / d / scale
        counts = np.where(kept, self.counts, 0)
        shares = sum(float(np.dot(self.shares(j, level), counts)) for j, level in enumerate(levels))
        return -(suppressed + shares / d) / scale


def _generator(seed: int | np.random.Generator | None) -> tuple[np.random.Generator, int | None]:
    if isinstance(seed, np.random.Generator):
        return seed, None
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        shown = seed.item() if isinstance(seed, np.generic) else seed
        raise ParameterError(f"seed must be an integer >= 0 or a numpy Generator; got {shown!r}")
    return np.random.default_rng(int(seed)), int(seed)


def _code_matrix(codes0: np.ndarray | Sequence[np.ndarray], hierarchies: Sequence[Hierarchy]) -> np.ndarray:
    columns = [np.asarray(c) for c in codes0.T] if isinstance(codes0, np.ndarray) and codes0.ndim == 2 else [
        np.asarray(c) for c in codes0]
    if len(columns) != len(hierarchies) or not columns:
        raise ParameterError(f"safepub needs one code column per hierarchy; got {len(columns)} column(s) and "
                             f"{len(hierarchies)} hierarchies")
    rows = {c.size for c in columns}
    if len(rows) != 1:
        raise ParameterError(f"safepub's code columns differ in length: {sorted(rows)}")
    for column, h in zip(columns, hierarchies):
        if column.size and (column.min() < 0 or column.max() >= h.labels[0].size):
            raise ParameterError(f"{h.attribute!r}: level-0 codes must lie in [0, {h.labels[0].size - 1}]")
    return np.column_stack([c.astype(np.int64) for c in columns])


def node_score(codes0: np.ndarray | Sequence[np.ndarray], hierarchies: Sequence[Hierarchy], sampled: np.ndarray,
               levels: Sequence[int], k: int, metric: str = "loss") -> float:
    """The score the search gives one node (divided by its sensitivity; higher is better).

    Parameters
    ----------
    codes0 : numpy.ndarray or sequence of numpy.ndarray
        The rows' level-0 codes, as :func:`safepub` takes them.
    hierarchies : sequence of Hierarchy
        One per quasi-identifier.
    sampled : numpy.ndarray
        Per row, whether it is in the sample.
    levels : sequence of int
        The node.
    k : int
        The smallest class kept.
    metric : str, default "loss"
        The score.

    Returns
    -------
    float
    """
    codes = _code_matrix(codes0, hierarchies)
    mask = np.asarray(sampled, dtype=bool)
    if mask.shape != (codes.shape[0],):
        raise ParameterError(f"node_score: sampled must hold one flag per row ({codes.shape[0]}); got shape "
                             f"{mask.shape}")
    return _Scorer(codes[mask], hierarchies, codes.shape[0], int(k), metric).score(tuple(levels))


def _better(score: float, levels: tuple[int, ...], best_score: float, best: tuple[int, ...]) -> bool:
    return score > best_score or (score == best_score and sum(levels) < sum(best))


def safepub(codes0: np.ndarray | Sequence[np.ndarray], hierarchies: Sequence[Hierarchy], model: DifferentialPrivacy,
            *, metric: str | None = None, seed: int | np.random.Generator | None = None) -> SafePubResult:
    """Choose a generalization scheme for ``model`` by SafePub, and the rows it releases.

    Parameters
    ----------
    codes0 : numpy.ndarray or sequence of numpy.ndarray
        The rows' level-0 codes (:meth:`Hierarchy.encode`), one column per quasi-identifier (a
        rows x quasi-identifiers matrix or one array per quasi-identifier).
    hierarchies : sequence of Hierarchy
        One per quasi-identifier, in the same order.
    model : DifferentialPrivacy
        epsilon, delta, the budget split, the steps and the score.
    metric : str, optional
        The score (one of ``incrowd.privacy.differential_privacy.SCORES``); default the model's.
    seed : int, numpy.random.Generator or None
        The randomness of the sampling and of the mechanism. The same seed gives the same
        release; None draws a fresh seed and records it in the result.

    Returns
    -------
    SafePubResult
    """
    if not isinstance(model, DifferentialPrivacy):
        raise ParameterError(f"safepub needs a DifferentialPrivacy model; got {type(model).__name__}")
    metric = model.metric if metric is None else metric
    model = replace(model, metric=metric)  # the model checks the metric's name
    codes = _code_matrix(codes0, hierarchies)
    rng, used_seed = _generator(seed)
    sampled = np.asarray(rng.random(codes.shape[0]) < model.beta, dtype=bool)
    scorer = _Scorer(codes[sampled], hierarchies, codes.shape[0], model.k, metric)
    steps = model.search_steps(len(hierarchies))
    per_step = model.epsilon_search / steps
    scored: dict[tuple[int, ...], float] = {}

    def score(levels: tuple[int, ...]) -> float:
        if levels not in scored:
            scored[levels] = scorer.score(levels)
        return scored[levels]

    pivot = tuple(h.max_level for h in hierarchies)
    best, best_score = pivot, score(pivot)
    candidates = {pivot: best_score}
    path = [pivot]
    for _ in range(steps):
        for j, level in enumerate(pivot):
            lower = (*pivot[:j], level - 1, *pivot[j + 1:])
            if level > 0 and lower not in candidates:
                candidates[lower] = score(lower)
        del candidates[pivot]
        if not candidates:
            break
        nodes = list(candidates)
        pivot = nodes[exponential_mechanism(np.fromiter(candidates.values(), float, len(nodes)), per_step, rng)]
        path.append(pivot)
        if _better(candidates[pivot], pivot, best_score, best):
            best, best_score = pivot, candidates[pivot]
    inverse, sizes = scorer.row_classes(best)
    kept = np.zeros(codes.shape[0], dtype=bool)
    kept[np.flatnonzero(sampled)[sizes[inverse] >= model.k]] = True
    budget = PrivacyBudget(epsilon=model.epsilon, delta=model.delta, anonymization=model.epsilon_anonymization,
                           search=model.epsilon_search, steps=steps, steps_taken=len(path) - 1)
    return SafePubResult(levels=best, sampled=sampled, kept=kept, score=best_score, k=model.k, beta=model.beta,
                         metric=metric, budget=budget, seed=used_seed, visited=len(scored), path=tuple(path))


__all__ = ["PrivacyBudget", "SafePubResult", "exponential_mechanism", "node_score", "safepub"]
