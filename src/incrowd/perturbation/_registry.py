"""The methods by key, read from the package's files (see :func:`._base.methods`)."""

from ._base import methods

#: every perturbation method by its key (the spec's ``method``)
METHODS = methods()
