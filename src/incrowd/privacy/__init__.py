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
- :data:`MODELS`: spec key -> model class (:func:`register_model` adds one, and every command
  takes it); :func:`models_from_spec` reads them from a
  ``[privacy]`` table;
- :func:`class_stats` builds the statistics of a table, :func:`check_table` checks a whole
  table (a release as read back) and returns a :class:`Failure` per model it does not meet;
  :class:`ReleaseCheck` is that check as a written release runs it (``incrowd.io`` reads the file
  back and calls it), with the records and the one-line refusals of a verification;
- the verifiers of a published table, each with its report: :func:`verify_k_anonymity`
  (:class:`KAnonymityReport`), :func:`verify_l_diversity` (:class:`LDiversityReport`),
  :func:`verify_t_closeness` (:class:`TClosenessReport`).

The names load on first use, so that a command which needs only t's distance (``incrowd
negotiate`` reading a lattice file) does not load pandas. The internal API (not in
``__all__``): ``emd`` (t's earth mover's distance on integer counts, which generalization's search
and publish's sensitive-column merging compute too), ``sample_risk`` (the weighted sample risk
measures, fk, Fk, individual and household risk as sdcMicro, which the report and the publish
risk targets both compute), ``model_risk`` with ``MODEL_RISK_METHODS`` (sdcMicro's log-linear
model risk, ``modRisk``, which ``incrowd risk`` reports) and ``uniqueness_estimates`` (the population-uniqueness estimators the
risk summary reports too; the package attribute ``population_uniqueness`` is the model's module),
``Judge`` with ``CodedColumn`` and ``Pairs`` (the models of a request judging the classes a search
forms as unions of its units: publish's and negotiate's searches), ``other_models`` (the models
of a command that takes k, l and t apart), ``DP_SCORES`` (the scores SafePub's search offers) and
the attribute disclosure measures the report computes and its verdict checks against the models
(``attribute_disclosure_of_classes``, ``t_closeness_of_classes``, ``disclosure_checks`` with
``DisclosureCheck``, ``checked_t``, ``measured_by_disclosure``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._runtime import lazy as _lazy

if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ loads these
    from . import _emd as emd  # noqa: F401
    from . import _sample_risk as sample_risk  # noqa: F401
    from ._disclosure import (  # noqa: F401
        DisclosureCheck,
        attribute_disclosure_of_classes,
        checked_t,
        disclosure_checks,
        measured_by_disclosure,
        t_closeness_of_classes,
    )
    from ._judge import CodedColumn, Judge, Pairs  # noqa: F401
    from ._model import TOLERANCE, ClassStats, PrivacyModel
    from ._model_risk import MODEL_RISK_METHODS, model_risk  # noqa: F401
    from ._registry import (  # noqa: F401
        MODELS,
        models_from_spec,
        models_from_summary,
        other_models,
        register_model,
        unregister_model,
    )
    from ._stats import Failure, check_table, class_stats
    from ._uniqueness import population_uniqueness as uniqueness_estimates  # noqa: F401
    from ._verify import (
        KAnonymityReport,
        LDiversityReport,
        TClosenessReport,
        verify_k_anonymity,
        verify_l_diversity,
        verify_t_closeness,
    )
    from ._written import ReleaseCheck, verified_lines
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

__getattr__, __dir__ = _lazy.attach(__name__, {
    **dict.fromkeys(["TOLERANCE", "ClassStats", "PrivacyModel"], "._model"),
    **dict.fromkeys(["MODELS", "models_from_spec", "models_from_summary", "other_models", "register_model",
                     "unregister_model"],
                    "._registry"),
    **dict.fromkeys(["CodedColumn", "Judge", "Pairs"], "._judge"),
    **dict.fromkeys(["DisclosureCheck", "attribute_disclosure_of_classes", "checked_t", "disclosure_checks",
                     "measured_by_disclosure", "t_closeness_of_classes"], "._disclosure"),
    **dict.fromkeys(["Failure", "check_table", "class_stats"], "._stats"),
    **dict.fromkeys(["KAnonymityReport", "LDiversityReport", "TClosenessReport", "verify_k_anonymity",
                     "verify_l_diversity", "verify_t_closeness"], "._verify"),
    **dict.fromkeys(["ReleaseCheck", "verified_lines"], "._written"),
    **dict.fromkeys(["MODEL_RISK_METHODS", "model_risk"], "._model_risk"),
    "AlphaK": ".alpha_k", "AverageRisk": ".average_risk", "BetaLikeness": ".beta_likeness",
    "DeltaDisclosure": ".delta_disclosure", "DeltaPresence": ".delta_presence", "DistinctL": ".distinct_l",
    "DifferentialPrivacy": ".differential_privacy", "DP_SCORES": ".differential_privacy:SCORES",
    "EntropyL": ".entropy_l", "KAnonymity": ".k_anonymity", "KMap": ".k_map",
    "PopulationUniqueness": ".population_uniqueness", "RecursiveL": ".recursive_l", "TCloseness": ".t_closeness",
    "uniqueness_estimates": "._uniqueness:population_uniqueness",
}, modules={"emd": "._emd", "sample_risk": "._sample_risk"})

__all__ = ["MODELS", "TOLERANCE", "AlphaK", "AverageRisk", "BetaLikeness", "ClassStats", "DeltaDisclosure",
           "DeltaPresence", "DifferentialPrivacy", "DistinctL", "EntropyL", "Failure", "KAnonymity", "KAnonymityReport", "KMap",
           "LDiversityReport", "PopulationUniqueness", "PrivacyModel", "RecursiveL", "ReleaseCheck", "TCloseness",
           "TClosenessReport", "check_table", "class_stats", "models_from_spec", "register_model", "unregister_model",
           "verify_k_anonymity",
           "verified_lines", "verify_l_diversity", "verify_t_closeness"]
