"""Compressed inputs: .gz, .bz2, .xz read (.zst with zstandard, else refused by name); a
truncated or corrupted stream is one ``error:`` line naming the file, exit 2, nothing written."""

from __future__ import annotations

import bz2
import gzip
import lzma

import csvcases as cc
import pytest
from typer.testing import CliRunner

from incrowd import DataError, read_table
from incrowd.cli import app

N = 30
TEXT = cc.to_text(cc.HEADER, cc.rows(N))
RAW = TEXT.encode("utf-8")
COMPRESS = {".gz": lambda b: gzip.compress(b, mtime=0), ".bz2": bz2.compress, ".xz": lzma.compress}
QI_ARGS = ["--qi", ",".join(cc.QIS), "--id", cc.ID]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def corrupted_gzip() -> bytes:
    data = bytearray(gzip.compress(RAW * 200, mtime=0))
    mid = len(data) // 2
    data[mid:mid + 16] = bytes(b ^ 0xFF for b in data[mid:mid + 16])
    return bytes(data)


DAMAGED = {
    "truncated.csv.gz": lambda: gzip.compress(RAW * 200, mtime=0)[:-200],
    "corrupted.csv.gz": corrupted_gzip,
    "truncated.csv.bz2": lambda: bz2.compress(RAW * 200)[:-100],
    "truncated.csv.xz": lambda: lzma.compress(RAW * 200)[:-100],
    "notgzip.csv.gz": lambda: RAW,
}


def commands(src, tmp_path):
    """Every command that reads a data file, with an output path it must not create."""
    out = tmp_path / "out.csv"
    return out, [
        ["microaggregate", str(src), "-o", str(out), "--k", "3", *QI_ARGS],
        ["generalize", str(src), "-o", str(out), "--levels", "age=1", "--intervals", "age=10",
         "--k", "2", "--id", cc.ID],
        ["incremental", "base", str(src), "-o", str(out), "--k", "3", *QI_ARGS],
        ["lattice", "build", str(src), "-o", str(out), "--qi", "age", "--intervals", "age=10"],
        ["incremental", "plan", "--model", "fit", "--rows", "100", "--varsigma", "2",
         "--fit-on", str(src), "--qi", "age"],
    ]


def assert_one_error_line(result, name: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert name in lines[0]


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damaged_input_is_one_error_line_in_every_reading_command(runner, tmp_path, name):
    src = tmp_path / name
    src.write_bytes(DAMAGED[name]())
    out, cmds = commands(src, tmp_path)
    for args in cmds:
        result = runner.invoke(app, args)
        assert_one_error_line(result, name)
        assert not out.exists()
    with pytest.raises(DataError, match=name.replace(".", r"\.")):
        read_table(src)


@pytest.mark.parametrize("name", ["truncated.csv.gz", "corrupted.csv.gz"])
def test_incremental_add_with_damaged_file_keeps_the_state(runner, tmp_path, name):
    base = tmp_path / "base.csv"
    base.write_text(TEXT)
    state = tmp_path / "s.db"
    result = runner.invoke(app, ["incremental", "base", str(base), "-o", str(state), "--k", "3", *QI_ARGS])
    assert result.exit_code == 0, result.output
    before = state.read_bytes()
    bad = tmp_path / name
    bad.write_bytes(DAMAGED[name]())
    result = runner.invoke(app, ["incremental", "add", str(state), str(bad)])
    assert_one_error_line(result, name)
    assert state.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["base.csv", "s.db", name])


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
def test_compressed_input_read_and_output_compressed(runner, tmp_path, suffix):
    plain_in = tmp_path / "in.csv"
    plain_in.write_bytes(RAW)
    src = tmp_path / f"in.csv{suffix}"
    src.write_bytes(COMPRESS[suffix](RAW))
    assert read_table(src).equals(read_table(plain_in))
    plain_out, packed_out = tmp_path / "plain.csv", tmp_path / f"out.csv{suffix}"
    for s, o in ((plain_in, plain_out), (src, packed_out)):
        result = runner.invoke(app, ["microaggregate", str(s), "-o", str(o), "--k", "3", *QI_ARGS, "-q"])
        assert result.exit_code == 0, result.output
    opener = {".gz": gzip.decompress, ".bz2": bz2.decompress, ".xz": lzma.decompress}[suffix]
    assert opener(packed_out.read_bytes()) == plain_out.read_bytes()


def test_zst_refused_by_name_without_zstandard(runner, tmp_path, monkeypatch):
    from incrowd.io import _compression

    monkeypatch.setattr(_compression, "_zstandard", lambda: None)
    src = tmp_path / "in.csv.zst"
    src.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 32)
    out = tmp_path / "out.csv"
    result = runner.invoke(app, ["microaggregate", str(src), "-o", str(out), "--k", "3", *QI_ARGS])
    assert_one_error_line(result, "in.csv.zst")
    assert "zstandard" in result.stderr and not out.exists()


def test_zst_read_with_zstandard(runner, tmp_path):
    zstandard = pytest.importorskip("zstandard")
    src = tmp_path / "in.csv.zst"
    src.write_bytes(zstandard.ZstdCompressor().compress(RAW))
    plain = tmp_path / "in.csv"
    plain.write_bytes(RAW)
    assert read_table(src).equals(read_table(plain))


def test_zst_truncated_refused_and_output_compressed_with_zstandard(runner, tmp_path):
    zstandard = pytest.importorskip("zstandard")
    packed = zstandard.ZstdCompressor().compress(RAW * 200)
    bad = tmp_path / "truncated.csv.zst"
    bad.write_bytes(packed[:-100])
    out = tmp_path / "out.csv.zst"
    result = runner.invoke(app, ["microaggregate", str(bad), "-o", str(out), "--k", "3", *QI_ARGS])
    assert_one_error_line(result, "truncated.csv.zst")
    assert not out.exists()
    good = tmp_path / "in.csv"
    good.write_bytes(RAW)
    result = runner.invoke(app, ["microaggregate", str(good), "-o", str(out), "--k", "3", *QI_ARGS, "-q"])
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"\x28\xb5\x2f\xfd")
    assert read_table(out).shape[0] == N


def test_damaged_upload_is_refused_by_the_web_app():
    pytest.importorskip("fastapi")
    pytest.importorskip("multipart")
    from fastapi.testclient import TestClient

    from incrowd.web import create_app

    client = TestClient(create_app(max_upload_mb=1))
    resp = client.post("/api/datasets", files={"file": ("bad.csv.gz", DAMAGED["truncated.csv.gz"](),
                                                        "application/gzip")})
    assert resp.status_code == 400, resp.text
    assert "bad.csv.gz" in resp.text and "truncated or corrupted" in resp.text
