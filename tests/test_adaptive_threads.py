"""The threaded MDAV passes give way to serial ones when they stop paying (a shared machine),
the choice never changes the groups, and a serial call compiles no threaded code."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incrowd.microaggregation import _adaptive as ad
from incrowd.microaggregation._adaptive import new_tuner, record, tuner_counts, use_threads
from incrowd.microaggregation.mdav._mdav_fast import mdav_fast_labels
from incrowd.microaggregation.mdav._mdav_kernel import mdav_labels

pytestmark = pytest.mark.skipif(not ad.HAVE_CLOCK, reason="no monotonic clock for the compiled code here")


def _on_threads(tuner):
    """A successful try: the threads twice as fast as serial (10 ns a slot)."""
    record(tuner, False, 1000.0, 100)
    for _ in range(ad._TRY_LEN):
        assert use_threads(tuner)
        record(tuner, True, 500.0, 100)
    assert tuner[ad._MODE] == ad._PAR


def test_the_serial_rate_is_measured_first_then_threads_are_tried():
    tuner = new_tuner()
    assert not use_threads(tuner)
    record(tuner, False, 1000.0, 100)
    assert use_threads(tuner)


def test_a_try_is_judged_by_its_best_pass_not_by_waking_the_threads():
    tuner = new_tuner()
    record(tuner, False, 1000.0, 100)
    assert use_threads(tuner)
    record(tuner, True, 100_000.0, 100)  # waking the sleeping worker: 99 us lost
    for _ in range(ad._TRY_LEN - 1):
        assert use_threads(tuner)
        record(tuner, True, 600.0, 100)
    assert tuner[ad._MODE] == ad._PAR and use_threads(tuner)


def test_a_try_pass_that_waited_for_a_descheduled_thread_ends_the_try_at_once():
    tuner = new_tuner()
    record(tuner, False, 1000.0, 100)
    assert use_threads(tuner)
    record(tuner, True, 3e6, 100)  # a time slice
    assert not use_threads(tuner)
    assert tuner[ad._BACKOFF] == pytest.approx(ad._PATIENCE * (3e6 - 1000.0))


def test_threads_that_start_losing_switch_to_serial_until_their_loss_is_repaid():
    tuner = new_tuner()
    _on_threads(tuner)
    record(tuner, True, 600.0, 100)
    assert use_threads(tuner)  # one pass near the serial rate does not switch
    record(tuner, True, 5000.0, 100)  # 4,000 ns lost: the weighted rate passes the serial one
    assert tuner_counts(tuner)["switches_to_serial"] == 1
    spent = 0.0
    while not use_threads(tuner):
        record(tuner, False, 1000.0, 100)
        spent += 1000.0
        assert spent < 1e6
    assert spent == pytest.approx(ad._PATIENCE * 4000.0, rel=0.05)


def test_tries_that_keep_failing_back_off_further_within_a_cap():
    tuner = new_tuner()
    record(tuner, False, 1e7, 10_000)  # 1,000 ns a slot
    backoffs = []
    for _ in range(12):
        while not use_threads(tuner):
            record(tuner, False, 1e7, 10_000)
        record(tuner, True, 5e7, 10_000)  # 4e7 ns lost each time
        backoffs.append(tuner[ad._BACKOFF])
    assert backoffs[0] == pytest.approx(ad._PATIENCE * 4e7)
    assert all(b2 >= b1 for b1, b2 in zip(backoffs, backoffs[1:]))
    assert backoffs[1] == pytest.approx(2 * backoffs[0])
    assert backoffs[-1] == ad._MAX_BACKOFF_NS


def test_on_threads_one_pass_in_a_while_is_serial_to_keep_the_rate_current():
    tuner = new_tuner()
    _on_threads(tuner)
    choices = []
    for _ in range(3 * ad._SERIAL_PROBE):
        threaded = use_threads(tuner)
        choices.append(threaded)
        record(tuner, threaded, 600.0 if threaded else 1000.0, 100)
    assert 2 <= choices.count(False) <= 3
    assert tuner_counts(tuner)["switches_to_serial"] == 0


def test_forced_threads_always_take_the_threads():
    tuner = new_tuner(force_threads=True)
    for _ in range(5):
        assert use_threads(tuner)
        record(tuner, True, 1e9, 10)
    assert tuner_counts(tuner)["parallel_passes"] == 5


def test_a_serial_tuner_never_takes_the_threads():
    tuner = new_tuner(serial=True)
    for _ in range(200):  # far past the serial rate and any try a plain tuner would start
        assert not use_threads(tuner)
        record(tuner, False, 1e9, 10)
    assert tuner_counts(tuner) == {"parallel_passes": 0, "serial_passes": 200, "switches_to_serial": 0}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 400), m=st.integers(1, 6), k=st.integers(2, 6),
       ties=st.booleans())
def test_groups_are_the_same_serial_adaptive_and_forced(seed, n, m, k, ties):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 4, (n, m)).astype(float) if ties else rng.standard_normal((n, m))
    plain = mdav_labels(Z, k)
    np.testing.assert_array_equal(mdav_fast_labels(Z, k)[0], plain)
    np.testing.assert_array_equal(mdav_fast_labels(Z, k, 0, 2, False, new_tuner())[0], plain)
    np.testing.assert_array_equal(mdav_fast_labels(Z, k, 0, 3, False, new_tuner(True))[0], plain)


def test_a_large_adaptive_fit_makes_passes_of_both_kinds_and_the_same_groups():
    Z = np.random.default_rng(7).standard_normal((40_000, 6))
    tuner = new_tuner()
    labels = mdav_fast_labels(Z, 5, 0, max(2, numba.get_num_threads()), False, tuner)[0]
    np.testing.assert_array_equal(labels, mdav_fast_labels(Z, 5)[0])
    counts = tuner_counts(tuner)
    assert counts["serial_passes"] >= 1 and counts["parallel_passes"] >= 1


def _fresh_process(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_a_serial_call_compiles_no_threaded_or_int8_code():
    out = _fresh_process("""
        import numpy as np
        from incrowd.microaggregation.mdav import _mdav_fast as mf, _screen as sc
        Z = np.random.default_rng(0).standard_normal((300, 4))
        mf.mdav_fast_labels(Z, 3)
        print(len(sc.screened_pass_parallel.signatures), len(sc.quantize_pairs8.signatures),
              len(sc.quantize_quads.signatures), len(mf._mdav_rounds.signatures))
    """)
    assert out.split() == ["0", "0", "0", "1"]


def test_the_threaded_kernel_runs_from_the_cache_in_a_fresh_process():
    # loading it from numba's cache did not start the thread pool it needs (a crash)
    code = """
        import numpy as np
        from incrowd.microaggregation.mdav import _mdav_fast as mf
        Z = np.random.default_rng(0).standard_normal((600, 4))
        print(int((mf.mdav_fast_labels(Z, 3, 0, 2)[0] == mf.mdav_fast_labels(Z, 3)[0]).all()))
    """
    assert _fresh_process(code).strip() == "1"
    assert _fresh_process(code).strip() == "1"


def test_the_next_fit_keeps_what_was_learnt_about_the_machine_but_measures_its_own_rate():
    tuner = new_tuner()
    record(tuner, False, 1000.0, 100)
    assert use_threads(tuner)
    record(tuner, True, 1e6, 100)  # the try waited for a descheduled thread
    backoff = tuner[ad._BACKOFF]
    assert backoff > 0
    ad.next_fit(tuner)
    assert tuner[ad._BACKOFF] == backoff and tuner[ad._MODE] == 0.0
    assert tuner_counts(tuner) == {"parallel_passes": 0, "serial_passes": 0, "switches_to_serial": 0}
    assert not use_threads(tuner)  # its own serial rate first
    record(tuner, False, 1000.0, 100)
    assert not use_threads(tuner)  # and still owes most of the backoff
