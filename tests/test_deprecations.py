"""The old import paths users may have met keep working for one release, each with a
``DeprecationWarning`` that names the new place, and give the same objects as the new paths."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code],
                          capture_output=True, text=True, timeout=300)
    return done.stderr


@pytest.mark.parametrize(("old", "new_home", "names"), [
    ("incrowd.data", "incrowd.io", ["read_table", "write_table", "table_format", "sniff_delimiter",
                                    "resolve_roles", "ColumnRoles", "numeric_matrix", "NA_VALUES"]),
    ("incrowd.data", "incrowd._standardize", ["Standardizer", "standardize", "group_means"]),
    ("incrowd.release", "incrowd.publishing", ["publish", "PublishResult", "ReleaseSpec", "ColumnSpec",
                                               "load_spec", "example_spec", "example_toml"]),
    ("incrowd.assessment", "incrowd.reporting", ["report", "Report"]),
])
def test_an_old_module_warns_on_import_and_gives_the_same_objects(old, new_home, names):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new_home.split("._")[0].replace(".", r"\.")):
        module = importlib.import_module(old)
    new = importlib.import_module(new_home)
    for name in names:
        assert getattr(module, name) is getattr(new, name), name


@pytest.mark.parametrize("old", ["incrowd.data", "incrowd.release", "incrowd.assessment"])
def test_an_old_module_warns_in_a_fresh_process(old):
    assert "DeprecationWarning" in _fresh(f"import {old}")


def test_incremental_publish_result_is_the_incremental_release_with_a_warning():
    import incrowd.incremental as incremental
    from incrowd.incremental._session import IncrementalRelease

    with pytest.warns(DeprecationWarning, match="IncrementalRelease"):
        old = incremental.PublishResult
    assert old is IncrementalRelease is incremental.IncrementalRelease
    with pytest.warns(DeprecationWarning, match="IncrementalRelease"):
        from incrowd.incremental import PublishResult
    assert PublishResult is IncrementalRelease
    assert "PublishResult" not in incremental.__all__


def test_the_new_paths_do_not_warn():
    assert _fresh("import incrowd, incrowd.io, incrowd.publishing, incrowd.reporting, incrowd.incremental\n"
                  "from incrowd import *\n"
                  "from incrowd.incremental import IncrementalRelease, STRATEGIES\n"
                  "from incrowd.publishing import PUBLISH_STRATEGIES\n"
                  "incrowd.read_table, incrowd.publish, incrowd.report\n") == ""


def test_distributed_build_lattice_is_the_one_build_lattice_with_a_warning():
    pytest.importorskip("dask.distributed")
    import incrowd.distributed as distributed
    from incrowd.distributed._lattice import lattice_on_workers

    with pytest.warns(DeprecationWarning, match="incrowd.generalization.build_lattice"):
        old = distributed.build_lattice
    assert old is lattice_on_workers
    assert "build_lattice" not in distributed.__all__
