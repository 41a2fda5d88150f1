"""Count how the package is coupled, read from the source with ``ast`` (nothing is imported).

Run from the repository root: ``python tools/architecture_scan.py [--json]``. Every import
statement counts, wherever it stands: at module level, inside functions and under
``if TYPE_CHECKING:``. A *package* is a unit ``incrowd.X`` (a subpackage or a root module).

The figures:
- package cycles: strongly connected groups of packages in the graph of every import;
- imports of another package's private module (``from incrowd.generalization._negotiate import``);
- private names (``_name``, not modules, not dunders such as ``__version__``) imported from
  another package;
- root modules besides ``__init__`` and ``exceptions``;
- files outside ``privacy/`` that handle l or t (by name: ``l_diversity``, ``t_closeness``,
  ``distinct_l``, an ``l``/``t`` parameter or attribute): a heuristic, stated as one;
- files outside ``io/`` that spell a file format's suffix in a string;
- ``DeprecationWarning`` sites; functions over 80 lines; ``duplicates`` pairs over ``src``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "incrowd"

SUFFIX = re.compile(r"""["'][^"'\n]*\.(csv|parquet|pq|sav|zsav|dta|sas7bdat|xpt|xport|gz|bz2|xz|zst|duckdb|tsv)\b[^"'\n]*["']""")
L_OR_T = re.compile(r"\b(l_diversity|t_closeness|distinct_l|ldiversity|tcloseness)\b"
                    r"|\b(l|t)\s*[:=]\s*(int|float|Optional|None|\d)|\.(l|t)\b(?!\s*\()|\[\s*[\"'](l|t)[\"']\s*\]")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def imports(path: Path, module: str | None = None) -> list[tuple[str, list[str]]]:
    """(imported module, imported names) for every import statement of the package's own
    modules in one file, wherever it stands: at module level, inside functions, under
    ``if TYPE_CHECKING:`` (what a type checker follows). ``module`` names the file when it lies
    outside ``src`` (a probe)."""
    module = module or module_name(path)
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] == "incrowd":
                found.append((target, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.split(".")[0] == "incrowd"]
    return found


def is_private(name: str) -> bool:
    """``_name``, not a dunder: ``__version__`` and ``__all__`` are public by convention."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def imported_modules(target: str, names: list[str]) -> list[tuple[str, list[str]]]:
    """One import statement as (module, names taken from it): ``from incrowd import _runtime`` is
    an import of the module ``incrowd._runtime``, not of the root package."""
    if not names:
        return [(target, [])]
    modules = [(f"{target}.{name}", []) for name in names if is_module(f"{target}.{name}")]
    rest = [name for name in names if not is_module(f"{target}.{name}")]
    return modules + ([(target, rest)] if rest else [])


def is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (SRC / rel).with_suffix(".py").is_file() or (SRC / rel / "__init__.py").is_file()


def package_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return groups


def duplicate_pairs() -> int | None:
    if shutil.which("duplicates") is None:
        return None
    out = subprocess.run(["duplicates", "--repo", str(SRC), "--most", "1", "--seconds", "120"],
                         capture_output=True, text=True, check=False).stdout
    match = re.search(r"(\d+) pairs?", out)
    return int(match.group(1)) if match else (0 if "no duplicates" in out else None)


def scan(with_duplicates: bool = True) -> dict:
    files = sorted(PACKAGE.rglob("*.py"))
    edges: dict[str, set[str]] = defaultdict(set)
    private_modules, private_names = [], []
    total = 0
    for path in files:
        mine = module_name(path)
        for statement, statement_names in imports(path):
            total += 1
            for target, names in imported_modules(statement, statement_names):
                theirs = unit(target)
                if theirs == unit(mine):
                    continue
                edges[unit(mine)].add(theirs)
                edges[theirs]  # noqa: B018 - every package is a node
                if any(p.startswith("_") for p in target.split(".")[2:]):
                    private_modules.append(f"{mine} -> {target}")
                private_names += [f"{mine} -> {target}.{name}" for name in names if is_private(name)]
    cycles = package_cycles(edges)
    root_modules = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "exceptions"))
    outside = [p for p in files if "privacy" not in p.relative_to(PACKAGE).parts]
    l_or_t = sorted(str(p.relative_to(SRC)) for p in outside if L_OR_T.search(p.read_text(encoding="utf-8")))
    suffix = sorted(str(p.relative_to(SRC)) for p in files
                    if p.relative_to(PACKAGE).parts[0] != "io" and SUFFIX.search(p.read_text(encoding="utf-8")))
    deprecations = sum(p.read_text(encoding="utf-8").count("DeprecationWarning") for p in files)
    long_functions = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > 80:
                    long_functions.append(f"{module_name(path)}.{node.name} ({lines})")
    return {
        "lines": sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files),
        "internal imports": total,
        "package cycles": len(cycles),
        "packages in cycles": sum(len(c) for c in cycles),
        "imports of another package's _ module": len(private_modules),
        "_-named functions imported across packages": len(private_names),
        "root modules besides __init__ and exceptions": len(root_modules),
        "files outside privacy/ that handle l or t": len(l_or_t),
        "files outside io/ that spell a format suffix": len(suffix),
        "DeprecationWarning sites": deprecations,
        "functions over 80 lines": len(long_functions),
        "duplicates pairs (src)": duplicate_pairs() if with_duplicates else None,
        "details": {"cycles": cycles, "private modules": private_modules, "private names": private_names,
                    "root modules": root_modules, "l or t": l_or_t, "format suffix": suffix,
                    "long functions": long_functions},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print every figure and its details as JSON")
    parser.add_argument("--no-duplicates", action="store_true", help="leave out the duplicates count")
    args = parser.parse_args()
    found = scan(with_duplicates=not args.no_duplicates)
    if args.json:
        print(json.dumps(found, indent=1))
        return
    print("| figure | count |\n| --- | ---: |")
    for key, value in found.items():
        if key != "details":
            print(f"| {key} | {value} |")
    for cycle in found["details"]["cycles"]:
        print("cycle:", " <-> ".join(cycle))


if __name__ == "__main__":
    main()
