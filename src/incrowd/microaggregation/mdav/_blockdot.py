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
bytes; ``_screen.quantize_narrow``) are widened to int16 in the register.

Three versions give the same integers: AVX-512BW (one ``pmaddwd`` per pair), AVX2 (two), and a
plain loop for every other CPU. The host's features pick one at import. (No override by
environment: numba caches the kernels that call ``block_dot`` with the choice frozen in, so a
forced choice would outlive the process that made it. The tests compare the three directly.)
"""

from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

LANES = 16


def _host_features() -> set[str]:
    try:
        import llvmlite.binding as llvm

        return {name for name, on in llvm.get_host_cpu_features().items() if on}
    except Exception:  # a platform llvmlite cannot query: take the portable loop
        return set()


def _choose(features: set[str]) -> str:
    if {"avx512f", "avx512bw"} <= features:
        return "avx512"
    if "avx2" in features:
        return "avx2"
    return "generic"


def _pmadd_intrinsic(width: int, name: str):
    """An intrinsic summing, over pairs, pmaddwd(codes of 16 lanes, broadcast query word)."""
    i16, i32 = ir.IntType(16), ir.IntType(32)
    words = width // 32  # int32 results per instruction
    vi32 = ir.VectorType(i32, words)
    vi16 = ir.VectorType(i16, 2 * words)
    parts = LANES // words

    @intrinsic
    def dot(typingctx, out, out_off, data, data_off, npairs, qwords):
        sig = types.void(out, out_off, data, data_off, npairs, qwords)

        def codegen(context, builder, signature, args):
            out_a, o_off, data_a, d_off, n_pairs, q_a = args
            out_s = context.make_array(signature.args[0])(context, builder, out_a)
            data_s = context.make_array(signature.args[2])(context, builder, data_a)
            q_s = context.make_array(signature.args[5])(context, builder, q_a)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vi32, [vi16, vi16]), name)
            # int8 codes (half the bytes a pass reads) are widened to int16 in the register
            narrow = signature.args[2].dtype.bitwidth == 8
            vload = ir.VectorType(ir.IntType(8), 2 * words) if narrow else vi16
            accs = [cgutils.alloca_once_value(builder, ir.Constant(vi32, None)) for _ in range(parts)]
            with cgutils.for_range(builder, n_pairs) as loop:
                p = loop.index
                q = builder.load(builder.gep(q_s.data, [p]))
                qv = builder.insert_element(ir.Constant(vi32, ir.Undefined), q, ir.Constant(i32, 0))
                qv = builder.shuffle_vector(qv, ir.Constant(vi32, ir.Undefined), ir.Constant(vi32, [0] * words))
                qv = builder.bitcast(qv, vi16)
                base = builder.add(d_off, builder.mul(p, ir.Constant(p.type, 2 * LANES)))
                for h in range(parts):
                    ptr = builder.gep(data_s.data, [builder.add(base, ir.Constant(p.type, 2 * words * h))])
                    codes = builder.load(builder.bitcast(ptr, vload.as_pointer()), align=1)
                    if narrow:
                        codes = builder.sext(codes, vi16)
                    builder.store(builder.add(builder.load(accs[h]), builder.call(fn, [codes, qv])), accs[h])
            for h in range(parts):
                ptr = builder.gep(out_s.data, [builder.add(o_off, ir.Constant(o_off.type, words * h))])
                builder.store(builder.load(accs[h]), builder.bitcast(ptr, vi32.as_pointer()), align=4)
            return context.get_dummy_value()

        return sig, codegen

    return dot


_dot512 = _pmadd_intrinsic(512, "llvm.x86.avx512.pmaddw.d.512")
_dot256 = _pmadd_intrinsic(256, "llvm.x86.avx2.pmadd.wd")


@njit(cache=True)
def block_dot_avx512(out, out_off, data, data_off, npairs, qwords):
    _dot512(out, out_off, data, data_off, npairs, qwords)


@njit(cache=True)
def block_dot_avx2(out, out_off, data, data_off, npairs, qwords):
    _dot256(out, out_off, data, data_off, npairs, qwords)


@njit(cache=True)
def block_dot_generic(out, out_off, data, data_off, npairs, qwords):
    for lane in range(LANES):
        out[out_off + lane] = 0
    for p in range(npairs):
        word = qwords[p]
        lo = np.int32(np.int16(word & 0xFFFF))  # the word holds the query's two int16 codes
        hi = np.int32(word >> 16)
        base = data_off + p * 2 * LANES
        for lane in range(LANES):
            out[out_off + lane] += np.int32(data[base + 2 * lane]) * lo + np.int32(data[base + 2 * lane + 1]) * hi


SIMD = _choose(_host_features() if platform.machine().lower() in ("x86_64", "amd64") else set())
block_dot = {"avx512": block_dot_avx512, "avx2": block_dot_avx2, "generic": block_dot_generic}[SIMD]
