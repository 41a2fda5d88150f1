/* MDAV's scan kernel (incrowd.microaggregation.mdav._mdav_kernel.mdav_labels and its helpers in
 * microaggregation/_kernels.py), written in C as an ahead-of-time compiled prototype for
 * bench/aot_vs_numba.py: the same loops, the same arithmetic in the same order (build it without
 * floating-point contraction, -ffp-contract=off, as numba compiles without fastmath), so the
 * groups are the numba kernel's bit for bit. A plain CPython extension (no numpy C API): the
 * arrays come in through the buffer protocol. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void sq_dist_to(const double *Xt, Py_ssize_t stride, Py_ssize_t m, Py_ssize_t n_slots, const double *point,
                       double *out) {
    for (Py_ssize_t i = 0; i < n_slots; i++) out[i] = 0.0;
    for (Py_ssize_t j = 0; j < m; j++) {
        const double pj = point[j];
        const double *col = Xt + j * stride;
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
        if (alive[i] && (best < 0 || d[i] > best_d)) { best = i; best_d = d[i]; }
    return best;
}

static Py_ssize_t nearest_alive(const double *d, const uint8_t *alive, Py_ssize_t n_slots, Py_ssize_t exclude_a,
                                Py_ssize_t exclude_b, Py_ssize_t count, int64_t *out, double *buf_d) {
    if (count <= 0) return 0;
    Py_ssize_t filled = 0;
    for (Py_ssize_t i = 0; i < n_slots; i++) {
        if (!alive[i] || i == exclude_a || i == exclude_b) continue;
        double di = d[i];
        if (filled == count && di >= buf_d[count - 1]) continue;
        Py_ssize_t pos = filled < count ? filled : count - 1;
        while (pos > 0 && buf_d[pos - 1] > di) { buf_d[pos] = buf_d[pos - 1]; out[pos] = out[pos - 1]; pos--; }
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
    nearest_alive(d, alive, n_slots, center, -1, k - 1, sel, buf_d);
    labels[ids[center]] = group;
    alive[center] = 0;
    for (Py_ssize_t t = 0; t < k - 1; t++) { labels[ids[sel[t]]] = group; alive[sel[t]] = 0; }
}

/* mdav_labels(X, k, labels): X a C-contiguous float64 buffer of n x m, labels an int64 buffer of n */
static PyObject *mdav_labels(PyObject *self, PyObject *args) {
    Py_buffer xb, lb;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "y*nw*", &xb, &k, &lb)) return NULL;
    Py_ssize_t n = lb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t m = n ? xb.len / (Py_ssize_t)sizeof(double) / n : 0;
    int64_t *labels = (int64_t *)lb.buf;
    const double *X = (const double *)xb.buf;
    PyObject *result = NULL;
    double *Xt = NULL, *d = NULL, *c = NULL, *point = NULL, *buf_d = NULL;
    int64_t *ids = NULL, *slot_of = NULL, *sel = NULL;
    uint8_t *alive = NULL;
    Py_BEGIN_ALLOW_THREADS
    if (n < 2 * k) {
        for (Py_ssize_t i = 0; i < n; i++) labels[i] = 0;
    } else {
        Xt = malloc(sizeof(double) * n * m); d = malloc(sizeof(double) * n); c = malloc(sizeof(double) * m);
        point = malloc(sizeof(double) * m); buf_d = malloc(sizeof(double) * (k > 1 ? k - 1 : 1));
        ids = malloc(sizeof(int64_t) * n); slot_of = malloc(sizeof(int64_t) * n);
        sel = malloc(sizeof(int64_t) * (k > 1 ? k - 1 : 1)); alive = malloc(n);
        for (Py_ssize_t i = 0; i < n; i++) {
            labels[i] = -1; ids[i] = i; slot_of[i] = i; alive[i] = 1;
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
            Py_ssize_t q = farthest_alive(d, alive, n_slots);
            take_group(Xt, n, m, n_slots, ids, alive, labels, d, q, k, sel, buf_d, group, point);
            group++;
            n_live -= 2 * k;
            if ((double)(n_slots - n_live) > 0.25 * (double)n_slots)
                n_slots = compact(Xt, n, m, ids, slot_of, alive, n_slots);
        }
        int64_t rest = n_live >= k ? group : group - 1;
        for (Py_ssize_t i = 0; i < n_slots; i++) if (alive[i]) labels[ids[i]] = rest;
    }
    Py_END_ALLOW_THREADS
    free(Xt); free(d); free(c); free(point); free(buf_d); free(ids); free(slot_of); free(sel); free(alive);
    result = Py_None;
    Py_INCREF(result);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&lb);
    return result;
}

static PyMethodDef methods[] = {
    {"mdav_labels", mdav_labels, METH_VARARGS, "MDAV's scan kernel: mdav_labels(X_bytes, k, labels_out)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "mdav_scan", NULL, -1, methods};

PyMODINIT_FUNC PyInit_mdav_scan(void) { return PyModule_Create(&module); }
