/* SUDA2's kernels (incrowd.reporting.suda2, see reporting/_suda2.py for the algorithm), compiled
 * ahead of time so that ``incrowd risk`` starts no numba: the records in class order, sdcMicro's
 * record hash, the DIS scores and the search of the minimal sample uniques. Each is the numba
 * kernel it replaced, loop for loop (the scores with the C library's pow, which numba calls too),
 * built without floating-point contraction: the results are numba's bit for bit. The arrays come
 * in C-contiguous through the buffer protocol (see incrowd/_native/__init__.py), their sizes and
 * the codes used as indices checked here; the work runs without the GIL. */
#include "_common.h"
#include <math.h>

/* groups of up to this many records are checked for a record that can still have an MSU below */
#define SMALL 8
/* steps between two looks at the cancel flag and the budget inside the search */
#define CHECK_EVERY ((int64_t)1 << 16)

/* counting_order(classes, sizes, rows) -> None. classes: n int64 in [0, g); sizes: g int64 (the
 * class sizes); rows: n int64, the records ordered by class (stable). */
static PyObject *counting_order(PyObject *self, PyObject *args) {
    Py_buffer cb, sb, rb;
    if (!PyArg_ParseTuple(args, "y*y*w*", &cb, &sb, &rb)) return NULL;
    PyObject *result = NULL;
    int64_t *start = NULL;
    Py_ssize_t n = cb.len / (Py_ssize_t)sizeof(int64_t), g = sb.len / (Py_ssize_t)sizeof(int64_t);
    if (check_size(&cb, n, sizeof(int64_t), "classes") || check_size(&sb, g, sizeof(int64_t), "sizes") ||
        check_size(&rb, n, sizeof(int64_t), "rows"))
        goto done;
    const int64_t *classes = cb.buf, *sizes = sb.buf;
    int64_t *rows = rb.buf;
    start = malloc(sizeof(int64_t) * ((size_t)g + 1));
    if (start == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t total = 0;
    for (Py_ssize_t c = 0; c < g; c++) {
        start[c] = total;
        total += sizes[c];
    }
    Py_ssize_t bad = -1;
    for (Py_ssize_t i = 0; i < n && bad < 0; i++)
        if (classes[i] < 0 || classes[i] >= g) bad = i;
    if (bad < 0 && total != n) {
        PyErr_Format(PyExc_ValueError, "sizes sum to %lld; classes holds %zd records", (long long)total, n);
        goto done;
    }
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "classes[%zd] = %lld is not a class (0 to %zd)", bad, (long long)classes[bad],
                     g - 1);
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) rows[start[classes[i]]++] = i;
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    free(start);
    PyBuffer_Release(&cb); PyBuffer_Release(&sb); PyBuffer_Release(&rb);
    return result;
}

/* A variable at a time over all records (raw is variable-major): the same integer steps per
   record as numba's record-at-a-time loop, in vector registers. The carry (the top bit) added back
   is the rotate, as sdcMicro adds 1 after a shift that carried. Unsigned: a shift and a sum that
   wrap as numba's int64. */
INTEGER_CLONES static void hash_rows(const int64_t *restrict raw, Py_ssize_t m, Py_ssize_t n, int64_t *restrict out) {
    for (Py_ssize_t i = 0; i < n; i++) out[i] = 0;
    for (Py_ssize_t lo = 0; lo < n; lo += 2048) { /* a block of hashes stays in the cache */
        Py_ssize_t hi = lo + 2048 < n ? lo + 2048 : n;
        for (Py_ssize_t j = 0; j < m; j++) {
            const int64_t *restrict col = raw + j * n;
            for (Py_ssize_t i = lo; i < hi; i++) {
                uint64_t h = (uint64_t)out[i];
                out[i] = (int64_t)(((h << 1) + (uint64_t)col[i] + (h >> 15)) & 0xFFFF);
            }
        }
    }
}

/* record_hashes(raw, m, out) -> None. raw: m x n int64 (raw[variable, record]); out: n int64. */
static PyObject *record_hashes(PyObject *self, PyObject *args) {
    Py_buffer rb, ob;
    Py_ssize_t m;
    if (!PyArg_ParseTuple(args, "y*nw*", &rb, &m, &ob)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = ob.len / (Py_ssize_t)sizeof(int64_t);
    if (m < 0 || check_size(&ob, n, sizeof(int64_t), "out") || check_size(&rb, m * n, sizeof(int64_t), "raw"))
        goto done;
    Py_BEGIN_ALLOW_THREADS
    hash_rows(rb.buf, m, n, ob.buf);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&rb); PyBuffer_Release(&ob);
    return result;
}

/* dis_scores(score, q, odds, out) -> None. score, out: n float64; out zeroed by the caller. */
static PyObject *dis_scores(PyObject *self, PyObject *args) {
    Py_buffer sb, ob;
    double q, odds;
    if (!PyArg_ParseTuple(args, "y*ddw*", &sb, &q, &odds, &ob)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = sb.len / (Py_ssize_t)sizeof(double);
    if (check_size(&sb, n, sizeof(double), "score") || check_size(&ob, n, sizeof(double), "out")) goto done;
    const double *score = sb.buf;
    double *out = ob.buf;
    Py_BEGIN_ALLOW_THREADS
    double adj = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) /* in record order, as sdcMicro sums */
        if (score[i] != 0.0) adj += 1.0 / pow(score[i], q);
    for (Py_ssize_t i = 0; i < n; i++)
        if (score[i] != 0.0) out[i] = 1.0 / (1.0 + odds / (pow(score[i], q) * adj));
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&sb); PyBuffer_Release(&ob);
    return result;
}

/* Whether one of record r's MSUs found so far lies inside child_mask; *steps the entries read. */
static int msu_inside(const int64_t *head, const int64_t *nxt, const int64_t *msk, int32_t r, int64_t child_mask,
                      int64_t *steps) {
    int64_t e = head[r];
    *steps = 0;
    while (e >= 0) {
        *steps += 1;
        if ((msk[e] & child_mask) == msk[e]) return 1;
        e = nxt[e];
    }
    return 0;
}

/* The search (reporting/_suda2_kernels.py's _msu_kernel before it moved here): 0, 1 (stopped),
   2 (over budget) or -1 (out of memory). */
static int msu_search(const int32_t *codes, const int64_t *cards, const int32_t *suffix, Py_ssize_t m, Py_ssize_t n,
                      int64_t max_size, volatile const uint8_t *stop, int64_t budget, int64_t *out, int64_t *work_out) {
    int status = 0;
    int64_t work = 0;
    if (n < 2) { /* a lone record is unique on the empty set: it has no MSU */
        *work_out = 0;
        return 0;
    }
    int64_t check_at = 0;
    int64_t maxcard = 1;
    for (Py_ssize_t j = 0; j < m; j++)
        if (cards[j] > maxcard) maxcard = cards[j];
    Py_ssize_t cap = n > 16 ? n : 16;
    int64_t *count = calloc((size_t)maxcard, sizeof(int64_t));
    int64_t *start = calloc((size_t)maxcard, sizeof(int64_t));
    int64_t *distinct = malloc(sizeof(int64_t) * (size_t)maxcard);
    int32_t *recs = malloc(sizeof(int32_t) * (size_t)(m + 1) * (size_t)n);
    int64_t *bounds = malloc(sizeof(int64_t) * (size_t)(m + 1) * (size_t)(n + 1));
    int64_t *ngroups = calloc((size_t)m + 1, sizeof(int64_t));
    int64_t *head = malloc(sizeof(int64_t) * (size_t)n);
    int64_t *nxt = malloc(sizeof(int64_t) * (size_t)cap);
    int64_t *msk = malloc(sizeof(int64_t) * (size_t)cap);
    int64_t *st_mask = calloc((size_t)m + 1, sizeof(int64_t));
    int64_t *st_next = calloc((size_t)m + 1, sizeof(int64_t));
    int64_t *st_low = calloc((size_t)m + 1, sizeof(int64_t));
    int32_t *buf = malloc(sizeof(int32_t) * (size_t)n);
    if (!count || !start || !distinct || !recs || !bounds || !ngroups || !head || !nxt || !msk || !st_mask ||
        !st_next || !st_low || !buf) {
        status = -1;
        goto done;
    }
    const Py_ssize_t rb = n + 1; /* a row of bounds */
    for (Py_ssize_t i = 0; i < n; i++) recs[i] = (int32_t)i;
    bounds[0] = 0;
    bounds[1] = n;
    ngroups[0] = 1;
    for (Py_ssize_t i = 0; i < n; i++) head[i] = -1;
    Py_ssize_t nfound = 0;
    st_next[0] = m - 1;
    Py_ssize_t depth = 0;
    while (depth >= 0) {
        int64_t v = st_next[depth];
        if (v < st_low[depth]) {
            depth -= 1;
            continue;
        }
        st_next[depth] = v - 1;
        int64_t child_mask = st_mask[depth] | ((int64_t)1 << v);
        int64_t size = 0;
        for (uint64_t x = (uint64_t)child_mask; x; x &= x - 1) size += 1;
        int keep_children = v < m - 1 && size < max_size;
        Py_ssize_t d1 = depth + 1;
        const int32_t *col = codes + v * n;
        const int32_t *below = suffix + (v + 1) * n;
        int32_t *recs_d = recs + depth * n, *recs_1 = recs + d1 * n;
        const int64_t *bounds_d = bounds + depth * rb;
        int64_t *bounds_1 = bounds + d1 * rb;
        int64_t kept = 0, kg = 0;
        bounds_1[0] = 0;
        for (int64_t g = 0; g < ngroups[depth]; g++) {
            int64_t a = bounds_d[g], b = bounds_d[g + 1];
            if (work >= check_at) {
                if (*stop != 0)
                    status = 1;
                else if (budget > 0 && work > budget)
                    status = 2;
                if (status != 0) break;
                check_at = work + CHECK_EVERY;
            }
            work += b - a;
            /* the group split by v's value (a record missing v leaves it), by counting */
            int64_t nb = 0, nd = 0;
            for (int64_t t = a; t < b; t++) {
                int32_t r = recs_d[t];
                int32_t c = col[r];
                if (c >= 0) {
                    if (count[c] == 0) distinct[nd++] = c;
                    count[c] += 1;
                    buf[nb++] = r;
                }
            }
            if (nd == 1 && nb == b - a) { /* v does not split the group */
                count[distinct[0]] = 0;
                continue;
            }
            int64_t off = kept;
            for (int64_t t = 0; t < nd; t++) {
                int64_t c = distinct[t];
                start[c] = off;
                off += count[c];
            }
            for (int64_t t = 0; t < nb; t++) {
                int32_t r = buf[t];
                int32_t c = col[r];
                recs_1[start[c]] = r;
                start[c] += 1;
            }
            for (int64_t t = 0; t < nd; t++) {
                int64_t c = distinct[t];
                int64_t q = start[c];
                int64_t p = q - count[c];
                count[c] = 0;
                if (q - p == 1) {
                    int32_t r = recs_1[p];
                    int64_t steps;
                    int inside = msu_inside(head, nxt, msk, r, child_mask, &steps);
                    work += steps;
                    if (!inside) {
                        if (nfound == cap) {
                            Py_ssize_t grown = cap * 2;
                            int64_t *nxt2 = realloc(nxt, sizeof(int64_t) * (size_t)grown);
                            if (nxt2 == NULL) {
                                status = -1;
                                goto done;
                            }
                            nxt = nxt2;
                            int64_t *msk2 = realloc(msk, sizeof(int64_t) * (size_t)grown);
                            if (msk2 == NULL) {
                                status = -1;
                                goto done;
                            }
                            msk = msk2;
                            cap = grown;
                        }
                        msk[nfound] = child_mask;
                        nxt[nfound] = head[r];
                        head[r] = nfound;
                        nfound += 1;
                        out[(Py_ssize_t)r * m + size - 1] += 1;
                    }
                } else if (keep_children) {
                    /* in a small group, look for a record unique on the group's variables and all
                       later ones, without an MSU inside the group's variables; a large group
                       nearly always has one, and looking would cost more than it saves */
                    int live = q - p > SMALL;
                    int64_t u = p;
                    while (!live && u < q) {
                        int32_t r = recs_1[u];
                        int alone = 1;
                        work += q - p;
                        for (int64_t w = p; w < q; w++)
                            if (w != u && below[recs_1[w]] == below[r]) {
                                alone = 0;
                                break;
                            }
                        if (alone) {
                            int64_t steps;
                            int inside = msu_inside(head, nxt, msk, r, child_mask, &steps);
                            work += steps;
                            live = !inside;
                        }
                        u += 1;
                    }
                    if (live) {
                        if (kept != p)
                            for (int64_t w = p; w < q; w++) recs_1[kept + w - p] = recs_1[w];
                        kept += q - p;
                        kg += 1;
                        bounds_1[kg] = kept;
                    }
                }
            }
        }
        if (status != 0) break;
        if (keep_children && kg > 0) {
            ngroups[d1] = kg;
            st_mask[d1] = child_mask;
            st_next[d1] = m - 1;
            st_low[d1] = v + 1;
            depth = d1;
        }
    }
done:
    free(count); free(start); free(distinct); free(recs); free(bounds); free(ngroups); free(head); free(nxt);
    free(msk); free(st_mask); free(st_next); free(st_low); free(buf);
    *work_out = work;
    return status;
}

/* msu_search(codes, m, cards, suffix, max_size, stop, budget, out) -> (status, work). codes: m x n
 * int32 (-1 missing, else below cards[v]); cards: m int64; suffix: (m + 1) x n int32; stop: at
 * least one byte, read while the search runs (a cancel); out: n x m int64, zeroed by the caller. */
static PyObject *msu_search_py(PyObject *self, PyObject *args) {
    Py_buffer cb, kb, sb, fb, ob;
    Py_ssize_t m;
    long long max_size, budget;
    if (!PyArg_ParseTuple(args, "y*ny*y*Ly*Lw*", &cb, &m, &kb, &sb, &max_size, &fb, &budget, &ob)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = m > 0 ? cb.len / (Py_ssize_t)sizeof(int32_t) / m : 0;
    if (m < 1 || m > 62) {
        PyErr_Format(PyExc_ValueError, "m = %zd variables: 1 to 62 fit the search's bit sets", m);
        goto done;
    }
    if (check_size(&cb, m * n, sizeof(int32_t), "codes") || check_size(&kb, m, sizeof(int64_t), "cards") ||
        check_size(&sb, (m + 1) * n, sizeof(int32_t), "suffix") || check_size(&ob, n * m, sizeof(int64_t), "out"))
        goto done;
    if (fb.len < 1) {
        PyErr_SetString(PyExc_ValueError, "stop holds no byte");
        goto done;
    }
    const int32_t *codes = cb.buf;
    const int64_t *cards = kb.buf;
    for (Py_ssize_t v = 0; v < m; v++)
        for (Py_ssize_t r = 0; r < n; r++)
            if (codes[v * n + r] >= cards[v] || codes[v * n + r] < -1) {
                PyErr_Format(PyExc_ValueError, "codes[%zd, %zd] = %d is not -1 or a code below cards[%zd] = %lld", v, r,
                             codes[v * n + r], v, (long long)cards[v]);
                goto done;
            }
    int64_t work = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = msu_search(codes, cards, sb.buf, m, n, max_size, fb.buf, budget, ob.buf, &work);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("(iL)", status, (long long)work);
done:
    PyBuffer_Release(&cb); PyBuffer_Release(&kb); PyBuffer_Release(&sb); PyBuffer_Release(&fb); PyBuffer_Release(&ob);
    return result;
}

static PyMethodDef methods[] = {
    {"counting_order", counting_order, METH_VARARGS, "counting_order(classes, sizes, rows) -> None"},
    {"record_hashes", record_hashes, METH_VARARGS, "record_hashes(raw, m, out) -> None"},
    {"dis_scores", dis_scores, METH_VARARGS, "dis_scores(score, q, odds, out) -> None"},
    {"msu_search", msu_search_py, METH_VARARGS,
     "msu_search(codes, m, cards, suffix, max_size, stop, budget, out) -> (status, work)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_suda2", "SUDA2's kernels; see incrowd/_native/__init__.py.", -1, methods,
};

PyMODINIT_FUNC PyInit__suda2(void) { return PyModule_Create(&module); }
