from __future__ import annotations

import gzip
import os

import numpy as np
import pandas as pd
import pytest

from incrowd import DataError, DataWarning, read_table, write_table
from incrowd.values import standardize
from incrowd.io._tables import resolve_roles, sniff_delimiter


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_read_csv_any_delimiter(tmp_path, sep):
    path = tmp_path / "d.csv"
    path.write_text(sep.join(["a", "b", "c"]) + "\n" + sep.join(["1", "2.5", "x"]) + "\n")
    assert sniff_delimiter(path) == sep
    frame = read_table(path, parse=True)
    assert list(frame.columns) == ["a", "b", "c"] and frame.iloc[0, 1] == 2.5


def test_read_gzip_and_parquet(tmp_path):
    frame = pd.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.5, 2.5]})
    gz = tmp_path / "d.csv.gz"
    with gzip.open(gz, "wt") as fh:
        frame.to_csv(fh, index=False, sep=";")
    pd.testing.assert_frame_equal(read_table(gz, parse=True), frame)
    pq = tmp_path / "d.parquet"
    frame.to_parquet(pq)
    pd.testing.assert_frame_equal(read_table(pq), frame)


def test_empty_and_header_only_files(tmp_path):
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="is empty"):
        read_table(empty)
    header = tmp_path / "h.csv"
    header.write_text("a,b\n")
    with pytest.raises(DataError, match="no data rows"):
        read_table(header)
    with pytest.raises(DataError, match="does not exist"):
        read_table(tmp_path / "missing.csv")


def test_write_is_atomic_and_keeps_delimiter(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a;b\n1;2\n3;4\n")
    frame = read_table(src)
    out = tmp_path / "out.csv"
    write_table(frame, out)
    assert out.read_text().splitlines()[0] == "a;b"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_failed_write_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    out = tmp_path / "out.csv"
    out.write_text("old\n")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", boom)
    with pytest.raises(OSError):
        write_table(pd.DataFrame({"a": [1]}), out)
    assert out.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["out.csv"]


def test_roles_default_and_errors():
    frame = pd.DataFrame({"id": [1], "x": [1.0], "y": [2.0], "s": ["a"]})
    roles = resolve_roles(frame, ["x", "y"], ["id"])
    assert roles.quasi_identifiers == ("x", "y") and roles.identifiers == ("id",) and roles.other == ("s",)
    assert resolve_roles(frame, "x, y", None).quasi_identifiers == ("x", "y")
    assert resolve_roles(frame, None, "id").quasi_identifiers == ("x", "y", "s")
    with pytest.raises(DataError, match="both identifier and quasi-identifier"):
        resolve_roles(frame, ["x"], ["x"])


def test_standardize_and_inverse():
    X = np.array([[1.0, 5.0], [3.0, 5.0], [5.0, 5.0]])
    with pytest.warns(DataWarning, match="constant"):
        Z, st = standardize(X, ["a", "b"])
    np.testing.assert_allclose(Z.mean(axis=0), 0, atol=1e-15)
    np.testing.assert_allclose(Z[:, 0].var(), 1.0)
    assert st.scale[1] == 1.0 and st.constant_columns == (1,)
    np.testing.assert_allclose(st.inverse_transform(Z), X)
