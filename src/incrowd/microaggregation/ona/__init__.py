"""ONA and ONA*: the estimators (``ona``), the local search (``_ona_kernel``) and its fast pass
(``_ona_star_fast``).

Imports the package root's shared helpers and ``greedy`` (the starting partitions).
"""

from __future__ import annotations

from .ona import ONA, ONAStar

__all__ = ["ONA", "ONAStar"]
