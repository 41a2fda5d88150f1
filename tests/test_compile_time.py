"""Compile time is reported apart from the algorithm's time, and announced once on the CLI.

Forcing a real compile: a kernel defined inside the test (never cached), or a subprocess whose
NUMBA_CACHE_DIR is a fresh empty folder (numba then compiles every kernel the call needs).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import incrowd
from incrowd.microaggregation._base import MicroaggregationEstimator

pytestmark = pytest.mark.slow  # seconds a test: in make test, not in make test-fast

CLI = [sys.executable, "-m", "incrowd.cli"]
CENSUS = Path(incrowd.__file__).parent / "datasets" / "census.csv"
TIMEOUT = 300
NOTICE = "compiling kernels for this machine"


class _FreshKernel(MicroaggregationEstimator):
    """Groups of k consecutive rows, through a kernel numba has never seen: every fit compiles."""

    def _labels(self, Z, k, rng):
        import numba

        @numba.njit(cache=False)
        def consecutive(n, k):
            labels = np.empty(n, np.int64)
            groups = max(n // k, 1)
            for i in range(n):
                labels[i] = min(i // k, groups - 1)
            return labels

        return consecutive(Z.shape[0], k)


def test_fit_seconds_leave_the_compile_out():
    X = np.random.default_rng(0).normal(size=(40, 3))
    est = _FreshKernel(k=4)
    t0 = time.perf_counter()
    est.fit(X)
    wall = time.perf_counter() - t0
    assert est.compile_seconds_ > 0
    assert est.seconds_ >= 0
    # the two parts never add up to more than the call took: the compile is not counted twice
    assert est.seconds_ + est.compile_seconds_ <= wall


def test_summary_reports_compile_seconds_apart(monkeypatch):
    monkeypatch.setitem(incrowd.microaggregation.METHODS, "fresh", _FreshKernel)
    t0 = time.perf_counter()
    result = incrowd.microaggregate(pd.DataFrame({"a": np.arange(30.0), "b": np.arange(30.0) % 7}), 3,
                                    "fresh")
    wall = time.perf_counter() - t0
    s = result.summary()
    assert s["compile_seconds"] == result.compile_seconds > 0
    assert s["seconds"] + s["compile_seconds"] <= wall
    assert sum(v for name, v in s["timings"].items()) + s["compile_seconds"] <= wall


def test_a_warm_call_reports_no_compile():
    data = np.random.default_rng(1).normal(size=(60, 2))
    incrowd.microaggregate(data, 3, "mdav-plus")  # compiles or loads, once per process
    again = incrowd.microaggregate(data, 3, "mdav-plus")
    assert again.compile_seconds == 0.0
    assert again.summary()["compile_seconds"] == 0.0


def _cli(args, cache: Path, *, env_extra=None):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), **(env_extra or {})}
    return subprocess.run(CLI + args, capture_output=True, text=True, env=env, timeout=TIMEOUT)


def test_cli_compiles_with_one_notice_then_loads_without(tmp_path):
    """Two cold processes (each its own empty cache) and one warm one: a cold call prints the
    notice once and its report names the compile time apart; --quiet silences the notice but
    not the figure; a warm call prints no notice."""
    census = ["microaggregate", str(CENSUS), "--k", "5", "--method", "mdav-plus"]
    cold = tmp_path / "cold-cache"
    cold.mkdir()
    first = _cli(census + ["-o", str(tmp_path / "a.csv")], cold)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count(NOTICE) == 1
    line = next(l for l in first.stdout.splitlines() if l.startswith("seconds"))
    assert "compile" in line and "not counted" in line
    assert any(cold.rglob("*.nbi")), "numba wrote no cache index"

    quiet_cache = tmp_path / "quiet-cache"
    quiet_cache.mkdir()
    quiet = _cli(census + ["-o", str(tmp_path / "b.csv"), "--json", "--quiet"], quiet_cache)
    assert quiet.returncode == 0, quiet.stderr
    assert NOTICE not in quiet.stderr
    report = json.loads(quiet.stdout)
    assert report["compile_seconds"] > 0 and report["seconds"] >= 0

    warm = _cli(census + ["-o", str(tmp_path / "c.csv"), "--json"], quiet_cache)
    assert warm.returncode == 0, warm.stderr
    assert NOTICE not in warm.stderr
    assert "compile_seconds" in json.loads(warm.stdout)


ADD_UNDER_LOCK = textwrap.dedent("""
    import sys, contextlib
    import numpy as np, pandas as pd
    from numba.core import event
    from incrowd.incremental import IncrementalMicroaggregation, _session

    state, strategy = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(0)
    frame = lambda n: pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    real_lock = _session.state_lock
    events = []

    @contextlib.contextmanager
    def watched_lock(path, wait):
        with real_lock(path, wait):
            with event.install_recorder("numba:compiler_lock") as rec:
                yield
            events.extend(rec.buffer)

    IncrementalMicroaggregation.from_base(frame(60), state, 3)
    _session.state_lock = watched_lock  # from here on: the add's lock
    report = IncrementalMicroaggregation.open(state).add(frame(12), strategy)
    print(len(events), report.get("compile_seconds"), report["seconds"])
""")


@pytest.mark.parametrize("strategy", ["nn-split-end", "2mdav"])
def test_incremental_add_compiles_before_taking_the_lock(tmp_path, strategy):
    """A fresh process loads (or compiles) adjoin before the writer lock: under the lock numba's
    compiler never runs, so another writer never waits on a compile."""
    done = subprocess.run([sys.executable, "-c", ADD_UNDER_LOCK, str(tmp_path / "s.duckdb"), strategy],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    n_events, compile_seconds, seconds = done.stdout.split()
    assert int(n_events) == 0
    assert float(compile_seconds) == 0.0 and float(seconds) >= 0


def test_incremental_reports_keep_compile_apart(tmp_path):
    from incrowd.incremental import IncrementalMicroaggregation

    rng = np.random.default_rng(2)
    frame = lambda n: pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    inc = IncrementalMicroaggregation.from_base(frame(50), tmp_path / "s.duckdb", 3)
    base = inc.batches[0]
    assert "compile_seconds" in base and base["seconds"] >= 0
    report = inc.add(frame(9), "nn")
    assert "compile_seconds" in report and report["seconds"] >= 0
    published = inc.publish(compare=True).summary()
    assert published["seconds_increment"] == pytest.approx(report["seconds"])


def test_warmup_compiles_what_a_real_call_then_uses():
    from typer.testing import CliRunner

    from incrowd.cli import app

    done = CliRunner().invoke(app, ["warmup", "--methods", "mdav-plus,incremental",
                                    "--methods", "generalization", "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert [t["name"] for t in report["targets"]] == ["mdav-plus", "incremental", "generalization"]
    assert all(t["compile_seconds"] >= 0 and len(t["shapes"]) >= 2 for t in report["targets"])
    from incrowd.datasets import load_census

    census = load_census()
    assert incrowd.microaggregate(census, 5, "mdav-plus").compile_seconds == 0.0
    assert incrowd.microaggregate(census.head(300), 3, "mdav-plus").compile_seconds == 0.0


def test_warmup_compiles_what_publish_and_risk_then_use(tmp_path):
    """After ``incrowd warmup --methods publish,risk`` into an empty cache, neither ``publish``
    (categorical columns generalized, a numeric one microaggregated) nor ``risk`` with SUDA2 compiles:
    no notice."""

    cache = tmp_path / "cache"
    done = _cli(["warmup", "--methods", "publish,risk", "--quiet"], cache)
    assert done.returncode == 0, done.stderr
    rng = np.random.default_rng(3)
    n, keys = 20_000, ["age", "zip", "sex", "edu", "region", "job", "hours"]
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "zip": rng.integers(0, 300, n), "sex": rng.integers(0, 2, n),
                          "edu": rng.integers(0, 8, n), "region": rng.integers(0, 9, n), "job": rng.integers(0, 12, n),
                          "hours": rng.integers(1, 80, n), "income": rng.normal(size=n),
                          "w": rng.uniform(1.0, 50.0, n), "h": np.arange(n) // 3})
    data = tmp_path / "survey.csv"
    frame.to_csv(data, index=False)
    spec = tmp_path / "release.toml"
    spec.write_text('[privacy]\nk = 5\nmax_suppression = "5%"\nallow_full_suppression = true\n[columns]\n'
                    'income = "numeric"\nage = { role = "categorical", intervals = [10, 20] }\n'
                    'zip = { role = "categorical", intervals = [10, 100] }\n')
    published = _cli(["publish", str(data), "--spec", str(spec), "-o", str(tmp_path / "release.csv")], cache)
    assert published.returncode == 0, published.stderr
    measured = _cli(["risk", str(data), "--qi", ",".join(keys), "--weight", "w", "--household", "h"], cache)
    assert measured.returncode == 0, measured.stderr
    assert "SUDA2" in measured.stdout
    assert NOTICE not in published.stderr
    assert NOTICE not in measured.stderr


def test_warmup_compiles_the_fast_ona_star_kernel_where_a_warm_machine_takes_it(monkeypatch):
    """ONA* takes its fast kernel only once that is compiled or cached, so a warm-up that only ran
    the methods would leave it uncompiled: the warm-up compiles it directly for the methods that
    run ONA*, on every shape with enough groups for it (with the k-d tree for few columns and
    many groups), and not on the small shape."""
    from incrowd import microaggregation  # where the warm-up takes the kernel and microaggregate from
    from incrowd.cli import _compile_ahead as _warmup

    asked = []
    monkeypatch.setattr(microaggregation, "ona_star_fast_labels", lambda X, k, rounds, tree: asked.append((X.shape, tree)))
    monkeypatch.setattr(microaggregation, "microaggregate", lambda *a, **kw: None)
    for target in ("ona-star", "mdav", "refine"):
        for rows, cols in _warmup.steps(target):
            _warmup._run(target, rows, cols)
    expected = [((3000, 3), False), ((3000, 8), False), ((20000, 3), True)]
    assert asked == expected * 2  # ona-star and refine, not mdav


def test_warmup_refuses_an_unknown_name_in_one_line():
    from typer.testing import CliRunner

    from incrowd.cli import app

    done = CliRunner().invoke(app, ["warmup", "--methods", "mdav,nope"])
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines() == [
        done.stderr.strip()] and done.stderr.startswith("error: ") and "'nope'" in done.stderr


def test_generalization_timings_keep_compile_apart():
    from incrowd.generalization import Lattice, generalize

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"age": rng.integers(18, 90, 400), "hours": rng.integers(1, 80, 400)})
    intervals = {"age": [5, 10, 20], "hours": [10, 20]}
    info = Lattice.build(frame, ["age", "hours"], intervals=intervals).describe()
    assert info["compile_seconds"] == info["seconds"]["compile"] >= 0
    assert info["seconds"]["total"] >= 0
    result = generalize(frame, {"age": 2, "hours": 1}, k=3, intervals=intervals).summary()
    assert result["compile_seconds"] >= 0 and result["seconds"] >= 0


def test_work_clock_stands_still_while_compiling():
    import numba

    from incrowd._runtime._compile import compiled_so_far, work_clock

    @numba.njit(cache=False)
    def fresh(x):
        return x * 2.0 + 1.0

    w0, c0, t0 = work_clock(), compiled_so_far(), time.perf_counter()
    fresh(1.0)
    w1, c1, t1 = work_clock(), compiled_so_far(), time.perf_counter()
    assert c1 - c0 > 0
    # the readings are taken one after another, so they agree to the time between them
    assert (w1 - w0) + (c1 - c0) == pytest.approx(t1 - t0, abs=1e-3)
    assert w1 - w0 < t1 - t0


def test_compiled_or_cached_sees_this_process_and_numbas_cache(tmp_path):
    """False before a kernel's first compile on a machine; True once this process compiled it,
    and in a later process that has only numba's cache."""
    (tmp_path / "kernel_module.py").write_text(
        "from numba import njit\n\n\n@njit(cache=True)\ndef double(x):\n    return 2.0 * x\n")
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        from kernel_module import double
        from incrowd._runtime import compiled_or_cached
        before = compiled_or_cached(double)
        double(1.0)
        print(before, compiled_or_cached(double))
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                           timeout=120).stdout.split() for _ in range(2)]
    assert runs == [["False", "True"], ["True", "True"]]


def test_negotiation_reports_compile_seconds_apart():
    from incrowd.generalization import Lattice, negotiate

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"age": rng.integers(18, 90, 300), "hours": rng.integers(1, 80, 300)})
    lattice = Lattice.build(frame, ["age", "hours"], intervals={"age": [5, 10], "hours": [10, 20]})
    answer = negotiate(lattice, k=5, max_suppression="5%").to_dict()
    assert answer["compile_seconds"] >= 0 and answer["seconds"] >= 0


SHARED_MONDRIAN = textwrap.dedent("""
    import numpy as np
    from incrowd.microaggregation import MONA, Mondrian, MondrianV2D
    from incrowd.microaggregation.mondrian._mondrian_kernel import mondrian_labels, mondrian_subtree_labels

    X = np.random.default_rng(0).normal(size=(300, 3))
    for est in (Mondrian(k=5), MondrianV2D(k=5, diagonals="unit"), MONA(k=5, max_rounds=2)):
        est.fit(X)
    print(len(mondrian_subtree_labels.signatures), len(mondrian_labels.signatures))
""")


def test_mondrian_and_mona_share_one_compiled_kernel():
    """The Mondrian family and MONA call the cut kernel with the same argument types, so a
    machine compiles it once for all of them (not once per entry point)."""
    done = subprocess.run([sys.executable, "-c", SHARED_MONDRIAN], capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "0"]




HELPER_COMPILES = textwrap.dedent("""
    import json
    import numpy as np
    from numba.core import event
    from incrowd._runtime import compile_clock
    from incrowd.microaggregation._kernels import nearest_alive
    from incrowd.microaggregation.greedy import _fixed_center
    from incrowd.microaggregation.greedy._greedy_kernels import mdav_star_labels
    from incrowd.microaggregation.ona import _ona_kernel as ok

    compiled = []

    class Record(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__module__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Record())
    X = np.random.default_rng(0).normal(size=(40, 2))
    with compile_clock():  # the package's kernels are called under a clock
        labels = mdav_star_labels(X, 3)
        grown = ok._grow(np.ones((2, 9), np.int64), np.ones(2, np.int64), X[:2].copy(), X[:2].copy(),
                         np.ones(2), 5)
    helpers = [_fixed_center.next_origin, _fixed_center.add_to_group, _fixed_center.sse_growth_closest,
               nearest_alive]
    print(json.dumps({"signatures": [len(f.signatures) for f in helpers],
                      "strings": sorted({m for m in compiled if "unicode" in m}),
                      "smallest_group": int(np.bincount(labels).min()),
                      "grown": [int(grown[0][:2].sum()), int(grown[0].shape[0]), float(grown[2][:2].sum())]}))
""")


OVERLOAD_COMPILES = textwrap.dedent("""
    import json
    import numpy as np
    from numba import njit
    from numba.core import event
    from incrowd._runtime import compile_clock

    compiled = []

    class Record(event.Listener):
        def on_start(self, ev):
            name = ev.data["dispatcher"].py_func.__qualname__
            if "np_empty" in name:
                compiled.append(str(ev.data["args"]))

        def on_end(self, ev):
            pass

    event.register("numba:compile", Record())

    @njit
    def plain(n):
        return np.empty(n, np.uint16)

    @njit(nogil=True)
    def released(n):
        return np.empty(n, np.uint16)

    @njit(no_cpython_wrapper=True, no_cfunc_wrapper=True)
    def helper(n):
        return np.empty(n, np.uint16)

    @njit
    def through_helper(n):
        return helper(n)

    with compile_clock():  # the package's kernels are compiled under a clock
        shapes = [plain(3).shape[0], released(4).shape[0], through_helper(5).shape[0]]
    print(json.dumps({"compiled": compiled, "shapes": shapes}))
""")


def test_kernels_that_differ_only_in_entry_points_share_numpys_implementations(tmp_path):
    """numba compiles ``np.empty`` and its kin once per calling kernel's flags; kernels that differ
    only in their entry points (nogil, or no Python and C wrappers) share one compiled
    implementation once the clocks are installed, and get the arrays they ask for."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", OVERLOAD_COMPILES], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["shapes"] == [3, 4, 5]
    assert len(report["compiled"]) == 1 and "uint16" in report["compiled"][0]


def test_a_constant_argument_compiles_no_second_specialization(tmp_path):
    """MDAV* calls its helpers with constants (``next_origin(..., 0, ...)``) and with variables:
    each helper compiles once, for the plain integer type, not once more per constant. ONA*'s
    growth of its cluster arrays compiles none of numba's string formatting (a shape-mismatch
    message that copy can never raise)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", HELPER_COMPILES], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["signatures"] == [1, 1, 1, 1]
    assert report["strings"] == []
    assert report["smallest_group"] >= 3
    X = np.random.default_rng(0).normal(size=(40, 2))
    assert report["grown"] == [18, 5, float(X[:2].sum())]


def test_warmup_compiles_the_lower_bound_that_the_demo_runs(monkeypatch):
    """``incrowd demo`` runs refine with its lower bound (``bound=True``): the warm-up asks for it
    on its smallest shape (the kernels' types are the same on every shape), so the demo after an
    install compiles nothing."""
    from incrowd import microaggregation
    from incrowd.cli import _compile_ahead as _warmup

    asked = []
    monkeypatch.setattr(microaggregation, "ona_star_fast_labels", lambda *a: None)
    monkeypatch.setattr(microaggregation, "microaggregate", lambda data, k, method, **kw: asked.append(kw.get("bound")))
    for rows, cols in _warmup.steps("refine"):
        _warmup._run("refine", rows, cols)
    assert asked == [True] + [None] * (len(_warmup.steps("refine")) - 1)


def test_a_clock_started_before_numba_is_imported_counts_its_compile():
    """A clock never imports numba (a publish that runs only the compiled extension's kernels must
    not start it); where numba is imported while a clock runs, the clock still counts the
    compiles that follow, and calls between kernels are typed by plain types as before."""
    code = textwrap.dedent("""
        import json, sys
        from incrowd._runtime import compile_clock
        with compile_clock() as clock:
            loaded_by_clock = "numba" in sys.modules
            import numba

            @numba.njit(cache=False)
            def twice(x):
                return 2 * x

            twice(3)
        print(json.dumps({"loaded_by_clock": loaded_by_clock, "compiles": clock.compiles,
                          "seconds": clock.seconds}))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["loaded_by_clock"] is False
    assert report["compiles"] >= 1 and report["seconds"] > 0
