"""What the scripts write: Markdown tables and sections, figures, raw results as JSON."""

from __future__ import annotations

import fcntl
import json
import os
import re
from contextlib import contextmanager
from pathlib import Path

from incrowd.cli._bench_entry import atomic_output, write_text_atomic


def md_table(header: list[str], rows: list[list[object]], align: str | None = None) -> str:
    """A GitHub Markdown table; ``align`` is one char per column: l, r or c."""
    align = align or "l" * len(header)
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)


def write_markdown(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` atomically: a temporary file in the same folder, then ``os.replace``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(target, text if text.endswith("\n") else text + "\n")


@contextmanager
def _locked(path: Path):
    """An exclusive lock on the folder of ``path`` (flock on the directory itself, so no lock
    file is left behind), so concurrent scripts do not lose each other's sections."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def update_section(path: str | os.PathLike, name: str, body: str, title: str) -> Path:
    """Replace the section ``name`` of a Markdown file, leaving every other section alone.

    The section is everything between ``<!-- BEGIN name -->`` and ``<!-- END name -->``. A file
    that does not exist yet is created with ``# title``; a section that is not in the file yet
    is appended at the end.
    """
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"section name must be [A-Za-z0-9_.-]+; got {name!r}")
    target = Path(path)
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    block = f"{begin}\n{body.strip()}\n{end}"
    with _locked(target):
        text = target.read_text(encoding="utf-8") if target.exists() else f"# {title}\n"
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
        if pattern.search(text):
            text = pattern.sub(lambda _m: block, text, count=1)
        else:
            text = text.rstrip("\n") + "\n\n" + block + "\n"
        write_markdown(target, text)
    return target


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | os.PathLike, **savefig) -> Path:
    """Save ``fig`` as PNG atomically (a temporary file in the same folder, then os.replace),
    then close it."""
    import matplotlib.pyplot as plt

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(target) as tmp:
        fig.savefig(tmp, format="png", **savefig)
    plt.close(fig)
    return target


def save_json(path: str | os.PathLike, data: object, indent: int | None = 1) -> Path:
    """Raw results, so a page can be redrawn without measuring again."""
    return write_markdown(path, json.dumps(data, indent=indent))


def load_json(path: str | os.PathLike) -> object:
    return json.loads(Path(path).read_text(encoding="utf-8"))
