"""The installed version, read from the package metadata (pyproject.toml is the one place it is written)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("incrowd")
except PackageNotFoundError:  # a source tree put on sys.path without being installed
    __version__ = "0+unknown"
