"""The risk and utility report: ``incrowd.report`` on an MDAV release."""

from __future__ import annotations

import pandas as pd

import incrowd

from ._data import gaussian


class Report:
    """``incrowd.report(original, release, quasi_identifiers)`` on n x 15 Gaussian rows
    microaggregated by MDAV at k = 10 (the release made in ``setup``, not timed); figures off,
    attacks off (anonymeter's attacks are timed by ``bench/bench_attacks.py``)."""

    params = [[10_000, 100_000]]
    param_names = ["n"]
    quick_params = [[2_000]]
    timeout = 600

    def setup(self, n):
        columns = [f"x{j}" for j in range(15)]
        self.original = pd.DataFrame(gaussian(n), columns=columns)
        self.release = incrowd.microaggregate(self.original, 10, "mdav").table
        self.columns = columns

    def time_report(self, n):
        incrowd.report(self.original, self.release, self.columns, k=10, figures=False)
