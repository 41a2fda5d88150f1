"""Microaggregation: ``incrowd.microaggregate`` by method name, and the estimators' ``fit``."""

from __future__ import annotations

import incrowd

from ._data import gaussian


class Microaggregate:
    """``incrowd.microaggregate(X, 10, method)`` on n x 15 standard Gaussian rows: validation,
    standardization, the groups, the centroids, the k-anonymity check and the result."""

    params = [[10_000, 100_000], ["mdav", "mdav-star", "ona-star", "mona", "mondrian-v"]]
    param_names = ["n", "method"]
    quick_params = [[2_000], ["mdav", "mdav-star", "ona-star", "mona", "mondrian-v"]]
    timeout = 600

    def setup(self, n, method):
        self.X = gaussian(n)

    def time_microaggregate(self, n, method):
        incrowd.microaggregate(self.X, 10, method)


class Estimators:
    """``Estimator(10).fit(X)`` for the exact MDAV family and Thaeter & Reischuk's methods."""

    params = [[10_000, 100_000], ["MDAV", "MDAVStar", "ONAStar", "MONA"]]
    param_names = ["n", "estimator"]
    quick_params = [[2_000], ["MDAV", "MDAVStar", "ONAStar", "MONA"]]
    timeout = 600

    def setup(self, n, estimator):
        self.X = gaussian(n)
        self.estimator = getattr(incrowd, estimator)

    def time_fit(self, n, estimator):
        self.estimator(10).fit(self.X)

    def peakmem_fit(self, n, estimator):
        self.estimator(10).fit(self.X)


class MonaRho:
    """MONA's trade-off knob: larger rho, larger parts for ONA*, lower IL, more time."""

    params = [[100_000], [0.3, 0.5, 0.7]]
    param_names = ["n", "rho"]
    quick_params = [[2_000], [0.3, 0.7]]
    timeout = 600

    def setup(self, n, rho):
        self.X = gaussian(n)

    def time_fit(self, n, rho):
        incrowd.MONA(10, rho=rho).fit(self.X)
