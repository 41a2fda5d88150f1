"""dRiskRMD as sdcMicro computes it: robustbase ``covMcd``'s corrections on the MCD.

Fixture ``tests/data/sdcmicro_drisk_rmd.json``, made once by ``bench/peers/drisk_rmd_seeds.py``
with sdcMicro 5.8.0 and robustbase 0.95:

- ``factors``: robustbase's best h-subset, raw and reweighted scatter of a table built without
  random numbers; incrowd's consistency and small-sample factors applied to that subset must
  give robustbase's two scatters;
- ``datasets``: sdcMicro's ``dRiskRMD`` under ``set.seed(s)``, s = 0..19, on Census (MDAV
  k = 3) and 10,000 Adult rows (MDAV k = 5): the spread over seeds is the tolerance sdcMicro's
  own random subsets allow, and incrowd's figures must fall inside it (widened by 1e-6
  relative: Census's scatter is ill-conditioned, the last digits of wrisk1 move with rounding).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from scipy import stats

import incrowd
from incrowd.reporting._risk import _mcd_cnp2, _mcd_cons, _mcd_h, _sq_mahalanobis, drisk_rmd

FIXTURE = json.loads((Path(__file__).resolve().parent / "data" / "sdcmicro_drisk_rmd.json").read_text(encoding="utf-8"))


def _factor_table(p: int, n: int = 300) -> np.ndarray:
    # as the fixture's R code builds it: sin(0.7 i (j + 1)), every 17th row shifted by 4
    i = np.arange(1, n + 1)[:, None]
    j = np.arange(1, p + 1)[None, :]
    return np.sin(0.7 * i * (j + 1)) + 4.0 * (i % 17 == 0)


@pytest.mark.parametrize("p", [2, 4])
def test_correction_factors_reproduce_robustbase_on_its_own_subset(p):
    ref = FIXTURE["factors"][str(p)]
    x = _factor_table(p)
    n = x.shape[0]
    sub = x[np.asarray(ref["best"]) - 1]
    h = _mcd_h(n, p, 0.5)
    assert sub.shape[0] == h
    raw = np.cov(sub, rowvar=False, ddof=1) * _mcd_cons(p, h / n) * _mcd_cnp2(p, n, 0.5, "raw")
    np.testing.assert_allclose(raw.ravel(order="F"), ref["raw"], rtol=1e-12)
    keep = _sq_mahalanobis(x, sub.mean(axis=0), raw) < stats.chi2(p).ppf(0.975)
    cov = np.cov(x[keep], rowvar=False, ddof=1) * _mcd_cons(p, keep.sum() / n) * _mcd_cnp2(p, n, 0.5, "rew")
    np.testing.assert_allclose(cov.ravel(order="F"), ref["cov"], rtol=1e-12)


def test_consistency_factor_is_one_on_all_rows():
    # .MCDcons(p, 1): the whole normal distribution needs no correction
    for p in (1, 3, 7):
        assert _mcd_cons(p, 1.0 - 1e-15) == pytest.approx(1.0, abs=1e-9)
        assert _mcd_cons(p, 0.5) > 1.0


def _datasets():
    folder = data_dir()
    if not (folder / "census.csv").exists() or not (folder / "adult.csv.gz").exists():
        pytest.skip(f"benchmark data folder {folder} is absent (set INCROWD_DATA)")
    census = pd.read_csv(folder / "census.csv").astype(np.float64)
    census = census[[c for c in census.columns if c not in ("PTOTVAL", "PEARNVAL", "ERNVAL")]]
    cols = ["age", "education-num", "hours-per-week"]
    adult = pd.read_csv(folder / "adult.csv.gz", usecols=cols, nrows=10_000)[cols].astype(np.float64)
    for name, frame, k in (("census", census, 3), ("adult", adult, 5)):
        yield name, frame, incrowd.microaggregate(frame, k, "mdav").table[frame.columns].astype(np.float64)


@pytest.mark.slow
def test_drisk_rmd_inside_sdcmicros_spread_over_seeds():
    for name, x, xm in _datasets():
        ref = FIXTURE["datasets"][name]
        assert float(xm.to_numpy().sum()) == pytest.approx(ref["release_sum"], rel=1e-12), name
        for k in ("0.7", "0.01"):
            got = drisk_rmd(x, xm, k=float(k))
            for key in ("risk1", "risk2", "wrisk1", "wrisk2"):
                lo, hi = ref[k][key]["min"], ref[k][key]["max"]
                slack = 1e-6 * max(abs(lo), abs(hi))
                assert lo - slack <= got[key] <= hi + slack, (name, k, key, got[key], lo, hi)
