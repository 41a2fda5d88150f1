# The C extension _measures.c. It takes any C-contiguous buffer of the right item size; the package
# passes numpy arrays (see __init__.py's wrappers), so that is what the types say.
from typing import Any

from numpy.typing import NDArray

def squared_deviations(X: NDArray[Any], m: int, group: NDArray[Any], centers: NDArray[Any]) -> float: ...
