/* What every kernel module of incrowd._native shares: the size check of a buffer that came in
 * through the buffer protocol, the open-addressing hash table's allocation, and the k-d trees'
 * distance and split (MDAV's tree and l's merge sum a distance in one order). A new kernel module
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

/* ---- the k-d trees (_mdav_tree.c, _sensitive.c): the distance and the split ---- */

/* The squared Euclidean distance of x from q (m values each), summed feature by feature (each
   difference point minus query): the order every scan and tree of the package sums it in. */
static inline double squared_distance(const double *x, const double *q, Py_ssize_t m) {
    double acc = 0.0;
    for (Py_ssize_t j = 0; j < m; j++) {
        double diff = x[j] - q[j];
        acc += diff * diff;
    }
    return acc;
}

/* Whether row a's value in column dim of X (rows of m values) comes before row b's, ties by row. */
static inline int rank_less(const double *X, Py_ssize_t m, Py_ssize_t dim, int64_t a, int64_t b) {
    double xa = X[a * m + dim], xb = X[b * m + dim];
    return xa < xb || (xa == xb && a < b);
}

/* perm[a:b] partitioned so that perm[mid] holds the (value, row) of rank mid - a, smaller before
   it and larger after (quickselect; (value, row) keys are distinct, so copies do not degrade it) */
static inline void select_rank(const double *X, Py_ssize_t m, Py_ssize_t dim, int64_t *perm, Py_ssize_t a,
                               Py_ssize_t b, Py_ssize_t mid) {
    Py_ssize_t l = a, r = b - 1;
    while (r > l) {
        Py_ssize_t c = l + (r - l) / 2;
        /* median of three to the front as the pivot */
        if (rank_less(X, m, dim, perm[c], perm[l])) { int64_t t = perm[c]; perm[c] = perm[l]; perm[l] = t; }
        if (rank_less(X, m, dim, perm[r], perm[l])) { int64_t t = perm[r]; perm[r] = perm[l]; perm[l] = t; }
        if (rank_less(X, m, dim, perm[r], perm[c])) { int64_t t = perm[r]; perm[r] = perm[c]; perm[c] = t; }
        int64_t t = perm[c]; perm[c] = perm[l]; perm[l] = t;
        int64_t pivot = perm[l];
        Py_ssize_t i = l + 1, j = r;
        for (;;) {
            while (i <= j && rank_less(X, m, dim, perm[i], pivot)) i++;
            while (i <= j && rank_less(X, m, dim, pivot, perm[j])) j--;
            if (i >= j) break;
            t = perm[i]; perm[i] = perm[j]; perm[j] = t;
            i++;
            j--;
        }
        t = perm[l]; perm[l] = perm[j]; perm[j] = t;
        if (j == mid) return;
        if (j < mid) l = j + 1;
        else r = j - 1;
    }
}

#endif
