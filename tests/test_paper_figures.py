"""Golden figures from the papers: the worked example of paper 001 and its Table 1,
and paper 000 Table 1 for MDAV and MDAV*."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import benchmark_matrix

from incrowd import MDAV, VMDAV, MDAVPlus, MDAVStar, information_loss, sse

EXAMPLE = np.array([1, 2, 3, 5, 6, 19, 20, 21, 98, 99, 100], dtype=float)
KS = (3, 4, 5, 7, 10)

# Paper 001, Table 1 (information loss in %).
PAPER_001 = {
    "census": {
        "mdav-plus": (5.662, 7.514, 9.007, 11.657, 14.073),
        "v-mdav": (5.662, 7.514, 8.978, 11.586, 14.043),
        "mdav-star": (5.782, 7.433, 8.809, 11.369, 14.003),
    },
    "tarragona": {
        "mdav-plus": (16.951, 19.767, 22.872, 28.255, 33.254),
        "v-mdav": (15.849, 19.695, 22.872, 28.249, 33.251),
        "mdav-star": (16.143, 19.189, 22.250, 28.399, 34.743),
    },
    "eia": {
        "mdav-plus": (0.488, 0.673, 1.775, 2.211, 3.547),
        "v-mdav": (0.465, 0.673, 1.056, 2.211, 2.794),
        "mdav-star": (0.449, 0.617, 0.911, 2.032, 2.633),
    },
}

# Paper 000, Table 1, MDAV row (two decimals), k = 3, 4, 5, 7, 10.
PAPER_000_MDAV = {
    "census": (5.69, 7.49, 9.09, 11.60, 14.16),
    "tarragona": (16.93, 19.55, 22.46, 27.52, 33.19),
    "eia": (0.48, 0.67, 1.67, 2.17, 3.84),
}

ESTIMATORS = {"mdav-plus": MDAVPlus, "v-mdav": VMDAV, "mdav-star": MDAVStar}


def test_worked_example_mdav_star():
    model = MDAVStar(k=3).fit(EXAMPLE)
    assert sse(EXAMPLE, model.labels_) == pytest.approx(21.2)
    assert 100 * model.information_loss_ == pytest.approx(0.118, abs=5e-4)
    assert sorted(np.bincount(model.labels_)) == [3, 3, 5]


def test_worked_example_vmdav_gamma_1_1():
    model = VMDAV(k=3, gamma=1.1).fit(EXAMPLE)
    assert sse(EXAMPLE, model.labels_) == pytest.approx(258.8)
    assert 100 * model.information_loss_ == pytest.approx(1.44, abs=5e-3)
    groups = {tuple(EXAMPLE[model.labels_ == g]) for g in np.unique(model.labels_)}
    assert groups == {(1, 2, 3), (5, 6, 19, 20, 21), (98, 99, 100)}


@pytest.mark.parametrize("name", sorted(PAPER_000_MDAV))
def test_mdav_equals_published_to_two_decimals(name):
    Z = benchmark_matrix(name)
    got = [round(100 * MDAV(k=k).fit(Z).information_loss_, 2) for k in KS]
    assert got == list(PAPER_000_MDAV[name])


@pytest.mark.parametrize("name", sorted(PAPER_001))
@pytest.mark.parametrize("method", ["mdav-plus", "mdav-star"])
def test_paper_001_table_1(name, method):
    Z = benchmark_matrix(name)
    published = np.array(PAPER_001[name][method])
    got = np.array([100 * ESTIMATORS[method](k=k).fit(Z).information_loss_ for k in KS])
    # The acceptance rule is 3 % relative; we in fact match every published digit.
    assert np.all(np.abs(got / published - 1) <= 0.03)
    np.testing.assert_allclose(got, published, atol=6e-4)


@pytest.mark.parametrize("name", sorted(PAPER_001))
def test_paper_001_table_1_vmdav_best_gamma(name):
    Z = benchmark_matrix(name)
    published = np.array(PAPER_001[name]["v-mdav"])
    gammas = np.round(np.arange(0, 2.01, 0.1), 1)
    got = np.array(
        [min(100 * information_loss(Z, VMDAV(k=k, gamma=float(g)).fit(Z).labels_) for g in gammas) for k in KS]
    )
    assert np.all(np.abs(got / published - 1) <= 0.03)
    np.testing.assert_allclose(got, published, atol=6e-4)
