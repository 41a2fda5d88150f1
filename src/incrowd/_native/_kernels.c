/* The kernels a one-shot command runs, compiled ahead of time (at install), so that a command
 * that runs only these never starts numba (its import and runtime cost more than the work on a
 * survey-sized file).
 *
 * Each is the numba kernel it replaced, loop for loop, with the same arithmetic in the same order;
 * the build turns floating-point contraction off (-ffp-contract=off: no fused multiply-add, as
 * numba compiles without fastmath) and asks for no CPU-specific instructions, so the results are
 * numba's bit for bit on every machine. A plain CPython extension without numpy's C API: the
 * arrays come in through the buffer protocol, C-contiguous, their shapes checked in
 * incrowd/_native/__init__.py and their sizes again here. The work runs without the GIL. */
#include "_common.h"

/* ---------------------------------------------------------------------------------------------
 * A node's classes from the bottom classes (incrowd.generalization.node_classes): group the
 * bottom classes by their radix key at the node, by open addressing on the key's hash. */

/* node_groups(codes0, m, first_key, maps, maps_columns, map_rows, widths, gid, group_key,
 * group_first) -> number of groups. codes0: n x m int64; first_key, gid, group_key, group_first:
 * n int64; maps: rows x maps_columns int64; map_rows, widths: m int64. */
static PyObject *node_groups(PyObject *self, PyObject *args) {
    Py_buffer cb, fb, mb, rb, wb, gb, kb, sb;
    Py_ssize_t m, maps_columns;
    if (!PyArg_ParseTuple(args, "y*ny*y*ny*y*w*w*w*", &cb, &m, &fb, &mb, &maps_columns, &rb, &wb, &gb, &kb, &sb))
        return NULL;
    PyObject *result = NULL;
    int64_t *table = NULL;
    Py_ssize_t n = fb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t maps_rows = maps_columns > 0 ? mb.len / (Py_ssize_t)sizeof(int64_t) / maps_columns : 0;
    if (m < 0 || maps_columns < 0 || check_size(&cb, n * m, sizeof(int64_t), "codes0") ||
        check_size(&fb, n, sizeof(int64_t), "first_key") ||
        check_size(&mb, maps_rows * maps_columns, sizeof(int64_t), "maps") ||
        check_size(&rb, m, sizeof(int64_t), "map_rows") || check_size(&wb, m, sizeof(int64_t), "widths") ||
        check_size(&gb, n, sizeof(int64_t), "gid") || check_size(&kb, n, sizeof(int64_t), "group_key") ||
        check_size(&sb, n, sizeof(int64_t), "group_first"))
        goto done;
    const int64_t *codes0 = cb.buf, *first_key = fb.buf, *maps = mb.buf, *map_rows = rb.buf, *widths = wb.buf;
    int64_t *gid = gb.buf, *group_key = kb.buf, *group_first = sb.buf;
    for (Py_ssize_t j = 0; j < m; j++)
        if (map_rows[j] < 0 || map_rows[j] >= maps_rows) {
            PyErr_Format(PyExc_ValueError, "map_rows[%zd] = %lld is not a row of maps", j, (long long)map_rows[j]);
            goto done;
        }
    Py_ssize_t cap;
    table = open_table(n, &cap);
    if (table == NULL) goto done;
    Py_ssize_t g = 0, bad_row = -1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < cap; i++) table[i] = EMPTY;
    const uint64_t mask = (uint64_t)(cap - 1);
    for (Py_ssize_t r = 0; r < n && bad_row < 0; r++) {
        /* unsigned: an int64 that wraps (the caller keeps keys within int64) wraps as numba's */
        uint64_t key = (uint64_t)first_key[r];
        for (Py_ssize_t j = 0; j < m; j++) {
            int64_t code = codes0[r * m + j];
            if (code < 0 || code >= maps_columns) {
                bad_row = r;
                break;
            }
            key = key * (uint64_t)widths[j] + (uint64_t)maps[map_rows[j] * maps_columns + code];
        }
        uint64_t h = key * UINT64_C(0x9E3779B97F4A7C15);
        uint64_t pos = (h ^ (h >> 29)) & mask;
        for (;;) {
            int64_t e = table[pos];
            if (e == EMPTY) {
                table[pos] = g;
                group_key[g] = (int64_t)key;
                group_first[g] = r;
                gid[r] = g;
                g++;
                break;
            }
            if (group_key[e] == (int64_t)key) {
                gid[r] = e;
                break;
            }
            pos = (pos + 1) & mask;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad_row >= 0) {
        PyErr_Format(PyExc_ValueError, "codes0 row %zd holds a code outside maps' columns", bad_row);
        goto done;
    }
    result = PyLong_FromSsize_t(g);
done:
    free(table);
    PyBuffer_Release(&cb); PyBuffer_Release(&fb); PyBuffer_Release(&mb); PyBuffer_Release(&rb);
    PyBuffer_Release(&wb); PyBuffer_Release(&gb); PyBuffer_Release(&kb); PyBuffer_Release(&sb);
    return result;
}

/* ---------------------------------------------------------------------------------------------
 * MDAV "generic" (incrowd.microaggregation.mdav_labels), the plain scan: points column-major,
 * dead slots compacted away lazily, distances to P reused for Q, the k nearest by one partial
 * selection scan. The exactness contract of incrowd/microaggregation/_kernels.py: distances
 * summed over columns in column order from 0, a centroid the sequential row-order sum divided by
 * the count, ties to the lowest row. */

static void sq_dist_to(const double *restrict Xt, Py_ssize_t stride, Py_ssize_t m, Py_ssize_t n_slots,
                       const double *restrict point, double *restrict out) {
    for (Py_ssize_t i = 0; i < n_slots; i++) out[i] = 0.0;
    for (Py_ssize_t j = 0; j < m; j++) {
        const double pj = point[j];
        const double *restrict col = Xt + j * stride;
        for (Py_ssize_t i = 0; i < n_slots; i++) {
            double diff = col[i] - pj;
            out[i] += diff * diff;
        }
    }
}

static Py_ssize_t farthest_alive(const double *d, const uint8_t *alive, Py_ssize_t n_slots) {
    Py_ssize_t best = -1;
    double best_d = -1.0;
    for (Py_ssize_t i = 0; i < n_slots; i++)
        if (alive[i] && (best < 0 || d[i] > best_d)) {
            best = i;
            best_d = d[i];
        }
    return best;
}

static Py_ssize_t nearest_alive(const double *restrict d, const uint8_t *restrict alive, Py_ssize_t n_slots, Py_ssize_t exclude,
                                Py_ssize_t count, int64_t *restrict out, double *restrict buf_d) {
    if (count <= 0) return 0;
    Py_ssize_t filled = 0;
    for (Py_ssize_t i = 0; i < n_slots; i++) {
        if (!alive[i] || i == exclude) continue;
        double di = d[i];
        if (filled == count && di >= buf_d[count - 1]) continue;
        Py_ssize_t pos = filled < count ? filled : count - 1;
        while (pos > 0 && buf_d[pos - 1] > di) {
            buf_d[pos] = buf_d[pos - 1];
            out[pos] = out[pos - 1];
            pos--;
        }
        buf_d[pos] = di;
        out[pos] = i;
        if (filled < count) filled++;
    }
    return filled;
}

static void centroid_alive(const double *Xt, Py_ssize_t stride, Py_ssize_t m, const uint8_t *alive, Py_ssize_t n_slots,
                           Py_ssize_t n_live, double *out) {
    for (Py_ssize_t j = 0; j < m; j++) out[j] = 0.0;
    for (Py_ssize_t i = 0; i < n_slots; i++)
        if (alive[i])
            for (Py_ssize_t j = 0; j < m; j++) out[j] += Xt[j * stride + i];
    for (Py_ssize_t j = 0; j < m; j++) out[j] /= (double)n_live;
}

static Py_ssize_t compact(double *Xt, Py_ssize_t stride, Py_ssize_t m, int64_t *ids, int64_t *slot_of, uint8_t *alive,
                          Py_ssize_t n_slots) {
    Py_ssize_t w = 0;
    for (Py_ssize_t i = 0; i < n_slots; i++) {
        if (alive[i]) {
            if (w != i) {
                for (Py_ssize_t j = 0; j < m; j++) Xt[j * stride + w] = Xt[j * stride + i];
                ids[w] = ids[i];
                slot_of[ids[w]] = w;
            }
            alive[w] = 1;
            w++;
        }
    }
    for (Py_ssize_t i = w; i < n_slots; i++) alive[i] = 0;
    return w;
}

static void take_group(const double *Xt, Py_ssize_t stride, Py_ssize_t m, Py_ssize_t n_slots, const int64_t *ids,
                       uint8_t *alive, int64_t *labels, double *d, Py_ssize_t center, Py_ssize_t k, int64_t *sel,
                       double *buf_d, int64_t group, double *point) {
    for (Py_ssize_t j = 0; j < m; j++) point[j] = Xt[j * stride + center];
    sq_dist_to(Xt, stride, m, n_slots, point, d);
    nearest_alive(d, alive, n_slots, center, k - 1, sel, buf_d);
    labels[ids[center]] = group;
    alive[center] = 0;
    for (Py_ssize_t t = 0; t < k - 1; t++) {
        labels[ids[sel[t]]] = group;
        alive[sel[t]] = 0;
    }
}

/* mdav_labels(X, m, k, labels): X n x m float64, labels n int64 (written) */
static PyObject *mdav_labels(PyObject *self, PyObject *args) {
    Py_buffer xb, lb;
    Py_ssize_t m, k;
    if (!PyArg_ParseTuple(args, "y*nnw*", &xb, &m, &k, &lb)) return NULL;
    PyObject *result = NULL;
    double *Xt = NULL, *d = NULL, *c = NULL, *point = NULL, *buf_d = NULL;
    int64_t *ids = NULL, *slot_of = NULL, *sel = NULL;
    uint8_t *alive = NULL;
    Py_ssize_t n = lb.len / (Py_ssize_t)sizeof(int64_t);
    if (k < 1) {
        PyErr_Format(PyExc_ValueError, "k must be at least 1; got %zd", k);
        goto done;
    }
    if (m < 0 || check_size(&xb, n * m, sizeof(double), "X") || check_size(&lb, n, sizeof(int64_t), "labels"))
        goto done;
    const double *X = xb.buf;
    int64_t *labels = lb.buf;
    if (n < 2 * k) {
        for (Py_ssize_t i = 0; i < n; i++) labels[i] = 0;
        result = Py_None;
        goto done;
    }
    Py_ssize_t sel_size = k > 1 ? k - 1 : 1;
    Xt = malloc(sizeof(double) * (size_t)(n * (m ? m : 1)));
    d = malloc(sizeof(double) * (size_t)n);
    c = malloc(sizeof(double) * (size_t)(m ? m : 1));
    point = malloc(sizeof(double) * (size_t)(m ? m : 1));
    buf_d = malloc(sizeof(double) * (size_t)sel_size);
    ids = malloc(sizeof(int64_t) * (size_t)n);
    slot_of = malloc(sizeof(int64_t) * (size_t)n);
    sel = malloc(sizeof(int64_t) * (size_t)sel_size);
    alive = malloc((size_t)n);
    if (!Xt || !d || !c || !point || !buf_d || !ids || !slot_of || !sel || !alive) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        labels[i] = -1;
        ids[i] = i;
        slot_of[i] = i;
        alive[i] = 1;
        for (Py_ssize_t j = 0; j < m; j++) Xt[j * n + i] = X[i * m + j];
    }
    Py_ssize_t n_slots = n, n_live = n;
    int64_t group = 0;
    while (n_live >= 2 * k) {
        centroid_alive(Xt, n, m, alive, n_slots, n_live, c);
        sq_dist_to(Xt, n, m, n_slots, c, d);
        Py_ssize_t p = farthest_alive(d, alive, n_slots);
        take_group(Xt, n, m, n_slots, ids, alive, labels, d, p, k, sel, buf_d, group, point);
        group++;
        /* distance reuse: Q is the farthest remaining row from P, read off the same distances */
        Py_ssize_t q = farthest_alive(d, alive, n_slots);
        take_group(Xt, n, m, n_slots, ids, alive, labels, d, q, k, sel, buf_d, group, point);
        group++;
        n_live -= 2 * k;
        /* compact once a quarter of the slots is dead (numba compares the int with 0.25 * n_slots in float64) */
        if ((double)(n_slots - n_live) > 0.25 * (double)n_slots)
            n_slots = compact(Xt, n, m, ids, slot_of, alive, n_slots);
    }
    int64_t rest = n_live >= k ? group : group - 1;
    for (Py_ssize_t i = 0; i < n_slots; i++)
        if (alive[i]) labels[ids[i]] = rest;
    Py_END_ALLOW_THREADS
    result = Py_None;
done:
    free(Xt); free(d); free(c); free(point); free(buf_d); free(ids); free(slot_of); free(sel); free(alive);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&lb);
    Py_XINCREF(result);
    return result;
}

/* ---------------------------------------------------------------------------------------------
 * Per-group column sums (incrowd.values.group_means), each a sequential sum in row order. */

/* group_sums(X, m, labels, g, inverse_units or None, sums): X n x m float64, labels n int64,
 * inverse_units m float64 (each value multiplied by its column's before it is added), sums g x m
 * float64 (added to: the caller passes zeros) */
static PyObject *group_sums(PyObject *self, PyObject *args) {
    Py_buffer xb, lb, sb, ub = {0};
    Py_ssize_t m, g;
    PyObject *units;
    if (!PyArg_ParseTuple(args, "y*ny*nOw*", &xb, &m, &lb, &g, &units, &sb)) return NULL;
    PyObject *result = NULL;
    int have_units = units != Py_None;
    Py_ssize_t n = lb.len / (Py_ssize_t)sizeof(int64_t);
    if (have_units && PyObject_GetBuffer(units, &ub, PyBUF_SIMPLE) < 0) {
        have_units = 0;
        goto done;
    }
    if (m < 0 || g < 0 || check_size(&xb, n * m, sizeof(double), "X") ||
        check_size(&lb, n, sizeof(int64_t), "labels") || check_size(&sb, g * m, sizeof(double), "sums") ||
        (have_units && check_size(&ub, m, sizeof(double), "inverse_units")))
        goto done;
    const double *X = xb.buf, *inverse_units = have_units ? ub.buf : NULL;
    const int64_t *labels = lb.buf;
    double *sums = sb.buf;
    Py_ssize_t bad_row = -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (labels[i] < 0 || labels[i] >= g) {
            bad_row = i;
            break;
        }
    if (bad_row >= 0) {
        PyErr_Format(PyExc_ValueError, "row %zd's group %lld is not below %zd", bad_row, (long long)labels[bad_row], g);
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (have_units) {
        for (Py_ssize_t i = 0; i < n; i++)
            for (Py_ssize_t j = 0; j < m; j++) sums[labels[i] * m + j] += X[i * m + j] * inverse_units[j];
    } else {
        for (Py_ssize_t i = 0; i < n; i++)
            for (Py_ssize_t j = 0; j < m; j++) sums[labels[i] * m + j] += X[i * m + j];
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    if (have_units) PyBuffer_Release(&ub);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&lb);
    PyBuffer_Release(&sb);
    return result;
}

/* ---------------------------------------------------------------------------------------------
 * A node's working table (incrowd.generalization: generalize_table, rollup, node_histograms):
 * rows of level codes mapped to a node's levels, equal rows merged by open addressing on a hash
 * of the code tuple, and histograms of the class sizes. */

/* The codes come as int32 (a lattice's bottom classes) or int64, each loop compiled for both:
 * numba compiled one kernel per type too, and a copy to int64 would cost as much as the work. */
#define ROW_HASH(T)                                                                                 \
    static uint64_t row_hash_##T(const T *row, Py_ssize_t n_key) {                                  \
        uint64_t h = UINT64_C(14695981039346656037);                                                \
        for (Py_ssize_t c = 0; c < n_key; c++)                                                      \
            h ^= (uint64_t)(int64_t)row[c] + UINT64_C(0x9E3779B97F4A7C15) + (h << 6) + (h >> 2);    \
        h ^= h >> 33;                                                                               \
        h *= UINT64_C(0xFF51AFD7ED558CCD);                                                          \
        h ^= h >> 33;                                                                               \
        return h;                                                                                   \
    }

/* Groups numbered by first appearance: first[g] is group g's first row, sums[g] its summed
 * counts, inverse[r] row r's group; table: cap slots (a power of two at least 2n), filled here. */
#define GROUP(T)                                                                                    \
    static Py_ssize_t group_##T(const T *codes, Py_ssize_t n, Py_ssize_t n_cols, Py_ssize_t n_key,  \
                                const int64_t *counts, int64_t *first, int64_t *sums, int64_t *inverse, \
                                int64_t *table, Py_ssize_t cap) {                                   \
        Py_ssize_t g = 0;                                                                           \
        for (Py_ssize_t i = 0; i < cap; i++) table[i] = EMPTY;                                      \
        const uint64_t mask = (uint64_t)(cap - 1);                                                  \
        for (Py_ssize_t r = 0; r < n; r++) {                                                        \
            const T *row = codes + r * n_cols;                                                      \
            uint64_t pos = row_hash_##T(row, n_key) & mask;                                         \
            for (;;) {                                                                              \
                int64_t gid = table[pos];                                                           \
                if (gid == EMPTY) {                                                                 \
                    table[pos] = g;                                                                 \
                    first[g] = r;                                                                   \
                    sums[g] = counts[r];                                                            \
                    inverse[r] = g;                                                                 \
                    g++;                                                                            \
                    break;                                                                          \
                }                                                                                   \
                const T *f = codes + first[gid] * n_cols;                                           \
                int same = 1;                                                                       \
                for (Py_ssize_t c = 0; c < n_key; c++)                                              \
                    if (f[c] != row[c]) {                                                           \
                        same = 0;                                                                   \
                        break;                                                                      \
                    }                                                                               \
                if (same) {                                                                         \
                    sums[gid] += counts[r];                                                         \
                    inverse[r] = gid;                                                               \
                    break;                                                                          \
                }                                                                                   \
                pos = (pos + 1) & mask;                                                             \
            }                                                                                       \
        }                                                                                           \
        return g;                                                                                   \
    }

/* mapped[r, j] = maps[map_rows[j], codes[r, j]] where map_rows[j] >= 0, codes[r, j] where it is
 * -1 (a map's value stored in the codes' type, as numba's assignment into a copy of the codes
 * did). Returns the first row holding a code outside maps' columns (its column in *bad_col), or -1. */
#define MAP(T)                                                                                      \
    static Py_ssize_t map_##T(const T *codes, Py_ssize_t n, Py_ssize_t n_cols, const int64_t *maps, \
                              Py_ssize_t maps_columns, const int64_t *map_rows, T *mapped,          \
                              Py_ssize_t *bad_col) {                                                \
        for (Py_ssize_t r = 0; r < n; r++)                                                          \
            for (Py_ssize_t j = 0; j < n_cols; j++) {                                               \
                int64_t code = codes[r * n_cols + j];                                               \
                if (map_rows[j] < 0) {                                                              \
                    mapped[r * n_cols + j] = (T)code;                                               \
                } else if (code < 0 || code >= maps_columns) {                                      \
                    *bad_col = j;                                                                   \
                    return r;                                                                       \
                } else {                                                                            \
                    mapped[r * n_cols + j] = (T)maps[map_rows[j] * maps_columns + code];            \
                }                                                                                   \
            }                                                                                       \
        return -1;                                                                                  \
    }

ROW_HASH(int32_t)
ROW_HASH(int64_t)
GROUP(int32_t)
GROUP(int64_t)
MAP(int32_t)
MAP(int64_t)

static int check_itemsize(Py_ssize_t itemsize) {
    if (itemsize != 4 && itemsize != 8) {
        PyErr_Format(PyExc_ValueError, "codes must be int32 or int64; got items of %zd bytes", itemsize);
        return -1;
    }
    return 0;
}

/* group_rows(codes, itemsize, n_cols, n_key, counts, first, sums, inverse) -> number of groups.
 * codes: n x n_cols int32 (itemsize 4) or int64 (8), grouped by its first n_key columns; counts,
 * first, sums, inverse: n int64. */
static PyObject *group_rows(PyObject *self, PyObject *args) {
    Py_buffer cb, nb, fb, sb, ib;
    Py_ssize_t itemsize, n_cols, n_key;
    if (!PyArg_ParseTuple(args, "y*nnny*w*w*w*", &cb, &itemsize, &n_cols, &n_key, &nb, &fb, &sb, &ib)) return NULL;
    PyObject *result = NULL;
    int64_t *table = NULL;
    Py_ssize_t n = nb.len / (Py_ssize_t)sizeof(int64_t);
    if (check_itemsize(itemsize)) goto done;
    if (n_cols < 0 || n_key < 0 || n_key > n_cols) {
        PyErr_Format(PyExc_ValueError, "n_key = %zd must lie in [0, n_cols = %zd]", n_key, n_cols);
        goto done;
    }
    if (check_size(&cb, n * n_cols, itemsize, "codes") || check_size(&fb, n, sizeof(int64_t), "first") ||
        check_size(&sb, n, sizeof(int64_t), "sums") || check_size(&ib, n, sizeof(int64_t), "inverse"))
        goto done;
    Py_ssize_t cap;
    table = open_table(n, &cap);
    if (table == NULL) goto done;
    Py_ssize_t g;
    Py_BEGIN_ALLOW_THREADS
    g = itemsize == 4 ? group_int32_t(cb.buf, n, n_cols, n_key, nb.buf, fb.buf, sb.buf, ib.buf, table, cap)
                      : group_int64_t(cb.buf, n, n_cols, n_key, nb.buf, fb.buf, sb.buf, ib.buf, table, cap);
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(g);
done:
    free(table);
    PyBuffer_Release(&cb); PyBuffer_Release(&nb); PyBuffer_Release(&fb); PyBuffer_Release(&sb);
    PyBuffer_Release(&ib);
    return result;
}

/* merge_rows(codes, itemsize, n_cols, maps, maps_columns, map_rows, counts, merged, sums) ->
 * number of groups: codes mapped (map_rows[j]: a row of maps, or -1: the column kept) into a scratch table, group its rows by every column (group_rows), then
 * merged[g] = the mapped row of group g's first row, sums[g] its summed counts. One call per
 * node: a lattice build merges thousands of small tables, where three calls and numpy's gather
 * cost more than the work. codes, merged: n x n_cols of the codes' type; counts, sums: n int64. */
static PyObject *merge_rows(PyObject *self, PyObject *args) {
    Py_buffer cb, mb, rb, nb, ob, sb;
    Py_ssize_t itemsize, n_cols, maps_columns;
    if (!PyArg_ParseTuple(args, "y*nny*ny*y*w*w*", &cb, &itemsize, &n_cols, &mb, &maps_columns, &rb, &nb, &ob, &sb))
        return NULL;
    PyObject *result = NULL;
    char *mapped = NULL;
    int64_t *table = NULL, *first = NULL, *inverse = NULL;
    Py_ssize_t n = nb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t maps_rows = maps_columns > 0 ? mb.len / (Py_ssize_t)sizeof(int64_t) / maps_columns : 0;
    if (check_itemsize(itemsize)) goto done;
    if (n_cols < 0 || maps_columns < 0 || check_size(&cb, n * n_cols, itemsize, "codes") ||
        check_size(&mb, maps_rows * maps_columns, sizeof(int64_t), "maps") ||
        check_size(&rb, n_cols, sizeof(int64_t), "map_rows") || check_size(&ob, n * n_cols, itemsize, "merged") ||
        check_size(&sb, n, sizeof(int64_t), "sums"))
        goto done;
    const int64_t *map_rows = rb.buf;
    for (Py_ssize_t j = 0; j < n_cols; j++)
        if (map_rows[j] < -1 || map_rows[j] >= maps_rows) {
            PyErr_Format(PyExc_ValueError, "map_rows[%zd] = %lld is not a row of maps", j, (long long)map_rows[j]);
            goto done;
        }
    Py_ssize_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    size_t row_bytes = (size_t)(n_cols * itemsize);
    mapped = malloc(row_bytes * (size_t)n + 1);
    table = malloc(sizeof(int64_t) * (size_t)cap);
    first = malloc(sizeof(int64_t) * (size_t)n + 1);
    inverse = malloc(sizeof(int64_t) * (size_t)n + 1);
    if (!mapped || !table || !first || !inverse) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t g = 0, bad_row, bad_col = -1;
    Py_BEGIN_ALLOW_THREADS
    if (itemsize == 4) {
        bad_row = map_int32_t(cb.buf, n, n_cols, mb.buf, maps_columns, map_rows, (int32_t *)mapped, &bad_col);
        if (bad_row < 0)
            g = group_int32_t((int32_t *)mapped, n, n_cols, n_cols, nb.buf, first, sb.buf, inverse, table, cap);
    } else {
        bad_row = map_int64_t(cb.buf, n, n_cols, mb.buf, maps_columns, map_rows, (int64_t *)mapped, &bad_col);
        if (bad_row < 0)
            g = group_int64_t((int64_t *)mapped, n, n_cols, n_cols, nb.buf, first, sb.buf, inverse, table, cap);
    }
    for (Py_ssize_t e = 0; e < g; e++)
        memcpy((char *)ob.buf + (size_t)e * row_bytes, mapped + (size_t)first[e] * row_bytes, row_bytes);
    Py_END_ALLOW_THREADS
    if (bad_row >= 0) {
        PyErr_Format(PyExc_ValueError, "codes row %zd column %zd holds a code outside maps' columns", bad_row, bad_col);
        goto done;
    }
    result = PyLong_FromSsize_t(g);
done:
    free(mapped); free(table); free(first); free(inverse);
    PyBuffer_Release(&cb); PyBuffer_Release(&mb); PyBuffer_Release(&rb); PyBuffer_Release(&nb);
    PyBuffer_Release(&ob); PyBuffer_Release(&sb);
    return result;
}

/* count_by_value(values, weights, keys, items, totals) -> number of distinct values. values,
 * weights, keys, items, totals: n int64, values >= 0. The distinct values ascending (keys), how
 * many items hold each, and their summed weights. */
static PyObject *count_by_value(PyObject *self, PyObject *args) {
    Py_buffer vb, wb, kb, ib, tb;
    if (!PyArg_ParseTuple(args, "y*y*w*w*w*", &vb, &wb, &kb, &ib, &tb)) return NULL;
    PyObject *result = NULL;
    int64_t *items = NULL, *total = NULL;
    Py_ssize_t n = vb.len / (Py_ssize_t)sizeof(int64_t);
    if (check_size(&wb, n, sizeof(int64_t), "weights") || check_size(&kb, n, sizeof(int64_t), "keys") ||
        check_size(&ib, n, sizeof(int64_t), "items") || check_size(&tb, n, sizeof(int64_t), "totals"))
        goto done;
    const int64_t *values = vb.buf, *weights = wb.buf;
    int64_t *keys = kb.buf, *out_items = ib.buf, *out_total = tb.buf;
    int64_t top = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (values[i] < 0) {
            PyErr_Format(PyExc_ValueError, "values[%zd] = %lld is negative", i, (long long)values[i]);
            goto done;
        }
        if (values[i] > top) top = values[i];
    }
    items = calloc((size_t)top + 1, sizeof(int64_t));
    total = calloc((size_t)top + 1, sizeof(int64_t));
    if (items == NULL || total == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t k = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        items[values[i]] += 1;
        total[values[i]] += weights[i];
    }
    for (int64_t v = 0; v <= top; v++)
        if (items[v] > 0) {
            keys[k] = v;
            out_items[k] = items[v];
            out_total[k] = total[v];
            k++;
        }
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(k);
done:
    free(items);
    free(total);
    PyBuffer_Release(&vb); PyBuffer_Release(&wb); PyBuffer_Release(&kb); PyBuffer_Release(&ib);
    PyBuffer_Release(&tb);
    return result;
}

static PyMethodDef methods[] = {
    {"node_groups", node_groups, METH_VARARGS,
     "node_groups(codes0, m, first_key, maps, maps_columns, map_rows, widths, gid, group_key, group_first) -> int"},
    {"mdav_labels", mdav_labels, METH_VARARGS, "mdav_labels(X, m, k, labels) -> None"},
    {"group_sums", group_sums, METH_VARARGS, "group_sums(X, m, labels, g, inverse_units, sums) -> None"},
    {"group_rows", group_rows, METH_VARARGS, "group_rows(codes, itemsize, n_cols, n_key, counts, first, sums, inverse) -> int"},
    {"merge_rows", merge_rows, METH_VARARGS,
     "merge_rows(codes, itemsize, n_cols, maps, maps_columns, map_rows, counts, merged, sums) -> int"},
    {"count_by_value", count_by_value, METH_VARARGS, "count_by_value(values, weights, keys, items, totals) -> int"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels", "Kernels compiled ahead of time; see incrowd/_native/__init__.py.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
