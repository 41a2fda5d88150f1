/* The sensitive attributes' kernels of l-diversity and t-closeness, compiled ahead of time (at
 * install) so that a publish with l or t starts no numba: each class's distinct values and earth
 * mover's distance from the bottom classes' (class, value, rows) pairs (the node search), the same
 * figures from dense value counts per group, and the nearest live groups of a block (the merge: a
 * scan of a small block's centroids, a k-d tree of a large one's).
 *
 * Each is the numba kernel it replaced, loop for loop, with the same integer numerators and the
 * same one float division (both operands converted to double, as numba divides two integers),
 * built without floating-point contraction: the results are numba's bit for bit. The arrays come
 * in C-contiguous through the buffer protocol (see incrowd/_native/__init__.py); sizes and the
 * codes used as indices are checked here, and the work runs without the GIL. */
#include "_common.h"
#include <math.h>

static inline int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* The first index i of a[0..n) with a[i] outside [0, top), or -1. */
static Py_ssize_t outside(const int64_t *a, Py_ssize_t n, int64_t top) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (a[i] < 0 || a[i] >= top) return i;
    return -1;
}

static int check_codes(const int64_t *a, Py_ssize_t n, int64_t top, const char *name, const char *range) {
    Py_ssize_t bad = outside(a, n, top);
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "%s[%zd] = %lld is not %s (0 to %lld)", name, bad, (long long)a[bad], range,
                     (long long)top - 1);
        return -1;
    }
    return 0;
}

/* sensitive_counts(class_of, n_classes, pair_b, pair_val, pair_cnt, reference, ordered, missing,
 * with_t, distinct_out, distance) -> None. class_of: bottom classes int64; pair_b, pair_val,
 * pair_cnt: pairs int64; reference: m int64; distinct_out: n_classes int64; distance: n_classes
 * float64 (written only with with_t). */
static PyObject *sensitive_counts(PyObject *self, PyObject *args) {
    Py_buffer cb, bb, vb, nb, rb, db, tb;
    Py_ssize_t n_classes;
    int ordered, missing, with_t;
    if (!PyArg_ParseTuple(args, "y*ny*y*y*y*pppw*w*", &cb, &n_classes, &bb, &vb, &nb, &rb, &ordered, &missing,
                          &with_t, &db, &tb))
        return NULL;
    PyObject *result = NULL;
    int64_t *start = NULL, *fill = NULL, *order = NULL, *r_cum = NULL, *scratch = NULL;
    Py_ssize_t n_bottom = cb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t n_pairs = bb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t m = rb.len / (Py_ssize_t)sizeof(int64_t);
    if (n_classes < 0 || check_size(&cb, n_bottom, sizeof(int64_t), "class_of") ||
        check_size(&bb, n_pairs, sizeof(int64_t), "pair_b") || check_size(&vb, n_pairs, sizeof(int64_t), "pair_val") ||
        check_size(&nb, n_pairs, sizeof(int64_t), "pair_cnt") || check_size(&rb, m, sizeof(int64_t), "reference") ||
        check_size(&db, n_classes, sizeof(int64_t), "distinct_out") ||
        check_size(&tb, n_classes, sizeof(double), "distance"))
        goto done;
    const int64_t *class_of = cb.buf, *pair_b = bb.buf, *pair_val = vb.buf, *pair_cnt = nb.buf, *reference = rb.buf;
    int64_t *distinct_out = db.buf;
    double *distance = tb.buf;
    if (check_codes(class_of, n_bottom, n_classes, "class_of", "a class") ||
        check_codes(pair_b, n_pairs, n_bottom, "pair_b", "a bottom class") ||
        check_codes(pair_val, n_pairs, m, "pair_val", "a value of reference"))
        goto done;
    start = calloc((size_t)n_classes + 1, sizeof(int64_t));
    fill = malloc(sizeof(int64_t) * ((size_t)n_classes + 1));
    order = malloc(sizeof(int64_t) * ((size_t)n_pairs + 1));
    r_cum = malloc(sizeof(int64_t) * ((size_t)m + 1));
    scratch = calloc((size_t)m + 1, sizeof(int64_t));
    if (!start || !fill || !order || !r_cum || !scratch) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t p = 0; p < n_pairs; p++) start[class_of[pair_b[p]] + 1] += 1;
    for (Py_ssize_t c = 0; c < n_classes; c++) start[c + 1] += start[c];
    for (Py_ssize_t c = 0; c < n_classes; c++) fill[c] = start[c];
    for (Py_ssize_t p = 0; p < n_pairs; p++) {
        int64_t c = class_of[pair_b[p]];
        order[fill[c]] = p;
        fill[c] += 1;
    }
    int64_t n_ref = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        n_ref += reference[i];
        r_cum[i] = n_ref;
    }
    int t = with_t && m > 1;
    for (Py_ssize_t c = 0; c < n_classes; c++) {
        int64_t distinct = 0, s = 0;
        for (int64_t e = start[c]; e < start[c + 1]; e++) {
            int64_t p = order[e], v = pair_val[p];
            if (scratch[v] == 0 && !(missing && v == m - 1)) distinct += 1;
            scratch[v] += pair_cnt[p];
            s += pair_cnt[p];
        }
        distinct_out[c] = distinct;
        if (t && s > 0) {
            int64_t num = 0, den;
            if (ordered) {
                int64_t cum = 0;
                for (Py_ssize_t i = 0; i < m - 1; i++) {
                    cum += scratch[i];
                    num += abs64(cum * n_ref - r_cum[i] * s);
                }
                den = s * n_ref * (int64_t)(m - 1);
            } else {
                for (int64_t e = start[c]; e < start[c + 1]; e++) {
                    int64_t v = pair_val[order[e]];
                    if (scratch[v] != 0) { /* a value met twice (two bottom classes) counts once */
                        int64_t r = reference[v];
                        num += abs64(scratch[v] * n_ref - r * s) - r * s;
                        scratch[v] = 0;
                    }
                }
                num += s * n_ref;
                den = 2 * s * n_ref;
            }
            distance[c] = (double)num / (double)den;
        } else if (t) {
            distance[c] = 0.0;
        }
        for (int64_t e = start[c]; e < start[c + 1]; e++) scratch[pair_val[order[e]]] = 0;
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    free(start); free(fill); free(order); free(r_cum); free(scratch);
    PyBuffer_Release(&cb); PyBuffer_Release(&bb); PyBuffer_Release(&vb); PyBuffer_Release(&nb);
    PyBuffer_Release(&rb); PyBuffer_Release(&db); PyBuffer_Release(&tb);
    return result;
}

/* restrict: the outputs are int64 as the counts, which the compiler would otherwise reload */
INTEGER_CLONES static void dense_rows(const int64_t *restrict counts, Py_ssize_t g, Py_ssize_t m,
                                      const int64_t *restrict reference, int ordered, int missing,
                                      int64_t *restrict distinct, double *restrict distance) {
    int64_t n_ref = 0;
    for (Py_ssize_t v = 0; v < m; v++) n_ref += reference[v];
    Py_ssize_t counted = missing ? m - 1 : m;
    for (Py_ssize_t r = 0; r < g; r++) {
        const int64_t *restrict row = counts + r * m;
        int64_t size = 0, held = 0;
        for (Py_ssize_t v = 0; v < m; v++) {
            int64_t c = row[v];
            size += c;
            held += (v < counted) & (c > 0);
        }
        distinct[r] += held;
        if (m == 1 || size == 0) continue;
        int64_t num = 0;
        if (ordered) {
            int64_t cum = 0, ref_cum = 0;
            for (Py_ssize_t v = 0; v < m - 1; v++) {
                cum += row[v];
                ref_cum += reference[v];
                num += abs64(cum * n_ref - ref_cum * size);
            }
            distance[r] = (double)num / (double)(size * n_ref * (int64_t)(m - 1));
        } else {
            for (Py_ssize_t v = 0; v < m; v++) num += abs64(row[v] * n_ref - reference[v] * size);
            distance[r] = (double)num / (double)(2 * size * n_ref);
        }
    }
}

/* dense_status(counts, m, reference, ordered, missing, distinct, distance) -> None. counts:
 * g x m int64; reference: m int64; distinct: g int64 and distance: g float64, zeroed by the caller. */
static PyObject *dense_status(PyObject *self, PyObject *args) {
    Py_buffer cb, rb, db, tb;
    int ordered, missing;
    if (!PyArg_ParseTuple(args, "y*y*ppw*w*", &cb, &rb, &ordered, &missing, &db, &tb)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t m = rb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t g = db.len / (Py_ssize_t)sizeof(int64_t);
    if (check_size(&rb, m, sizeof(int64_t), "reference") || check_size(&db, g, sizeof(int64_t), "distinct") ||
        check_size(&cb, g * m, sizeof(int64_t), "counts") || check_size(&tb, g, sizeof(double), "distance"))
        goto done;
    Py_BEGIN_ALLOW_THREADS
    dense_rows(cb.buf, g, m, rb.buf, ordered, missing, db.buf, tb.buf);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&cb); PyBuffer_Release(&rb); PyBuffer_Release(&db); PyBuffer_Release(&tb);
    return result;
}

/* nearest_slots(cent, slots, lo, n, own, out) -> found. cent: p x slots float64 (features x
 * slots); out: n int64. The offsets from lo of the slots lo..lo+n-1 nearest to slot lo+own, own
 * left out, ascending. */
static PyObject *nearest_slots(PyObject *self, PyObject *args) {
    Py_buffer cb, ob;
    Py_ssize_t slots, lo, n, own;
    if (!PyArg_ParseTuple(args, "y*nnnnw*", &cb, &slots, &lo, &n, &own, &ob)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t p = slots > 0 ? cb.len / (Py_ssize_t)sizeof(double) / slots : 0;
    if (slots < 0 || check_size(&cb, p * slots, sizeof(double), "cent") ||
        check_size(&ob, n, sizeof(int64_t), "out"))
        goto done;
    if (n < 0 || lo < 0 || lo + n > slots || own < 0 || own >= n) {
        PyErr_Format(PyExc_ValueError, "slots %zd to %zd (own %zd) are not all among cent's %zd", lo, lo + n - 1,
                     lo + own, slots);
        goto done;
    }
    const double *cent = cb.buf;
    int64_t *out = ob.buf;
    Py_ssize_t found = 0;
    Py_BEGIN_ALLOW_THREADS
    double best = INFINITY;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i == own) continue;
        double d = 0.0;
        for (Py_ssize_t j = 0; j < p; j++) {
            double t = cent[j * slots + lo + i] - cent[j * slots + lo + own];
            d += t * t;
        }
        if (d < best) {
            best = d;
            out[0] = i;
            found = 1;
        } else if (d == best) {
            out[found] = i;
            found += 1;
        }
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(found);
done:
    PyBuffer_Release(&cb); PyBuffer_Release(&ob);
    return result;
}

/* ---- the nearest live groups of a large block: a k-d tree of their centroids ----
 *
 * A block of many groups (a large class) merges thousands of its groups, each with its nearest:
 * scanning every live centroid for each is quadratic. The tree is built over the block's
 * centroids at one moment (points, m x p row-major); a group merged since is marked dead in it
 * and a moved centroid (a merged group's) is passed beside it as an extra point, scanned. A node
 * v covers the positions [a, b) of perm; it is a leaf where b - a <= leaf, else its children 2v+1
 * and 2v+2 cover [a, mid) and [mid, b), mid = (a + b) / 2. Its box (lo, hi: nodes x p) bounds its
 * points. The distance is nearest_slots' (each feature's difference, point minus query, squared
 * and summed in feature order), and a box's bound sums the same differences taken to the box's
 * nearer face: rounding is monotone, so the bound is never above the distance of a point inside,
 * and a node is skipped only when its bound exceeds the best distance: every tie is found. */

typedef struct {
    const double *X;
    Py_ssize_t p, leaf, nodes;
    int64_t *perm;
    double *lo, *hi;
} CentroidTree;

static int build_node(CentroidTree *T, Py_ssize_t v, Py_ssize_t a, Py_ssize_t b) {
    if (v >= T->nodes) {
        PyErr_Format(PyExc_ValueError, "lo and hi hold %zd nodes; the tree needs more", T->nodes);
        return -1;
    }
    Py_ssize_t p = T->p;
    double *lo = T->lo + v * p, *hi = T->hi + v * p;
    for (Py_ssize_t j = 0; j < p; j++) {
        lo[j] = INFINITY;
        hi[j] = -INFINITY;
    }
    for (Py_ssize_t i = a; i < b; i++) {
        const double *x = T->X + T->perm[i] * p;
        for (Py_ssize_t j = 0; j < p; j++) {
            if (x[j] < lo[j]) lo[j] = x[j];
            if (x[j] > hi[j]) hi[j] = x[j];
        }
    }
    if (b - a <= T->leaf) return 0;
    Py_ssize_t dim = 0;
    for (Py_ssize_t j = 1; j < p; j++)
        if (hi[j] - lo[j] > hi[dim] - lo[dim]) dim = j;
    Py_ssize_t mid = a + (b - a) / 2;
    select_rank(T->X, p, dim, T->perm, a, b, mid);
    if (build_node(T, 2 * v + 1, a, mid)) return -1;
    return build_node(T, 2 * v + 2, mid, b);
}

/* centroid_tree(points, m, leaf, perm, lo, hi) -> None. points: m x p float64, finite; perm: m
 * int64 (out); lo, hi: nodes x p float64 (out). */
static PyObject *centroid_tree(PyObject *self, PyObject *args) {
    Py_buffer xb, pb, lb, hb;
    Py_ssize_t m, leaf;
    if (!PyArg_ParseTuple(args, "y*nnw*w*w*", &xb, &m, &leaf, &pb, &lb, &hb)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t p = m > 0 ? xb.len / (Py_ssize_t)sizeof(double) / m : 0;
    if (m <= 0 || leaf < 1 || p < 1) {
        PyErr_SetString(PyExc_ValueError, "the tree needs at least one point of at least one feature and leaf >= 1");
        goto done;
    }
    Py_ssize_t nodes = lb.len / (Py_ssize_t)sizeof(double) / p;
    if (check_size(&xb, m * p, sizeof(double), "points") || check_size(&pb, m, sizeof(int64_t), "perm") ||
        check_size(&lb, nodes * p, sizeof(double), "lo") || check_size(&hb, nodes * p, sizeof(double), "hi"))
        goto done;
    CentroidTree T = {xb.buf, p, leaf, nodes, pb.buf, lb.buf, hb.buf};
    for (Py_ssize_t i = 0; i < m; i++) T.perm[i] = i;
    if (build_node(&T, 0, 0, m)) goto done;
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&xb); PyBuffer_Release(&pb); PyBuffer_Release(&lb); PyBuffer_Release(&hb);
    return result;
}

typedef struct {
    const CentroidTree *T;
    const int8_t *alive;
    const double *q;
    Py_ssize_t exclude;
    double best;
    int64_t *out;
    Py_ssize_t found;
} Search;

static inline double box_bound(const CentroidTree *T, Py_ssize_t v, const double *q) {
    const double *lo = T->lo + v * T->p, *hi = T->hi + v * T->p;
    double d = 0.0;
    for (Py_ssize_t j = 0; j < T->p; j++) {
        double t = q[j] < lo[j] ? lo[j] - q[j] : (q[j] > hi[j] ? hi[j] - q[j] : 0.0);
        d += t * t;
    }
    return d;
}

static inline void offer(Search *S, double d, int64_t code) {
    if (d < S->best) {
        S->best = d;
        S->out[0] = code;
        S->found = 1;
    } else if (d == S->best) {
        S->out[S->found++] = code;
    }
}

static void search_node(Search *S, Py_ssize_t v, Py_ssize_t a, Py_ssize_t b) {
    const CentroidTree *T = S->T;
    if (b - a <= T->leaf) {
        for (Py_ssize_t i = a; i < b; i++)
            if (S->alive[i] && i != S->exclude) offer(S, squared_distance(T->X + T->perm[i] * T->p, S->q, T->p), i);
        return;
    }
    Py_ssize_t mid = a + (b - a) / 2;
    double dl = box_bound(T, 2 * v + 1, S->q), dr = box_bound(T, 2 * v + 2, S->q);
    if (dl <= dr) {
        if (dl <= S->best) search_node(S, 2 * v + 1, a, mid);
        if (dr <= S->best) search_node(S, 2 * v + 2, mid, b);
    } else {
        if (dr <= S->best) search_node(S, 2 * v + 2, mid, b);
        if (dl <= S->best) search_node(S, 2 * v + 1, a, mid);
    }
}

/* centroid_nearest(points, m, leaf, perm, lo, hi, alive, q, exclude, extra, n_extra, exclude_extra,
 * out) -> found. The tree of centroid_tree (alive: m int8, by position in perm); q: p float64;
 * exclude: a position left out (-1: none); extra: n_extra x p float64 points beside the tree (the
 * buffer may hold more rows), exclude_extra: a row of them left out (-1: none); out: at least m +
 * n_extra int64. The nearest points to q, each as its tree position i (perm[i] its row of points)
 * or as -1 - j for extra's row j. */
static PyObject *centroid_nearest(PyObject *self, PyObject *args) {
    Py_buffer xb, pb, lb, hb, ab, qb, eb, ob;
    Py_ssize_t m, leaf, exclude, n_extra, exclude_extra;
    if (!PyArg_ParseTuple(args, "y*nny*y*y*y*y*ny*nnw*", &xb, &m, &leaf, &pb, &lb, &hb, &ab, &qb, &exclude, &eb,
                          &n_extra, &exclude_extra, &ob))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t p = qb.len / (Py_ssize_t)sizeof(double);
    Py_ssize_t nodes = p > 0 ? lb.len / (Py_ssize_t)sizeof(double) / p : 0;
    if (m <= 0 || leaf < 1 || p < 1 || n_extra < 0 || exclude < -1 || exclude >= m || exclude_extra < -1 ||
        exclude_extra >= n_extra || eb.len < n_extra * p * (Py_ssize_t)sizeof(double) ||
        ob.len < (m + n_extra) * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "a tree of at least one point, leaf >= 1, exclude among its positions, "
                        "exclude_extra among extra's n_extra rows, out of at least m + n_extra");
        goto done;
    }
    if (check_size(&xb, m * p, sizeof(double), "points") || check_size(&pb, m, sizeof(int64_t), "perm") ||
        check_size(&lb, nodes * p, sizeof(double), "lo") || check_size(&hb, nodes * p, sizeof(double), "hi") ||
        check_size(&ab, m, sizeof(int8_t), "alive"))
        goto done;
    CentroidTree T = {xb.buf, p, leaf, nodes, pb.buf, lb.buf, hb.buf};
    Search S = {&T, ab.buf, qb.buf, exclude, INFINITY, ob.buf, 0};
    Py_BEGIN_ALLOW_THREADS
    const double *extra = eb.buf;
    for (Py_ssize_t j = 0; j < n_extra; j++)
        if (j != exclude_extra) offer(&S, squared_distance(extra + j * p, S.q, p), -1 - j);
    search_node(&S, 0, 0, m);
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(S.found);
done:
    PyBuffer_Release(&xb); PyBuffer_Release(&pb); PyBuffer_Release(&lb); PyBuffer_Release(&hb);
    PyBuffer_Release(&ab); PyBuffer_Release(&qb); PyBuffer_Release(&eb); PyBuffer_Release(&ob);
    return result;
}

static PyMethodDef methods[] = {
    {"sensitive_counts", sensitive_counts, METH_VARARGS,
     "sensitive_counts(class_of, n_classes, pair_b, pair_val, pair_cnt, reference, ordered, missing, with_t, "
     "distinct_out, distance) -> None"},
    {"dense_status", dense_status, METH_VARARGS, "dense_status(counts, reference, ordered, missing, distinct, distance) -> None"},
    {"nearest_slots", nearest_slots, METH_VARARGS, "nearest_slots(cent, slots, lo, n, own, out) -> int"},
    {"centroid_tree", centroid_tree, METH_VARARGS, "centroid_tree(points, m, leaf, perm, lo, hi) -> None"},
    {"centroid_nearest", centroid_nearest, METH_VARARGS,
     "centroid_nearest(points, m, leaf, perm, lo, hi, alive, q, exclude, extra, n_extra, exclude_extra, out) -> int"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_sensitive", "l-diversity's and t-closeness's kernels; see incrowd/_native/__init__.py.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__sensitive(void) { return PyModule_Create(&module); }
