"""Every key a release specification may hold: one table that the parser checks names and
choices against (:mod:`incrowd.publishing._spec`), the web's Publish page offers, and
``docs/gen_spec.py`` writes the reference page from, so that the three cannot drift apart."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from ..exceptions import ParameterError

#: the sections of a spec, in the order the reference page gives them
SECTIONS = ("privacy", "columns", "missing", "method_params", "levels", "report", "perturb", "benchmarks")


@dataclass(frozen=True)
class SpecKey:
    """One key: where it stands, what it takes, its value when left out and what it means."""

    #: ``privacy``, ``column`` (a key of one column's table in ``[columns]``), ``missing``
    section: str
    name: str
    #: what it takes, as a user reads it
    type: str
    #: its value when left out (None: not set)
    default: Any
    meaning: str
    #: the words it accepts, where it takes one of a few
    choices: tuple[str, ...] = ()


#: a privacy key that only means something with ``suppression = "cells"``
CELL_KEYS = ("missing_matches", "importance", "max_suppressed_cells")
#: the risk targets (each needs a ``weight`` column)
RISK_TARGET_KEYS = ("max_individual_risk", "max_global_risk", "max_expected_reidentifications",
                    "max_household_risk")

SPEC_KEYS: tuple[SpecKey, ...] = (
    SpecKey("privacy", "k", "integer >= 2", None,
            "Required. Every published class (rows alike in all quasi-identifiers) holds at least k rows."),
    SpecKey("privacy", "l", "integer >= 2", None,
            "Distinct l-diversity: at least l distinct values of every sensitive column in every class."),
    SpecKey("privacy", "t", "number in (0, 1], or table { value = number, hierarchy = file path, column = name }",
            None,
            "t-closeness: the earth mover's distance of every class's distribution of each sensitive column "
            "from the whole file's is at most t (ordered for numbers, equal for text; with `hierarchy`, ARX's "
            "hierarchical distance over the sensitive values' hierarchy file)."),
    SpecKey("privacy", "entropy_l", "number >= 1", None,
            "Entropy l-diversity: the entropy of every class's sensitive values is at least log(l)."),
    SpecKey("privacy", "recursive_l", "table of c (a number > 0) and l (an integer of at least 2)", None,
            "Recursive (c, l)-diversity: in every class the most frequent sensitive value is less than c times "
            "the sum of the values from the l-th most frequent on."),
    SpecKey("privacy", "alpha", "number in (0, 1]", None,
            "(alpha, k)-anonymity, with k: no sensitive value holds more than this share of a class."),
    SpecKey("privacy", "delta_disclosure", "number > 0", None,
            "delta-disclosure privacy: |log(share of a value in a class / its share in the file)| < delta for "
            "every value of every class."),
    SpecKey("privacy", "beta", "number > 0, or table { value = number, variant = \"basic\" | \"enhanced\" }", None,
            "beta-likeness: a sensitive value's share in a class exceeds its share in the file by at most beta "
            "times that share (enhanced: by at most min(beta, -log of its share))."),
    SpecKey("privacy", "k_map", "table { k = integer >= 2, estimator = \"poisson\" | "
            "\"zero_truncated_poisson\", significance = number }", None,
            "k-map: every class stands for at least k people of the population, estimated from the `weight` "
            "column as ARX does (a population table is checked with `incrowd.privacy.check_table`)."),
    SpecKey("privacy", "max_average_risk", "number in (0, 1]", None,
            "The release's average re-identification risk (classes / records, ARX's prosecutor risk) is at most "
            "this."),
    SpecKey("privacy", "max_population_uniqueness", "number in (0, 1], or table { value = number, model = "
            "\"pitman\" | \"zayatz\" | \"snb\" | \"dankar\" }", None,
            "The share of the population unique in the release's quasi-identifiers, estimated from the `weight` "
            "column with ARX's model (Dankar by default), is at most this."),
    SpecKey("privacy", "differential_privacy", "table { epsilon = number in (0, 5], delta = number in (0, 1), "
            "search_budget, steps, metric }", None,
            "(epsilon, delta)-differential privacy by ARX's SafePub: a random sample of the rows, a k derived from "
            "epsilon and delta, the generalization drawn by the exponential mechanism; alone (with k), over "
            "categorical quasi-identifiers; `max_suppression` does not apply, and `random_state` (kept secret) "
            "makes it reproducible."),
    SpecKey("privacy", "max_suppression", "count, fraction or percentage (\"1%\")", 0,
            "Rows that may be left out of the release (with `suppression = \"rows\"`)."),
    SpecKey("privacy", "strategy", "string", "generalize-then-microaggregate",
            "How numeric and categorical quasi-identifiers are released together: generalize the "
            "categorical ones, then microaggregate the numeric ones within each class; or `joint`, "
            "one grouping over all of them.", ("generalize-then-microaggregate", "joint")),
    SpecKey("privacy", "method", "string", "mdav",
            "The microaggregation method for the numeric quasi-identifiers (any of `incrowd.METHODS`); "
            "its parameters go in `[method_params]`."),
    SpecKey("privacy", "refine", "boolean", True,
            "With `strategy = \"joint\"`: improve the groups by local moves."),
    SpecKey("privacy", "max_seconds", "positive number", None,
            "With `strategy = \"joint\"`: a time limit for the refinement."),
    SpecKey("privacy", "random_state", "integer in [0, 2^32 - 1]", 0,
            "The seed of randomized steps (the same spec gives the same release)."),
    SpecKey("privacy", "allow_full_suppression", "boolean", True,
            "Whether a quasi-identifier may be published as `*` in every row where that loses least, as in "
            "ARX's search (such a column is listed in the summary and gets a `review` line in the report's "
            "verdict); `false` forbids it (also per column, in its table in `[columns]`)."),
    SpecKey("privacy", "metric", "string", "loss",
            "What the chosen generalization minimizes (`incrowd.generalization.METRICS`); with "
            "generalize-then-microaggregate.", ("loss", "discernibility", "entropy", "aecs", "precision", "height",
                                                   "classification")),
    SpecKey("privacy", "metric_weights", "table of categorical columns to numbers >= 0", None,
            "A weight per categorical quasi-identifier in `loss`, `entropy` and `precision` (1 where left out), "
            "e.g. `{ education = 2 }`."),
    SpecKey("privacy", "suppression", "string", "rows",
            "`rows`: the rows of classes below k are left out; `cells`: single categorical cells are "
            "blanked instead (local suppression), with the generalize-then-microaggregate strategy and "
            "neither l nor t.", ("rows", "cells")),
    SpecKey("privacy", "missing_matches", "string", "itself",
            "With `suppression = \"cells\"`: a missing or blanked value matches only itself, or any value "
            "(sdcMicro's wildcard; then every quasi-identifier must be categorical).", ("itself", "any")),
    SpecKey("privacy", "importance", "table of categorical columns to integers 1..m", None,
            "With `suppression = \"cells\"`: which columns are blanked last (1 is the most important, kept "
            "longest); a number for every categorical quasi-identifier, e.g. `{ sex = 1, region = 2 }`."),
    SpecKey("privacy", "max_suppressed_cells", "count, fraction or percentage of the categorical cells", None,
            "With `suppression = \"cells\"`: the most cells that may be blanked (no limit when left out)."),
    SpecKey("privacy", "max_individual_risk", "number in (0, 1]", None,
            "Risk target: no row's re-identification risk in the population (sdcMicro's individual risk, "
            "from the `weight` column) above this."),
    SpecKey("privacy", "max_global_risk", "number in (0, 1]", None,
            "Risk target: the mean of the rows' individual risks at most this."),
    SpecKey("privacy", "max_expected_reidentifications", "positive number", None,
            "Risk target: the sum of the rows' individual risks (the re-identifications expected) at most "
            "this."),
    SpecKey("privacy", "max_household_risk", "number in (0, 1]", None,
            "Risk target: no household's risk (sdcMicro's household risk: the probability that at least one "
            "member is re-identified, 1 - the product of 1 - each member's individual risk) above this; needs a "
            "`household` column. With `suppression = \"cells\"` a household above it gets one more blank in its "
            "riskiest member's key; with `\"rows\"` the riskiest member's class is suppressed (whole classes, so k "
            "holds), counted against `max_suppression`; with numeric keys the risk is that of the keys as released "
            "(the microaggregation groups' means) and the riskiest member's whole group goes."),
    SpecKey("privacy", "household_id", "string", "keep",
            "What the release does with the `household` column: `keep` it as it is, `renumber` the households "
            "1, 2, ... in the order they first appear (the survey's own ids, which may lead back to the "
            "sampling frame, are not published; analyses by household still work), or `drop` it.",
            ("keep", "renumber", "drop")),
    SpecKey("column", "role", "string", None,
            "Required in a column's table. What the column is: a direct identifier (dropped), a numeric or "
            "categorical quasi-identifier, a sensitive column (for l and t), the survey weight, the "
            "household id (`household`: passed through unchanged, never a quasi-identifier), a column "
            "`[[perturb]]` steps change (`perturb`: a numeric or categorical column that is not a key, "
            "sdcMicro's numVars and PRAM variables), a column whose values are the strata the steps run in "
            "(`strata`: passed through unchanged), or `other` (passed through unchanged; every column the "
            "spec does not name).",
            ("identifier", "numeric", "categorical", "sensitive", "weight", "household", "perturb", "strata",
             "other")),
    SpecKey("column", "hierarchy", "file path", None,
            "A categorical column's hierarchy file (ARX format: one row per value, one column per level), "
            "relative to the spec file's folder. Without one (and without intervals) a categorical column "
            "is flat: its value or `*`."),
    SpecKey("column", "intervals", "list of widths, each a multiple of the one before", None,
            "A categorical column of numbers generalized into nested intervals of these widths, then `*`."),
    SpecKey("column", "match", "string", None,
            "How a column with value labels meets its hierarchy's first level: by `label` or by `code` "
            "(left out: whichever the hierarchy covers).", ("label", "code")),
    SpecKey("column", "allow_full_suppression", "boolean", None,
            "This categorical column may (or may not) be published as `*` in every row (left out: as "
            "`[privacy]` says)."),
    SpecKey("column", "household_level", "boolean", None,
            "A categorical quasi-identifier that describes the household, not the person (urban or rural, "
            "water source): recoded and blanked for every member of a household at once, so a blank cannot be "
            "filled in from a housemate. Needs a `household` column. Left out: true where the column is the "
            "same for every member of each household in the file, else false."),
    SpecKey("column", "ordered", "boolean or list of values", None,
            "A sensitive column's order for t: `true` (sorted), `false` (nominal) or the values in their "
            "order (left out: by the column's type)."),
    SpecKey("benchmarks", "estimates", "list of texts \"VARIABLE\" or \"VARIABLE by GROUP, GROUP\"", None,
            "The estimates the report computes on the original and on the release: the weighted mean of a "
            "numeric variable, overall or in each group, with its 95 % confidence interval, the relative change "
            "and whether the two intervals overlap."),
    SpecKey("perturb", "columns", "list of column names", None,
            "Required. The columns the step changes, each with the role `perturb` in `[columns]` (record_swap "
            "also swaps its `hierarchy`)."),
    SpecKey("perturb", "method", "string", None,
            "Required. The perturbation method (a key of `incrowd.perturbation.METHODS`); its own keys "
            "are listed below."),
    SpecKey("perturb", "random_state", "integer in [0, 2^32 - 1]", None,
            "The seed of a method that draws (left out: drawn from `[privacy] random_state` and the step's "
            "number)."),
    SpecKey("perturb", "strata", "boolean", True,
            "Run the step in each stratum on its own (the columns with the role `strata`); `false`: over "
            "the whole release."),
    SpecKey("missing", "numeric", "string", "error",
            "A missing value in a numeric quasi-identifier is refused (`error`) or grouped apart "
            "(`separate`).", ("error", "separate")),
)

#: the report verdict's default thresholds (``[report]``, ``--verdict-threshold``, ``thresholds=``);
#: ``NAME_fail`` is the fail threshold of NAME
REPORT_THRESHOLDS: dict[str, float] = {
    "k": 5, "k_fail": 2,                       # smallest class: below 2 a record is unique
    "l": 2,                                    # fewest distinct sensitive values in a class
    "entropy_l": 2,                            # smallest exp(entropy) of a class
    "t": 0.3,                                  # largest earth mover's distance of a class
    "reidentification_risk": 0.2, "reidentification_risk_fail": 0.5,   # 1 / smallest class
    "marketer_risk": 0.1,                      # expected share of records re-identified
    "drisk": 0.1,                              # sdcMicro dRisk
    "drisk_rmd": 0.01,                         # sdcMicro dRiskRMD risk2 (isolated records)
    "record_linkage": 0.1, "record_linkage_fail": 0.5,   # share linked to their own original
    "attacks": 0.1,                            # anonymeter's risk of each attack
    "information_loss": 0.2, "information_loss_fail": 0.5,   # numeric SSE/SST, all rows
    "ncp": 0.3, "ncp_fail": 0.7,               # categorical mean NCP
    "suppressed_share": 0.05,                  # rows withheld
}
#: the measures whose threshold is a floor, not a ceiling
REPORT_HIGHER_IS_BETTER = {"k", "l", "entropy_l"}


def report_thresholds(values: Mapping[str, Any] | None, where: str = "thresholds") -> dict[str, float]:
    """The defaults with ``values`` (a spec's ``[report]`` table, ``--verdict-threshold``) over
    them; an unknown name or a value that is not a number >= 0 raises one clear error."""
    out = dict(REPORT_THRESHOLDS)
    for name, value in (values or {}).items():
        if name not in REPORT_THRESHOLDS:
            raise ParameterError(f"{where}: unknown threshold {name!r}; known: {', '.join(sorted(REPORT_THRESHOLDS))}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ParameterError(f"{where}: threshold {name} must be a number >= 0; got {value!r}")
        out[name] = float(value)
    return out


#: the meaning of each threshold of the report's verdict (``[report]``; the names and defaults
#: are those of :data:`REPORT_THRESHOLDS`): the worst value that still passes; ``NAME_fail``, where it exists,
#: the value beyond which the measure fails
REPORT_MEANINGS = {
    "k": "smallest class (higher is better)",
    "l": "fewest distinct sensitive values in a class (higher is better)",
    "entropy_l": "smallest exp(entropy) of the sensitive values in a class (higher is better)",
    "t": "largest earth mover's distance of a class",
    "reidentification_risk": "1 / the smallest class",
    "marketer_risk": "expected share of records re-identified",
    "drisk": "sdcMicro's dRisk",
    "drisk_rmd": "sdcMicro's dRiskRMD (isolated records)",
    "record_linkage": "share of records linked to their own original",
    "attacks": "anonymeter's risk of each attack",
    "information_loss": "numeric SSE / SST over all rows",
    "ncp": "categorical mean normalized certainty penalty",
    "suppressed_share": "share of rows withheld",
}


def keys(section: str) -> tuple[str, ...]:
    """The names of ``section``'s keys (``privacy``, ``column``, ``missing``), in the table's order."""
    return tuple(key.name for key in SPEC_KEYS if key.section == section)


def key(section: str, name: str) -> SpecKey:
    """The entry of ``name`` in ``section``."""
    for entry in SPEC_KEYS:
        if entry.section == section and entry.name == name:
            return entry
    raise KeyError(f"{section}.{name}")


def choices(section: str, name: str) -> tuple[str, ...]:
    """The words ``name`` in ``section`` accepts."""
    return key(section, name).choices
