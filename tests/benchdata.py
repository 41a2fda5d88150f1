"""Where the tests find the benchmark data (``$INCROWD_DATA``, else ``../shared/data``)."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """Benchmark data folder: ``$INCROWD_DATA``, else ``../shared/data`` beside the checkout.

    "Beside the checkout" is tried from the working directory first, then from this file
    (an editable install run from elsewhere). The returned folder may not exist.
    """
    env = os.environ.get("INCROWD_DATA")
    if env:
        return Path(env)
    candidates = [Path.cwd().parent / "shared" / "data", Path(__file__).resolve().parents[2] / "shared" / "data"]
    for folder in candidates:
        if folder.is_dir():
            return folder
    return candidates[0]
