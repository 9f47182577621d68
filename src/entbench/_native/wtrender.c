/* Native rendering of wikitext: the hot loops of readers/wikitext/render.py and wikitext/markup.py.
 *
 * `Inline.blocks(text)` does, for one page's preprocessed text, what `_Renderer.render` does after
 * `preprocess` in Python: it cuts out hidden links (files, categories, interlanguage links), splits
 * the text into paragraphs (headings, list items, runs of lines), finds `[[…]]` links, classifies
 * their targets through the config's cache (plain titles here, any other through Python's
 * `RenderConfig.classify`), places anchors in the text it builds with whitespace collapsed, and
 * counts links by kind. Everything rare or intricate is handed back to the same Python functions
 * the reference path uses: `clean_plain` for a segment with an external link or an entity outside
 * a short table, `flatten` for a label holding a nested link, the external-link rewrite of a
 * paragraph holding `[[` and `:`, and any link-trail rule other than `[a-z]+` or none. So both
 * paths give identical output by construction (tests/readers/test_wikitext_native.py checks they
 * do). `template_spans` and `template_names` are wikitext.markup's functions of the same names.
 *
 * Strings are read as UCS-4 copies (or in place, for the two module functions); offsets are code
 * points, as in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define ABI 7
#define MARK 0x01

enum { TRAIL_NONE = 0, TRAIL_ASCII_LOWER = 1, TRAIL_CALL = 2 };

typedef struct {
    PyObject *target;  /* the target as written, stripped */
    PyObject *title;   /* normalised title */
    Py_ssize_t start, end, paragraph;
} Span;

typedef struct {
    PyObject_HEAD
    /* configuration (borrowed from the constructor's arguments, kept alive by references) */
    PyObject *targets;     /* dict: raw target -> _Classified */
    PyObject *classify;    /* RenderConfig.classify */
    PyObject *clean_plain; /* wikitext.clean_plain */
    PyObject *flatten;     /* callable(label) -> text: wikitext.flatten with the table bound */
    PyObject *around;      /* callable(s) -> s: external links around wikilinks rewritten */
    PyObject *trail;       /* callable(s, pos) -> end, for TRAIL_CALL */
    int trail_mode;
    PyObject *counts;      /* dict: count key -> int (the renderer's) */
    PyTypeObject *link_type;
    PyTypeObject *classified_type; /* wikitext._Classified */
    PyObject *article_key;         /* "links_article" */
    int first_letter;              /* whether main-namespace titles get their first letter upper-cased */
    Py_ssize_t cache_limit;        /* RenderConfig's: the target cache is cleared past it */
    /* the text being built */
    Py_UCS4 *buf;
    Py_ssize_t len, cap;
    Py_UCS4 pending; /* 0, ' ' or '\n' */
    int open;
    Py_ssize_t *starts;
    Py_ssize_t nstarts, capstarts;
    Span *spans;
    Py_ssize_t nspans, capspans;
    Py_UCS4 *scratch;
    Py_ssize_t capscratch;
    Py_UCS4 *clean; /* clean_plain's output (clean_c) */
    Py_ssize_t capclean;
} Inline;

static PyObject *EMPTY_ANCHOR_KEY; /* "links_empty_anchor" */

static inline int is_ws(Py_UCS4 c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int grow(void **p, Py_ssize_t *cap, Py_ssize_t need, size_t item) {
    if (need <= *cap) return 0;
    Py_ssize_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *q = PyMem_Realloc(*p, (size_t)n * item);
    if (!q) {
        PyErr_NoMemory();
        return -1;
    }
    *p = q;
    *cap = n;
    return 0;
}

static int count_key(Inline *self, PyObject *key) {
    PyObject *old = PyDict_GetItemWithError(self->counts, key);
    if (!old && PyErr_Occurred()) return -1;
    long n = old ? PyLong_AsLong(old) : 0;
    if (n == -1 && PyErr_Occurred()) return -1;
    PyObject *v = PyLong_FromLong(n + 1);
    if (!v) return -1;
    int rc = PyDict_SetItem(self->counts, key, v);
    Py_DECREF(v);
    return rc;
}

/* _Builder._space: whitespace owed before the next text, if the paragraph has text. */
static inline void space(Inline *self, int newline) {
    if (self->open) self->pending = (newline || self->pending == '\n') ? '\n' : ' ';
}

/* _Builder.add on p[0:n]: collapse ASCII whitespace runs (one "\n" if the run holds a line break,
 * else one space), strip them at both ends into the pending space. Returns 1 and the core's span,
 * 0 if there was no core, -1 on error. */
static int add(Inline *self, const Py_UCS4 *p, Py_ssize_t n, Py_ssize_t *start, Py_ssize_t *end) {
    if (n == 0) return 0;
    Py_ssize_t a = 0, b = n;
    int nl = 0;
    while (a < n && is_ws(p[a])) nl |= p[a++] == '\n';
    if (a == n) {
        space(self, nl);
        return 0;
    }
    if (a > 0) space(self, nl);
    int tnl = 0;
    while (b > a && is_ws(p[b - 1])) tnl |= p[--b] == '\n';
    /* _emit */
    if (grow((void **)&self->buf, &self->cap, self->len + 3 + (b - a), sizeof(Py_UCS4)) < 0) return -1;
    if (!self->open) {
        if (self->len) {
            self->buf[self->len++] = '\n';
            self->buf[self->len++] = '\n';
        }
        if (grow((void **)&self->starts, &self->capstarts, self->nstarts + 1, sizeof(Py_ssize_t)) < 0) return -1;
        self->starts[self->nstarts++] = self->len;
        self->open = 1;
    } else if (self->pending) {
        self->buf[self->len++] = self->pending;
    }
    self->pending = 0;
    *start = self->len;
    Py_UCS4 *out = self->buf + self->len;
    Py_ssize_t i = a;
    while (i < b) {
        Py_UCS4 c = p[i];
        if (!is_ws(c)) {
            *out++ = c;
            i++;
            continue;
        }
        int rnl = 0;
        while (is_ws(p[i])) rnl |= p[i++] == '\n'; /* the core ends in a non-space: stops before b */
        *out++ = rnl ? '\n' : ' ';
    }
    self->len = out - self->buf;
    *end = self->len;
    if (b < n) space(self, tnl);
    return 1;
}

/* An instance of a tuple subclass (a NamedTuple: what its __new__, tuple.__new__, builds) holding
 * items[0:n]; the references are stolen, also on error (an item may be NULL: an error already set). */
static PyObject *tuple_of(PyTypeObject *type, PyObject **items, Py_ssize_t n) {
    PyObject *t = NULL;
    for (Py_ssize_t k = 0; k < n; k++)
        if (!items[k]) goto fail;
    t = type->tp_alloc(type, n);
    if (!t) goto fail;
    for (Py_ssize_t k = 0; k < n; k++) PyTuple_SET_ITEM(t, k, items[k]);
    return t;
fail:
    for (Py_ssize_t k = 0; k < n; k++) Py_XDECREF(items[k]);
    return NULL;
}

/* A Python string as a UCS-4 copy (PyMem_Free it). */
static Py_UCS4 *ucs4(PyObject *s, Py_ssize_t *n) {
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "expected str");
        return NULL;
    }
    *n = PyUnicode_GET_LENGTH(s);
    return PyUnicode_AsUCS4Copy(s);
}

static int add_object(Inline *self, PyObject *s, Py_ssize_t *start, Py_ssize_t *end) {
    Py_ssize_t n;
    Py_UCS4 *p = ucs4(s, &n);
    if (!p) return -1;
    int rc = add(self, p, n, start, end);
    PyMem_Free(p);
    return rc;
}

static PyObject *str_of(const Py_UCS4 *p, Py_ssize_t n) {
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, p, n);
}

/* Whether clean_plain would change p[0:n] (it holds `[`, `''`, MARK or `&`). */
static int needs_clean(const Py_UCS4 *p, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = p[i];
        if (c == '[' || c == '&' || c == MARK || (c == '\'' && i + 1 < n && p[i + 1] == '\'')) return 1;
    }
    return 0;
}

/* The named and numeric character references clean_plain meets most (templates write dashes and
 * spaces as entities), each as html.unescape decodes `&NAME;` (the tests check the table with it). */
static const struct {
    const char *name;
    Py_UCS4 ch;
} ENTITIES[] = {{"nbsp", 0xa0},    {"amp", '&'},      {"lt", '<'},      {"gt", '>'},      {"quot", '"'},
                {"ndash", 0x2013}, {"mdash", 0x2014}, {"middot", 0xb7}, {"bull", 0x2022}, {"apos", '\''},
                {"#39", '\''},     {"minus", 0x2212}, {"times", 0xd7},  {"hellip", 0x2026}};
#define N_ENTITIES (sizeof(ENTITIES) / sizeof(ENTITIES[0]))

/* The entity `&NAME;` at p[i] (p[i] == '&'): its length with the `&` and `;` (its character in
 * *ch), or 0 if it is not in the table. */
static Py_ssize_t entity_at(const Py_UCS4 *p, Py_ssize_t n, Py_ssize_t i, Py_UCS4 *ch) {
    for (size_t k = 0; k < N_ENTITIES; k++) {
        const char *name = ENTITIES[k].name;
        Py_ssize_t m = (Py_ssize_t)strlen(name), j = 0;
        if (i + 1 + m >= n) continue; /* no room for the name and its ';' */
        while (j < m && p[i + 1 + j] == (Py_UCS4)(unsigned char)name[j]) j++;
        if (j == m && p[i + 1 + m] == ';') {
            *ch = ENTITIES[k].ch;
            return m + 2;
        }
    }
    return 0;
}

/* clean_plain(p[0:n]) in C when the segment has no `[` (no external link) and each `&` starts an
 * entity of the table: quote runs, then MARK, then entities, in clean_plain's order, into
 * self->clean. Returns the length, -2 when Python must do it, -1 on error. */
static Py_ssize_t clean_c(Inline *self, const Py_UCS4 *p, Py_ssize_t n) {
    if (grow((void **)&self->clean, &self->capclean, n + 1, sizeof(Py_UCS4)) < 0) return -1;
    Py_UCS4 *out = self->clean;
    Py_ssize_t o = 0;
    for (Py_ssize_t i = 0; i < n;) {
        Py_UCS4 c = p[i];
        if (c == '[') return -2;
        if (c != '\'') {
            out[o++] = c;
            i++;
            continue;
        }
        Py_ssize_t r = 0;
        while (i < n && p[i] == '\'') r++, i++;
        /* _quote: 2 italic, 3 bold, 5 both: nothing; 4: an apostrophe then bold; more: the extra
         * apostrophes, then both */
        Py_ssize_t keep = r == 1 ? 1 : r == 4 ? 1 : r > 5 ? r - 5 : 0;
        while (keep-- > 0) out[o++] = '\'';
    }
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < o; i++)
        if (out[i] != MARK) out[m++] = out[i];
    Py_ssize_t w = 0;
    for (Py_ssize_t i = 0; i < m;) {
        if (out[i] != '&') {
            out[w++] = out[i++];
            continue;
        }
        Py_UCS4 ch;
        Py_ssize_t len = entity_at(out, m, i, &ch);
        if (!len) return -2;
        out[w++] = ch;
        i += len;
    }
    return w;
}

/* add(clean_plain(p[0:n])) */
static int add_plain(Inline *self, const Py_UCS4 *p, Py_ssize_t n) {
    Py_ssize_t s, e;
    if (!needs_clean(p, n)) return add(self, p, n, &s, &e) < 0 ? -1 : 0;
    Py_ssize_t c = clean_c(self, p, n);
    if (c == -1) return -1;
    if (c >= 0) return add(self, self->clean, c, &s, &e) < 0 ? -1 : 0;
    PyObject *seg = str_of(p, n);
    if (!seg) return -1;
    PyObject *clean = PyObject_CallOneArg(self->clean_plain, seg);
    Py_DECREF(seg);
    if (!clean) return -1;
    int rc = add_object(self, clean, &s, &e);
    Py_DECREF(clean);
    return rc < 0 ? -1 : 0;
}

static Py_ssize_t find2(const Py_UCS4 *p, Py_ssize_t from, Py_ssize_t to, Py_UCS4 c) {
    for (Py_ssize_t k = from; k + 1 < to; k++)
        if (p[k] == c && p[k + 1] == c) return k;
    return -1;
}

/* _matching_close: the `]]` closing the `[[` at i, nested links counted; -1 if none. */
static Py_ssize_t matching_close(const Py_UCS4 *p, Py_ssize_t n, Py_ssize_t i) {
    Py_ssize_t depth = 0, k = i;
    while (k + 1 < n) {
        if (p[k] == '[' && p[k + 1] == '[') {
            depth++;
            k += 2;
        } else if (p[k] == ']' && p[k + 1] == ']') {
            depth--;
            if (depth == 0) return k;
            k += 2;
        } else {
            k++;
        }
    }
    return -1;
}

static int inline_object(Inline *self, PyObject *s);

static Py_ssize_t trail_at(Inline *self, PyObject *sobj, const Py_UCS4 *p, Py_ssize_t n, Py_ssize_t after) {
    if (self->trail_mode == TRAIL_NONE) return after;
    if (self->trail_mode == TRAIL_ASCII_LOWER) {
        Py_ssize_t k = after;
        while (k < n && p[k] >= 'a' && p[k] <= 'z') k++;
        return k;
    }
    PyObject *r = PyObject_CallFunction(self->trail, "On", sobj, after);
    if (!r) return -1;
    Py_ssize_t k = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    return k;
}

/* A character of a title that normalisation leaves as it is (wikitext.titles._PLAIN_CHAR). */
static inline int plain_char(Py_UCS4 c) {
    if (Py_UNICODE_ISSPACE(c)) return 0;
    switch (c) {
    case '&': case '%': case '_': case ':': case '#': case '<': case '>': case '[': case ']': case '{': case '}':
    case '|': case 0xfffd: case 0xa0: case 0x1680: case 0x180e: case 0x205f: case 0x3000:
        return 0;
    }
    return !((c >= 0x2000 && c <= 0x200f) || (c >= 0x2028 && c <= 0x202f));
}

/* A character of a `#section` the shortcut accepts (wikitext.titles._PLAIN_TARGET). */
static inline int fragment_char(Py_UCS4 c) {
    switch (c) {
    case '&': case '%': case '<': case '>': case '[': case ']': case '{': case '}': case '|': case '\n': case '\r':
    case '\t': case 0xfffd:
        return 0;
    }
    return 1;
}

/* classify_target's shortcut (wikitext.titles._PLAIN_TARGET) for t[0:n]: words of plain characters
 * separated by single spaces or underscores, then maybe ` #section`. The _Classified of the article
 * it links to (a new reference); NULL without an error when the target is not that plain. */
static PyObject *classify_plain(Inline *self, const Py_UCS4 *t, Py_ssize_t n) {
    Py_ssize_t i = 0;
    if (n == 0 || !plain_char(t[0])) return NULL;
    for (;;) {
        while (i < n && plain_char(t[i])) i++;
        if (i + 1 < n && (t[i] == ' ' || t[i] == '_') && plain_char(t[i + 1])) {
            i++;
            continue;
        }
        break;
    }
    Py_ssize_t title_end = i;
    if (i < n) {
        if (t[i] == ' ') i++;
        if (i >= n || t[i] != '#') return NULL;
        for (i++; i < n; i++)
            if (!fragment_char(t[i])) return NULL;
    }
    if (grow((void **)&self->clean, &self->capclean, title_end + 1, sizeof(Py_UCS4)) < 0) return NULL;
    Py_UCS4 *title = self->clean;
    for (Py_ssize_t k = 0; k < title_end; k++) title[k] = t[k] == '_' ? ' ' : t[k];
    if (self->first_letter) { /* ucfirst: the first character upper-cased when that keeps it one */
        Py_UCS4 c = title[0];
        if (c >= 'a' && c <= 'z') {
            title[0] = c - 'a' + 'A';
        } else if (c >= 0x80) {
            PyObject *ch = PyUnicode_FromOrdinal((int)c), *up = ch ? PyObject_CallMethod(ch, "upper", NULL) : NULL;
            Py_XDECREF(ch);
            if (!up) return NULL;
            if (PyUnicode_GET_LENGTH(up) == 1) title[0] = PyUnicode_READ_CHAR(up, 0);
            Py_DECREF(up);
        }
    }
    PyObject *text = str_of(title, title_end);
    if (!text) return NULL;
    Py_INCREF(self->article_key);
    Py_INCREF(Py_False);
    Py_INCREF(Py_True);
    Py_INCREF(Py_False);
    PyObject *items[5] = {text, self->article_key, Py_False, Py_True, Py_False};
    return tuple_of(self->classified_type, items, 5);
}

/* RenderConfig.classify(raw): the cached _Classified of a target (a new reference), or NULL. A plain
 * title is classified here and cached as RenderConfig.classify caches (cleared past its limit). */
static PyObject *classified(Inline *self, PyObject *raw, const Py_UCS4 *t, Py_ssize_t n) {
    PyObject *found = PyDict_GetItemWithError(self->targets, raw);
    if (found) {
        Py_INCREF(found);
    } else {
        if (PyErr_Occurred()) return NULL;
        found = t ? classify_plain(self, t, n) : NULL;
        if (found) {
            if (PyDict_GET_SIZE(self->targets) > self->cache_limit) PyDict_Clear(self->targets);
            if (PyDict_SetItem(self->targets, raw, found) < 0) {
                Py_DECREF(found);
                return NULL;
            }
        } else {
            if (PyErr_Occurred()) return NULL;
            found = PyObject_CallOneArg(self->classify, raw);
            if (!found) return NULL;
        }
    }
    if (!PyTuple_Check(found) || PyTuple_GET_SIZE(found) < 5 || !PyUnicode_Check(PyTuple_GET_ITEM(found, 0))) {
        PyErr_SetString(PyExc_TypeError, "classify must return a _Classified");
        Py_DECREF(found);
        return NULL;
    }
    return found;
}

/* _Renderer.link: render `[[p[a:j]]]`; returns where the text after it continues, or -1. */
static Py_ssize_t render_link(Inline *self, PyObject *sobj, const Py_UCS4 *p, Py_ssize_t n, Py_ssize_t a, Py_ssize_t j) {
    Py_ssize_t after = j + 2, pipe = -1;
    for (Py_ssize_t k = a; k < j; k++)
        if (p[k] == '|') {
            pipe = k;
            break;
        }
    Py_ssize_t tend = pipe < 0 ? j : pipe;
    /* the target as written, MARK removed */
    Py_UCS4 *raw = NULL;
    Py_ssize_t rawn = 0;
    int marked = 0;
    for (Py_ssize_t k = a; k < tend; k++)
        if (p[k] == MARK) {
            marked = 1;
            break;
        }
    const Py_UCS4 *t = p + a;
    Py_ssize_t tn = tend - a;
    if (marked) {
        raw = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(tn ? tn : 1));
        if (!raw) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t k = 0; k < tn; k++)
            if (t[k] != MARK) raw[rawn++] = t[k];
        t = raw;
        tn = rawn;
    }
    Py_ssize_t result = -1;
    PyObject *target_raw = str_of(t, tn), *found = NULL, *target_stripped = NULL, *title = NULL;
    if (!target_raw) goto done;
    found = classified(self, target_raw, t, tn);
    if (!found) goto done;
    if (count_key(self, PyTuple_GET_ITEM(found, 1)) < 0) goto done;
    int hidden = PyObject_IsTrue(PyTuple_GET_ITEM(found, 2));
    int article = PyObject_IsTrue(PyTuple_GET_ITEM(found, 3));
    int invalid = PyObject_IsTrue(PyTuple_GET_ITEM(found, 4));
    if (hidden < 0 || article < 0 || invalid < 0) goto done;
    if (hidden) {
        result = after;
        goto done;
    }
    Py_ssize_t s0, e0;
    if (invalid) {
        static const Py_UCS4 open2[2] = {'[', '['}, close2[2] = {']', ']'};
        PyObject *inner = str_of(p + a, j - a);
        if (!inner) goto done;
        int rc = add(self, open2, 2, &s0, &e0) < 0 ? -1 : inline_object(self, inner);
        Py_DECREF(inner);
        if (rc < 0 || add(self, close2, 2, &s0, &e0) < 0) goto done;
        result = after;
        goto done;
    }
    /* the label: the stripped target without leading colons, or what follows the pipe */
    const Py_UCS4 *lp;
    Py_ssize_t ln;
    Py_ssize_t ts = 0, te = tn;
    while (ts < te && Py_UNICODE_ISSPACE(t[ts])) ts++;
    while (te > ts && Py_UNICODE_ISSPACE(t[te - 1])) te--;
    if (pipe < 0) {
        Py_ssize_t ls = ts;
        while (ls < te && t[ls] == ':') ls++;
        lp = t + ls;
        ln = te - ls;
    } else {
        lp = p + pipe + 1;
        ln = j - pipe - 1;
    }
    Py_ssize_t tr = trail_at(self, sobj, p, n, after);
    if (tr < 0) goto done;
    /* shown = flatten(label) + trail */
    PyObject *flat = NULL;
    const Py_UCS4 *fp = lp;
    Py_ssize_t fn = ln;
    Py_UCS4 *fcopy = NULL;
    Py_ssize_t cn = -2;
    if (needs_clean(lp, ln) && find2(lp, 0, ln, '[') < 0) {
        cn = clean_c(self, lp, ln);
        if (cn == -1) goto done;
        if (cn >= 0) {
            fp = self->clean;
            fn = cn;
        }
    }
    if (cn == -2 && needs_clean(lp, ln)) {
        PyObject *label = str_of(lp, ln);
        if (!label) goto done;
        flat = PyObject_CallOneArg(find2(lp, 0, ln, '[') >= 0 ? self->flatten : self->clean_plain, label);
        Py_DECREF(label);
        if (!flat) goto done;
        fcopy = ucs4(flat, &fn);
        Py_DECREF(flat);
        if (!fcopy) goto done;
        fp = fcopy;
    }
    Py_ssize_t trn = tr - after;
    if (grow((void **)&self->scratch, &self->capscratch, fn + trn + 1, sizeof(Py_UCS4)) < 0) {
        PyMem_Free(fcopy);
        goto done;
    }
    memcpy(self->scratch, fp, sizeof(Py_UCS4) * (size_t)fn);
    memcpy(self->scratch + fn, p + after, sizeof(Py_UCS4) * (size_t)trn);
    PyMem_Free(fcopy);
    int got = add(self, self->scratch, fn + trn, &s0, &e0);
    if (got < 0) goto done;
    if (!article) {
        result = tr;
        goto done;
    }
    if (!got) {
        if (count_key(self, EMPTY_ANCHOR_KEY) < 0) goto done;
        result = tr;
        goto done;
    }
    target_stripped = str_of(t + ts, te - ts);
    if (!target_stripped) goto done;
    title = PyTuple_GET_ITEM(found, 0);
    Py_INCREF(title);
    if (grow((void **)&self->spans, &self->capspans, self->nspans + 1, sizeof(Span)) < 0) goto done;
    Span *sp = &self->spans[self->nspans++];
    sp->target = target_stripped;
    sp->title = title;
    target_stripped = title = NULL; /* owned by the span now */
    sp->start = s0;
    sp->end = e0;
    sp->paragraph = self->nstarts - 1;
    result = tr;
done:
    Py_XDECREF(target_stripped);
    Py_XDECREF(title);
    Py_XDECREF(found);
    Py_XDECREF(target_raw);
    PyMem_Free(raw);
    return result;
}

/* _Renderer.inline on p[0:n] (sobj: the same text as a str, for callbacks). */
static int inline_ucs4(Inline *self, PyObject *sobj, const Py_UCS4 *p, Py_ssize_t n) {
    Py_ssize_t pos = 0;
    for (;;) {
        Py_ssize_t i = find2(p, pos, n, '[');
        if (i < 0) break;
        Py_ssize_t j = find2(p, i + 2, n, ']');
        if (j >= 0 && find2(p, i + 2, j, '[') >= 0) j = matching_close(p, n, i);
        if (j < 0) { /* an unclosed `[[` is literal text */
            if (add_plain(self, p + pos, i + 2 - pos) < 0) return -1;
            pos = i + 2;
            continue;
        }
        if (i > pos && add_plain(self, p + pos, i - pos) < 0) return -1;
        pos = render_link(self, sobj, p, n, i + 2, j);
        if (pos < 0) return -1;
    }
    return add_plain(self, p + pos, n - pos);
}

static int has_link_and_colon(const Py_UCS4 *p, Py_ssize_t n) {
    if (find2(p, 0, n, '[') < 0) return 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (p[k] == ':') return 1;
    return 0;
}

/* _Renderer.inline on p[0:n]: external links around wikilinks rewritten first (by the Python
 * regex, when the text holds `[[` and `:`); the text as a str only where a callback needs it. */
static int inline_buf(Inline *self, const Py_UCS4 *p, Py_ssize_t n) {
    if (!has_link_and_colon(p, n) && self->trail_mode != TRAIL_CALL) return inline_ucs4(self, NULL, p, n);
    PyObject *s = str_of(p, n);
    if (!s) return -1;
    if (has_link_and_colon(p, n)) {
        PyObject *t = PyObject_CallOneArg(self->around, s);
        Py_DECREF(s);
        if (!t) return -1;
        s = t;
        Py_ssize_t m;
        Py_UCS4 *q = ucs4(s, &m);
        if (!q) {
            Py_DECREF(s);
            return -1;
        }
        int rc = inline_ucs4(self, s, q, m);
        PyMem_Free(q);
        Py_DECREF(s);
        return rc;
    }
    int rc = inline_ucs4(self, s, p, n);
    Py_DECREF(s);
    return rc;
}

static int inline_object(Inline *self, PyObject *s) {
    Py_ssize_t n;
    Py_UCS4 *p = ucs4(s, &n);
    if (!p) return -1;
    int rc = inline_buf(self, p, n);
    PyMem_Free(p);
    return rc;
}

/* _Renderer._paragraph: p[0:n] as a paragraph of its own. */
static int paragraph_buf(Inline *self, const Py_UCS4 *p, Py_ssize_t n) {
    self->open = 0;
    self->pending = 0;
    int rc = inline_buf(self, p, n);
    self->open = 0;
    self->pending = 0;
    return rc;
}

/* str.strip() bounds of p[*a:*b] (Unicode whitespace, as Python strips). */
static inline void strip_ws(const Py_UCS4 *p, Py_ssize_t *a, Py_ssize_t *b) {
    while (*a < *b && Py_UNICODE_ISSPACE(p[*a])) (*a)++;
    while (*b > *a && Py_UNICODE_ISSPACE(p[*b - 1])) (*b)--;
}

typedef struct {
    Py_UCS4 *buf;
    Py_ssize_t len, cap, lines;
} Block;

static int block_append(Block *blk, const Py_UCS4 *p, Py_ssize_t n) {
    if (grow((void **)&blk->buf, &blk->cap, blk->len + n + 1, sizeof(Py_UCS4)) < 0) return -1;
    if (blk->lines++) blk->buf[blk->len++] = '\n'; /* "\n".join(block) */
    memcpy(blk->buf + blk->len, p, sizeof(Py_UCS4) * (size_t)n);
    blk->len += n;
    return 0;
}

static int block_flush(Inline *self, Block *blk) {
    if (!blk->lines) return 0;
    int rc = paragraph_buf(self, blk->buf, blk->len);
    blk->len = blk->lines = 0;
    return rc;
}

/* wikitext._PREFIXED_LINK `\[\[([^\[\]{}|\n]*:[^\[\]{}|\n]*)(?:\||\]\])` searched from `from`:
 * the start of the leftmost match (its group in *gs, *ge), or -1. The group can only be the whole
 * run of allowed characters after `[[`, so a match is that run holding a colon and ending at `|`
 * or `]]`. */
static Py_ssize_t search_prefixed(const Py_UCS4 *p, Py_ssize_t n, Py_ssize_t from, Py_ssize_t *gs, Py_ssize_t *ge) {
    for (Py_ssize_t k = from; k + 1 < n; k++) {
        if (p[k] != '[' || p[k + 1] != '[') continue;
        Py_ssize_t e = k + 2;
        int colon = 0;
        for (; e < n; e++) {
            Py_UCS4 c = p[e];
            if (c == '[' || c == ']' || c == '{' || c == '}' || c == '|' || c == '\n') break;
            colon |= c == ':';
        }
        if (colon && e < n && (p[e] == '|' || (p[e] == ']' && e + 1 < n && p[e + 1] == ']'))) {
            *gs = k + 2;
            *ge = e;
            return k;
        }
    }
    return -1;
}

/* _Renderer._drop_hidden_links on p[0:n] into blk->buf: files, categories and interlanguage links
 * cut out whole (nested brackets counted), each leaving MARK. */
static int drop_hidden(Inline *self, const Py_UCS4 *p, Py_ssize_t n, Block *blk) {
    Py_ssize_t pos = 0, gs, ge;
    blk->len = 0;
    Py_ssize_t k = search_prefixed(p, n, 0, &gs, &ge);
    while (k >= 0) {
        PyObject *raw = str_of(p + gs, ge - gs);
        if (!raw) return -1;
        PyObject *found = classified(self, raw, NULL, 0); /* a colon: never plain */
        Py_DECREF(raw);
        if (!found) return -1;
        int hidden = PyObject_IsTrue(PyTuple_GET_ITEM(found, 2));
        Py_ssize_t end = hidden > 0 ? matching_close(p, n, k) : -1;
        if (hidden < 0 || (end >= 0 && count_key(self, PyTuple_GET_ITEM(found, 1)) < 0)) {
            Py_DECREF(found);
            return -1;
        }
        Py_DECREF(found);
        if (end < 0) { /* not hidden, or never closed (then MediaWiki shows it as text) */
            k = search_prefixed(p, n, k + 2, &gs, &ge);
            continue;
        }
        if (grow((void **)&blk->buf, &blk->cap, blk->len + (k - pos) + 1, sizeof(Py_UCS4)) < 0) return -1;
        memcpy(blk->buf + blk->len, p + pos, sizeof(Py_UCS4) * (size_t)(k - pos));
        blk->len += k - pos;
        blk->buf[blk->len++] = MARK;
        pos = end + 2;
        k = search_prefixed(p, n, pos, &gs, &ge);
    }
    if (grow((void **)&blk->buf, &blk->cap, blk->len + (n - pos) + 1, sizeof(Py_UCS4)) < 0) return -1;
    memcpy(blk->buf + blk->len, p + pos, sizeof(Py_UCS4) * (size_t)(n - pos));
    blk->len += n - pos;
    return 0;
}

/* The block loop of _Renderer.render on p[0:n]: a heading, a list item, or a run of consecutive
 * plain lines is a paragraph; `----` rules end a run and keep what follows them. */
static int blocks(Inline *self, const Py_UCS4 *p, Py_ssize_t n) {
    Block blk = {NULL, 0, 0, 0};
    int rc = 0;
    for (Py_ssize_t ls = 0; ls <= n && rc == 0;) {
        Py_ssize_t le = ls;
        while (le < n && p[le] != '\n') le++;
        Py_ssize_t a = ls, b = le, next = le + 1;
        strip_ws(p, &a, &b);
        if (a == b) {
            rc = block_flush(self, &blk);
        } else if (p[a] == '=') {
            /* _HEADING `^(=+)(.+?)(=+)$` on the stripped line: the leading run takes as many `=`
             * as leave a character for the title, the lazy title leaves the trailing run */
            Py_ssize_t len = b - a, lead = 0, trail = 0;
            while (lead < len && p[a + lead] == '=') lead++;
            while (trail < len && p[b - 1 - trail] == '=') trail++;
            if (len >= 3 && trail >= 1) {
                Py_ssize_t g1 = lead < len - 2 ? lead : len - 2;
                Py_ssize_t g3 = len - g1 - 1 < trail ? len - g1 - 1 : trail;
                Py_ssize_t k = g1 < g3 ? g1 : g3, ha = a + k, hb = b - k;
                strip_ws(p, &ha, &hb);
                rc = block_flush(self, &blk);
                if (rc == 0) rc = paragraph_buf(self, p + ha, hb - ha);
            } else {
                rc = block_append(&blk, p + ls, le - ls);
            }
        } else if (p[a] == '*' || p[a] == '#' || p[a] == ':' || p[a] == ';') {
            Py_ssize_t ia = a, ib = b;
            while (ia < ib && (p[ia] == '*' || p[ia] == '#' || p[ia] == ':' || p[ia] == ';')) ia++;
            strip_ws(p, &ia, &ib);
            rc = block_flush(self, &blk);
            if (rc == 0) rc = paragraph_buf(self, p + ia, ib - ia);
        } else if (b - a >= 4 && p[a] == '-' && p[a + 1] == '-' && p[a + 2] == '-' && p[a + 3] == '-') {
            Py_ssize_t ra = a, rb = b;
            while (ra < rb && p[ra] == '-') ra++;
            strip_ws(p, &ra, &rb);
            rc = block_flush(self, &blk);
            if (rc == 0 && rb > ra) rc = block_append(&blk, p + ra, rb - ra);
        } else {
            rc = block_append(&blk, p + ls, le - ls);
        }
        ls = next;
    }
    if (rc == 0) rc = block_flush(self, &blk);
    PyMem_Free(blk.buf);
    return rc;
}

/* --- the Python type -------------------------------------------------------------------------- */

static int Inline_init(Inline *self, PyObject *args, PyObject *kwds) {
    PyObject *targets, *classify, *clean_plain, *flatten, *around, *trail, *counts, *link_type, *classified_type;
    PyObject *article_key;
    int mode, first_letter;
    Py_ssize_t cache_limit;
    if (kwds && PyDict_GET_SIZE(kwds)) { /* positional only: a keyword would be silently ignored */
        PyErr_SetString(PyExc_TypeError, "Inline() takes no keyword arguments");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "O!OOOOiOO!O!O!Upn", &PyDict_Type, &targets, &classify, &clean_plain, &flatten, &around,
                          &mode, &trail, &PyDict_Type, &counts, &PyType_Type, &link_type, &PyType_Type,
                          &classified_type, &article_key, &first_letter, &cache_limit))
        return -1;
    if (mode < TRAIL_NONE || mode > TRAIL_CALL) {
        PyErr_SetString(PyExc_ValueError, "unknown trail mode");
        return -1;
    }
    if (!PyType_IsSubtype((PyTypeObject *)link_type, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)classified_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "link_type and classified_type must be tuple subclasses");
        return -1;
    }
    PyObject **slots[] = {&self->targets, &self->classify, &self->clean_plain, &self->flatten,
                          &self->around,  &self->trail,    &self->counts,      &self->article_key};
    PyObject *values[] = {targets, classify, clean_plain, flatten, around, trail, counts, article_key};
    for (size_t k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
        Py_INCREF(values[k]);
        Py_XSETREF(*slots[k], values[k]);
    }
    Py_INCREF(link_type);
    Py_XSETREF(self->link_type, (PyTypeObject *)link_type);
    Py_INCREF(classified_type);
    Py_XSETREF(self->classified_type, (PyTypeObject *)classified_type);
    self->trail_mode = mode;
    self->first_letter = first_letter;
    self->cache_limit = cache_limit;
    return 0;
}

static void clear_spans(Inline *self) {
    for (Py_ssize_t k = 0; k < self->nspans; k++) {
        Py_DECREF(self->spans[k].target);
        Py_DECREF(self->spans[k].title);
    }
    self->nspans = 0;
}

static void Inline_dealloc(Inline *self) {
    clear_spans(self);
    Py_XDECREF(self->targets);
    Py_XDECREF(self->classify);
    Py_XDECREF(self->clean_plain);
    Py_XDECREF(self->flatten);
    Py_XDECREF(self->around);
    Py_XDECREF(self->trail);
    Py_XDECREF(self->counts);
    Py_XDECREF(self->link_type);
    Py_XDECREF(self->classified_type);
    Py_XDECREF(self->article_key);
    PyMem_Free(self->buf);
    PyMem_Free(self->starts);
    PyMem_Free(self->spans);
    PyMem_Free(self->scratch);
    PyMem_Free(self->clean);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(paragraph_doc, "paragraph(text): render one paragraph's inline markup (a paragraph of its own).");

static PyObject *Inline_paragraph(Inline *self, PyObject *text) {
    Py_ssize_t n;
    Py_UCS4 *p = ucs4(text, &n);
    if (!p) return NULL;
    int rc = paragraph_buf(self, p, n);
    PyMem_Free(p);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(blocks_doc, "blocks(text): render a page's preprocessed text: hidden links dropped, then "
                         "block by block (_Renderer.render after preprocess).");

static PyObject *Inline_blocks(Inline *self, PyObject *text) {
    Py_ssize_t n;
    Py_UCS4 *p = ucs4(text, &n);
    if (!p) return NULL;
    Block dropped = {NULL, 0, 0, 0};
    int rc = drop_hidden(self, p, n, &dropped);
    PyMem_Free(p);
    if (rc == 0) rc = blocks(self, dropped.buf, dropped.len);
    PyMem_Free(dropped.buf);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(result_doc, "result() -> (text, paragraph_starts, links): the page rendered so far.");

static PyObject *Inline_result(Inline *self, PyObject *Py_UNUSED(ignored)) {
    PyObject *text = str_of(self->buf, self->len), *starts = NULL, *links = NULL;
    if (!text) return NULL;
    starts = PyList_New(self->nstarts);
    if (!starts) goto fail;
    for (Py_ssize_t k = 0; k < self->nstarts; k++) {
        PyObject *v = PyLong_FromSsize_t(self->starts[k]);
        if (!v) goto fail;
        PyList_SET_ITEM(starts, k, v);
    }
    links = PyList_New(self->nspans);
    if (!links) goto fail;
    for (Py_ssize_t k = 0; k < self->nspans; k++) {
        Span *sp = &self->spans[k];
        Py_INCREF(sp->target);
        Py_INCREF(sp->title);
        PyObject *items[6] = {sp->target, sp->title, PyUnicode_Substring(text, sp->start, sp->end),
                              PyLong_FromSsize_t(sp->start), PyLong_FromSsize_t(sp->end),
                              PyLong_FromSsize_t(sp->paragraph)};
        PyObject *item = tuple_of(self->link_type, items, 6); /* Link(target, …, paragraph) */
        if (!item) goto fail;
        PyList_SET_ITEM(links, k, item);
    }
    return Py_BuildValue("(NNN)", text, starts, links);
fail:
    Py_XDECREF(text);
    Py_XDECREF(starts);
    Py_XDECREF(links);
    return NULL;
}

static PyMethodDef Inline_methods[] = {
    {"paragraph", (PyCFunction)Inline_paragraph, METH_O, paragraph_doc},
    {"blocks", (PyCFunction)Inline_blocks, METH_O, blocks_doc},
    {"result", (PyCFunction)Inline_result, METH_NOARGS, result_doc},
    {NULL, NULL, 0, NULL}};

static PyTypeObject InlineType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "entbench._wtrender.Inline",
    .tp_basicsize = sizeof(Inline),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Inline(targets, classify, clean_plain, flatten, around, trail_mode, trail, counts, link_type, "
              "classified_type, article_key, first_letter, cache_limit): "
              "one page's inline renderer (see wtrender.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Inline_init,
    .tp_dealloc = (destructor)Inline_dealloc,
    .tp_methods = Inline_methods,
};

/* --- template_spans (wikitext.markup.template_spans) ------------------------------------------ */

typedef struct {
    Py_ssize_t start, end;
} Pair;

static int pair_cmp(const void *a, const void *b) {
    const Pair *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

PyDoc_STRVAR(template_spans_doc, "template_spans(text) -> [(start, end)]: wikitext.markup.template_spans in C.");

static PyObject *py_template_spans(PyObject *Py_UNUSED(module), PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "expected str");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Pair *stack = NULL, *spans = NULL; /* stack: (first still-open brace, open braces left) */
    Py_ssize_t nstack = 0, capstack = 0, nspans = 0, capspans = 0;
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < n;) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c != '{' && c != '}') {
            i++;
            continue;
        }
        Py_ssize_t run_start = i;
        while (i < n && PyUnicode_READ(kind, data, i) == c) i++;
        Py_ssize_t run_end = i, len = run_end - run_start;
        if (len < 2) continue; /* a single brace is text */
        if (c == '{') {
            if (grow((void **)&stack, &capstack, nstack + 1, sizeof(Pair)) < 0) goto fail;
            stack[nstack].start = run_start;
            stack[nstack].end = len;
            nstack++;
            continue;
        }
        while (len >= 2 && nstack) {
            Pair *top = &stack[nstack - 1];
            if (top->end < 2) { /* a single leftover brace is literal */
                nstack--;
                continue;
            }
            Py_ssize_t k = (top->end >= 3 && len >= 3) ? 3 : 2;
            top->end -= k;
            len -= k;
            if (grow((void **)&spans, &capspans, nspans + 1, sizeof(Pair)) < 0) goto fail;
            spans[nspans].start = top->start + top->end;
            spans[nspans].end = run_end - len;
            nspans++;
            if (top->end < 2) nstack--;
        }
    }
    /* _merge: sorted, nested spans folded into the outermost (adjacent ones stay apart) */
    if (nspans) qsort(spans, (size_t)nspans, sizeof(Pair), pair_cmp);
    Py_ssize_t m = 0;
    for (Py_ssize_t k = 0; k < nspans; k++) {
        if (m && spans[k].start < spans[m - 1].end) {
            if (spans[k].end > spans[m - 1].end) spans[m - 1].end = spans[k].end;
        } else {
            spans[m++] = spans[k];
        }
    }
    result = PyList_New(m);
    if (!result) goto fail;
    for (Py_ssize_t k = 0; k < m; k++) {
        PyObject *t = Py_BuildValue("(nn)", spans[k].start, spans[k].end);
        if (!t) {
            Py_CLEAR(result);
            goto fail;
        }
        PyList_SET_ITEM(result, k, t);
    }
fail:
    PyMem_Free(stack);
    PyMem_Free(spans);
    return result;
}

/* --- template_names (wikitext.markup.template_names) ------------------------------------------ */

static inline int name_char(Py_UCS4 c) { return c != '{' && c != '}' && c != '|' && c != '\n'; }

/* The end of a `|` or `}}` at q, or -1. */
static inline Py_ssize_t terminator(int kind, const void *data, Py_ssize_t n, Py_ssize_t q) {
    if (q < n && PyUnicode_READ(kind, data, q) == '|') return q + 1;
    if (q + 1 < n && PyUnicode_READ(kind, data, q) == '}' && PyUnicode_READ(kind, data, q + 1) == '}') return q + 2;
    return -1;
}

PyDoc_STRVAR(template_names_doc, "template_names(text) -> [name]: wikitext.markup.template_names in C.");

/* findall of `\{\{\s*([^{}|\n]+?)\s*(?:\||\}\})`, worked out: after `{{` and its spaces, the name is
 * the run of name characters up to its last non-space (the lazy group stops there, as the spaces
 * after it and a terminator must follow); when a terminator comes right after the spaces, the
 * regex backtracks into them and the name is the last space before it that is not a line break. */
static PyObject *py_template_names(PyObject *Py_UNUSED(module), PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "expected str");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    PyObject *names = PyList_New(0);
    if (!names) return NULL;
    Py_ssize_t pos = 0;
    while (pos + 1 < n) {
        pos = PyUnicode_FindChar(text, '{', pos, n - 1, 1); /* memchr-fast to the next candidate */
        if (pos == -2) {
            Py_DECREF(names);
            return NULL;
        }
        if (pos < 0) break;
        if (PyUnicode_READ(kind, data, pos + 1) != '{') {
            pos++;
            continue;
        }
        Py_ssize_t a = pos + 2;
        while (a < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, a))) a++;
        Py_ssize_t gs = -1, ge = -1, end = -1;
        if (a < n && name_char(PyUnicode_READ(kind, data, a))) {
            Py_ssize_t r = a, last = a;
            while (r < n && name_char(PyUnicode_READ(kind, data, r))) {
                if (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, r))) last = r;
                r++;
            }
            Py_ssize_t q = last + 1;
            while (q < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, q))) q++;
            end = terminator(kind, data, n, q);
            gs = a;
            ge = last + 1;
        } else {
            end = terminator(kind, data, n, a);
            Py_ssize_t s = a - 1;
            while (s >= pos + 2 && PyUnicode_READ(kind, data, s) == '\n') s--;
            if (s < pos + 2) end = -1;
            gs = s;
            ge = s + 1;
        }
        if (end < 0) {
            pos++;
            continue;
        }
        PyObject *name = PyUnicode_Substring(text, gs, ge);
        if (!name || PyList_Append(names, name) < 0) {
            Py_XDECREF(name);
            Py_DECREF(names);
            return NULL;
        }
        Py_DECREF(name);
        pos = end;
    }
    return names;
}

static PyMethodDef module_methods[] = {
    {"template_spans", (PyCFunction)py_template_spans, METH_O, template_spans_doc},
    {"template_names", (PyCFunction)py_template_names, METH_O, template_names_doc},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wtrender",
                                    "Native inline rendering of wikitext (see wtrender.c).", -1, module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__wtrender(void) {
    if (PyType_Ready(&InlineType) < 0) return NULL;
    EMPTY_ANCHOR_KEY = PyUnicode_InternFromString("links_empty_anchor");
    if (!EMPTY_ANCHOR_KEY) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *entities = PyDict_New();
    for (size_t k = 0; entities && k < N_ENTITIES; k++) {
        PyObject *ch = PyUnicode_FromOrdinal((int)ENTITIES[k].ch);
        if (!ch || PyDict_SetItemString(entities, ENTITIES[k].name, ch) < 0) Py_CLEAR(entities);
        Py_XDECREF(ch);
    }
    if (!entities || PyModule_AddObject(m, "ENTITIES", entities) < 0) {
        Py_XDECREF(entities);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&InlineType);
    if (PyModule_AddObject(m, "Inline", (PyObject *)&InlineType) < 0 || PyModule_AddIntConstant(m, "ABI", ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
