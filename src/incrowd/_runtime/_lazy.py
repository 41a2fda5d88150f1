"""Load on first use: package names (PEP 562) and stand-ins for functions of heavy modules.

A command-line call should pay only for what it runs: ``incrowd --version`` needs neither
pandas nor numba, ``incrowd negotiate`` no scikit-learn. Packages list their public names with
the module that defines each and load that module when a name is first looked up; the CLI
modules bind stand-ins that import the real function when first called (and stay patchable by
name, as tests do).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any, Callable, Iterable, Mapping


def attach(package: str, names: Mapping[str, str], submodules: Iterable[str] = (),
           modules: Mapping[str, str] | None = None):
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps a public name to the
    (relative) module defining it, or to ``"module:attribute"`` where the package names it
    differently; ``modules`` maps a name to a (relative) module given as a whole (a namespace
    whose state is shared, such as ``_runtime.process``); any submodule of the package is
    loaded when looked up."""
    modules = dict(modules or {})
    listed = set(names) | set(submodules) | set(modules)

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is not None or name in modules:
            if module is None:
                value = importlib.import_module(modules[name], package)
            else:
                module, _, attribute = module.partition(":")
                value = getattr(importlib.import_module(module, package), attribute or name)
            setattr(sys.modules[package], name, value)  # later lookups are plain attribute reads
            return value
        if not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | listed)

    return __getattr__, __dir__


def function(module: str, name: str) -> Callable[..., Any]:
    """A stand-in for ``module.name`` (a function) that imports ``module`` on its first call."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{module}.{name}, imported when first called."
    return call


class module:  # noqa: N801  (used like the module it stands for: ``pd = _lazy.module("pandas")``)
    """A stand-in for a module, imported on first attribute access (``pd.DataFrame``)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"
