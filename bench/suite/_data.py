"""Synthetic inputs for the suite: generated, never read from the benchmark files, so the suite
runs on any checkout (``bench/_common`` reads the published data sets for the other benches)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

COLUMNS = 15


def gaussian(n: int, columns: int = COLUMNS, seed: int = 0) -> np.ndarray:
    """n x columns standard Gaussian rows (``numpy.random.default_rng(seed)``)."""
    return np.random.default_rng(seed).standard_normal((n, columns))


def survey(n: int, seed: int = 0) -> pd.DataFrame:
    """A small survey table: an identifier, two numeric quasi-identifiers, one categorical
    quasi-identifier with 16 values (a three-level hierarchy, see :func:`write_hierarchy`), a
    categorical sensitive column and a free-text column."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": np.arange(n),
        "age": rng.integers(17, 91, n).astype(float),
        "hours": np.clip(rng.normal(40, 12, n).round(), 1, 99),
        "region": [f"r{v:02d}" for v in rng.integers(0, 16, n)],
        "income": rng.choice(["<=50K", ">50K"], n, p=[0.76, 0.24]),
        "note": ["x"] * n,
    })


def write_hierarchy(folder: Path) -> Path:
    """The hierarchy of ``region``: 16 values, 4 groups of 4, then ``*``; ';'-separated rows."""
    path = Path(folder) / "region.csv"
    path.write_text("".join(f"r{v:02d};g{v // 4};*\n" for v in range(16)), encoding="utf-8")
    return path


def publish_spec(hierarchy: Path, k: int, strategy: str) -> dict:
    """The release spec of :func:`survey` for ``incrowd.publish``."""
    return {
        "privacy": {"k": k, "max_suppression": "1%", "strategy": strategy},
        "columns": {
            "id": "identifier",
            "age": "numeric",
            "hours": "numeric",
            "region": {"role": "categorical", "hierarchy": str(hierarchy)},
            "income": "sensitive",
            "note": "other",
        },
    }
