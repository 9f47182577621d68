/* Native matching of one part of an alias vocabulary: builders/alias/matching.py's
 * `longest_per_start` and the walk of `leftmost_longest`, without a Python object per match.
 *
 * `Trie(keys)` holds one part's keys (bytes; a key's value is its index in `keys`; an empty key
 * never matches; of equal keys the first counts) as a byte trie laid out level by level: node i has
 * a label byte, a value (the key ending there, or -1) and its children are the nodes
 * first[i] .. first[i + 1] - 1, in byte order; a bit a node says whether a key ends there (checked
 * before the value: a bitmap that stays in cache). 9 bytes a node; a part of consecutive sorted keys
 * shares most prefixes (`nbytes` says what one holds).
 * `Trie.longest(data, first_key)` gives, at every offset of `data` where one of its keys starts, the
 * longest such key: (start, length, first_key + index) rows as native int32s, by start. It walks the
 * trie forward from each start, but only from starts whose first two bytes begin some key (a
 * 65,536-bit set; a one-byte key is found from the first byte alone): a part's keys begin with few
 * of the byte pairs of a text, so most starts cost one lookup, and K parts cost little more than one
 * pass. 0xFF is no byte of UTF-8: a separator there ends every walk.
 * `union_walk(rows)` is `leftmost_longest` over the union of every part's rows: the longest row at
 * each start put in a dense array over the range of starts, then one walk along it (linear: no sort
 * of the union, no search per row).
 * Both release the GIL while they run; the trie is never changed after it is built.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ABI 2
#define NO_VALUE (-1)
#define NO_CHILD UINT32_MAX

typedef struct {
    PyObject_HEAD
    uint8_t *label;           /* per node: the byte on the edge from its parent (root: 0) */
    int32_t *value;           /* per node: the index of the key ending there, or NO_VALUE */
    uint32_t *first;          /* per node + 1: its first child; children are first[i]..first[i+1]-1 */
    uint32_t nodes;
    Py_ssize_t keys;          /* how many keys it was given (empty ones included) */
    uint32_t root_child[256]; /* the root's child by byte, or NO_CHILD */
    uint64_t pairs[1024];     /* bit (b0 << 8 | b1): some key of two bytes or more starts b0 b1 */
    uint64_t *ends;           /* bit i: a key ends at node i (a bit, in cache, before its value) */
} Trie;

/* One key while the trie is built: its bytes (in the copy), length and index. */
typedef struct {
    const uint8_t *bytes;
    uint32_t len;
    int32_t index;
} Entry;

static int entry_cmp(const void *a, const void *b) {
    const Entry *x = a, *y = b;
    uint32_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->bytes, y->bytes, n) : 0;
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static void Trie_free_arrays(Trie *t) {
    free(t->label);
    free(t->value);
    free(t->first);
    free(t->ends);
    t->ends = NULL;
    t->label = NULL;
    t->value = NULL;
    t->first = NULL;
    t->nodes = 0;
}

static void Trie_dealloc(Trie *t) {
    Trie_free_arrays(t);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* Grow the node arrays to hold `need` nodes (first: need + 1); the temporary ranges too. */
static int reserve(Trie *t, uint32_t **lo, uint32_t **hi, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 1024;
    while (n < need) n *= 2;
    uint8_t *label = realloc(t->label, n);
    if (label) t->label = label;
    int32_t *value = realloc(t->value, n * sizeof(int32_t));
    if (value) t->value = value;
    uint32_t *first = realloc(t->first, (n + 1) * sizeof(uint32_t));
    if (first) t->first = first;
    uint32_t *l = realloc(*lo, n * sizeof(uint32_t));
    if (l) *lo = l;
    uint32_t *h = realloc(*hi, n * sizeof(uint32_t));
    if (h) *hi = h;
    if (!label || !value || !first || !l || !h) return -1;
    *cap = n;
    return 0;
}

/* The trie of `entries` (sorted, non-empty keys), level by level: each node stands for the range
 * [lo, hi) of entries sharing its prefix (its depth), split by the next byte into its children. */
static int build(Trie *t, const Entry *entries, uint32_t count) {
    uint32_t *lo = NULL, *hi = NULL;
    size_t cap = 0;
    int rc = -1;
    if (reserve(t, &lo, &hi, &cap, 1) < 0) goto done;
    t->label[0] = 0;
    t->value[0] = NO_VALUE;
    lo[0] = 0;
    hi[0] = count;
    size_t nodes = 1, level_start = 0, level_end = 1;
    for (uint32_t depth = 0; level_start < level_end; depth++) {
        for (size_t x = level_start; x < level_end; x++) {
            uint32_t i = lo[x], end = hi[x];
            t->first[x] = (uint32_t)nodes;
            /* the key ending here sorts first (a prefix of the others); equal keys after it */
            if (i < end && entries[i].len == depth) {
                t->value[x] = entries[i].index;
                while (i < end && entries[i].len == depth) i++;
            }
            while (i < end) {
                uint8_t c = entries[i].bytes[depth];
                uint32_t j = i + 1;
                while (j < end && entries[j].bytes[depth] == c) j++;
                if (nodes >= UINT32_MAX - 1 || reserve(t, &lo, &hi, &cap, nodes + 1) < 0) goto done;
                t->label[nodes] = c;
                t->value[nodes] = NO_VALUE;
                lo[nodes] = i;
                hi[nodes] = j;
                nodes++;
                i = j;
            }
        }
        level_start = level_end;
        level_end = nodes;
    }
    t->first[nodes] = (uint32_t)nodes;
    t->nodes = (uint32_t)nodes;
    rc = 0;
done:
    free(lo);
    free(hi);
    return rc;
}

static inline uint32_t child(const Trie *t, uint32_t node, uint8_t c) {
    uint32_t a = t->first[node], end = t->first[node + 1], b = end;
    const uint8_t *label = t->label;
    while (b - a > 8) { /* halve down to a few (the first label >= c is in [a, b]), then scan */
        uint32_t mid = a + (b - a) / 2;
        if (label[mid] < c)
            a = mid + 1;
        else
            b = mid;
    }
    for (; a < end; a++) {
        if (label[a] == c) return a;
        if (label[a] > c) break;
    }
    return NO_CHILD;
}

static int Trie_init(Trie *t, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"keys", NULL};
    PyObject *seq;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Trie", kwlist, &seq)) return -1;
    if (t->nodes) { /* another thread may be walking it without the GIL */
        PyErr_SetString(PyExc_RuntimeError, "a Trie is built once");
        return -1;
    }
    PyObject *fast = PySequence_Fast(seq, "keys must be a sequence of bytes");
    if (!fast) return -1;
    t->keys = 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    Entry *entries = NULL;
    uint8_t *copy = NULL;
    int rc = -1;
    if (n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "too many keys for one trie");
        goto done;
    }
    size_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyBytes_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "keys must be bytes");
            goto done;
        }
        if (PyBytes_GET_SIZE(key) >= UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "a key of 4 GiB or more");
            goto done;
        }
        total += (size_t)PyBytes_GET_SIZE(key);
    }
    /* a copy: the sequence's items could be replaced while the trie is built */
    entries = malloc((size_t)(n ? n : 1) * sizeof(Entry));
    copy = malloc(total ? total : 1);
    if (!entries || !copy) {
        PyErr_NoMemory();
        goto done;
    }
    uint32_t count = 0;
    size_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PySequence_Fast_GET_ITEM(fast, i);
        size_t len = (size_t)PyBytes_GET_SIZE(key);
        if (!len) continue; /* an empty key never matches */
        memcpy(copy + at, PyBytes_AS_STRING(key), len);
        entries[count++] = (Entry){copy + at, (uint32_t)len, (int32_t)i};
        at += len;
    }
    qsort(entries, count, sizeof(Entry), entry_cmp);
    if (build(t, entries, count) < 0) {
        Trie_free_arrays(t);
        PyErr_NoMemory();
        goto done;
    }
    t->ends = calloc(t->nodes / 64 + 1, sizeof(uint64_t));
    if (!t->ends) {
        Trie_free_arrays(t);
        PyErr_NoMemory();
        goto done;
    }
    for (uint32_t i = 0; i < t->nodes; i++)
        if (t->value[i] != NO_VALUE) t->ends[i >> 6] |= (uint64_t)1 << (i & 63);
    t->keys = n;
    for (int c = 0; c < 256; c++) t->root_child[c] = NO_CHILD;
    memset(t->pairs, 0, sizeof(t->pairs));
    for (uint32_t a = t->first[0]; a < t->first[1]; a++) {
        t->root_child[t->label[a]] = a;
        for (uint32_t b = t->first[a]; b < t->first[a + 1]; b++) {
            unsigned pair = (unsigned)t->label[a] << 8 | t->label[b];
            t->pairs[pair >> 6] |= (uint64_t)1 << (pair & 63);
        }
    }
    rc = 0;
done:
    free(entries);
    free(copy);
    Py_DECREF(fast);
    return rc;
}

/* A growing array of int32 rows (or int64 indices), filled without the GIL. */
typedef struct {
    char *data;
    size_t len, cap; /* bytes */
} Out;

static int out_reserve(Out *o, size_t more) {
    if (o->len + more <= o->cap) return 0;
    size_t n = o->cap ? o->cap : 1 << 16;
    while (n < o->len + more) n *= 2;
    char *d = realloc(o->data, n);
    if (!d) return -1;
    o->data = d;
    o->cap = n;
    return 0;
}

static int longest(const Trie *t, const uint8_t *s, size_t n, int32_t first_key, Out *o) {
    if (!t->nodes || !n) return 0;
    for (size_t p = 0; p < n; p++) {
        uint32_t node = t->root_child[s[p]];
        if (node == NO_CHILD) continue;
        uint32_t best = 0;
        int32_t key = t->value[node];
        if (key != NO_VALUE) best = 1;
        if (p + 1 < n) {
            unsigned pair = (unsigned)s[p] << 8 | s[p + 1];
            if (t->pairs[pair >> 6] >> (pair & 63) & 1) {
                size_t q = p + 1;
                while (q < n) {
                    uint32_t next = child(t, node, s[q]);
                    if (next == NO_CHILD) break;
                    node = next;
                    q++;
                    if (t->ends[node >> 6] >> (node & 63) & 1) {
                        best = (uint32_t)(q - p);
                        key = t->value[node];
                    }
                }
            }
        }
        if (!best) continue;
        if (out_reserve(o, 3 * sizeof(int32_t)) < 0) return -1;
        int32_t row[3] = {(int32_t)p, (int32_t)best, first_key + key};
        memcpy(o->data + o->len, row, sizeof(row));
        o->len += sizeof(row);
    }
    return 0;
}

/* A bytearray (numpy views of it are writable, as the reference path's arrays are). */
static PyObject *out_bytes(Out *o, int failed) {
    PyObject *result = failed ? PyErr_NoMemory() : PyByteArray_FromStringAndSize(o->data ? o->data : "", (Py_ssize_t)o->len);
    free(o->data);
    return result;
}

PyDoc_STRVAR(Trie_longest_doc,
             "longest(data, first_key=0) -> bytearray\n\n"
             "At every offset of `data` where a key starts, the longest one: (start, length, first_key + index)\n"
             "rows as native int32s, by start. ValueError if `data` or a key index does not fit an int32.");

static PyObject *Trie_longest(Trie *t, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"data", "first_key", NULL};
    Py_buffer view;
    long long first_key = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|L:longest", kwlist, &view, &first_key)) return NULL;
    if (view.len > INT32_MAX || first_key < 0 || first_key + (long long)t->keys > INT32_MAX) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "a matched buffer or key index past 2**31");
        return NULL;
    }
    Out o = {NULL, 0, 0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = longest(t, view.buf, (size_t)view.len, (int32_t)first_key, &o);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return out_bytes(&o, rc < 0);
}

static PyObject *Trie_get_nodes(Trie *t, void *Py_UNUSED(closure)) { return PyLong_FromUnsignedLong(t->nodes); }

static PyObject *Trie_get_nbytes(Trie *t, void *Py_UNUSED(closure)) {
    size_t per_node = sizeof(uint8_t) + sizeof(int32_t) + sizeof(uint32_t);
    size_t ends = t->nodes ? ((size_t)t->nodes / 64 + 1) * sizeof(uint64_t) : 0;
    return PyLong_FromSize_t(sizeof(Trie) + (size_t)t->nodes * per_node + sizeof(uint32_t) + ends);
}

static PyObject *Trie_len(Trie *t, void *Py_UNUSED(closure)) { return PyLong_FromSsize_t(t->keys); }

static PyMethodDef Trie_methods[] = {
    {"longest", (PyCFunction)(void (*)(void))Trie_longest, METH_VARARGS | METH_KEYWORDS, Trie_longest_doc},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Trie_getset[] = {
    {"nodes", (getter)Trie_get_nodes, NULL, "nodes of the trie (the root included)", NULL},
    {"nbytes", (getter)Trie_get_nbytes, NULL, "bytes the trie holds", NULL},
    {"keys", (getter)Trie_len, NULL, "how many keys it was built from (empty ones included)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject TrieType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "entbench._mentionparts.Trie",
    .tp_basicsize = sizeof(Trie),
    .tp_dealloc = (destructor)Trie_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Trie(keys): the byte trie of one part's keys (see mentionparts.c).",
    .tp_methods = Trie_methods,
    .tp_getset = Trie_getset,
    .tp_init = (initproc)Trie_init,
    .tp_new = PyType_GenericNew,
};

PyDoc_STRVAR(union_walk_doc,
             "union_walk(rows) -> bytearray\n\n"
             "`rows`: (start, length, key) native int32 rows, in any order, at most one per (start, length)\n"
             "that counts (of equal ones the first). The rows a leftmost-longest walk keeps: from the\n"
             "smallest start, the longest row there, then on from its end; as native int32 rows by start.\n"
             "Linear in the rows and the range of their starts (two int32s of scratch per position of it).\n"
             "ValueError if `rows` is not int32 triples or a row has a negative start or a length < 1.");

/* The longest row at each start of [lo, lo + span), then the walk: O(rows + span), no sort. */
static int union_walk(const int32_t *rows, size_t n, Out *o) {
    int32_t lo = INT32_MAX, hi = 0;
    for (size_t r = 0; r < n; r++) {
        int32_t s = rows[3 * r], len = rows[3 * r + 1];
        if (s < 0 || len < 1) return -2;
        if (s < lo) lo = s;
        if (s > hi) hi = s;
    }
    if (!n) return 0;
    size_t span = (size_t)(hi - lo) + 1;
    int32_t *best = calloc(span, 2 * sizeof(int32_t)); /* per position: length, row index */
    if (!best) return -1;
    for (size_t r = 0; r < n; r++) {
        size_t at = 2 * (size_t)(rows[3 * r] - lo);
        if (rows[3 * r + 1] > best[at]) { /* the first of equal lengths stays */
            best[at] = rows[3 * r + 1];
            best[at + 1] = (int32_t)r;
        }
    }
    size_t at = 0;
    while (at < span) {
        int32_t len = best[2 * at];
        if (!len) {
            at++;
            continue;
        }
        if (out_reserve(o, 3 * sizeof(int32_t)) < 0) {
            free(best);
            return -1;
        }
        memcpy(o->data + o->len, rows + 3 * (size_t)best[2 * at + 1], 3 * sizeof(int32_t));
        o->len += 3 * sizeof(int32_t);
        at += (size_t)len;
    }
    free(best);
    return 0;
}

static PyObject *py_union_walk(PyObject *Py_UNUSED(module), PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (view.len % (Py_ssize_t)(3 * sizeof(int32_t)) || (size_t)view.len / (3 * sizeof(int32_t)) >= INT32_MAX) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "rows must be int32 triples (fewer than 2**31)");
        return NULL;
    }
    size_t n = (size_t)view.len / (3 * sizeof(int32_t));
    Out o = {NULL, 0, 0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    /* a copy when the buffer is not int32-aligned (a slice of a bytes object could be) */
    int32_t *aligned = NULL;
    const int32_t *rows = view.buf;
    if ((uintptr_t)view.buf % sizeof(int32_t)) {
        aligned = malloc((size_t)view.len ? (size_t)view.len : 1);
        if (aligned) memcpy(aligned, view.buf, (size_t)view.len);
        rows = aligned;
    }
    rc = rows ? union_walk(rows, n, &o) : -1;
    free(aligned);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (rc == -2) {
        free(o.data);
        PyErr_SetString(PyExc_ValueError, "a row with a negative start or a length below 1");
        return NULL;
    }
    return out_bytes(&o, rc < 0);
}

static PyMethodDef module_methods[] = {{"union_walk", (PyCFunction)py_union_walk, METH_O, union_walk_doc}, {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mentionparts",
                                    "Native matching of a part of an alias vocabulary (see mentionparts.c).", -1,
                                    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__mentionparts(void) {
    if (PyType_Ready(&TrieType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&TrieType);
    if (PyModule_AddObject(m, "Trie", (PyObject *)&TrieType) < 0 || PyModule_AddIntConstant(m, "ABI", ABI) < 0) {
        Py_DECREF(&TrieType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
