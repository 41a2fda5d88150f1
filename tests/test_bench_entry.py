"""The benchmarks' one entry to internals names only what exists: a module moved or renamed
without its line in ``incrowd.cli._bench_entry`` fails here, not in a benchmark run weeks later."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from incrowd.cli import _bench_entry

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.mark.parametrize("name", _bench_entry.__all__)
def test_every_name_of_the_entry_resolves(name):
    assert getattr(_bench_entry, name) is not None


def test_benchmarks_import_internals_only_through_the_entry():
    # a private module (incrowd.x._y or incrowd._y) imported by a benchmark bypasses the entry
    private = re.compile(r"^\s*(?:from|import)\s+incrowd(?:\.\w+)*\.(?!_bench_entry\b)_\w+", re.M)
    offenders = [str(p.relative_to(BENCH)) for p in BENCH.rglob("*.py") if private.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
