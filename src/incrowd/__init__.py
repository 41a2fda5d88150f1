"""incrowd: publish microdata so that every person hides in a crowd of at least k look-alikes.

Public names are exactly those in ``__all__``; everything else is private.

The names are loaded on first use (PEP 562): ``import incrowd`` costs only the exceptions (even
the version is read from the package metadata on first use), so a command that needs neither
pandas, numba nor scikit-learn starts in a blink;
``from incrowd import MDAV`` and ``incrowd.MDAV`` load what MDAV needs, then, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from ._runtime import lazy as _lazy
from ._runtime import prepare_cache as _prepare_cache

# before anything imports numba: a read-only install without a writable user cache folder
# would make numba refuse to load the kernels
_prepare_cache()

from .exceptions import (  # noqa: E402  (after the cache is prepared, above)
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

if _TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ loads these
    from . import generalization, incremental
    from ._runtime import __version__
    from .io import Verification, read_table, write_table
    from .microaggregation import (
        MDAV,
        METHODS,
        MONA,
        MONA2D,
        ONA,
        VMDAV,
        MDAVPlus,
        MDAVStar,
        MicroaggregationResult,
        Mondrian,
        MondrianV,
        MondrianV2D,
        ONAStar,
        Refine,
        information_loss,
        lower_bound,
        microaggregate,
        sse,
        sst,
    )
    from .perturbation import PerturbResult, perturb
    from .privacy import verify_k_anonymity, verify_l_diversity, verify_t_closeness
    from .publishing import PublishResult, publish
    from .reporting import Report, RiskResult, report, risk

#: public name -> the module that defines it (loaded on first access)
_LAZY = {
    "__version__": "._runtime._version",  # reading the package metadata costs importlib.metadata: on first use too
    "microaggregate": ".microaggregation._microaggregate",
    "MicroaggregationResult": ".microaggregation._microaggregate",
    "report": ".reporting._report",
    "Report": ".reporting._report",
    "risk": ".reporting._risk_api",
    "RiskResult": ".reporting._risk_api",
    "publish": ".publishing._release",
    "PublishResult": ".publishing._release",
    "perturb": ".perturbation._perturb",
    "PerturbResult": ".perturbation._perturb",
    "read_table": ".io",
    "write_table": ".io",
    "Verification": ".io._written",
    **dict.fromkeys(["information_loss", "sse", "sst"], ".microaggregation"),
    **dict.fromkeys(["verify_k_anonymity", "verify_l_diversity", "verify_t_closeness"], ".privacy"),
    **dict.fromkeys(["METHODS", "MDAV", "MDAVPlus", "VMDAV", "MDAVStar", "ONA", "ONAStar", "Mondrian",
                     "MondrianV", "MondrianV2D", "MONA", "MONA2D", "Refine"], ".microaggregation"),
    "lower_bound": ".microaggregation._bound",
}


#: submodules a bare ``import incrowd`` used to load, listed by ``dir(incrowd)`` as before
_SUBMODULES = ("io", "exceptions", "metrics", "microaggregation", "generalization", "incremental", "publishing", "reporting",
               "perturbation")

__getattr__, __dir__ = _lazy.attach(__name__, _LAZY, _SUBMODULES)

__all__ = [
    "report",
    "Report",
    "risk",
    "RiskResult",
    "publish",
    "PublishResult",
    "perturb",
    "PerturbResult",
    "microaggregate",
    "MicroaggregationResult",
    "Verification",
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
    "Refine",
    "information_loss",
    "lower_bound",
    "sse",
    "sst",
    "verify_k_anonymity",
    "verify_l_diversity",
    "verify_t_closeness",
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
