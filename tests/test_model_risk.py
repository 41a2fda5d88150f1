"""``incrowd risk``'s log-linear model risk equals sdcMicro 5.8.0's ``modRisk`` (gr1, gr2) on
``testdata`` and Adult (sdcMicro's figures in ``tests/data/sdcmicro_modrisk.csv``, written by
``bench/peers/modrisk_vs_sdcmicro.py``: CI has no R), and its fit is the maximum-likelihood fit
of the Poisson log-linear model, checked against a Newton fit over the whole grid."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.cli import app  # noqa: E402
from incrowd.exceptions import ParameterError  # noqa: E402

DATA = data_dir()
PEER = pd.read_csv(Path(__file__).parent / "data" / "sdcmicro_modrisk.csv", comment="#")
CASES = {
    "testdata_curator": ("testdata.csv", ["urbrur", "water", "sex", "age", "relat", "hhcivil"], "sampling_weight"),
    "testdata_houses": ("testdata.csv", ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"],
                        "sampling_weight"),
    "testdata_example": ("testdata.csv", ["sex", "water", "roof"], "sampling_weight"),
    "adult": ("adult.csv.gz", ["sex", "race", "marital_status", "education"], "fnlwgt"),
}


def _frame(name: str) -> pd.DataFrame:
    frame = pd.read_csv(DATA / name, na_values=["?"])
    frame.columns = [c.replace("-", "_") for c in frame.columns]
    return frame


@pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")
@pytest.mark.parametrize("row", PEER.to_dict("records"), ids=lambda r: f"{r['case']}-{r['method']}")
def test_model_risk_equals_sdcmicros_modrisk(row):
    name, keys, weight = CASES[row["case"]]
    got = incrowd.risk(_frame(name), keys, weight=weight, model_risk=row["method"], suda=False).summary()["model_risk"]
    assert got["method"] == row["method"]
    if math.isnan(row["gr1"]):
        # sdcMicro's sum over every combination turns NaN where a large one overflows (0 * Inf);
        # over the sample uniques alone the measure is a probability sum below 1
        assert 0 < got["gr1"] < 1 and 0 < got["gr2"] < 1
        return
    assert got["gr1"] == pytest.approx(row["gr1"], rel=1e-8)
    assert got["gr2"] == pytest.approx(row["gr2"], rel=1e-8)


def _newton_fit(counts: np.ndarray, levels: list[int], offset: np.ndarray) -> np.ndarray:
    """The Poisson log-linear model of the main effects fitted by Newton's method on a dummy
    design over the whole grid (what R's glm does), apart from incrowd's code."""
    grid = np.array(list(itertools.product(*[range(size) for size in levels])))
    design = [np.ones(len(grid))] + [(grid[:, j] == v).astype(float) for j, size in enumerate(levels)
                                     for v in range(1, size)]
    X = np.column_stack(design)
    beta = np.zeros(X.shape[1])
    beta[0] = math.log(max(counts.mean(), 1e-3))
    for _ in range(200):
        mu = np.exp(X @ beta + offset)
        step = np.linalg.lstsq(X.T @ (X * mu[:, None]), X.T @ (counts - mu), rcond=None)[0]
        beta += step
        if np.max(np.abs(step)) < 1e-12:
            break
    return np.exp(X @ beta + offset)


def _by_definition(codes: np.ndarray, w: np.ndarray, method: str) -> tuple[float, float]:
    levels = [int(codes[:, j].max()) + 1 for j in range(codes.shape[1])]
    cell = np.ravel_multi_index(codes.T, levels)
    cells = math.prod(levels)
    counts = np.bincount(cell, minlength=cells).astype(float)
    weights = np.bincount(cell, weights=w, minlength=cells)
    inclusion = np.bincount(cell, weights=1 / w, minlength=cells)
    ratio = np.divide(counts, weights, out=np.zeros(cells), where=weights > 0)
    offset = np.log(ratio + 0.1) if method == "CE" else np.zeros(cells)
    lam = _newton_fit(counts, levels, offset)
    present = counts > 0
    unique = counts == 1
    v = (1 - inclusion) * lam
    return (float(np.exp(-v)[unique].sum() / present.sum()),
            float(((1 - np.exp(-v[unique])) / v[unique]).sum() / present.sum()))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(8, 60), levels=st.lists(st.integers(2, 4), min_size=1, max_size=3),
       method=st.sampled_from(["default", "CE"]))
def test_model_risk_is_the_maximum_likelihood_fit_by_its_definition(seed, n, levels, method):
    rng = np.random.default_rng(seed)
    codes = np.column_stack([rng.integers(0, size, n) for size in levels])
    # every value of each key present: the grid is of the values the file holds, as modRisk's
    for j, size in enumerate(levels):
        codes[:size, j] = np.arange(size)
    w = rng.uniform(2, 50, n)
    frame = pd.DataFrame(codes, columns=[f"k{j}" for j in range(len(levels))]).assign(w=w)
    got = incrowd.risk(frame, list(frame.columns[:-1]), weight="w", model_risk=method, suda=False).summary()
    gr1, gr2 = _by_definition(codes, w, method)
    assert got["model_risk"]["gr1"] == pytest.approx(gr1, rel=1e-7, abs=1e-12)
    assert got["model_risk"]["gr2"] == pytest.approx(gr2, rel=1e-7, abs=1e-12)


def test_model_risk_needs_weights_and_names_a_bad_method():
    frame = pd.DataFrame({"a": [1, 1, 2, 2, 3], "b": list("xyxyx"), "w": [10.0, 20, 30, 40, 50]})
    assert "model_risk" not in incrowd.risk(frame, ["a", "b"]).summary()   # no weights: not measured
    assert "model_risk" not in incrowd.risk(frame, ["a", "b"], weight="w", model_risk=None).summary()
    with pytest.raises(ParameterError, match=r"model_risk must be one of default, CE or None; got 'IPF'"):
        incrowd.risk(frame, ["a", "b"], weight="w", model_risk="IPF")


def test_a_missing_key_value_is_a_value_of_its_own_in_the_model():
    frame = pd.DataFrame({"a": [1, None, 2, 2, 1, None], "b": list("xyxyxy"), "w": [10.0, 20, 30, 40, 50, 60]})
    filled = frame.assign(a=frame["a"].fillna(9))
    ours = incrowd.risk(frame, ["a", "b"], weight="w").summary()["model_risk"]
    assert ours == incrowd.risk(filled, ["a", "b"], weight="w").summary()["model_risk"]


def test_the_cli_prints_the_model_risk_and_refuses_a_bad_method(tmp_path):
    frame = pd.DataFrame({"a": [1, 1, 2, 2, 3, 3, 1], "b": list("xyxyxyy"), "w": [10.0, 20, 30, 40, 50, 60, 70]})
    frame.to_csv(tmp_path / "d.csv", index=False)
    done = CliRunner().invoke(app, ["risk", str(tmp_path / "d.csv"), "--qi", "a,b", "--weight", "w"])
    assert done.exit_code == 0, done.output
    line = next(line for line in done.output.splitlines() if line.startswith("model risk"))
    assert "sdcMicro modRisk, method default, 6 key combinations" in line
    done = CliRunner().invoke(app, ["risk", str(tmp_path / "d.csv"), "--qi", "a,b", "--weight", "w",
                                    "--model-risk", "IPF"])
    assert done.exit_code == 2 and "error: --model-risk must be 'default', 'CE' or 'none'; got 'IPF'" in done.output
    done = CliRunner().invoke(app, ["risk", str(tmp_path / "d.csv"), "--qi", "a,b", "--weight", "w",
                                    "--model-risk", "none"])
    assert done.exit_code == 0 and "model risk" not in done.output
