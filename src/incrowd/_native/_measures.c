/* The within-group sum of squares of a microaggregation (incrowd.microaggregation.sse, sst,
 * information_loss), compiled ahead of time so that a release's report starts no numba. The
 * numba kernel it replaced, loop for loop: each row's squared distance summed over columns in
 * column order, the rows summed in row order with Neumaier's compensation, built without
 * floating-point contraction, so the sum is numba's bit for bit. The arrays come in C-contiguous
 * through the buffer protocol (see incrowd/_native/__init__.py), their sizes and the group ids
 * checked here; the work runs without the GIL. */
#include "_common.h"
#include <math.h>

/* squared_deviations(X, m, group, centers) -> float. X: n x m float64; group: n int64; centers:
 * g x m float64. */
static PyObject *squared_deviations(PyObject *self, PyObject *args) {
    Py_buffer xb, gb, cb;
    Py_ssize_t m;
    if (!PyArg_ParseTuple(args, "y*ny*y*", &xb, &m, &gb, &cb)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = gb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t g = m > 0 ? cb.len / (Py_ssize_t)sizeof(double) / m : 0;
    if (m < 0 || check_size(&gb, n, sizeof(int64_t), "group") || check_size(&xb, n * m, sizeof(double), "X") ||
        check_size(&cb, g * m, sizeof(double), "centers"))
        goto done;
    const double *X = xb.buf, *centers = cb.buf;
    const int64_t *group = gb.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (group[i] < 0 || (m > 0 && group[i] >= g)) {
            PyErr_Format(PyExc_ValueError, "group[%zd] = %lld is not a row of centers (%zd rows)", i,
                         (long long)group[i], g);
            goto done;
        }
    double total = 0.0, comp = 0.0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        double row = 0.0;
        const double *x = X + i * m, *center = centers + group[i] * m;
        for (Py_ssize_t j = 0; j < m; j++) {
            double d = x[j] - center[j];
            row += d * d;
        }
        double t = total + row;
        if (fabs(total) >= fabs(row))
            comp += (total - t) + row;
        else
            comp += (row - t) + total;
        total = t;
    }
    Py_END_ALLOW_THREADS
    result = PyFloat_FromDouble(total + comp);
done:
    PyBuffer_Release(&xb); PyBuffer_Release(&gb); PyBuffer_Release(&cb);
    return result;
}

static PyMethodDef methods[] = {
    {"squared_deviations", squared_deviations, METH_VARARGS, "squared_deviations(X, m, group, centers) -> float"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_measures", "The within-group sum of squares; see incrowd/_native/__init__.py.", -1,
    methods,
};

PyMODINIT_FUNC PyInit__measures(void) { return PyModule_Create(&module); }
