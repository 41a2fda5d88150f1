"""Disclosure risk and utility of a release, beside the original it was made from.

- :func:`report` (also ``incrowd.report``): original and release in, a :class:`Report` out, with
  ``.risk`` and ``.utility`` (dicts of named measures), ``.to_json()`` and ``.to_html(path)``.
- :func:`risk` (also ``incrowd.risk``): one file in (before or after protection), a
  :class:`RiskResult` out: every record's ``fk``, ``Fk``, individual, SUDA2 and household risk,
  and the file's summary (global risk, expected re-identifications, population uniqueness).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import lazy as _lazy

if _TYPE_CHECKING:
    from ._report import Report, report
    from ._risk_api import RiskResult, risk

#: the internal API (not public, not in ``__all__``): ``risk_lines(result, output)``, a risk
#: summary's lines as ``incrowd risk`` prints them and the web's Risk step shows them; the
#: headline figures (``summary_points``) the web charts; the parser of the verdict's threshold
#: options (``parse_threshold_flags``)
#: and the pieces the Dask backend measures a partitioned dataset's risk with (``class_measures``
#: and the checks and summary figures the in-process risk shares with it), and the report's
#: measures from per-partition partial results (``report_partial``, ``report_of_partials``,
#: ``LEFT_OUT``)
_INTERNAL = {**dict.fromkeys(["report_partial", "report_of_partials", "LEFT_OUT"], "._partial"),
             "risk_lines": "._summary", "summary_points": "._summary", "parse_threshold_flags": "._verdict",
             **dict.fromkeys(["about_run", "add_uniqueness", "check_names", "check_options", "check_population",
                              "class_measures", "key_values", "sampling_fraction"], "._risk_api")}

__getattr__, __dir__ = _lazy.attach(__name__, {"report": "._report", "Report": "._report",
                                                   "risk": "._risk_api", "RiskResult": "._risk_api", **_INTERNAL})

__all__ = ["report", "Report", "risk", "RiskResult"]
