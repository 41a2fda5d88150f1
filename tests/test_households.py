"""Households in the release: a household-level variable (urbrur, water) is blanked for the
whole household at once, so no blank can be filled in from a housemate's row; the written file
is checked for it (nothing is written otherwise); ``max_household_risk`` is a target; the
household id is kept, renumbered or dropped.

The leak this guards against, on the curator's labelled household file: with the household id
published and urbrur and water blanked person by person, an intruder fills most blanks in from
the housemates and puts persons back below k = 3."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyreadstat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

import _household as household  # noqa: E402
from benchdata import data_dir  # noqa: E402

import incrowd  # noqa: E402
from incrowd.exceptions import DataError, ParameterError, VerificationError  # noqa: E402
from incrowd.publishing import load_spec  # noqa: E402
from incrowd.values import match_counts  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(not (DATA / "testdata.csv").exists(), reason="benchmark data folder not found")
K = 3
LEVELS = {"urbrur": 0, "water": 0, "sex": 0, "age": 1, "relat": 1, "hhcivil": 0}
HOUSEHOLD_LEVEL = ["urbrur", "water"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    if not (DATA / "testdata.csv").exists():
        pytest.skip("benchmark data folder not found")
    out = tmp_path_factory.mktemp("households")
    household.write_household(DATA, out / "household.sav")
    household.write_hierarchies(out / "h")
    return out


def curator_spec(missing_matches: str = "itself", household_role: str = "household", **privacy) -> dict:
    columns: dict = {c: "categorical" for c in household.KEYS}
    columns["age"] = {"role": "categorical", "hierarchy": "h/age.csv", "match": "code"}
    columns["relat"] = {"role": "categorical", "hierarchy": "h/relat.csv", "match": "label"}
    columns[household.WEIGHT] = "weight"
    columns[household.HOUSEHOLD_ID] = household_role
    return {"privacy": {"k": K, "max_suppression": "100%", "suppression": "cells", "missing_matches": missing_matches,
                        "max_individual_risk": 0.1, "max_global_risk": 0.0099, **privacy},
            "columns": columns, "levels": dict(LEVELS)}


def filled_from_housemates(table: pd.DataFrame, ids: np.ndarray, columns) -> tuple[pd.DataFrame, int]:
    """What an intruder does: each blank of a household-level column filled in with the value a
    housemate shows; and how many blanks that fills."""
    out = table.copy()
    filled = 0
    for c in columns:
        blank = table[c].isna().to_numpy()
        shown = table[c].groupby(ids).transform("first").to_numpy()   # first() skips blanks
        gives = blank & ~pd.isna(shown)
        filled += int(gives.sum())
        out[c] = np.where(gives, shown, table[c].to_numpy(dtype=object))
    return out, filled


def keys_as_shown(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({c: table[c].astype(object).where(table[c].notna(), None) for c in household.KEYS})


# --------------------------------------------------------------------------------------------
# the leak, reproduced on the curator's file and closed


@needs_data
@pytest.mark.parametrize("missing_matches", ["itself", "any"])
def test_no_blank_of_urbrur_or_water_is_recoverable_from_a_housemate(folder, missing_matches):
    result = incrowd.publish(folder / "household.sav", curator_spec(missing_matches), base_dir=folder)
    out = result.write(folder / f"release_{missing_matches}.sav")
    written, _ = pyreadstat.read_sav(str(out), user_missing=True, apply_value_formats=False)
    blanks = {c: int(written[c].isna().sum()) for c in HOUSEHOLD_LEVEL}
    assert sum(blanks.values()) > 0  # the release blanks household-level cells: the case that leaked
    ids = written[household.HOUSEHOLD_ID].to_numpy()
    filled, recovered = filled_from_housemates(written, ids, HOUSEHOLD_LEVEL)
    assert recovered == 0
    before = match_counts(keys_as_shown(written), household.KEYS, missing_matches=missing_matches)
    after = match_counts(keys_as_shown(filled), household.KEYS, missing_matches=missing_matches)
    assert before.min() >= K
    np.testing.assert_array_equal(after, before)  # filling in from housemates changes no class
    record = result.verification["households"]
    assert record == {"ok": True, "household": household.HOUSEHOLD_ID, "household_level": HOUSEHOLD_LEVEL,
                      "recoverable_blanks": 0}
    assert result.summary()["household_level"] == HOUSEHOLD_LEVEL


@needs_data
def test_the_written_check_refuses_blanks_a_housemate_gives_away(folder):
    """The release as it was made before households were a role (urbrur and water blanked
    person by person) is refused by the household check, naming the column and the row."""
    before = incrowd.publish(folder / "household.sav", curator_spec(household_role="other"), base_dir=folder)
    table = before.table
    ids = table[household.HOUSEHOLD_ID].to_numpy()
    filled, recovered = filled_from_housemates(table, ids, HOUSEHOLD_LEVEL)
    after = match_counts(keys_as_shown(filled), household.KEYS, missing_matches="itself")
    # the leak as it stood: most blanks filled in, persons back below k (10 of 10 urbrur and 136
    # of 149 water blanks; 115 persons below k = 3, 51 of them unique)
    assert recovered > table[HOUSEHOLD_LEVEL].isna().to_numpy().sum() / 2 and (after < K).sum() > 0
    now = incrowd.publish(folder / "household.sav", curator_spec(), base_dir=folder)
    target = folder / "leaky.sav"
    with pytest.raises(VerificationError, match=r"household-level column '(urbrur|water)', data row \d+, is shown by "
                                                r"a housemate \(\d+ such blanks in all; filled in, \d+ rows fall below "
                                                r"k=3\); nothing was written"):
        # the leaky table under the promise of a release with households
        type(now)(table=table, suppressed=0, kept_rows=np.arange(table.shape[0]), spec=now.spec,
                  promise=now.promise).write(target)
    assert not target.exists()


@needs_data
def test_max_household_risk_is_met_and_verified_on_the_written_file(folder):
    free = incrowd.publish(folder / "household.sav", curator_spec(), base_dir=folder)
    highest = incrowd.risk(free.table, household.KEYS, weight=household.WEIGHT,
                           household=household.HOUSEHOLD_ID).records["household_risk"].max()
    target = float(highest) / 2  # half what the release reaches without the target
    result = incrowd.publish(folder / "household.sav", curator_spec(max_household_risk=target), base_dir=folder)
    result.write(folder / "household_risk.sav")
    got = result.summary()["risk_targets"]["max_household_risk"]
    assert got["achieved"] <= target and got["measure"] == "highest_household_risk"
    written, _ = pyreadstat.read_sav(str(folder / "household_risk.sav"), user_missing=True,
                                     apply_value_formats=False)
    measured = incrowd.risk(written, household.KEYS, weight=household.WEIGHT, household=household.HOUSEHOLD_ID)
    assert measured.records["household_risk"].max() == pytest.approx(got["achieved"])
    assert sum(result.summary()["suppressed_cells"].values()) > sum(free.summary()["suppressed_cells"].values())


@needs_data
def test_max_household_risk_with_rows_suppression_is_met_on_the_written_file(folder):
    def rows_spec(**privacy) -> dict:
        spec = curator_spec(suppression="rows", **privacy)
        del spec["privacy"]["missing_matches"]  # a cells suppression key
        return spec

    free = incrowd.publish(folder / "household.sav", rows_spec(), base_dir=folder)
    highest = incrowd.risk(free.table, household.KEYS, weight=household.WEIGHT,
                           household=household.HOUSEHOLD_ID).records["household_risk"].max()
    target = float(highest) / 2  # half what the release reaches without the target
    result = incrowd.publish(folder / "household.sav", rows_spec(max_household_risk=target), base_dir=folder)
    out = result.write(folder / "household_rows.sav")
    got = result.summary()["risk_targets"]["max_household_risk"]
    written, _ = pyreadstat.read_sav(str(out), user_missing=True, apply_value_formats=False)
    measured = incrowd.risk(written, household.KEYS, weight=household.WEIGHT, household=household.HOUSEHOLD_ID)
    assert measured.records["household_risk"].max() <= target
    assert measured.records["household_risk"].max() == pytest.approx(got["achieved"])
    # rows went for it, whole classes of the keys as published: k still holds in the written file
    assert len(written) < len(free.table)
    shown = keys_as_shown(written)
    assert shown.value_counts(dropna=False).min() >= K
    assert measured.records["individual_risk"].max() <= 0.1


@needs_data
@pytest.mark.parametrize("numeric", [["age"], ["age", "income"]])
def test_max_household_risk_with_microaggregated_numeric_keys_is_met_on_the_written_file(folder, numeric):
    """A numeric key is published as its microaggregation groups' means, finer than its class:
    the household risk is that of the released keys, and whole groups go until it holds."""
    spec = curator_spec(suppression="rows")
    del spec["privacy"]["missing_matches"]  # a cells suppression key
    for name in numeric:
        spec["columns"][name] = "numeric"
    del spec["levels"]["age"]
    free = incrowd.publish(folder / "household.sav", spec, base_dir=folder)
    keys = [*household.KEYS, *[c for c in numeric if c not in household.KEYS]]
    highest = incrowd.risk(free.table, keys, weight=household.WEIGHT,
                           household=household.HOUSEHOLD_ID).records["household_risk"].max()
    target = round(float(highest) / 2, 4)  # half what the release reaches without the target
    spec["privacy"]["max_household_risk"] = target
    result = incrowd.publish(folder / "household.sav", spec, base_dir=folder)
    out = result.write(folder / f"household_numeric_{len(numeric)}.sav")
    written, meta = pyreadstat.read_sav(str(out), user_missing=True, apply_value_formats=False)
    measured = incrowd.risk(written, keys, weight=household.WEIGHT, household=household.HOUSEHOLD_ID)
    assert measured.records["household_risk"].max() <= target
    got = result.summary()["risk_targets"]["max_household_risk"]
    assert measured.records["household_risk"].max() == pytest.approx(got["achieved"])
    assert measured.records["individual_risk"].max() <= 0.1
    # whole groups went: every published key, the numeric keys' means included, is shared by k rows
    shown = written[keys].astype(object).where(written[keys].notna(), None)
    assert shown.value_counts(dropna=False).min() >= K
    assert len(written) < len(free.table)
    assert meta.variable_value_labels["water"][household.NOT_STATED] == household.NOT_STATED_LABEL


@needs_data
@pytest.mark.parametrize("target, measure", [("max_global_risk", "global_risk"),
                                             ("max_expected_reidentifications", "expected_reidentifications")])
def test_a_global_target_the_numeric_keys_groups_miss_is_one_line_before_anything_is_written(folder, target,
                                                                                             measure):
    """The search weighs a numeric key's class; the release shows its groups' means, finer keys
    of a higher global risk. No row goes for a global target alone: the spec is refused in one
    line naming the figure the released keys reach and the levers, nothing written."""
    spec = curator_spec(suppression="rows")
    del spec["privacy"]["missing_matches"]
    del spec["privacy"]["max_global_risk"]
    spec["columns"]["age"] = "numeric"
    del spec["levels"]["age"]
    free = incrowd.publish(folder / "household.sav", spec, base_dir=folder)
    reached = incrowd.risk(free.table, household.KEYS, weight=household.WEIGHT, suda=False).summary()[measure]
    spec["privacy"][target] = float(f"{reached * 0.9:.3g}")
    with pytest.raises(ParameterError) as refused:
        incrowd.publish(folder / "household.sav", spec, base_dir=folder)
    message = str(refused.value)
    assert "\n" not in message and "np." not in message
    assert message.startswith("the numeric quasi-identifiers (age) are published as their microaggregation "
                              "groups' means")
    assert f"reaches {target}={reached:.6g}, above {spec['privacy'][target]:g}; raise k" in message
    assert message.endswith("give it a hierarchy and the role categorical; nothing is published")


@needs_data
def test_a_household_target_the_numeric_keys_groups_cannot_meet_within_the_limit_is_one_line(folder, tmp_path):
    spec = curator_spec(suppression="rows", max_household_risk=0.02, max_suppression="5%")
    del spec["privacy"]["missing_matches"]
    spec["columns"]["age"] = "numeric"
    del spec["levels"]["age"]
    with pytest.raises(ParameterError) as refused:
        incrowd.publish(folder / "household.sav", spec, base_dir=folder)
    message = str(refused.value)
    assert "\n" not in message and "nan" not in message
    assert message.startswith("the groups of the numeric quasi-identifiers (age) above max_household_risk=0.02 hold ")
    assert "more than max_suppression='5%' (229 rows); raise max_household_risk or k" in message


@needs_data
def test_a_household_target_no_node_meets_within_the_suppression_limit_is_one_line(folder):
    spec = curator_spec(suppression="rows", max_household_risk=1e-9, max_suppression="2%")
    for key in ("missing_matches", "max_individual_risk", "max_global_risk"):
        del spec["privacy"][key]
    del spec["levels"]  # the search is free to generalize
    with pytest.raises(ParameterError) as refused:
        incrowd.publish(folder / "household.sav", spec, base_dir=folder)
    message = str(refused.value)
    assert "\n" not in message and "nan" not in message
    assert "no generalization meets max_household_risk=1e-09 within max_suppression='2%'" in message
    assert "the lowest highest household risk of a node is" in message


@needs_data
def test_household_id_dropped_is_still_checked_by_the_rows_households(folder):
    result = incrowd.publish(folder / "household.sav", curator_spec(household_id="drop"), base_dir=folder)
    out = result.write(folder / "id_drop.sav")
    written, _ = pyreadstat.read_sav(str(out), user_missing=True, apply_value_formats=False)
    assert household.HOUSEHOLD_ID not in written.columns
    source, _ = pyreadstat.read_sav(str(folder / "household.sav"))
    # rows stay in order: the input's households are the release's, and none gives a blank away
    _, recovered = filled_from_housemates(written, source[household.HOUSEHOLD_ID].to_numpy(), HOUSEHOLD_LEVEL)
    assert recovered == 0 and result.verification["households"]["ok"]


def test_household_id_renumbered_keeps_the_households_under_new_numbers(tmp_path):
    data = pd.DataFrame({"hid": [907, 907, 12, 12, 12, 55, 55, 3, 3],
                         "area": list("uuuuurrrr"), "sex": list("mfmfmfmfm")})
    result = incrowd.publish(data, {**_small_spec(), "privacy": {"k": 2, "suppression": "cells",
                                                                 "max_suppression": "100%",
                                                                 "household_id": "renumber"}})
    result.write(tmp_path / "release.csv")
    written = pd.read_csv(tmp_path / "release.csv")
    assert written["hid"].tolist() == [1, 1, 2, 2, 2, 3, 3, 4, 4]
    assert result.summary()["household_id"] == "renumber"


# --------------------------------------------------------------------------------------------
# the spec


def _small_spec(**column) -> dict:
    return {"privacy": {"k": 2, "suppression": "cells", "max_suppression": "100%"},
            "columns": {"hid": "household", "area": {"role": "categorical", **column}, "sex": "categorical"}}


def test_household_level_round_trips_through_the_spec():
    spec = load_spec({**_small_spec(household_level=True),
                      "privacy": {"k": 2, "suppression": "cells", "household_id": "renumber"}})
    assert spec.columns["area"].household_level is True and spec.household == "hid"
    assert spec.household_id == "renumber"
    again = load_spec(spec.to_dict())
    assert again.columns["area"].household_level is True and again.household_id == "renumber"


@pytest.mark.parametrize("spec, message", [
    ({"privacy": {"k": 2}, "columns": {"area": {"role": "categorical", "household_level": True}}},
     r"household_level of 'area' needs a column with role \"household\""),
    ({"privacy": {"k": 2, "household_id": "drop"}, "columns": {"area": "categorical"}},
     r"household_id needs a column with role \"household\""),
    ({"privacy": {"k": 2, "household_id": "hide"}, "columns": {"hid": "household", "area": "categorical"}},
     r"household_id must be one of keep, renumber, drop; got 'hide'"),
    ({"privacy": {"k": 2}, "columns": {"hid": "household", "area": "categorical",
                                        "pay": {"role": "numeric", "household_level": True}}},
     r"column 'pay': only a categorical quasi-identifier takes household_level"),
    ({"privacy": {"k": 2}, "columns": {"hid": "household", "area": {"role": "categorical", "household_level": 1}}},
     r"column 'area': household_level must be true or false; got 1"),
    ({"privacy": {"k": 2, "strategy": "joint"},
      "columns": {"hid": "household", "area": {"role": "categorical", "household_level": True}}},
     r"household_level of \['area'\] needs the generalize-then-microaggregate strategy"),
    ({"privacy": {"k": 2}, "columns": {"hid": "household", "h2": "household", "area": "categorical"}},
     r"gives the role \"household\" to \['hid', 'h2'\]; a release has one household id"),
])
def test_a_household_mistake_is_one_clear_error(spec, message):
    with pytest.raises(ParameterError, match=message):
        load_spec(spec)


def test_a_flagged_column_that_differs_within_a_household_is_named():
    data = pd.DataFrame({"hid": [1, 1, 2, 2], "area": ["a", "b", "a", "a"], "sex": ["m", "f", "m", "f"]})
    with pytest.raises(DataError, match=r"column 'area' is household_level but differs within household 1: row 1 "
                                        r"holds 'a', row 2 holds 'b'"):
        incrowd.publish(data, _small_spec(household_level=True))


def test_a_column_the_same_in_every_household_is_household_level_unless_flagged_false():
    data = pd.DataFrame({"hid": [1, 1, 2, 2, 3, 3], "area": ["a", "a", "b", "b", "a", "a"],
                         "sex": ["m", "f", "m", "f", "m", "f"]})
    assert incrowd.publish(data, _small_spec()).summary()["household_level"] == ["area"]
    assert incrowd.publish(data, _small_spec(household_level=False)).summary()["household_level"] == []


# --------------------------------------------------------------------------------------------
# property: whatever the households and keys, no household-level blank is recoverable


@st.composite
def surveys(draw):
    sizes = draw(st.lists(st.integers(1, 5), min_size=4, max_size=25))
    hid = np.repeat(np.arange(len(sizes)) * 7 + 3, sizes)
    n = hid.size
    area = np.repeat(np.array(draw(st.lists(st.sampled_from(["u", "r", "s"]), min_size=len(sizes),
                                            max_size=len(sizes)))), sizes)
    sex = np.array(draw(st.lists(st.sampled_from(["m", "f"]), min_size=n, max_size=n)))
    age = np.array(draw(st.lists(st.sampled_from(["0-19", "20-59", "60+"]), min_size=n, max_size=n)))
    return pd.DataFrame({"hid": hid, "area": area, "sex": sex, "age": age})


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=surveys(), k=st.integers(2, 3), missing_matches=st.sampled_from(["itself", "any"]))
def test_a_household_level_blank_is_never_recoverable(data, k, missing_matches):
    if data.shape[0] < k:
        return
    spec = {"privacy": {"k": k, "suppression": "cells", "max_suppression": "100%", "missing_matches": missing_matches},
            "columns": {"hid": "household", "area": {"role": "categorical", "household_level": True},
                        "sex": "categorical", "age": "categorical"}}
    result = incrowd.publish(data, spec)
    table = result.table
    ids = table["hid"].to_numpy()
    _, recovered = filled_from_housemates(table, ids, ["area"])
    assert recovered == 0
    assert table["area"].isna().groupby(ids).nunique().max() == 1  # a household is blank throughout or not at all
    counts = match_counts(table[["area", "sex", "age"]].astype(object).where(table[["area", "sex", "age"]].notna(),
                                                                             None),
                          ["area", "sex", "age"], missing_matches=missing_matches)
    assert counts.min() >= k


# --------------------------------------------------------------------------------------------
# the example spec proposes the household roles


def _survey_frame(seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, 80)
    hid = np.repeat(np.arange(1, sizes.size + 1) * 10, sizes)
    return pd.DataFrame({"hid": hid, "area": np.repeat(rng.choice(["urban", "rural"], sizes.size), sizes),
                         "sex": rng.choice(["m", "f"], hid.size), "educ": rng.choice(list("abcd"), hid.size)})


def test_example_spec_proposes_the_household_id_and_household_level_columns():
    spec = incrowd.publishing.example_spec(_survey_frame())
    assert spec["columns"]["hid"] == "household"
    assert spec["columns"]["area"] == {"role": "categorical", "household_level": True}
    assert spec["columns"]["sex"] == "categorical" and spec["columns"]["educ"] == "categorical"
    text = incrowd.publishing.example_toml(_survey_frame())
    assert "the same for every member of each household" in text
    assert incrowd.publish(_survey_frame(), load_spec(text)).summary()["household_level"] == ["area"]


def test_rows_that_repeat_one_another_are_no_household():
    frame = _survey_frame()
    repeated = frame.groupby("hid").transform("first").assign(hid=frame["hid"])  # every member alike
    spec = incrowd.publishing.example_spec(repeated)
    assert spec["columns"]["hid"] == "other"
    assert "no household id" in incrowd.publishing.column_notes(repeated)["hid"]


# --------------------------------------------------------------------------------------------
# the command line


def test_publish_says_the_households_and_a_mistake_in_one_line(tmp_path):
    from typer.testing import CliRunner

    from incrowd.cli import app

    _survey_frame().to_csv(tmp_path / "survey.csv", index=False)
    spec = tmp_path / "release.toml"
    spec.write_text('[privacy]\nk = 2\nsuppression = "cells"\nmax_suppression = "100%"\nhousehold_id = "renumber"\n'
                    '[columns]\nhid = "household"\narea = { role = "categorical", household_level = true }\n'
                    'sex = "categorical"\neduc = "categorical"\n', encoding="utf-8")
    done = CliRunner().invoke(app, ["publish", str(tmp_path / "survey.csv"), "--spec", str(spec),
                                    "-o", str(tmp_path / "out.csv")])
    assert done.exit_code == 0, done.output
    assert "households         id hid renumbered 1, 2, ...; household-level: area" in done.output
    spec.write_text(spec.read_text(encoding="utf-8").replace('"renumber"', '"hidden"'), encoding="utf-8")
    done = CliRunner().invoke(app, ["publish", str(tmp_path / "survey.csv"), "--spec", str(spec),
                                    "-o", str(tmp_path / "out2.csv")])
    assert done.exit_code == 2
    assert done.output.strip().splitlines()[-1].startswith("error: ") and "household_id must be one of" in done.output
    assert "Traceback" not in done.output and not (tmp_path / "out2.csv").exists()


@needs_data
def test_the_report_holds_the_household_risk_to_max_household_risk(folder):
    result = incrowd.publish(folder / "household.sav", curator_spec("any", max_household_risk=0.01), base_dir=folder)
    original = incrowd.read_table(folder / "household.sav")
    report = incrowd.report(original, result.table, **result.report_options(), figures=False).to_dict()
    line = next(v for v in report["verdict"] if v["measure"] == "weighted_highest_household_risk")
    assert line["promised"] and line["status"] == "pass" and line["threshold"] == 0.01
    assert line["value"] == pytest.approx(report["risk"]["sample_risk"]["highest_household_risk"])
    assert line["value"] == pytest.approx(result.summary()["risk_targets"]["max_household_risk"]["achieved"])
