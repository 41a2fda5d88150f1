/* Top and bottom coding and rounding of one column in one pass: each value read once, its new
 * value written once and the changed cells counted on the way, where numpy needs a pass for the
 * comparison, one for the copy, one for the replacement and more for the count. The arithmetic is
 * numpy's, operation for operation (IEEE division, rint, product; no contraction), so the results
 * are those of the numpy path bit for bit. */
#include "_common.h"
#include <math.h>

/* rint (a half to the even number, the default rounding mode) in operations SSE2 vectorizes, where
   a call of libm's rint is not: below 2**52 in magnitude, adding and taking off 2**52 leaves the
   nearest whole number (the addition rounds as rint does); at or above it, or NaN, a double is
   already whole. The sign is put back, so -0.3 gives -0.0 as rint does. */
static inline double rint_sse2(double q) {
    const double big = 4503599627370496.0; /* 2**52 */
    double a = fabs(q);
    double r = (a + big) - big;
    return a < big ? copysign(r, q) : q;
}

/* code_f64(x, out, limit, fill, side) -> (beyond, changed): out[i] = fill where x[i] is beyond
   limit (above it for side > 0, below it otherwise; a NaN is beyond no limit), else x[i]'s bits. */
static PyObject *code_f64(PyObject *self, PyObject *args) {
    Py_buffer xb, ob;
    double limit, fill;
    int side;
    if (!PyArg_ParseTuple(args, "y*w*ddi", &xb, &ob, &limit, &fill, &side)) return NULL;
    Py_ssize_t n = xb.len / (Py_ssize_t)sizeof(double), beyond = 0, changed = 0;
    PyObject *result = NULL;
    if (check_size(&xb, n, sizeof(double), "x") || check_size(&ob, n, sizeof(double), "out")) goto done;
    const double *x = xb.buf;
    double *out = ob.buf;
    Py_BEGIN_ALLOW_THREADS
    /* branch-free (a select keeps a NaN's bits), one loop per side: the compiler vectorizes it */
    int64_t nb = 0, nc = 0;
    if (side > 0) {
        for (Py_ssize_t i = 0; i < n; i++) {
            double v = x[i];
            int64_t b = v > limit;
            out[i] = b ? fill : v;
            nb += b;
            nc += b & (v != fill);
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            double v = x[i];
            int64_t b = v < limit;
            out[i] = b ? fill : v;
            nb += b;
            nc += b & (v != fill);
        }
    }
    beyond = (Py_ssize_t)nb;
    changed = (Py_ssize_t)nc;
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("nn", beyond, changed);
done:
    PyBuffer_Release(&xb);
    PyBuffer_Release(&ob);
    return result;
}

/* code_i64(x, out, limit, fill, side) -> (beyond, changed): as code_f64 on int64, the limit a
   whole number (the caller takes the limit's whole part on the near side). */
static PyObject *code_i64(PyObject *self, PyObject *args) {
    Py_buffer xb, ob;
    long long limit, fill;
    int side;
    if (!PyArg_ParseTuple(args, "y*w*LLi", &xb, &ob, &limit, &fill, &side)) return NULL;
    Py_ssize_t n = xb.len / (Py_ssize_t)sizeof(int64_t), beyond = 0, changed = 0;
    PyObject *result = NULL;
    if (check_size(&xb, n, sizeof(int64_t), "x") || check_size(&ob, n, sizeof(int64_t), "out")) goto done;
    const int64_t *x = xb.buf;
    int64_t *out = ob.buf;
    const int64_t lim = (int64_t)limit, f = (int64_t)fill;
    Py_BEGIN_ALLOW_THREADS
    int64_t nb = 0, nc = 0;
    if (side > 0) {
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t v = x[i], b = v > lim;
            out[i] = b ? f : v;
            nb += b;
            nc += b & (v != f);
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t v = x[i], b = v < lim;
            out[i] = b ? f : v;
            nb += b;
            nc += b & (v != f);
        }
    }
    beyond = (Py_ssize_t)nb;
    changed = (Py_ssize_t)nc;
    Py_END_ALLOW_THREADS
    result = Py_BuildValue("nn", beyond, changed);
done:
    PyBuffer_Release(&xb);
    PyBuffer_Release(&ob);
    return result;
}

/* round_f64(x, out, base) -> changed: out[i] = base * rint(x[i] / base) (a half to the even
   multiple), a NaN's own bits kept; changed counts the cells present whose value differs. */
static PyObject *round_f64(PyObject *self, PyObject *args) {
    Py_buffer xb, ob;
    double base;
    if (!PyArg_ParseTuple(args, "y*w*d", &xb, &ob, &base)) return NULL;
    Py_ssize_t n = xb.len / (Py_ssize_t)sizeof(double), changed = 0;
    PyObject *result = NULL;
    if (check_size(&xb, n, sizeof(double), "x") || check_size(&ob, n, sizeof(double), "out")) goto done;
    const double *x = xb.buf;
    double *out = ob.buf;
    int64_t nc = 0;
    Py_BEGIN_ALLOW_THREADS
    /* branch-free, so that the compiler vectorizes it; a NaN is selected back with its own bits */
    for (Py_ssize_t i = 0; i < n; i++) {
        double v = x[i], r = base * rint_sse2(v / base);
        int64_t present = v == v;
        out[i] = present ? r : v;
        nc += present & (r != v);
    }
    changed = (Py_ssize_t)nc;
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(changed);
done:
    PyBuffer_Release(&xb);
    PyBuffer_Release(&ob);
    return result;
}

/* round_i64(x, out, base) -> changed, or -1 where a rounded value is past int64's range (the
   column is then written as float64 by the caller): out[i] = base * rint(x[i] / base) in doubles,
   as numpy reads an integer column, converted back. */
static PyObject *round_i64(PyObject *self, PyObject *args) {
    Py_buffer xb, ob;
    double base;
    if (!PyArg_ParseTuple(args, "y*w*d", &xb, &ob, &base)) return NULL;
    Py_ssize_t n = xb.len / (Py_ssize_t)sizeof(int64_t), changed = 0;
    PyObject *result = NULL;
    int past = 0;
    if (check_size(&xb, n, sizeof(int64_t), "x") || check_size(&ob, n, sizeof(int64_t), "out")) goto done;
    const int64_t *x = xb.buf;
    int64_t *out = ob.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        double r = base * rint_sse2((double)x[i] / base);
        /* int64 holds [-2**63, 2**63): a double at or past either end is not converted */
        int inside = r >= -9223372036854775808.0 && r < 9223372036854775808.0;
        past |= !inside;
        out[i] = (int64_t)(inside ? r : 0.0);
        changed += out[i] != x[i];
    }
    Py_END_ALLOW_THREADS
    result = PyLong_FromSsize_t(past ? -1 : changed);
done:
    PyBuffer_Release(&xb);
    PyBuffer_Release(&ob);
    return result;
}

static PyMethodDef methods[] = {
    {"code_f64", code_f64, METH_VARARGS, "code_f64(x, out, limit, fill, side) -> (beyond, changed)"},
    {"code_i64", code_i64, METH_VARARGS, "code_i64(x, out, limit, fill, side) -> (beyond, changed)"},
    {"round_f64", round_f64, METH_VARARGS, "round_f64(x, out, base) -> changed"},
    {"round_i64", round_i64, METH_VARARGS, "round_i64(x, out, base) -> changed, or -1 past int64's range"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_coding", "Top and bottom coding and rounding in one pass; see incrowd/_native/__init__.py.",
    -1, methods,
};

PyMODINIT_FUNC PyInit__coding(void) { return PyModule_Create(&module); }
