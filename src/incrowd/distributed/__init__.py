"""Scale-out on Dask (optional extra ``incrowd[dask]``): MONA / MONA 2D with the
single-machine groups, over row blocks on a ``dask.distributed`` cluster.

- :func:`connect`: a client for ``local:N`` (a LocalCluster of N workers) or a scheduler address;
- :func:`mona`: distributed MONA_rho / MONA 2D_rho (:class:`DistributedResult`).

The block functions in ``incrowd.distributed._blocks`` are pure functions of numpy arrays, the
seam for other engines (docs/scale-out.md).
"""

from ._cluster import connect
from ._mona import DistributedResult, mona

__all__ = ["connect", "mona", "DistributedResult"]
