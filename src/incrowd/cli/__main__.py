"""``python -m incrowd.cli`` runs the same command line as ``incrowd``."""

from . import run

run()
