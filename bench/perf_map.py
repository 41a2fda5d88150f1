"""Name numba's compiled code for ``perf``, down to the instruction.

``perf record`` samples numba kernels as bare addresses: their code lives in anonymous memory,
and this VM has no hardware counters, so neither symbols nor ``perf annotate`` are at hand. This
tool fills both gaps with the software clock (``-e cpu-clock``):

1. In the process to profile, after its kernels have compiled *in this process* (point
   ``NUMBA_CACHE_DIR`` at an empty folder: a kernel loaded from numba's cache keeps no object
   code), call :func:`write_perf_map`. It writes ``/tmp/perf-<pid>.map``, which ``perf report``
   reads for symbols, and keeps each library's object file for step 3.
2. ``perf record -e cpu-clock -F 1999 -p <pid> -o run.data`` while the work runs.
3. ``python bench/perf_map.py annotate run.data SYMBOL_REGEX OUT_DIR``: the samples of each
   matching function against its disassembly, one file per function, hottest lines first.

Every function of one object file is loaded as one block, so a symbol's address is the
library's base (from one function numba can look up) plus its offset in the object.
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path


def _symbols(obj: Path) -> list[tuple[int, int, str, str]]:
    """(offset, size, type, name) of the functions an object file defines."""
    out = subprocess.run(["nm", "-S", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            rows.append((int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]))
    return rows


def write_perf_map(out_dir: str | Path) -> Path:
    """Write ``/tmp/perf-<pid>.map`` for every numba library compiled in this process; the object
    files and an index (``symbols.json``) go to ``out_dir``."""
    from numba.core.codegen import CPUCodeLibrary

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    libraries = [o for o in gc.get_objects() if isinstance(o, CPUCodeLibrary)]
    for number, lib in enumerate(libraries):
        try:
            code = lib._get_compiled_object()  # private, but the only way to the machine code
        except Exception:
            continue  # loaded from the cache, or never finalized
        obj = out_dir / f"lib_{number}.o"
        obj.write_bytes(code)
        rows = _symbols(obj)
        base = None
        for offset, _, kind, name in rows:
            if kind == "T":
                try:
                    base = lib.get_pointer_to_function(name) - offset
                    break
                except Exception:
                    continue
        if base is None:
            continue
        entries += [(base + offset, size, name, str(obj), offset) for offset, size, _, name in rows]
    entries = sorted(set(entries))
    path = Path(f"/tmp/perf-{os.getpid()}.map")
    path.write_text("".join(f"{a:x} {s:x} {name}\n" for a, s, name, _, _ in entries))
    (out_dir / "symbols.json").write_text(json.dumps(entries))
    return path


def annotate(data: str, pattern: str, out_dir: str) -> None:
    """Per function matching ``pattern``: its instructions with the samples that landed on each."""
    entries = json.loads((Path(out_dir) / "symbols.json").read_text())
    ips = subprocess.run(["perf", "script", "-i", data, "-F", "ip"], capture_output=True, text=True,
                         check=True).stdout.split()
    counts = collections.Counter(int(ip, 16) for ip in ips)
    total = sum(counts.values())
    done = set()
    for addr, size, name, obj, offset in entries:
        if not re.search(pattern, name) or name.startswith("_ZN7cpython") or name in done:
            continue
        hist = collections.Counter({ip - addr: c for ip, c in counts.items() if addr <= ip < addr + size})
        hits = sum(hist.values())
        if hits == 0:
            continue
        done.add(name)
        dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={offset}",
                              f"--stop-address={offset + size}", obj], capture_output=True, text=True, check=True).stdout
        lines = []
        for line in dis.splitlines():
            m = re.match(r"\s*([0-9a-f]+):\s*(.*)", line)
            if m:
                at = int(m.group(1), 16) - offset
                lines.append((hist.get(at, 0), at, m.group(2)[:100]))
        target = Path(out_dir) / f"annotate_{len(done)}.txt"
        head = f"{name}\n{hits} of {total} samples ({100 * hits / total:.1f} %)\n\n"
        target.write_text(head + "\n".join(f"{c:7d} {at:6x}  {text}" for c, at, text in lines))
        hottest = sorted(lines, reverse=True)[:8]
        print(f"{100 * hits / total:5.1f} %  {name[:90]}  -> {target}")
        for c, at, text in hottest:
            print(f"        {c:7d} {at:6x}  {text}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    a = sub.add_parser("annotate", help="samples per instruction of the functions matching a pattern")
    a.add_argument("data")
    a.add_argument("pattern")
    a.add_argument("out_dir")
    args = ap.parse_args()
    if args.command == "annotate":
        index = Path(args.out_dir) / "symbols.json"
        if not index.is_file():
            raise SystemExit(f"{index} not found: call write_perf_map({str(args.out_dir)!r}) in the profiled process first")
        if not Path(args.data).is_file():
            raise SystemExit(f"{args.data} not found: record it with perf record -e cpu-clock -p PID -o {args.data}")
        for tool in ("perf", "objdump", "nm"):
            if shutil.which(tool) is None:
                raise SystemExit(f"{tool} is not installed (perf: linux-perf; objdump, nm: binutils)")
        annotate(args.data, args.pattern, args.out_dir)


if __name__ == "__main__":
    sys.exit(main())
