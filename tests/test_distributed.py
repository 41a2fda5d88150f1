"""Distributed MONA on a LocalCluster of 2 worker processes: the same groups as one machine,
and a worker killed mid-run changes nothing."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

pytest.importorskip("distributed")
from _dask_tests import client  # noqa: E402,F401
from _thresholds import thresholds  # noqa: E402
from benchdata import data_dir  # noqa: E402

from incrowd import MONA, MONA2D, microaggregate, verify_k_anonymity  # noqa: E402
from incrowd.distributed import connect, mona  # noqa: E402
from incrowd.exceptions import ParameterError  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]


def single_machine(X, k, rho, diagonals):
    est = MONA(k, rho=rho) if diagonals is None else MONA2D(k, rho=rho, diagonals=diagonals)
    return est.fit(X)


@pytest.mark.parametrize("shape,k,rho,diagonals,part_rows,blocks", [
    ((12000, 4), 5, 0.5, None, 1000, 5),
    ((6000, 3), 3, 0.4, "sum", 500, 4),
    ((5000, 3), 4, 0.6, "unit", 800, 3),
    # high rho: ONA* takes whole leaves (the parts it is given are larger than a worker's part)
    ((20000, 4), 10, 0.8, None, 3000, 4),
    ((16000, 4), 5, 0.9, None, 2500, 3),
])
def test_gaussian_groups_equal_single_machine(client, shape, k, rho, diagonals, part_rows, blocks):
    X = np.random.default_rng(shape[0]).standard_normal(shape) * [1, 10, 100, 1000][: shape[1]]
    got = mona(np.array_split(X, blocks), k, client=client, rho=rho, diagonals=diagonals, part_rows=part_rows)
    ref = single_machine(X, k, rho, diagonals)
    assert got.distributed_cuts > 0 and got.leaf_parts > 1
    assert np.array_equal(got.labels, ref.labels_)
    assert np.array_equal(got.group_sizes, ref.group_sizes_)
    assert got.information_loss == pytest.approx(ref.information_loss_, rel=1e-9)
    assert np.allclose(got.centroids, ref.centroids_, rtol=1e-12, atol=1e-9)


def test_tied_integer_data_equal_single_machine(client):
    # few distinct values: medians straddle runs of equal rows, ordered by the ancestors' cuts
    X = np.random.default_rng(7).integers(0, 4, (6000, 3)).astype(float)
    got = mona(np.array_split(X, 6), 4, client=client, rho=0.3, part_rows=400)
    ref = single_machine(X, 4, 0.3, None)
    assert got.tied_cuts > 0
    assert np.array_equal(got.labels, ref.labels_)


def test_adult_groups_equal_single_machine(client):
    path = data_dir() / "adult.csv.gz"
    if not path.is_file():
        pytest.skip(f"{path} is absent (set INCROWD_DATA)")
    import pandas as pd

    X = pd.read_csv(path)[["age", "education-num", "hours-per-week"]].to_numpy(float)
    got = mona(np.array_split(X, 8), 5, client=client, rho=0.5, part_rows=3000)
    ref = single_machine(X, 5, 0.5, None)
    assert got.tied_cuts > 0
    assert np.array_equal(got.labels, ref.labels_)


def test_a_worker_killed_mid_run_changes_nothing(client):
    X = np.random.default_rng(11).standard_normal((8000, 3))
    pids = client.run(os.getpid)
    killed = []

    def kill_one(round_number):
        if round_number == 1:  # after the first cut: blocks, Z and part ids live on the workers
            victim = sorted(pids.values())[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    got = mona(np.array_split(X, 4), 4, client=client, rho=0.5, part_rows=600, on_round=kill_one)
    assert killed
    client.wait_for_workers(2, timeout=60)
    assert killed[0] not in client.run(os.getpid).values()  # the nanny started a fresh process
    ref = single_machine(X, 4, 0.5, None)
    assert np.array_equal(got.labels, ref.labels_)
    assert got.group_sizes.min() >= 4 and got.group_sizes.sum() == 8000
    assert verify_k_anonymity(got.centroids[got.labels], None, 4).ok


def test_one_call_api_with_a_scheduler(client):
    X = np.random.default_rng(3).standard_normal((3000, 3))
    local = microaggregate(X, 5, "mona", rho=0.5)
    spread = microaggregate(X, 5, "mona", rho=0.5, scheduler=client)
    assert np.array_equal(local.labels, spread.labels)
    assert spread.verification.ok and spread.timings.get("distributed_cuts") is not None
    with pytest.raises(ParameterError, match="--scheduler runs the MONA methods only"):
        microaggregate(X, 5, "mdav", scheduler=client)


def test_a_hosts_cores_are_shared_among_its_workers_threads():
    from incrowd.distributed._mona import share_threads

    two_alone = share_threads({"a": ("h1", 1), "b": ("h1", 1)}, {"a": 2, "b": 2})
    assert two_alone == {"a": 1, "b": 1}  # not two busy threads per task on two cores
    assert share_threads({"a": ("h1", 1)}, {"a": 8}) == {"a": 8}  # a lone worker keeps the cores
    assert share_threads({"a": ("h1", 2), "b": ("h2", 1)}, {"a": 8, "b": 8}) == {"a": 4, "b": 8}
    assert share_threads({"a": ("h1", 3), "b": ("h1", 3)}, {"a": 4, "b": 4}) == {"a": 1, "b": 1}
    assert share_threads({"a": ("h1", 1)}, {}) == {"a": 1}  # a worker that did not answer


def test_each_leaf_task_runs_on_its_share_of_the_threads(client):
    import numba

    from incrowd.distributed import _blocks
    from incrowd.distributed._mona import task_threads

    shares = task_threads(client)
    cores = client.run(lambda: numba.config.NUMBA_NUM_THREADS)
    assert set(shares) == set(cores)
    assert all(shares[a] == max(1, cores[a] // len(cores)) for a in shares)  # two 1-thread workers, one host

    def seen_inside(threads):
        import numba as nb

        from incrowd.microaggregation.mondrian._mondrian_kernel import RULE_VARIANCE

        real = _blocks.mona_part_labels
        seen = []

        def spy(*args, **kwargs):
            seen.append(nb.get_num_threads())
            return real(*args, **kwargs)

        _blocks.mona_part_labels = spy
        try:
            X = np.random.default_rng(5).standard_normal((400, 3))
            before = nb.get_num_threads()
            out = _blocks.local_mona(5, RULE_VARIANCE, 400, 1.0, False, True, 10, np.zeros(0, np.int64), threads, X)
            after = nb.get_num_threads()
        finally:
            _blocks.mona_part_labels = real
        return seen[0], before, after, out[0]

    inside, before, after, labels = client.submit(seen_inside, shares, pure=False).result()
    assert before == after  # the worker thread's own count is restored
    assert inside in shares.values()
    inside_one, _, _, labels_one = client.submit(seen_inside, 1, pure=False).result()
    assert inside_one == 1 and np.array_equal(labels, labels_one)


def test_bad_scheduler_specs():
    for spec, message in (("local:0", "N >= 1"), ("nowhere", "must be 'local:N' or a scheduler address")):
        with pytest.raises(ParameterError, match=message):
            with connect(spec):
                pass


def test_cli_scheduler_option(tmp_path):
    import json

    import pandas as pd
    from typer.testing import CliRunner

    from incrowd.cli import app

    X = np.random.default_rng(5).standard_normal((2000, 3))
    pd.DataFrame(X, columns=["a", "b", "c"]).assign(name=[f"p{i}" for i in range(2000)]).to_csv(
        tmp_path / "in.csv", index=False)
    out = CliRunner().invoke(app, ["microaggregate", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"),
                                   "--k", "4", "--method", "mona", "--qi", "a,b,c", "--id", "name",
                                   "--scheduler", "local:2", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    ref = MONA(4, rho=0.5).fit(X)
    assert report["groups"] == ref.n_groups_ and report["k_anonymous"]
    assert report["information_loss"] == pytest.approx(ref.information_loss_, rel=1e-9)
    published = pd.read_csv(tmp_path / "out.csv")
    assert list(published.columns) == ["a", "b", "c"] and verify_k_anonymity(published, None, 4).ok
    bad = CliRunner().invoke(app, ["microaggregate", str(tmp_path / "in.csv"), "-o", str(tmp_path / "x.csv"),
                                   "--k", "4", "--method", "mdav", "--scheduler", "local:2"])
    assert bad.exit_code == 2 and "--scheduler runs the MONA methods only" in bad.stderr
    assert not (tmp_path / "x.csv").exists()


# -- lattices and Parquet datasets ---------------------------------------------------------

def _same_lattice(a, b) -> None:
    for name in ("n_classes", "materialized", "bottom_codes", "bottom_counts", "score"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for hist in ("k_histograms", "l_histograms"):
        ha, hb = getattr(a, hist), getattr(b, hist)
        assert (ha is None) == (hb is None)
        if ha is not None:
            for name in ("offsets", "keys", "classes", "rows"):
                assert np.array_equal(getattr(ha, name), getattr(hb, name)), (hist, name)
    assert a.level_scores.equals(b.level_scores)
    assert a.attributes == b.attributes and a.n_rows == b.n_rows and a.sensitive_values == b.sensitive_values
    # what t needs: the sensitive values in code order and t's distance
    assert a.sensitive_order == b.sensitive_order and a.sensitive_ordered == b.sensitive_ordered
    assert a.sensitive_missing == b.sensitive_missing


def test_lattice_equals_single_machine_on_arx_adult(client, tmp_path):
    import pandas as pd

    from incrowd.generalization import Lattice, build_lattice

    folder = data_dir() / "adult_arx"
    if not (folder / "adult.csv").is_file():
        pytest.skip(f"ARX Adult is not in {folder}")
    data = pd.read_csv(folder / "adult.csv", sep=";")
    qis = ["age", "education", "marital-status", "native-country", "occupation", "race", "sex", "workclass"]
    dataset = tmp_path / "adult_parts"
    dataset.mkdir()
    for i, (a, b) in enumerate([(0, 9000), (9000, 21000), (21000, len(data))]):
        data.iloc[a:b].to_parquet(dataset / f"part-{i}.parquet", index=False)
    for kwargs in ({}, {"sensitive": "salary-class"}, {"fraction": 0.1}):
        local = Lattice.build(data, qis, hierarchies=str(folder), **kwargs)
        spread = build_lattice(str(dataset), qis, client=client, hierarchies=str(folder), **kwargs)
        local.save(tmp_path / "local.lattice")
        spread.save(tmp_path / "spread.lattice")
        _same_lattice(Lattice.open(tmp_path / "local.lattice"), Lattice.open(tmp_path / "spread.lattice"))
        (tmp_path / "local.lattice").unlink()
        (tmp_path / "spread.lattice").unlink()


def test_lattice_with_missing_sensitive_values_equals_single_machine(client, tmp_path):
    """Missing sensitive values (system missing, the text NA) in several partitions are one
    missing value, never distinct for l, as in process; an order given for t is kept."""
    import pandas as pd

    from incrowd.generalization import Lattice, build_lattice
    from incrowd.generalization._hierarchy import hierarchy_from_rows

    rng = np.random.default_rng(4)
    n = 600
    frame = pd.DataFrame({"region": rng.choice(["n1", "n2", "s1"], n),
                          "grade": rng.choice(["low", "mid", "high", None, "NA"], n, p=[.3, .3, .2, .1, .1])})
    frame.loc[frame.region == "s1", "grade"] = rng.choice(["high", None], int((frame.region == "s1").sum()))
    hier = {"region": hierarchy_from_rows("region", [["n1", "n", "*"], ["n2", "n", "*"], ["s1", "s", "*"]],
                                          "region")}
    parts = [frame.iloc[a:b].reset_index(drop=True) for a, b in ((0, 200), (200, 390), (390, n))]
    for order in (None, ["low", "mid", "high"]):
        local = Lattice.build(frame, ["region"], hierarchies=hier, sensitive="grade", sensitive_order=order)
        spread = build_lattice(parts, ["region"], client=client, hierarchies=hier, sensitive="grade",
                               sensitive_order=order)
        assert local.sensitive_missing and local.sensitive_values == 3
        _same_lattice(local, spread)
        assert spread.negotiate(k=5, max_suppression=60, models=thresholds(l=2, t=0.2)).to_dict()["exact"] == \
            local.negotiate(k=5, max_suppression=60, models=thresholds(l=2, t=0.2)).to_dict()["exact"]


def test_lattice_cli_with_a_scheduler_address(client, tmp_path):
    import json

    import pandas as pd
    from typer.testing import CliRunner

    from incrowd.cli import app
    from incrowd.generalization import Lattice

    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"age": rng.integers(18, 80, 3000), "region": rng.choice(["n1", "n2", "s1"], 3000),
                          "disease": rng.choice(["flu", "cold", "none"], 3000)})
    dataset = tmp_path / "people"
    dataset.mkdir()
    for i, part in enumerate(np.array_split(np.arange(3000), 4)):
        frame.iloc[part].to_parquet(dataset / f"p{i}.parquet", index=False)
    hier = tmp_path / "hier"
    hier.mkdir()
    (hier / "region.csv").write_text("n1;north;*\nn2;north;*\ns1;south;*\n")
    args = ["lattice", "build", str(dataset), "--qi", "age,region", "--hierarchies", str(hier),
            "--intervals", "age=5,10,20", "--sensitive", "disease", "--json"]
    out = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "spread.lattice"), "--scheduler",
                                   client.scheduler.address])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["nodes"] == 15
    local = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "local.lattice")])  # a folder, in process
    assert local.exit_code == 0, local.output
    _same_lattice(Lattice.open(tmp_path / "local.lattice"), Lattice.open(tmp_path / "spread.lattice"))


def test_parquet_dataset_in_and_out(client, tmp_path):
    import json

    import pandas as pd
    from typer.testing import CliRunner

    from incrowd.cli import app

    rng = np.random.default_rng(9)
    n = 6000
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(n)], "x": rng.standard_normal(n),
                          "y": rng.standard_normal(n) * 50, "z": rng.integers(0, 20, n), "note": rng.choice(["a", "b"], n)})
    source = tmp_path / "in"
    source.mkdir()
    for i, part in enumerate(np.array_split(np.arange(n), 3)):
        frame.iloc[part].to_parquet(source / f"part-{i}.parquet", index=False)
    target = tmp_path / "out"
    args = ["microaggregate", str(source), "-o", str(target), "--k", "5", "--method", "mona", "--rho", "0.5",
            "--qi", "x,y,z", "--id", "id", "--scheduler", client.scheduler.address, "--json"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    info = json.loads(out.stdout)
    assert info["partitions"] == 3 and info["rows"] == n and info["k_anonymous"]
    assert sorted(f.name for f in target.iterdir()) == [f"part-{i:05d}.parquet" for i in range(3)]
    published = pd.read_parquet(target)
    assert list(published.columns) == ["x", "y", "z", "note"]
    assert published["note"].tolist() == frame["note"].tolist()  # other columns pass, row order kept
    ref = microaggregate(frame, 5, "mona", quasi_identifiers=["x", "y", "z"], identifiers=["id"], rho=0.5)
    assert np.allclose(published[["x", "y", "z"]].to_numpy(), ref.table[["x", "y", "z"]].to_numpy(),
                       rtol=1e-12, atol=1e-9)
    assert verify_k_anonymity(published, ["x", "y", "z"], 5).ok
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 2 and "already exists" in again.stderr
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".out.")]  # no staging folder left
