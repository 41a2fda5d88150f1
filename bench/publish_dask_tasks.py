"""The Dask publish's tasks run one after another in one process: each pass's seconds, the
release's seconds per class task, a profile of the class task of the largest class, and the
writing of the release in file order (the published rows gathered back to their partitions).

Run from the repository root: ``.venv/bin/python bench/publish_dask_tasks.py FOLDER [CLASS_TASKS]``
(default 8 class tasks, as ``local:4`` makes them) on a Parquet dataset that
``bench/publish_dask.py`` generates (``risk_dask.generate(rows, folder, known=CATEGORICAL)``).
The spec is ``bench/publish_dask.py``'s. Tasks are the functions the cluster runs
(``incrowd.distributed._publish``), called here without Dask, so what they cost is not mixed
with scheduling, transfers or other workers sharing the cores. Prints; writes nothing.
"""

from __future__ import annotations

import cProfile
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from publish_dask import spec as benchmark_spec  # noqa: E402
from publish_dask import warm_kernels  # noqa: E402

import incrowd  # noqa: E402
from incrowd.cli import _bench_entry as tasks  # noqa: E402
from incrowd.publishing import load_spec, partitioned_search, scaled_whole, whole_of  # noqa: E402


def main() -> None:
    folder = Path(sys.argv[1])
    n_out = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    sources = sorted(str(p) for p in folder.glob("*.parquet"))
    incrowd.publish(pd.read_parquet(sources[0]).head(3000), benchmark_spec())  # imports, kernels
    warm_kernels()
    spec = load_spec(benchmark_spec(), None)
    seconds: dict[str, float] = {}

    def timed(name, fn):
        t = time.perf_counter()
        out = fn()
        seconds[name] = time.perf_counter() - t
        return out

    timed("read", lambda: [tasks.read_partition(s) for s in sources])
    facts = timed("facts", lambda: [tasks.publish_facts_task(s, "p", spec) for s in sources])
    whole = whole_of(spec, facts)
    bottoms = timed("bottom classes", lambda: [tasks.publish_bottom_task(s, "p", spec, whole) for s in sources])
    whole = scaled_whole(whole, [b[:3] for b in bottoms])
    choice, maps, prep = timed("search", lambda: partitioned_search(spec, whole, [b[0] for b in bottoms],
                                                                    max_nodes=None, max_memory=None))
    sizes = tasks.class_sizes(choice, [b[0] for b in bottoms], maps)
    where = tasks.spread_classes(sizes, n_out)
    loads = np.bincount(where, weights=sizes, minlength=n_out).astype(int)
    splits = timed("split", lambda: [tasks.publish_split_task(s, "p", b, whole, m, choice, where, n_out)
                                     for s, b, m in zip(sources, bottoms, maps)])
    qis = [*prep.numeric, *prep.categorical]
    sensitive = {s.name: whole.sensitive[s.name] for s in prep.sensitive}
    out = Path(tempfile.mkdtemp(prefix="incrowd-tasks-"))
    largest = int(np.argmax(loads))
    profile = cProfile.Profile()
    per_part, classes = [], []
    try:
        for b in range(n_out):
            t = time.perf_counter()
            if b == largest:
                profile.enable()
            done = tasks.publish_classes_task([s[b] for s in splits], "p", spec, whole, choice.levels, 1)
            if b == largest:
                profile.disable()
            if isinstance(done, Exception):
                raise SystemExit(str(done))
            classes.append(done)
            per_part.append(time.perf_counter() - t)
        seconds["release"] = sum(per_part)

        def back_to_file_order():
            for i in range(len(sources)):
                done = tasks.publish_write_task([tasks.publish_piece(c, i) for c in classes], "p",
                                                str(out / f"part-{i}.parquet"), qis, list(prep.numeric), sensitive,
                                                None)
                if isinstance(done, Exception):
                    raise SystemExit(str(done))

        timed("back to file order", back_to_file_order)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(f"largest class {int(sizes.max()):,} rows; rows per class task {loads.tolist()}")
    print("seconds per pass:", {k: round(v, 2) for k, v in seconds.items()})
    print("release seconds per class task:", [round(x, 2) for x in per_part])
    pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
