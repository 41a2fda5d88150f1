/* Exact MDAV from a k-d tree over the live rows: the plain scan's groups (mdav_labels in
 * _kernels.c), row for row, ties included; the numba kernel it replaced, in C, so that a one-shot
 * command with numeric keys never starts numba. Why the answer is the scan's:
 *
 * - A node keeps the bounding box of its live rows, refreshed up the path when a row leaves.
 *   Rounding is monotone, so the box's nearest and farthest corners, put through the same float
 *   operations in the same order as a row's distance (column order, no contraction: see setup.py),
 *   bound every live row's computed distance exactly. A node is skipped only when its bound is
 *   strictly worse than the current k-th best, so rows at an equal distance are still seen and the
 *   lowest row wins, as in the scan.
 * - P (the live row farthest from the scan's centroid) is found as the screened kernel finds it
 *   (_mdav_fast.find_p): a double-double sum of the live rows gives the centroid within a proven
 *   error; rows kept in decreasing distance from an earlier centroid are walked until that bound
 *   rules out the rest; every row within the error of the farthest is a candidate, and the scan's
 *   own float centroid decides when they differ.
 *
 * For speed the tree holds its own copy of the rows in leaf order (a query reads whole leaves,
 * contiguous), a leaf's live flags beside them, and the radius walk a copy of the rows in its
 * order; a removal stops refreshing boxes at the first ancestor whose box did not change. */
#include "_common.h"
#include <math.h>

#define U53 (1.0 / 9007199254740992.0) /* 2**-53 */
#define REBUILD_MIN 256

/* what a query reads of a node, together (siblings share a cache line) */
typedef struct {
    int64_t lo, hi, left, count;
} Node;

typedef struct {
    Py_ssize_t n, m, n_nodes;
    const double *X;  /* n x m, row order */
    double *Xp;       /* n x m, leaf order */
    int64_t *rowid;   /* leaf position -> row */
    int64_t *pos_of;  /* row -> leaf position */
    uint8_t *alive_p; /* by leaf position */
    uint8_t *alive;   /* by row */
    Node *nd;         /* right child = left + 1 */
    int64_t *parent, *leaf_of;
    double *box;      /* node v: min at v * 2m, max at v * 2m + m */
    /* queries */
    int64_t *stack;
    double *stack_b;
    double *buf_d;
    int64_t *buf_r;
    /* the search for P */
    double *s_hi, *s_lo, *abs_sum, *abs_total, *c, *c0, *exact_c;
    int64_t *order, *p_cand, *live_rows;
    double *radius, *Xo; /* Xo: the rows in walk order */
    struct Radius *pairs, *pairs2;
    size_t *hist, *top_hist;
    double gamma;
    Py_ssize_t head, n_order, n_sorted, walked_since, rebuilds, fallbacks;
} Tree;


/* ---- building ---- */

/* node v's box from its live rows (a leaf) or its children; returns whether it changed */
static int refresh(Tree *T, Py_ssize_t v) {
    Py_ssize_t m = T->m;
    double nb[2 * 64];
    double *mn = nb, *mx = nb + m;
    for (Py_ssize_t j = 0; j < m; j++) {
        mn[j] = INFINITY;
        mx[j] = -INFINITY;
    }
    if (T->nd[v].left < 0) {
        for (Py_ssize_t t = T->nd[v].lo; t < T->nd[v].hi; t++)
            if (T->alive_p[t]) {
                const double *x = T->Xp + t * m;
                for (Py_ssize_t j = 0; j < m; j++) {
                    if (x[j] < mn[j]) mn[j] = x[j];
                    if (x[j] > mx[j]) mx[j] = x[j];
                }
            }
    } else {
        for (Py_ssize_t u = T->nd[v].left; u <= T->nd[v].left + 1; u++)
            if (T->nd[u].count > 0) {
                const double *bu = T->box + u * 2 * m;
                for (Py_ssize_t j = 0; j < m; j++) {
                    if (bu[j] < mn[j]) mn[j] = bu[j];
                    if (bu[m + j] > mx[j]) mx[j] = bu[m + j];
                }
            }
    }
    double *bv = T->box + v * 2 * m;
    int changed = 0;
    for (Py_ssize_t j = 0; j < 2 * m; j++)
        if (bv[j] != nb[j]) {
            bv[j] = nb[j];
            changed = 1;
        }
    return changed;
}

static int build(Tree *T, Py_ssize_t leaf) {
    Py_ssize_t n = T->n, m = T->m;
    const double *X = T->X;
    Py_ssize_t cap = 4 * (n / leaf + 2) + 1; /* leaves hold more than leaf / 2 rows each */
    int64_t *perm = T->rowid;
    for (Py_ssize_t i = 0; i < n; i++) perm[i] = i;
    T->nd = malloc(sizeof(Node) * (size_t)cap);
    T->parent = malloc(sizeof(int64_t) * (size_t)cap);
    T->box = malloc(sizeof(double) * (size_t)(cap * 2 * m));
    T->stack = malloc(sizeof(int64_t) * (size_t)(cap + 64));
    T->stack_b = malloc(sizeof(double) * (size_t)(cap + 64));
    if (!T->nd || !T->parent || !T->box || !T->stack || !T->stack_b) return -1;
    int64_t *stack = T->stack;
    T->nd[0].lo = 0;
    T->nd[0].hi = n;
    T->parent[0] = -1;
    Py_ssize_t n_nodes = 1, top = 1;
    stack[0] = 0;
    while (top > 0) {
        Py_ssize_t v = stack[--top];
        Py_ssize_t a = T->nd[v].lo, b = T->nd[v].hi;
        T->nd[v].left = -1;
        if (b - a <= leaf || m == 0) continue;
        double widest = -1.0;
        Py_ssize_t dim = 0;
        for (Py_ssize_t j = 0; j < m; j++) {
            double mn = X[perm[a] * m + j], mx = mn;
            for (Py_ssize_t t = a + 1; t < b; t++) {
                double x = X[perm[t] * m + j];
                if (x < mn) mn = x;
                if (x > mx) mx = x;
            }
            if (mx - mn > widest) {
                widest = mx - mn;
                dim = j;
            }
        }
        Py_ssize_t mid = (a + b) / 2;
        select_rank(X, m, dim, perm, a, b, mid);
        Py_ssize_t u = n_nodes;
        n_nodes += 2;
        T->nd[v].left = u;
        T->nd[u].lo = a;
        T->nd[u].hi = mid;
        T->nd[u + 1].lo = mid;
        T->nd[u + 1].hi = b;
        T->parent[u] = T->parent[u + 1] = v;
        stack[top++] = u;
        stack[top++] = u + 1;
    }
    T->n_nodes = n_nodes;
    for (Py_ssize_t t = 0; t < n; t++) {
        T->pos_of[perm[t]] = t;
        T->alive_p[t] = 1;
        memcpy(T->Xp + t * m, X + perm[t] * m, sizeof(double) * (size_t)m);
    }
    for (Py_ssize_t v = n_nodes - 1; v >= 0; v--) { /* children come after their parent */
        T->nd[v].count = T->nd[v].hi - T->nd[v].lo;
        if (T->nd[v].left < 0)
            for (Py_ssize_t t = T->nd[v].lo; t < T->nd[v].hi; t++) T->leaf_of[T->rowid[t]] = v;
        refresh(T, v);
    }
    return 0;
}

/* ---- queries ---- */

/* at most the computed distance from q of any row in node v's box */
static inline double near_bound(const Tree *T, Py_ssize_t v, const double *q) {
    Py_ssize_t m = T->m;
    const double *mn = T->box + v * 2 * m, *mx = mn + m;
    double acc = 0.0;
    for (Py_ssize_t j = 0; j < m; j++) {
        double diff;
        if (q[j] < mn[j]) diff = mn[j] - q[j];
        else if (q[j] > mx[j]) diff = mx[j] - q[j];
        else diff = 0.0;
        acc += diff * diff;
    }
    return acc;
}

/* at least the computed distance from q of any row in node v's box */
static inline double far_bound(const Tree *T, Py_ssize_t v, const double *q) {
    Py_ssize_t m = T->m;
    const double *mn = T->box + v * 2 * m, *mx = mn + m;
    double acc = 0.0;
    for (Py_ssize_t j = 0; j < m; j++) {
        double a = fabs(mn[j] - q[j]), b = fabs(mx[j] - q[j]);
        double diff = a > b ? a : b;
        acc += diff * diff;
    }
    return acc;
}

/* keep the best `size` (d, row): ascending d for nearest, descending for farthest, the lower row
   first on equal d */
static inline Py_ssize_t insert(double *buf_d, int64_t *buf_r, Py_ssize_t filled, Py_ssize_t size, double d,
                                int64_t r, int nearest) {
    if (filled == size) {
        double wd = buf_d[size - 1];
        if ((nearest ? d > wd : d < wd) || (d == wd && r > buf_r[size - 1])) return filled;
    }
    Py_ssize_t pos = filled < size ? filled : size - 1;
    while (pos > 0) {
        double pd = buf_d[pos - 1];
        if ((nearest ? pd < d : pd > d) || (pd == d && buf_r[pos - 1] < r)) break;
        buf_d[pos] = pd;
        buf_r[pos] = buf_r[pos - 1];
        pos--;
    }
    buf_d[pos] = d;
    buf_r[pos] = r;
    return filled < size ? filled + 1 : filled;
}

/* the `size` nearest (or farthest) live rows from q, row `exclude` skipped, in the scan's order,
   into buf_d / buf_r; returns how many were found. A node's bound travels with it on the stack
   and is checked again when popped, against the k-th best found by then. */
static Py_ssize_t query(Tree *T, const double *q, int64_t exclude, Py_ssize_t size, int nearest) {
    if (size <= 0) return 0;
    Py_ssize_t m = T->m, filled = 0, top = 1;
    int64_t *stack = T->stack;
    double *sb = T->stack_b, *buf_d = T->buf_d;
    int64_t *buf_r = T->buf_r;
    stack[0] = 0;
    sb[0] = nearest ? 0.0 : INFINITY;
    while (top > 0) {
        top--;
        Py_ssize_t v = stack[top];
        double bound = sb[top];
        if (T->nd[v].count == 0) continue;
        if (filled == size && (nearest ? bound > buf_d[size - 1] : bound < buf_d[size - 1])) continue;
        Py_ssize_t a = T->nd[v].left;
        if (a < 0) {
            for (Py_ssize_t t = T->nd[v].lo; t < T->nd[v].hi; t++) {
                if (!T->alive_p[t]) continue;
                int64_t r = T->rowid[t];
                if (r == exclude) continue;
                double d = squared_distance(T->Xp + t * m, q, m);
                if (filled == size) {
                    double wd = buf_d[size - 1];
                    if ((nearest ? d > wd : d < wd) || (d == wd && r > buf_r[size - 1])) continue;
                }
                filled = insert(buf_d, buf_r, filled, size, d, r, nearest);
            }
            continue;
        }
        Py_ssize_t b = a + 1;
        double ba, bb;
        int first_a;
        if (nearest) {
            ba = T->nd[a].count ? near_bound(T, a, q) : INFINITY;
            bb = T->nd[b].count ? near_bound(T, b, q) : INFINITY;
            first_a = ba <= bb;
        } else {
            ba = T->nd[a].count ? far_bound(T, a, q) : -INFINITY;
            bb = T->nd[b].count ? far_bound(T, b, q) : -INFINITY;
            first_a = ba >= bb;
        }
        /* the more promising child is popped first */
        if (first_a) {
            stack[top] = b; sb[top] = bb;
            stack[top + 1] = a; sb[top + 1] = ba;
        } else {
            stack[top] = a; sb[top] = ba;
            stack[top + 1] = b; sb[top + 1] = bb;
        }
        top += 2;
    }
    return filled;
}

/* ---- the search for P (as _mdav_fast's find_p) ---- */

static inline void update_sum(Tree *T, const double *x, double sign) {
    for (Py_ssize_t j = 0; j < T->m; j++) {
        double v = sign * x[j];
        double a = T->s_hi[j];
        double s = a + v;
        double bb = s - a;
        double e = (a - (s - bb)) + (v - bb);
        T->s_hi[j] = s;
        T->s_lo[j] += e;
        T->abs_sum[j] += sign * fabs(v);
    }
}

static double centroid_and_error(Tree *T, Py_ssize_t n_live, Py_ssize_t updates) {
    double delta2 = 0.0;
    for (Py_ssize_t j = 0; j < T->m; j++) {
        T->c[j] = (T->s_hi[j] + T->s_lo[j]) / (double)n_live;
        double dj = (1.01 * (double)(n_live + 4) * U53 * T->abs_sum[j]
                     + 4.0 * (double)updates * U53 * U53 * T->abs_total[j]) / (double)n_live;
        dj += 2.0 * U53 * fabs(T->c[j]) + 1e-300;
        delta2 += dj * dj;
    }
    return sqrt(delta2);
}

static inline double p_threshold(double best_d, double delta, double gamma) {
    double rr = sqrt(best_d) * (1.0 + gamma);
    double err = delta * (2.0 * rr + delta) + 2.0 * gamma * (rr + delta) * (rr + delta);
    double t = best_d - 2.02 * err;
    return t > 0.0 ? t : 0.0;
}

typedef struct Radius {
    double e;
    int64_t row;
} Radius;

static inline uint64_t radius_key(double e) {
    uint64_t bits;
    e += 0.0; /* -0.0 as 0.0 */
    memcpy(&bits, &e, sizeof bits);
    return ~bits; /* e >= 0: its bits ascend with it, so these descend */
}

#define RADIX_BITS 11
#define RADIX_PASSES 6 /* 66 bits >= 64 */
#define RADIX_SIZE (1 << RADIX_BITS)

/* a[:n] by decreasing e, stably (a least-significant-digit radix sort of e's bits): rows that
   came in ascending stay so on equal e, as the screened kernel's stable argsort keeps them;
   returns a or tmp, whichever holds the result */
static Radius *radix_sort(Radius *a, Radius *tmp, Py_ssize_t n, size_t *hist) {
    memset(hist, 0, sizeof(size_t) * RADIX_PASSES * RADIX_SIZE);
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t key = radius_key(a[i].e);
        for (int p = 0; p < RADIX_PASSES; p++) hist[p * RADIX_SIZE + ((key >> (p * RADIX_BITS)) & (RADIX_SIZE - 1))]++;
    }
    for (int p = 0; p < RADIX_PASSES; p++) {
        size_t *h = hist + p * RADIX_SIZE;
        int single = 0;
        for (int d = 0; d < RADIX_SIZE; d++)
            if (h[d] == (size_t)n) single = 1;
        if (single) continue; /* every key has this digit: the pass would not move anything */
        size_t sum = 0;
        for (int d = 0; d < RADIX_SIZE; d++) {
            size_t c = h[d];
            h[d] = sum;
            sum += c;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned d = (unsigned)((radius_key(a[i].e) >> (p * RADIX_BITS)) & (RADIX_SIZE - 1));
            tmp[h[d]++] = a[i];
        }
        Radius *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* The walk for P reads the top of the radius order only: from PARTIAL_FROM live rows an ordering
   sorts about the farthest PARTIAL_SHARE-th of them (whole buckets of the radius's top 16 bits, so
   every sorted radius is above every other) and leaves the rest in row order after them. */
#define PARTIAL_FROM 65536
#define PARTIAL_SHARE 8
#define TOP_BITS 16

/* the rows live_rows[:n_alive] (ascending) by decreasing distance from c0, lowest row first on
   ties, into order / radius (Xo: the rows of the sorted part); the sorted part's length */
static Py_ssize_t radius_order(Tree *T, const int64_t *live_rows, Py_ssize_t n_alive) {
    Py_ssize_t m = T->m;
    Radius *pairs = T->pairs;
    for (Py_ssize_t t = 0; t < n_alive; t++) {
        pairs[t].e = sqrt(squared_distance(T->X + live_rows[t] * m, T->c0, m));
        pairs[t].row = live_rows[t];
    }
    Py_ssize_t n_sorted = n_alive;
    Radius *sorted = pairs, *spare = T->pairs2;
    if (n_alive >= PARTIAL_FROM) {
        size_t *h = T->top_hist;
        memset(h, 0, sizeof(size_t) << TOP_BITS);
        for (Py_ssize_t t = 0; t < n_alive; t++) h[radius_key(pairs[t].e) >> (64 - TOP_BITS)]++;
        size_t want = (size_t)(n_alive / PARTIAL_SHARE), have = 0;
        uint64_t last = 0;
        while (have < want) have += h[last++];
        /* buckets below `last` hold the farthest rows: to the sorted part, the others after it in
           row order */
        Py_ssize_t s = 0, u = (Py_ssize_t)have;
        for (Py_ssize_t t = 0; t < n_alive; t++) {
            if ((radius_key(pairs[t].e) >> (64 - TOP_BITS)) < last) {
                spare[s++] = pairs[t];
            } else {
                T->order[u] = pairs[t].row;
                T->radius[u++] = pairs[t].e;
            }
        }
        n_sorted = s;
        sorted = spare;
        spare = pairs;
    }
    sorted = radix_sort(sorted, spare, n_sorted, T->hist);
    for (Py_ssize_t t = 0; t < n_sorted; t++) {
        T->order[t] = sorted[t].row;
        T->radius[t] = sorted[t].e;
        const double *x = T->X + sorted[t].row * m;
        double *xo = T->Xo + t * m;
        for (Py_ssize_t j = 0; j < m; j++) xo[j] = x[j];
    }
    T->n_order = n_alive;
    return n_sorted;
}

/* walk the live rows down the radius order while |x - c| <= radius + shift can reach the bar;
   threshold < 0: returns the largest distance to c; else the rows at distance >= threshold into
   p_cand (*n_out of them). Past the sorted part each row is checked on its own radius, and counts
   as walked (so that a walk there asks for a new ordering). */
static double walk(Tree *T, double shift, double threshold, Py_ssize_t *walked, Py_ssize_t *n_out) {
    Py_ssize_t m = T->m;
    double best_d = -1.0, g = 1.0 + 2.0 * T->gamma;
    *walked = 0;
    *n_out = 0;
    Py_ssize_t t = T->head;
    for (; t < T->n_sorted; t++) {
        int64_t r = T->order[t];
        if (!T->alive[r]) continue;
        double bound = (T->radius[t] + shift) * g;
        if (bound * bound < (threshold < 0.0 ? best_d : threshold)) return best_d;
        (*walked)++;
        double dr = squared_distance(T->Xo + t * m, T->c, m);
        if (threshold < 0.0) {
            if (dr > best_d) best_d = dr;
        } else if (dr >= threshold) {
            T->p_cand[(*n_out)++] = r;
        }
    }
    for (; t < T->n_order; t++) {
        int64_t r = T->order[t];
        if (!T->alive[r]) continue;
        (*walked)++;
        double bound = (T->radius[t] + shift) * g;
        if (bound * bound < (threshold < 0.0 ? best_d : threshold)) continue;
        double dr = squared_distance(T->X + r * m, T->c, m);
        if (threshold < 0.0) {
            if (dr > best_d) best_d = dr;
        } else if (dr >= threshold) {
            T->p_cand[(*n_out)++] = r;
        }
    }
    return best_d;
}

static int64_t choose_p(Tree *T, Py_ssize_t n_cand, Py_ssize_t n_live) {
    Py_ssize_t m = T->m, n = T->n;
    const double *X = T->X;
    int64_t *cand = T->p_cand;
    int same = 1;
    for (Py_ssize_t u = 1; u < n_cand && same; u++)
        for (Py_ssize_t j = 0; j < m; j++)
            if (X[cand[u] * m + j] != X[cand[0] * m + j]) {
                same = 0;
                break;
            }
    int64_t p = cand[0];
    if (same) {
        for (Py_ssize_t u = 1; u < n_cand; u++)
            if (cand[u] < p) p = cand[u];
        return p;
    }
    T->fallbacks++;
    for (Py_ssize_t j = 0; j < m; j++) T->exact_c[j] = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) /* the scan's centroid: live rows in row order */
        if (T->alive[i])
            for (Py_ssize_t j = 0; j < m; j++) T->exact_c[j] += X[i * m + j];
    for (Py_ssize_t j = 0; j < m; j++) T->exact_c[j] /= (double)n_live;
    double best = -1.0;
    for (Py_ssize_t u = 0; u < n_cand; u++) {
        double du = squared_distance(X + cand[u] * m, T->exact_c, m);
        if (du > best || (du == best && cand[u] < p)) {
            best = du;
            p = cand[u];
        }
    }
    return p;
}

static int64_t find_p(Tree *T, Py_ssize_t n_live, Py_ssize_t updates) {
    Py_ssize_t m = T->m;
    double delta = centroid_and_error(T, n_live, updates);
    double shift2 = 0.0;
    for (Py_ssize_t j = 0; j < m; j++) {
        double sh = T->c[j] - T->c0[j];
        shift2 += sh * sh;
    }
    double shift = sqrt(shift2) * (1.0 + 2.0 * T->gamma);
    while (!T->alive[T->order[T->head]]) T->head++;
    Py_ssize_t walked, n_cand, ignored;
    double best_d = walk(T, shift, -1.0, &walked, &ignored);
    double threshold = p_threshold(best_d, delta, T->gamma);
    Py_ssize_t walked2;
    walk(T, shift, threshold, &walked2, &n_cand);
    int64_t p = choose_p(T, n_cand, n_live);
    T->walked_since += walked;
    if (walked > REBUILD_MIN && T->walked_since > n_live) {
        /* the walks since the last ordering cost as much as a new one: order the live rows around
           the current centroid (so walking never costs more than ordering, amortized) */
        memcpy(T->c0, T->c, sizeof(double) * (size_t)m);
        Py_ssize_t w = 0;
        for (Py_ssize_t i = 0; i < T->n; i++)
            if (T->alive[i]) T->live_rows[w++] = i;
        T->n_sorted = radius_order(T, T->live_rows, n_live);
        T->head = 0;
        T->rebuilds++;
        T->walked_since = 0;
    }
    return p;
}

/* ---- the rounds ---- */

static void remove_row(Tree *T, int64_t r, int64_t *labels, int64_t group) {
    labels[r] = group;
    T->alive[r] = 0;
    update_sum(T, T->X + r * T->m, -1.0);
    T->alive_p[T->pos_of[r]] = 0;
    int changed = 1;
    for (Py_ssize_t v = T->leaf_of[r]; v >= 0; v = T->parent[v]) {
        T->nd[v].count--;
        if (changed) changed = refresh(T, v);
    }
}

/* `seed` and its k - 1 nearest live rows form `group`; point gets seed's row */
static void take(Tree *T, int64_t seed, Py_ssize_t k, int64_t *labels, int64_t group, double *point) {
    memcpy(point, T->X + seed * T->m, sizeof(double) * (size_t)T->m);
    Py_ssize_t found = query(T, point, seed, k - 1, 1);
    remove_row(T, seed, labels, group);
    for (Py_ssize_t t = 0; t < found; t++) remove_row(T, T->buf_r[t], labels, group);
}

static void free_tree(Tree *T) {
    free(T->Xp); free(T->rowid); free(T->pos_of); free(T->alive_p); free(T->alive); free(T->nd);
    free(T->parent); free(T->leaf_of); free(T->box); free(T->stack);
    free(T->stack_b); free(T->buf_d); free(T->buf_r); free(T->s_hi); free(T->s_lo); free(T->abs_sum);
    free(T->abs_total); free(T->c); free(T->c0); free(T->exact_c); free(T->order); free(T->p_cand);
    free(T->live_rows); free(T->radius); free(T->Xo); free(T->pairs); free(T->pairs2); free(T->hist); free(T->top_hist);
}

/* the rounds; -1 when memory ran out (nothing set), else 0 */
static int run(Tree *T, Py_ssize_t k, Py_ssize_t leaf, int64_t *labels) {
    Py_ssize_t n = T->n, m = T->m, mm = m ? m : 1, kk = k > 1 ? k : 1;
    size_t nd = sizeof(double) * (size_t)n, ni = sizeof(int64_t) * (size_t)n, md = sizeof(double) * (size_t)mm;
    T->Xp = malloc(nd * (size_t)mm); T->Xo = malloc(nd * (size_t)mm); T->radius = malloc(nd);
    T->pairs = malloc(sizeof(Radius) * (size_t)n); T->pairs2 = malloc(sizeof(Radius) * (size_t)n);
    T->hist = malloc(sizeof(size_t) * RADIX_PASSES * RADIX_SIZE); T->top_hist = malloc(sizeof(size_t) << TOP_BITS);
    T->rowid = malloc(ni); T->pos_of = malloc(ni); T->leaf_of = malloc(ni); T->order = malloc(ni);
    T->p_cand = malloc(ni); T->live_rows = malloc(ni); T->alive_p = malloc((size_t)n); T->alive = malloc((size_t)n);
    T->buf_d = malloc(sizeof(double) * (size_t)kk); T->buf_r = malloc(sizeof(int64_t) * (size_t)kk);
    T->s_hi = calloc((size_t)mm, sizeof(double)); T->s_lo = calloc((size_t)mm, sizeof(double));
    T->abs_sum = calloc((size_t)mm, sizeof(double)); T->abs_total = malloc(md); T->c = malloc(md);
    T->c0 = malloc(md); T->exact_c = malloc(md);
    double *point = malloc(md);
    if (!T->Xp || !T->Xo || !T->pairs || !T->pairs2 || !T->hist || !T->top_hist || !T->radius || !T->rowid || !T->pos_of || !T->leaf_of || !T->order || !T->p_cand
        || !T->live_rows || !T->alive_p || !T->alive || !T->buf_d || !T->buf_r || !T->s_hi || !T->s_lo
        || !T->abs_sum || !T->abs_total || !T->c || !T->c0 || !T->exact_c || !point || build(T, leaf) < 0) {
        free(point);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        T->alive[i] = 1;
        update_sum(T, T->X + i * m, 1.0);
    }
    memcpy(T->abs_total, T->abs_sum, md);
    T->gamma = (double)(m + 3) * U53;
    for (Py_ssize_t j = 0; j < m; j++) T->c0[j] = (T->s_hi[j] + T->s_lo[j]) / (double)n;
    for (Py_ssize_t i = 0; i < n; i++) T->live_rows[i] = i;
    T->n_sorted = radius_order(T, T->live_rows, n);
    Py_ssize_t n_live = n, updates = n;
    int64_t group = 0;
    while (n_live >= 2 * k) {
        int64_t p = find_p(T, n_live, updates);
        take(T, p, k, labels, group++, point);
        /* Q: the live row farthest from P (point still holds P's row) */
        query(T, point, -1, 1, 0);
        take(T, T->buf_r[0], k, labels, group++, point);
        updates += 2 * k;
        n_live -= 2 * k;
    }
    int64_t rest = n_live >= k ? group : group - 1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (T->alive[i]) labels[i] = rest;
    free(point);
    return 0;
}

/* mdav_tree_labels(X, m, k, leaf, labels) -> fallbacks: X n x m float64 (within +-1e15), labels n
   int64 (written); the number of rounds where the scan's own centroid had to decide P */
static PyObject *mdav_tree_labels(PyObject *self, PyObject *args) {
    Py_buffer xb, lb;
    Py_ssize_t m, k, leaf;
    if (!PyArg_ParseTuple(args, "y*nnnw*", &xb, &m, &k, &leaf, &lb)) return NULL;
    PyObject *result = NULL;
    Tree T;
    memset(&T, 0, sizeof T);
    Py_ssize_t n = lb.len / (Py_ssize_t)sizeof(int64_t);
    if (k < 1) {
        PyErr_Format(PyExc_ValueError, "k must be at least 1; got %zd", k);
        goto done;
    }
    if (leaf < 1) {
        PyErr_Format(PyExc_ValueError, "leaf must be at least 1; got %zd", leaf);
        goto done;
    }
    if (m < 0 || m > 64) {
        PyErr_Format(PyExc_ValueError, "m must be 0 to 64 columns; got %zd", m);
        goto done;
    }
    if (check_size(&xb, n * m, sizeof(double), "X") || check_size(&lb, n, sizeof(int64_t), "labels")) goto done;
    int64_t *labels = lb.buf;
    if (n < 2 * k) {
        for (Py_ssize_t i = 0; i < n; i++) labels[i] = 0;
        result = PyLong_FromLong(0);
        goto done;
    }
    T.n = n;
    T.m = m;
    T.X = xb.buf;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = run(&T, k, leaf, labels);
    Py_END_ALLOW_THREADS
    if (status < 0) PyErr_NoMemory();
    else result = PyLong_FromSsize_t(T.fallbacks);
done:
    free_tree(&T);
    PyBuffer_Release(&xb);
    PyBuffer_Release(&lb);
    return result;
}

static PyMethodDef methods[] = {
    {"mdav_tree_labels", mdav_tree_labels, METH_VARARGS, "mdav_tree_labels(X, m, k, leaf, labels) -> int"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mdav_tree", "Exact MDAV from a k-d tree; see incrowd/_native/__init__.py.", -1, methods,
};

PyMODINIT_FUNC PyInit__mdav_tree(void) { return PyModule_Create(&module); }
