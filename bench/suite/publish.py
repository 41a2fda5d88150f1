"""Mixed releases: ``incrowd.publish`` with both strategies on a synthetic survey."""

from __future__ import annotations

import tempfile
from pathlib import Path

import incrowd

from ._data import publish_spec, survey, write_hierarchy


class Publish:
    """``incrowd.publish(frame, spec)``: numeric age and hours microaggregated, region generalized
    by its hierarchy, k = 5, at most 1 % suppressed; the release verified before it is returned."""

    params = [[10_000, 100_000], ["generalize-then-microaggregate", "joint"]]
    param_names = ["n", "strategy"]
    quick_params = [[2_000], ["generalize-then-microaggregate", "joint"]]
    timeout = 600

    def setup(self, n, strategy):
        self._folder = tempfile.TemporaryDirectory()
        self.frame = survey(n)
        self.spec = publish_spec(write_hierarchy(Path(self._folder.name)), 5, strategy)

    def teardown(self, n, strategy):
        self._folder.cleanup()

    def time_publish(self, n, strategy):
        incrowd.publish(self.frame, self.spec)
