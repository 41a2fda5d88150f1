"""The curator's survey files: Adult stored as statistical offices store surveys.

A labelled SPSS (.sav) or Stata (.dta) file built from UCI Adult (``adult.csv.gz`` in the
benchmark data folder): a respondent id, categorical variables as numeric codes with value labels
(``sex`` 1 "Male", 2 "Female", ...; codes follow the order of the ARX hierarchy's level 0 where
there is one, else the sorted labels), Adult's ``?`` as the user-missing code 99 "Not stated"
(SPSS: a declared missing value; Stata: the extended missing value ``.a`` labelled so), the survey
weight ``fnlwgt``, SPSS measure levels and variable labels, and the ARX hierarchies as published
(written in labels). The ARX hierarchies have no row for ``?`` (ARX's Adult drops those rows), so
:func:`write_hierarchies` adds the one row per hierarchy that a curator adds when incrowd asks for
it (``Not stated;...;*``); every other row is ARX's, byte for byte.

Used by ``tests/test_survey_path.py`` and ``bench/bench_survey_path.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

#: user-missing code of the categorical variables, and its label
NOT_STATED = 99
NOT_STATED_LABEL = "Not stated"

#: Adult's column -> the variable's name in the file (SPSS and Stata names have no '-')
NAMES = {
    "age": "age", "workclass": "workclass", "fnlwgt": "fnlwgt", "education": "education",
    "education-num": "education_num", "marital-status": "marital_status", "occupation": "occupation",
    "relationship": "relationship", "race": "race", "sex": "sex", "capital-gain": "capital_gain",
    "capital-loss": "capital_loss", "hours-per-week": "hours_per_week", "native-country": "native_country",
    "income": "income",
}
CATEGORICAL = ["workclass", "education", "marital_status", "occupation", "relationship", "race", "sex",
               "native_country", "income"]
NUMERIC = ["age", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
#: the variable -> its ARX hierarchy file's attribute
ARX = {"workclass": "workclass", "education": "education", "marital_status": "marital-status",
       "occupation": "occupation", "race": "race", "sex": "sex", "native_country": "native-country",
       "income": "salary-class", "age": "age"}
LABELS = {"respid": "Respondent id", "age": "Age in years", "workclass": "Class of worker",
          "fnlwgt": "Final sampling weight", "education": "Highest education", "education_num": "Years of education",
          "marital_status": "Marital status", "occupation": "Occupation", "relationship": "Relationship in household",
          "race": "Race", "sex": "Sex", "capital_gain": "Capital gains", "capital_loss": "Capital losses",
          "hours_per_week": "Hours worked per week", "native_country": "Country of birth",
          "income": "Income class"}


def arx_dir(data_dir: Path) -> Path:
    return Path(data_dir) / "adult_arx"


def _arx_level0(data_dir: Path, attribute: str) -> list[str]:
    path = arx_dir(data_dir) / f"adult_hierarchy_{attribute}.csv"
    return [line.split(";")[0] for line in path.read_text().splitlines() if line.strip()]


def survey_frame(data_dir: Path, n: int | None = 3000, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """(the coded frame, its value labels per variable): ``n`` rows of Adult drawn at random
    (``None``: all 48,842), in their file order; ``respid`` is the row's number in Adult."""
    adult = pd.read_csv(Path(data_dir) / "adult.csv.gz", skipinitialspace=True)
    adult["income"] = adult["income"].str.rstrip(".")  # adult.test writes '<=50K.'
    adult.insert(0, "respid", np.arange(1, adult.shape[0] + 1))
    if n is not None and n < adult.shape[0]:
        adult = adult.sample(n=n, random_state=seed).sort_index()
    adult = adult.rename(columns=NAMES).reset_index(drop=True)
    value_labels: dict[str, dict] = {}
    for name in CATEGORICAL:
        text = adult[name].astype(str)
        present = sorted(set(text) - {"?"})
        order = _arx_level0(data_dir, ARX[name]) if name in ARX else present
        order = [v for v in order if v in set(present)] + [v for v in present if v not in set(order)]
        codes = {label: i + 1 for i, label in enumerate(order)}
        labels = {float(code): label for label, code in codes.items()}
        if (text == "?").any():
            codes["?"] = NOT_STATED
            labels[float(NOT_STATED)] = NOT_STATED_LABEL
        adult[name] = text.map(codes).astype(np.float64)
        value_labels[name] = labels
    for name in ["respid", "fnlwgt", *NUMERIC]:
        adult[name] = adult[name].astype(np.float64)
    return adult, value_labels


def _with_user_missing(frame: pd.DataFrame, value_labels: dict) -> list[str]:
    return [c for c in CATEGORICAL if (frame[c] == NOT_STATED).any()]


def write_sav(path: Path, data_dir: Path, n: int | None = 3000, seed: int = 0) -> Path:
    """The labelled SPSS file: codes, value labels, 99 declared user-missing, measures."""
    import pyreadstat

    frame, value_labels = survey_frame(data_dir, n, seed)
    missing = {c: [float(NOT_STATED)] for c in _with_user_missing(frame, value_labels)}
    measure = {c: "nominal" for c in CATEGORICAL}
    measure["education"] = "ordinal"
    measure.update({c: "scale" for c in ["respid", "fnlwgt", *NUMERIC]})
    formats = {c: "F2.0" for c in CATEGORICAL}
    formats.update({"respid": "F6.0", "fnlwgt": "F8.0", "age": "F3.0", "education_num": "F2.0",
                    "capital_gain": "F6.0", "capital_loss": "F5.0", "hours_per_week": "F3.0"})
    pyreadstat.write_sav(frame, str(path), column_labels=[LABELS[c] for c in frame.columns],
                         variable_value_labels=value_labels, missing_ranges=missing, variable_measure=measure,
                         variable_format=formats, file_label="Adult, coded as a survey file")
    return Path(path)


def write_dta(path: Path, data_dir: Path, n: int | None = 3000, seed: int = 0) -> Path:
    """The labelled Stata file: codes, value labels, ``?`` as ``.a`` labelled "Not stated"."""
    import pyreadstat

    frame, value_labels = survey_frame(data_dir, n, seed)
    users = _with_user_missing(frame, value_labels)
    labels = {c: {int(code): text for code, text in value_labels[c].items() if code != NOT_STATED}
              for c in CATEGORICAL}
    for c in users:
        coded = frame[c].astype(object)
        coded[frame[c] == NOT_STATED] = "a"
        frame[c] = coded
        labels[c]["a"] = NOT_STATED_LABEL
    pyreadstat.write_dta(frame, str(path), column_labels=[LABELS[c] for c in frame.columns],
                         variable_value_labels=labels, missing_user_values={c: ["a"] for c in users},
                         file_label="Adult, coded as a survey file")
    return Path(path)


def write_hierarchies(folder: Path, data_dir: Path) -> dict[str, Path]:
    """ARX's Adult hierarchies copied into ``folder`` under their own names, each with the row
    for "Not stated" added where the variable has user-missing cells; variable -> file."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, attribute in ARX.items():
        source = arx_dir(data_dir) / f"adult_hierarchy_{attribute}.csv"
        target = folder / source.name
        shutil.copyfile(source, target)
        if name in ("workclass", "occupation", "native_country"):
            depth = len(source.read_text().splitlines()[0].split(";"))
            text = target.read_text()
            row = ";".join([NOT_STATED_LABEL] * (depth - 1) + ["*"])
            target.write_text(text + ("" if text.endswith("\n") else "\n") + row + "\n")
        out[name] = target
    return out
