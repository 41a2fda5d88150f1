"""incrowd: publish microdata so that every person hides in a crowd of at least k look-alikes.

Public names are exactly those in ``__all__``; everything else is private.
"""

from __future__ import annotations

from ._compile import prepare_cache as _prepare_cache

# before anything imports numba: a read-only install without a writable user cache folder
# would make numba refuse to load the kernels
_prepare_cache()

from ._microaggregate import MicroaggregationResult, microaggregate
from .data import read_table, write_table
from .exceptions import (
    DataError,
    DataWarning,
    IncrowdError,
    IncrowdWarning,
    OutputWriteError,
    ParameterError,
    PrivacyWarning,
    StateLockedError,
    VerificationError,
)
from .metrics import information_loss, sse, sst, verify_k_anonymity, verify_l_diversity
from .microaggregation import (
    MDAV,
    METHODS,
    MONA,
    MONA2D,
    ONA,
    VMDAV,
    MDAVPlus,
    MDAVStar,
    Mondrian,
    MondrianV,
    MondrianV2D,
    ONAStar,
)

__version__ = "0.1.0"

from . import generalization, incremental  # noqa: E402  (after __version__, which they read)

__all__ = [
    "microaggregate",
    "MicroaggregationResult",
    "METHODS",
    "MDAV",
    "MDAVPlus",
    "VMDAV",
    "MDAVStar",
    "ONA",
    "ONAStar",
    "Mondrian",
    "MondrianV",
    "MondrianV2D",
    "MONA",
    "MONA2D",
    "information_loss",
    "sse",
    "sst",
    "verify_k_anonymity",
    "verify_l_diversity",
    "read_table",
    "write_table",
    "IncrowdError",
    "ParameterError",
    "DataError",
    "VerificationError",
    "OutputWriteError",
    "StateLockedError",
    "IncrowdWarning",
    "DataWarning",
    "PrivacyWarning",
    "incremental",
    "generalization",
    "__version__",
]
