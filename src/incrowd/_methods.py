"""What the command line says about the microaggregation methods before loading any of them.

The names (in the order of :data:`incrowd.METHODS`) and the caps on the repetition parameters
go into ``--help`` texts and option checks; importing the methods themselves loads pandas and
numba, which ``incrowd --help`` should not wait for. A test keeps the names equal to METHODS.
"""

METHOD_NAMES = ("mdav", "mdav-plus", "v-mdav", "mdav-star", "ona", "ona-star", "mondrian", "mondrian-v",
                "mondrian-v2d", "mona", "mona-2d", "refine")

#: caps on the repetition parameters: beyond them a run allocates without bound (ONA keeps the
#: labels of every run) or a count no longer fits the kernels' 64-bit integers
MAX_RUNS = 10_000
MAX_ROUNDS = 1_000_000
