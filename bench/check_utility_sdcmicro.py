"""incrowd's utility figures beside sdcMicro's ``dUtility`` on Census (original vs MDAV release).

Run from the repository root, with sdcMicro installed in an R library (default /work/rlib)::

    PYTHONPATH=src .venv/bin/python bench/check_utility_sdcmicro.py [--rlib DIR] [--k 3 5 10]

For each k: incrowd's MDAV release of Census (``incrowd.microaggregate``), written with 17
significant digits so R reads the same doubles; then ``dUtility(x, xm, method = "IL1")``,
``"IL1s"`` and ``"eigen"`` in one ``Rscript`` run, and incrowd's
``assessment._utility.numeric_utility`` on the same arrays. Prints a Markdown table of both
figures and their relative difference (nothing is written to the docs: this is an agreement
check, not a timing); exits 1 when a compared figure differs by more than 1e-9 relative.

Census's correlation matrix is singular (one eigenvalue is zero to working precision: a column
is a linear combination of others), so sdcMicro's eigen figure divides rounding noise by
rounding noise there. The table shows it as R prints it, and compares the sum over the
eigenvalues that are not zero (the same terms, R/dUtility.R lines 121-123), computed on both
sides with the same tolerance.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import load  # noqa: E402

R_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
.libPaths(args[1])
suppressMessages(library(sdcMicro))
x <- read.csv(args[2])
for (f in args[-(1:2)]) {
  xm <- read.csv(f)
  for (m in c("IL1", "IL1s", "eigen")) {
    cat(sprintf("%s\t%s\t%.17g\n", basename(f), m, dUtility(x, xm = xm, method = m)))
  }
  # the same eigen terms (R/dUtility.R lines 121-123), summed over the eigenvalues of the
  # original that are not zero to working precision (numpy's matrix_rank tolerance)
  e1 <- eigen(var(scale(x)))$values
  e2 <- eigen(var(scale(xm)))$values
  keep <- e1 > max(abs(e1)) * length(e1) * .Machine$double.eps
  cat(sprintf("%s\t%s\t%.17g\n", basename(f), "eigen_nonsingular", sum((abs(e1 - e2) / e1)[keep])))
  cat(sprintf("%s\t%s\t%.17g\n", basename(f), "eigen_dropped", sum(!keep)))
}
"""


def _write(path: Path, X: np.ndarray, names: list[str]) -> None:
    np.savetxt(path, X, delimiter=",", fmt="%.17g", header=",".join(names), comments="")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rlib", default="/work/rlib")
    ap.add_argument("--k", type=int, nargs="+", default=[3, 5, 10])
    ap.add_argument("--data", default="census", help="a data set of bench/_common/data.py (census, tarragona, ...)")
    args = ap.parse_args(argv)

    from incrowd import microaggregate
    from incrowd.cli._bench_entry import numeric_utility

    X = load(args.data)
    names = [f"v{j}" for j in range(X.shape[1])]
    ours: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _write(tmp / "x.csv", X, names)
        files = []
        for k in args.k:
            Y = np.asarray(microaggregate(X, k, "mdav").table, dtype=np.float64)
            f = tmp / f"mdav_k{k}.csv"
            _write(f, Y, names)
            # incrowd reads back what R reads, so both see the same doubles
            Yr = np.loadtxt(f, delimiter=",", skiprows=1)
            ours[f.name] = numeric_utility(X, Yr, names)
            files.append(str(f))
        (tmp / "dutility.R").write_text(R_SCRIPT)
        out = subprocess.run(["Rscript", str(tmp / "dutility.R"), args.rlib, str(tmp / "x.csv"), *files],
                             capture_output=True, text=True, check=True).stdout
    theirs: dict[tuple[str, str], float] = {}
    for line in out.splitlines():
        name, method, value = line.split("\t")
        theirs[(name, method)] = float(value)

    key = {"IL1": "il1", "IL1s": "il1s", "eigen_nonsingular": "eigen_nonsingular",
           "eigen_dropped": "eigen_dropped"}
    print(f"{args.data} ({X.shape[0]} x {X.shape[1]}), MDAV release from incrowd.microaggregate; "
          "sdcMicro 5.8.0 dUtility vs incrowd's numeric_utility\n")
    print("| k | measure | sdcMicro dUtility | incrowd | relative difference |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for k in args.k:
        name = f"mdav_k{k}.csv"
        for method, field in key.items():
            a, b = theirs[(name, method)], ours[name][field]
            rel = abs(a - b) / max(abs(a), 1e-300)
            worst = max(worst, rel)
            print(f"| {k} | {method} | {a:.12g} | {b:.12g} | {rel:.1e} |")
        raw, mine = theirs[(name, "eigen")], ours[name]["eigen"]
        if mine is None:
            print(f"| {k} | eigen (all eigenvalues) | {raw:.12g} | None (original singular) | not compared |")
        else:
            rel = abs(raw - mine) / max(abs(raw), 1e-300)
            worst = max(worst, rel)
            print(f"| {k} | eigen (all eigenvalues) | {raw:.12g} | {mine:.12g} | {rel:.1e} |")
        print(f"| {k} | IL (SSE/SST, incrowd only) | - | {ours[name]['il']:.12g} | - |")
    print(f"\nworst relative difference: {worst:.1e}")
    return 0 if worst < 1e-9 else 1


if __name__ == "__main__":
    raise SystemExit(main())
