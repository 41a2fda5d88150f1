# The C extension _sensitive.c. It takes any C-contiguous buffer of the right item size; the package
# passes numpy arrays (see __init__.py's wrappers), so that is what the types say.
from typing import Any

from numpy.typing import NDArray

def sensitive_counts(class_of: NDArray[Any], n_classes: int, pair_b: NDArray[Any], pair_val: NDArray[Any],
                     pair_cnt: NDArray[Any], reference: NDArray[Any], ordered: bool, missing: bool, with_t: bool,
                     distinct_out: NDArray[Any], distance: NDArray[Any]) -> None: ...
def dense_status(counts: NDArray[Any], reference: NDArray[Any], ordered: bool, missing: bool,
                 distinct: NDArray[Any], distance: NDArray[Any]) -> None: ...
def nearest_slots(cent: NDArray[Any], slots: int, lo: int, n: int, own: int, out: NDArray[Any]) -> int: ...
def centroid_tree(points: NDArray[Any], m: int, leaf: int, perm: NDArray[Any], lo: NDArray[Any],
                  hi: NDArray[Any]) -> None: ...
def centroid_nearest(points: NDArray[Any], m: int, leaf: int, perm: NDArray[Any], lo: NDArray[Any], hi: NDArray[Any],
                     alive: NDArray[Any], q: NDArray[Any], exclude: int, extra: NDArray[Any], n_extra: int,
                     exclude_extra: int, out: NDArray[Any]) -> int: ...
