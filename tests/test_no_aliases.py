"""No version has been released, so no name has a deprecated alias: the former module and
attribute names are gone (they raise as any unknown name does), and the public paths import
without a warning."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize("old", ["incrowd.data", "incrowd.release", "incrowd.assessment", "incrowd.metrics",
                                 "incrowd._emd"])
def test_a_former_module_is_gone(old):
    sys.modules.pop(old, None)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_a_former_package_attribute_is_gone():
    import incrowd.incremental as incremental

    with pytest.raises(AttributeError):
        incremental.PublishResult  # noqa: B018
    assert incremental.IncrementalRelease.__name__ == "IncrementalRelease"


def test_distributed_has_no_second_build_lattice():
    pytest.importorskip("dask.distributed")
    import incrowd.distributed as distributed

    with pytest.raises(AttributeError):
        distributed.build_lattice  # noqa: B018


def test_the_public_paths_import_without_a_warning():
    code = ("import incrowd, incrowd.io, incrowd.publishing, incrowd.reporting, incrowd.incremental\n"
            "from incrowd import *\n"
            "from incrowd.incremental import IncrementalRelease, STRATEGIES\n"
            "from incrowd.publishing import PUBLISH_STRATEGIES\n"
            "incrowd.read_table, incrowd.publish, incrowd.report\n")
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == "", done.stderr
