"""Option declarations shared by several commands, so each flag means the same everywhere."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from .._runtime import MAX_ROUNDS, MAX_RUNS, MAX_SEED, METHOD_NAMES
from ..io import describe_formats
from ._usage import bounded

#: the formats an input may be, and those an output's extension picks (any other name is CSV), from
#: the format registry so that a new format shows in every command's help
INPUT_FORMATS = describe_formats(notes=True)
OUTPUT_FORMATS = f"{describe_formats(written=True)}; any other name is CSV, compressed by a compression suffix"

#: seeds are 32-bit on the command line, as in most tools

KOption = Annotated[int, typer.Option("--k", help="Minimum group size (>= 2).", show_default=False)]
MethodOption = Annotated[str, typer.Option("--method", help=f"One of: {', '.join(METHOD_NAMES)}.")]
QiOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--qi",
        help="Quasi-identifier columns, comma-separated (repeatable); a name holding a comma "
             "goes in double quotes: --qi '\"b,c\",a'. Default: every column not named by --id.",
        show_default=False,
    ),
]
IdOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--id",
        help="Identifier columns to drop from the output, comma-separated (repeatable); a name "
             "holding a comma goes in double quotes.",
        show_default=False,
    ),
]
GammaOption = Annotated[
    Optional[float],
    typer.Option("--gamma", help="v-mdav only: group extension threshold (>= 0; 0.2 if not given).",
                 show_default=False),
]
RhoOption = Annotated[
    Optional[float],
    typer.Option("--rho", help="mona, mona-2d only: split limit exponent in [0, 1] (0.5 if not "
                 "given); parts of at most n^rho rows are clustered by ONA*.", show_default=False),
]
RunsOption = Annotated[
    Optional[int],
    typer.Option("--runs", help=f"ona only: keep the best of this many seeded runs (100 if not given, "
                 f"at most {MAX_RUNS}).", show_default=False, callback=bounded("--runs", MAX_RUNS)),
]
MaxRoundsOption = Annotated[
    Optional[int],
    typer.Option("--max-rounds", help="ona, ona-star, mona, mona-2d, refine: cap on improvement rounds "
                 f"(ona 30, refine 60, the others 100 if not given; at most {MAX_ROUNDS}).", show_default=False,
                 callback=bounded("--max-rounds", MAX_ROUNDS)),
]
MaxSecondsOption = Annotated[
    Optional[float],
    typer.Option("--max-seconds", help="refine only: stop improving after this many seconds and keep "
                 "the best partition found (> 0; 10 if not given).", show_default=False),
]
StartOption = Annotated[
    Optional[str],
    typer.Option("--start", help="refine only: the method whose partition refine improves "
                 "(ona-star if not given).", show_default=False),
]
BoundOption = Annotated[
    bool,
    typer.Option("--bound", help="Also compute a proven lower bound on the information loss of any "
                 "k-anonymous grouping of these rows, and the gap (information loss / bound - 1): "
                 "how far the result is at most from the best possible."),
]
DiagonalsOption = Annotated[
    Optional[str],
    typer.Option("--diagonals", help="mondrian-v2d, mona-2d: score diagonals by x_a+-x_b ('sum', "
                 "default) or along the unit vector ('unit').", show_default=False),
]
Split2kOption = Annotated[
    Optional[bool],
    typer.Option("--split-2k/--no-split-2k", help="mondrian*, mona*: split parts of exactly 2k "
                 "rows (default: yes, groups of k..2k-1; no: the rule of Table 6 in "
                 "Thaeter & Reischuk 2021, k..2k).",
                 show_default=False),
]
SeedOption = Annotated[
    Optional[int],
    typer.Option("--seed", help=f"Random seed (random_state), an integer in [0, {MAX_SEED}]; only ona and "
                 "refine are randomized.", show_default=False, callback=bounded("--seed", MAX_SEED, 0)),
]
JsonOption = Annotated[
    bool,
    typer.Option("--json", help="Print one JSON object (the result summary) on stdout, nothing else."),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="Do not show progress on stderr.")]


def parse_qis(qis: list[str] | None, ids: list[str] | None):
    """read_table's ``parse=`` for these roles: the named QIs, else every column but the ids."""
    if qis:
        return qis
    return lambda columns: [c for c in columns if c not in (ids or [])]


def method_params(**given: Any) -> dict[str, Any]:
    # Only parameters the user gave are passed: a method without them then refuses them by name.
    return {name: value for name, value in given.items() if value is not None}
