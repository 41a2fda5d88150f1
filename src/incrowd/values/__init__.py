"""Values: what counts as a value of a cell, one definition for the release, its checks and the
report.

- :func:`class_ids`: the class of every row (equal values in every column; a missing value is a
  value of its own, and so is each user-missing code of a statistical file);
- :func:`match_counts`: how many rows each row matches, with a missing value a value of its own
  or matching any value (:data:`MISSING_MATCHES`; sdcMicro's wildcard, :func:`wildcard_counts`
  over :func:`quasi_identifier_codes`, :func:`radix_rows`);
- the sensitive-value encoding: :func:`sensitive_keys` (numbers compare as numbers, trailing
  blanks make no other value, user-missing codes as the file holds them,
  :func:`user_missing_codes`), :func:`sensitive_order` and :func:`sensitive_codes` (a missing
  value one code after every present one).

- the clustering's scaling (internal, loaded on first use): :class:`Standardizer`,
  :func:`standardize` and :func:`group_means`, the overflow-safe scaling every clustering runs on
  and the centroids in the data's units, which the estimators, ``publish``, the incremental
  state, the report and the information-loss measures share.

The public API is :func:`match_counts`, :data:`MISSING_MATCHES` and :func:`sensitive_codes`; the
rest is the internal API other packages count with (the ``name as name`` imports).

This package sits beside ``incrowd.io`` (it reads its NA vocabulary and statistical files' codes)
and below the privacy models, the algorithms and the report, which all count values through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import lazy as _lazy
from ._matching import MISSING_MATCHES, match_counts
from ._matching import quasi_identifier_codes as quasi_identifier_codes
from ._matching import radix_rows as radix_rows
from ._matching import wildcard_counts as wildcard_counts
from ._sensitive import class_ids as class_ids
from ._sensitive import sensitive_codes
from ._sensitive import sensitive_keys as sensitive_keys
from ._sensitive import sensitive_order as sensitive_order
from ._sensitive import user_missing_codes as user_missing_codes

if _TYPE_CHECKING:
    from ._standardize import Standardizer as Standardizer
    from ._standardize import group_means as group_means
    from ._standardize import standardize as standardize

__getattr__, __dir__ = _lazy.attach(__name__, dict.fromkeys(["Standardizer", "standardize", "group_means"],
                                                            "._standardize"))

__all__ = ["MISSING_MATCHES", "match_counts", "sensitive_codes"]
