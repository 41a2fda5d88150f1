"""Scale-out on Dask (optional extra ``incrowd[dask]``): MONA / MONA 2D with the
single-machine groups, over row blocks on a ``dask.distributed`` cluster.

- :func:`connect`: a client for ``local:N`` (a LocalCluster of N workers) or a scheduler address;
- :func:`mona`: distributed MONA_rho / MONA 2D_rho (:class:`DistributedResult`);
- :func:`build_lattice`: lattice histograms from partitioned data (the single-machine lattice);
- :func:`microaggregate_dataset`: a Parquet dataset in, a verified Parquet dataset out,
  partition by partition.

The block functions in ``incrowd.distributed._blocks`` are pure functions of numpy arrays, the
seam for other engines (docs/scale-out.md).
"""

from ._cluster import connect
from ._files import microaggregate_dataset
from ._lattice import build_lattice
from ._mona import DistributedResult, mona

__all__ = ["connect", "mona", "DistributedResult", "build_lattice", "microaggregate_dataset"]
