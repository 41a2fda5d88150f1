"""After ``incrowd warmup``, a command's first run compiles nothing.

An install runs ``incrowd warmup`` (``make demo``, ``make test``); a user's first command must then
load every kernel it runs from numba's cache. Each case warms a fresh ``NUMBA_CACHE_DIR`` with the
targets of that command, runs the command once as a whole process on a real file's types and
counts the compiled kernels numba saved (a new ``.nbc`` file per compiled signature). No timing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _household import write_hierarchies, write_household
from benchdata import data_dir

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (data_dir() / "testdata.csv").is_file(), reason="benchmark data not found")]

CLI = [sys.executable, "-m", "incrowd.cli"]
TIMEOUT = 900
TESTDATA_KEYS = "urbrur,roof,walls,water,electcon,relat,sex"

LOCAL_SUPPRESSION = """import sys
from incrowd import read_table
from incrowd.generalization import local_suppression
for missing_matches in ("any", "itself"):
    local_suppression(read_table(sys.argv[1]), sys.argv[2].split(","), 3, missing_matches=missing_matches)
"""

HOUSEHOLD_SPEC = """[privacy]
k = 3
max_suppression = "100%"
suppression = "cells"
missing_matches = "itself"
allow_full_suppression = true

[columns]
urbrur = "categorical"
water = "categorical"
sex = "categorical"
age = { role = "categorical", hierarchy = "h/age.csv", match = "code" }
relat = { role = "categorical", hierarchy = "h/relat.csv", match = "label" }
hhcivil = "categorical"
income = "numeric"
sampling_weight = "weight"
"""


def _household_release(work: Path) -> list[str]:
    data = write_household(data_dir(), work / "household.sav")
    write_hierarchies(work / "h")
    (work / "spec.toml").write_text(HOUSEHOLD_SPEC, encoding="utf-8")
    return [*CLI, "publish", str(data), "--spec", str(work / "spec.toml"), "-o", str(work / "release.sav"), "--json"]


def _adult_release(work: Path) -> list[str]:
    """Adult with l = 2 and t = 0.2 on salary-class: the sensitive counts and the merge kernels."""
    folder = data_dir() / "adult_arx"
    lines = ["[privacy]", "k = 5", "l = 2", "t = 0.2", 'max_suppression = "2%"', "[columns]", 'age = "numeric"',
             '"salary-class" = "sensitive"']
    lines += [f'"{a}" = {{ role = "categorical", hierarchy = "{(folder / f"adult_hierarchy_{a}.csv").as_posix()}" }}'
              for a in ("sex", "race", "marital-status", "education", "native-country", "workclass", "occupation")]
    (work / "adult.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [*CLI, "publish", str(folder / "adult.csv"), "--spec", str(work / "adult.toml"), "-o",
            str(work / "release.csv"), "--json"]


#: case -> (the warm-up targets an install compiles for it, the command on a working folder)
CASES = {
    # 4,580 rows: MDAV's serial screened kernel, which the warm-up's shapes never reached
    "microaggregate survey amounts": ("mdav", lambda work: [
        *CLI, "microaggregate", str(data_dir() / "testdata.csv"), "--qi", "age,income,expend,savings", "--k", "3",
        "--method", "mdav", "-o", str(work / "out.csv"), "--quiet"]),
    # times MDAV on 2,000 to 16,000 Gaussian rows
    "incremental plan --model fit": ("mdav", lambda work: [
        *CLI, "incremental", "plan", "--rows", "50000", "--varsigma", "5", "--tau-end", "0.5", "--model", "fit"]),
    "local_suppression on testdata": ("generalization", lambda work: [
        sys.executable, "-c", LOCAL_SUPPRESSION, str(data_dir() / "testdata.csv"), TESTDATA_KEYS]),
    "publish the household .sav, cells suppressed": ("generalization,publish", _household_release),
    "publish Adult with l and t": ("mdav,generalization,publish", _adult_release),
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """One cache per set of targets, as ``incrowd warmup --methods`` leaves it."""
    caches: dict[str, Path] = {}

    def get(targets: str) -> Path:
        if targets not in caches:
            cache = tmp_path_factory.mktemp("installed") / "numba"
            done = subprocess.run([*CLI, "warmup", "--methods", targets, "--quiet"], capture_output=True, text=True,
                                  env=_env(cache), timeout=TIMEOUT)
            assert done.returncode == 0, done.stderr
            caches[targets] = cache
        return caches[targets]

    return get


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "NUMBA_CACHE_DIR": str(cache)}


@pytest.mark.parametrize("case", CASES)
def test_first_run_after_warmup_compiles_nothing(installed, tmp_path, case):
    targets, command = CASES[case]
    cache = tmp_path / "numba"
    shutil.copytree(installed(targets), cache)
    before = set(cache.rglob("*.nbc"))
    assert before, "the warm-up cached nothing"
    done = subprocess.run(command(tmp_path), capture_output=True, text=True, env=_env(cache), cwd=tmp_path,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    compiled = sorted(f"{p.parent.name.rsplit('_', 1)[0]}/{p.name}" for p in set(cache.rglob("*.nbc")) - before)
    assert compiled == [], f"{case} compiled after incrowd warmup --methods {targets}"
    assert "compiling kernels" not in done.stderr
