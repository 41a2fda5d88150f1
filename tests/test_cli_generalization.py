"""``incrowd lattice build | show``, ``incrowd negotiate``, ``incrowd generalize`` via CliRunner."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from benchdata import data_dir
from typer.testing import CliRunner

from incrowd import verify_k_anonymity
from incrowd.cli import app
from incrowd.generalization import Lattice, negotiate


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({
        "id": [f"p{i}" for i in range(n)],
        "age": rng.integers(18, 80, n),
        "sex": rng.choice(["F", "M"], n),
        "region": rng.choice(["n1", "n2", "s1", "s2", "s3"], n),
        "disease": rng.choice(["flu", "cold", "asthma", "none"], n),
    })
    frame.to_csv(tmp_path / "people.csv", index=False)
    hier = tmp_path / "hier"
    hier.mkdir()
    (hier / "sex.csv").write_text("F;*\nM;*\n")
    (hier / "people_hierarchy_region.csv").write_text("n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\ns3;south;*\n")
    return tmp_path, frame, hier


def run_json(runner, args):
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def fails(runner, args, message):
    out = runner.invoke(app, args)
    assert out.exit_code == 2, out.output
    assert "error:" in out.stderr and message in out.stderr, out.stderr
    assert "Traceback" not in out.output
    return out


def test_build_negotiate_generalize(runner, files):
    tmp, frame, hier = files
    lattice_file = tmp / "L.duckdb"
    info = run_json(runner, ["lattice", "build", str(tmp / "people.csv"), "--hierarchies", str(hier),
                             "--qi", "age,sex,region", "--intervals", "age=5,10,20",
                             "--sensitive", "disease", "-o", str(lattice_file), "--json"])
    assert info["nodes"] == 5 * 2 * 3 == info["materialized_nodes"]
    assert info["levels"] == {"age": 4, "sex": 1, "region": 2} and info["rows"] == 400
    answer = run_json(runner, ["negotiate", str(lattice_file), "--k", "5", "--max-levels", "age=2,region=1",
                               "--max-suppression", "2%", "--json"])
    assert answer["status"] in ("exact", "relaxed")
    assert set(answer) >= {"status", "exact", "relaxations"}
    assert set(answer["relaxations"]) == {"max_suppression", "height", "k"}
    expected = negotiate(Lattice.open(lattice_file), k=5, max_levels={"age": 2, "region": 1},
                         max_suppression=8).to_dict()
    for key in ("status", "exact", "relaxations"):
        assert answer[key] == expected[key]
    node = answer["exact"] or answer["relaxations"]["height"]
    levels = ",".join(f"{a}={v}" for a, v in node["levels"].items())
    out_file = tmp / "out.csv"
    report = run_json(runner, ["generalize", str(tmp / "people.csv"), "--hierarchies", str(hier),
                               "--intervals", "age=5,10,20", "--levels", levels, "--k", "5",
                               "--id", "id", "-o", str(out_file), "--json"])
    assert report["suppressed"] == node["suppressed"]
    published = pd.read_csv(out_file)
    assert "id" not in published.columns and len(published) == 400 - node["suppressed"]
    assert verify_k_anonymity(published, ["age", "sex", "region"], 5).ok
    l_answer = run_json(runner, ["negotiate", str(lattice_file), "--l", "3", "--max-suppression", "10",
                                 "--json"])
    assert "l" in (l_answer["exact"] or l_answer["relaxations"]["height"])
    shown = run_json(runner, ["lattice", "show", str(lattice_file), "--json"])
    assert shown["sensitive"] == "disease" and len(shown["level_scores"]) == 5 + 2 + 3
    text = runner.invoke(app, ["negotiate", str(lattice_file), "--k", "5", "--max-suppression", "0"])
    assert text.exit_code == 0 and "status" in text.stdout


def test_bad_input_gives_one_clear_line_and_writes_nothing(runner, files):
    tmp, frame, hier = files
    data = str(tmp / "people.csv")
    out = tmp / "never.duckdb"
    base = ["lattice", "build", data, "--hierarchies", str(hier), "--qi", "sex,region", "-o", str(out)]
    (hier / "people_hierarchy_region.csv").write_text("n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\n")
    fails(runner, base, "value 's3' is not in hierarchy file")
    (hier / "people_hierarchy_region.csv").write_text("n1;north;*\nn2;north\ns1;south;*\ns2;south;*\ns3;south;*\n")
    fails(runner, base, "row 2: 2 levels, expected 3")
    (hier / "people_hierarchy_region.csv").write_text("n1;north;*\nn1;south;*\ns1;south;*\ns2;south;*\ns3;south;*\n")
    fails(runner, base, "value 'n1' at level 0 has two parents")
    fails(runner, ["lattice", "build", data, "--hierarchies", str(hier), "--qi", "sex,zip", "-o", str(out)],
          "unknown quasi-identifier column 'zip'")
    fails(runner, ["lattice", "build", data, "--hierarchies", str(hier), "--qi", "sex,age", "-o", str(out)],
          "no hierarchy file for attribute 'age'")
    assert not out.exists()
    (hier / "people_hierarchy_region.csv").write_text("n1;north;*\nn2;north;*\ns1;south;*\ns2;south;*\ns3;south;*\n")
    good = tmp / "L.duckdb"
    run_json(runner, ["lattice", "build", data, "--hierarchies", str(hier), "--qi", "sex,region",
                      "-o", str(good), "--json"])
    fails(runner, ["negotiate", str(good), "--k", "5", "--max-levels", "education=1"], "unknown attribute")
    fails(runner, ["negotiate", str(good), "--k", "5", "--max-levels", "region:1"], "attribute=value pairs")
    fails(runner, ["negotiate", str(good), "--k", "1"], "k must be an integer in [2, n_rows=400]; got 1")
    fails(runner, ["negotiate", str(good), "--k", "5", "--max-suppression", "150%"], "max_suppression must be")
    fails(runner, ["negotiate", str(good), "--k", "5", "--max-suppression", "-2"], "max_suppression must be")
    fails(runner, ["negotiate", str(good), "--l", "2"], "sensitive attribute")
    fails(runner, ["negotiate", str(tmp / "people.csv"), "--k", "5"], "not an incrowd lattice file")
    target = tmp / "g.csv"
    fails(runner, ["generalize", data, "--hierarchies", str(hier), "--levels", "sex=1,region=1", "--k", "1",
                   "-o", str(target)], "k must be an integer in [2, n_rows=400]; got 1")
    fails(runner, ["generalize", data, "--hierarchies", str(hier), "--levels", "sex=3", "--k", "5",
                   "-o", str(target)], "level of 'sex' must be an integer in [0, 1]; got 3")
    fails(runner, ["generalize", data, "--hierarchies", str(hier), "--levels", "sex=0,region=0", "--k", "400",
                   "-o", str(target)], "every row would be suppressed")
    assert not target.exists()


def test_adult_cli_json_equals_api(runner, tmp_path):
    folder = data_dir() / "adult_arx"
    if not folder.is_dir():
        pytest.skip(f"benchmark data folder {folder} is absent (set INCROWD_DATA)")
    lattice_file = tmp_path / "adult.duckdb"
    run_json(runner, ["lattice", "build", str(folder / "adult.csv"), "--hierarchies", str(folder),
                      "--qi", "age,sex,race,education", "-o", str(lattice_file), "--json"])
    lattice = Lattice.open(lattice_file)
    for k, levels, supp in ((10, "age=2,education=1", "1%"), (50, "age=1,sex=0,education=1", "0.1%")):
        answer = run_json(runner, ["negotiate", str(lattice_file), "--k", str(k), "--max-levels", levels,
                                   "--max-suppression", supp, "--json"])
        api = negotiate(lattice, k=k, max_levels={p.split("=")[0]: int(p.split("=")[1]) for p in levels.split(",")},
                        max_suppression=supp).to_dict()
        assert {key: answer[key] for key in ("status", "exact", "relaxations")} == \
            {key: api[key] for key in ("status", "exact", "relaxations")}


def test_generalize_l_counts_sensitive_values_as_publish(runner, tmp_path):
    """--l counts distinct sensitive values by publish's rule: a missing value (empty cell, NA)
    is never a distinct value, "1" and "1.0" are one value, trailing blanks make no other."""
    import incrowd

    frame = pd.DataFrame({"region": ["n1"] * 4 + ["n2"] * 4 + ["s1"] * 4 + ["s2"] * 4,
                          "disease": ["x", "", "x", "NA",     # one value and missing cells: 1
                                      "1", "1.0", "1", "1",   # one number, two spellings: 1
                                      "x", "x ", "x", "x",    # trailing blanks: 1
                                      "x", "y", "", "y"]})    # two values: 2
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    assert ",\n" in path.read_text()  # the empty cells are empty in the file
    hier = tmp_path / "hier"
    hier.mkdir()
    (hier / "region.csv").write_text("n1;n;*\nn2;n;*\ns1;s;*\ns2;s;*\n")
    out = tmp_path / "out.csv"
    report = run_json(runner, ["generalize", str(path), "--hierarchies", str(hier), "--levels", "region=0",
                               "--l", "2", "--sensitive", "disease", "-o", str(out), "--json"])
    assert report["suppressed"] == 12
    published = pd.read_csv(out, keep_default_na=False)
    assert published["region"].tolist() == ["s2"] * 4
    spec = {"privacy": {"k": 2, "l": 2, "max_suppression": 15, "allow_full_suppression": True},
            "levels": {"region": 0},
            "columns": {"region": {"role": "categorical", "hierarchy": str(hier / "region.csv")},
                        "disease": "sensitive"}}
    assert incrowd.publish(incrowd.read_table(path), spec).summary()["suppressed"] == 12
