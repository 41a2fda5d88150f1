"""A lattice file opens to the lattice that was saved, whatever order DuckDB returns the
histogram rows in, and its level scores read as the same table."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from _thresholds import as_models  # noqa: E402

from incrowd.generalization import Lattice, negotiate


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"a": rng.integers(0, 60, 800), "b": rng.integers(0, 30, 800),
                          "s": rng.integers(0, 5, 800)})
    lattice = Lattice.build(frame, ["a", "b"], intervals={"a": [5, 10, 20], "b": [3, 6]}, sensitive="s")
    path = tmp_path_factory.mktemp("open") / "l.duckdb"
    lattice.save(path)
    return lattice, path


def _same_lattice(opened, lattice):
    for name in ("k_histograms", "l_histograms"):
        for part in ("offsets", "keys", "classes", "rows", "cum_rows", "cum_classes"):
            np.testing.assert_array_equal(getattr(getattr(opened, name), part), getattr(getattr(lattice, name), part))
    np.testing.assert_array_equal(opened.materialized, lattice.materialized)
    np.testing.assert_array_equal(opened.bottom_codes, lattice.bottom_codes)
    pd.testing.assert_frame_equal(opened.level_scores, lattice.level_scores, check_dtype=False)
    for request in ({"k": 5, "max_suppression": "1%"}, {"l": 3, "max_suppression": 20}, {"k": 40}):
        # the timings differ (the first call in a process may compile); the answers may not
        clocks = {"seconds": 0, "compile_seconds": 0}
        assert negotiate(opened, **as_models(request)).to_dict() | clocks == \
            negotiate(lattice, **as_models(request)).to_dict() | clocks


def test_opened_lattice_equals_the_saved_one(built):
    lattice, path = built
    opened = Lattice.open(path)
    assert isinstance(opened.level_scores, pd.DataFrame)
    _same_lattice(opened, lattice)


def test_histogram_rows_in_another_order_are_sorted_on_open(built, tmp_path):
    lattice, path = built
    shuffled = tmp_path / "shuffled.duckdb"
    shuffled.write_bytes(path.read_bytes())
    con = duckdb.connect(str(shuffled))
    for table in ("k_histogram", "l_histogram"):
        con.execute(f"CREATE TABLE t AS SELECT * FROM {table} ORDER BY hash(node_id * 7919 + rows) DESC")
        con.execute(f"DROP TABLE {table}")
        con.execute(f"ALTER TABLE t RENAME TO {table}")
    first = con.execute("SELECT node_id FROM k_histogram LIMIT 50").fetchnumpy()["node_id"]
    con.close()
    assert (np.diff(first) < 0).any()  # the file really holds them out of order
    _same_lattice(Lattice.open(shuffled), lattice)
