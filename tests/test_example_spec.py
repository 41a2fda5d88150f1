"""``publish --example-spec``: the starting spec says what each column is, and publishes as
proposed, on every benchmark file and on the curator's labelled household survey; on a file of
thousands of labelled columns it stays short.

The proposal is written by the CLI, saved beside the data, and published unchanged with
``--spec``; the written release is read back with pyreadstat (the reader a curator uses).
"""

from __future__ import annotations

import gzip
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

import _household as household  # noqa: E402
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.cli import app  # noqa: E402
from incrowd.exceptions import ParameterError  # noqa: E402
from incrowd.generalization._limits import check_nodes, count_text  # noqa: E402
from incrowd.publishing import column_notes, example_spec, example_toml, load_spec  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")
#: the larger files are subsampled to this many rows (the spec is made from the same rows)
ROWS = 3000


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def proposed_roles(text: str, base: Path) -> dict[str, str]:
    return {name: c.role for name, c in load_spec(text, base_dir=base).columns.items()}


def prose(text: str) -> str:
    """The text with its comments' wrapping undone: one line, no "#"."""
    return " ".join(" ".join(line.lstrip("#").split()) for line in text.splitlines())


def comment_of(text: str, column: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith(f"{column} ="))
    return line.split("#", 1)[1]


def publish_as_proposed(source: Path, out: Path):
    """The example spec for ``source``, saved beside it and published unchanged."""
    proposed = run("publish", source, "--example-spec")
    assert proposed.exit_code == 0, proposed.output
    spec = source.parent / "release.toml"
    spec.write_text(proposed.stdout, encoding="utf-8")
    return proposed.stdout, run("publish", source, "--spec", spec, "-o", out, "--json")


# --------------------------------------------------------------------------------------------
# the curator's household survey


@needs_data
def test_the_household_files_example_spec_says_what_each_column_is_and_publishes(tmp_path):
    source = household.write_household(DATA, tmp_path / "household.sav")
    text, done = publish_as_proposed(source, tmp_path / "release.sav")
    roles = proposed_roles(text, tmp_path)
    # the amounts are perturbed on their own (sdcMicro's numVars), not quasi-identifiers nor
    # identifiers, by one [[perturb]] step; age stays a numeric key
    assert roles["expend"] == roles["savings"] == roles["income"] == "perturb"
    assert roles["age"] == "numeric"
    assert [dict(s.given) for s in load_spec(text, base_dir=tmp_path).perturb] == [
        {"columns": ["expend", "income", "savings"], "method": "microaggregation", "k": 3}]
    # the household id: many values, each on the consecutive rows of one household
    assert roles[household.HOUSEHOLD_ID] == "household"
    # one weight: the person weight; the household weight is kept as "other", said so
    assert roles[household.WEIGHT] == "weight"
    assert roles["household_weights"] == "other"
    assert "household weight" in comment_of(text, "household_weights")
    # user-missing codes (9 "Not stated") alone are values of their own, not missing values
    assert 'user-missing 9 "Not stated"' in comment_of(text, "roof")
    assert "this file has missing values" not in text
    # published as proposed, and the release as written keeps k and the household id
    assert done.exit_code == 0, done.output
    written, meta = pyreadstat.read_sav(str(tmp_path / "release.sav"), user_missing=True)
    before, _ = pyreadstat.read_sav(str(source), user_missing=True)
    qis = [name for name, role in roles.items() if role in ("numeric", "categorical")]
    assert written.groupby(qis, dropna=False).size().min() >= 5
    assert household.HOUSEHOLD_ID in written.columns and "expend" in written.columns
    assert set(written[household.HOUSEHOLD_ID]) <= set(before[household.HOUSEHOLD_ID])
    assert meta.column_names_to_labels[household.HOUSEHOLD_ID] == "Household id"


def test_a_household_column_passes_through_unchanged_and_is_no_quasi_identifier():
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame({"hid": np.repeat(np.arange(1, 101), 3), "sex": rng.choice(["m", "f"], n),
                          "region": rng.choice(list("abc"), n)})
    spec = load_spec({"privacy": {"k": 3, "max_suppression": "20%"},
                      "columns": {"hid": "household", "sex": "categorical", "region": "categorical"}})
    assert spec.columns["hid"].role == "household" and "hid" not in spec.quasi_identifiers
    result = incrowd.publish(frame, spec)
    assert result.table["hid"].tolist() == frame.loc[result.table.index, "hid"].tolist()
    with pytest.raises(ParameterError, match="roles: .*household"):
        load_spec({"privacy": {"k": 3}, "columns": {"hid": "family", "sex": "categorical"}})


def test_a_measurement_distinct_on_every_row_is_no_identifier(tmp_path):
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({
        "amount": rng.permutation(np.arange(n) * 37 + 1000),      # whole, distinct, not a numbering
        "serialno": rng.permutation(np.arange(1, n + 1)),         # every number of its range once
        "caseno": np.arange(n) * 3 + 7,                           # increasing
        "assets": np.repeat(rng.permutation(np.arange(n - 10) * 13 + 5), [2] * 10 + [1] * (n - 20)),
        "sex": rng.choice(["m", "f"], n),
    })
    frame.to_csv(tmp_path / "d.csv", index=False)
    done = run("publish", tmp_path / "d.csv", "--example-spec")
    assert done.exit_code == 0, done.output
    roles = proposed_roles(done.stdout, tmp_path)
    # amounts (by their names): perturbed on their own, no identifier
    assert roles["amount"] == "perturb"
    # a few equal neighbours do not make a household id: a household has several persons
    assert roles["assets"] == "perturb"
    assert roles["serialno"] == "identifier" and roles["caseno"] == "identifier"


def test_amounts_are_proposed_perturb_by_name_label_or_right_tail_and_others_stay_keys(tmp_path):
    rng = np.random.default_rng(11)
    n = 500
    frame = pd.DataFrame({
        "sex": rng.choice(["m", "f"], n),
        "age": rng.integers(16, 90, n),                              # whole numbers, no tail: a key
        "hours": rng.normal(38, 8, n).round(1),                      # no amount, no tail: a key
        "turnover": np.round(rng.lognormal(8, 1.2, n), 2),           # no name, a heavy right tail
        "pay": np.round(rng.uniform(100, 900, n), 2),                 # labelled as an amount (below)
        "balance": np.round(rng.normal(0, 500, n), 2),               # negative values: no amount
        "income": np.round(rng.uniform(1000, 5000, n), 2),           # named as an amount
    })
    frame.attrs["statfile"] = {"columns": {"pay": {"label": "Monthly salary"}}}
    spec, notes = example_spec(frame), column_notes(frame)
    roles = {c: (e["role"] if isinstance(e, dict) else e) for c, e in spec["columns"].items()}
    assert roles == {"sex": "categorical", "age": "numeric", "hours": "numeric", "turnover": "perturb",
                     "pay": "perturb", "balance": "numeric", "income": "perturb"}
    assert "heavy right tail (skewness" in notes["turnover"]
    assert "labelled as an amount ('salar')" in notes["pay"] and "named as an amount ('income')" in notes["income"]
    assert spec["perturb"] == [{"columns": ["turnover", "pay", "income"], "method": "microaggregation", "k": 3}]
    # the starting spec, read back, publishes: the keys protected, the amounts microaggregated on their own
    text = example_toml(frame)
    assert "[[perturb]]" in text and "# aggregate = \"median\"" in text
    result = incrowd.publish(frame, text)
    for c in ("turnover", "pay", "income"):
        assert result.table[c].nunique() < frame[c].nunique()
    # a file of amounts only keeps them as its quasi-identifiers
    only = frame[["turnover", "income"]]
    assert example_spec(only)["columns"] == {"turnover": "numeric", "income": "numeric"}
    assert "perturb" not in example_spec(only)


def test_of_two_weights_the_one_that_varies_within_households_is_proposed():
    n_households, size = 60, 4
    hid = np.repeat(np.arange(1, n_households + 1), size)
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({
        "hid": hid, "sex": rng.choice(["m", "f"], hid.size),
        "wgt_a": np.repeat(rng.uniform(10, 50, n_households), size),  # constant within a household
        "wgt_b": rng.uniform(10, 50, hid.size),                      # the person weight
    })
    columns = example_spec(frame)["columns"]
    assert columns["hid"] == "household"
    assert columns["wgt_b"] == "weight" and columns["wgt_a"] == "other"


def test_user_missing_codes_alone_are_not_called_missing_values(tmp_path):
    n = 200
    frame = pd.DataFrame({"edu": np.tile([1.0, 2.0, 3.0, 9.0], n // 4), "x": np.linspace(0, 1, n)})
    labels = {"edu": {1.0: "low", 2.0: "mid", 3.0: "high", 9.0: "Not stated"}}
    pyreadstat.write_sav(frame, str(tmp_path / "coded.sav"), variable_value_labels=labels,
                         missing_ranges={"edu": [9.0]})
    done = run("publish", tmp_path / "coded.sav", "--example-spec")
    assert done.exit_code == 0, done.output
    assert 'user-missing 9 "Not stated"' in done.stdout
    assert "this file has missing values" not in done.stdout
    frame.loc[5, "x"] = np.nan  # a system missing is one
    pyreadstat.write_sav(frame, str(tmp_path / "gap.sav"), variable_value_labels=labels,
                         missing_ranges={"edu": [9.0]})
    done = run("publish", tmp_path / "gap.sav", "--example-spec")
    assert "this file has missing values" in done.stdout


# --------------------------------------------------------------------------------------------
# the proposed max_suppression publishes


def test_a_flat_column_that_holds_every_row_back_may_end_as_a_star(tmp_path):
    # "name" is distinct on almost every row and has no hierarchy: no limit up to 20 % publishes
    # while it keeps its values, so the proposal lets it end as "*" and publishes at 1 %
    rng = np.random.default_rng(11)
    n = 500
    frame = pd.DataFrame({"name": [f"n{i % 450}" for i in range(n)], "sex": rng.choice(["m", "f"], n),
                          "region": rng.choice(list("abcd"), n), "x": rng.normal(size=n)})
    frame.to_csv(tmp_path / "d.csv", index=False)
    text, done = publish_as_proposed(tmp_path / "d.csv", tmp_path / "r.csv")
    spec = load_spec(text, base_dir=tmp_path)
    assert spec.columns["name"].allow_full_suppression is True
    assert spec.columns["sex"].allow_full_suppression is None and spec.max_suppression == "1%"
    assert 'name may end as "*" in every row' in prose(text)
    assert done.exit_code == 0, done.output


def _benchmark_sources(tmp_path: Path, case: str) -> Path:
    """The case's file in tmp_path (subsampled to ROWS rows, the format kept), with what sits
    beside it (ARX's hierarchies, the curator's recodes)."""
    if case == "household":
        return household.write_household(DATA, tmp_path / "household.sav")
    if case == "household+recodes":
        household.write_hierarchies(tmp_path)
        return household.write_household(DATA, tmp_path / "household.sav")
    if case == "adult_arx/adult.csv":
        for file in (DATA / "adult_arx").glob("adult_hierarchy_*.csv"):
            shutil.copy(file, tmp_path / file.name)
    source = DATA / case
    frame = pd.read_csv(source, sep=";" if case.startswith("adult_arx") else ",", dtype=str,
                        keep_default_na=False)
    target = tmp_path / Path(case).name
    sample = frame.iloc[np.sort(np.random.default_rng(0).permutation(frame.shape[0])[:ROWS])]
    if case.endswith(".gz"):
        with gzip.open(target, "wt", encoding="utf-8", newline="") as out:
            sample.to_csv(out, index=False)
    else:
        sample.to_csv(target, index=False, sep=";" if case.startswith("adult_arx") else ",")
    return target


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("case", ["census.csv", "tarragona.csv", "eia.csv", "cloud1.csv", "cloud2.csv",
                                  "testdata.csv", "adult.csv.gz", "credit_default.csv.gz", "adult_arx/adult.csv",
                                  "household", "household+recodes"])
def test_the_example_spec_publishes_as_proposed(tmp_path, case):
    source = _benchmark_sources(tmp_path, case)
    out = tmp_path / ("release.sav" if source.suffix == ".sav" else "release.csv")
    text, done = publish_as_proposed(source, out)
    assert done.exit_code == 0, f"{case}: {done.output}\n{text}"
    assert out.exists()


# --------------------------------------------------------------------------------------------
# very wide files


def test_a_file_of_ten_thousand_labelled_columns_gets_a_short_spec_and_a_short_refusal(tmp_path):
    n, m = 12, 10_000
    rng = np.random.default_rng(0)
    codes = rng.integers(1, 4, (n, m)).astype(float)
    frame = pd.DataFrame(codes, columns=[f"q{i:05d}" for i in range(m)])
    frame.insert(0, "respid", np.arange(1.0, n + 1))
    labels = {c: {1.0: "yes", 2.0: "no", 3.0: "Not stated"} for c in frame.columns[1:]}
    source = tmp_path / "wide.sav"
    pyreadstat.write_sav(frame, str(source), variable_value_labels=labels,
                         missing_ranges={c: [3.0] for c in frame.columns[1:]})
    done = run("publish", source, "--example-spec")
    assert done.exit_code == 0, done.output
    assert max(len(line) for line in done.stdout.splitlines()) <= 200
    assert "make the rest 'other'" in prose(done.stdout)
    spec = tmp_path / "release.toml"
    spec.write_text(done.stdout, encoding="utf-8")
    refused = run("publish", source, "--spec", spec, "-o", tmp_path / "r.sav")
    assert refused.exit_code == 2
    assert refused.output.startswith("error: ") and len(refused.output.strip().splitlines()) == 1
    assert "10^3010 nodes" in refused.output and not re.search(r"\d{16}", refused.output)


def test_node_counts_past_a_trillion_are_written_as_a_power_of_ten():
    assert count_text(999_999_999_999) == "999,999,999,999"
    assert count_text(10**12) == "about 1.0 x 10^12"
    assert count_text(2**10_001) == "about 4.0 x 10^3010"
    assert count_text(3**20_000) == "about 2.7 x 10^9542"  # past the digits str() would write
    with pytest.raises(ParameterError) as refused:
        check_nodes([2] * 10_001, 1.0, 200_000)
    assert "about 4.0 x 10^3010 nodes (limit 200,000)" in str(refused.value) and len(str(refused.value)) < 300


def test_the_example_spec_shows_every_registered_model_as_a_setting_it_reads():
    # each model's commented line comes from the model's own file: uncommented, it is a
    # [privacy] setting the spec's reader takes (a toy model registered shows up too)
    import tomllib

    from incrowd.privacy import MODELS, models_from_spec

    frame = pd.DataFrame({"age": [20, 30, 40, 50] * 5, "income": ["a", "b", "c", "d", "e"] * 4})
    text = incrowd.publishing.example_toml(frame, "toy.csv")
    privacy = text.split("[privacy]")[1].split("[columns]")[0]
    shown = {line[2:].split("=")[0].strip(): line[2:].split("  #")[0] for line in privacy.splitlines()
             if line.startswith("# ") and "=" in line.split("#")[1]}
    assert set(MODELS) - {"k"} <= set(shown)
    for key in set(MODELS) - {"k"}:
        setting = tomllib.loads(shown[key])
        models = models_from_spec({"k": 5, **setting})
        assert [m.key for m in models if m.key != "k"] == [key]

# seconds in all: the full suite (make test) runs them, the quick tier leaves them out
pytestmark = pytest.mark.slow
