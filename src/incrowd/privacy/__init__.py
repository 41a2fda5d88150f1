"""Privacy models: one model per file, each a small frozen class with its parameters, its
``[privacy]`` spec key, whether it is monotone under generalization and under suppression, and
its vectorized check of every equivalence class (:meth:`PrivacyModel.classes_ok` on a
:class:`ClassStats`).

- :class:`KAnonymity` (``k``), :class:`DistinctL` (``l``), :class:`EntropyL` (``entropy_l``),
  :class:`RecursiveL` (``recursive_l``), :class:`AlphaK` (``alpha``, with ``k``),
  :class:`DeltaDisclosure` (``delta_disclosure``), :class:`BetaLikeness` (``beta``, basic or
  enhanced), :class:`TCloseness` (``t``);
- the population models: :class:`KMap` (``k_map``, a population table or an estimate from the
  weights), :class:`DeltaPresence` (``delta_presence``, a population table), and the global models
  :class:`AverageRisk` (``max_average_risk``) and :class:`PopulationUniqueness`
  (``max_population_uniqueness``), which judge the whole release (:meth:`PrivacyModel.release_ok`);
- :class:`DifferentialPrivacy` (``differential_privacy``): (epsilon, delta)-differential privacy
  by SafePub (a random sample, a k derived from epsilon and delta, the scheme drawn by the
  exponential mechanism in :func:`incrowd.generalization.safepub`);
- :data:`MODELS`: spec key -> model class; :func:`models_from_spec` reads them from a
  ``[privacy]`` table;
- ``Judge`` (with ``CodedColumn``, internal): the models of a request judging the classes a
  search forms as unions of its units (publish's and negotiate's searches);
- :func:`class_stats` builds the statistics of a table, :func:`check_table` checks a whole
  table (a release as read back) and returns a :class:`Failure` per model it does not meet.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import lazy as _lazy

if _TYPE_CHECKING:  # what type checkers see; at run time a name loads its module on first use
    from ._judge import CodedColumn, Judge, Pairs  # noqa: F401  (Pairs: a type of the internal API)
    from ._model import TOLERANCE, ClassStats, PrivacyModel
    from ._registry import MODELS, models_from_spec, other_models
    from ._stats import Failure, check_table, class_stats
    from .alpha_k import AlphaK
    from .average_risk import AverageRisk
    from .beta_likeness import BetaLikeness
    from .delta_disclosure import DeltaDisclosure
    from .delta_presence import DeltaPresence
    from .differential_privacy import SCORES as DP_SCORES  # noqa: F401
    from .differential_privacy import DifferentialPrivacy
    from .distinct_l import DistinctL
    from .entropy_l import EntropyL
    from .k_anonymity import KAnonymity
    from .k_map import KMap
    from .population_uniqueness import PopulationUniqueness
    from .recursive_l import RecursiveL
    from .t_closeness import TCloseness

# loaded on first use, so that a search judging classes (``Judge``, numpy only) never loads
# pandas, which checking a table needs
__getattr__, __dir__ = _lazy.attach(__name__, {
    "CodedColumn": "._judge", "Judge": "._judge", "Pairs": "._judge",
    "TOLERANCE": "._model", "ClassStats": "._model", "PrivacyModel": "._model",
    "MODELS": "._registry", "models_from_spec": "._registry", "other_models": "._registry",
    "Failure": "._stats", "check_table": "._stats", "class_stats": "._stats",
    "AlphaK": ".alpha_k", "AverageRisk": ".average_risk", "BetaLikeness": ".beta_likeness",
    "DifferentialPrivacy": ".differential_privacy",
    # internal (not in __all__): the scores SafePub's search (incrowd.generalization.safepub) offers
    "DP_SCORES": ".differential_privacy:SCORES",
    "DeltaDisclosure": ".delta_disclosure", "DeltaPresence": ".delta_presence", "DistinctL": ".distinct_l",
    "EntropyL": ".entropy_l", "KAnonymity": ".k_anonymity", "KMap": ".k_map",
    "PopulationUniqueness": ".population_uniqueness", "RecursiveL": ".recursive_l", "TCloseness": ".t_closeness",
    # internal (not in __all__): the population-uniqueness estimators the risk summary reports too,
    # under another name: the package attribute population_uniqueness is the model's module
    "uniqueness_estimates": "._uniqueness:population_uniqueness",
}, modules={
    # internal (not in __all__): the weighted sample risk measures (fk, Fk, individual and household
    # risk, as sdcMicro) that the report and the publish risk targets both compute
    "sample_risk": "._sample_risk",
})


# internal (not in __all__): Judge, CodedColumn and Pairs (the searches' judging of their classes)
# and other_models (the commands that take k, l and t apart)
__all__ = ["MODELS", "TOLERANCE", "AlphaK", "AverageRisk", "BetaLikeness", "ClassStats",
           "DeltaDisclosure", "DifferentialPrivacy",
           "DeltaPresence", "DistinctL", "EntropyL", "Failure", "KAnonymity", "KMap", "PopulationUniqueness",
           "PrivacyModel", "RecursiveL", "TCloseness", "check_table", "class_stats", "models_from_spec"]
