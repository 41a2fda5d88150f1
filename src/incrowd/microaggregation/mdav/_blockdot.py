"""Exact int16 dot products of 16 rows at a time with one query: the inner loop of the fast
MDAV screen.

Layout ("blocked pairs"): rows are grouped in blocks of ``LANES`` = 16 slots; within a block,
column pair p (columns 2p and 2p+1) is 32 int16 values, lane l's two codes at 2l and 2l+1. A block
is ``npairs * 32`` int16 and blocks follow each other, so one pass reads memory in order.
``block_dot`` writes, for the 16 lanes of one block, sum_p (a_l,2p * q_2p + a_l,2p+1 * q_2p+1) as
int32: exactly the x86 ``pmaddwd`` instruction per pair (two int16 products summed into int32,
32 products per instruction at 512 bits), which no autovectorizer emitted from a plain loop
(it used 32-bit multiplies at under half the speed: 15 against 35 billion products a second,
measured at 25,000 rows). The caller keeps the codes small enough that no int32 sum overflows
(:func:`incrowd.microaggregation.mdav._screen.quantize`). int8 codes in the same layout (half the
bytes; ``_screen.quantize_pairs8``) are widened to int16 in the register.

Layout ("blocked quads", uint8 arrays; ``_screen.quantize_quads``): int8 codes four to a lane's
word, word w of a block 64 bytes with lane l's codes of columns 4w .. 4w + 3 at 4l .. 4l + 3, each
stored as code + 128. ``vpdpbusd`` (AVX-512 VNNI) sums four unsigned-by-signed byte products
into each int32 lane: sum (a + 128) q, from which 128 sum q (:func:`query_offset`) is taken
off, exactly. A query word holds four int8 codes; four codes to a word beat int8 pairs in
MDAV*'s screened passes (measured in the docs' performance studies).

``block_dot`` takes ``nblocks`` consecutive blocks and works on four at a time: one block's sum
is a chain of dependent multiply-adds (fused into ``vpdpwssd`` where the CPU has VNNI), and with
one chain the loop waited on its latency (on 312,500 x 13 int8 codes, MDAV*'s screen ran at 1.6
billion slots a second, its sample peak on the instruction after the multiply-add). ``block_screen``
adds the screen's test in the same registers: v = |a|^2 - 2 a.q per slot into ``out``, and one
16-bit mask per block with bit l set where lane l's v reaches a bar (v <= hi or v >= lo), so the
caller looks only at blocks with a bit set, and v is not stored and read back in between.

Three versions give the same integers: AVX-512BW (one ``pmaddwd`` per pair, one ``vpdpbusd`` per
quad), AVX2 (two ``pmaddwd``; pairs only), and a plain loop for every other CPU. The host's
features pick one at import. (No override by environment: numba caches the kernels that call
``block_dot`` with the choice frozen in, so a forced choice would outlive the process that made
it. The tests compare the three directly.)
"""

from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

LANES = 16


def _host_features() -> set[str]:
    try:
        import llvmlite.binding as llvm

        return {name for name, on in llvm.get_host_cpu_features().items() if on}
    except Exception:  # a platform llvmlite cannot query: take the portable loop
        return set()


def _quads(features: set[str]) -> bool:
    """Whether int8 codes go in quads (``vpdpbusd``: four products a lane per instruction, no
    widening) rather than in pairs."""
    return _choose(features) == "avx512" and "avx512vnni" in features


def _choose(features: set[str]) -> str:
    if {"avx512f", "avx512bw"} <= features:
        return "avx512"
    if "avx2" in features:
        return "avx2"
    return "generic"


# Blocks computed side by side: each block's sum over the pairs is one chain of dependent
# multiply-adds (``vpdpwssd`` on CPUs with VNNI), so one block at a time waits on the chain's
# latency; four chains keep the units busy.
_INTERLEAVE = 4


def _to(builder, value, ity):
    width = value.type.width
    if width < ity.width:
        return builder.sext(value, ity)
    return builder.trunc(value, ity) if width > ity.width else value


def _broadcast(builder, value, vty):
    lane0 = builder.insert_element(ir.Constant(vty, ir.Undefined), value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(lane0, ir.Constant(vty, ir.Undefined), ir.Constant(vty, [0] * vty.count))


def _pmadd_intrinsic(width: int, name: str, screen: bool):
    """An intrinsic summing, over the words, the products of 16 lanes' codes with the broadcast
    query word, for ``nblocks`` consecutive blocks; with ``screen``, :func:`block_screen`'s bars
    as well. Pairs (int16 or int8 codes) take ``pmaddwd``; quads (uint8 codes, 512 bits only)
    take ``vpdpbusd``, and ``offset`` (see :func:`query_offset`) is taken off each sum."""
    i8, i16, i32 = ir.IntType(8), ir.IntType(16), ir.IntType(32)
    words = width // 32  # int32 results per instruction
    vi32 = ir.VectorType(i32, words)
    vi16 = ir.VectorType(i16, 2 * words)
    parts = LANES // words

    def codegen(context, builder, signature, args):
        sig_args = signature.args
        if screen:
            out_a, data_a, d_off, n_words, q_a, n_blocks, offset, norms_a, hi, lo, masks_a = args
            o_off = ir.Constant(d_off.type, 0)
        else:
            out_a, o_off, data_a, d_off, n_words, q_a, n_blocks, offset = args
        data_i, q_i = (1, 4) if screen else (2, 5)
        out_s = context.make_array(sig_args[0])(context, builder, out_a)
        data_s = context.make_array(sig_args[data_i])(context, builder, data_a)
        q_s = context.make_array(sig_args[q_i])(context, builder, q_a)
        quads = sig_args[data_i].dtype == types.uint8
        if quads:
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vi32, [vi32, vi32, vi32]),
                                                "llvm.x86.avx512.vpdpbusd.512")
            per = 4
        else:
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vi32, [vi16, vi16]), name)
            per = 2
        # int8 codes (half the bytes a pass reads) are widened to int16 in the register
        narrow = sig_args[data_i].dtype.bitwidth == 8
        vload = ir.VectorType(i8, per * words) if narrow else vi16
        ity = ir.IntType(64)
        d_off, o_off, n_words, n_blocks = (_to(builder, v, ity) for v in (d_off, o_off, n_words, n_blocks))
        off_v = _broadcast(builder, _to(builder, offset, i32), vi32)
        if screen:
            norms_s = context.make_array(sig_args[7])(context, builder, norms_a)
            masks_s = context.make_array(sig_args[10])(context, builder, masks_a)
            hi_v = _broadcast(builder, _to(builder, hi, i32), vi32)
            lo_v = _broadcast(builder, _to(builder, lo, i32), vi32)
        block = builder.mul(n_words, ir.Constant(ity, per * LANES))
        accs = [cgutils.alloca_once(builder, vi32) for _ in range(_INTERLEAVE * parts)]

        def blocks(first, count):
            """``count`` blocks from block ``first``, side by side."""
            for a in accs[: count * parts]:
                builder.store(ir.Constant(vi32, None), a)
            d_first = builder.add(d_off, builder.mul(first, block))
            with cgutils.for_range(builder, n_words) as loop:
                p = loop.index
                qv = _broadcast(builder, builder.load(builder.gep(q_s.data, [p])), vi32)
                if not quads:
                    qv = builder.bitcast(qv, vi16)
                base = builder.add(d_first, builder.mul(p, ir.Constant(ity, per * LANES)))
                for c in range(count):
                    b_base = builder.add(base, builder.mul(ir.Constant(ity, c), block))
                    for h in range(parts):
                        ptr = builder.gep(data_s.data, [builder.add(b_base, ir.Constant(ity, per * words * h))])
                        codes = builder.load(builder.bitcast(ptr, vload.as_pointer()), align=1)
                        acc = accs[c * parts + h]
                        if quads:
                            total = builder.call(fn, [builder.load(acc), builder.bitcast(codes, vi32), qv])
                        else:
                            if narrow:
                                codes = builder.sext(codes, vi16)
                            total = builder.add(builder.load(acc), builder.call(fn, [codes, qv]))
                        builder.store(total, acc)
            o_first = builder.add(o_off, builder.mul(first, ir.Constant(ity, LANES)))
            for c in range(count):
                mask = ir.Constant(i16, 0)
                for h in range(parts):
                    at = builder.add(o_first, ir.Constant(ity, c * LANES + words * h))
                    value = builder.load(accs[c * parts + h])
                    if quads:
                        value = builder.sub(value, off_v)
                    if screen:
                        # v = |a|^2 - 2 a.q, and the lanes where v reaches either bar
                        n_ptr = builder.gep(norms_s.data, [at])
                        norm = builder.load(builder.bitcast(n_ptr, vi32.as_pointer()), align=4)
                        value = builder.sub(norm, builder.add(value, value))
                        hit = builder.or_(builder.icmp_signed("<=", value, hi_v),
                                          builder.icmp_signed(">=", value, lo_v))
                        bits = builder.zext(builder.bitcast(hit, ir.IntType(words)), i16)
                        mask = builder.or_(mask, builder.shl(bits, ir.Constant(i16, words * h)))
                    ptr = builder.gep(out_s.data, [at])
                    builder.store(value, builder.bitcast(ptr, vi32.as_pointer()), align=4)
                if screen:
                    builder.store(mask, builder.gep(masks_s.data, [builder.add(first, ir.Constant(ity, c))]))

        n_groups = builder.sdiv(n_blocks, ir.Constant(ity, _INTERLEAVE))
        with cgutils.for_range(builder, n_groups) as loop:
            blocks(builder.mul(loop.index, ir.Constant(ity, _INTERLEAVE)), _INTERLEAVE)
        done = builder.mul(n_groups, ir.Constant(ity, _INTERLEAVE))
        with cgutils.for_range(builder, builder.sub(n_blocks, done)) as loop:
            blocks(builder.add(done, loop.index), 1)
        return context.get_dummy_value()

    def check(data):
        if data.dtype == types.uint8 and width != 512:
            raise TypeError("uint8 quads need the 512-bit variant")

    if screen:
        @intrinsic
        def dot_screen(typingctx, out, data, data_off, nwords, qwords, nblocks, offset, norms, hi, lo, masks):
            check(data)
            return types.void(out, data, data_off, nwords, qwords, nblocks, offset, norms, hi, lo, masks), codegen

        return dot_screen

    @intrinsic
    def dot(typingctx, out, out_off, data, data_off, nwords, qwords, nblocks, offset):
        check(data)
        return types.void(out, out_off, data, data_off, nwords, qwords, nblocks, offset), codegen

    return dot


_dot512 = _pmadd_intrinsic(512, "llvm.x86.avx512.pmaddw.d.512", False)
_dot256 = _pmadd_intrinsic(256, "llvm.x86.avx2.pmadd.wd", False)
_screen512 = _pmadd_intrinsic(512, "llvm.x86.avx512.pmaddw.d.512", True)
_screen256 = _pmadd_intrinsic(256, "llvm.x86.avx2.pmadd.wd", True)


def per_word(data):
    """Codes per lane in one word of the layout of ``data``: 4 for uint8 quads, else 2 (pairs)."""


@overload(per_word)
def _per_word(data):
    per = 4 if data.dtype == types.uint8 else 2
    return lambda data: per


def code_shift(data):
    """What is added to a code to store it: 128 for uint8 quads (their codes are in [-127, 127]),
    else 0."""


@overload(code_shift)
def _code_shift(data):
    shift = 128 if data.dtype == types.uint8 else 0
    return lambda data: shift


@njit(cache=True, inline="always")
def query_code(word, e, per):
    """Code e of a query word: two int16 codes (pairs) or four int8 codes (quads)."""
    if per == 2:
        return np.int32(np.int16(word & 0xFFFF)) if e == 0 else np.int32(word >> 16)
    return np.int32(np.int8((word >> (8 * e)) & 0xFF))


@njit(cache=True, inline="always")
def query_offset(data, qwords, nwords):
    """For uint8 quads, sum_j (a_j + 128) q_j - a.q = 128 sum_j q_j (taken off each sum); else 0."""
    shift = code_shift(data)
    if shift == 0:
        return np.int32(0)
    total = 0
    for p in range(nwords):
        for e in range(4):
            total += query_code(qwords[p], e, 4)
    return np.int32(shift * total)


@njit(cache=True)
def block_dot_avx512(out, out_off, data, data_off, npairs, qwords, nblocks=1):
    _dot512(out, out_off, data, data_off, npairs, qwords, nblocks, query_offset(data, qwords, npairs))


@njit(cache=True)
def block_dot_avx2(out, out_off, data, data_off, npairs, qwords, nblocks=1):
    _dot256(out, out_off, data, data_off, npairs, qwords, nblocks, 0)


@njit(cache=True)
def block_dot_generic(out, out_off, data, data_off, npairs, qwords, nblocks=1):
    per = per_word(data)
    shift = code_shift(data)
    for b in range(nblocks):
        o = out_off + b * LANES
        d = data_off + b * npairs * per * LANES
        for lane in range(LANES):
            out[o + lane] = 0
        for p in range(npairs):
            base = d + p * per * LANES
            for e in range(per):
                q = query_code(qwords[p], e, per)
                for lane in range(LANES):
                    out[o + lane] += (np.int32(data[base + per * lane + e]) - shift) * q


@njit(cache=True)
def block_screen_avx512(out, data, data_off, npairs, qwords, nblocks, norms, hi, lo, masks):
    _screen512(out, data, data_off, npairs, qwords, nblocks, query_offset(data, qwords, npairs), norms, hi, lo,
               masks)


@njit(cache=True)
def block_screen_avx2(out, data, data_off, npairs, qwords, nblocks, norms, hi, lo, masks):
    _screen256(out, data, data_off, npairs, qwords, nblocks, 0, norms, hi, lo, masks)


@njit(cache=True)
def block_screen_generic(out, data, data_off, npairs, qwords, nblocks, norms, hi, lo, masks):
    block_dot_generic(out, 0, data, data_off, npairs, qwords, nblocks)
    h = np.int32(hi)
    low = np.int32(lo)
    for b in range(nblocks):
        mask = 0
        for lane in range(LANES):
            i = b * LANES + lane
            v = np.int32(norms[i] - out[i] - out[i])
            out[i] = v
            if v <= h or v >= low:
                mask |= 1 << lane
        masks[b] = np.uint16(mask)


SIMD = _choose(_host_features() if platform.machine().lower() in ("x86_64", "amd64") else set())
block_dot = {"avx512": block_dot_avx512, "avx2": block_dot_avx2, "generic": block_dot_generic}[SIMD]
QUADS = SIMD == "avx512" and _quads(_host_features())
block_screen = {"avx512": block_screen_avx512, "avx2": block_screen_avx2, "generic": block_screen_generic}[SIMD]
