"""The curator's household survey: sdcMicro's ``testdata`` stored as a statistical office stores it.

sdcMicro's ``testdata`` (``testdata.csv`` in the benchmark data folder: 4,580 persons in 1,000
households) written as a labelled SPSS file (.sav): the categorical variables
as numeric codes with value labels (``sex`` 1 "Male", 2 "Female"; ``urbrur`` 1 "Urban", 2 "Rural";
...), the code 9 of ``roof``, ``walls``, ``water`` and ``relat`` as the user-missing code
"Not stated" (a declared missing value), variable labels (``expend`` "Household expenditure", ``ori_hid`` "Household id"), SPSS
measure levels (nominal codes, scale amounts), the person weight ``sampling_weight`` and the
household id ``ori_hid``.

Also the curator's keys and recodes (age in ten-year bands, relat's relatives grouped), as
hierarchy files written in labels (:data:`KEYS`, :func:`write_hierarchies`).

Used by tests that publish, report on, or add to a household survey, and by the benches that
remake the curator's release.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

#: the user-missing code of the categorical variables that have one, and its label
NOT_STATED = 9
NOT_STATED_LABEL = "Not stated"

#: value labels of each coded variable (codes as they stand in sdcMicro's testdata)
VALUE_LABELS: dict[str, dict[int, str]] = {
    "urbrur": {1: "Urban", 2: "Rural"},
    "roof": {2: "Concrete", 4: "Metal sheets", 5: "Tiles", 6: "Thatch", NOT_STATED: NOT_STATED_LABEL},
    "walls": {2: "Brick", 3: "Mud", NOT_STATED: NOT_STATED_LABEL},
    "water": {1: "Pipe (own tap)", 2: "Public standpipe", 3: "Borehole", 4: "Protected well",
              5: "Unprotected well", 6: "Surface water", 7: "Rain water", NOT_STATED: NOT_STATED_LABEL},
    "electcon": {1: "Yes", 2: "No", 4: "Shared"},
    "relat": {1: "Head", 2: "Spouse", 3: "Child", 4: "Father/Mother", 5: "Grandchild",
              6: "Son/Daughter-in-law", 7: "Other relative", 8: "Non-relative", NOT_STATED: NOT_STATED_LABEL},
    "sex": {1: "Male", 2: "Female"},
    "hhcivil": {1: "Single", 2: "Married", 3: "Widowed", 4: "Divorced"},
}
#: the variables whose code 9 is declared user-missing
USER_MISSING = ["roof", "walls", "water", "relat"]

VARIABLE_LABELS = {
    "urbrur": "Urban or rural area", "roof": "Roof material", "walls": "Wall material",
    "water": "Main source of drinking water", "electcon": "Connected to electricity",
    "relat": "Relationship to the household head", "sex": "Sex", "age": "Age in years",
    "hhcivil": "Civil status", "expend": "Household expenditure", "income": "Income",
    "savings": "Savings", "ori_hid": "Household id", "sampling_weight": "Person weight",
    "household_weights": "Household weight",
}
MEASURES = {**{c: "nominal" for c in VALUE_LABELS}, "age": "scale", "expend": "scale", "income": "scale",
            "savings": "scale", "ori_hid": "nominal", "sampling_weight": "scale", "household_weights": "scale"}

#: the curator's keys, household id and weight
KEYS = ["urbrur", "water", "sex", "age", "relat", "hhcivil"]
HOUSEHOLD_ID = "ori_hid"
WEIGHT = "sampling_weight"


def household_frame(data_dir: Path) -> pd.DataFrame:
    """sdcMicro's testdata as codes: every coded variable an integer column, amounts as floats."""
    frame = pd.read_csv(Path(data_dir) / "testdata.csv")
    for column in [*VALUE_LABELS, "age", "ori_hid"]:
        frame[column] = frame[column].astype(np.int64)
    return frame


def write_household(data_dir: Path, path: Path) -> Path:
    """Write the labelled household survey as a ``.sav`` file."""
    import pyreadstat

    frame = household_frame(data_dir)
    path = Path(path)
    labels = {c: dict(v) for c, v in VALUE_LABELS.items()}
    if path.suffix.lower() == ".sav":
        pyreadstat.write_sav(frame, str(path), column_labels=VARIABLE_LABELS, variable_value_labels=labels,
                             missing_ranges={c: [NOT_STATED] for c in USER_MISSING},
                             variable_measure=MEASURES)
    else:
        raise ValueError(f"write_household writes .sav; got {path.name!r}")
    return path


#: the curator's recodes, written in labels: age in ten-year bands, relat's relatives grouped
AGE_BANDS = [(0, 9), (10, 19), (20, 29), (30, 39), (40, 49), (50, 59), (60, 69), (70, 79), (80, 89), (90, 99)]
RELAT_GROUPS = {"Head": "Head", "Spouse": "Spouse", "Child": "Child", "Father/Mother": "Other relative",
                "Grandchild": "Child", "Son/Daughter-in-law": "Other relative",
                "Other relative": "Other relative", "Non-relative": "Non-relative",
                NOT_STATED_LABEL: NOT_STATED_LABEL}


def write_hierarchies(folder: Path) -> Path:
    """The curator's recodes as hierarchy files (``age.csv``, ``relat.csv``) in ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    age_rows = [f"{a};{lo}-{hi};*" for lo, hi in AGE_BANDS for a in range(lo, hi + 1)]
    (folder / "age.csv").write_text("\n".join(age_rows) + "\n", encoding="utf-8")
    relat_rows = [f"{label};{group};*" for label, group in RELAT_GROUPS.items()]
    (folder / "relat.csv").write_text("\n".join(relat_rows) + "\n", encoding="utf-8")
    return folder
