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


def test_the_data_module_warning_names_no_private_module():
    """A user is pointed to public homes only: the standardization helpers are internal."""
    sys.modules.pop("incrowd.data", None)
    with pytest.warns(DeprecationWarning) as caught:
        importlib.import_module("incrowd.data")
    message = " ".join(str(w.message) for w in caught if "incrowd.data" in str(w.message))
    assert "incrowd.io" in message and "internal" in message
    assert "incrowd._" not in message


def _small_frame():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(5)
    return pd.DataFrame({"id": range(12), "x": rng.normal(size=12), "y": rng.normal(size=12),
                         "c": ["a", "b", "c"] * 4})


def test_result_table_and_summary_old_names_warn_and_give_the_same_objects(tmp_path):
    """The names a result had for its table (``aggregated``, ``release``) and for its summary
    (``report``, ``to_dict()``) keep working for one release, each with a warning naming the new one."""
    import incrowd
    from incrowd.generalization import generalize
    from incrowd.incremental import IncrementalMicroaggregation

    frame = _small_frame()
    micro = incrowd.microaggregate(frame, 3, quasi_identifiers=["x", "y"], identifiers="id")
    with pytest.warns(DeprecationWarning, match=r"MicroaggregationResult\.table"):
        assert micro.aggregated is micro.table
    state = IncrementalMicroaggregation.from_base(frame, tmp_path / "s.duckdb", 3, quasi_identifiers=["x", "y"],
                                                  identifiers="id")
    inc = state.publish()
    with pytest.warns(DeprecationWarning, match=r"IncrementalRelease\.table"):
        assert inc.release is inc.table
    with pytest.warns(DeprecationWarning, match=r"IncrementalRelease\.summary\(\)"):
        assert inc.report is inc.summary()
    published = incrowd.publish(frame, {"privacy": {"k": 3, "max_suppression": 1.0},
                                        "columns": {"x": "numeric", "y": "numeric", "c": "categorical",
                                                    "id": "identifier"}})
    with pytest.warns(DeprecationWarning, match=r"PublishResult\.summary\(\)"):
        assert published.report == published.summary()
    general = generalize(frame.drop(columns=["id", "c"]), {"x": 1}, k=3, intervals={"x": [1, 2]})
    with pytest.warns(DeprecationWarning, match=r"GeneralizationResult\.summary\(\)"):
        assert general.to_dict() == general.summary()


def test_a_verification_read_as_the_k_anonymity_report_it_was_warns():
    """``result.verification`` was a KAnonymityReport for microaggregate and the incremental
    release: its fields still read, from the ``k_anonymity`` record, with a warning."""
    import incrowd

    result = incrowd.microaggregate(_small_frame(), 3, quasi_identifiers=["x", "y"], identifiers="id")
    record = result.verification["k_anonymity"]
    assert result.verification.ok and result.verification.min_class_size == record["min_class_size"]
    for name in ("k", "n_rows", "n_classes", "n_rows_in_small_classes"):
        with pytest.warns(DeprecationWarning, match=rf"verification\['k_anonymity'\]\['{name}'\]"):
            assert getattr(result.verification, name) == record[name]
    with pytest.warns(DeprecationWarning, match="verification is a dict"):
        assert result.verification.to_dict() == record
    with pytest.raises(AttributeError):
        result.verification.no_such_field  # noqa: B018
