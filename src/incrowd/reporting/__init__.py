"""Disclosure risk and utility of a release, beside the original it was made from.

- :func:`report` (also ``incrowd.report``): original and release in, a :class:`Report` out, with
  ``.risk`` and ``.utility`` (dicts of named measures), ``.to_json()`` and ``.to_html(path)``.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import _lazy

if _TYPE_CHECKING:
    from ._report import Report, report

__getattr__, __dir__ = _lazy.attach(__name__, {"report": "._report", "Report": "._report"})

__all__ = ["report", "Report"]
