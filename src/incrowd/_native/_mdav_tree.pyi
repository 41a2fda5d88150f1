# The C extension _mdav_tree.c. It takes any C-contiguous buffer of the right item size; the package
# passes numpy arrays (see __init__.py's wrappers), so that is what the types say.
from typing import Any

from numpy.typing import NDArray

def mdav_tree_labels(X: NDArray[Any], m: int, k: int, leaf: int, labels: NDArray[Any]) -> int: ...
