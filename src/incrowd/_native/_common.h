/* What every kernel module of incrowd._native shares: the size check of a buffer that came in
 * through the buffer protocol and the open-addressing hash table's allocation. A new kernel module
 * is one file, src/incrowd/_native/_NAME.c, that includes this header; setup.py builds every such
 * file as the extension module incrowd._native._NAME. */
#ifndef INCROWD_NATIVE_COMMON_H
#define INCROWD_NATIVE_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int check_size(const Py_buffer *b, Py_ssize_t count, Py_ssize_t item, const char *name) {
    if (b->len != count * item) {
        PyErr_Format(PyExc_ValueError, "%s holds %zd bytes; expected %zd", name, b->len, count * item);
        return -1;
    }
    return 0;
}

#define EMPTY (-1)

/* A hash table of at least twice n slots (a power of two, at least 16), not yet emptied; NULL
   with MemoryError set when it cannot be had. */
static inline int64_t *open_table(Py_ssize_t n, Py_ssize_t *cap_out) {
    Py_ssize_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    *cap_out = cap;
    int64_t *table = malloc(sizeof(int64_t) * (size_t)cap);
    if (table == NULL) PyErr_NoMemory();
    return table;
}

/* A function built twice on Linux x86-64, for AVX2 and for the baseline, the loader picking the
   one the CPU runs (the rest of a wheel runs on any x86-64): for integer loops only (a float
   division at most: no multiply-add to fuse), whose every path gives the same bytes. The baseline (SSE2) has no 64-bit compare, and such a loop runs at
   about half numba's speed (numba compiles for the host CPU) without one. */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)  /* ifunc: glibc, not musl */
#define INTEGER_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define INTEGER_CLONES
#endif

#endif
