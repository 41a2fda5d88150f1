"""``publish`` with k-map and delta-presence against a population table (``population =
"FILE"``): the node the search chooses against a brute force over every node, the written file
checked against the population (CSV and SPSS read back), and the one-line refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import incrowd
from incrowd.exceptions import DataError, ParameterError, VerificationError
from incrowd.generalization import read_hierarchy
from incrowd.privacy import DeltaPresence, KMap

REGIONS = {"n1": "north", "n2": "north", "s1": "south", "s2": "south", "e1": "east", "e2": "east"}
AGES = {a: f"{a // 10 * 10}s" for a in range(20, 70)}


def _files(tmp_path, n_people=3000, share=0.3, seed=1):
    rng = np.random.default_rng(seed)
    people = pd.DataFrame({"region": rng.choice(list(REGIONS), n_people), "age": rng.choice(list(AGES), n_people),
                           "income": rng.integers(1, 9, n_people)})
    data = people.sample(frac=share, random_state=seed).reset_index(drop=True)
    (tmp_path / "region.csv").write_text("".join(f"{k};{v};*\n" for k, v in REGIONS.items()))
    (tmp_path / "age.csv").write_text("".join(f"{k};{v};*\n" for k, v in AGES.items()))
    people.to_csv(tmp_path / "people.csv", index=False)
    return people, data


def _spec(tmp_path, model):
    return {"privacy": {"k": 2, "max_suppression": "5%", "metric": "height", **model},
            "columns": {"region": {"role": "categorical", "hierarchy": "region.csv"},
                        "age": {"role": "categorical", "hierarchy": "age.csv"}, "income": "other"}}


def _generalized(frame, levels, tmp_path):
    out = frame.copy()
    for column in ("region", "age"):
        h = read_hierarchy(tmp_path / f"{column}.csv", column)
        level = levels[column]
        if level:
            out[column] = h.generalize(h.encode(frame[column]), level)
    return out


def _brute_force(people, data, model, tmp_path, limit):
    """(height, suppressed) of the lowest node whose classes the model accepts within the limit."""
    found = []
    for levels in itertools.product(range(3), range(3)):
        at = dict(zip(("region", "age"), levels))
        d, p = _generalized(data, at, tmp_path), _generalized(people, at, tmp_path)
        sizes = d.groupby(["region", "age"]).size()
        in_population = p.groupby(["region", "age"]).size()
        counts = in_population.reindex(sizes.index).to_numpy()
        if isinstance(model, KMap):
            bad = (counts < model.k) | (sizes.to_numpy() < 2)
        else:
            share = sizes.to_numpy() / counts
            bad = (share > model.max) | (sizes.to_numpy() < 2)
        suppressed = int(sizes.to_numpy()[bad].sum())
        if suppressed > limit or suppressed == len(data):
            continue
        if isinstance(model, DeltaPresence) and model.min > 0:
            kept = set(sizes.index[~bad])
            if any(key not in kept for key in in_population.index):
                continue
        found.append((sum(levels), suppressed))
    return min(found) if found else None


@pytest.mark.parametrize("entry", [{"k_map": {"k": 60, "population": "people.csv"}},
                                   {"k_map": {"k": 150, "population": "people.csv"}},
                                   {"delta_presence": {"min": 0.0, "max": 0.4, "population": "people.csv"}},
                                   {"delta_presence": {"min": 0.0, "max": 0.33, "population": "people.csv"}}],
                         ids=["k_map60", "k_map150", "delta0.4", "delta0.33"])
def test_the_search_meets_the_population_models_as_the_brute_force_finds(tmp_path, entry):
    people, data = _files(tmp_path)
    spec = _spec(tmp_path, entry)
    model = incrowd.publishing.load_spec(spec, base_dir=tmp_path).models[0]
    expected = _brute_force(people, data, model, tmp_path, int(0.05 * len(data)))
    if expected is None:
        with pytest.raises(ParameterError):
            incrowd.publish(data, spec, base_dir=tmp_path)
        return
    result = incrowd.publish(data, spec, base_dir=tmp_path)
    summary = result.summary()
    assert (sum(summary["levels"].values()), summary["suppressed"]) == expected
    for suffix in (".csv", ".sav"):
        result.write(tmp_path / f"release{suffix}")
        assert result.verification[model.key]["ok"], suffix


def test_the_written_file_is_checked_against_the_population(tmp_path, monkeypatch):
    people, data = _files(tmp_path)
    spec = _spec(tmp_path, {"k_map": {"k": 60, "population": "people.csv"}})
    from incrowd.publishing import _models

    real = _models.Population.labelled

    def fewer(self, prep, levels):  # a population that lost most of its people
        return real(self, prep, levels).iloc[::10]

    monkeypatch.setattr(_models.Population, "labelled", fewer)
    with pytest.raises(VerificationError, match="population table"):
        incrowd.publish(data, spec, base_dir=tmp_path)


def test_a_population_the_data_is_not_part_of_is_refused_in_one_line(tmp_path):
    people, data = _files(tmp_path)
    data.loc[0, "region"] = "n1"
    data.loc[0, "age"] = 20
    people[~((people["region"] == "n1") & (people["age"] == 20))].to_csv(tmp_path / "people.csv", index=False)
    spec = _spec(tmp_path, {"k_map": {"k": 5, "population": "people.csv"}})
    with pytest.raises(DataError, match="must be a part of the population") as info:
        incrowd.publish(data, spec, base_dir=tmp_path)
    assert "\n" not in str(info.value) and "region=n1" in str(info.value)


def test_a_numeric_quasi_identifier_is_refused_with_a_population(tmp_path):
    _files(tmp_path)
    spec = _spec(tmp_path, {"k_map": {"k": 5, "population": "people.csv"}})
    spec["columns"]["income"] = "numeric"
    with pytest.raises(ParameterError, match="microaggregated"):
        incrowd.publishing.load_spec(spec, base_dir=tmp_path)
