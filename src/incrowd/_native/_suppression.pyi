# The C extension _suppression.c. It takes any C-contiguous buffer of the right item size; the
# package passes numpy arrays (see __init__.py's wrappers), so that is what the types say.
from typing import Any

from numpy.typing import NDArray

def match_combinations(U: NDArray[Any], row: NDArray[Any], c: int, value: int, match_src: NDArray[Any],
                       match_dest: NDArray[Any]) -> None: ...
