"""Scale-out on Dask (optional extra ``incrowd[dask]``): MONA / MONA 2D with the
single-machine groups, over row blocks on a ``dask.distributed`` cluster.

- :func:`connect`: a client for ``local:N`` (a LocalCluster of N workers) or a scheduler address;
- :func:`mona`: distributed MONA_rho / MONA 2D_rho (:class:`DistributedResult`);
- :func:`incrowd.generalization.build_lattice` with ``client=``: lattice histograms from
  partitioned data (the single-machine lattice);
- :func:`microaggregate_dataset`: a Parquet dataset in, a verified Parquet dataset out,
  partition by partition;
- :func:`publish_dataset` (also ``incrowd.publish(..., scheduler=, output=)``): a partitioned
  dataset published (generalize-then-microaggregate) into a verified Parquet dataset;
- :func:`risk_dataset` (also ``incrowd.risk(..., scheduler=)``): the re-identification risk of a
  partitioned dataset (a folder or glob of CSV or Parquet files), no process holding the file;
- :func:`report_dataset` (also ``incrowd.report(..., scheduler=)``): the report of a partitioned
  release beside its partitioned original, from per-partition partial results.

The block functions in ``incrowd.distributed._blocks`` are pure functions of numpy arrays, the
seam for other engines (docs/scale-out.md). Importing this package registers it as the
execution backend ``"dask"`` (``incrowd._runtime._backends``): ``microaggregate(...,
scheduler=...)`` and ``build_lattice(..., client=...)`` look it up by name.

The names load on first use, so that the command line checks a ``--scheduler`` address
(``parse_scheduler``, ``check_timeout``: the internal API, not in ``__all__``) without loading
the kernels.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import backends as _backends
from .._runtime import lazy as _lazy

if _TYPE_CHECKING:
    from ._cluster import connect
    from ._files import microaggregate_dataset
    from ._mona import DistributedResult, mona
    from ._publish import publish_dataset
    from ._report import report_dataset
    from ._risk import risk_dataset
    from ._scheduler import check_timeout as check_timeout
    from ._scheduler import parse_scheduler as parse_scheduler

__getattr__, __dir__ = _lazy.attach(__name__, {
    "connect": "._cluster", "microaggregate_dataset": "._files", "DistributedResult": "._mona", "mona": "._mona",
    "risk_dataset": "._risk", "publish_dataset": "._publish", "report_dataset": "._report",
    # the internal API: the command line's check of --scheduler and --scheduler-timeout
    "parse_scheduler": "._scheduler", "check_timeout": "._scheduler",
})


class _DaskBackend:
    """What the orchestration layer calls through ``_backends.get("dask")``."""

    name = "dask"

    @staticmethod
    def fit(estimator, values, scheduler):
        from ._mona import fit_distributed

        return fit_distributed(estimator, values, scheduler)

    @staticmethod
    def build_lattice(data, quasi_identifiers, *, client, **kwargs):
        from ._lattice import lattice_on_workers

        return lattice_on_workers(data, quasi_identifiers, client=client, **kwargs)

    @staticmethod
    def risk(data, quasi_identifiers, *, scheduler, **kwargs):
        from ._risk import risk_dataset

        return risk_dataset(data, quasi_identifiers, scheduler=scheduler, **kwargs)

    @staticmethod
    def publish(data, spec, *, scheduler, **kwargs):
        from ._publish import publish_dataset

        return publish_dataset(data, spec, scheduler=scheduler, **kwargs)

    @staticmethod
    def report(original, release, quasi_identifiers, sensitive=None, identifiers=None, *, scheduler, **kwargs):
        from ._report import report_dataset

        return report_dataset(original, release, quasi_identifiers, sensitive, identifiers, scheduler=scheduler,
                              **kwargs)


_backends.register("dask", _DaskBackend())


__all__ = ["connect", "mona", "DistributedResult", "microaggregate_dataset", "risk_dataset", "publish_dataset",
           "report_dataset"]
