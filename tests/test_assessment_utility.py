"""Utility measures and figures of the assessment report, checked against their written
definitions (plain numpy/pandas recomputations on small data) and on constructed cases."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from incrowd.reporting._utility import categorical_utility, model_utility, numeric_utility
from incrowd.exceptions import DataError
from incrowd.generalization._hierarchy import hierarchy_from_rows

TOL = 1e-9


def _data(seed=0, n=40, p=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * [1.0, 10.0, 0.1][:p] + [5.0, -3.0, 100.0][:p]
    X[:, 1] += 0.5 * X[:, 0]
    Y = X + rng.normal(scale=0.3, size=X.shape) * [1.0, 10.0, 0.1][:p]
    return X, Y


# --- written definitions, recomputed plainly ---

def _il_plain(X, Y):
    mu, sd = X.mean(axis=0), X.std(axis=0)  # population sd, as incrowd standardizes
    zx, zy = (X - mu) / sd, (Y - mu) / sd
    return ((zx - zy) ** 2).sum() / (zx ** 2).sum()


def _il1s_plain(X, Y):
    # sdcMicro R/dUtility.R: sum(abs(x - xm) / (sd(x) * sqrt(2))), sd with n - 1
    total = 0.0
    for j in range(X.shape[1]):
        total += sum(abs(X[i, j] - Y[i, j]) / (np.std(X[:, j], ddof=1) * np.sqrt(2)) for i in range(X.shape[0]))
    return total


def _eigen_plain(X, Y):
    # sdcMicro R/dUtility.R: e = eigen(var(scale(x)))$values (decreasing); sum(abs(e1 - e2) / e1)
    def scaled_var(A):
        Z = (A - A.mean(axis=0)) / A.std(axis=0, ddof=1)
        return Z.T @ Z / (A.shape[0] - 1)

    e1 = sorted(np.linalg.eigvals(scaled_var(X)).real, reverse=True)
    e2 = sorted(np.linalg.eigvals(scaled_var(Y)).real, reverse=True)
    return sum(abs(a - b) / a for a, b in zip(e1, e2))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_numeric_measures_match_written_definitions(seed):
    X, Y = _data(seed)
    out = numeric_utility(X, Y, ["a", "b", "c"])
    assert out["il"] == pytest.approx(_il_plain(X, Y), abs=TOL)
    assert out["il1s"] == pytest.approx(_il1s_plain(X, Y), abs=TOL)
    assert out["il1s_mean"] == pytest.approx(_il1s_plain(X, Y) / X.size, abs=TOL)
    assert out["eigen"] == pytest.approx(_eigen_plain(X, Y), abs=TOL)
    il1 = 100 * sum(abs(X[i, j] - Y[i, j]) / abs(X[i, j]) for i in range(X.shape[0]) for j in range(3))
    assert out["il1"] == pytest.approx(il1, rel=1e-12)


def test_il_agrees_with_microaggregation_information_loss():
    from incrowd import microaggregate

    X, _ = _data(3, n=30)
    res = microaggregate(X, 3)
    assert numeric_utility(X, np.asarray(res.table), list("abc"))["il"] == pytest.approx(res.information_loss, abs=TOL)


def test_per_qi_and_matrix_differences():
    X, Y = _data(4)
    out = numeric_utility(X, Y, ["a", "b", "c"])
    b = out["per_qi"]["b"]
    assert b["mean_diff"] == pytest.approx(Y[:, 1].mean() - X[:, 1].mean(), abs=TOL)
    assert b["mean_rel_diff"] == pytest.approx((Y[:, 1].mean() - X[:, 1].mean()) / abs(X[:, 1].mean()), abs=TOL)
    assert b["var_diff"] == pytest.approx(Y[:, 1].var(ddof=1) - X[:, 1].var(ddof=1), abs=TOL)
    assert b["var_rel_diff"] == pytest.approx(Y[:, 1].var(ddof=1) / X[:, 1].var(ddof=1) - 1, abs=TOL)
    iu = np.triu_indices(3, 1)
    dc = np.abs(np.cov(Y, rowvar=False) - np.cov(X, rowvar=False))[iu]
    dr = np.abs(np.corrcoef(Y, rowvar=False) - np.corrcoef(X, rowvar=False))[iu]
    assert out["covariance"]["max_abs_diff"] == pytest.approx(dc.max(), abs=TOL)
    assert out["covariance"]["mean_abs_diff"] == pytest.approx(dc.mean(), abs=TOL)
    assert out["correlation"]["max_abs_diff"] == pytest.approx(dr.max(), abs=TOL)
    assert out["correlation"]["mean_abs_diff"] == pytest.approx(dr.mean(), abs=TOL)


def test_release_equal_to_original_loses_nothing():
    X, _ = _data(5)
    out = numeric_utility(X, X.copy(), ["a", "b", "c"])
    assert out["il"] == 0.0 and out["il1s"] == 0.0 and out["il1"] == 0.0
    assert out["eigen"] == pytest.approx(0.0, abs=TOL)
    assert out["covariance"]["max_abs_diff"] == 0.0 and out["correlation"]["max_abs_diff"] == 0.0
    assert all(v["mean_diff"] == 0.0 and v["var_diff"] == 0.0 for v in out["per_qi"].values())


def test_release_all_at_the_mean_loses_everything_and_eigen_is_undefined():
    X, _ = _data(6)
    Y = np.repeat(X.mean(axis=0, keepdims=True), X.shape[0], axis=0)
    out = numeric_utility(X, Y, ["a", "b", "c"])
    assert out["il"] == pytest.approx(1.0, abs=TOL)
    assert out["eigen"] is None  # R's dUtility gives NA: a constant column has no correlation
    assert out["correlation"]["max_abs_diff"] is None


def test_eigen_on_a_singular_original_is_withheld_and_summed_over_the_rest():
    X, Y = _data(11, n=60)
    X = np.column_stack([X, X[:, 0] + X[:, 1]])  # a column that is the sum of two others
    Y = np.column_stack([Y, Y[:, 0] + Y[:, 1]])
    out = numeric_utility(X, Y, ["a", "b", "c", "s"])
    assert out["eigen"] is None and out["eigen_dropped"] == 1

    def scaled_var(A):
        Z = (A - A.mean(axis=0)) / A.std(axis=0, ddof=1)
        return Z.T @ Z / (A.shape[0] - 1)

    e1 = np.sort(np.linalg.eigvals(scaled_var(X)).real)[::-1][:3]  # the zero eigenvalue left out
    e2 = np.sort(np.linalg.eigvals(scaled_var(Y)).real)[::-1][:3]
    assert out["eigen_nonsingular"] == pytest.approx(np.sum(np.abs(e1 - e2) / e1), abs=TOL)
    full = numeric_utility(X[:, :3], Y[:, :3], ["a", "b", "c"])
    assert full["eigen_dropped"] == 0 and full["eigen_nonsingular"] == full["eigen"]


def test_missing_cells_are_left_out_as_sdcmicro_does():
    X, Y = _data(12, n=50)
    X, Y = X.copy(), Y.copy()
    X[3, 0] = np.nan
    Y[7, 2] = np.nan
    out = numeric_utility(X, Y, ["a", "b", "c"])
    # IL1s: sd(x, na.rm = TRUE) and sum(..., na.rm = TRUE)
    expected = 0.0
    for j in range(3):
        sd = pd.Series(X[:, j]).std(ddof=1)  # pandas skips NaN, as R's na.rm
        expected += np.nansum(np.abs(X[:, j] - Y[:, j]) / (sd * np.sqrt(2)))
    assert out["il1s"] == pytest.approx(expected, abs=TOL)

    # eigen: var(scale(x), use = "pairwise.complete.obs")
    def r_var_scale(A):
        frame = pd.DataFrame(A)
        return ((frame - frame.mean()) / frame.std(ddof=1)).cov().to_numpy()

    e1 = np.sort(np.linalg.eigvalsh(r_var_scale(X)))[::-1]
    e2 = np.sort(np.linalg.eigvalsh(r_var_scale(Y)))[::-1]
    assert out["eigen"] == pytest.approx(np.sum(np.abs(e1 - e2) / e1), abs=TOL)
    # IL: cells missing on either side leave SSE, missing originals leave SST
    mu, sd = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
    zx, zy = (X - mu) / sd, (Y - mu) / sd
    assert out["il"] == pytest.approx(np.nansum((zx - zy) ** 2) / np.nansum(zx ** 2), abs=TOL)
    assert out["per_qi"]["a"]["mean_original"] == pytest.approx(np.nanmean(X[:, 0]), abs=TOL)


def test_numeric_utility_is_json_ready():
    import json

    X, Y = _data(7)
    text = json.dumps(numeric_utility(X, Y, ["a", "b", "c"]), allow_nan=False)
    assert '"il1s"' in text


def test_numeric_utility_rejects_misaligned_or_non_numeric():
    X, Y = _data(8)
    with pytest.raises(DataError, match="shape"):
        numeric_utility(X, Y[:-1], ["a", "b", "c"])
    frame = pd.DataFrame(X, columns=list("abc")).assign(b=["x"] * X.shape[0])
    with pytest.raises(DataError, match="'b'"):
        numeric_utility(frame, Y, ["a", "b", "c"])


# --- categorical ---

def _hierarchy():
    rows = [["a1", "A", "*"], ["a2", "A", "*"], ["a3", "A", "*"], ["b1", "B", "*"]]
    return hierarchy_from_rows("c", rows, "(test)")


def test_categorical_nothing_generalized_costs_nothing():
    orig = pd.DataFrame({"c": ["a1", "a2", "b1", "a3"], "d": ["x", "y", "x", "y"]})
    out = categorical_utility(orig, orig.copy(), {"c": _hierarchy()}, np.zeros(4, bool))
    assert out["mean_ncp"] == 0.0 and out["ncp"] == {"c": 0.0, "d": 0.0}
    assert out["height"]["c"] == 0.0 and out["suppressed_share"] == 0.0
    assert out["changed_share"] == {"c": 0.0, "d": 0.0}


def test_categorical_all_suppressed_costs_one():
    orig = pd.DataFrame({"c": ["a1", "a2", "b1", "a3"], "d": ["x", "y", "x", "y"]})
    star = pd.DataFrame({"c": ["*"] * 4, "d": ["*"] * 4})
    for hierarchies in (None, {"c": _hierarchy()}):
        out = categorical_utility(orig, star, hierarchies, np.zeros(4, bool))
        assert out["mean_ncp"] == 1.0 and out["changed_share"] == {"c": 1.0, "d": 1.0}
    out = categorical_utility(orig, orig.copy(), None, np.ones(4, bool))
    # nothing published: no value to cost; counting withheld rows, everything is lost
    assert out["mean_ncp"] is None and out["mean_ncp_all_rows"] == 1.0 and out["suppressed_share"] == 1.0


def test_categorical_ncp_and_height_by_definition():
    orig = pd.DataFrame({"c": ["a1", "a2", "b1", "a3", "b1"]})
    rel = pd.DataFrame({"c": ["A", "a2", "B", "*", "b1"]})
    suppressed = np.array([False, False, False, False, True])
    out = categorical_utility(orig, rel, {"c": _hierarchy()}, suppressed)
    # Xu et al.: "A" covers 3 of 4 leaves; "B" covers 1 leaf (card 1: costs 0); "*" covers 4;
    # over the published rows, and with the withheld row costing 1 over all rows
    assert out["ncp"]["c"] == pytest.approx((3 / 4 + 0 + 0 + 1) / 4, abs=TOL)
    assert out["mean_ncp_all_rows"] == pytest.approx((3 / 4 + 0 + 0 + 1 + 1) / 5, abs=TOL)
    # heights over published rows: levels 1, 0, 1, 2 of top 2
    assert out["height"]["c"] == pytest.approx((0.5 + 0 + 0.5 + 1) / 4, abs=TOL)
    assert out["suppressed_rows"] == 1 and out["changed_share"]["c"] == pytest.approx(3 / 4)


def test_categorical_rejects_a_label_outside_the_hierarchy():
    orig = pd.DataFrame({"c": ["a1", "b1"]})
    rel = pd.DataFrame({"c": ["B", "B"]})  # a1 does not generalize to B
    with pytest.raises(DataError, match="'c', data row 1"):
        categorical_utility(orig, rel, {"c": _hierarchy()}, np.zeros(2, bool))


# --- model utility ---

def _model_frame(seed=0, n=120):
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=n)
    x2 = rng.normal(size=n)
    g = rng.choice(["u", "v", "w"], size=n)
    y = 2.0 + 1.5 * x1 - 0.5 * x2 + (g == "u") + rng.normal(scale=0.1, size=n)
    cls = np.where(x1 + 0.3 * rng.normal(size=n) > 0, "hi", "lo")
    return pd.DataFrame({"x1": x1, "x2": x2, "g": g, "y": y, "cls": cls})


def test_model_utility_identical_release_gives_identical_models():
    d = _model_frame()
    reg = model_utility(d, d.copy(), "y", ["x1", "x2", "g"])
    assert reg["task"] == "regression"
    assert reg["r2"]["original"] == reg["r2"]["release"] > 0.9
    assert all(v["original"] == v["release"] for v in reg["coefficients"].values())
    # treatment coding: "u" (first in order) is the reference; y carries +1 for "u"
    assert "g=u" not in reg["coefficients"]
    assert reg["coefficients"]["g=v"]["original"] == pytest.approx(-1.0, abs=0.1)
    assert reg["coefficients"]["x1"]["original"] == pytest.approx(1.5, abs=0.1)
    cls = model_utility(d, d.copy(), "cls", ["x1", "g"])
    assert cls["task"] == "classification"
    assert cls["accuracy"]["original"] == cls["accuracy"]["release"] > 0.7


def test_model_utility_regression_matches_least_squares_on_the_split():
    d = _model_frame(1)
    out = model_utility(d, d.copy(), "y", ["x1", "x2"], random_state=3, test_size=0.25)
    order = np.random.default_rng(3).permutation(len(d))
    n_test = int(np.ceil(0.25 * len(d)))
    train, test = d.iloc[order[n_test:]], d.iloc[order[:n_test]]
    A = np.column_stack([np.ones(len(train)), train["x1"], train["x2"]])
    beta = np.linalg.lstsq(A, train["y"].to_numpy(), rcond=None)[0]
    assert out["coefficients"]["x1"]["original"] == pytest.approx(beta[1], abs=TOL)
    pred = np.column_stack([np.ones(len(test)), test["x1"], test["x2"]]) @ beta
    yt = test["y"].to_numpy()
    r2 = 1 - ((yt - pred) ** 2).sum() / ((yt - yt.mean()) ** 2).sum()
    assert out["r2"]["original"] == pytest.approx(r2, abs=TOL)


def test_model_utility_noisy_release_is_scored_on_the_original():
    d = _model_frame(2)
    rel = d.copy()
    rel["x1"] = rel["x1"].sample(frac=1.0, random_state=0).to_numpy()  # link to y destroyed
    out = model_utility(d, rel, "y", ["x1", "x2"])
    assert out["r2"]["release"] < out["r2"]["original"] - 0.5
    assert abs(out["coefficients"]["x1"]["release"]) < abs(out["coefficients"]["x1"]["original"]) / 2


def test_model_utility_caps_rows_with_a_seeded_sample():
    d = _model_frame(3, n=300)
    out = model_utility(d, d.copy(), "y", ["x1"], max_train_rows=50, max_test_rows=20)
    assert out["n_train"] == 50 and out["n_test"] == 20
    assert out == model_utility(d, d.copy(), "y", ["x1"], max_train_rows=50, max_test_rows=20)


def test_model_utility_unknown_column_is_an_error():
    d = _model_frame()
    with pytest.raises(DataError, match="'nope'"):
        model_utility(d, d.copy(), "y", ["nope"])


# --- figures ---

def _check_svg(svg: str):
    assert isinstance(svg, str)
    assert svg.startswith("<svg") or svg.startswith("<?xml")
    assert "<svg" in svg and svg.rstrip().endswith("</svg>")
    # no link anywhere but the SVG namespace declaration (an offline report must not fetch)
    assert re.findall(r"https?://[^\s\"'<>]*", svg) == ["http://www.w3.org/2000/svg"]
    assert "<script" not in svg


def test_figures_are_inline_svg_without_links():
    from incrowd.reporting import _figures as f

    X, Y = _data(9, n=200)
    names = ["a", "b", "c"]
    svgs = [
        f.histograms_before_after(X, Y, names),
        f.correlation_before_after(X, Y, names),
        f.class_size_histogram([3, 3, 4, 5, 3, 7], k=3),
        f.class_size_histogram(np.arange(3, 200), k=5, count="classes"),
        f.risk_utility_summary({"risk": {"prosecutor": 1 / 3, "linkage": 0.2},
                                "utility": {"il": 0.05, "eigen": None}}),
        f.risk_utility_summary({"il": 0.1}),
    ]
    for svg in svgs:
        _check_svg(svg)
    # one HTML page holds them all: no id may repeat across figures, every reference resolves
    seen: set[str] = set()
    for svg in svgs:
        ids = re.findall(r'\bid="([^"]+)"', svg)
        assert len(ids) == len(set(ids)) and not seen & set(ids)
        seen |= set(ids)
        refs = re.findall(r'url\(#([^)]+)\)', svg) + re.findall(r'href="#([^"]+)"', svg)
        assert set(refs) <= set(ids)
    assert svgs[0].count(">a</text>") == 1 and ">c</text>" in svgs[0]  # one panel per QI
    assert ">0.33</text>" not in svgs[4] and ">0.3333</text>" in svgs[4]  # values drawn as given


def test_figures_survive_constant_and_missing_columns():
    from incrowd.reporting import _figures as f

    X, _ = _data(10, n=50)
    Y = np.repeat(X.mean(axis=0, keepdims=True), 50, axis=0)  # all rows in one class
    X = X.copy()
    X[::7, 0] = np.nan
    _check_svg(f.histograms_before_after(X, Y, ["a", "b", "c"]))
    _check_svg(f.correlation_before_after(X, Y, ["a", "b", "c"]))
    _check_svg(f.class_size_histogram([]))


def test_figures_do_not_use_pyplot():
    # pyplot keeps a global figure registry and may pick a GUI backend: the web server draws
    # reports in threads, so the figures never touch it (they are SVG written directly)
    import subprocess
    import sys

    code = ("import sys, numpy as np; from incrowd.reporting import _figures as f; "
            "f.correlation_before_after(np.eye(3), np.eye(3), ['a', 'b', 'c']); "
            "f.class_size_histogram([3, 4]); print('matplotlib.pyplot' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
