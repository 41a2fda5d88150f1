/* Local suppression's kernel (incrowd.generalization.local_suppression, missing matching any
 * value as sdcMicro's wildcard), compiled ahead of time so that the command starts no numba: one
 * pass over the distinct value combinations says which match a record and which would match it
 * with one of its cells changed. The numba kernel it replaced, loop for loop (integer compares
 * only). The arrays come in C-contiguous through the buffer protocol (see
 * incrowd/_native/__init__.py), their sizes checked here; the work runs without the GIL. */
#include "_common.h"

/* restrict: the byte outputs could otherwise alias the codes, and every store reload them */
INTEGER_CLONES static void match_rows(const int64_t *restrict U, Py_ssize_t size, Py_ssize_t m,
                                      const int64_t *restrict row, Py_ssize_t c, int64_t value,
                                      uint8_t *restrict match_src, uint8_t *restrict match_dest) {
    const int64_t row_c = row[c];
    for (Py_ssize_t i = 0; i < size; i++) {
        const int64_t *restrict u_row = U + i * m;
        int64_t mism = 0;
        for (Py_ssize_t j = 0; j < m; j++) {
            int64_t u = u_row[j], r = row[j];
            mism += (u >= 0) & (r >= 0) & (u != r);
        }
        const int64_t u_c = u_row[c];
        const int at_c = (u_c >= 0) & (row_c >= 0) & (u_c != row_c);
        match_src[i] = mism == 0;
        if (value < 0)
            match_dest[i] = mism == 0 || (mism == 1 && at_c);
        else
            match_dest[i] = mism == 0 && (u_c < 0 || u_c == value);
    }
}

/* match_combinations(U, row, c, value, match_src, match_dest) -> None. U: size x m int64 (the
 * combinations, -1 missing); row: m int64; match_src, match_dest: size bytes (numpy bools). Row
 * src matches combination i when they differ in no column where both hold a value; with column c
 * set to value (-1: blanked) it matches where it matched, or (blanked) differed only at c, or
 * (a value) where i is missing or holds value at c. */
static PyObject *match_combinations(PyObject *self, PyObject *args) {
    Py_buffer ub, rb, sb, db;
    Py_ssize_t c;
    long long value;
    if (!PyArg_ParseTuple(args, "y*y*nLw*w*", &ub, &rb, &c, &value, &sb, &db)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t m = rb.len / (Py_ssize_t)sizeof(int64_t);
    Py_ssize_t size = sb.len;
    if (check_size(&rb, m, sizeof(int64_t), "row") || check_size(&ub, size * m, sizeof(int64_t), "U") ||
        check_size(&db, size, 1, "match_dest"))
        goto done;
    if (c < 0 || c >= m) {
        PyErr_Format(PyExc_ValueError, "column %zd is not one of the %zd columns", c, m);
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    match_rows(ub.buf, size, m, rb.buf, c, value, sb.buf, db.buf);
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&ub); PyBuffer_Release(&rb); PyBuffer_Release(&sb); PyBuffer_Release(&db);
    return result;
}

static PyMethodDef methods[] = {
    {"match_combinations", match_combinations, METH_VARARGS,
     "match_combinations(U, row, c, value, match_src, match_dest) -> None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_suppression", "Local suppression's kernel; see incrowd/_native/__init__.py.", -1, methods,
};

PyMODINIT_FUNC PyInit__suppression(void) { return PyModule_Create(&module); }
