"""A scikit-learn-compatible estimator base that does not import scikit-learn.

``sklearn.base`` pulls in scipy (``sklearn.utils`` imports ``scipy.stats`` and
``scipy.sparse``): about a second of CPU in a fresh process, most of what ``incrowd
microaggregate`` spent before it read a byte. What the estimators need from it is small and
written down by scikit-learn's developer guide: parameters are the ``__init__`` arguments,
stored as given; ``get_params`` / ``set_params`` read and write them (nested with ``__``);
``clone`` rebuilds from ``get_params``; tags come from ``__sklearn_tags__``. This class does
exactly that; scikit-learn is imported only when scikit-learn itself asks for the tags, so
``sklearn.base.clone``, ``Pipeline``, ``GridSearchCV`` and the ``estimator_checks`` work as
with ``BaseEstimator``.

What differs: ``isinstance(est, sklearn.base.BaseEstimator)`` is False (scikit-learn's own
meta-estimators duck-type and never ask), and a notebook shows the text repr rather than
scikit-learn's HTML diagram.
"""

from __future__ import annotations

import inspect
from typing import Any


class Estimator:
    """get_params / set_params / repr / tags in scikit-learn's conventions."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        init = cls.__init__
        if init is object.__init__:
            return []
        params = [p for p in inspect.signature(init).parameters.values()
                  if p.name != "self" and p.kind != p.VAR_KEYWORD]
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(f"{cls.__name__}.__init__ must not take *args: parameters are named")
        return sorted(p.name for p in params)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params):
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            key, delim, sub_key = key.partition("__")
            if key not in valid:
                names = self._get_param_names()
                raise ValueError(f"Invalid parameter {key!r} for estimator {self}. "
                                 f"Valid parameters are: {names!r}.")
            if delim:
                nested.setdefault(key, {})[sub_key] = value
            else:
                setattr(self, key, value)
                valid[key] = value
        for key, sub_params in nested.items():
            valid[key].set_params(**sub_params)
        return self

    def __repr__(self) -> str:
        # scikit-learn's default (print_changed_only): only parameters that differ from __init__'s
        defaults = {name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()}
        changed = []
        for key, value in self.get_params(deep=False).items():
            default = defaults.get(key, inspect.Parameter.empty)
            if value is default or (not _is_array(value) and repr(value) == repr(default)):
                continue
            changed.append(f"{key}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        # only scikit-learn calls this, so importing it here costs nothing anyone else pays
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False))


class ClusterTags:
    """Mixin: the tags of scikit-learn's ``ClusterMixin`` (an estimator that groups rows)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "clusterer"
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = []
        return tags


def _is_array(value) -> bool:
    return hasattr(value, "__array__") and not isinstance(value, (str, bytes))
