"""What numba's compiler costs a call, kept apart from the algorithm's own time.

Numba compiles a kernel the first time it meets a new argument type on a machine and keeps the
result in its on-disk cache; later processes load it from there. Both happen under numba's
global compiler lock, whose events ("numba:compiler_lock") also count the wait when another
thread is compiling: that is time the call spends on the compiler, never on the algorithm.
"numba:compile" fires only for a real compilation (not a cache load): it drives the one-line
notice.

A kernel that calls another with a constant (``f(x, 0)``), or with a variable that starts as
one (``r = -1`` before a loop sets it), would make numba compile the callee once more for that
literal value, often twice in one caller (type inference meets the constant before the variable's
final type). Installing the clocks also turns that off for this package's kernels: a call from
one kernel to another is typed by the argument's plain type (``int64``, not ``Literal[int](0)``),
so each callee compiles once per array layout and dtype. The machine code does the same
arithmetic in the same order, so the results are the same bit for bit. Likewise numba's
implementations of numpy functions (``np.empty``, ``np.zeros``, ...) are shared by kernels that
differ only in their entry points (``nogil``, or none for Python), instead of compiled per kernel.

Listeners are process-wide in numba, so each clock counts only the events of its own thread (a
web server's other requests compile in other threads) and nested lock events once. A clock
never imports numba: many commands run only the compiled extension's kernels and no numba at
all, so the listeners are installed the moment numba's import completes (or at once when it is
loaded already), before any kernel can compile or load.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

NOTICE = "compiling kernels for this machine, once (cached for later runs) ..."
NOTICE_NO_CACHE = ("compiling kernels for this process: no writable cache folder (neither the "
                   "package's nor the user's; set NUMBA_CACHE_DIR), so every process compiles "
                   "again ...")

_local = threading.local()
_install_lock = threading.Lock()
_installed = False
_notice_on = False
_notice_done = False
_per_process_cache: str | None = None


class CompileClock:
    """Seconds spent in numba's compiler (compiling or loading from its cache) on this thread
    while the clock runs, and how many kernels were really compiled."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.compiles = 0
        self._depth = 0
        self._t0 = 0.0

    def _lock_start(self) -> None:
        if self._depth == 0:
            self._t0 = time.perf_counter()
        self._depth += 1

    def _lock_end(self) -> None:
        if self._depth == 0:  # the lock was taken before this clock started listening
            return
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._t0


def _active() -> list[CompileClock]:
    clocks = getattr(_local, "clocks", None)
    if clocks is None:
        clocks = _local.clocks = []
    return clocks


def _thread_total() -> CompileClock:
    total = getattr(_local, "total", None)
    if total is None:
        total = _local.total = CompileClock()
    return total


def _install_if_loaded() -> None:
    # a path that runs without numba (the plain negotiation twin) must not load it for a clock;
    # code that calls a compiled kernel has imported numba before it reads the clock
    if not _installed and "numba" in sys.modules:
        _install()


def compiled_so_far() -> float:
    """Seconds this thread has spent in numba's compiler since the listeners were installed
    (never imports numba: 0 while it is not loaded)."""
    _install_if_loaded()
    return _thread_total().seconds


def work_clock() -> float:
    """``time.perf_counter()`` that stands still while this thread is in numba's compiler: the
    difference of two readings is the work between them, compiling left out."""
    _install_if_loaded()
    return time.perf_counter() - _thread_total().seconds


def _install() -> None:
    """Register the process-wide listeners (once); imports numba."""
    global _installed
    if _installed:
        return
    with _install_lock:
        if _installed:
            return
        from numba.core import event

        class _Lock(event.Listener):
            def on_start(self, ev):
                _thread_total()._lock_start()
                for clock in _active():
                    clock._lock_start()

            def on_end(self, ev):
                _thread_total()._lock_end()
                for clock in _active():
                    clock._lock_end()

        class _Compile(event.Listener):
            def on_start(self, ev):
                for clock in _active():
                    clock.compiles += 1
                _maybe_notice()

            def on_end(self, ev):
                pass

        event.register("numba:compiler_lock", _Lock())
        event.register("numba:compile", _Compile())
        _type_calls_by_plain_types()
        _installed = True


#: the modules whose kernels are typed by plain argument types when another kernel calls them
_PACKAGE = __name__.split(".")[0] + "."


def _type_calls_by_plain_types() -> None:
    """Make numba type a call from one of this package's kernels to another by the arguments'
    plain types (see the module docstring). Kernels of other packages keep numba's behaviour; a
    numba without the method this wraps only compiles more."""
    from numba.core import dispatcher, types

    original = getattr(dispatcher.Dispatcher, "get_call_template", None)
    if original is None or getattr(original, "_plain_types", False):
        return

    def get_call_template(self, args, kws):
        if getattr(self.py_func, "__module__", "").startswith(_PACKAGE):
            args = tuple(types.unliteral(a) for a in args)
            kws = {name: types.unliteral(t) for name, t in kws.items()}
        return original(self, args, kws)

    get_call_template._plain_types = True  # type: ignore[attr-defined]
    dispatcher.Dispatcher.get_call_template = get_call_template  # type: ignore[method-assign]
    _share_overloads_across_entry_points()


#: compile flags that shape only a kernel's own entry points (its Python and C wrappers, and
#: whether its Python entry releases the GIL), never the code of what it calls
_ENTRY_FLAGS = ("release_gil", "no_cpython_wrapper", "no_cfunc_wrapper")


def _share_overloads_across_entry_points() -> None:
    """Let kernels that differ only in their entry-point flags share numba's compiled
    implementations of numpy functions (``np.empty``, ``np.zeros``, ...). numba keys those by the
    calling kernel's whole set of flags, so a ``nogil`` kernel, a helper kernel and a plain one each
    compiled ``np.empty(n, np.int64)`` again; the implementations do not depend on these flags
    (numba passes on only flags such as fastmath and the error model, which stay in the key)."""
    from numba.core import targetconfig
    from numba.core.typing import templates

    template = getattr(templates, "_OverloadFunctionTemplate", None)
    original = getattr(template, "_get_impl", None)
    if original is None or getattr(original, "_shared", False) or not hasattr(template, "_build_impl"):
        return

    def _get_impl(self, args, kws):
        flags = targetconfig.ConfigStack.top_or_none()
        if flags is not None and any(getattr(flags, name, False) for name in _ENTRY_FLAGS):
            flags = flags.copy()
            for name in _ENTRY_FLAGS:
                setattr(flags, name, False)
        cache_key = self.context, tuple(args), tuple(kws.items()), flags
        try:
            return self._impl_cache[cache_key]
        except KeyError:
            pass
        return self._build_impl(cache_key, args, kws)

    _get_impl._shared = True  # type: ignore[attr-defined]
    template._get_impl = _get_impl  # type: ignore[union-attr]


class _InstallOnNumbaImport(importlib.abc.MetaPathFinder):
    """Runs ``_install`` right after numba's own import, whoever imports it."""

    def find_spec(self, name, path, target=None):
        if name != "numba":
            return None
        _uninstall_hook()
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_module = loader.exec_module

        def exec_module(module):
            run_module(module)
            _install()

        loader.exec_module = exec_module
        return spec


_hook = _InstallOnNumbaImport()


def _uninstall_hook() -> None:
    try:
        sys.meta_path.remove(_hook)
    except ValueError:
        pass


def _install_when_numba_loads() -> None:
    if _installed:
        return
    if "numba" in sys.modules:
        _install()
    elif _hook not in sys.meta_path:
        sys.meta_path.insert(0, _hook)
        if "numba" in sys.modules:  # imported by another thread meanwhile
            _uninstall_hook()
            _install()


@contextmanager
def compile_clock() -> Iterator[CompileClock]:
    """Measure numba's compiler time on this thread for the body (clocks may nest)."""
    _install_when_numba_loads()
    clock = CompileClock()
    clocks = _active()
    clocks.append(clock)
    try:
        yield clock
    finally:
        clocks.remove(clock)


def enable_notice() -> None:
    """Print a one-line notice on stderr the first time this process really compiles a kernel
    (not when it loads one from the cache). Cheap: numba is not imported here; the listener is
    installed by the first clock, and every kernel call of the package runs under one."""
    global _notice_on
    _notice_on = True
    if "numba" in sys.modules:
        _install()


def disable_notice() -> None:
    global _notice_on
    _notice_on = False


def _maybe_notice() -> None:
    global _notice_done
    if not _notice_on or _notice_done:
        return
    _notice_done = True
    try:
        # sys.stderr as it is now: a progress display may have redirected it to print above
        sys.stderr.write((NOTICE if cache_writable() else NOTICE_NO_CACHE) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # a closed stderr must not fail the run
        pass


def cache_writable() -> bool:
    """Whether numba can save compiled kernels for this package somewhere (its own choice of
    directory: NUMBA_CACHE_DIR, else next to the sources, else a per-user cache directory)."""
    if _per_process_cache is not None:
        return False
    try:
        return cache_directory() is not None
    except Exception:  # numba internals moved: assume it can, the notice is only a hint
        return True


def cache_directory(source: str | None = None) -> str | None:
    """The directory numba caches this package's kernels in, or None when no locator of numba's
    accepts one (then every process compiles again)."""
    from numba.core.caching import FunctionCache

    if source is None:
        source = __file__  # the kernels' modules sit in this package, under the same rights
    for cls in FunctionCache._impl_class._locator_classes:
        try:
            locator = cls.from_function(_probe, source)  # type: ignore[attr-defined]  # numba private API, untyped
        except Exception:  # a locator for another kind of source (IPython, zip) may refuse
            continue
        if locator is not None:
            return locator.get_cache_path()
    return None


def compiled_or_cached(kernel) -> bool:
    """Whether calling the numba dispatcher ``kernel`` would start without compiling it: it is
    compiled in this process, or numba's cache on this machine holds it for the current source.
    A caller with a choice of equivalent kernels uses this to spare a first use a long compile.
    False when numba's cache internals are not as expected (the caller then only compiles less)."""
    if kernel.overloads:
        return True
    try:
        return bool(kernel._cache._cache_file._load_index())  # numba private API: the index of cached signatures
    except Exception:
        return False


def _probe():
    """A stand-in function: numba's locators read only its line number and the source path."""


def seconds_apart(fn: Callable[[], object]) -> tuple[object, float, float]:
    """Run ``fn``; return (its value, seconds without compiling, compile seconds)."""
    with compile_clock() as clock:
        t0 = time.perf_counter()
        value = fn()
        total = time.perf_counter() - t0
    return value, max(total - clock.seconds, 0.0), clock.seconds


def _writable_dir(path: str) -> bool:
    """numba's own test: the folder can be created and a file written in it."""
    import tempfile

    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _user_cache_dir() -> str | None:
    """numba's per-user cache folder (appdirs' rule), where this platform's rule is simple."""
    if sys.platform.startswith("linux") or sys.platform.startswith("freebsd"):
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        return None
    return os.path.join(base, "numba")


def prepare_cache() -> str | None:
    """Before numba is imported: when neither the package's folder nor the user's cache folder
    is writable (and NUMBA_CACHE_DIR is unset), give numba a temporary cache folder for this
    process. Numba would otherwise refuse to import the package's kernels ("no locator
    available"); now the process compiles once and says so. Returns that folder, or None."""
    global _per_process_cache
    if os.environ.get("NUMBA_CACHE_DIR") or "numba" in sys.modules:
        return None
    if _writable_dir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")):
        return None
    user = _user_cache_dir()
    if user is None or _writable_dir(user):
        return None
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="incrowd-numba-cache-")
    atexit.register(shutil.rmtree, folder, True)
    os.environ["NUMBA_CACHE_DIR"] = folder
    _per_process_cache = folder
    return folder
