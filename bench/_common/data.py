"""The benchmark data: the published files, read as float matrices, and generated rows."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .paths import REPO


def data_dir() -> Path:
    """Benchmark data folder: ``$INCROWD_DATA``, else ``../shared/data`` beside the checkout.

    "Beside the checkout" is tried from the working directory first, then from this file
    (an editable install run from elsewhere). The returned folder may not exist.
    """
    env = os.environ.get("INCROWD_DATA")
    if env:
        return Path(env)
    candidates = [Path.cwd().parent / "shared" / "data", Path(__file__).resolve().parents[3] / "shared" / "data"]
    for folder in candidates:
        if folder.is_dir():
            return folder
    return candidates[0]

EIA_COLUMNS = [
    "UTILITYID", "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE",
    "INDSALES", "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES",
]  # attributes 1 and 6..15, as in Thaeter & Reischuk's (2021) appendix and Thaeter & Reischuk (2018), section 5
ADULT_COLUMNS = ["age", "education-num", "hours-per-week"]  # Thaeter & Reischuk (2021), appendix


def _read(name: str, columns: list[str] | None = None) -> np.ndarray:
    path = data_dir() / name
    if not path.exists():
        raise SystemExit(
            f"benchmark file {path} not found; set INCROWD_DATA to the folder holding it"
        )
    frame = pd.read_csv(path)
    if columns is not None:
        frame = frame[columns]
    return np.ascontiguousarray(frame.to_numpy(dtype=np.float64))


def load_census() -> np.ndarray:
    """1080 x 13, all columns."""
    return _read("census.csv")


def load_tarragona() -> np.ndarray:
    """834 x 13, all columns."""
    return _read("tarragona.csv")


def load_eia() -> np.ndarray:
    """4092 x 11: attributes 1 and 6..15."""
    return _read("eia.csv", EIA_COLUMNS)


def load_cloud1() -> np.ndarray:
    """1024 x 10, all columns."""
    return _read("cloud1.csv")


def load_cloud2() -> np.ndarray:
    """1024 x 10, all columns."""
    return _read("cloud2.csv")


def load_adult() -> np.ndarray:
    """48842 x 3: age, education-num, hours-per-week (adult.data then adult.test)."""
    return _read("adult.csv.gz", ADULT_COLUMNS)


def load_credit() -> np.ndarray:
    """30000 x 24: every attribute of the UCI credit card clients data but ID."""
    path = data_dir() / "credit_default.csv.gz"
    if not path.exists():
        raise SystemExit(f"benchmark file {path} not found; set INCROWD_DATA to its folder")
    frame = pd.read_csv(path).drop(columns="ID")
    return np.ascontiguousarray(frame.to_numpy(dtype=np.float64))


LOADERS: dict[str, Callable[[], np.ndarray]] = {
    "census": load_census,
    "tarragona": load_tarragona,
    "eia": load_eia,
    "cloud1": load_cloud1,
    "cloud2": load_cloud2,
    "adult": load_adult,
}

DISPLAY = {
    "census": "Census",
    "tarragona": "Tarragona",
    "eia": "EIA",
    "cloud1": "Cloud1",
    "cloud2": "Cloud2",
    "adult": "Adult",
}

DATA_NOTES = {
    "census": "census.csv, 1080 x 13 (all columns)",
    "tarragona": "tarragona.csv, 834 x 13 (all columns)",
    "eia": "eia.csv, 4092 x 11 (attributes 1 and 6..15: " + ", ".join(EIA_COLUMNS) + ")",
    "cloud1": "cloud1.csv, 1024 x 10 (all columns)",
    "cloud2": "cloud2.csv, 1024 x 10 (all columns)",
    "adult": "adult.csv.gz, 48842 x 3 (" + ", ".join(ADULT_COLUMNS) + ")",
}


def load(name: str) -> np.ndarray:
    return LOADERS[name]()


def gaussian(n: int, m: int = 15, seed: int = 0) -> np.ndarray:
    """n x m standard Gaussian rows from ``np.random.default_rng(seed)``."""
    return np.random.default_rng(seed).standard_normal((n, m))


def reference_module():
    """tests/reference.py (the plain numpy MDAV), importable without making tests a package."""
    tests = str(REPO / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import reference  # noqa: E402

    return reference
