"""Numbers at the edge of float64: finite in, finite out, and strict JSON everywhere."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from incrowd import microaggregate, read_table
from incrowd.values import group_means, standardize
from incrowd.cli import app
from incrowd.cli._console import print_json
from incrowd.incremental import IncrementalMicroaggregation

HUGE = 1.7e308


def _refuse_constant(token):
    raise ValueError(f"not JSON: {token}")


def strict_loads(text: str):
    """json.loads that refuses NaN, Infinity and -Infinity (Python accepts them by default)."""
    return json.loads(text, parse_constant=_refuse_constant)


def edge_frame(n: int = 60, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    big = rng.uniform(-1.0, 1.0, n) * HUGE
    big[:2] = [HUGE, -HUGE]  # the sum of these two alone overflows in the plain formulas
    return pd.DataFrame({
        "big": big,
        "near": rng.normal(1e300, 1e299, n),  # the square of any value overflows
        "tiny": rng.normal(0.0, 1e-200, n),  # the square of any value underflows to 0
        "plain": rng.normal(50.0, 10.0, n),
        "note": [f"n{i}" for i in range(n)],
    })


QIS = ["big", "near", "tiny", "plain"]


def test_ordinary_data_standardizes_exactly_as_the_plain_formulas():
    rng = np.random.default_rng(0)
    X = rng.normal(40.0, 12.0, (500, 5)) * np.array([1.0, 1e-3, 1e6, 3.0, 1e-9])
    Z, st = standardize(X)
    mean, std = X.mean(axis=0), X.std(axis=0)
    assert np.array_equal(st.mean, mean) and np.array_equal(st.scale, std)
    assert np.array_equal(Z, (X - mean) / std)
    assert np.array_equal(st.inverse_transform(Z), Z * std + mean)
    labels = np.arange(500) % 37
    sums = np.zeros((37, 5))
    for i in range(500):  # sequential sums in row order, as the kernel adds
        sums[labels[i]] += X[i]
    assert np.array_equal(group_means(X, labels), sums / np.bincount(labels)[:, None])


@pytest.mark.parametrize("exponent", [300, 600, -600, 1000])
def test_scaling_a_column_by_a_power_of_two_changes_nothing(exponent):
    rng = np.random.default_rng(1)
    X = rng.normal(0.0, 1.0, (90, 3))
    Y = X.copy()
    Y[:, 1] *= 2.0 ** (exponent - 2) if exponent == 1000 else 2.0 ** exponent
    assert np.isfinite(Y).all()
    assert np.array_equal(standardize(X)[0], standardize(Y)[0])
    for method in ("mdav", "mdav-star", "ona", "mondrian"):
        a = microaggregate(X, 4, method, random_state=0)
        b = microaggregate(Y, 4, method, random_state=0)
        assert np.array_equal(a.labels, b.labels), method
        assert a.information_loss == b.information_loss


def test_a_column_near_1e300_is_not_standardized_to_zero():
    X = edge_frame()[QIS].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning, no "constant column" warning
        Z, st = standardize(X)
    assert np.isfinite(Z).all() and np.isfinite(st.mean).all() and np.isfinite(st.scale).all()
    assert st.constant_columns == ()
    assert np.allclose(Z.mean(axis=0), 0.0, atol=1e-12) and np.allclose(Z.std(axis=0), 1.0)
    assert np.all(np.isfinite(st.inverse_transform(Z)))


def test_group_means_never_overflow():
    X = np.array([[HUGE], [HUGE], [HUGE], [-HUGE], [np.finfo(float).max], [np.finfo(float).max]])
    means = group_means(X, np.array([0, 0, 0, 1, 2, 2]))
    assert np.isfinite(means).all()
    assert means[0, 0] == pytest.approx(HUGE) and means[1, 0] == -HUGE
    assert means[2, 0] == pytest.approx(np.finfo(float).max)


@pytest.mark.parametrize("method", ["mdav", "v-mdav", "ona", "mona", "mondrian"])
def test_values_at_the_float64_limit_give_finite_centroids_and_il(method):
    frame = edge_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow warnings
        result = microaggregate(frame, 5, method, quasi_identifiers=QIS, random_state=0)
    assert np.isfinite(result.centroids).all()
    assert np.isfinite(result.table[QIS].to_numpy()).all()
    assert 0.0 <= result.information_loss <= 1.0
    assert result.verification.ok
    strict_loads(json.dumps(result.summary(), allow_nan=False))


def test_print_json_turns_non_finite_numbers_into_null(capsys):
    print_json({"a": float("nan"), "b": [np.float64(np.inf), -np.inf, 1.5], "c": np.array([np.nan, 2.0])})
    doc = strict_loads(capsys.readouterr().out)
    assert doc == {"a": None, "b": [None, None, 1.5], "c": [None, 2.0]}


def test_cli_json_at_the_edge_is_strict_and_the_release_finite(tmp_path):
    source = tmp_path / "edge.csv"
    edge_frame().to_csv(source, index=False)
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(app, ["microaggregate", str(source), "-o", str(out), "--k", "5",
                                      "--qi", ",".join(QIS), "--json"])
    assert result.exit_code == 0, result.output
    doc = strict_loads(result.stdout)
    assert doc["k_anonymous"] is True and 0.0 <= doc["information_loss"] <= 1.0
    release = read_table(out)
    assert np.isfinite(release[QIS].to_numpy(dtype=float)).all()


def test_incremental_release_at_the_edge_is_finite_and_its_json_strict(tmp_path):
    frame = edge_frame(80)
    state = tmp_path / "s.duckdb"
    IncrementalMicroaggregation.from_base(frame.iloc[:60], state, 4, quasi_identifiers=QIS)
    (tmp_path / "late.csv").write_text(frame.iloc[60:].to_csv(index=False))
    runner = CliRunner()
    added = runner.invoke(app, ["incremental", "add", str(state), str(tmp_path / "late.csv"), "--json"])
    assert added.exit_code == 0, added.output
    assert strict_loads(added.stdout)["rows"] == 20
    release, check = IncrementalMicroaggregation.open(state).release()
    assert check.ok and np.isfinite(release[QIS].to_numpy(dtype=float)).all()
    out = tmp_path / "release.csv"
    published = runner.invoke(app, ["incremental", "publish", str(state), "-o", str(out), "--compare", "--json"])
    assert published.exit_code == 0, published.output
    doc = strict_loads(published.stdout)
    assert doc["k_anonymous"] is True
    assert np.isfinite(read_table(out)[QIS].to_numpy(dtype=float)).all()


def test_the_distributed_path_refuses_an_overflowing_column_by_name():
    distributed = pytest.importorskip("distributed")
    from incrowd import DataError
    from incrowd.distributed import mona

    X = edge_frame()[QIS].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with distributed.Client(processes=False, n_workers=1, threads_per_worker=1,
                                dashboard_address=None) as client:
            with pytest.raises(DataError, match="quasi-identifier column 0 .* overflows"):
                mona([X[:30], X[30:]], 5, client=client)
