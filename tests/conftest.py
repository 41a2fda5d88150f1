"""Shared fixtures: benchmark data from $INCROWD_DATA or ../shared/data (skip when absent)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent))  # so tests can import reference.py

from benchdata import data_dir  # noqa: E402

from incrowd.values import standardize  # noqa: E402

EIA_COLUMNS = [
    "UTILITYID", "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE",
    "INDSALES", "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES",
]
ADULT_COLUMNS = ["age", "education-num", "hours-per-week"]

_FILES = {
    "census": ("census.csv", None),
    "tarragona": ("tarragona.csv", None),
    "eia": ("eia.csv", EIA_COLUMNS),
    "cloud1": ("cloud1.csv", None),
    "cloud2": ("cloud2.csv", None),
    "adult": ("adult.csv.gz", ADULT_COLUMNS),
}

_cache: dict[str, np.ndarray] = {}


def benchmark_matrix(name: str) -> np.ndarray:
    """The quasi-identifiers of a benchmark file as used in the papers, standardized."""
    if name not in _cache:
        folder = data_dir()
        if not folder.is_dir():
            pytest.skip(f"benchmark data folder {folder} is absent (set INCROWD_DATA)")
        file, cols = _FILES[name]
        frame = pd.read_csv(folder / file)
        values = (frame[cols] if cols else frame).to_numpy(dtype=np.float64)
        _cache[name] = standardize(values)[0]
    return _cache[name]


def kernel_data(kind: str, n: int, m: int, seed: int) -> np.ndarray:
    """Standardized test data for the exact kernels: Gaussian with mixed scales, small integers
    (ties everywhere), copies of rows, or heavy tails with mixed scales."""
    rng = np.random.default_rng(seed)
    if kind == "gauss":
        X = rng.standard_normal((n, m)) * np.linspace(1, 50, m)
    elif kind == "ints":
        X = rng.integers(0, 4, (n, m)).astype(float)
    elif kind == "copies":
        X = np.repeat(rng.standard_normal((-(-n // 4), m)), 4, axis=0)[:n]  # n rows, in fours
    else:  # heavy tails, mixed scales
        X = rng.standard_cauchy((n, m)) * 10.0 ** rng.integers(-3, 4, m)
    return standardize(X)[0]


@pytest.fixture
def census_frame() -> pd.DataFrame:
    from incrowd.datasets import load_census

    return load_census()
