"""What the command line says about the microaggregation methods before loading any of them.

This is the one table of the method names: :data:`incrowd.METHODS` (name -> estimator class),
the CLI's ``--method``, the web form, the release specification and the Dask backend all derive
from it. Importing the methods themselves loads pandas and numba, which ``incrowd --help``
should not wait for, so the table names each estimator class by its name in
:mod:`incrowd.microaggregation`.
"""

#: method name (as used by the API, the CLI, the web UI and a release specification) -> the name
#: of its estimator class in :mod:`incrowd.microaggregation`, in the order of :data:`incrowd.METHODS`
METHOD_CLASSES: dict[str, str] = {
    "mdav": "MDAV",
    "mdav-plus": "MDAVPlus",
    "v-mdav": "VMDAV",
    "mdav-star": "MDAVStar",
    "ona": "ONA",
    "ona-star": "ONAStar",
    "mondrian": "Mondrian",
    "mondrian-v": "MondrianV",
    "mondrian-v2d": "MondrianV2D",
    "mona": "MONA",
    "mona-2d": "MONA2D",
    "refine": "Refine",
}

METHOD_NAMES = tuple(METHOD_CLASSES)

#: the methods the Dask backend runs (``microaggregate(..., scheduler=...)``)
DISTRIBUTED_METHODS = ("mona", "mona-2d")

#: caps on the repetition parameters: beyond them a run allocates without bound (ONA keeps the
#: labels of every run) or a count no longer fits the kernels' 64-bit integers
MAX_RUNS = 10_000
MAX_ROUNDS = 1_000_000
#: the largest random seed (``random_state``) the CLI and the web accept
MAX_SEED = 2**32 - 1
