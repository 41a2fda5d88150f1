# The C extension _kernels.c. It takes any C-contiguous buffer of the right item size; the package
# passes numpy arrays (see __init__.py's wrappers), so that is what the types say.
from typing import Any

from numpy.typing import NDArray

def node_groups(codes0: NDArray[Any], m: int, first_key: NDArray[Any], maps: NDArray[Any], maps_columns: int,
                map_rows: NDArray[Any], widths: NDArray[Any], gid: NDArray[Any], group_key: NDArray[Any],
                group_first: NDArray[Any]) -> int: ...
def mdav_labels(X: NDArray[Any], m: int, k: int, labels: NDArray[Any]) -> None: ...
def group_sums(X: NDArray[Any], m: int, labels: NDArray[Any], g: int, inverse_units: NDArray[Any] | None,
               sums: NDArray[Any]) -> None: ...
