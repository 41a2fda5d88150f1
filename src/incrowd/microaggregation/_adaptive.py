"""Threads that give way when the machine is shared: a per-fit choice between the parallel and
the serial version of a short pass, made from the passes' own clock times.

A fit of MDAV makes two passes per round, thousands per fit, each a few microseconds. Split over
two threads, a pass ends only when both shares are done; when another process holds a core, the
second share often waits for a scheduler time slice (milliseconds), so the threaded fit was up
to 150 times slower than on an idle machine while the serial one slowed down about twofold. No
static rule can tell beforehand (the other process may start in the middle of a fit), so the
kernel times every pass and compares rates (nanoseconds per slot, exponentially weighted):

* the serial rate is measured first and refreshed by one serial pass in every
  ``_SERIAL_PROBE`` threaded ones, so it stays current on an idle machine too;
* a **try** of the threads is ``_TRY_LEN`` threaded passes judged by the best of them (the first
  pays for waking the sleeping worker threads, tens of microseconds, which says nothing about
  the passes after it); a try pass that loses more than ``_HOPELESS_NS`` waited for a
  descheduled thread and ends the try at once;
* on the threads, the kernel stays while the threaded rate is below the serial one;
* after a failed try, or a switch back to serial, the next try waits until the serial passes
  since have cost ``_PATIENCE`` times what the threads lost (doubling while tries keep failing,
  up to ``_MAX_BACKOFF_NS``): failed tries cost about ``1 / _PATIENCE`` of the time, and the
  threads come back soon after the other process stops. (A try on a busy machine can lose tens
  of milliseconds, a scheduler time slice or several, so the cap is far above that times
  ``_PATIENCE``.)

Both versions return the same rows (the shares are decided on their union), so the groups do not
depend on the choice; only the time does. The clock is ``clock_gettime(CLOCK_MONOTONIC)`` (the
vDSO, tens of nanoseconds) called from the compiled code by name, which numba can cache; on a
platform without it the choice falls back to always-parallel, the behaviour before.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

HAVE_CLOCK = sys.platform.startswith(("linux", "darwin", "freebsd"))
_CLOCK_MONOTONIC = 6 if sys.platform == "darwin" else (4 if sys.platform.startswith("freebsd") else 1)

_SERIAL_PROBE = 64
_TRY_LEN = 4
_HOPELESS_NS = 5.0e5
_PATIENCE = 20.0
_MAX_BACKOFF_NS = 5.0e9

# slots of the tuner state (a float64 array, so the kernels can carry it as one argument)
_MODE = 0  # _SER, _PAR or _TRY
_SER_RATE = 1  # ns per slot, exponentially weighted; 0 = not measured yet
_SINCE = 2  # serial ns since the threads were last left
_BACKOFF = 3  # serial ns to spend before the next try
_PAR_RUN = 4  # threaded passes since the last serial one
_N_PAR = 5
_N_SER = 6
_SWITCHES = 7  # from the threads back to serial
_FORCE = 8  # _ALWAYS: always on the threads (tests and ablations); _NEVER: never
_PAR_RATE = 9
_TRY_LEFT = 10
_TRY_BEST = 11
_TRY_LOST = 12
_FAILS = 13  # tries failed in a row
_SIZE = 14

_SER = 0.0
_PAR = 1.0
_TRY = 2.0

_ALWAYS = 1.0
_NEVER = -1.0


@intrinsic
def monotonic_ns(typingctx):
    """Nanoseconds on the monotonic clock (0 where the platform has no ``clock_gettime``)."""

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        if not HAVE_CLOCK:
            return ir.Constant(i64, 0)
        ts_ty = ir.LiteralStructType([i64, i64])  # struct timespec on LP64
        ts = cgutils.alloca_once(builder, ts_ty)
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), ts_ty.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
        builder.call(fn, [ir.Constant(ir.IntType(32), _CLOCK_MONOTONIC), ts])
        sec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 0))
        nsec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 1))
        return builder.add(builder.mul(sec, ir.Constant(i64, 10**9)), nsec)

    return types.int64(), codegen


def new_tuner(force_threads: bool = False, *, serial: bool = False) -> np.ndarray:
    """A fresh tuner state (``force_threads``: every eligible pass on the threads, no timing;
    ``serial``: none, for a fit that shares the cores with others run beside it);
    ``tuner_counts`` reads it after a fit."""
    tuner = np.zeros(_SIZE)
    tuner[_FORCE] = _NEVER if serial else (_ALWAYS if force_threads else 0.0)
    return tuner


def next_fit(tuner: np.ndarray) -> np.ndarray:
    """The tuner for the next fit in this process: what was learnt about the machine (threads
    lose, and for how much longer to stay serial) carries over, so a run of fits on a busy
    machine does not pay a failed try each; the serial rate, which depends on the data, and
    the counts start afresh."""
    tuner[_SER_RATE] = 0.0
    tuner[_PAR_RUN] = 0.0
    if tuner[_MODE] != _SER:  # a fit on the threads starts with a try after its serial rate
        tuner[_MODE] = _SER
        tuner[_BACKOFF] = 0.0
    tuner[_N_PAR] = tuner[_N_SER] = tuner[_SWITCHES] = 0.0
    return tuner


@njit(cache=True)
def use_threads(tuner):
    """Whether the next eligible pass runs on the threads (starting a try when one is due)."""
    if tuner[_FORCE] == _NEVER:
        return False
    if not HAVE_CLOCK or tuner[_FORCE] == _ALWAYS:
        return True
    if tuner[_SER_RATE] <= 0.0:
        return False  # measure the serial rate first
    if tuner[_MODE] == _PAR:
        return tuner[_PAR_RUN] < _SERIAL_PROBE
    if tuner[_MODE] == _TRY:
        return True
    if tuner[_SINCE] >= tuner[_BACKOFF]:
        tuner[_MODE] = _TRY
        tuner[_TRY_LEFT] = _TRY_LEN
        tuner[_TRY_BEST] = np.inf
        tuner[_TRY_LOST] = 0.0
        return True
    return False


@njit(cache=True)
def _leave_threads(tuner, lost, failed_try):
    tuner[_MODE] = _SER
    tuner[_SINCE] = 0.0
    backoff = _PATIENCE * lost
    if failed_try:
        tuner[_FAILS] += 1
        if tuner[_FAILS] > 1:
            backoff = max(backoff, 2.0 * tuner[_BACKOFF])
    else:
        tuner[_SWITCHES] += 1
        tuner[_FAILS] = 0.0
    tuner[_BACKOFF] = min(backoff, _MAX_BACKOFF_NS)


@njit(cache=True)
def record(tuner, threaded, ns, n_slots):
    """Account for a pass of ``n_slots`` slots that took ``ns`` nanoseconds."""
    if not HAVE_CLOCK or tuner[_FORCE] != 0.0:
        tuner[_N_PAR if threaded else _N_SER] += 1
        return
    rate = ns / max(n_slots, 1)
    if not threaded:
        tuner[_N_SER] += 1
        tuner[_SER_RATE] = rate if tuner[_SER_RATE] <= 0.0 else 0.75 * tuner[_SER_RATE] + 0.25 * rate
        if tuner[_MODE] == _PAR:
            tuner[_PAR_RUN] = 0.0  # the periodic serial probe
        else:
            tuner[_SINCE] += ns
        return
    tuner[_N_PAR] += 1
    lost = max(ns - tuner[_SER_RATE] * n_slots, 0.0)
    if tuner[_MODE] == _TRY:
        tuner[_TRY_BEST] = min(tuner[_TRY_BEST], rate)
        tuner[_TRY_LOST] += lost
        tuner[_TRY_LEFT] -= 1
        if lost > _HOPELESS_NS:
            _leave_threads(tuner, tuner[_TRY_LOST], True)
        elif tuner[_TRY_LEFT] <= 0:
            if tuner[_TRY_BEST] <= tuner[_SER_RATE]:
                tuner[_MODE] = _PAR
                tuner[_PAR_RATE] = tuner[_TRY_BEST]
                tuner[_PAR_RUN] = 0.0
                tuner[_FAILS] = 0.0
                tuner[_BACKOFF] = 0.0
            else:
                _leave_threads(tuner, tuner[_TRY_LOST], True)
        return
    tuner[_PAR_RUN] += 1
    tuner[_PAR_RATE] = 0.75 * tuner[_PAR_RATE] + 0.25 * rate
    if tuner[_PAR_RATE] > tuner[_SER_RATE] or lost > _HOPELESS_NS:
        _leave_threads(tuner, lost, False)


def tuner_counts(tuner: np.ndarray) -> dict:
    """Passes run on the threads and serially, and switches from threads to serial."""
    return {"parallel_passes": int(tuner[_N_PAR]), "serial_passes": int(tuner[_N_SER]),
            "switches_to_serial": int(tuner[_SWITCHES])}
