"""Perturbation of non-key columns: one method per file behind one interface.

- :func:`perturb`: a table and a list of steps in, the perturbed table and what each step did
  out (:class:`PerturbResult`, one :class:`StepReport` per step);
- :func:`perturb_values`: one method on one column given alone (a Series or a 1-D array), its
  new values out, as ``perturb`` gives them on a table;
- :data:`METHODS` (also read by ``methods()``): every method by key, each a public module of
  this package holding one :class:`Method` (``noise``, ``rank_swap``, ``shuffle``,
  ``top_code``, ``bottom_code``, ``round``, ``pram``, ``record_swap``, ``microaggregation``);
  a new method is one new file.

The internal API (not public, not in ``__all__``), for the spec's ``[[perturb]]`` steps in
``publishing/``: ``check_steps(steps, where)`` (one error naming the step, the key and what is
allowed), ``Step``, ``STEP_KEYS``, ``Param``, ``REQUIRED``; for the web's upload of a PRAM matrix,
``read_matrix(path, where)`` (the categories and the matrix, or one error naming the problem).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._runtime import lazy as _lazy

if _TYPE_CHECKING:
    from ._base import REQUIRED as REQUIRED
    from ._base import STEP_KEYS as STEP_KEYS
    from ._base import Method
    from ._base import Param as Param
    from ._perturb import PerturbResult, StepReport, perturb, perturb_values
    from ._perturb import Step as Step
    from ._perturb import check_steps as check_steps
    from ._registry import METHODS
    from .pram import read_matrix as read_matrix

__getattr__, __dir__ = _lazy.attach(__name__, {
    "perturb": "._perturb", "perturb_values": "._perturb", "PerturbResult": "._perturb", "StepReport": "._perturb",
    "Method": "._base", "METHODS": "._registry",
    # the internal API (see above)
    "check_steps": "._perturb", "Step": "._perturb", "STEP_KEYS": "._base", "Param": "._base",
    "REQUIRED": "._base", "read_matrix": ".pram",
})

__all__ = ["perturb", "perturb_values", "PerturbResult", "StepReport", "Method", "METHODS"]
