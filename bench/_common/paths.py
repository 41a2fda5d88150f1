"""Where the bench scripts read and write."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
FIGURES = DOCS / "figures"
