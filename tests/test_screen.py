"""The integer screen of the fast MDAV kernel: the int16 block products against numpy, the
codes' proven error, and the screened selections (serial and in shares) against full sorts."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import kernel_data
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from incrowd.microaggregation.mdav import _blockdot
from incrowd.microaggregation.mdav._blockdot import (
    LANES,
    block_dot_avx2,
    block_dot_avx512,
    block_dot_generic,
    block_screen_avx2,
    block_screen_avx512,
    block_screen_generic,
)
from incrowd.microaggregation.mdav._screen import (
    compact_blocked,
    quantize,
    quantize_narrow,
    quantize_pairs8,
    quantize_quads,
    screened_pass,
    screened_pass_parallel,
    slot_words,
)

_FEATURES = _blockdot._host_features()
_VARIANTS = [block_dot_generic]
_SCREENS = [block_screen_generic]
if "avx2" in _FEATURES:
    _VARIANTS.append(block_dot_avx2)
    _SCREENS.append(block_screen_avx2)
if {"avx512f", "avx512bw"} <= _FEATURES:
    _VARIANTS.append(block_dot_avx512)
    _SCREENS.append(block_screen_avx512)


_DTYPES = [np.int16, np.int8, np.uint8]


@njit
def _all_blocks(dot, out, data, npairs, qwords):
    per = data.shape[0] // (out.shape[0] * npairs)
    for b in range(out.shape[0] // LANES):
        dot(out, b * LANES, data, b * npairs * per * LANES, npairs, qwords)


@pytest.mark.parametrize("dot", _VARIANTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("npairs", [1, 2, 4, 7, 8, 13])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_block_products_equal_numpy(dot, npairs, dtype):
    if not _host_takes(dot, dtype):
        pytest.skip("this variant does not take uint8 quads")
    rng = np.random.default_rng(npairs)
    n_blocks = 9
    # the extremes the quantizer allows (int16: the norm cap; int8: 127): no int32 sum overflows
    data, words, dots = _random_blocks(rng, n_blocks, npairs, dtype)
    out = np.zeros(n_blocks * LANES, np.int32)
    _all_blocks(dot, out, data, npairs, words)
    np.testing.assert_array_equal(out, dots)


def _random_blocks(rng, n_blocks, nwords, dtype):
    """Codes in the layout of ``dtype`` (int16 or int8 pairs, uint8 quads stored as code + 128),
    the query's words and the exact products per slot."""
    per = 4 if dtype == np.uint8 else 2
    limit = int(np.sqrt(2**29 / (per * nwords))) if dtype == np.int16 else 127
    codes = rng.integers(-limit, limit + 1, (n_blocks, nwords, LANES, per))
    codes[0, :, 0, :] = limit  # the extremes
    query = rng.integers(-limit, limit + 1, (nwords, per))
    query[0] = -limit
    data = (codes + 128).astype(np.uint8) if dtype == np.uint8 else codes.astype(dtype)
    words = query.astype(np.int8 if per == 4 else np.int16).view(np.int32).ravel().copy()
    dots = (codes * query[None, :, None, :]).sum(axis=(1, 3))
    return data.ravel(), words, dots.ravel()


def _host_takes(dot, dtype):
    """The SIMD variants take uint8 quads only at 512 bits (where the CPU has VNNI)."""
    return dtype != np.uint8 or dot.__name__.endswith("generic") or (
        dot.__name__.endswith("avx512") and _blockdot._quads(_FEATURES))


@pytest.mark.parametrize("dot", _VARIANTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n_blocks", [1, 3, 4, 5, 8, 11])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_blocks_side_by_side_equal_numpy(dot, n_blocks, dtype):
    """Several blocks in one call (four at a time, then the rest one by one), from an offset
    into the data and into the output, leaving the output around them alone."""
    if not _host_takes(dot, dtype):
        pytest.skip("this variant does not take uint8 quads")
    rng = np.random.default_rng(n_blocks)
    npairs = 7
    data, qwords, dots = _random_blocks(rng, n_blocks + 2, npairs, dtype)
    per = 4 if dtype == np.uint8 else 2
    out = np.full((n_blocks + 3) * LANES, -7, np.int32)
    dot(out, LANES, data, 2 * npairs * per * LANES, npairs, qwords, n_blocks)
    np.testing.assert_array_equal(out[LANES:(n_blocks + 1) * LANES], dots[2 * LANES:])
    assert (out[:LANES] == -7).all() and (out[(n_blocks + 1) * LANES:] == -7).all()


@pytest.mark.parametrize("screen", _SCREENS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n_blocks", [1, 4, 6, 9])
@pytest.mark.parametrize("dtype", _DTYPES)
def test_the_fused_screen_flags_exactly_the_slots_at_either_bar(screen, n_blocks, dtype):
    """v = |a|^2 - 2 a.q per slot, and bit l of block b's mask set exactly where v <= hi or
    v >= lo, bars equal to some v included."""
    if not _host_takes(screen, dtype):
        pytest.skip("this variant does not take uint8 quads")
    rng = np.random.default_rng(10 + n_blocks)
    npairs = 5
    per = 4 if dtype == np.uint8 else 2
    data, qwords, dots = _random_blocks(rng, n_blocks + 1, npairs, dtype)
    norms = rng.integers(0, 2**20, (n_blocks + 1) * LANES).astype(np.int32)
    v = (norms - 2 * dots)[LANES:]
    for hi, lo in [(int(np.quantile(v, 0.1)), int(v.max())), (-(2**31), 2**31 - 1), (int(v[3]), int(v[5]))]:
        out = np.zeros(n_blocks * LANES, np.int32)
        masks = np.zeros(n_blocks, np.uint16)
        screen(out, data, npairs * per * LANES, npairs, qwords, n_blocks, norms[LANES:], hi, lo, masks)
        np.testing.assert_array_equal(out, v)
        hit = ((v <= hi) | (v >= lo)).reshape(n_blocks, LANES)
        expected = (hit * (1 << np.arange(LANES))).sum(axis=1)
        np.testing.assert_array_equal(masks, expected)


def test_the_host_gets_its_fastest_variant():
    assert _blockdot.SIMD in ("avx512", "avx2", "generic")
    assert _blockdot._choose({"avx2"}) == "avx2"
    assert _blockdot._choose({"avx512f", "avx512bw", "avx2"}) == "avx512"
    assert _blockdot._choose(set()) == "generic"


def _codes(data, npairs, m, n):
    per = 4 if data.dtype == np.uint8 else 2
    c = data.reshape(-1, npairs, LANES, per).transpose(0, 2, 1, 3).reshape(-1, per * npairs).astype(np.int64)
    return c[:n, :m] - (128 if per == 4 else 0)


_QUANTS = [quantize, quantize_pairs8, quantize_quads]
_QUANT_IDS = ["int16", "int8", "quads"]
_SCREENED_QUANTS = [quantize, quantize_pairs8] + ([quantize_quads] if _blockdot.QUADS else [])


@pytest.mark.parametrize("quant", _QUANTS, ids=_QUANT_IDS)
@pytest.mark.parametrize("kind", ["gauss", "ints", "cauchy"])
@pytest.mark.parametrize("m", [1, 2, 5, 15])
def test_codes_are_within_the_proven_distance_error(kind, m, quant):
    X = np.ascontiguousarray(kernel_data(kind, 300, m, m))
    data, norms, npairs, gap, step = quant(X)
    codes = _codes(data, npairs, m, len(X))
    assert np.abs(codes).max() <= (2**15 - 1 if quant is quantize else 127)
    np.testing.assert_array_equal(norms[: len(X)], (codes**2).sum(axis=1))
    assert (norms[: len(X)] < 2**29).all()
    # each dequantized row is a translate of the real one up to s/2 per column
    resid = X - step * codes
    spread = resid.max(axis=0) - resid.min(axis=0)
    assert (spread <= step * (1 + 1e-9)).all()
    real = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    screened = step * np.sqrt(((codes[:, None, :] - codes[None, :, :]) ** 2).sum(-1))
    assert np.abs(real - screened).max() <= step * gap / 2


def _brute(X, alive, point, exclude, n_near, n_far):
    slots = [i for i in np.flatnonzero(alive) if i != exclude]
    d = {i: float(((X[i] - point) ** 2).sum()) for i in slots}
    near = sorted(slots, key=lambda i: (d[i], i))[:n_near]
    far = sorted(slots, key=lambda i: (-d[i], i))[:n_far]
    return near, far


def _pass(X, alive, seed, n_near, n_far, shares, quant=quantize):
    data, norms, npairs, gap, _ = quant(X)
    n = len(X)
    mask = np.zeros(norms.shape[0], np.bool_)
    mask[:n] = alive
    ids = np.arange(n)
    qwords = np.empty(npairs, np.int32)
    slot_words(data, npairs, seed, qwords)
    point = X[seed].copy()
    near = np.empty(max(n_near, 1), np.int64)
    far = np.empty(max(n_far, 1), np.int64)
    cand = np.empty(n, np.int64)
    cand_d = np.empty(n, np.int64)
    args = (X, data, norms, npairs, ids, n, mask, point, qwords, np.int64(norms[seed]), seed, n_near, n_far, gap,
            near, far, cand, cand_d)
    gn, gf = screened_pass(*args) if shares == 0 else screened_pass_parallel(*args, shares)
    return list(near[:gn]), list(far[:gf])


@pytest.mark.parametrize("quant", _SCREENED_QUANTS, ids=_QUANT_IDS[: len(_SCREENED_QUANTS)])
@pytest.mark.parametrize("shares", [0, 1, 2, 5])
@pytest.mark.parametrize("kind", ["gauss", "ints", "copies", "cauchy"])
def test_screened_selections_equal_full_sorts(kind, shares, quant):
    rng = np.random.default_rng(7)
    X = np.ascontiguousarray(kernel_data(kind, 1500, 6, 11))
    alive = rng.random(len(X)) < 0.8
    for seed in rng.choice(np.flatnonzero(alive), 12, replace=False):
        for n_near, n_far in [(9, 11), (2, 0), (0, 4), (40, 40)]:
            assert _pass(X, alive, seed, n_near, n_far, shares, quant) == _brute(X, alive, X[seed], seed, n_near,
                                                                                   n_far)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 200), m=st.integers(1, 9), levels=st.integers(2, 6), shares=st.integers(0, 4),
       n_near=st.integers(0, 6), n_far=st.integers(0, 6), seed=st.integers(0, 2**32 - 1), narrow=st.booleans())
def test_screened_selections_on_tied_data(n, m, levels, shares, n_near, n_far, seed, narrow):
    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(rng.integers(0, levels, (n, m)).astype(float))
    alive = rng.random(n) < 0.7
    alive[0] = True
    live_others = int(alive.sum()) - 1
    n_near, n_far = min(n_near, live_others), min(n_far, live_others)
    near, far = _pass(X, alive, 0, n_near, n_far, shares, quantize_narrow if narrow else quantize)
    assert (near, far) == _brute(X, alive, X[0], 0, n_near, n_far)


@pytest.mark.parametrize("quant", _QUANTS, ids=_QUANT_IDS)
def test_compaction_keeps_codes_with_their_rows(quant):
    X = np.ascontiguousarray(kernel_data("gauss", 100, 5, 3))
    data, norms, npairs, _, _ = quant(X)
    before = _codes(data, npairs, 5, 100).copy()
    alive = np.zeros(norms.shape[0], np.bool_)
    alive[:100] = np.random.default_rng(0).random(100) < 0.5
    ids = np.arange(100)
    slot_of = np.arange(100)
    kept = np.flatnonzero(alive[:100])
    n_slots = compact_blocked(data, norms, npairs, ids, slot_of, alive, 100)
    assert n_slots == len(kept)
    np.testing.assert_array_equal(ids[:n_slots], kept)
    np.testing.assert_array_equal(_codes(data, npairs, 5, n_slots), before[kept])
    np.testing.assert_array_equal(norms[:n_slots], (before[kept] ** 2).sum(axis=1))
    assert alive[:n_slots].all() and not alive[n_slots:].any()

# seconds in all: the full suite (make test) runs them, the quick tier leaves them out
pytestmark = pytest.mark.slow
