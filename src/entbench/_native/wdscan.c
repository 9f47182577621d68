/*
 * entbench._wdscan: Wikidata entity lines -> Arrow column buffers, without Python objects.
 *
 * Why this exists: msgspec decodes a line in C, but every statement, snak and value still becomes a
 * Python object that the row builder then takes apart again; together they cost about three times
 * the decode alone (bench/results). This scanner reads the JSON once and appends each value straight
 * to a column buffer (Arrow layout: int32 offsets + UTF-8 data + validity bitmap).
 *
 * It is a fast path, not a second implementation of the rules: it accepts only lines it fully
 * understands (well-formed, valid UTF-8, expected types, no duplicate keys, no redirects, wrappers
 * or unknown datavalue types) and hands every other line back untouched, to be decoded by the
 * Python path (readers/wikidata_entities.py), which stays the reference for every quirk. A line
 * is all-or-nothing: on a fallback every column is truncated back to where the line started.
 * Tests compare both paths on every real fixture dump and on generated quirky lines.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define OK 0
#define BAIL (-1)
#define MAX_DEPTH 200

/* ---- growable buffers and columns ---------------------------------------------------------- */
/* A failed allocation makes the line bail like anything else the scanner does not take; `oom` tells
 * the two apart, so that running out of memory raises MemoryError instead of handing lines to the
 * reference path. It points at the owning scanner's flag: a scan (GIL released) writes only the
 * flags of its own scanners, so scans on other threads can neither see nor clear it. */
typedef struct {
    char *p;
    size_t len, cap;
    int *oom;
} Buf;

static int buf_reserve(Buf *b, size_t extra) {
    size_t need = b->len + extra;
    if (need <= b->cap) return OK;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        *b->oom = 1;
        return BAIL;
    }
    b->p = p;
    b->cap = cap;
    return OK;
}

static void buf_free(Buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

typedef struct {
    Buf off;   /* int32 offsets, n + 1 entries */
    Buf data;  /* UTF-8 bytes */
    Buf valid; /* validity bitmap, LSB first */
    int64_t n;
} StrCol;

typedef struct {
    Buf data;
    Buf valid;
    int64_t n;
    int width;
} NumCol;

static int bit_push(Buf *valid, int64_t n, int is_valid) {
    if ((n & 7) == 0) {
        if (buf_reserve(valid, 1)) return BAIL;
        valid->p[valid->len++] = 0;
    }
    if (is_valid) valid->p[n >> 3] |= (char)(1u << (n & 7));
    return OK;
}

static void bit_truncate(Buf *valid, int64_t n) {
    valid->len = (size_t)((n + 7) >> 3);
    if (n & 7) valid->p[n >> 3] &= (char)((1u << (n & 7)) - 1);
}

static int str_init(StrCol *c, int *oom) {
    memset(c, 0, sizeof(*c));
    c->off.oom = c->data.oom = c->valid.oom = oom;
    if (buf_reserve(&c->off, 4)) return BAIL;
    memset(c->off.p, 0, 4);
    c->off.len = 4;
    return OK;
}

static int str_finish_row(StrCol *c, int is_valid) {
    if (c->data.len > INT32_MAX) return BAIL; /* a block never holds 2 GB of one column */
    if (buf_reserve(&c->off, 4)) return BAIL;
    int32_t end = (int32_t)c->data.len;
    memcpy(c->off.p + c->off.len, &end, 4);
    c->off.len += 4;
    if (bit_push(&c->valid, c->n, is_valid)) return BAIL;
    c->n++;
    return OK;
}

static int str_push(StrCol *c, const char *s, size_t len) {
    if (len) { /* an empty string: `s` and a column that never held data may be NULL, not to memcpy */
        if (buf_reserve(&c->data, len)) return BAIL;
        memcpy(c->data.p + c->data.len, s, len);
        c->data.len += len;
    }
    return str_finish_row(c, 1);
}

static int str_push_null(StrCol *c) { return str_finish_row(c, 0); }

static void str_truncate(StrCol *c, int64_t n) {
    if (n >= c->n) return;
    int32_t end;
    memcpy(&end, c->off.p + 4 * n, 4);
    c->data.len = (size_t)end;
    c->off.len = (size_t)(4 * (n + 1));
    bit_truncate(&c->valid, n);
    c->n = n;
}

/* The last row's bytes (valid rows only); used to read back a just-parsed main snak's item. */
static int str_last(const StrCol *c, const char **s, size_t *len) {
    if (c->n == 0) return 0;
    int64_t i = c->n - 1;
    if (!((c->valid.p[i >> 3] >> (i & 7)) & 1)) return 0;
    int32_t a, b;
    memcpy(&a, c->off.p + 4 * i, 4);
    memcpy(&b, c->off.p + 4 * (i + 1), 4);
    *s = c->data.p + a;
    *len = (size_t)(b - a);
    return 1;
}

static void num_init(NumCol *c, int width, int *oom) {
    memset(c, 0, sizeof(*c));
    c->data.oom = c->valid.oom = oom;
    c->width = width;
}

static int num_push(NumCol *c, const void *value, int is_valid) {
    if (buf_reserve(&c->data, (size_t)c->width)) return BAIL;
    if (is_valid)
        memcpy(c->data.p + c->data.len, value, (size_t)c->width);
    else
        memset(c->data.p + c->data.len, 0, (size_t)c->width);
    c->data.len += (size_t)c->width;
    if (bit_push(&c->valid, c->n, is_valid)) return BAIL;
    c->n++;
    return OK;
}

static int push_i32(NumCol *c, int32_t v) { return num_push(c, &v, 1); }
static int push_i64(NumCol *c, int64_t v, int is_valid) { return num_push(c, &v, is_valid); }

static void num_truncate(NumCol *c, int64_t n) {
    if (n >= c->n) return;
    c->data.len = (size_t)(n * c->width);
    bit_truncate(&c->valid, n);
    c->n = n;
}

/* ---- the columns of one scan ------------------------------------------------------------------ */
enum {
    S_SNAKTYPE,
    S_DATATYPE,
    S_VALUE_TYPE,
    S_ITEM,
    S_STRING,
    S_TIME,
    S_TIME_CAL,
    S_AMOUNT,
    S_UNIT,
    S_LOWER,
    S_UPPER,
    S_GLOBE,
    S_TEXT,
    S_TEXT_LANG,
    N_SNAK_STR
};
static const char *SNAK_STR_NAMES[N_SNAK_STR] = {
    "snaktype", "datatype", "value_type", "item", "string_value", "time", "time_calendar",
    "amount", "unit", "lower_bound", "upper_bound", "globe", "text", "text_language"};

typedef struct {
    StrCol s[N_SNAK_STR];
    NumCol precision; /* int8 */
    NumCol lat, lon, cprec; /* float64 */
} SnakCols;

typedef struct {
    int64_t entities, aliases, sitelinks, badges, claims, qualifiers, outranked;
} Marks;

#define MAX_LANGS 64
#define MAX_SITES 256

typedef struct {
    PyObject_HEAD
    /* configuration */
    int n_langs, n_sites, all_sites;
    char *langs[MAX_LANGS];
    size_t lang_len[MAX_LANGS];
    char *sites[MAX_SITES];
    size_t site_len[MAX_SITES];
    /* entities */
    StrCol e_id, e_type, e_datatype;
    NumCol e_lastrevid, e_offset;
    StrCol *e_label, *e_desc;
    /* aliases */
    NumCol a_ent, a_lang, a_ord;
    StrCol a_value;
    /* sitelinks */
    NumCol s_ent, s_site, s_nbadges;
    StrCol s_title, s_badge, s_site_name; /* s_site_name: only with all_sites */
    /* truthy claims and their qualifiers */
    NumCol c_ent, c_ord, c_nquals;
    StrCol c_prop, c_stid, c_rank;
    SnakCols c_snak;
    StrCol q_prop;
    SnakCols q_snak;
    /* outranked P31/P279 statements */
    NumCol o_ent, o_ord;
    StrCol o_prop, o_rank, o_item;
    /* scratch */
    Buf scratch_id, scratch_type, scratch_tmp, scratch_stid, scratch_rank, slot[4];
    /* per-entity property-key set (duplicate detection) */
    const char **key_ptr;
    size_t *key_len;
    size_t n_keys, keys_cap;
    int32_t *slots;
    size_t n_slots;
    /* fallback lines of the current call: (offset, start, end) */
    Buf fallbacks;
    int64_t lines_total, framing_open, framing_close, n_fallback;
    int ready;
    int oom; /* a buffer of this scanner could not grow during the current scan or absorb */
} Scanner;

/* ---- JSON cursor ------------------------------------------------------------------------------ */
typedef struct {
    const unsigned char *p, *end;
    int depth;
} Cur;

static inline void ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static inline int expect(Cur *c, unsigned char ch) {
    ws(c);
    if (c->p >= c->end || *c->p != ch) return BAIL;
    c->p++;
    return OK;
}

static inline int peek(Cur *c) {
    ws(c);
    return c->p < c->end ? *c->p : -1;
}

/* Byte classes: 0 = plain ASCII, 1 = quote or backslash, 2 = control char, 3 = non-ASCII. */
static unsigned char CLASS[256];
/* Hex digit values, -1 for any other byte. */
static signed char HEXV[256];

static void init_classes(void) {
    for (int i = 0; i < 256; i++) CLASS[i] = i < 0x20 ? 2 : (i >= 0x80 ? 3 : 0);
    CLASS['"'] = 1;
    CLASS['\\'] = 1;
    for (int i = 0; i < 256; i++) HEXV[i] = -1;
    for (int i = 0; i < 10; i++) HEXV['0' + i] = (signed char)i;
    for (int i = 0; i < 6; i++) HEXV['a' + i] = HEXV['A' + i] = (signed char)(10 + i);
}

/* The first byte at or after p that is a quote, a backslash, a control character or non-ASCII.
 * Strings are most of a dump's bytes, so this runs 16 bytes at a time where SSE2 exists: a signed
 * compare below 0x20 catches both control characters and bytes >= 0x80. */
static inline const unsigned char *plain_run(const unsigned char *p, const unsigned char *end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                       _mm_cmplt_epi8(v, space));
        int mask = _mm_movemask_epi8(special);
        if (mask) return p + __builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    while (p < end && CLASS[*p] == 0) p++;
    return p;
}

/* Validates one UTF-8 sequence starting at p (a non-ASCII lead byte); returns its length or 0. */
static inline int utf8_seq(const unsigned char *p, const unsigned char *end) {
    unsigned char b0 = p[0];
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        if (end - p < 2 || (p[1] & 0xC0) != 0x80) return 0;
        return 2;
    }
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (b0 == 0xE0 && p[1] < 0xA0) return 0; /* overlong */
        if (b0 == 0xED && p[1] >= 0xA0) return 0; /* surrogate */
        return 3;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if (b0 == 0xF0 && p[1] < 0x90) return 0;
        if (b0 == 0xF4 && p[1] >= 0x90) return 0;
        return 4;
    }
    return 0;
}

static inline int hex4(const unsigned char *p, unsigned *out) {
    int a = HEXV[p[0]], b = HEXV[p[1]], c = HEXV[p[2]], d = HEXV[p[3]];
    if ((a | b | c | d) < 0) return BAIL;
    *out = (unsigned)((a << 12) | (b << 8) | (c << 4) | d);
    return OK;
}

/* Parses a JSON string at the cursor ('"' expected); appends the decoded UTF-8 to `out` (or only
 * validates when out is NULL). Lone surrogates and invalid UTF-8 make the line fall back. */
static int parse_string(Cur *c, Buf *out) {
    ws(c);
    if (c->p >= c->end || *c->p != '"') return BAIL;
    const unsigned char *p = c->p + 1, *end = c->end;
    for (;;) {
        const unsigned char *run = p;
        p = plain_run(p, end);
        if (p >= end) return BAIL;
        unsigned char ch = *p;
        /* Runs of non-ASCII text are validated in place and copied with the plain bytes around them
         * (a sequence never contains a quote, a backslash or a control byte). */
        while (CLASS[ch] == 3) {
            int n = utf8_seq(p, end);
            if (!n) return BAIL;
            p = plain_run(p + n, end);
            if (p >= end) return BAIL;
            ch = *p;
        }
        if (out && p > run) {
            if (buf_reserve(out, (size_t)(p - run))) return BAIL;
            memcpy(out->p + out->len, run, (size_t)(p - run));
            out->len += (size_t)(p - run);
        }
        if (ch == '"') {
            c->p = p + 1;
            return OK;
        }
        if (CLASS[ch] == 2) return BAIL;
        /* Backslash escapes, one after another without going back to the plain scan: dumps spell
         * non-ASCII text as runs of \uXXXX (a fifth of a real dump's string bytes). */
        do {
            if (end - p < 2) return BAIL;
            unsigned char e = p[1];
            if (e != 'u') {
                char simple;
                switch (e) {
                    case '"': simple = '"'; break;
                    case '\\': simple = '\\'; break;
                    case '/': simple = '/'; break;
                    case 'b': simple = '\b'; break;
                    case 'f': simple = '\f'; break;
                    case 'n': simple = '\n'; break;
                    case 'r': simple = '\r'; break;
                    case 't': simple = '\t'; break;
                    default: return BAIL;
                }
                if (out) {
                    if (buf_reserve(out, 1)) return BAIL;
                    out->p[out->len++] = simple;
                }
                p += 2;
                continue;
            }
            if (end - p < 6) return BAIL;
            unsigned cp;
            if (hex4(p + 2, &cp)) return BAIL;
            p += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, &lo)) return BAIL;
                if (lo < 0xDC00 || lo > 0xDFFF) return BAIL;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return BAIL;
            }
            if (out) {
                if (buf_reserve(out, 4)) return BAIL;
                char *o = out->p + out->len;
                if (cp < 0x80) {
                    o[0] = (char)cp;
                    out->len += 1;
                } else if (cp < 0x800) {
                    o[0] = (char)(0xC0 | (cp >> 6));
                    o[1] = (char)(0x80 | (cp & 0x3F));
                    out->len += 2;
                } else if (cp < 0x10000) {
                    o[0] = (char)(0xE0 | (cp >> 12));
                    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    o[2] = (char)(0x80 | (cp & 0x3F));
                    out->len += 3;
                } else {
                    o[0] = (char)(0xF0 | (cp >> 18));
                    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    o[3] = (char)(0x80 | (cp & 0x3F));
                    out->len += 4;
                }
            }
        } while (p < end && *p == '\\');
    }
}

/* A string straight into a column row. */
static int string_to_col(Cur *c, StrCol *col) {
    size_t before = col->data.len;
    if (parse_string(c, &col->data)) {
        col->data.len = before;
        return BAIL;
    }
    return str_finish_row(col, 1);
}

/* An object key without escapes (keys we compare must be plain); returned as a span of the input. */
static int parse_key(Cur *c, const char **key, size_t *len) {
    ws(c);
    if (c->p >= c->end || *c->p != '"') return BAIL;
    const unsigned char *start = c->p + 1, *p = start;
    for (;;) {
        p = plain_run(p, c->end);
        if (p >= c->end) return BAIL;
        if (*p == '"') break;
        if (CLASS[*p] != 3) return BAIL; /* an escaped key could spell a name we look for: fall back */
        int n = utf8_seq(p, c->end);
        if (!n) return BAIL;
        p += n;
    }
    *key = (const char *)start;
    *len = (size_t)(p - start);
    c->p = p + 1;
    return expect(c, ':');
}

static inline int key_is(const char *key, size_t len, const char *name) {
    size_t n = strlen(name);
    return len == n && memcmp(key, name, n) == 0;
}

/* JSON number grammar; returns the span and whether it is an integer token. */
static int scan_number(Cur *c, const unsigned char **start, size_t *len, int *is_int) {
    ws(c);
    const unsigned char *p = c->p, *end = c->end, *s = p;
    int integer = 1;
    if (p < end && *p == '-') p++;
    if (p >= end) return BAIL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') p++;
    } else {
        return BAIL;
    }
    if (p < end && *p == '.') {
        integer = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9') return BAIL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        integer = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return BAIL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    *start = s;
    *len = (size_t)(p - s);
    *is_int = integer;
    c->p = p;
    return OK;
}

static int parse_int64(Cur *c, int64_t *out) {
    const unsigned char *s;
    size_t len;
    int is_int;
    if (scan_number(c, &s, &len, &is_int) || !is_int) return BAIL;
    int neg = *s == '-';
    const unsigned char *p = s + neg, *end = s + len;
    if (end - p > 18) return BAIL; /* could overflow: leave it to the reference path */
    int64_t v = 0;
    while (p < end) v = v * 10 + (*p++ - '0');
    *out = neg ? -v : v;
    return OK;
}

static int parse_double(Cur *c, double *out) {
    const unsigned char *s;
    size_t len;
    int is_int;
    if (scan_number(c, &s, &len, &is_int)) return BAIL;
    if (is_int && len > 15) return BAIL; /* int -> float rounding: leave it to the reference path */
    char tmp[64];
    if (len >= sizeof(tmp)) return BAIL;
    memcpy(tmp, s, len);
    tmp[len] = 0;
    errno = 0;
    char *endp;
    double v = strtod(tmp, &endp);
    if (errno || endp != tmp + len || !isfinite(v)) return BAIL;
    if (is_int && v == 0.0) v = 0.0; /* the integer -0 is the int 0 on the reference path: +0.0 */
    *out = v;
    return OK;
}

static int literal(Cur *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return BAIL;
    c->p += n;
    return OK;
}

static int is_null(Cur *c) {
    if (peek(c) == 'n') return literal(c, "null") == OK ? 1 : -1;
    return 0;
}

static int skip_value(Cur *c);

static int skip_container(Cur *c, unsigned char close) {
    if (++c->depth > MAX_DEPTH) return BAIL;
    c->p++;
    if (peek(c) == close) {
        c->p++;
        c->depth--;
        return OK;
    }
    for (;;) {
        if (close == '}') {
            if (parse_string(c, NULL) || expect(c, ':')) return BAIL;
        }
        if (skip_value(c)) return BAIL;
        int ch = peek(c);
        if (ch == ',') {
            c->p++;
            continue;
        }
        if (ch == close) {
            c->p++;
            c->depth--;
            return OK;
        }
        return BAIL;
    }
}

static int skip_value(Cur *c) {
    int ch = peek(c);
    const unsigned char *s;
    size_t len;
    int is_int;
    switch (ch) {
        case '"': return parse_string(c, NULL);
        case '{': return skip_container(c, '}');
        case '[': return skip_container(c, ']');
        case 't': return literal(c, "true");
        case 'f': return literal(c, "false");
        case 'n': return literal(c, "null");
        default: return scan_number(c, &s, &len, &is_int);
    }
}

/* Iterates the members of an object: call obj_begin, then obj_next until it returns 0. */
static int obj_begin(Cur *c) {
    if (expect(c, '{')) return BAIL;
    return OK;
}

/* 1 = a key was read, 0 = end of object, BAIL = error. */
static int obj_next(Cur *c, int *first, const char **key, size_t *klen) {
    int ch = peek(c);
    if (*first) {
        *first = 0;
        if (ch == '}') {
            c->p++;
            return 0;
        }
    } else {
        if (ch == '}') {
            c->p++;
            return 0;
        }
        if (ch != ',') return BAIL;
        c->p++;
    }
    if (parse_key(c, key, klen)) return BAIL;
    return 1;
}

static int arr_next(Cur *c, int *first) {
    int ch = peek(c);
    if (*first) {
        *first = 0;
        if (ch == ']') {
            c->p++;
            return 0;
        }
        return 1;
    }
    if (ch == ']') {
        c->p++;
        return 0;
    }
    if (ch != ',') return BAIL;
    c->p++;
    return 1;
}

/* ---- values ------------------------------------------------------------------------------------- */
/* `^https?://.*\/` removed, as pyarrow's replace_substring_regex does on the reference path. */
static int push_uri(StrCol *col, const char *s, size_t len) {
    size_t prefix = 0;
    if (len >= 7 && memcmp(s, "http://", 7) == 0)
        prefix = 7;
    else if (len >= 8 && memcmp(s, "https://", 8) == 0)
        prefix = 8;
    if (prefix) {
        if (memchr(s, '\n', len)) return BAIL; /* '.' stops at a newline there: leave it to them */
        for (size_t j = len; j > prefix; j--) {
            if (s[j - 1] == '/') return str_push(col, s + j, len - j);
        }
    }
    return str_push(col, s, len);
}

/* A string value into scratch (reset first); is_set tells whether it was not null. */
static int opt_string(Cur *c, Buf *scratch, int *is_set) {
    scratch->len = 0;
    int n = is_null(c);
    if (n < 0) return BAIL;
    if (n) {
        *is_set = 0;
        return OK;
    }
    *is_set = 1;
    return parse_string(c, scratch);
}

enum { K_NONE, K_ENTITY, K_STRING, K_TIME, K_QUANTITY, K_COORD, K_MONO };
static const char *KIND_NAMES[] = {NULL, "wikibase-entityid", "string", "time", "quantity", "globecoordinate",
                                   "monolingualtext"};

static int push_all_null(SnakCols *sc, int from_value_type) {
    for (int i = from_value_type ? S_VALUE_TYPE : S_SNAKTYPE; i < N_SNAK_STR; i++)
        if (str_push_null(&sc->s[i])) return BAIL;
    if (num_push(&sc->precision, NULL, 0) || num_push(&sc->lat, NULL, 0) || num_push(&sc->lon, NULL, 0) ||
        num_push(&sc->cprec, NULL, 0))
        return BAIL;
    return OK;
}

static const struct {
    const char *type;
    const char *prefix;
} REF_PREFIX[] = {{"item", "Q"}, {"property", "P"}, {"lexeme", "L"}, {"mediainfo", "M"}, {"entity-schema", "E"}};

/* Parses a datavalue's `value` of `kind` and appends every value column of one snak row. */
static int parse_dv_value(Scanner *s, Cur *c, int kind, SnakCols *sc) {
    StrCol *col = sc->s;
    /* columns this kind fills are pushed below; the rest get nulls */
    int filled[N_SNAK_STR] = {0};
    int fill_prec = 0, fill_coord = 0;
    if (kind == K_STRING) {
        if (peek(c) != '"' || string_to_col(c, &col[S_STRING])) return BAIL;
        filled[S_STRING] = 1;
    } else {
        if (obj_begin(c)) return BAIL;
        int first = 1, r;
        const char *key;
        size_t klen;
        unsigned seen = 0;
        /* per kind: up to four string slots (the scanner's scratch buffers), one int, three doubles */
        int set[4] = {0};
        int64_t ival = 0;
        int ival_set = 0;
        double dv[3] = {0};
        int dv_set[3] = {0};
        Buf *slots = s->slot;
        int rc = OK;
        while ((r = obj_next(c, &first, &key, &klen)) == 1) {
            int idx = -1;
            int what = 0; /* 0 skip, 1 string slot, 2 int, 3 double */
            if (kind == K_ENTITY) {
                if (key_is(key, klen, "id")) idx = 0, what = 1;
                else if (key_is(key, klen, "numeric-id")) idx = 1, what = 2;
                else if (key_is(key, klen, "entity-type")) idx = 2, what = 1;
            } else if (kind == K_TIME) {
                if (key_is(key, klen, "time")) idx = 0, what = 1;
                else if (key_is(key, klen, "precision")) idx = 1, what = 2;
                else if (key_is(key, klen, "calendarmodel")) idx = 2, what = 1;
            } else if (kind == K_QUANTITY) {
                if (key_is(key, klen, "amount")) idx = 0, what = 1;
                else if (key_is(key, klen, "unit")) idx = 1, what = 1;
                else if (key_is(key, klen, "upperBound")) idx = 2, what = 1;
                else if (key_is(key, klen, "lowerBound")) idx = 3, what = 1;
            } else if (kind == K_COORD) {
                if (key_is(key, klen, "latitude")) idx = 0, what = 3;
                else if (key_is(key, klen, "longitude")) idx = 1, what = 3;
                else if (key_is(key, klen, "precision")) idx = 2, what = 3;
                else if (key_is(key, klen, "globe")) idx = 3, what = 1;
            } else if (kind == K_MONO) {
                if (key_is(key, klen, "text")) idx = 0, what = 1;
                else if (key_is(key, klen, "language")) idx = 1, what = 1;
            }
            if (what == 0) {
                if (skip_value(c)) { rc = BAIL; break; }
                continue;
            }
            if (seen & (1u << idx)) { rc = BAIL; break; }
            seen |= 1u << idx;
            int nul = is_null(c);
            if (nul < 0) { rc = BAIL; break; }
            if (what == 1) {
                if (nul) continue;
                slots[idx].len = 0;
                if (parse_string(c, &slots[idx])) { rc = BAIL; break; }
                set[idx] = 1;
            } else if (what == 2) {
                if (nul) continue;
                if (parse_int64(c, &ival)) { rc = BAIL; break; }
                ival_set = 1;
            } else {
                if (nul) continue;
                if (parse_double(c, &dv[idx])) { rc = BAIL; break; }
                dv_set[idx] = 1;
            }
        }
        if (r == BAIL) rc = BAIL;
        /* required-with-default strings that were given null are schema errors on the reference path */
        if (rc == OK) {
            if (kind == K_ENTITY) {
                /* id if given (an empty id would be rebuilt in one place and kept in another) */
                if (set[0]) {
                    if (slots[0].len == 0) rc = BAIL;
                    else rc = str_push(&col[S_ITEM], slots[0].p, slots[0].len);
                } else if (ival_set) {
                    const char *prefix = NULL;
                    if (!set[2] || slots[2].len == 0) {
                        prefix = "Q"; /* `entity_type or "item"` on the reference path */
                    } else {
                        for (size_t i = 0; i < sizeof(REF_PREFIX) / sizeof(REF_PREFIX[0]); i++)
                            if (slots[2].len == strlen(REF_PREFIX[i].type) &&
                                memcmp(slots[2].p, REF_PREFIX[i].type, slots[2].len) == 0)
                                prefix = REF_PREFIX[i].prefix;
                    }
                    if (prefix) {
                        char num[32];
                        int n = snprintf(num, sizeof(num), "%s%lld", prefix, (long long)ival);
                        rc = str_push(&col[S_ITEM], num, (size_t)n);
                    } else {
                        rc = str_push_null(&col[S_ITEM]);
                    }
                } else {
                    rc = str_push_null(&col[S_ITEM]);
                }
                filled[S_ITEM] = 1;
            } else if (kind == K_TIME) {
                /* "time" null is a schema error; absent is "" */
                if ((seen & 1) && !set[0]) rc = BAIL;
                if (rc == OK) rc = str_push(&col[S_TIME], set[0] ? slots[0].p : "", set[0] ? slots[0].len : 0);
                if (rc == OK && ival_set && (ival < -128 || ival > 127)) rc = BAIL;
                if (rc == OK) {
                    int8_t p8 = (int8_t)ival;
                    rc = num_push(&sc->precision, &p8, ival_set);
                    fill_prec = 1;
                }
                if (rc == OK)
                    rc = set[2] ? push_uri(&col[S_TIME_CAL], slots[2].p, slots[2].len) : str_push_null(&col[S_TIME_CAL]);
                filled[S_TIME] = filled[S_TIME_CAL] = 1;
            } else if (kind == K_QUANTITY) {
                if ((seen & 1) && !set[0]) rc = BAIL;
                if (rc == OK) rc = str_push(&col[S_AMOUNT], set[0] ? slots[0].p : "", set[0] ? slots[0].len : 0);
                if (rc == OK) rc = set[1] ? push_uri(&col[S_UNIT], slots[1].p, slots[1].len) : str_push_null(&col[S_UNIT]);
                if (rc == OK) rc = set[2] ? str_push(&col[S_UPPER], slots[2].p, slots[2].len) : str_push_null(&col[S_UPPER]);
                if (rc == OK) rc = set[3] ? str_push(&col[S_LOWER], slots[3].p, slots[3].len) : str_push_null(&col[S_LOWER]);
                filled[S_AMOUNT] = filled[S_UNIT] = filled[S_UPPER] = filled[S_LOWER] = 1;
            } else if (kind == K_COORD) {
                rc = num_push(&sc->lat, &dv[0], dv_set[0]);
                if (rc == OK) rc = num_push(&sc->lon, &dv[1], dv_set[1]);
                if (rc == OK) rc = num_push(&sc->cprec, &dv[2], dv_set[2]);
                fill_coord = 1;
                if (rc == OK) rc = set[3] ? push_uri(&col[S_GLOBE], slots[3].p, slots[3].len) : str_push_null(&col[S_GLOBE]);
                filled[S_GLOBE] = 1;
            } else if (kind == K_MONO) {
                if ((seen & 1) && !set[0]) rc = BAIL;
                if (rc == OK) rc = str_push(&col[S_TEXT], set[0] ? slots[0].p : "", set[0] ? slots[0].len : 0);
                if (rc == OK) rc = set[1] ? str_push(&col[S_TEXT_LANG], slots[1].p, slots[1].len) : str_push_null(&col[S_TEXT_LANG]);
                filled[S_TEXT] = filled[S_TEXT_LANG] = 1;
            }
        }
        if (rc) return BAIL;
    }
    if (str_push(&col[S_VALUE_TYPE], KIND_NAMES[kind], strlen(KIND_NAMES[kind]))) return BAIL;
    filled[S_VALUE_TYPE] = 1;
    for (int i = S_ITEM; i < N_SNAK_STR; i++)
        if (!filled[i] && str_push_null(&col[i])) return BAIL;
    if (!fill_prec && num_push(&sc->precision, NULL, 0)) return BAIL;
    if (!fill_coord &&
        (num_push(&sc->lat, NULL, 0) || num_push(&sc->lon, NULL, 0) || num_push(&sc->cprec, NULL, 0)))
        return BAIL;
    return OK;
}

static int kind_of(const char *s, size_t len) {
    for (int k = K_ENTITY; k <= K_MONO; k++)
        if (len == strlen(KIND_NAMES[k]) && memcmp(s, KIND_NAMES[k], len) == 0) return k;
    return K_NONE;
}

/* A datavalue object: its `type` tag decides how `value` is read, so `value` (written first in
 * dumps) is skipped once and read again from its position. Appends the value columns. */
static int parse_datavalue(Scanner *s, Cur *c, SnakCols *sc) {
    if (obj_begin(c)) return BAIL;
    int first = 1, r;
    const char *key;
    size_t klen;
    const unsigned char *value_at = NULL;
    int kind = K_NONE, seen_type = 0;
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        if (key_is(key, klen, "value")) {
            if (value_at) return BAIL;
            ws(c);
            value_at = c->p;
            if (skip_value(c)) return BAIL;
        } else if (key_is(key, klen, "type")) {
            if (seen_type) return BAIL;
            seen_type = 1;
            Buf *t = &s->scratch_tmp;
            t->len = 0;
            if (peek(c) != '"' || parse_string(c, t)) return BAIL;
            kind = kind_of(t->p, t->len);
            if (kind == K_NONE) return BAIL; /* unknown type: the reference path repairs it */
        } else if (skip_value(c)) {
            return BAIL;
        }
    }
    if (r == BAIL || !value_at || !seen_type) return BAIL;
    Cur vc = {value_at, c->end, c->depth};
    return parse_dv_value(s, &vc, kind, sc);
}

/* One snak: appends one row to every column of `sc`. */
static int parse_snak(Scanner *s, Cur *c, SnakCols *sc) {
    if (peek(c) != '{') return BAIL;
    if (obj_begin(c)) return BAIL;
    int first = 1, r;
    const char *key;
    size_t klen;
    int seen_snaktype = 0, seen_property = 0, seen_datatype = 0, seen_dv = 0;
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        if (key_is(key, klen, "snaktype")) {
            if (seen_snaktype++ || peek(c) != '"' || string_to_col(c, &sc->s[S_SNAKTYPE])) return BAIL;
        } else if (key_is(key, klen, "property")) {
            if (seen_property++ || peek(c) != '"' || parse_string(c, NULL)) return BAIL;
        } else if (key_is(key, klen, "datatype")) {
            if (seen_datatype++) return BAIL;
            int n = is_null(c);
            if (n < 0) return BAIL;
            if (n) {
                if (str_push_null(&sc->s[S_DATATYPE])) return BAIL;
            } else if (peek(c) != '"' || string_to_col(c, &sc->s[S_DATATYPE])) {
                return BAIL;
            }
        } else if (key_is(key, klen, "datavalue")) {
            if (seen_dv++) return BAIL;
            int n = is_null(c);
            if (n < 0) return BAIL;
            if (n) {
                if (push_all_null(sc, 1)) return BAIL;
            } else if (peek(c) != '{' || parse_datavalue(s, c, sc)) {
                return BAIL;
            }
        } else if (key_is(key, klen, "unsupported_type")) {
            return BAIL; /* a field of the reference path's own struct: never in a dump */
        } else if (skip_value(c)) {
            return BAIL;
        }
    }
    if (r == BAIL) return BAIL;
    if (!seen_snaktype && str_push(&sc->s[S_SNAKTYPE], "value", 5)) return BAIL;
    if (!seen_datatype && str_push_null(&sc->s[S_DATATYPE])) return BAIL;
    if (!seen_dv && push_all_null(sc, 1)) return BAIL;
    return OK;
}

static void snak_truncate(SnakCols *sc, int64_t n) {
    for (int i = 0; i < N_SNAK_STR; i++) str_truncate(&sc->s[i], n);
    num_truncate(&sc->precision, n);
    num_truncate(&sc->lat, n);
    num_truncate(&sc->lon, n);
    num_truncate(&sc->cprec, n);
}

/* ---- statements ---------------------------------------------------------------------------------- */
enum { RANK_NORMAL, RANK_PREFERRED };
#define RESTART 1

static int keys_contain(const char **ptr, const size_t *len, size_t n, const char *key, size_t klen) {
    for (size_t i = 0; i < n; i++)
        if (len[i] == klen && memcmp(ptr[i], key, klen) == 0) return 1;
    return 0;
}

/* A statement's qualifiers object: one q row per snak; *count = number of snaks, or -1 (null list). */
static int parse_qualifiers(Scanner *s, Cur *c, int32_t *count) {
    if (obj_begin(c)) return BAIL;
    int first = 1, r;
    const char *key;
    size_t klen;
    const char *keys[64];
    size_t lens[64];
    size_t nkeys = 0;
    int32_t total = 0;
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        if (klen == 0 || nkeys == 64 || keys_contain(keys, lens, nkeys, key, klen)) return BAIL;
        keys[nkeys] = key;
        lens[nkeys] = klen;
        nkeys++;
        if (expect(c, '[')) return BAIL;
        int afirst = 1, ar;
        while ((ar = arr_next(c, &afirst)) == 1) {
            if (parse_snak(s, c, &s->q_snak)) return BAIL;
            if (str_push(&s->q_prop, key, klen)) return BAIL;
            total++;
        }
        if (ar == BAIL) return BAIL;
    }
    if (r == BAIL) return BAIL;
    *count = nkeys ? total : -1;
    return OK;
}

static int is_type_property(const char *prop, size_t len) {
    return (len == 3 && memcmp(prop, "P31", 3) == 0) || (len == 4 && memcmp(prop, "P279", 4) == 0);
}

/* One statement of property `prop` at position `ordinal`; kept (a claim row) when its rank is
 * `best`, else dropped (an outranked row for P31/P279). Returns RESTART when a preferred statement
 * shows up while `best` is normal. */
static int parse_statement(Scanner *s, Cur *c, int32_t ent, const char *prop, size_t plen, int32_t ordinal,
                           int best) {
    if (peek(c) != '{') return BAIL;
    int64_t snak_mark = s->c_snak.s[S_SNAKTYPE].n, q_mark = s->q_prop.n;
    if (obj_begin(c)) return BAIL;
    int first = 1, r;
    const char *key;
    size_t klen;
    int seen_main = 0, seen_rank = 0, seen_id = 0, seen_quals = 0, id_set = 0;
    int32_t nquals = -1;
    s->scratch_rank.len = 0;
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        if (key_is(key, klen, "mainsnak")) {
            if (seen_main++ || parse_snak(s, c, &s->c_snak)) return BAIL;
        } else if (key_is(key, klen, "rank")) {
            if (seen_rank++ || peek(c) != '"' || parse_string(c, &s->scratch_rank)) return BAIL;
        } else if (key_is(key, klen, "id")) {
            if (seen_id++ || opt_string(c, &s->scratch_stid, &id_set)) return BAIL;
        } else if (key_is(key, klen, "qualifiers")) {
            if (seen_quals++) return BAIL;
            int ch = peek(c);
            if (ch == '{') {
                if (parse_qualifiers(s, c, &nquals)) return BAIL;
            } else if (ch == '[') {
                if (skip_value(c)) return BAIL;
            } else {
                return BAIL;
            }
        } else if (skip_value(c)) {
            return BAIL;
        }
    }
    if (r == BAIL || !seen_main) return BAIL;
    const char *rank = seen_rank ? s->scratch_rank.p : "normal";
    size_t rlen = seen_rank ? s->scratch_rank.len : 6;
    int is_preferred = rlen == 9 && memcmp(rank, "preferred", 9) == 0;
    if (is_preferred && best == RANK_NORMAL) return RESTART;
    const char *best_name = best == RANK_PREFERRED ? "preferred" : "normal";
    if (!(rlen == strlen(best_name) && memcmp(rank, best_name, rlen) == 0)) {
        if (is_type_property(prop, plen)) {
            const char *item;
            size_t ilen;
            int has_item = str_last(&s->c_snak.s[S_ITEM], &item, &ilen);
            if (push_i32(&s->o_ent, ent) || push_i32(&s->o_ord, ordinal) || str_push(&s->o_prop, prop, plen) ||
                str_push(&s->o_rank, rank, rlen) ||
                (has_item ? str_push(&s->o_item, item, ilen) : str_push_null(&s->o_item)))
                return BAIL;
        }
        snak_truncate(&s->c_snak, snak_mark);
        snak_truncate(&s->q_snak, q_mark);
        str_truncate(&s->q_prop, q_mark);
        return OK;
    }
    if (push_i32(&s->c_ent, ent) || push_i32(&s->c_ord, ordinal) || str_push(&s->c_prop, prop, plen) ||
        (id_set ? str_push(&s->c_stid, s->scratch_stid.p, s->scratch_stid.len) : str_push_null(&s->c_stid)) ||
        str_push(&s->c_rank, rank, rlen) || push_i32(&s->c_nquals, nquals))
        return BAIL;
    return OK;
}

static void claims_truncate(Scanner *s, int64_t claims, int64_t quals, int64_t outranked) {
    num_truncate(&s->c_ent, claims);
    num_truncate(&s->c_ord, claims);
    num_truncate(&s->c_nquals, claims);
    str_truncate(&s->c_prop, claims);
    str_truncate(&s->c_stid, claims);
    str_truncate(&s->c_rank, claims);
    snak_truncate(&s->c_snak, claims);
    str_truncate(&s->q_prop, quals);
    snak_truncate(&s->q_snak, quals);
    num_truncate(&s->o_ent, outranked);
    num_truncate(&s->o_ord, outranked);
    str_truncate(&s->o_prop, outranked);
    str_truncate(&s->o_rank, outranked);
    str_truncate(&s->o_item, outranked);
}

static inline int bit_at(const Buf *valid, int64_t i) { return (valid->p[i >> 3] >> (i & 7)) & 1; }

/* Rows [from, n) of `col` all take row `from`'s value: the reference path stores a claim group's
 * datatype once, from its first kept statement (snaks of one property agree in real dumps). */
static int unify_from(StrCol *col, int64_t from, Buf *tmp) {
    int64_t n = col->n;
    if (n - from < 2) return OK;
    int32_t a0, b0;
    memcpy(&a0, col->off.p + 4 * from, 4);
    memcpy(&b0, col->off.p + 4 * (from + 1), 4);
    int valid0 = bit_at(&col->valid, from);
    int same = 1;
    for (int64_t i = from + 1; i < n && same; i++) {
        int32_t a, b;
        memcpy(&a, col->off.p + 4 * i, 4);
        memcpy(&b, col->off.p + 4 * (i + 1), 4);
        if (bit_at(&col->valid, i) != valid0 || (b - a) != (b0 - a0) ||
            memcmp(col->data.p + a, col->data.p + a0, (size_t)(b - a)) != 0)
            same = 0;
    }
    if (same) return OK;
    tmp->len = 0;
    if (buf_reserve(tmp, (size_t)(b0 - a0))) return BAIL;
    memcpy(tmp->p, col->data.p + a0, (size_t)(b0 - a0));
    tmp->len = (size_t)(b0 - a0);
    str_truncate(col, from);
    for (int64_t i = from; i < n; i++)
        if (valid0 ? str_push(col, tmp->p, tmp->len) : str_push_null(col)) return BAIL;
    return OK;
}

static int parse_statement_group(Scanner *s, Cur *c, int32_t ent, const char *prop, size_t plen) {
    if (peek(c) != '[') return BAIL;
    const unsigned char *start = c->p;
    int64_t claims = s->c_ent.n, quals = s->q_prop.n, outranked = s->o_ent.n;
    int best = RANK_NORMAL;
    for (;;) {
        c->p = start + 1;
        int first = 1, ar, restart = 0;
        int32_t ordinal = 0;
        while ((ar = arr_next(c, &first)) == 1) {
            int rc = parse_statement(s, c, ent, prop, plen, ordinal++, best);
            if (rc == RESTART) {
                restart = 1;
                break;
            }
            if (rc) return BAIL;
        }
        if (!restart) {
            if (ar == BAIL) return BAIL;
            return unify_from(&s->c_snak.s[S_DATATYPE], claims, &s->scratch_tmp);
        }
        claims_truncate(s, claims, quals, outranked);
        best = RANK_PREFERRED;
    }
}

/* Property keys of one entity, for duplicate detection (a dict keeps the last value in place). */
static uint64_t fnv1a(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    return h;
}

static int keyset_add(Scanner *s, const char *key, size_t len) {
    if (s->n_keys * 2 >= s->n_slots) {
        size_t slots = s->n_slots ? s->n_slots * 2 : 1024;
        int32_t *tab = malloc(slots * sizeof(int32_t));
        if (!tab) return (s->oom = 1), BAIL;
        memset(tab, 0xff, slots * sizeof(int32_t));
        for (size_t i = 0; i < s->n_keys; i++) {
            size_t h = fnv1a(s->key_ptr[i], s->key_len[i]) & (slots - 1);
            while (tab[h] >= 0) h = (h + 1) & (slots - 1);
            tab[h] = (int32_t)i;
        }
        free(s->slots);
        s->slots = tab;
        s->n_slots = slots;
    }
    if (s->n_keys == s->keys_cap) {
        size_t cap = s->keys_cap ? s->keys_cap * 2 : 512;
        const char **kp = realloc(s->key_ptr, cap * sizeof(char *));
        if (!kp) return (s->oom = 1), BAIL;
        s->key_ptr = kp;
        size_t *kl = realloc(s->key_len, cap * sizeof(size_t));
        if (!kl) return (s->oom = 1), BAIL;
        s->key_len = kl;
        s->keys_cap = cap;
    }
    size_t h = fnv1a(key, len) & (s->n_slots - 1);
    while (s->slots[h] >= 0) {
        int32_t i = s->slots[h];
        if (s->key_len[i] == len && memcmp(s->key_ptr[i], key, len) == 0) return BAIL; /* duplicate */
        h = (h + 1) & (s->n_slots - 1);
    }
    s->slots[h] = (int32_t)s->n_keys;
    s->key_ptr[s->n_keys] = key;
    s->key_len[s->n_keys] = len;
    s->n_keys++;
    return OK;
}

static void keyset_clear(Scanner *s) {
    if (s->n_keys) memset(s->slots, 0xff, s->n_slots * sizeof(int32_t));
    s->n_keys = 0;
}

/* A map member that dumps also write as null or, when empty, as a list: 1 = its object is open,
 * 0 = nothing to read (null, or a list, skipped), BAIL = anything else. */
static int open_map(Cur *c) {
    int ch = peek(c);
    if (ch == 'n') return literal(c, "null") == OK ? 0 : BAIL;
    if (ch == '[') return skip_value(c) == OK ? 0 : BAIL;
    if (ch != '{' || obj_begin(c)) return BAIL;
    return 1;
}

static int parse_claims(Scanner *s, Cur *c, int32_t ent) {
    int open = open_map(c);
    if (open <= 0) return open;
    keyset_clear(s);
    int first = 1, r;
    const char *key;
    size_t klen;
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        if (klen == 0 || keyset_add(s, key, klen)) return BAIL;
        if (parse_statement_group(s, c, ent, key, klen)) return BAIL;
    }
    return r == BAIL ? BAIL : OK;
}

/* ---- terms, aliases, sitelinks ------------------------------------------------------------------- */
static int find_code(char *const *codes, const size_t *lens, int n, const char *key, size_t klen) {
    for (int i = 0; i < n; i++)
        if (lens[i] == klen && memcmp(codes[i], key, klen) == 0) return i;
    return -1;
}

/* A member of a map keyed by language or site: *index is its configured code's position, or -1
 * when the code is not configured (its value is skipped). A code given twice falls back: the
 * reference path's dict keeps the last one. */
static int configured_member(Cur *c, char *const *codes, const size_t *lens, int n, unsigned char *done,
                             const char *key, size_t klen, int *index) {
    int i = find_code(codes, lens, n, key, klen);
    *index = i;
    if (i < 0) return skip_value(c);
    return done[i]++ ? BAIL : OK;
}

/* {"value": "..."} (other members skipped); absent value is "" as on the reference path. */
static int parse_lang_value(Cur *c, StrCol *col) {
    if (peek(c) != '{' || obj_begin(c)) return BAIL;
    int first = 1, r, seen = 0;
    const char *key;
    size_t klen;
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        if (key_is(key, klen, "value")) {
            if (seen++ || peek(c) != '"' || string_to_col(c, col)) return BAIL;
        } else if (skip_value(c)) {
            return BAIL;
        }
    }
    if (r == BAIL) return BAIL;
    if (!seen && str_push(col, "", 0)) return BAIL;
    return OK;
}

/* labels / descriptions: one column per configured language, one row for this entity. */
static int parse_terms(Scanner *s, Cur *c, StrCol *cols, unsigned char *done) {
    int open = open_map(c);
    if (open <= 0) return open;
    int first = 1, r, i;
    const char *key;
    size_t klen;
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        if (configured_member(c, s->langs, s->lang_len, s->n_langs, done, key, klen, &i)) return BAIL;
        if (i < 0) continue;
        int n = is_null(c);
        if (n < 0) return BAIL;
        if (n) {
            if (str_push_null(&cols[i])) return BAIL;
        } else if (parse_lang_value(c, &cols[i])) {
            return BAIL;
        }
    }
    return r == BAIL ? BAIL : OK;
}

static int parse_aliases(Scanner *s, Cur *c, int32_t ent) {
    int open = open_map(c);
    if (open <= 0) return open;
    int first = 1, r, i;
    const char *key;
    size_t klen;
    unsigned char done[MAX_LANGS] = {0};
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        if (configured_member(c, s->langs, s->lang_len, s->n_langs, done, key, klen, &i)) return BAIL;
        if (i < 0) continue;
        int n = is_null(c);
        if (n < 0) return BAIL;
        if (n) continue;
        if (expect(c, '[')) return BAIL;
        int afirst = 1, ar;
        int32_t ordinal = 0;
        while ((ar = arr_next(c, &afirst)) == 1) {
            if (parse_lang_value(c, &s->a_value) || push_i32(&s->a_ent, ent) || push_i32(&s->a_lang, i) ||
                push_i32(&s->a_ord, ordinal++))
                return BAIL;
        }
        if (ar == BAIL) return BAIL;
    }
    return r == BAIL ? BAIL : OK;
}

static int parse_sitelinks(Scanner *s, Cur *c, int32_t ent) {
    int open = open_map(c);
    if (open <= 0) return open;
    int first = 1, r;
    const char *key;
    size_t klen;
    unsigned char done[MAX_SITES] = {0};
    if (s->all_sites) keyset_clear(s);
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        int i;
        if (s->all_sites) {
            /* a map of every site: each key is a row (a null link is a schema error there) */
            if (klen == 0 || keyset_add(s, key, klen) || is_null(c) != 0) return BAIL;
            if (str_push(&s->s_site_name, key, klen)) return BAIL;
            i = 0;
        } else {
            if (configured_member(c, s->sites, s->site_len, s->n_sites, done, key, klen, &i)) return BAIL;
            if (i < 0) continue;
            int n = is_null(c);
            if (n < 0) return BAIL;
            if (n) continue;
        }
        if (peek(c) != '{' || obj_begin(c)) return BAIL;
        int lfirst = 1, lr, seen_title = 0, seen_badges = 0;
        int32_t nbadges = 0;
        const char *lkey;
        size_t lklen;
        while ((lr = obj_next(c, &lfirst, &lkey, &lklen)) == 1) {
            if (key_is(lkey, lklen, "title")) {
                if (seen_title++ || peek(c) != '"' || string_to_col(c, &s->s_title)) return BAIL;
            } else if (key_is(lkey, lklen, "badges")) {
                if (seen_badges++ || expect(c, '[')) return BAIL;
                int bfirst = 1, br;
                while ((br = arr_next(c, &bfirst)) == 1) {
                    if (peek(c) != '"' || string_to_col(c, &s->s_badge)) return BAIL;
                    nbadges++;
                }
                if (br == BAIL) return BAIL;
            } else if (skip_value(c)) {
                return BAIL;
            }
        }
        if (lr == BAIL) return BAIL;
        if (!seen_title && str_push(&s->s_title, "", 0)) return BAIL;
        if (push_i32(&s->s_ent, ent) || push_i32(&s->s_site, i) || push_i32(&s->s_nbadges, nbadges)) return BAIL;
    }
    return r == BAIL ? BAIL : OK;
}

/* ---- entities ------------------------------------------------------------------------------------ */
/* ^[A-Z][1-9][0-9]*(?:-[A-Z][1-9][0-9]*)?$ */
static int valid_id(const char *p, size_t n) {
    size_t i = 0;
    for (int part = 0; part < 2; part++) {
        if (i >= n || p[i] < 'A' || p[i] > 'Z') return 0;
        i++;
        if (i >= n || p[i] < '1' || p[i] > '9') return 0;
        i++;
        while (i < n && p[i] >= '0' && p[i] <= '9') i++;
        if (i == n) return 1;
        if (part == 0 && p[i] == '-') {
            i++;
            continue;
        }
        return 0;
    }
    return 0;
}

static const char *infer_type(const char *id, size_t n) {
    const char *dash = memchr(id, '-', n);
    if (dash) {
        char letter = dash[1];
        return letter == 'F' ? "form" : letter == 'S' ? "sense" : "unknown";
    }
    switch (id[0]) {
        case 'Q': return "item";
        case 'P': return "property";
        case 'L': return "lexeme";
        case 'M': return "mediainfo";
        case 'E': return "entity-schema";
        default: return "unknown";
    }
}

static void truncate_all(Scanner *s, const Marks *m) {
    str_truncate(&s->e_id, m->entities);
    str_truncate(&s->e_type, m->entities);
    str_truncate(&s->e_datatype, m->entities);
    num_truncate(&s->e_lastrevid, m->entities);
    num_truncate(&s->e_offset, m->entities);
    for (int i = 0; i < s->n_langs; i++) {
        str_truncate(&s->e_label[i], m->entities);
        str_truncate(&s->e_desc[i], m->entities);
    }
    num_truncate(&s->a_ent, m->aliases);
    num_truncate(&s->a_lang, m->aliases);
    num_truncate(&s->a_ord, m->aliases);
    str_truncate(&s->a_value, m->aliases);
    num_truncate(&s->s_ent, m->sitelinks);
    num_truncate(&s->s_site, m->sitelinks);
    num_truncate(&s->s_nbadges, m->sitelinks);
    str_truncate(&s->s_title, m->sitelinks);
    str_truncate(&s->s_site_name, m->sitelinks);
    str_truncate(&s->s_badge, m->badges);
    claims_truncate(s, m->claims, m->qualifiers, m->outranked);
}

/* One entity line. Entity columns get exactly one row, child tables any number. */
static int parse_entity(Scanner *s, Cur *c, int64_t offset) {
    int32_t ent = (int32_t)s->e_id.n;
    if (obj_begin(c)) return BAIL;
    int first = 1, r;
    const char *key;
    size_t klen;
    int seen_id = 0, seen_type = 0, seen_datatype = 0, seen_rev = 0, seen_labels = 0, seen_descs = 0;
    int seen_aliases = 0, seen_claims = 0, seen_sitelinks = 0, id_set = 0, type_set = 0;
    unsigned char label_done[MAX_LANGS] = {0}, desc_done[MAX_LANGS] = {0};
    int64_t lastrevid = 0;
    int rev_set = 0;
    while ((r = obj_next(c, &first, &key, &klen)) == 1) {
        if (key_is(key, klen, "id")) {
            if (seen_id++ || opt_string(c, &s->scratch_id, &id_set)) return BAIL;
        } else if (key_is(key, klen, "type")) {
            if (seen_type++ || opt_string(c, &s->scratch_type, &type_set)) return BAIL;
        } else if (key_is(key, klen, "datatype")) {
            if (seen_datatype++) return BAIL;
            int n = is_null(c);
            if (n < 0) return BAIL;
            if (n) {
                if (str_push_null(&s->e_datatype)) return BAIL;
            } else if (peek(c) != '"' || string_to_col(c, &s->e_datatype)) {
                return BAIL;
            }
        } else if (key_is(key, klen, "lastrevid")) {
            if (seen_rev++) return BAIL;
            int n = is_null(c);
            if (n < 0) return BAIL;
            if (!n) {
                if (parse_int64(c, &lastrevid)) return BAIL;
                rev_set = 1;
            }
        } else if (key_is(key, klen, "labels")) {
            if (seen_labels++ || parse_terms(s, c, s->e_label, label_done)) return BAIL;
        } else if (key_is(key, klen, "descriptions")) {
            if (seen_descs++ || parse_terms(s, c, s->e_desc, desc_done)) return BAIL;
        } else if (key_is(key, klen, "aliases")) {
            if (seen_aliases++ || parse_aliases(s, c, ent)) return BAIL;
        } else if (key_is(key, klen, "claims") || key_is(key, klen, "statements")) {
            /* both present: the reference path picks the non-empty one; rare enough to leave to it */
            if (seen_claims++ || parse_claims(s, c, ent)) return BAIL;
        } else if (key_is(key, klen, "sitelinks")) {
            if (seen_sitelinks++ || parse_sitelinks(s, c, ent)) return BAIL;
        } else if (key_is(key, klen, "redirects") || key_is(key, klen, "missing") ||
                   key_is(key, klen, "entities")) {
            return BAIL; /* redirects, deleted entities and wrappers: the reference path's cases */
        } else if (skip_value(c)) {
            return BAIL;
        }
    }
    if (r == BAIL) return BAIL;
    if (!id_set || !valid_id(s->scratch_id.p, s->scratch_id.len)) return BAIL;
    if (str_push(&s->e_id, s->scratch_id.p, s->scratch_id.len)) return BAIL;
    if (type_set && s->scratch_type.len) {
        if (str_push(&s->e_type, s->scratch_type.p, s->scratch_type.len)) return BAIL;
    } else {
        const char *t = infer_type(s->scratch_id.p, s->scratch_id.len);
        if (str_push(&s->e_type, t, strlen(t))) return BAIL;
    }
    if (!seen_datatype && str_push_null(&s->e_datatype)) return BAIL;
    if (push_i64(&s->e_lastrevid, lastrevid, rev_set) || push_i64(&s->e_offset, offset, 1)) return BAIL;
    for (int i = 0; i < s->n_langs; i++) {
        if (!label_done[i] && str_push_null(&s->e_label[i])) return BAIL;
        if (!desc_done[i] && str_push_null(&s->e_desc[i])) return BAIL;
    }
    return OK;
}

/* ---- the Python type ----------------------------------------------------------------------------- */
static void snak_init(SnakCols *sc, int *oom) {
    for (int i = 0; i < N_SNAK_STR; i++) str_init(&sc->s[i], oom);
    num_init(&sc->precision, 1, oom);
    num_init(&sc->lat, 8, oom);
    num_init(&sc->lon, 8, oom);
    num_init(&sc->cprec, 8, oom);
}

static void str_free(StrCol *c) {
    buf_free(&c->off);
    buf_free(&c->data);
    buf_free(&c->valid);
}

static void num_free(NumCol *c) {
    buf_free(&c->data);
    buf_free(&c->valid);
}

/* One column of a scanner: its name in `columns()` and where it lives. `ent` marks the
 * int32 columns that index the scanner's entity rows (rebased when another scanner's rows are
 * appended). `column_refs` is the one list of them: `columns()`, `absorb()` and the scanner's
 * deallocation walk it. */
typedef struct {
    char name[48];
    StrCol *str;
    NumCol *num;
    int ent;
} ColRef;

#define MAX_COLUMNS (5 + 2 * MAX_LANGS + 32 + 2 * (N_SNAK_STR + 4))

static int add_ref(ColRef *refs, int n, const char *name, StrCol *str, NumCol *num, int ent) {
    snprintf(refs[n].name, sizeof(refs[n].name), "%s", name);
    refs[n].str = str;
    refs[n].num = num;
    refs[n].ent = ent;
    return n + 1;
}

static int snak_refs(ColRef *refs, int n, const char *prefix, SnakCols *sc) {
    char name[48];
    for (int i = 0; i < N_SNAK_STR; i++) {
        snprintf(name, sizeof(name), "%s%s", prefix, SNAK_STR_NAMES[i]);
        n = add_ref(refs, n, name, &sc->s[i], NULL, 0);
    }
    snprintf(name, sizeof(name), "%stime_precision", prefix);
    n = add_ref(refs, n, name, NULL, &sc->precision, 0);
    snprintf(name, sizeof(name), "%slatitude", prefix);
    n = add_ref(refs, n, name, NULL, &sc->lat, 0);
    snprintf(name, sizeof(name), "%slongitude", prefix);
    n = add_ref(refs, n, name, NULL, &sc->lon, 0);
    snprintf(name, sizeof(name), "%scoord_precision", prefix);
    return add_ref(refs, n, name, NULL, &sc->cprec, 0);
}

/* Every exported column of `s`, in a fixed order (the same for scanners of one configuration). */
static int column_refs(Scanner *s, ColRef *refs) {
    char name[48];
    int n = 0;
    n = add_ref(refs, n, "e.id", &s->e_id, NULL, 0);
    n = add_ref(refs, n, "e.type", &s->e_type, NULL, 0);
    n = add_ref(refs, n, "e.datatype", &s->e_datatype, NULL, 0);
    n = add_ref(refs, n, "e.lastrevid", NULL, &s->e_lastrevid, 0);
    n = add_ref(refs, n, "e.offset", NULL, &s->e_offset, 0);
    for (int i = 0; i < s->n_langs; i++) {
        snprintf(name, sizeof(name), "e.label.%d", i);
        n = add_ref(refs, n, name, &s->e_label[i], NULL, 0);
        snprintf(name, sizeof(name), "e.description.%d", i);
        n = add_ref(refs, n, name, &s->e_desc[i], NULL, 0);
    }
    n = add_ref(refs, n, "a.ent", NULL, &s->a_ent, 1);
    n = add_ref(refs, n, "a.lang", NULL, &s->a_lang, 0);
    n = add_ref(refs, n, "a.ordinal", NULL, &s->a_ord, 0);
    n = add_ref(refs, n, "a.alias", &s->a_value, NULL, 0);
    n = add_ref(refs, n, "s.ent", NULL, &s->s_ent, 1);
    n = add_ref(refs, n, "s.site", NULL, &s->s_site, 0);
    n = add_ref(refs, n, "s.nbadges", NULL, &s->s_nbadges, 0);
    n = add_ref(refs, n, "s.title", &s->s_title, NULL, 0);
    n = add_ref(refs, n, "s.badge", &s->s_badge, NULL, 0);
    n = add_ref(refs, n, "s.site_name", &s->s_site_name, NULL, 0);
    n = add_ref(refs, n, "c.ent", NULL, &s->c_ent, 1);
    n = add_ref(refs, n, "c.ordinal", NULL, &s->c_ord, 0);
    n = add_ref(refs, n, "c.nquals", NULL, &s->c_nquals, 0);
    n = add_ref(refs, n, "c.property", &s->c_prop, NULL, 0);
    n = add_ref(refs, n, "c.statement_id", &s->c_stid, NULL, 0);
    n = add_ref(refs, n, "c.rank", &s->c_rank, NULL, 0);
    n = snak_refs(refs, n, "c.snak.", &s->c_snak);
    n = add_ref(refs, n, "q.property", &s->q_prop, NULL, 0);
    n = snak_refs(refs, n, "q.snak.", &s->q_snak);
    n = add_ref(refs, n, "o.ent", NULL, &s->o_ent, 1);
    n = add_ref(refs, n, "o.ordinal", NULL, &s->o_ord, 0);
    n = add_ref(refs, n, "o.property", &s->o_prop, NULL, 0);
    n = add_ref(refs, n, "o.rank", &s->o_rank, NULL, 0);
    return add_ref(refs, n, "o.item", &s->o_item, NULL, 0);
}

static void scanner_free_columns(Scanner *s) {
    ColRef refs[MAX_COLUMNS];
    int n = column_refs(s, refs);
    for (int i = 0; i < n; i++) {
        if (refs[i].str)
            str_free(refs[i].str);
        else
            num_free(refs[i].num);
    }
}

/* Empty columns, every buffer (scratch ones too) reporting to the scanner's `oom`; OK or BAIL. */
static int scanner_init_columns(Scanner *s) {
    int *oom = &s->oom;
    Buf *scratch[] = {&s->scratch_id, &s->scratch_type, &s->scratch_tmp, &s->scratch_stid, &s->scratch_rank,
                      &s->slot[0], &s->slot[1], &s->slot[2], &s->slot[3], &s->fallbacks};
    for (size_t i = 0; i < sizeof(scratch) / sizeof(scratch[0]); i++) scratch[i]->oom = oom;
    str_init(&s->e_id, oom);
    str_init(&s->e_type, oom);
    str_init(&s->e_datatype, oom);
    num_init(&s->e_lastrevid, 8, oom);
    num_init(&s->e_offset, 8, oom);
    for (int i = 0; i < s->n_langs; i++) {
        str_init(&s->e_label[i], oom);
        str_init(&s->e_desc[i], oom);
    }
    num_init(&s->a_ent, 4, oom);
    num_init(&s->a_lang, 4, oom);
    num_init(&s->a_ord, 4, oom);
    str_init(&s->a_value, oom);
    num_init(&s->s_ent, 4, oom);
    num_init(&s->s_site, 4, oom);
    num_init(&s->s_nbadges, 4, oom);
    str_init(&s->s_title, oom);
    str_init(&s->s_badge, oom);
    str_init(&s->s_site_name, oom);
    num_init(&s->c_ent, 4, oom);
    num_init(&s->c_ord, 4, oom);
    num_init(&s->c_nquals, 4, oom);
    str_init(&s->c_prop, oom);
    str_init(&s->c_stid, oom);
    str_init(&s->c_rank, oom);
    snak_init(&s->c_snak, oom);
    str_init(&s->q_prop, oom);
    snak_init(&s->q_snak, oom);
    num_init(&s->o_ent, 4, oom);
    num_init(&s->o_ord, 4, oom);
    str_init(&s->o_prop, oom);
    str_init(&s->o_rank, oom);
    str_init(&s->o_item, oom);
    return s->oom ? BAIL : OK;
}

static void Scanner_dealloc(Scanner *s) {
    /* Both label arrays exist once Scanner_init got past them (no column holds memory before). */
    if (s->e_label && s->e_desc) scanner_free_columns(s); /* exported buffers are NULL by now */
    for (int i = 0; i < s->n_langs; i++) free(s->langs[i]);
    for (int i = 0; i < s->n_sites; i++) free(s->sites[i]);
    free(s->e_label);
    free(s->e_desc);
    buf_free(&s->scratch_id);
    buf_free(&s->scratch_type);
    buf_free(&s->scratch_tmp);
    buf_free(&s->scratch_stid);
    buf_free(&s->scratch_rank);
    for (int i = 0; i < 4; i++) buf_free(&s->slot[i]);
    buf_free(&s->fallbacks);
    free(s->key_ptr);
    free(s->key_len);
    free(s->slots);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static int copy_codes(PyObject *seq, char **codes, size_t *lens, int max, int *count) {
    PyObject *fast = PySequence_Fast(seq, "languages and sites must be sequences of str");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "too many languages or sites for the native scanner");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len;
        const char *u = PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(fast, i), &len);
        if (!u) {
            Py_DECREF(fast);
            return -1;
        }
        codes[i] = malloc((size_t)len + 1);
        if (!codes[i]) {
            Py_DECREF(fast);
            PyErr_NoMemory();
            return -1;
        }
        memcpy(codes[i], u, (size_t)len + 1);
        lens[i] = (size_t)len;
        *count = (int)i + 1;
    }
    Py_DECREF(fast);
    return 0;
}

static int Scanner_init(Scanner *s, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"languages", "sites", "all_sites", NULL};
    PyObject *langs, *sites;
    int all_sites = 0;
    if (s->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner.__init__ called twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|p", kwlist, &langs, &sites, &all_sites)) return -1;
    s->all_sites = all_sites;
    if (copy_codes(langs, s->langs, s->lang_len, MAX_LANGS, &s->n_langs)) return -1;
    if (copy_codes(sites, s->sites, s->site_len, MAX_SITES, &s->n_sites)) return -1;
    s->e_label = calloc((size_t)(s->n_langs ? s->n_langs : 1), sizeof(StrCol));
    s->e_desc = calloc((size_t)(s->n_langs ? s->n_langs : 1), sizeof(StrCol));
    if (!s->e_label || !s->e_desc) {
        PyErr_NoMemory();
        return -1;
    }
    if (scanner_init_columns(s)) {
        PyErr_NoMemory();
        return -1;
    }
    s->ready = 1;
    return 0;
}

static void mark(Scanner *s, Marks *m) {
    m->entities = s->e_id.n;
    m->aliases = s->a_ent.n;
    m->sitelinks = s->s_ent.n;
    m->badges = s->s_badge.n;
    m->claims = s->c_ent.n;
    m->qualifiers = s->q_prop.n;
    m->outranked = s->o_ent.n;
}

static int is_space(unsigned char ch) {
    /* bytes.strip(): ASCII whitespace */
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == 0x0b || ch == 0x0c;
}

static int add_fallback(Scanner *s, int64_t offset, Py_ssize_t start, Py_ssize_t end) {
    int64_t rec[3] = {offset, (int64_t)start, (int64_t)end};
    if (buf_reserve(&s->fallbacks, sizeof(rec))) return BAIL;
    memcpy(s->fallbacks.p + s->fallbacks.len, rec, sizeof(rec));
    s->fallbacks.len += sizeof(rec);
    s->n_fallback++;
    return OK;
}

static PyTypeObject ScannerType;

/* ---- routing lines by shard -------------------------------------------------------------------- */
/* XXH64 (seed 0) of `n` bytes, as Python's xxhash.xxh64_intdigest: shards.shard_of's hash. */
#define XXH_P1 0x9E3779B185EBCA87ULL
#define XXH_P2 0xC2B2AE3D27D4EB4FULL
#define XXH_P3 0x165667B19E3779F9ULL
#define XXH_P4 0x85EBCA77C2B2AE63ULL
#define XXH_P5 0x27D4EB2F165667C5ULL

static inline uint64_t xxh_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t xxh_read64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v; /* little-endian hosts only: hatch_build.py builds on x86-64 and arm64 */
}
static inline uint32_t xxh_read32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t xxh_round(uint64_t acc, uint64_t input) {
    acc += input * XXH_P2;
    acc = xxh_rotl(acc, 31);
    return acc * XXH_P1;
}
static inline uint64_t xxh_merge(uint64_t acc, uint64_t val) {
    acc ^= xxh_round(0, val);
    return acc * XXH_P1 + XXH_P4;
}

static uint64_t xxh64(const unsigned char *p, size_t len) {
    const unsigned char *end = p + len;
    uint64_t h;
    if (len >= 32) {
        uint64_t v1 = XXH_P1 + XXH_P2, v2 = XXH_P2, v3 = 0, v4 = 0 - XXH_P1;
        const unsigned char *limit = end - 32;
        do {
            v1 = xxh_round(v1, xxh_read64(p));
            v2 = xxh_round(v2, xxh_read64(p + 8));
            v3 = xxh_round(v3, xxh_read64(p + 16));
            v4 = xxh_round(v4, xxh_read64(p + 24));
            p += 32;
        } while (p <= limit);
        h = xxh_rotl(v1, 1) + xxh_rotl(v2, 7) + xxh_rotl(v3, 12) + xxh_rotl(v4, 18);
        h = xxh_merge(h, v1);
        h = xxh_merge(h, v2);
        h = xxh_merge(h, v3);
        h = xxh_merge(h, v4);
    } else {
        h = XXH_P5;
    }
    h += (uint64_t)len;
    while (p + 8 <= end) {
        h ^= xxh_round(0, xxh_read64(p));
        h = xxh_rotl(h, 27) * XXH_P1 + XXH_P4;
        p += 8;
    }
    if (p + 4 <= end) {
        h ^= (uint64_t)xxh_read32(p) * XXH_P1;
        h = xxh_rotl(h, 23) * XXH_P2 + XXH_P3;
        p += 4;
    }
    while (p < end) {
        h ^= (uint64_t)(*p) * XXH_P5;
        h = xxh_rotl(h, 11) * XXH_P1;
        p++;
    }
    h ^= h >> 33;
    h *= XXH_P2;
    h ^= h >> 29;
    h *= XXH_P3;
    h ^= h >> 32;
    return h;
}

/* The "id" of an entity line, read ahead of its parse to pick the scanner it goes to: looked for
   among the first members of the top-level object only (dumps write "type", then "id"), so a line
   without it costs a few skipped values. 1 if found (decoded into `out`), else 0. */
#define ROUTE_LOOKAHEAD 4
static int line_id(const unsigned char *a, const unsigned char *b, Buf *out) {
    Cur c = {a, b, 0};
    int first = 1;
    const char *key;
    size_t klen;
    if (obj_begin(&c)) return 0;
    for (int i = 0; i < ROUTE_LOOKAHEAD && obj_next(&c, &first, &key, &klen) == 1; i++) {
        if (key_is(key, klen, "id")) {
            out->len = 0;
            return peek(&c) == '"' && parse_string(&c, out) == OK;
        }
        if (skip_value(&c)) return 0;
    }
    return 0;
}

/* ---- scanning lines ----------------------------------------------------------------------------- */
typedef struct {
    int64_t entities, lines, fopen, fclose;
} Counts;

/* Scan the lines of data[start:end] into `scanners[route]`, where route = shard // per_route of the
   line's id (`line_id`; route 0 when not found), or always into scanners[0] when n == 1. Fallbacks go
   to scanners[0]'s list, in line order. Runs without the GIL; BAIL only when out of memory. */
static int scan_lines(Scanner **scanners, Py_ssize_t n, uint64_t num_shards, uint64_t per_route,
                      const unsigned char *data, int64_t base, Py_ssize_t start, Py_ssize_t end, Counts *k) {
    Scanner *owner = scanners[0];
    Py_ssize_t pos = start;
    while (pos < end) {
        const unsigned char *nl = memchr(data + pos, '\n', (size_t)(end - pos));
        Py_ssize_t line_end = nl ? (Py_ssize_t)(nl - data) : end;
        Py_ssize_t a = pos, b = line_end;
        while (a < b && is_space(data[a])) a++;
        while (b > a && is_space(data[b - 1])) b--;
        int64_t offset = base + pos;
        if (a < b) {
            Py_ssize_t len = b - a;
            if ((len == 1 && data[a] == '[') || (len == 4 && memcmp(data + a, "\xef\xbb\xbf[", 4) == 0)) {
                k->fopen++;
            } else if (len == 1 && data[a] == ']') {
                k->fclose++;
            } else {
                k->lines++;
                if (data[b - 1] == ',') b--;
                Scanner *s = owner;
                if (n > 1 && line_id(data + a, data + b, &owner->scratch_tmp)) {
                    uint64_t route = (xxh64((const unsigned char *)owner->scratch_tmp.p, owner->scratch_tmp.len) %
                                      num_shards) / per_route;
                    s = scanners[route < (uint64_t)n ? route : (uint64_t)(n - 1)];
                }
                if (owner->oom) return BAIL; /* in line_id */
                Marks m;
                mark(s, &m);
                Cur c = {data + a, data + b, 0};
                int rc = data[a] == '{' ? parse_entity(s, &c, offset) : BAIL;
                if (rc == OK) {
                    ws(&c);
                    if (c.p != c.end) rc = BAIL;
                }
                if (rc == OK) {
                    k->entities++;
                } else {
                    truncate_all(s, &m);
                    if (s->oom || add_fallback(owner, offset, pos, line_end)) return BAIL;
                }
            }
        }
        pos = line_end + 1;
    }
    return OK;
}

/* The (entities, lines, framing_open, framing_close, fallbacks) tuple of a scan; resets the list. */
static PyObject *scan_result(Scanner *owner, const Counts *k) {
    PyObject *fb = PyList_New((Py_ssize_t)owner->n_fallback);
    if (!fb) return NULL;
    for (int64_t i = 0; i < owner->n_fallback; i++) {
        int64_t rec[3];
        memcpy(rec, owner->fallbacks.p + i * sizeof(rec), sizeof(rec));
        PyObject *t = Py_BuildValue("(Lnn)", (long long)rec[0], (Py_ssize_t)rec[1], (Py_ssize_t)rec[2]);
        if (!t) {
            Py_DECREF(fb);
            return NULL;
        }
        PyList_SET_ITEM(fb, (Py_ssize_t)i, t);
    }
    return Py_BuildValue("(LLLLN)", (long long)k->entities, (long long)k->lines, (long long)k->fopen,
                         (long long)k->fclose, fb);
}

static PyObject *run_scan(Scanner **scanners, Py_ssize_t n, uint64_t num_shards, uint64_t per_route,
                          Py_buffer *view, long long base, Py_ssize_t start, Py_ssize_t end) {
    if (start < 0 || end > view->len || start > end) {
        PyErr_SetString(PyExc_ValueError, "range outside the block");
        return NULL;
    }
    Scanner *owner = scanners[0];
    Counts k = {0, 0, 0, 0};
    owner->fallbacks.len = 0;
    owner->n_fallback = 0;
    for (Py_ssize_t i = 0; i < n; i++) scanners[i]->oom = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = scan_lines(scanners, n, num_shards, per_route, view->buf, base, start, end, &k);
    Py_END_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++)
        if (scanners[i]->oom) rc = BAIL;
    if (rc != OK) return PyErr_NoMemory();
    return scan_result(owner, &k);
}

PyDoc_STRVAR(Scanner_scan_doc,
             "scan(block, base_offset, start, end) -> (entities, lines, framing_open, framing_close, fallbacks)\n\n"
             "Scan the lines of block[start:end] (start at a line start). Entities are appended to the\n"
             "scanner's columns; `fallbacks` lists (offset, line_start, line_end) of the lines left to\n"
             "the reference decoder, in order. `lines` counts the entity lines seen (fallbacks included).");

static PyObject *Scanner_scan(Scanner *s, PyObject *args) {
    Py_buffer view;
    long long base;
    Py_ssize_t start, end;
    if (!s->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner not initialised or already exported");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*Lnn", &view, &base, &start, &end)) return NULL;
    PyObject *result = run_scan(&s, 1, 1, 1, &view, base, start, end);
    PyBuffer_Release(&view);
    return result;
}

PyDoc_STRVAR(scan_routed_doc,
             "scan_routed(scanners, num_shards, shards_per_route, block, base_offset, start, end) -> as Scanner.scan\n\n"
             "Scan like scanners[0].scan, but each entity line goes to scanners[shard // shards_per_route],\n"
             "shard being shards.shard_of of the line's \"id\" (read ahead among the first members; the\n"
             "last scanner if the route is past the end, the first if no id is found there). Each scanner\n"
             "then holds the rows of its own shards, already grouped, so they need no reordering. The\n"
             "routing is an optimisation only: callers recompute each row's shard from its parsed id.");

static PyObject *scan_routed(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *seq;
    unsigned long long num_shards, per_route;
    Py_buffer view;
    long long base;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "OKKy*Lnn", &seq, &num_shards, &per_route, &view, &base, &start, &end)) return NULL;
    PyObject *fast = PySequence_Fast(seq, "scanners must be a sequence of Scanner");
    PyObject *result = NULL;
    Scanner **scanners = NULL;
    if (!fast) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n < 1 || num_shards < 1 || per_route < 1) {
        PyErr_SetString(PyExc_ValueError, "need at least one scanner, shard and shard per route");
        goto done;
    }
    scanners = malloc((size_t)n * sizeof(Scanner *));
    if (!scanners) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyObject_TypeCheck(item, &ScannerType) || !((Scanner *)item)->ready) {
            PyErr_SetString(PyExc_TypeError, "scanners must be Scanner objects not yet exported");
            goto done;
        }
        scanners[i] = (Scanner *)item;
    }
    /* `fast` holds the scanners while the GIL is released */
    result = run_scan(scanners, n, (uint64_t)num_shards, (uint64_t)per_route, &view, base, start, end);
done:
    free(scanners);
    Py_XDECREF(fast);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *py_xxh64(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    uint64_t h = xxh64(view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(h);
}

PyDoc_STRVAR(string_shards_doc,
             "string_shards(offsets, data, count, num_shards) -> bytes\n\n"
             "shards.shard_of of each of the `count` values of an Arrow string array without nulls (its int32\n"
             "`offsets` and `data` buffers): native int64s, xxh64 of the value's UTF-8 bytes modulo\n"
             "`num_shards`. ValueError if the offsets do not describe `count` values inside `data`.");

static PyObject *string_shards(PyObject *Py_UNUSED(module), PyObject *args) {
    Py_buffer offsets, data;
    Py_ssize_t count;
    unsigned long long num_shards;
    if (!PyArg_ParseTuple(args, "y*y*nK", &offsets, &data, &count, &num_shards)) return NULL;
    PyObject *result = NULL;
    if (count < 0 || num_shards < 1 || offsets.len / (Py_ssize_t)sizeof(int32_t) < count + 1) {
        PyErr_SetString(PyExc_ValueError, "string_shards: offsets shorter than count + 1, or no shard");
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    if (!result) goto done;
    const unsigned char *bytes = data.buf;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(result);
    int32_t previous;
    memcpy(&previous, offsets.buf, sizeof previous);
    for (Py_ssize_t i = 0; i < count; i++) {
        int32_t next;
        memcpy(&next, (const char *)offsets.buf + (i + 1) * (Py_ssize_t)sizeof next, sizeof next);
        if (previous < 0 || next < previous || next > data.len) {
            Py_CLEAR(result);
            PyErr_SetString(PyExc_ValueError, "string_shards: offsets outside the data buffer");
            goto done;
        }
        out[i] = (int64_t)(xxh64(bytes + previous, (size_t)(next - previous)) % num_shards);
        previous = next;
    }
done:
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    return result;
}

/* ---- export ---------------------------------------------------------------------------------------- */
static int64_t null_count(const Buf *valid, int64_t n) {
    int64_t set = 0;
    for (int64_t i = 0; i < (n >> 3); i++) set += __builtin_popcount((unsigned char)valid->p[i]);
    if (n & 7) set += __builtin_popcount((unsigned char)valid->p[n >> 3] & ((1u << (n & 7)) - 1));
    return n - set;
}

/* A column buffer handed to Python without a copy: it owns the malloc'd memory and exposes it
 * through the buffer protocol (pyarrow wraps it with py_buffer). */
typedef struct {
    PyObject_HEAD
    char *p;
    Py_ssize_t len;
} Chunk;

static void Chunk_dealloc(Chunk *c) {
    free(c->p);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static int Chunk_getbuffer(Chunk *c, Py_buffer *view, int flags) {
    static char empty[1];
    return PyBuffer_FillInfo(view, (PyObject *)c, c->p ? c->p : empty, c->len, 1, flags);
}

static PyBufferProcs Chunk_as_buffer = {(getbufferproc)Chunk_getbuffer, NULL};

static PyTypeObject ChunkType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "entbench._wdscan.Chunk",
    .tp_basicsize = sizeof(Chunk),
    .tp_dealloc = (destructor)Chunk_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A read-only buffer of one scanned column (memory moved out of the scanner).",
    .tp_as_buffer = &Chunk_as_buffer,
};

/* Moves the buffer's memory into a Chunk; the Buf is left empty. */
static PyObject *bytes_of(Buf *b) {
    Chunk *c = PyObject_New(Chunk, &ChunkType);
    if (!c) return NULL;
    c->p = b->p;
    c->len = (Py_ssize_t)b->len;
    b->p = NULL;
    b->len = b->cap = 0;
    return (PyObject *)c;
}

/* ("str", n, null_count, validity, offsets, data) */
static int put_str(PyObject *d, const char *name, StrCol *c) {
    /* counted before the buffers move out (argument order is unspecified) */
    long long nulls = (long long)null_count(&c->valid, c->n);
    PyObject *valid = bytes_of(&c->valid), *off = bytes_of(&c->off), *data = bytes_of(&c->data);
    PyObject *v = Py_BuildValue("(sLLNNN)", "str", (long long)c->n, nulls, valid, off, data);
    if (!v) return -1;
    int rc = PyDict_SetItemString(d, name, v);
    Py_DECREF(v);
    return rc;
}

/* ("num", n, null_count, validity, data) */
static int put_num(PyObject *d, const char *name, NumCol *c) {
    long long nulls = (long long)null_count(&c->valid, c->n);
    PyObject *valid = bytes_of(&c->valid), *data = bytes_of(&c->data);
    PyObject *v = Py_BuildValue("(sLLNN)", "num", (long long)c->n, nulls, valid, data);
    if (!v) return -1;
    int rc = PyDict_SetItemString(d, name, v);
    Py_DECREF(v);
    return rc;
}

PyDoc_STRVAR(Scanner_columns_doc,
             "columns() -> dict of column name -> buffers; see builders/wikidata_native.py.\n\n"
             "The buffers move out of the scanner (no copy): it cannot scan or export again.\n"
             "Names: e.<col> (entities; e.label.<i>, e.description.<i> per language index), a.*, s.*,\n"
             "c.* (claims; c.snak.<col> for the main snak), q.* (qualifier snaks), o.* (outranked).");

static PyObject *Scanner_columns(Scanner *s, PyObject *Py_UNUSED(ignored)) {
    if (!s->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner not initialised or already exported");
        return NULL;
    }
    s->ready = 0; /* its buffers are about to move out */
    PyObject *d = PyDict_New();
    if (!d) return NULL;
    ColRef refs[MAX_COLUMNS];
    int n = column_refs(s, refs);
    for (int i = 0; i < n; i++) {
        if (refs[i].str ? put_str(d, refs[i].name, refs[i].str) : put_num(d, refs[i].name, refs[i].num)) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

/* Appends `sn` validity bits to the `dn` of `dst` (bits past the last row are zero in both). */
static int bits_append(Buf *dst, int64_t dn, const Buf *src, int64_t sn) {
    size_t total = (size_t)((dn + sn + 7) >> 3);
    if (total > dst->len && buf_reserve(dst, total - dst->len)) return BAIL;
    int shift = (int)(dn & 7);
    size_t src_bytes = (size_t)((sn + 7) >> 3);
    unsigned char *d = (unsigned char *)dst->p;
    const unsigned char *b = (const unsigned char *)src->p;
    if (shift == 0) {
        if (src_bytes) memcpy(d + (dn >> 3), b, src_bytes);
    } else {
        size_t at = (size_t)(dn >> 3); /* the partly filled byte */
        for (size_t k = 0; k < src_bytes; k++) {
            d[at + k] |= (unsigned char)(b[k] << shift);
            if (at + k + 1 < total) d[at + k + 1] = (unsigned char)(b[k] >> (8 - shift));
        }
    }
    dst->len = total;
    return OK;
}

static int str_append(StrCol *dst, const StrCol *src) {
    if (dst->data.len + src->data.len > INT32_MAX) return BAIL;
    int32_t base = (int32_t)dst->data.len;
    if (buf_reserve(&dst->data, src->data.len) || buf_reserve(&dst->off, (size_t)(4 * src->n)) ||
        bits_append(&dst->valid, dst->n, &src->valid, src->n))
        return BAIL;
    if (src->data.len) memcpy(dst->data.p + dst->data.len, src->data.p, src->data.len);
    dst->data.len += src->data.len;
    const char *from = src->off.p + 4; /* offset 0 of src is the end of dst's last row */
    char *to = dst->off.p + dst->off.len;
    for (int64_t i = 0; i < src->n; i++) {
        int32_t v;
        memcpy(&v, from + 4 * i, 4);
        v += base;
        memcpy(to + 4 * i, &v, 4);
    }
    dst->off.len += (size_t)(4 * src->n);
    dst->n += src->n;
    return OK;
}

static int num_append(NumCol *dst, const NumCol *src, int32_t rebase) {
    if (buf_reserve(&dst->data, src->data.len) || bits_append(&dst->valid, dst->n, &src->valid, src->n))
        return BAIL;
    char *to = dst->data.p + dst->data.len;
    if (rebase) { /* int32 entity indices */
        for (int64_t i = 0; i < src->n; i++) {
            int32_t v;
            memcpy(&v, src->data.p + 4 * i, 4);
            v += rebase;
            memcpy(to + 4 * i, &v, 4);
        }
    } else if (src->data.len) {
        memcpy(to, src->data.p, src->data.len);
    }
    dst->data.len += src->data.len;
    dst->n += src->n;
    return OK;
}

PyDoc_STRVAR(Scanner_absorb_doc,
             "absorb(other) -> None\n\n"
             "Append the rows of `other` (a scanner of the same languages and sites) after this\n"
             "scanner's own, in every column, and leave `other` empty. One export of the routed\n"
             "scanners of a task, instead of one per scanner.");

static PyObject *Scanner_absorb(Scanner *s, PyObject *arg) {
    if (!PyObject_TypeCheck(arg, &ScannerType)) {
        PyErr_SetString(PyExc_TypeError, "absorb() takes a Scanner");
        return NULL;
    }
    Scanner *o = (Scanner *)arg;
    if (o == s) {
        PyErr_SetString(PyExc_ValueError, "a scanner cannot absorb itself");
        return NULL;
    }
    if (!s->ready || !o->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner not initialised or already exported");
        return NULL;
    }
    if (s->n_langs != o->n_langs || s->n_sites != o->n_sites || s->all_sites != o->all_sites) {
        PyErr_SetString(PyExc_ValueError, "absorb() needs scanners of the same languages and sites");
        return NULL;
    }
    if (s->e_id.n + o->e_id.n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "too many entities for one export");
        return NULL;
    }
    ColRef mine[MAX_COLUMNS], theirs[MAX_COLUMNS];
    int n = column_refs(s, mine);
    column_refs(o, theirs);
    int32_t rebase = (int32_t)s->e_id.n; /* read before e.id itself grows */
    s->oom = 0;
    for (int i = 0; i < n; i++) {
        int rc = mine[i].str ? str_append(mine[i].str, theirs[i].str)
                             : num_append(mine[i].num, theirs[i].num, mine[i].ent ? rebase : 0);
        if (rc != OK) {
            /* Some columns already grew: this scanner's rows no longer line up, so it is spent. */
            s->ready = 0;
            if (s->oom) return PyErr_NoMemory();
            PyErr_SetString(PyExc_OverflowError, "a column passed 2 GB in one export");
            return NULL;
        }
    }
    Marks empty = {0, 0, 0, 0, 0, 0, 0};
    truncate_all(o, &empty);
    Py_RETURN_NONE;
}

static PyMethodDef Scanner_methods[] = {
    {"scan", (PyCFunction)Scanner_scan, METH_VARARGS, Scanner_scan_doc},
    {"columns", (PyCFunction)Scanner_columns, METH_NOARGS, Scanner_columns_doc},
    {"absorb", (PyCFunction)Scanner_absorb, METH_O, Scanner_absorb_doc},
    {NULL, NULL, 0, NULL}};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "entbench._wdscan.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Scanner(languages, sites, all_sites=False): Wikidata entity lines -> column buffers (a fast path; see wdscan.c).",
    .tp_methods = Scanner_methods,
    .tp_init = (initproc)Scanner_init,
    .tp_new = PyType_GenericNew,
};

static PyMethodDef module_methods[] = {
    {"scan_routed", (PyCFunction)scan_routed, METH_VARARGS, scan_routed_doc},
    {"xxh64", (PyCFunction)py_xxh64, METH_VARARGS, "xxh64(data) -> XXH64 of the bytes, seed 0 (the routing hash)."},
    {"string_shards", (PyCFunction)string_shards, METH_VARARGS, string_shards_doc},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_wdscan",
                                    "Native fast path of the Wikidata dump scan (see wdscan.c).", -1, module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__wdscan(void) {
    init_classes();
    if (PyType_Ready(&ScannerType) < 0 || PyType_Ready(&ChunkType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(m, "Scanner", (PyObject *)&ScannerType) < 0) {
        Py_DECREF(&ScannerType);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "ABI", 5) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
