"""Incremental publication: the base, adjoining the late rows, publishing; and the planner."""

from __future__ import annotations

import tempfile
from pathlib import Path

import incrowd
from incrowd.incremental import IncrementalMicroaggregation

from ._data import gaussian


def _warm_up(folder: Path, strategy: str) -> None:
    """Compile (or load) the kernels a base, an add and a publish use, on 300 rows, so that no
    timed call compiles, whichever runner times it (asv runs ``setup`` before each repeat)."""
    X = gaussian(300, seed=1)
    state = IncrementalMicroaggregation.from_base(X[:270], folder / "warm.duckdb", 10, "mdav", overwrite=True)
    state.add(X[270:], strategy=strategy)
    state.publish(folder / "warm.csv")


class Incremental:
    """A base of (1 - nu) n rows (MDAV, k = 10) in a state file, then the other nu n rows adjoined
    by ``add(strategy=...)`` and the release written by ``publish``; n x 15 Gaussian rows,
    nu = 0.1. Each timed call gets a fresh state file from ``setup``."""

    params = [[10_000, 100_000], ["nn-split-end", "2mdav"]]
    param_names = ["n", "strategy"]
    quick_params = [[2_000], ["nn-split-end", "2mdav"]]
    timeout = 600
    number = 1
    #: the timed calls change the state file: bench/suite/run.py calls setup before each repeat
    setup_per_repeat = True

    def setup(self, n, strategy):
        self._folder = tempfile.TemporaryDirectory()
        folder = Path(self._folder.name)
        _warm_up(folder, strategy)
        X = gaussian(n)
        cut = n - n // 10
        self.late = X[cut:]
        self.out = folder / "release.csv"
        self.state = IncrementalMicroaggregation.from_base(X[:cut], folder / "state.duckdb", 10, "mdav")

    def teardown(self, n, strategy):
        self._folder.cleanup()

    def time_add(self, n, strategy):
        self.state.add(self.late, strategy=strategy)

    def time_add_and_publish(self, n, strategy):
        self.state.add(self.late, strategy=strategy)
        self.state.publish(self.out)


class Base:
    """``IncrementalMicroaggregation.from_base``: the base's MDAV and its state file."""

    params = [[10_000, 100_000]]
    param_names = ["n"]
    quick_params = [[2_000]]
    timeout = 600
    number = 1
    setup_per_repeat = True

    def setup(self, n):
        self._folder = tempfile.TemporaryDirectory()
        folder = Path(self._folder.name)
        _warm_up(folder, "nn-split-end")
        self.X = gaussian(n)
        self.path = folder / "state.duckdb"

    def teardown(self, n):
        self._folder.cleanup()

    def time_from_base(self, n):
        IncrementalMicroaggregation.from_base(self.X, self.path, 10, "mdav", overwrite=True)


class Plan:
    """``incrowd.incremental.plan`` with the closed forms for t proportional to n^2 (no timing
    of a method on this machine)."""

    params = [[50_000]]
    param_names = ["rows"]

    def time_plan(self, rows):
        incrowd.incremental.plan(rows, varsigma=5, tau_end=0.5,
                                 model=incrowd.incremental.RuntimeModel(2.0))
