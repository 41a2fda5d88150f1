"""What a fresh process imports: ``import incrowd`` and ``--version``/``--help`` stay light, and
each command loads only what it runs. Checked in new processes through ``sys.modules``, never
by timing; the names stay importable exactly as before.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import incrowd

HEAVY = ["pandas", "numba", "duckdb", "sklearn", "scipy", "scipy.optimize", "scipy.special", "pyarrow", "dask",
         "distributed", "fastapi", "uvicorn"]
CENSUS = Path(incrowd.__file__).parent / "datasets" / "census.csv"

# run the CLI's entry point in a fresh interpreter and report which heavy modules it loaded
CLI = """
import json, sys
argv, heavy = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["incrowd", *argv]
if len(sys.argv) > 3:  # as the console script starts it: one command, then exit
    from incrowd._runtime import process
    process.program = True
from incrowd.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
print("\\n@@" + json.dumps({"code": code, "loaded": [m for m in heavy if m in sys.modules]}))
"""


def _fresh(code: str, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def _cli(*argv: str, program: bool = False) -> tuple[dict, str]:
    done = _fresh(CLI, json.dumps(list(argv)), json.dumps(HEAVY), *(["program"] if program else []))
    out, _, tail = done.stdout.rpartition("\n@@")
    return json.loads(tail), out


def test_import_incrowd_loads_no_heavy_dependency():
    done = _fresh("import json, sys, incrowd\n"
                  f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    assert json.loads(done.stdout) == []


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["microaggregate", "--help"], ["negotiate", "--help"],
                                  ["incremental", "plan", "--help"], ["lattice", "build", "--help"]])
def test_version_and_help_load_no_heavy_dependency(argv):
    report, out = _cli(*argv)
    assert report == {"code": 0, "loaded": []}
    if argv == ["--version"]:
        assert out.strip() == f"incrowd {incrowd.__version__}"
    else:
        assert "Usage" in out


def test_help_still_lists_the_methods_strategies_and_na_texts():
    from incrowd._runtime import METHOD_NAMES
    from incrowd.incremental import STRATEGIES
    from incrowd.incremental._strategy_names import STRATEGY_NAMES
    from incrowd.io._na_values import NA_HELP

    assert METHOD_NAMES == tuple(incrowd.METHODS)
    assert STRATEGY_NAMES == tuple(STRATEGIES)
    assert "'NA'" in NA_HELP
    _, out = _cli("microaggregate", "--help")
    assert "mona-2d" in " ".join(out.split())


def test_every_public_name_imports_from_a_fresh_process():
    code = ("import incrowd, incrowd.generalization as g, incrowd.incremental as i\n"
            "from incrowd import *\n"
            "from incrowd.generalization import *\n"
            "from incrowd.incremental import *\n"
            "for module in (incrowd, g, i):\n"
            "    for name in module.__all__:\n"
            "        assert getattr(module, name) is not None, name\n"
            "    assert set(module.__all__) <= set(dir(module)), module\n"
            "assert {'io', 'exceptions', 'metrics', 'microaggregation'} <= set(dir(incrowd))\n"
            "print('ok')")
    assert _fresh(code).stdout.strip() == "ok"


def test_names_are_the_same_objects_as_in_their_modules():
    from incrowd import MDAV, microaggregate, read_table
    from incrowd.generalization import Lattice, negotiate
    from incrowd.generalization._lattice import Lattice as lattice_class
    from incrowd.generalization._negotiate import negotiate as negotiate_function
    from incrowd.io._tables import read_table as from_data
    from incrowd.microaggregation import MDAV as mdav_class

    assert MDAV is mdav_class and read_table is from_data and Lattice is lattice_class
    assert negotiate is negotiate_function and callable(microaggregate)
    assert incrowd.io._tables.read_table is from_data  # submodules stay reachable as attributes


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        incrowd.nothing_here  # noqa: B018
    assert not hasattr(incrowd.generalization, "nothing_here")


def test_microaggregate_loads_neither_scikit_learn_nor_dask_nor_the_web(tmp_path):
    report, _ = _cli("microaggregate", str(CENSUS), "--k", "5", "--method", "mdav", "-o", str(tmp_path / "o.csv"),
                     "--quiet")
    assert report["code"] == 0 and (tmp_path / "o.csv").exists()
    assert not {"sklearn", "dask", "distributed", "fastapi", "uvicorn"} & set(report["loaded"])


def test_plan_with_the_quadratic_model_loads_no_heavy_dependency():
    report, out = _cli("incremental", "plan", "--rows", "50000", "--varsigma", "5", "--tau-end", "0.5",
                       "--model", "quadratic", "--json")
    assert report == {"code": 0, "loaded": []}
    assert json.loads(out)["rows"] == 50000


@pytest.fixture(scope="module")
def lattice_file(tmp_path_factory):
    from incrowd.generalization import Lattice

    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"age": rng.integers(18, 90, 600), "hours": rng.integers(1, 80, 600),
                          "zip": rng.integers(0, 40, 600)})
    lattice = Lattice.build(frame, ["age", "hours", "zip"], intervals={"age": [5, 10, 20], "hours": [10, 20],
                                                                       "zip": [4, 8]})
    path = tmp_path_factory.mktemp("lattice") / "l.duckdb"
    lattice.save(path)
    return path, lattice


def _without_seconds(answer: dict) -> dict:
    return {key: value for key, value in answer.items() if "seconds" not in key}


def test_negotiate_command_loads_neither_pandas_nor_numba_and_answers_like_the_api(lattice_file):
    from incrowd.generalization import negotiate

    path, lattice = lattice_file
    for k, levels, supp in ((10, "age=1,hours=1", "1%"), (3, "age=2,hours=0,zip=1", "0"), (40, None, "10%")):
        argv = ["negotiate", str(path), "--k", str(k), "--max-suppression", supp, "--json"]
        if levels:
            argv += ["--max-levels", levels]
        report, out = _cli(*argv)
        assert report["code"] == 0
        assert not {"pandas", "numba", "sklearn", "scipy", "pyarrow", "dask", "fastapi"} & set(report["loaded"])
        max_levels = dict((a, int(v)) for a, v in (p.split("=") for p in levels.split(","))) if levels else None
        expected = negotiate(lattice, k=k, max_levels=max_levels, max_suppression=supp).to_dict()
        assert _without_seconds(json.loads(out)) == _without_seconds(expected)


def test_version_is_answered_before_the_command_line_loads():
    """``incrowd --version`` as the console script runs it: neither numpy nor typer nor rich."""
    done = _fresh("import json, sys\nsys.argv = ['incrowd', '--version']\nfrom incrowd.cli import run\n"
                  "try:\n    run()\nexcept SystemExit:\n    pass\n"
                  "print(json.dumps(sorted(m for m in ('numpy', 'typer', 'rich', 'click') if m in sys.modules)))")
    version, loaded = done.stdout.splitlines()
    assert version == f"incrowd {incrowd.__version__}"
    assert json.loads(loaded) == []


def _without_times(value):
    """A report's figures, the seconds each step took left out."""
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def test_risk_of_a_survey_file_loads_no_numba_and_answers_like_the_kernels(tmp_path):
    """A one-shot ``incrowd risk`` on sdcMicro's testdata (4,580 rows, 7 keys) computes SUDA2 on the
    compiled extension and never starts numba, nor scipy.optimize (the population-uniqueness fits
    reach MINPACK alone); every figure and record is the API's."""
    from benchdata import data_dir

    from incrowd.reporting import risk

    testdata = data_dir() / "testdata.csv"
    if not testdata.exists():
        pytest.skip(f"{testdata} is absent (set INCROWD_DATA)")
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    records = tmp_path / "records.csv"
    argv = ["risk", str(testdata), "--qi", ",".join(keys), "--weight", "sampling_weight", "--household", "ori_hid"]
    report, out = _cli(*argv, "--json", program=True)
    assert report["code"] == 0
    assert not {"numba", "scipy.optimize", "scipy.special", "sklearn", "duckdb", "dask", "distributed", "fastapi",
                "uvicorn"} & set(report["loaded"])
    assert json.loads(out)["summary"]["population_uniqueness"]["snb_alpha"] > 0  # both fits ran
    report, _ = _cli(*argv, "-o", str(records), "--quiet", program=True)
    assert report["code"] == 0
    expected = risk(str(testdata), keys, weight="sampling_weight", household="ori_hid")
    assert _without_times(json.loads(out)) == _without_times(json.loads(expected.to_json()))
    written = pd.read_csv(records).drop(columns="row")
    assert np.count_nonzero(written["suda_score"]) == 157  # SUDA2 found special uniques to score
    pd.testing.assert_frame_equal(written, expected.records.reset_index(drop=True), check_dtype=False,
                                  check_exact=True)


def test_the_methods_and_the_readers_load_neither_scipy_spatial_nor_parquet(tmp_path):
    """Loading every microaggregation method (as ``incrowd publish`` does) leaves scipy.spatial to
    the one search that runs it, and reading a CSV leaves pyarrow's Parquet and file systems out."""
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n2,y\n", encoding="utf-8")
    done = _fresh("import json, sys\nimport incrowd.microaggregation\nfrom incrowd import read_table\n"
                  f"frame = read_table({str(path)!r})\n"
                  "print(json.dumps([len(frame), sorted(m for m in ('scipy.spatial', 'pyarrow.parquet')"
                  " if m in sys.modules)]))")
    assert json.loads(done.stdout) == [2, []]


# the program as the console script runs it (``incrowd.cli.run``), and what it loaded
PROGRAM = """
import json, sys
argv, heavy = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["incrowd", *argv]
import atexit
atexit.register(lambda: print("\\n@@" + json.dumps([m for m in heavy if m in sys.modules]), flush=True))
from incrowd.cli import run
run()
"""
#: what a plain ``incrowd risk`` no longer builds: the typer application, typer's pydantic checks
COMMAND_LINE = ["incrowd.cli._app", "typer._adapters", "pydantic", "incrowd.cli._publish", "incrowd.cli._generalization"]
KEYS = "urbrur,roof,walls,water,electcon,relat,sex"


def _program(*argv: str) -> tuple[int, str, str, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps(list(argv)), json.dumps(HEAVY + COMMAND_LINE)],
                          capture_output=True, text=True, timeout=300)
    out, _, tail = done.stdout.rpartition("\n@@")
    return done.returncode, out, done.stderr, json.loads(tail)


def _typer(*argv: str) -> tuple[int, str, str]:
    """The same command line parsed by typer (``main``), in a fresh one-shot process."""
    done = subprocess.run([sys.executable, "-c", CLI, json.dumps(list(argv)), json.dumps(HEAVY), "program"],
                          capture_output=True, text=True, timeout=300)
    out, _, tail = done.stdout.rpartition("\n@@")
    return json.loads(tail)["code"], out, done.stderr


@pytest.fixture(scope="module")
def testdata():
    from benchdata import data_dir

    path = data_dir() / "testdata.csv"
    if not path.exists():
        pytest.skip(f"{path} is absent (set INCROWD_DATA)")
    return path


def test_a_plain_risk_command_line_skips_typer_and_scipy_special_and_answers_the_same(testdata, tmp_path):
    """``incrowd risk`` on a plain command line builds no typer application (nor typer's pydantic
    checks) and loads neither scipy.special nor the other commands; its report, its records and
    its exit status are typer's, byte for byte."""
    argv = ["risk", str(testdata), "--qi", KEYS, "--weight", "sampling_weight", "--household", "ori_hid"]
    code, out, err, loaded = _program(*argv, "-o", str(tmp_path / "plain.csv"))
    assert code == 0 and err == ""
    assert not set(COMMAND_LINE) & set(loaded)
    assert not {"numba", "scipy.optimize", "scipy.special", "sklearn", "duckdb", "dask", "fastapi"} & set(loaded)
    typer_code, typer_out, typer_err = _typer(*argv, "-o", str(tmp_path / "typer.csv"))
    assert (code, err) == (typer_code, typer_err)
    assert out.replace("plain.csv", "typer.csv") == typer_out
    assert (tmp_path / "plain.csv").read_bytes() == (tmp_path / "typer.csv").read_bytes()


#: what a plain ``incrowd risk`` on a CSV file leaves out besides: typer and rich (its text lines are
#: written as rich would write them off a terminal), value labels' module (a CSV has none)
CONSOLE = ["typer", "rich", "incrowd.generalization"]


@pytest.mark.parametrize("extra", [[], ["--json"], ["-o", "records.csv", "-q"]])
def test_a_plain_risk_command_line_loads_neither_typer_nor_rich(testdata, tmp_path, extra):
    extra = [str(tmp_path / word) if word.endswith(".csv") else word for word in extra]
    argv = ["risk", str(testdata), "--qi", KEYS, "--weight", "sampling_weight", "--household", "ori_hid", *extra]
    done = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps(argv), json.dumps(CONSOLE)],
                          capture_output=True, text=True, timeout=300)
    out, _, tail = done.stdout.rpartition("\n@@")
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(tail) == []
    assert json.loads(out)["summary"] if "--json" in extra else out.strip()


def test_a_labelled_file_s_risk_loads_the_value_labels_only_to_show_them(tmp_path):
    """On the curator's labelled .sav, the text report (which shows no key values) leaves the value
    labels' module out; the JSON, which shows the riskiest records' keys, spells a user-missing
    code by its label as before."""
    from _household import write_household
    from benchdata import data_dir

    if not (data_dir() / "testdata.csv").exists():
        pytest.skip("testdata.csv is absent (set INCROWD_DATA)")
    sav = write_household(data_dir(), tmp_path / "household.sav")
    argv = ["risk", str(sav), "--qi", KEYS, "--weight", "sampling_weight", "--household", "ori_hid"]
    labels = ["incrowd.generalization", "incrowd.generalization._cells"]
    for extra, loaded in (([], []), (["--json"], labels)):
        done = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps([*argv, *extra]), json.dumps(labels)],
                              capture_output=True, text=True, timeout=300)
        out, _, tail = done.stdout.rpartition("\n@@")
        assert (done.returncode, done.stderr, json.loads(tail)) == (0, "", loaded)
    shown = {value for row in json.loads(out)["riskiest"] for value in row.values()}
    assert "Not stated" in shown  # the user-missing code 9, by its label


@pytest.mark.parametrize("extra", [["--threshold", "5"], ["--suda-scores", "nope"], ["--weight", "absent"],
                                   ["--qi", "urbrur", "--suda-max-size", "0"], ["-o", "x.txt"]])
def test_a_plain_risk_command_line_with_a_mistake_gives_typer_s_error_line(testdata, extra):
    argv = ["risk", str(testdata), "--qi", KEYS, *extra, "-q"]
    code, out, err, _ = _program(*argv)
    assert code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1
    assert (code, out, err) == _typer(*argv)


def _captured(monkeypatch, call, module: str = "incrowd.cli._risk", function: str = "measure") -> dict:
    """The arguments ``call`` passes on to the command's work (``module.function``)."""
    seen: dict = {}

    def capture(data_path, **kwargs):
        seen.update(kwargs, data_path=data_path)

    monkeypatch.setattr(importlib.import_module(module), function, capture)
    call()
    return seen


PLAIN = [["d.csv", "--qi", "a,b"], ["--qi", "a", "d.csv", "--qi", "b", "--weight", "w", "--household", "h"],
         ["d.csv", "--qi", "a", "--population", "1e6", "--threshold", ".05", "--suda-max-size", "3", "--no-suda"],
         ["d.csv", "--qi", "a", "--threshold", "1", "--suda-scores", "ihsn", "--model-risk", "CE", "--json", "-q"],
         ["d.csv", "--qi", "a", "-o", "out/r.parquet", "--suda", "--quiet", "--population", "12345.678e2"],
         ["--output", "r.json", "--qi", '"b,c",a', "some dir/d.sav"], ["d.csv"]]
NOT_PLAIN = [[], ["--help"], ["d.csv", "--help"], ["d.csv", "--qi=a"], ["d.csv", "--qi"], ["d.csv", "--qi", "-x"],
             ["d.csv", "e.csv", "--qi", "a"], ["d.csv", "--qi", "a", "--weight", "w", "--weight", "v"],
             ["d.csv", "--qi", "a", "--threshold", "abc"], ["d.csv", "--qi", "a", "--threshold", "1_0"],
             ["d.csv", "--qi", "a", "--threshold", "-1"], ["d.csv", "--qi", "a", "--suda-max-size", "2.0"],
             ["d.csv", "--qi", "a", "--suda-max-size", "007"], ["d.csv", "--qi", "a", "-o", "-"],
             ["d.csv", "--qi", "a", "--scheduler", "local:2"], ["d.csv", "--qi", "a", "--memory-limit", "2GiB"],
             ["d.csv", "--qi", "a", "--scheduler-timeout", "5"], ["d.csv", "--qi", "a", "--json", "--json"],
             ["d.csv", "--qi", "a", "--", "x"], ["d.csv", "--qi", "a", "-oq"], ["d.csv", "--nope"], ["", "--qi", "a"]]


@pytest.mark.parametrize("argv", PLAIN)
def test_a_plain_command_line_gives_risk_command_typer_s_arguments(monkeypatch, argv):
    from typer.testing import CliRunner

    from incrowd.cli import app
    from incrowd.cli._risk import plain_arguments
    from incrowd.cli._risk_command import risk_command

    arguments = plain_arguments(argv)
    assert arguments is not None
    by_typer = _captured(monkeypatch, lambda: CliRunner().invoke(app, ["risk", *argv], catch_exceptions=False))
    assert _captured(monkeypatch, lambda: risk_command(**arguments)) == by_typer
    assert by_typer  # typer reached the measurement


@pytest.mark.parametrize("argv", NOT_PLAIN)
def test_anything_but_a_plain_command_line_goes_to_typer(argv):
    from incrowd.cli._risk import plain_arguments

    assert plain_arguments(argv) is None


#: the microaggregation families besides MDAV's
OTHER_FAMILIES = ["incrowd.microaggregation.greedy", "incrowd.microaggregation.ona",
                  "incrowd.microaggregation.mondrian", "incrowd.microaggregation.refine"]


def test_publish_with_mdav_loads_no_other_microaggregation_family(tmp_path):
    """``incrowd publish`` microaggregating with MDAV (the default method) loads MDAV's family
    only, and writes the release the API writes with every family loaded, byte for byte."""
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.normal(3000, 800, n).round(2),
                          "sex": rng.choice(["f", "m"], n), "region": rng.choice(list("abcdef"), n)})
    data, spec = tmp_path / "survey.csv", tmp_path / "spec.toml"
    frame.to_csv(data, index=False)
    spec.write_text('[privacy]\nk = 3\nmax_suppression = "5%"\n\n[columns]\nage = "numeric"\nincome = "numeric"\n'
                    'sex = "categorical"\nregion = "categorical"\n', encoding="utf-8")
    argv = ["publish", str(data), "--spec", str(spec), "-o", str(tmp_path / "cli.csv"), "--quiet"]
    done = _fresh(CLI, json.dumps(argv), json.dumps(OTHER_FAMILIES))
    report = json.loads(done.stdout.rpartition("\n@@")[2])
    assert report == {"code": 0, "loaded": []}

    assert incrowd.METHODS["mona"] is not None  # every family loaded here
    result = incrowd.publish(incrowd.read_table(data), spec)
    result.write(tmp_path / "api.csv")
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "api.csv").read_bytes()


# ---------------------------------------------------------------------------------------------
# ``incrowd publish`` on a plain command line: ARX's Adult as bench/bench_first_use.py publishes it

ARX_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    """ARX's Adult and the release spec of the start-up benchmark: k = 5 within 1 %, ``age``
    numeric, the other seven keys categorical with ARX's hierarchies, salary-class sensitive."""
    from benchdata import data_dir

    arx = data_dir() / "adult_arx"
    if not (arx / "adult.csv").exists():
        pytest.skip(f"{arx} is absent (set INCROWD_DATA)")
    lines = ["[privacy]", "k = 5", 'max_suppression = "1%"', "allow_full_suppression = true", "", "[columns]",
             'age = "numeric"']
    lines += [f'"{q}" = {{ role = "categorical", hierarchy = "{arx / f"adult_hierarchy_{q}.csv"}" }}'
              for q in ARX_QIS if q != "age"]
    lines.append('"salary-class" = "sensitive"')
    spec = tmp_path_factory.mktemp("adult") / "release.toml"
    spec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return arx / "adult.csv", spec


#: what a plain ``incrowd publish`` of Adult never loads: the command line (typer, rich, click,
#: pydantic, the other commands), what no release of a CSV file runs (scikit-learn, DuckDB, Dask,
#: the web, Parquet, SciPy's special functions, optimizers and trees, the report, the
#: perturbation methods, the incremental state) and the privacy models its spec does not ask for
#: (it asks for k alone)
NOT_FOR_PUBLISH = [
    "typer", "rich", "click", "pydantic", "incrowd.cli._app", "incrowd.cli._publish", "incrowd.cli._generalization",
    "incrowd.cli._report", "incrowd.cli._options", "sklearn", "duckdb", "dask", "distributed", "fastapi", "uvicorn",
    "pyarrow.parquet", "pyarrow.dataset", "scipy.special", "scipy.optimize", "scipy.spatial", "incrowd.reporting",
    "incrowd.perturbation", "incrowd.incremental", "incrowd.web",
    *(f"incrowd.privacy.{model}" for model in ("alpha_k", "average_risk", "beta_likeness", "delta_disclosure",
                                               "delta_presence", "differential_privacy", "distinct_l", "entropy_l",
                                               "k_map", "population_uniqueness", "recursive_l", "t_closeness")),
]


def _loaded_by(argv: list[str], modules: list[str]) -> tuple[int, str, str, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps(argv), json.dumps(modules)],
                          capture_output=True, text=True, timeout=300)
    out, _, tail = done.stdout.rpartition("\n@@")
    return done.returncode, out, done.stderr, json.loads(tail)


@pytest.mark.parametrize("extra", [["--json"], ["-q"]])
def test_a_plain_publish_of_adult_imports_only_what_it_runs(adult, tmp_path, extra):
    data, spec = adult
    code, out, err, loaded = _loaded_by(["publish", str(data), "--spec", str(spec), "-o", str(tmp_path / "r.csv"),
                                         *extra], NOT_FOR_PUBLISH + ["incrowd.privacy.k_anonymity"])
    assert (code, err) == (0, "")
    assert loaded == ["incrowd.privacy.k_anonymity"]  # the one model asked for, and nothing of the rest
    assert (tmp_path / "r.csv").exists() and (json.loads(out)["k"] == 5 if "--json" in extra else out.strip())


def _without_seconds_lines(text: str) -> str:
    """A publish's output, its timings left out (JSON members or summary lines naming seconds)."""
    return "\n".join(line for line in text.splitlines() if "seconds" not in line)


@pytest.mark.parametrize("extra", [["--json"], [], ["--report", "report.json", "-q"]])
def test_a_plain_publish_command_line_answers_as_typer_byte_for_byte(adult, tmp_path, extra):
    """The release, the report and the summary of a plain ``incrowd publish`` are typer's, byte for
    byte (but the seconds it took), with the same exit status and stderr."""
    data, spec = adult
    plain, by_typer = tmp_path / "plain", tmp_path / "typer"
    outputs = []
    for folder in (plain, by_typer):
        folder.mkdir()
        argv = ["publish", str(data), "--spec", str(spec), "-o", str(folder / "release.csv"),
                *[str(folder / word) if word.endswith(".json") else word for word in extra]]
        if folder is plain:
            code, out, err, loaded = _program(*argv)
            assert not set(COMMAND_LINE) & set(loaded)
        else:
            code, out, err = _typer(*argv)
        outputs.append((code, _without_seconds_lines(out.replace(str(folder), "FOLDER")), err))
    assert outputs[0] == outputs[1] and outputs[0][0] == 0
    assert (plain / "release.csv").read_bytes() == (by_typer / "release.csv").read_bytes()
    if extra[:1] == ["--report"]:
        def figures(path):
            return _without_times(json.loads(path.read_text().replace(str(path.parent), "FOLDER")))

        assert figures(plain / "report.json") == figures(by_typer / "report.json")


@pytest.mark.parametrize("tail", [["--spec", "SPEC", "-o", "OUT", "--max-nodes", "many"],
                                  ["--spec", "SPEC", "-o", "OUT", "--max-memory", "lots"],
                                  ["--spec", "SPEC", "-o", "OUT", "--max-nodes", "10"],
                                  ["--spec", "SPEC", "-o", "OUT", "--report", "r.txt"],
                                  ["--spec", "SPEC", "-o", "OUT", "--memory-limit", "2GiB"],
                                  ["--spec", "SPEC"], ["-o", "OUT"], ["--spec", "SPEC", "-o", "DATA"]])
def test_a_plain_publish_command_line_with_a_mistake_gives_typer_s_error_line(adult, tmp_path, tail):
    data, spec = adult
    given = {"SPEC": str(spec), "OUT": str(tmp_path / "r.csv"), "DATA": str(data)}
    argv = ["publish", str(data), *[given.get(word, word) for word in tail], "-q"]
    code, out, err, loaded = _program(*argv)
    assert code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1
    assert ("incrowd.cli._app" in loaded) == ("--memory-limit" in tail)  # only a run on Dask's option needs typer
    assert (code, out, err) == _typer(*argv)
    assert not (tmp_path / "r.csv").exists()


def test_a_plain_publish_with_a_bad_spec_gives_typer_s_error_line(adult, tmp_path):
    data, _ = adult
    spec = tmp_path / "bad.toml"
    spec.write_text('[privacy]\nk = 1\n\n[columns]\nage = "numeric"\n', encoding="utf-8")
    for given in (spec, tmp_path / "absent.toml"):
        argv = ["publish", str(data), "--spec", str(given), "-o", str(tmp_path / "r.csv")]
        code, out, err, loaded = _program(*argv)
        assert code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1 and out == ""
        assert "incrowd.cli._app" not in loaded  # read plainly, the error line is still typer's
        assert (code, out, err) == _typer(*argv)


PUBLISH_PLAIN = [["d.csv", "--spec", "s.toml", "-o", "r.csv"], ["--spec", "s.toml", "d.sav", "--output", "r.sav"],
                 ["d.csv", "-o", "r.parquet", "--spec", "dir/s.toml", "--json", "-q"],
                 ["d.csv", "--spec", "s.toml", "-o", "r.csv", "--report", "r.html", "--quiet"],
                 ["d.csv", "--spec", "s.toml", "-o", "r.dta", "--max-nodes", "none", "--max-memory", "512M"],
                 ["d.csv", "--max-nodes", "1000", "--spec", "s.toml", "-o", "r.csv"], ["d.csv"],
                 ["some dir/d.csv", "-o", "out dir/r.csv"]]
PUBLISH_NOT_PLAIN = [[], ["--help"], ["d.csv", "--help"], ["d.csv", "--example-spec"],
                     ["d.csv", "--spec=s.toml", "-o", "r.csv"], ["d.csv", "--spec"], ["d.csv", "--spec", "-x"],
                     ["d.csv", "e.csv", "--spec", "s.toml"], ["d.csv", "--spec", "s.toml", "--spec", "t.toml"],
                     ["d.csv", "--spec", "s.toml", "-o", "-"], ["d.csv", "--spec", "s.toml", "--scheduler", "local:2"],
                     ["d.csv", "--spec", "s.toml", "--scheduler-timeout", "5"],
                     ["d.csv", "--spec", "s.toml", "--memory-limit", "2GiB"], ["d.csv", "--json", "--json"],
                     ["d.csv", "--spec", "s.toml", "--", "x"], ["d.csv", "-qo", "r.csv"], ["d.csv", "--nope"],
                     ["", "--spec", "s.toml"], ["d.csv", "--max-nodes", ""]]


def _captured_publish(monkeypatch, call) -> dict:
    return _captured(monkeypatch, call, "incrowd.cli._publish_file", "publish_here")


@pytest.mark.parametrize("argv", PUBLISH_PLAIN)
def test_a_plain_command_line_gives_publish_command_typer_s_arguments(monkeypatch, argv):
    from typer.testing import CliRunner

    from incrowd.cli import app
    from incrowd.cli._publish import publish_command
    from incrowd.cli._publish_file import plain_arguments

    arguments = plain_arguments(argv)
    assert arguments is not None
    by_typer = _captured_publish(monkeypatch, lambda: CliRunner().invoke(app, ["publish", *argv],
                                                                          catch_exceptions=False))
    assert _captured_publish(monkeypatch, lambda: publish_command(**arguments)) == by_typer
    assert by_typer  # typer reached the release


@pytest.mark.parametrize("argv", PUBLISH_NOT_PLAIN)
def test_anything_but_a_plain_publish_command_line_goes_to_typer(argv):
    from incrowd.cli._publish_file import plain_arguments

    assert plain_arguments(argv) is None


@pytest.mark.parametrize("command", ["risk", "publish"])
def test_the_plain_form_knows_every_option_but_the_dask_ones_with_typer_s_defaults(command):
    import inspect

    import typer.main

    from incrowd.cli import PLAIN_COMMANDS, app
    from incrowd.cli._publish import publish_command
    from incrowd.cli._risk_command import risk_command

    plain = importlib.import_module(PLAIN_COMMANDS[command], "incrowd.cli")
    clicked = typer.main.get_command(app).commands[command]
    spelled = {o for p in clicked.params for o in [*p.opts, *getattr(p, "secondary_opts", [])]
               if o.startswith("-") and o != "--help"}
    typer_only = {"--scheduler", "--scheduler-timeout", "--memory-limit"} | ({"--example-spec"} if command == "publish"
                                                                          else set())
    assert spelled - typer_only == set(plain.PLAIN_OPTIONS) | set(plain.PLAIN_FLAGS)
    signature = inspect.signature(publish_command if command == "publish" else risk_command)
    assert plain.DEFAULTS == {name: p.default for name, p in signature.parameters.items() if name != "data_path"}


def test_the_models_registry_loads_a_model_s_module_only_when_its_class_is_looked_up():
    """``MODELS`` answers its keys (``in``, the spec's checks, a verdict's order) without loading
    a model; ``models_from_spec`` loads the models a ``[privacy]`` table asks for and no other."""
    done = _fresh("import json, sys\nfrom incrowd.privacy import MODELS, models_from_spec\n"
                  "keys = list(MODELS)\nknown = 'k_map' in MODELS and 'nope' not in MODELS\n"
                  "before = sorted(m for m in sys.modules if m.startswith('incrowd.privacy.') and '._' not in m)\n"
                  "models = models_from_spec({'k': 5, 'l': 2, 'max_suppression': '1%'})\n"
                  "after = sorted(m for m in sys.modules if m.startswith('incrowd.privacy.') and '._' not in m)\n"
                  "print(json.dumps([keys, known, before, [m.key for m in models], after]))")
    keys, known, before, models, after = json.loads(done.stdout)
    assert keys[:3] == ["k", "alpha", "l"] and len(keys) == 13 and known
    assert before == [] and models == ["k", "l"]
    assert after == ["incrowd.privacy.distinct_l", "incrowd.privacy.k_anonymity"]
    from incrowd.privacy import MODELS

    assert all(MODELS[key].key == key for key in MODELS)  # each key names its class


def test_a_publish_of_adult_imports_no_numba(adult, tmp_path):
    """``incrowd publish`` of ARX's Adult (k = 5 within 1 %) runs only kernels of the compiled
    extension (a node's classes, MDAV's scan, the group sums): the process never imports numba,
    on the plain command line and through typer alike."""
    data, spec = adult
    argv = ["publish", str(data), "--spec", str(spec), "-o", str(tmp_path / "plain.csv"), "--json"]
    code, out, err, loaded = _loaded_by(argv, ["numba"])
    assert (code, err, loaded) == (0, "", [])
    assert json.loads(out)["k"] == 5
    report, out = _cli("publish", str(data), "--spec", str(spec), "-o", str(tmp_path / "typer.csv"), "--json",
                       program=True)
    assert report["code"] == 0 and "numba" not in report["loaded"]
    assert (tmp_path / "plain.csv").read_bytes() == (tmp_path / "typer.csv").read_bytes()


@pytest.mark.parametrize("command", ["generalize", "lattice"])
def test_generalize_and_lattice_build_of_adult_import_no_numba(adult, tmp_path, command):
    """``incrowd generalize`` of Adult (8 QIs, k = 5 within 1 %, least loss) and ``incrowd lattice
    build`` of the same QIs run a node's table on the compiled extension and the node search as
    plain Python: neither process imports numba, and each answers as the API does in this process
    (where the search is numba's)."""
    from incrowd import read_table
    from incrowd.generalization import Lattice, generalize

    data, _ = adult
    arx, qis = data.parent, ",".join(ARX_QIS)
    if command == "generalize":
        argv = ["generalize", str(data), "--hierarchies", str(arx), "--qi", qis, "--k", "5", "--max-suppression", "1%",
                "--json", "-o", str(tmp_path / "gen.csv")]
    else:
        argv = ["lattice", "build", str(data), "--hierarchies", str(arx), "--qi", qis, "-o",
                str(tmp_path / "adult8.lattice"), "--quiet"]
    code, out, err, loaded = _loaded_by(argv, ["numba"])
    assert (code, err, loaded) == (0, "", [])
    frame = read_table(data)  # as the command reads it
    if command == "generalize":
        expected = generalize(frame, k=5, hierarchies=str(arx), quasi_identifiers=list(ARX_QIS), max_suppression="1%")
        got = json.loads(out)
        assert (got["levels"], got["suppressed"], got["classes"]) == (expected.levels, expected.suppressed,
                                                                        expected.classes)
        assert got["suppressed"] == 273  # ARX's Adult at k = 5 within 1 %: the node of least loss
    else:
        built = Lattice.open(tmp_path / "adult8.lattice")
        expected = Lattice.build(frame, list(ARX_QIS), hierarchies=str(arx))
        assert built.n_nodes == expected.n_nodes == 6480
        for node in (0, 1234, built.n_nodes - 1):
            for a, b in zip(built.node_histograms(node)[1], expected.node_histograms(node)[1]):
                np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("rows", [6_000, 40_000])
def test_a_publish_whose_class_takes_mdavs_tree_imports_no_numba(tmp_path, rows):
    """``incrowd publish`` with two numeric keys and no categorical one microaggregates the whole
    file as one class on two columns: exact MDAV's k-d tree (the compiled extension's), past the
    size where the scan would cost more than starting numba (40,000 rows). The process never
    imports numba, and writes what the API writes in this process."""
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"age": rng.integers(18, 90, rows), "income": rng.normal(3000, 800, rows).round(0)})
    data, spec = tmp_path / "survey.csv", tmp_path / "spec.toml"
    frame.to_csv(data, index=False)
    spec.write_text('[privacy]\nk = 3\n\n[columns]\nage = "numeric"\nincome = "numeric"\n', encoding="utf-8")
    code, _, err, loaded = _loaded_by(["publish", str(data), "--spec", str(spec), "-o", str(tmp_path / "cli.csv"),
                                       "--quiet"], ["numba"])
    assert (code, err, loaded) == (0, "", [])
    incrowd.publish(incrowd.read_table(data), spec).write(tmp_path / "api.csv")
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "api.csv").read_bytes()


# ---------------------------------------------------------------------------------------------
# l, t and local suppression on the compiled extension: ARX's Adult with every key categorical
# (no numeric key, so no MDAV), salary-class sensitive


@pytest.mark.parametrize("model", ["l = 2", "t = 0.2"])
def test_a_publish_of_adult_with_l_or_t_imports_no_numba(adult, tmp_path, model):
    """``incrowd publish`` of Adult with l = 2 or t = 0.2 judges the node search's classes
    (each class's distinct values and distance) and merges them (a group's partner and status) on
    the compiled extension: the process never imports numba, and writes what the API writes."""
    from incrowd import read_table
    from incrowd.publishing import load_spec, publish

    data, _ = adult
    arx = data.parent
    lines = ["[privacy]", "k = 5", model, 'max_suppression = "1%"', "allow_full_suppression = true", "", "[columns]"]
    lines += [f'"{q}" = {{ role = "categorical", hierarchy = "{arx / f"adult_hierarchy_{q}.csv"}" }}'
              for q in ARX_QIS]
    lines.append('"salary-class" = "sensitive"')
    spec = tmp_path / "release.toml"
    spec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["publish", str(data), "--spec", str(spec), "-o", str(tmp_path / "cli.csv"), "--json"]
    code, out, err, loaded = _loaded_by(argv, ["numba"])
    assert (code, err, loaded) == (0, "", [])
    key = model.split(" = ")[0]
    assert json.loads(out)[key] == float(model.split(" = ")[1])
    publish(read_table(data), load_spec(spec)).write(tmp_path / "api.csv")
    assert (tmp_path / "cli.csv").read_bytes() == (tmp_path / "api.csv").read_bytes()


def test_local_suppression_of_testdata_imports_no_numba():
    """``local_suppression`` of sdcMicro's testdata (7 keys, k = 3, as the start-up benchmark
    runs it) matches records on the compiled extension: no numba in the process, and the cells it
    blanks are the ones the same call blanks here."""
    from benchdata import data_dir

    from incrowd import read_table
    from incrowd.generalization import local_suppression

    testdata = data_dir() / "testdata.csv"
    if not testdata.exists():
        pytest.skip(f"{testdata} is absent (set INCROWD_DATA)")
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    done = _fresh("import json, sys\n"
                  "from incrowd import read_table\n"
                  "from incrowd.generalization import local_suppression\n"
                  "result = local_suppression(read_table(sys.argv[1]), sys.argv[2].split(','), 3)\n"
                  "print(json.dumps([result.suppressed, 'numba' in sys.modules]))", str(testdata), ",".join(keys))
    suppressed, numba_loaded = json.loads(done.stdout)
    assert numba_loaded is False
    assert suppressed == local_suppression(read_table(testdata), keys, 3).suppressed
    assert sum(suppressed.values()) > 0


def test_the_household_release_with_cell_suppression_imports_no_numba(tmp_path):
    """The curator's household release (docs/guide/household-survey.md, section 7: the labelled
    .sav, cells blanked with a blank matching any value, household risk, a perturbation step)
    matches the combinations and reports its information loss on the compiled extension: the
    process never imports numba, and writes the table the command writes in this process."""
    import pyreadstat
    from _household import write_hierarchies, write_household
    from benchdata import data_dir
    from typer.testing import CliRunner

    from incrowd.cli import app

    if not (data_dir() / "testdata.csv").is_file():
        pytest.skip("benchmark data not found")
    page = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "household-survey.md").read_text("utf-8")
    section = page[page.index("## 7. The whole release"):]
    spec = section[section.index("```toml\n") + 8:section.index("```", section.index("```toml\n") + 8)]
    write_household(data_dir(), tmp_path / "household.sav")
    write_hierarchies(tmp_path / "hierarchies")
    (tmp_path / "release.toml").write_text(spec, encoding="utf-8")
    argv = ["publish", str(tmp_path / "household.sav"), "--spec", str(tmp_path / "release.toml"), "--json"]
    code, out, err, loaded = _loaded_by([*argv, "-o", str(tmp_path / "cli.sav")], ["numba"])
    assert (code, loaded) == (0, []), err
    assert json.loads(out)["k"] == 3
    done = CliRunner().invoke(app, [*argv, "-o", str(tmp_path / "here.sav")])
    assert done.exit_code == 0, done.output
    cli, _ = pyreadstat.read_sav(str(tmp_path / "cli.sav"), user_missing=True)
    here, _ = pyreadstat.read_sav(str(tmp_path / "here.sav"), user_missing=True)
    pd.testing.assert_frame_equal(cli, here)
    assert cli[["urbrur", "water", "sex", "age", "relat", "hhcivil"]].isna().to_numpy().any()  # cells blanked


def test_risk_of_adult_with_suda2_imports_no_numba(adult):
    """``incrowd risk`` of ARX's Adult (30,162 rows, its 8 QIs) with SUDA2 searches the minimal
    sample uniques and scores them on the compiled extension: the process never imports numba,
    and its figures are those the command gives in this process."""
    from typer.testing import CliRunner

    from incrowd.cli import app

    data, _ = adult
    argv = ["risk", str(data), "--qi", ",".join(ARX_QIS), "--json"]
    code, out, err, loaded = _loaded_by(argv, ["numba"])
    assert (code, err, loaded) == (0, "", [])
    got = json.loads(out)
    done = CliRunner().invoke(app, argv)
    assert done.exit_code == 0, done.output
    here = json.loads(done.stdout)
    assert got["summary"] == here["summary"] and got["summary"]["suda_records_with_msu"] > 0
    assert [r["suda_dis_score"] for r in got["riskiest"]] == [r["suda_dis_score"] for r in here["riskiest"]]

# seconds in all: the full suite (make test) runs them, the quick tier leaves them out
pytestmark = pytest.mark.slow
