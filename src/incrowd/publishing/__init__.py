"""One release of a survey file over numeric and categorical quasi-identifiers together.

- :func:`publish` (also ``incrowd.publish``): data and a release specification in, a verified
  release out (:class:`PublishResult`);
- :func:`load_spec`, :class:`ReleaseSpec`, :class:`ColumnSpec`: the specification (TOML or dict);
- :data:`PUBLISH_STRATEGIES`: the strategies a specification may name (``incrowd.incremental.STRATEGIES``
  are the incremental ones);
- :func:`example_spec`: a starting specification from a file's columns and types.

Internal (not in ``__all__``): ``categorical_ncp``, the release summary's categorical NCP, which
the report computes with the same function.

The internal API (not public, not in ``__all__``), for the web's Publish page and the reference
page's generator: ``SPEC_KEYS`` (every key a spec may hold, as :class:`SpecKey` rows: section,
name, type, default, meaning, choices), ``spec_key(section, name)``, ``SPEC_SECTIONS``,
``RISK_TARGET_KEYS``, ``REPORT_MEANINGS``, and the report verdict's thresholds (the spec's
``[report]`` table): ``REPORT_THRESHOLDS`` (the defaults), ``REPORT_HIGHER_IS_BETTER`` and
``report_thresholds(values, where)``, which the report reads too; ``spec_to_toml(spec)``, a
spec as TOML text that :func:`load_spec` reads back (the report's risk map and the web show it);
``BenchmarkEstimate``, one estimate of the ``[benchmarks]`` section (the report computes it);
``summary_lines(info)``, a release summary's lines as ``incrowd publish`` prints them and the web
shows them, and ``cells_line(info)``, its line of blanked cells (a release on partitions prints it too).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import lazy as _lazy

if _TYPE_CHECKING:
    from ._benchmarks import Estimate as BenchmarkEstimate  # noqa: F401
    from ._example import example_spec, example_toml
    from ._measures import categorical_ncp as categorical_ncp
    from ._release import PublishResult, publish
    from ._spec import PUBLISH_STRATEGIES, ColumnSpec, ReleaseSpec, load_spec

#: the internal API (not public, not in ``__all__``): the steps of ``publish`` that the
#: incremental state runs on its own groups, so that it names no private module of this package
_INTERNAL = {
    "prepare": "._prepare",
    "microaggregate_classes": "._gtm",
    "check_full_suppression": "._recode",
    "release_table": "._release:_table",
    "release_verification": "._release:_verify",
    "release_summary": "._release:_report",
    "release_promise": "._release:_promise",
    "enforce_sensitive": "._release:_enforce_sensitive",
    "check_suppression": "._release:_check_suppression",
    # a partitioned file's release, part by part (the Dask backend runs them)
    "partitioned_refusal": "._spec", "check_written_classes": "._release", "written_classes": "._release",
    "written_summary": "._release", "part_facts": "._partitioned",
    "whole_of": "._partitioned",
    "part_bottom": "._partitioned", "scaled_whole": "._partitioned:scaled", "partitioned_search": "._partitioned:search",
    "part_classes": "._partitioned", "part_pieces": "._partitioned", "release_classes": "._partitioned",
    "part_release": "._partitioned", "part_codes": "._partitioned", "class_groups": "._partitioned",
    "group_keys": "._partitioned",
    "suppress_group_keys": "._partitioned",
    "written_keys": "._risk_targets", "check_written_risk": "._risk_targets",
    "plan_cells": "._partitioned_cells", "part_cell_pieces": "._partitioned_cells",
    "part_missing": "._partitioned_cells", "part_kinds": "._partitioned_cells", "plan_targets": "._partitioned_cells",
    "split_household": "._partitioned", "publish_households": "._partitioned",
    "part_household_check": "._partitioned", "written_row_keys": "._risk_targets",
    "apply_perturb_steps": "._perturb_steps:apply_steps", "combined_perturb_steps": "._perturb_steps:combined_steps",
    # the summary lines the command line and the web both show
    "summary_lines": "._summary_lines", "risk_targets_text": "._summary_lines", "cells_line": "._summary_lines",
    # the web's Publish page: the spec's vocabularies, its check of the lattice size, the
    # example spec's notes and proposed limits
    "MISSING_NUMERIC": "._spec", "ROLES": "._spec", "check_spec_nodes": "._gtm",
    "column_notes": "._example", "proposed_limit": "._example",
}

__getattr__, __dir__ = _lazy.attach(__name__, {
    "publish": "._release", "PublishResult": "._release",
    "ReleaseSpec": "._spec", "PUBLISH_STRATEGIES": "._spec", "ColumnSpec": "._spec", "load_spec": "._spec",
    "example_spec": "._example", "example_toml": "._example",
    # internal: the release summary's categorical NCP, which the report computes with it too
    "categorical_ncp": "._measures",
    # the internal API (see above)
    "SPEC_KEYS": "._spec_keys", "SpecKey": "._spec_keys", "spec_key": "._spec_keys:key",
    "SPEC_SECTIONS": "._spec_keys:SECTIONS", "RISK_TARGET_KEYS": "._spec_keys", "REPORT_MEANINGS": "._spec_keys",
    "REPORT_THRESHOLDS": "._spec_keys", "REPORT_HIGHER_IS_BETTER": "._spec_keys", "report_thresholds": "._spec_keys",
    # internal: a spec as TOML that load_spec reads back (the report's map and the web show it)
    "spec_to_toml": "._toml", "toml_value": "._toml",
    # internal: a [benchmarks] estimate, which the report computes
    "BenchmarkEstimate": "._benchmarks:Estimate",
    **_INTERNAL,
})

__all__ = ["publish", "PublishResult", "PUBLISH_STRATEGIES", "ReleaseSpec", "ColumnSpec", "load_spec", "example_spec",
           "example_toml"]
