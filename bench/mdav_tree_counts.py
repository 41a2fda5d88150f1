"""Where exact MDAV's tree kernel spends its reads: rows read per round in the searches for P's
and Q's nearest (``nearest``), for Q (``farthest``) and by P's radius walk (``walk``), and the
tree's nodes visited by the first two, on
Gaussian data, Adult resampled and testdata resampled (three columns, k = 3).

The product kernel keeps no counters: this script counts on a copy of ``_mdav_tree``'s source,
rewritten to add them, and checks that the copy gives the kernel's groups. A round whose walk
ends in a new radius order (the walk's own count restarts there) adds nothing to ``walk``.

    python bench/mdav_tree_counts.py --rows 50000 100000 200000
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import machine_line, md_table, now_utc  # noqa: E402
from perturbation_million import resampled  # noqa: E402
from perturbation_scale_vs_sdcmicro import adult  # noqa: E402

from incrowd.microaggregation.mdav import _mdav_tree  # noqa: E402
from incrowd.values import standardize  # noqa: E402

# (text in the kernel's source, its counting replacement); each must occur
EDITS = [
    ("def _query(X, tree, alive, q, exclude, size, nearest, buf_d, buf_r, stack):",
     "def _query(X, tree, alive, q, exclude, size, nearest, buf_d, buf_r, stack, cnt, which):"),
    ("        v = stack[top]\n        if count[v] == 0:\n            continue\n",
     "        v = stack[top]\n        cnt[3 + which] += 1\n        if count[v] == 0:\n            continue\n"),
    ("        if left[v] < 0:\n            for t in range(lo[v], hi[v]):\n                r = perm[t]\n"
     "                if alive[r] and r != exclude:",
     "        if left[v] < 0:\n            cnt[which] += hi[v] - lo[v]\n            for t in range(lo[v], hi[v]):\n"
     "                r = perm[t]\n                if alive[r] and r != exclude:"),
    ("def _take(X, tree, alive, seed, k, labels, group, s_hi, s_lo, abs_sum, buf_d, buf_r, stack, point):",
     "def _take(X, tree, alive, seed, k, labels, group, s_hi, s_lo, abs_sum, buf_d, buf_r, stack, point, cnt):"),
    ("found = _query(X, tree, alive, point, seed, k - 1, True, buf_d, buf_r, stack)",
     "found = _query(X, tree, alive, point, seed, k - 1, True, buf_d, buf_r, stack, cnt, 0)"),
    ("def mdav_tree_labels(X, k):", "def mdav_tree_labels(X, k, cnt):"),
    ("_query(X, tree, alive, point, -1, 1, False, buf_d, buf_r, stack)\n",
     "_query(X, tree, alive, point, -1, 1, False, buf_d, buf_r, stack, cnt, 1)\n"),
    ("stack, point)\n", "stack, point, cnt)\n"),
    ("        p = find_p(", "        before = walk[_WALKED]\n        p = find_p("),
    ("                   p_cand, walk, gamma)\n",
     "                   p_cand, walk, gamma)\n        cnt[2] += max(walk[_WALKED] - before, 0)\n"),
    ("from ._mdav_fast import _FALLBACKS,", "from ._mdav_fast import _WALKED_SINCE as _WALKED, _FALLBACKS,"),
]


def counting_copy() -> types.ModuleType:
    source = Path(_mdav_tree.__file__).read_text(encoding="utf-8")
    for old, new in EDITS:
        assert old in source, old
        source = source.replace(old, new)
    source = source.replace("from ._mdav_fast import", "from incrowd.microaggregation.mdav._mdav_fast import")
    source = source.replace("from .._kernels import", "from incrowd.microaggregation._kernels import")
    source = source.replace("cache=True", "cache=False")
    module = types.ModuleType("mdav_tree_counting")
    exec(compile(source, "mdav_tree_counting", "exec"), module.__dict__)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[50_000, 100_000, 200_000])
    args = parser.parse_args()
    copy = counting_copy()
    top = max(args.rows)
    data = {"Gaussian": np.random.default_rng(0).standard_normal((top, 3)),
            "Adult resampled": adult(top)[["fnlwgt", "capital_gain", "hours_per_week"]].to_numpy(float),
            "testdata resampled": resampled(top)[["income", "expend", "savings"]].to_numpy(float)}
    print(machine_line(), now_utc())
    rows = []
    for name, X in data.items():
        for n in args.rows:
            Z = np.ascontiguousarray(standardize(X[:n])[0])
            cnt = np.zeros(5, np.int64)
            t0 = time.perf_counter()
            labels, _ = copy.mdav_tree_labels(Z, 3, cnt)
            seconds = time.perf_counter() - t0
            assert np.array_equal(labels, _mdav_tree.mdav_tree_labels(Z, 3)[0])
            rounds = n // 6
            rows.append([name, f"{n:,}", *(f"{c / rounds:,.0f}" for c in cnt), f"{seconds:.2f}"])
            print(rows[-1], flush=True)
    print(md_table(["data", "rows", "nearest, rows read a round", "farthest (Q)", "walk (P)",
                    "nearest, nodes visited a round", "farthest (Q)", "seconds (first includes compiling)"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
