"""Small data sets shipped inside the package (for the demo and for examples)."""

from __future__ import annotations

from importlib import resources

import pandas as pd

from ..io import suffix


def census_path():
    """Path of the bundled CASC Census file (1080 rows x 13 numeric attributes)."""
    return resources.files(__name__).joinpath(f"census{suffix('csv')}")


def load_census() -> pd.DataFrame:
    """The CASC Census reference file (sdcMicro ``CASCrefmicrodata``), 1080 x 13, all integer.

    Brand, Domingo-Ferrer, Mateo-Sanz, "Reference data sets to test and compare SDC methods for
    protection of numerical microdata" (CASC project); the file every microaggregation paper
    reports on.
    """
    with resources.as_file(census_path()) as path:
        return pd.read_csv(path)
