"""``suppression = "cells"`` in publish on a partitioned file (Dask, a LocalCluster of 2 worker
processes): the in-process release, the same cells blanked in the same rows, with either meaning
of a blank; the whole release's k verified from the written partitions before it is moved into
place; what one process refuses is refused in the same line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("distributed")
from _dask_tests import cli, client  # noqa: E402,F401,F811
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_distributed_publish import CATEGORICAL, _spec, _split, adult, assert_same_release  # noqa: E402,F401,F811

import incrowd  # noqa: E402
from incrowd.exceptions import ParameterError, VerificationError  # noqa: E402
from incrowd.io import read_table  # noqa: E402
from incrowd.publishing import load_spec  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]


def _cells(**privacy) -> dict:
    """Adult with cell suppression; ``keys_only``: age and hours published as they are (a blank
    that matches any value needs every quasi-identifier categorical)."""
    keys_only = privacy.pop("keys_only", False)
    spec = _spec(l=None, suppression="cells", **privacy)
    if keys_only:
        spec["columns"].update({"age": "other", "hours": "other"})
        del spec["missing"]
    return spec


def _same_summary(here, there) -> None:
    a, b = here.summary(), there.summary()
    for key in ("levels", "rows_out", "suppressed", "classes", "min_class_size", "suppressed_cells", "suppression",
                "missing_matches"):
        assert b[key] == a[key], key


@pytest.mark.parametrize("privacy", [{}, {"missing_matches": "any", "keys_only": True},
                                     {"max_suppressed_cells": "2%", "importance": dict(zip(CATEGORICAL, [7, 1, 2, 6, 3, 5, 4]))},
                                     {"missing_matches": "any", "keys_only": True, "max_suppressed_cells": 2000}],
                         ids=["itself", "any", "limit-importance", "any-limit"])
def test_cells_on_partitions_publish_the_in_process_release(client, adult, tmp_path, privacy):
    n = len(adult)
    parts = _split(adult, tmp_path / "parts", [0, 6000, 6000, 17000, n])  # one empty
    here = incrowd.publish(adult, _cells(**privacy))
    there = incrowd.publish(parts, _cells(**privacy), scheduler=client, output=tmp_path / "release")
    _same_summary(here, there)
    assert sum(here.summary()["suppressed_cells"].values()) > 0
    assert_same_release(here, tmp_path / "release", tmp_path, parts)
    written = pd.concat([pd.read_parquet(f) for f in sorted((tmp_path / "release").iterdir())])
    assert int(written[list(here.summary()["suppressed_cells"])].isna().sum().sum()) >= \
        sum(here.summary()["suppressed_cells"].values())


def test_a_blank_matching_any_value_is_counted_across_output_partitions(client, adult, tmp_path):
    # a row with a blank may reach k only with rows of classes written to other partitions: each
    # partition's check leaves k to the whole release's, which counts the union
    frame = adult.iloc[:9000]
    parts = _split(frame, tmp_path / "parts", [0, 4000, 9000])
    spec = _cells(missing_matches="any", keys_only=True)
    here = incrowd.publish(frame, spec)
    there = incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    files = sorted((tmp_path / "release").iterdir())
    assert len(files) > 1
    assert_same_release(here, tmp_path / "release", tmp_path, parts)
    from incrowd.values import match_counts

    whole = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    assert match_counts(whole, spec_keys(spec), missing_matches="any").min() >= 5
    alone = [match_counts(pd.read_parquet(f), spec_keys(spec), missing_matches="any").min() for f in files]
    assert min(alone) < 5  # one partition alone would fail k: only the union meets it
    assert there.summary()["suppressed_cells"] == here.summary()["suppressed_cells"]


def spec_keys(spec: dict) -> list[str]:
    return [c for c, v in spec["columns"].items() if isinstance(v, dict) and v.get("role") == "categorical"]


def test_a_cell_limit_no_release_meets_is_the_in_process_line(client, adult, tmp_path):
    frame = adult.iloc[:8000]
    parts = _split(frame, tmp_path / "parts", [0, 3000, 8000])
    spec = _cells(max_suppressed_cells=10)
    with pytest.raises(ParameterError) as here:
        incrowd.publish(frame, spec)
    with pytest.raises(ParameterError) as there:
        incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    assert str(there.value) == str(here.value) and "\n" not in str(there.value)
    assert str(there.value).startswith("local suppression needs ") and "max_suppressed_cells=10" in str(there.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parts"]


def test_l_with_cells_is_refused_on_partitions_as_in_process(client, adult, tmp_path):
    parts = _split(adult.iloc[:2000], tmp_path / "parts", [0, 1000, 2000])
    spec = _spec(l=2, suppression="cells")
    with pytest.raises(ParameterError) as here:
        incrowd.publish(adult.iloc[:2000], spec)
    with pytest.raises(ParameterError) as there:
        incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    assert str(there.value) == str(here.value) and "\n" not in str(there.value)
    assert "l, t and the joint strategy need suppression = \"rows\"" in str(there.value)


def test_the_whole_cell_release_is_verified_from_the_written_partitions_counts():
    from incrowd.publishing import check_written_classes

    def spec(meaning):
        return load_spec({"privacy": {"k": 3, "suppression": "cells", "missing_matches": meaning},
                          "columns": {"a": "categorical", "b": "categorical"}})

    # part one: (x, blank) once, (y, 2) three times; part two: (x, 1) twice
    sizes = [pd.DataFrame({"a": ["x", "y"], "b": [None, "2"], "rows": [1, 3]}),
             pd.DataFrame({"a": ["x"], "b": ["1"], "rows": [2]})]
    # a blank matching any value: (x, blank) and the two (x, 1) match each other, three rows
    assert check_written_classes(spec("any"), sizes, [], ["a", "b"], 6) == (3, 3)
    # the blank a value of its own: (x, blank) is a class of one row
    with pytest.raises(VerificationError, match=r"^the written release is not 3-anonymous \(smallest class 1\); "
                                                r"nothing was written$"):
        check_written_classes(spec("itself"), sizes, [], ["a", "b"], 6)
    # without part two the blank matches itself alone
    with pytest.raises(VerificationError, match=r"^the written release is not 3-anonymous \(fewest matches 1\); "
                                                r"nothing was written$"):
        check_written_classes(spec("any"), sizes[:1], [], ["a", "b"], 4)


def _read_back(parts: Path) -> pd.DataFrame:
    """The partitions as one table, with the types a partition is read with."""
    return pd.concat([read_table(f) for f in sorted(parts.iterdir()) if len(pd.read_parquet(f))],
                     ignore_index=True)


def _hierarchy(folder: Path, name: str, values: int) -> str:
    path = folder / f"{name}.csv"
    path.write_text("".join(f"{name}{v};{name}-{v // 2};*\n" for v in range(values)) + f"NA;{name}-na;*\n")
    return str(path)


@st.composite
def _tables(draw):
    """A small table whose first value is common and the others rare, cut into parts."""
    n = draw(st.integers(20, 90))
    columns = {}
    for j, name in enumerate(["a", "b", "c"][:draw(st.integers(2, 3))]):
        values = draw(st.integers(2, 5))
        common = draw(st.floats(0.4, 0.9))
        seed = draw(st.integers(0, 2**16))
        rng = np.random.default_rng(seed)
        drawn = np.where(rng.random(n) < common, 0, rng.integers(1, values, n))
        # text, also in a part where every cell is missing
        cells = pd.Series([f"{name}{v}" for v in drawn], dtype="str")
        if j == 0 and draw(st.booleans()):
            cells[rng.random(n) < 0.1] = None
        columns[name] = (cells, values)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
    return columns, [0, *cuts, n], draw(st.integers(2, 4)), draw(st.sampled_from(["itself", "any"]))


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(_tables())
def test_small_partitioned_tables_publish_the_in_process_cells(client, tmp_path_factory, drawn):
    columns, bounds, k, meaning = drawn
    tmp = tmp_path_factory.mktemp("cells")
    frame = pd.DataFrame({name: cells for name, (cells, _) in columns.items()})
    frame.insert(0, "id", np.arange(len(frame)))
    spec = {"privacy": {"k": k, "max_suppression": "100%", "suppression": "cells", "missing_matches": meaning},
            "columns": {name: {"role": "categorical", "hierarchy": _hierarchy(tmp, name, values)}
                        for name, (_, values) in columns.items()} | {"id": "other"}}
    parts = tmp / "parts"
    parts.mkdir()
    for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        frame.iloc[a:b].to_parquet(parts / f"part-{i}.parquet", index=False)
    frame = _read_back(parts)
    try:
        here = incrowd.publish(frame, spec)
    except ParameterError as exc:
        with pytest.raises(ParameterError) as there:
            incrowd.publish(parts, spec, scheduler=client, output=tmp / "release")
        assert str(there.value) == str(exc)
        return
    there = incrowd.publish(parts, spec, scheduler=client, output=tmp / "release")
    _same_summary(here, there)
    assert_same_release(here, tmp / "release", tmp, parts)


def test_the_class_missing_everywhere_takes_its_rows_from_the_largest_class_as_in_process(client, tmp_path):
    # k = 8: the two rows of a2 are blanked and need six rows more; local suppression takes the
    # last six rows of the largest class, a0, which the client holds cut short
    rng = np.random.default_rng(3)
    cells = np.array(["a0"] * 40 + ["a1"] * 30 + ["a2"] * 2, dtype=object)
    rng.shuffle(cells)
    frame = pd.DataFrame({"id": np.arange(cells.size), "a": cells})
    spec = {"privacy": {"k": 8, "max_suppression": "100%", "suppression": "cells"}, "levels": {"a": 0},
            "columns": {"a": {"role": "categorical", "hierarchy": _hierarchy(tmp_path, "a", 3)}, "id": "other"}}
    parts = _split(frame, tmp_path / "parts", [0, 30, 50, len(frame)])
    frame = _read_back(parts)
    here = incrowd.publish(frame, spec)
    blank = here.table["a"].isna()
    assert int(blank.sum()) == 8 and set(frame.loc[blank, "a"]) == {"a0", "a2"}
    there = incrowd.publish(parts, spec, scheduler=client, output=tmp_path / "release")
    _same_summary(here, there)
    assert_same_release(here, tmp_path / "release", tmp_path, parts)


def test_cli_says_the_blanked_cells_on_partitions_as_in_process(client, adult, tmp_path):
    from incrowd.publishing import spec_to_toml

    frame = adult.iloc[:9000]
    parts = _split(frame, tmp_path / "parts", [0, 4000, 9000])
    spec = _cells(missing_matches="any", keys_only=True)
    (tmp_path / "release.toml").write_text(spec_to_toml(spec))
    done = cli("publish", str(parts), "--spec", str(tmp_path / "release.toml"), "--scheduler",
               client.scheduler.address, "-o", str(tmp_path / "release"), timeout=300)
    assert done.returncode == 0, done.stderr
    here = dict(incrowd.publishing.summary_lines(incrowd.publish(frame, spec).summary()))
    there = dict(line.split(None, 1) if not line.startswith(("suppressed cells", "risk targets")) else
                 (line[:16], line[16:].strip()) for line in done.stdout.splitlines() if line.strip())
    assert there["suppressed cells"] == here["suppressed cells"]
    assert there["classes"] == here["classes"]
    assert "a missing value matching any value" in there["verified"]
