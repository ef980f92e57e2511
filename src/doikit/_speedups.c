/* doikit._speedups: the DOI value's state and identity, in C.
 *
 * Optional. doikit._doi.DOIState is the pure-Python definition and the reference; this
 * type behaves the same (a property test holds the two to each other) and exists for
 * speed: in CPython 3.11, calling a class whose __init__ is Python code costs about as
 * much as parsing the name, and so does a property. Here DOI(text) runs no Python frame
 * for the common presentations, and d.key is a read-only slot. Its parse() and
 * normalize() are doikit's functions of those names without their Python frame.
 *
 * The common presentations are decided by the compiled pattern of doikit._present
 * (_QUICK), which this module calls; everything else goes to the Python parser
 * (parse_rest), and non-ASCII keys to fold(). doikit._doi hands these in once, through
 * configure(). One thing is written here a second time, for speed (issue 15): quick_name()
 * reads _QUICK's shapes of ASCII text in one pass, escapes included, where calling the
 * pattern and decoding escapes in Python cost ten times more. It decides only a strict
 * subset of what _QUICK decides, and only when the answer is sure; anything else goes the
 * way above. Hypothesis properties hold this module to the Python parser on any text
 * (tests/test_speedups.py), and tests/test_properties.py holds _QUICK to the full parser.
 *
 * The state: the name as written, and the key (the name with ASCII letters lower-cased,
 * 004 ch. 3). Strings only, so no reference cycles: the type needs no GC support.
 *
 * The bulk loop (normalize_many, parse_many) reads a long list with a second thread;
 * arrow_many reads Arrow buffers without the GIL. Each says why and how where it is
 * defined.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h> /* offsetof */
#if defined(_MSC_VER)
#include <intrin.h> /* _BitScanForward64 */
#endif
#if defined(__linux__)
#include <sys/mman.h> /* madvise */
#endif

#if PY_VERSION_HEX < 0x030C0000 /* the member constants got public names in 3.12 */
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#define Py_READONLY READONLY
#endif

typedef struct {
    PyObject_HEAD
    PyObject *key;  /* the comparison key: the name, ASCII letters lower-cased */
    PyObject *name; /* the name exactly as written */
} StateObject;

static PyTypeObject StateType;

/* Set by configure(); see doikit._doi. */
static PyObject *quick;      /* _present._QUICK: the compiled pattern's match() */
static PyObject *parse_rest; /* _present.parse_rest(text, match) -> name */
static PyObject *fold;       /* _syntax.fold(name) -> key */
static PyObject *as_text;    /* _doi._as_text(value) -> str, or TypeError */
static PyObject *name_group; /* 2: the group of _QUICK that holds a plain name */
static PyObject *invalid_doi; /* doikit.InvalidDOI: caught per item by the bulk functions */

/* The key of an ASCII name: a new reference (the name itself when it has no capital). */
static PyObject *
ascii_key(PyObject *name)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(name);
    const Py_UCS1 *from = PyUnicode_1BYTE_DATA(name);
    Py_ssize_t at = 0;
    while (at < length && (from[at] < 'A' || from[at] > 'Z')) {
        at++;
    }
    if (at == length) {
        return Py_NewRef(name);
    }
    PyObject *key = PyUnicode_New(length, 127);
    if (key == NULL) {
        return NULL;
    }
    Py_UCS1 *to = PyUnicode_1BYTE_DATA(key);
    memcpy(to, from, (size_t)at);
    for (; at < length; at++) {
        Py_UCS1 c = from[at];
        to[at] = (c >= 'A' && c <= 'Z') ? (Py_UCS1)(c + ('a' - 'A')) : c;
    }
    return key;
}

/* The key of any name: a new reference. */
static PyObject *
key_of(PyObject *name)
{
    if (PyUnicode_IS_ASCII(name)) {
        return ascii_key(name);
    }
    return PyObject_CallOneArg(fold, name);
}

/* A new instance of *type* holding *name* (a reference this steals) and its *key*
 * (stolen too); NULL with both released when anything fails. */
static PyObject *
build(PyTypeObject *type, PyObject *name, PyObject *key)
{
    if (name == NULL || key == NULL) {
        Py_XDECREF(name);
        Py_XDECREF(key);
        return NULL;
    }
    StateObject *self = (StateObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        Py_DECREF(name);
        Py_DECREF(key);
        return NULL;
    }
    self->name = name;
    self->key = key;
    /* It holds two strings and nothing else, so it can never be part of a reference cycle;
     * but DOI, a class defined in Python, is a GC type, whose instances are tracked. Not
     * tracking them keeps the collector from walking millions of DOIs held in a list (as
     * the interpreter does for tuples of atoms). */
    if (PyObject_IS_GC((PyObject *)self)) {
        PyObject_GC_UnTrack(self);
    }
    return (PyObject *)self;
}

static int
configured(void)
{
    if (quick == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "doikit._speedups is used before doikit._doi configured it");
        return 0;
    }
    return 1;
}

static inline int
is_digit(Py_UCS1 c)
{
    return c >= '0' && c <= '9';
}

/* The value of each hex digit, 16 for any other byte: a table, not branches, since the
 * digits of escapes mix digits and letters as no branch predictor can guess. */
static const unsigned char HEX[256] = {
#define H16 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16
    H16, H16, H16,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 16, 16, 16, 16, 16,            /* '0'-'9' */
    16, 10, 11, 12, 13, 14, 15, 16, 16, 16, 16, 16, 16, 16, 16, 16,  /* 'A'-'F' */
    H16,
    16, 10, 11, 12, 13, 14, 15, 16, 16, 16, 16, 16, 16, 16, 16, 16,  /* 'a'-'f' */
    H16, H16, H16, H16, H16, H16, H16, H16, H16, /* 0x70-0xff */
#undef H16
};

static inline Py_UCS1
lower_ascii(Py_UCS1 c)
{
    return (c >= 'A' && c <= 'Z') ? (Py_UCS1)(c + ('a' - 'A')) : c;
}

/* Whether s[at:] starts with the lower-case ASCII *literal*, ASCII case ignored. */
static inline int
starts(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t at, const char *literal)
{
    for (; *literal; literal++, at++) {
        if (at >= n) {
            return 0;
        }
        Py_UCS1 c = s[at];
        if (c >= 'A' && c <= 'Z') {
            c = (Py_UCS1)(c + ('a' - 'A'));
        }
        if (c != (Py_UCS1)*literal) {
            return 0;
        }
    }
    return 1;
}

/* The resolvers' hosts, lower-case, each with its '/': doikit._syntax.RESOLVER_HOSTS, handed
 * in by configure(). */
#define MAX_HOSTS 16
#define MAX_HOST 64
static char hosts[MAX_HOSTS][MAX_HOST];
static Py_ssize_t host_lengths[MAX_HOSTS];
static Py_ssize_t host_count;

/* The length of a resolver host and its '/' at s[at:], or -1. */
static inline Py_ssize_t
host_length(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t at)
{
    if (at >= n) {
        return -1;
    }
    char first = (char)lower_ascii(s[at]);
    for (Py_ssize_t i = 0; i < host_count; i++) {
        if (hosts[i][0] == first && starts(s, n, at, hosts[i])) {
            return host_lengths[i];
        }
    }
    return -1;
}

/* The length of _QUICK's presentation head at the start of s, or -1 for none; *urn is set
 * for urn:doi:. (The heads, as _QUICK spells them: a resolver's URL with or without
 * http(s)://, 'doi:', 'doi: ', 'doi ', 'info:doi/', 'hdl:' and 'urn:doi:', ASCII case
 * ignored.) Chosen by the first letter. */
static Py_ssize_t
head_length(const Py_UCS1 *s, Py_ssize_t n, int *urn)
{
    *urn = 0;
    if (n < 4) {
        return -1;
    }
    Py_ssize_t host;
    switch (lower_ascii(s[0])) {
    case 'h':
        if (starts(s, n, 0, "https://")) {
            host = host_length(s, n, 8);
            return host < 0 ? -1 : 8 + host;
        }
        if (starts(s, n, 0, "http://")) {
            host = host_length(s, n, 7);
            return host < 0 ? -1 : 7 + host;
        }
        if (starts(s, n, 0, "hdl:")) {
            return 4;
        }
        break;
    case 'd':
        if (starts(s, n, 0, "doi:")) {
            return (n > 4 && s[4] == ' ') ? 5 : 4;
        }
        if (starts(s, n, 0, "doi ")) {
            return 4;
        }
        break;
    case 'i':
        if (starts(s, n, 0, "info:doi/")) {
            return 9;
        }
        break;
    case 'u':
        if (starts(s, n, 0, "urn:doi:")) {
            *urn = 1;
            return 8;
        }
        break;
    default:
        break;
    }
    return host_length(s, n, 0);
}

/* Eight bytes at a time (SWAR): each test gives the high bit of every byte it holds for
 * (exact as "any byte", which is all that is asked here). */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

static inline uint64_t
load8(const Py_UCS1 *p)
{
    uint64_t word;
    memcpy(&word, p, 8);
    return word;
}

static inline uint64_t
any_below(uint64_t word, unsigned limit) /* a byte < limit (limit <= 128) */
{
    return (word - ONES * limit) & ~word & HIGHS;
}

static inline uint64_t
any_above(uint64_t word, unsigned limit) /* a byte > limit (limit < 128) */
{
    return ((word + ONES * (127 - limit)) | word) & HIGHS;
}

static inline uint64_t
any_equal(uint64_t word, unsigned c)
{
    uint64_t x = word ^ (ONES * c);
    return (x - ONES) & ~x & HIGHS;
}

/* The high bit of each byte of *word* that is 'A'-'Z' (exact for ASCII bytes). */
static inline uint64_t
upper8(uint64_t word)
{
    return (word + ONES * (128 - 'A')) & ~(word + ONES * (127 - 'Z')) & HIGHS;
}

/* The ASCII bytes of *word* with 'A'-'Z' lower-cased. */
static inline uint64_t
lower8(uint64_t word)
{
    return word | upper8(word) >> 2;
}

/* The high bit of exactly the bytes of *word* equal to *c* (any_equal may also mark the
 * byte after one: enough for "any", not to count or find them). */
static inline uint64_t
exact_equal(uint64_t word, unsigned c)
{
    const uint64_t lows = ONES * 0x7F;
    uint64_t x = word ^ (ONES * c);
    return ~(((x & lows) + lows) | x | lows);
}

/* How many bytes a mask of high bits marks. */
static inline Py_ssize_t
marked_bytes(uint64_t mask)
{
    return (Py_ssize_t)(((mask >> 7) * ONES) >> 56);
}

/* The first byte (lowest address) a non-zero mask of high bits of a word read by load8()
 * marks: the lowest-order one on a little-endian machine, the highest-order on a
 * big-endian one. */
static inline Py_ssize_t
first_marked(uint64_t mask)
{
#if PY_BIG_ENDIAN
    Py_ssize_t first = 0;
    while (!(mask & (HIGHS & ~(HIGHS >> 8)) >> (8 * first))) {
        first++;
    }
    return first;
#elif defined(_MSC_VER)
    unsigned long bit;
    _BitScanForward64(&bit, mask);
    return (Py_ssize_t)(bit / 8);
#else
    return (Py_ssize_t)(__builtin_ctzll(mask) / 8);
#endif
}

/* The bytes of a word read by load8() at the *seen* lowest addresses, cleared. */
static inline uint64_t
unseen_bytes(uint64_t word, Py_ssize_t seen)
{
    if (seen == 0) {
        return word;
    }
#if PY_BIG_ENDIAN
    return word & (~(uint64_t)0 >> (8 * seen));
#else
    return word & (~(uint64_t)0 << (8 * seen));
#endif
}

/* A text of one of _QUICK's shapes, as quick_shape() reads it: where the name starts (after
 * the head), where its prefix ends and its suffix starts, and what it is. */
typedef struct {
    Py_ssize_t start, prefix_end, suffix;
    Py_ssize_t length; /* the name's, escapes decoded */
    int urn, bare, escapes;
    int upper; /* whether the suffix as written has an ASCII capital */
} Shape;

/* Whether the bytes s[0:n] have one of _QUICK's shapes this decides (then *shape* says
 * which): a bare name of printable ASCII without '%' (not ending in ' ' or '/'), or a head
 * and a name of printable ASCII without ' ', '#' or '?', escapes allowed. Any byte outside
 * ASCII makes it undecided, so UTF-8 can be read as it is. */
static int
quick_shape(const Py_UCS1 *s, Py_ssize_t n, Shape *shape)
{
    int urn = 0, bare = n >= 3 && s[0] == '1' && s[1] == '0' && s[2] == '.';
    Py_ssize_t start = bare ? 0 : head_length(s, n, &urn);
    if (start < 0) {
        return 0;
    }
    /* the prefix: 10. and digits, with '.' subdivisions */
    Py_ssize_t at = start;
    if (!(n - at > 3 && s[at] == '1' && s[at + 1] == '0' && s[at + 2] == '.' &&
          is_digit(s[at + 3]))) {
        return 0;
    }
    at += 3;
    for (;;) {
        while (at < n && is_digit(s[at])) {
            at++;
        }
        if (at + 1 < n && s[at] == '.' && is_digit(s[at + 1])) {
            at++;
            continue;
        }
        break;
    }
    Py_ssize_t prefix_end = at;
    Py_ssize_t percents = 0; /* escapes, each three bytes for one */
    if (at < n && s[at] == (urn ? ':' : '/')) {
        at++;
    }
    else if (!bare && !urn && at + 2 < n && s[at] == '%' && s[at + 1] == '2' &&
             (s[at + 2] == 'F' || s[at + 2] == 'f')) {
        at += 3;
        percents = 1;
    }
    else {
        return 0;
    }
    Py_ssize_t suffix = at;
    if (suffix >= n) {
        return 0;
    }
    /* The suffix's characters, eight at a time without branches, the last part as one
     * overlapping word (its bytes already seen masked off where they are counted). */
    uint64_t bad = 0, upper = 0;
    if (bare) { /* literal: printable ASCII and spaces, no '%', not ending in ' ' or '/' */
        for (; at + 8 <= n; at += 8) {
            uint64_t w = load8(s + at);
            bad |= any_below(w, ' ') | any_above(w, '~') | any_equal(w, '%');
            upper |= upper8(w);
        }
        if (at < n && n - suffix >= 8) {
            uint64_t w = load8(s + n - 8);
            bad |= any_below(w, ' ') | any_above(w, '~') | any_equal(w, '%');
            upper |= upper8(w);
            at = n;
        }
        for (; at < n; at++) {
            Py_UCS1 c = s[at];
            bad |= (uint64_t)((Py_UCS1)(c - ' ') > '~' - ' ') | (uint64_t)(c == '%');
            upper |= (uint64_t)((Py_UCS1)(c - 'A') < 26);
        }
        if (bad || s[n - 1] == ' ' || s[n - 1] == '/') {
            return 0;
        }
    }
    else { /* after a head: printable ASCII but ' ', '#' and '?'; escapes decoded */
        for (; at + 8 <= n; at += 8) {
            uint64_t w = load8(s + at);
            bad |= any_below(w, '!') | any_above(w, '~') | any_equal(w, '#') | any_equal(w, '?');
            upper |= upper8(w);
            percents += marked_bytes(exact_equal(w, '%'));
        }
        if (at < n && n - suffix >= 8) {
            uint64_t w = load8(s + n - 8);
            bad |= any_below(w, '!') | any_above(w, '~') | any_equal(w, '#') | any_equal(w, '?');
            upper |= upper8(w);
            percents += marked_bytes(unseen_bytes(exact_equal(w, '%'), at - (n - 8)));
            at = n;
        }
        for (; at < n; at++) {
            Py_UCS1 c = s[at];
            bad |= (uint64_t)((Py_UCS1)(c - '!') > '~' - '!') | (uint64_t)(c == '#') |
                   (uint64_t)(c == '?');
            upper |= (uint64_t)((Py_UCS1)(c - 'A') < 26);
            percents += c == '%';
        }
        if (bad) {
            return 0;
        }
    }
    if (3 * percents > n - prefix_end) { /* (malformed escapes: each takes three bytes) */
        return 0;
    }
    shape->start = start;
    shape->prefix_end = prefix_end;
    shape->suffix = suffix;
    shape->length = n - start - 2 * percents;
    shape->urn = urn;
    shape->bare = bare;
    shape->escapes = percents != 0;
    shape->upper = upper != 0;
    return 1;
}

/* Write the name of s[0:n], a text of *shape*, into *out* (room for shape->length bytes),
 * or with *key* its key (ASCII letters lower-cased): a URN's ':' becomes the '/' it stands
 * for, escapes are decoded. 0, or -1 when an escape is not two hex digits for a printable
 * ASCII character (the Python parser then decides). Eight bytes at a time while the name
 * has room for them; a word with a '%' is written up to it, then the escape. */
static int
quick_copy(const Py_UCS1 *s, Py_ssize_t n, const Shape *shape, int key, Py_UCS1 *out)
{
    Py_ssize_t length = 0, at = shape->start, room = shape->length;
    if (shape->urn) {
        if (room < shape->prefix_end - at + 1) { /* (only where an escape is malformed) */
            return -1;
        }
        memcpy(out, s + at, (size_t)(shape->prefix_end - at)); /* digits and dots */
        length = shape->prefix_end - at;
        out[length++] = '/';
        at = shape->suffix;
    }
    while (at < n) {
        if (n - at >= 8 && room - length >= 8) {
            uint64_t w = load8(s + at);
            uint64_t percent = shape->escapes ? exact_equal(w, '%') : 0;
            uint64_t v = key ? lower8(w) : w;
            memcpy(out + length, &v, 8);
            if (percent == 0) {
                at += 8;
                length += 8;
                continue;
            }
            Py_ssize_t before = first_marked(percent);
            at += before;
            length += before;
        }
        else if (length >= room) { /* (only where an escape is malformed) */
            return -1;
        }
        else if (s[at] != '%') {
            Py_UCS1 c = s[at++];
            out[length++] = key ? lower_ascii(c) : c;
            continue;
        }
        /* an escape */
        if (at + 2 >= n) {
            return -1;
        }
        unsigned high = HEX[s[at + 1]], low = HEX[s[at + 2]];
        Py_UCS1 c = (Py_UCS1)(16 * high + low);
        if ((high | low) > 15 || c < ' ' || c > '~') {
            return -1;
        }
        out[length++] = key ? lower_ascii(c) : c;
        at += 3;
    }
    return length == room ? 0 : -1; /* (every byte of the name written, or undecided) */
}

/* The name in *text* when it has one of _QUICK's shapes and is ASCII (a new reference), or
 * with *key* its key; NULL without an exception when this cannot decide (the pattern and
 * the Python parser then do), NULL with one on a memory error. */
static PyObject *
quick_name(PyObject *text, int key)
{
    if (!PyUnicode_CheckExact(text) || !PyUnicode_IS_ASCII(text)) {
        /* (parse() and normalize() take any object: the pattern refuses it; a str subclass
         * goes that way too, so that the answer is an exact str, as Python's is) */
        return NULL;
    }
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Shape shape;
    if (!quick_shape(s, n, &shape)) {
        return NULL;
    }
    if (shape.bare && !(key && shape.upper)) {
        return Py_NewRef(text);
    }
    if (!key && !shape.urn && !shape.escapes) {
        return PyUnicode_Substring(text, shape.start, n);
    }
    PyObject *out = PyUnicode_New(shape.length, 127);
    if (out != NULL && quick_copy(s, n, &shape, key, PyUnicode_1BYTE_DATA(out)) < 0) {
        Py_CLEAR(out); /* an escape it cannot decode: undecided */
    }
    return out;
}

/* The bare name in *text* (a new reference) as doikit._present.parse reads it, without the
 * C reader: a plain name that the compiled pattern decides whole (group 2, no escapes) is
 * the name; anything else goes to the Python parser, which raises InvalidDOI where it is
 * no DOI. (For the texts quick_name() has already left undecided.) */
static PyObject *
pattern_name(PyObject *text)
{
    PyObject *match = PyObject_CallOneArg(quick, text);
    if (match == NULL) {
        return NULL;
    }
    if (match != Py_None) {
        PyObject *name = PyObject_GetItem(match, name_group);
        if (name == NULL) {
            Py_DECREF(match);
            return NULL;
        }
        if (name != Py_None) {
            Py_ssize_t percent =
                PyUnicode_FindChar(name, '%', 0, PyUnicode_GET_LENGTH(name), 1);
            if (percent == -1) {
                Py_DECREF(match);
                return name;
            }
            if (percent == -2) {
                Py_DECREF(name);
                Py_DECREF(match);
                return NULL;
            }
        }
        Py_DECREF(name);
    }
    PyObject *name = PyObject_CallFunctionObjArgs(parse_rest, text, match, NULL);
    Py_DECREF(match);
    return name;
}

/* The bare name in *text* (a new reference): by the C reader where it decides, else by the
 * pattern and the Python parser. */
static PyObject *
parse_name(PyObject *text)
{
    PyObject *decided = quick_name(text, 0);
    if (decided != NULL || PyErr_Occurred()) {
        return decided;
    }
    return pattern_name(text);
}

/* The key of the name that pattern_name() reads in *text* (a new reference). */
static PyObject *
pattern_key(PyObject *text)
{
    PyObject *name = pattern_name(text);
    if (name != NULL) {
        Py_SETREF(name, key_of(name));
    }
    return name;
}

static PyObject *
state_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (!configured()) {
        return NULL;
    }
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", type->tp_name);
        return NULL;
    }
    if (PyTuple_GET_SIZE(args) != 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly one argument (%zd given)",
                     type->tp_name, PyTuple_GET_SIZE(args));
        return NULL;
    }
    PyObject *text = PyTuple_GET_ITEM(args, 0);
    if (PyUnicode_CheckExact(text)) {
        Py_INCREF(text);
    }
    else {
        text = PyObject_CallOneArg(as_text, text);
        if (text == NULL) {
            return NULL;
        }
    }
    PyObject *name = parse_name(text);
    Py_DECREF(text);
    if (name == NULL) {
        return NULL;
    }
    return build(type, name, key_of(name));
}

static PyObject *
state_known(PyObject *cls, PyObject *name)
{
    if (!configured()) {
        return NULL;
    }
    if (!PyUnicode_CheckExact(name)) {
        PyErr_Format(PyExc_TypeError, "_known() takes a str, not %.100s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    return build((PyTypeObject *)cls, Py_NewRef(name), key_of(name));
}

static void
state_dealloc(StateObject *self)
{
    Py_XDECREF(self->key);
    Py_XDECREF(self->name);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
state_str(StateObject *self)
{
    return Py_NewRef(self->name);
}

static Py_hash_t
state_hash(StateObject *self)
{
    return PyObject_Hash(self->key);
}

static PyObject *
state_richcompare(PyObject *self, PyObject *other, int op)
{
    if (!PyObject_TypeCheck(self, &StateType) || !PyObject_TypeCheck(other, &StateType)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    /* Keys are always exact str: straight to str's comparison. */
    return PyUnicode_RichCompare(((StateObject *)self)->key, ((StateObject *)other)->key, op);
}

static PyMemberDef state_members[] = {
    {"key", Py_T_OBJECT_EX, offsetof(StateObject, key), Py_READONLY,
     PyDoc_STR("The comparison key: the name with ASCII letters lower-cased, nothing else.")},
    /* The names of DOIState's slots, which the methods of DOI read. */
    {"_DOI__key", Py_T_OBJECT_EX, offsetof(StateObject, key), Py_READONLY, NULL},
    {"_DOI__name", Py_T_OBJECT_EX, offsetof(StateObject, name), Py_READONLY, NULL},
    {NULL},
};

static PyMethodDef state_methods[] = {
    {"_known", (PyCFunction)state_known, METH_O | METH_CLASS,
     PyDoc_STR("The value for a name the caller has checked is valid (internal).")},
    {NULL},
};

static PyTypeObject StateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "doikit._speedups.DOIState",
    .tp_doc = PyDoc_STR("DOIState(text, /)\n--\n\n"
                        "The state and identity of a DOI value (doikit._doi.DOIState, in C)."),
    .tp_basicsize = sizeof(StateObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = state_new,
    .tp_dealloc = (destructor)state_dealloc,
    .tp_str = (reprfunc)state_str,
    .tp_hash = (hashfunc)state_hash,
    .tp_richcompare = state_richcompare,
    .tp_members = state_members,
    .tp_methods = state_methods,
};

/* --- the extractor's scan, in C (issue 14) -------------------------------------------
 *
 * doikit._extract._scan's loop without a Python frame per DOI: it runs the candidate
 * pattern's finditer and builds the Found of each candidate the pattern has decided (in
 * text, and in a URL when the candidate holds no escape, no second '/' and cannot end in a
 * glued file), trimmed of trailing punctuation as _scan does; every other candidate goes
 * to _extract._decide, the same Python code the pure-Python scan calls, which answers
 * (found or None, position, action). The pure-Python _scan is the reference; a property
 * test holds the two to each other on any text, whole and in chunks. */

typedef struct {
    PyObject_HEAD
    PyObject *finditer; /* the candidate pattern's finditer(text, position) */
    PyObject *text;     /* an exact str */
    PyObject *matches;  /* the running finditer, or NULL before a (re)start */
    PyObject *doi;      /* the DOI class (a subtype of DOIState) */
    PyObject *found;    /* the Found class (a subtype of tuple) */
    PyObject *decide;   /* _decide(text, match, resume, base) -> (found | None, position, action) */
    PyObject *resume;   /* a list (a stream's chunk), or None */
    PyObject *base_int; /* base as an int, for _decide */
    Py_ssize_t position; /* where the scan goes on: past what has been taken or refused */
    Py_ssize_t base;     /* the stream offset of text[0] */
    Py_ssize_t tail;     /* _extract._TAIL */
    int done;
    int running;         /* inside scan_next (which calls Python code): as a generator is */
    char trail[128];    /* _extract._TRAIL_CHARS: cut from a decided candidate's end */
    char url_odd[128];  /* _extract._GLUED_FILE_LAST: a URL candidate so ending goes to _decide */
} ScanObject;

enum { GO_ON = 0, RESTART = 1, STOP = 2 }; /* _decide's actions (_extract) */

static PyObject *str_lastindex, *str_span;

/* Whether *c* is one of the ASCII characters a set of *flags* marks. */
static inline int
marked(const char *flags, Py_UCS4 c)
{
    return c < 128 && flags[c];
}

/* Mark in *flags* the characters of *chars*, which must be ASCII. */
static int
mark(char *flags, PyObject *chars)
{
    if (!PyUnicode_IS_ASCII(chars)) {
        PyErr_SetString(PyExc_ValueError, "Scan(): a character set must be ASCII (internal)");
        return -1;
    }
    const Py_UCS1 *each = PyUnicode_1BYTE_DATA(chars);
    for (Py_ssize_t i = 0; i < PyUnicode_GET_LENGTH(chars); i++) {
        flags[each[i]] = 1;
    }
    return 0;
}

static PyObject *
scan_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *finditer, *text, *resume, *doi, *found, *decide, *trail, *url_odd;
    Py_ssize_t position, base, tail;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Scan() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OUnOnOOOnUU:Scan", &finditer, &text, &position, &resume, &base,
                          &doi, &found, &decide, &tail, &trail, &url_odd)) {
        return NULL;
    }
    if (!PyUnicode_CheckExact(text) || !PyType_Check(doi) ||
        !PyType_IsSubtype((PyTypeObject *)doi, &StateType) || !PyType_Check(found) ||
        !PyType_IsSubtype((PyTypeObject *)found, &PyTuple_Type) ||
        (resume != Py_None && !PyList_Check(resume))) {
        PyErr_SetString(PyExc_TypeError, "Scan(): arguments of the wrong type (internal)");
        return NULL;
    }
    if (position < 0 || base < 0 || base > PY_SSIZE_T_MAX - PyUnicode_GET_LENGTH(text)) {
        PyErr_SetString(PyExc_ValueError, "Scan(): a position out of range (internal)");
        return NULL;
    }
    ScanObject *self = (ScanObject *)type->tp_alloc(type, 0); /* (zeroed) */
    if (self == NULL) {
        return NULL;
    }
    if (mark(self->trail, trail) < 0 || mark(self->url_odd, url_odd) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->finditer = Py_NewRef(finditer);
    self->text = Py_NewRef(text);
    self->doi = Py_NewRef(doi);
    self->found = Py_NewRef(found);
    self->decide = Py_NewRef(decide);
    self->resume = Py_NewRef(resume);
    self->base_int = PyLong_FromSsize_t(base);
    if (self->base_int == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->position = position;
    self->base = base;
    self->tail = tail;
    return (PyObject *)self;
}

static int
scan_traverse(ScanObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->finditer);
    Py_VISIT(self->text);
    Py_VISIT(self->matches);
    Py_VISIT(self->doi);
    Py_VISIT(self->found);
    Py_VISIT(self->decide);
    Py_VISIT(self->resume);
    Py_VISIT(self->base_int);
    return 0;
}

static int
scan_clear(ScanObject *self)
{
    Py_CLEAR(self->finditer);
    Py_CLEAR(self->text);
    Py_CLEAR(self->matches);
    Py_CLEAR(self->doi);
    Py_CLEAR(self->found);
    Py_CLEAR(self->decide);
    Py_CLEAR(self->resume);
    Py_CLEAR(self->base_int);
    return 0;
}

static void
scan_dealloc(ScanObject *self)
{
    PyObject_GC_UnTrack(self);
    scan_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The Found of text[start:end] at the stream offset base + start (a new reference).
 * *from* and *to*, when not NULL, are those offsets as ints already (the match's own). */
static PyObject *
scan_found(ScanObject *self, Py_ssize_t start, Py_ssize_t end, PyObject *from, PyObject *to)
{
    PyObject *name = PyUnicode_Substring(self->text, start, end);
    if (name == NULL) {
        return NULL;
    }
    PyObject *doi = build((PyTypeObject *)self->doi, Py_NewRef(name), key_of(name));
    if (doi == NULL) {
        Py_DECREF(name);
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)self->found;
    PyObject *found = type->tp_alloc(type, 4); /* as tuple.__new__(Found, …) makes it */
    from = from != NULL ? Py_NewRef(from) : PyLong_FromSsize_t(self->base + start);
    to = to != NULL ? Py_NewRef(to) : PyLong_FromSsize_t(self->base + end);
    if (found == NULL || from == NULL || to == NULL) {
        Py_XDECREF(found);
        Py_XDECREF(from);
        Py_XDECREF(to);
        Py_DECREF(doi);
        Py_DECREF(name);
        return NULL;
    }
    PyTuple_SET_ITEM(found, 0, doi);
    PyTuple_SET_ITEM(found, 1, from);
    PyTuple_SET_ITEM(found, 2, to);
    PyTuple_SET_ITEM(found, 3, name);
    return found;
}

static PyObject *scan_decided_span(ScanObject *self, int in_url, PyObject *span);

/* The Found of a candidate the pattern has decided (_scan's first two branches), or NULL:
 * with an exception set on failure, without one when _decide must see the candidate. */
static PyObject *
scan_decided(ScanObject *self, PyObject *match)
{
    PyObject *kind = PyObject_GetAttr(match, str_lastindex);
    if (kind == NULL) {
        return NULL;
    }
    int in_url = kind != Py_None;
    long group = in_url ? PyLong_AsLong(kind) : 0;
    Py_DECREF(kind);
    if (group != 0 && group != 1) {
        return NULL; /* (an error from PyLong_AsLong stays set) */
    }
    PyObject *span = PyObject_CallMethodNoArgs(match, str_span);
    if (span == NULL) {
        return NULL;
    }
    PyObject *found = scan_decided_span(self, in_url, span);
    Py_DECREF(span);
    return found;
}

/* scan_decided's answer for the match's *span*: whose ints the Found takes when they are
 * its offsets (saving two ints per DOI in a whole text). */
static PyObject *
scan_decided_span(ScanObject *self, int in_url, PyObject *span)
{
    if (!PyTuple_CheckExact(span) || PyTuple_GET_SIZE(span) != 2) {
        PyErr_SetString(PyExc_TypeError, "Scan(): a match's span is no pair (internal)");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 0));
    Py_ssize_t end = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 1));
    if (PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t matched_end = end;
    Py_ssize_t length = PyUnicode_GET_LENGTH(self->text);
    if (start < 0 || start > end || end > length) {
        PyErr_SetString(PyExc_ValueError, "Scan(): a match outside the text (internal)");
        return NULL;
    }
    if (self->resume != Py_None && end >= length - 1) {
        return NULL; /* in a stream, the next chunk may go on with it */
    }
    int unicode_kind = PyUnicode_KIND(self->text);
    const void *data = PyUnicode_DATA(self->text);
    while (end > start && marked(self->trail, PyUnicode_READ(unicode_kind, data, end - 1))) {
        end--;
    }
    if (end == start) {
        return NULL; /* nothing left (the pattern's matches start with '10.': never) */
    }
    if (in_url) {
        /* as _extract._url_plain: else _url_name has something to say (an escape, a view
         * or file after a second '/', a file glued to the end) */
        if (marked(self->url_odd, PyUnicode_READ(unicode_kind, data, end - 1))) {
            return NULL;
        }
        int slashes = 0;
        for (Py_ssize_t at = start; at < end; at++) {
            Py_UCS4 c = PyUnicode_READ(unicode_kind, data, at);
            if (c == '%' || (c == '/' && ++slashes > 1)) {
                return NULL;
            }
        }
    }
    self->position = end;
    PyObject *from = self->base == 0 ? PyTuple_GET_ITEM(span, 0) : NULL;
    PyObject *to = self->base == 0 && end == matched_end ? PyTuple_GET_ITEM(span, 1) : NULL;
    return scan_found(self, start, end, from, to);
}

static PyObject *scan_step(ScanObject *self);

static PyObject *
scan_next(ScanObject *self)
{
    /* _decide is Python code, during which another thread may call next() on the same
     * scan: refused, as a running generator refuses it. */
    if (self->running) {
        PyErr_SetString(PyExc_ValueError, "the scan is already running");
        return NULL;
    }
    self->running = 1;
    PyObject *found = scan_step(self);
    self->running = 0;
    if (found == NULL && PyErr_Occurred()) {
        self->done = 1; /* as a generator that raised is finished */
        Py_CLEAR(self->matches);
    }
    return found;
}

static PyObject *
scan_step(ScanObject *self)
{
    while (!self->done) {
        if (self->matches == NULL) {
            self->matches = PyObject_CallFunction(self->finditer, "On", self->text,
                                                  self->position);
            if (self->matches == NULL) {
                return NULL;
            }
            if (!PyIter_Check(self->matches)) {
                Py_CLEAR(self->matches);
                PyErr_SetString(PyExc_TypeError, "Scan(): finditer gave no iterator (internal)");
                return NULL;
            }
        }
        PyObject *match = PyIter_Next(self->matches);
        if (match == NULL) {
            if (PyErr_Occurred()) {
                return NULL;
            }
            self->done = 1;
            Py_CLEAR(self->matches);
            if (self->resume != Py_None) {
                /* A start may be split at the end of the chunk ('…10.10' + '00/182'). */
                Py_ssize_t next = PyUnicode_GET_LENGTH(self->text) - self->tail;
                PyObject *at = PyLong_FromSsize_t(self->position > next ? self->position : next);
                if (at == NULL || PyList_Append(self->resume, at) < 0) {
                    Py_XDECREF(at);
                    return NULL;
                }
                Py_DECREF(at);
            }
            return NULL;
        }
        PyObject *found = scan_decided(self, match);
        if (found != NULL || PyErr_Occurred()) {
            Py_DECREF(match);
            return found;
        }
        PyObject *call[] = {self->text, match, self->resume, self->base_int};
        PyObject *answer = PyObject_Vectorcall(self->decide, call, 4, NULL);
        Py_DECREF(match);
        if (answer == NULL) {
            return NULL;
        }
        if (!PyTuple_CheckExact(answer) || PyTuple_GET_SIZE(answer) != 3) {
            Py_DECREF(answer);
            PyErr_SetString(PyExc_TypeError, "_decide() must give a 3-tuple (internal)");
            return NULL;
        }
        Py_ssize_t position = PyLong_AsSsize_t(PyTuple_GET_ITEM(answer, 1));
        long action = PyLong_AsLong(PyTuple_GET_ITEM(answer, 2));
        if (PyErr_Occurred()) {
            Py_DECREF(answer);
            return NULL;
        }
        self->position = position;
        if (action == STOP) {
            self->done = 1; /* a stream's chunk ends inside a DOI: _walk has set resume */
            Py_CLEAR(self->matches);
        }
        else if (action == RESTART) {
            Py_CLEAR(self->matches); /* scan on from position, past what _walk read */
        }
        found = PyTuple_GET_ITEM(answer, 0);
        if (found != Py_None) {
            Py_INCREF(found);
            Py_DECREF(answer);
            return found;
        }
        Py_DECREF(answer);
    }
    return NULL;
}

static PyTypeObject ScanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "doikit._speedups.Scan",
    .tp_doc = PyDoc_STR("Scan(finditer, text, position, resume, base, doi, found, decide, tail, "
                        "trail, url_odd)"
                        "\n--\n\nThe extractor's scan of one text (doikit._extract._scan, "
                        "in C; internal)."),
    .tp_basicsize = sizeof(ScanObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = scan_new,
    .tp_dealloc = (destructor)scan_dealloc,
    .tp_traverse = (traverseproc)scan_traverse,
    .tp_clear = (inquiry)scan_clear,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)scan_next,
};

static PyObject *
configure(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *quick_, *parse_rest_, *fold_, *as_text_, *invalid_doi_, *hosts_;
    if (!PyArg_ParseTuple(args, "OOOOOO!:configure", &quick_, &parse_rest_, &fold_, &as_text_,
                          &invalid_doi_, &PyTuple_Type, &hosts_)) {
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(hosts_);
    if (count > MAX_HOSTS) {
        PyErr_SetString(PyExc_ValueError, "too many resolver hosts");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) { /* all checked before any is written */
        Py_ssize_t size;
        if (PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(hosts_, i), &size) == NULL) {
            return NULL;
        }
        if (size + 2 > MAX_HOST) {
            PyErr_SetString(PyExc_ValueError, "a resolver host is too long");
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t size;
        const char *host = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(hosts_, i), &size);
        for (Py_ssize_t k = 0; k < size; k++) { /* lower-case, as starts() compares */
            hosts[i][k] = (char)lower_ascii((Py_UCS1)host[k]);
        }
        hosts[i][size] = '/';
        hosts[i][size + 1] = '\0';
        host_lengths[i] = size + 1;
    }
    host_count = count;
    Py_XSETREF(quick, Py_NewRef(quick_));
    Py_XSETREF(parse_rest, Py_NewRef(parse_rest_));
    Py_XSETREF(fold, Py_NewRef(fold_));
    Py_XSETREF(as_text, Py_NewRef(as_text_));
    Py_XSETREF(invalid_doi, Py_NewRef(invalid_doi_));
    Py_RETURN_NONE;
}

/* The key of the name in *text* (a new reference): decided and lower-cased in one pass
 * where quick_name can, else parsed, then keyed. */
static PyObject *
normalized(PyObject *text)
{
    PyObject *key = quick_name(text, 1);
    if (key != NULL || PyErr_Occurred()) {
        return key;
    }
    return pattern_key(text); /* (not parse_name: the C reader has had its say) */
}

/* The InvalidDOI being raised, taken off the error indicator (a new reference). */
static PyObject *
take_raised(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    return value;
#endif
}

/* One answer of the bulk loop for *item*, the *index*th: see bulk(). */
static PyObject *
bulk_one(PyObject *item, Py_ssize_t index, int want_key, int report)
{
    if (item == Py_None) {
        return Py_NewRef(Py_None);
    }
    if (!PyUnicode_Check(item)) {
        PyErr_Format(PyExc_TypeError, "item %zd is a %.100s, not a str or None", index,
                     Py_TYPE(item)->tp_name);
        return NULL;
    }
    PyObject *answer = want_key ? normalized(item) : parse_name(item);
    if (answer == NULL && PyErr_ExceptionMatches(invalid_doi)) {
        if (report) {
            return take_raised();
        }
        PyErr_Clear();
        return Py_NewRef(Py_None);
    }
    return answer;
}

#if defined(_MSC_VER)
#define PREFETCH(address) ((void)(address))
#else
#define PREFETCH(address) __builtin_prefetch(address)
#endif

/* Fetch the item AHEAD places after item *i* of *items* (up to *end*) into the cache, its
 * header and the start of its text: each is an object of its own, wherever the allocator
 * put it. */
enum { AHEAD = 16 };
static inline void
prefetch_item(PyObject *const *items, Py_ssize_t i, Py_ssize_t end)
{
    if (i + AHEAD < end) {
        const char *ahead = (const char *)items[i + AHEAD];
        PREFETCH(ahead);
        PREFETCH(ahead + 64);
    }
}

/* A second reader (issue 15). The answers' strings must be made holding the GIL, one after
 * another; reading the texts need not be. So for a long list or tuple a helper thread
 * reads the texts of the chunk ahead (quick_shape and quick_copy, into a buffer of its own)
 * while this thread makes the strings of the chunk it read before: two cores share the
 * work, the answers are the same. The helper reads only while this thread runs C code
 * that neither changes the list nor frees anything in it: before a text that needs the
 * Python parser (whose Python code may let another thread change the list), the helper
 * is stopped and joined, what it read is no longer used, and a new one starts two chunks
 * later. An answer is taken from the helper only for the very object it read at that
 * place. POSIX threads only, and not in free-threaded builds (where no GIL keeps the list
 * still while the helper reads it); elsewhere, or with one CPU to run on, one thread reads. */
#if (defined(__unix__) || defined(__APPLE__)) && !defined(Py_GIL_DISABLED)
#include <pthread.h>
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#endif
#define READER 1
#define BLOCK_ITEMS 256
#define BLOCKS 16 /* a chunk's */
#define CHUNK_ITEMS (BLOCKS * BLOCK_ITEMS)
#define BLOCK_BYTES (BLOCK_ITEMS * 64)
#define READER_AT_LEAST (4 * CHUNK_ITEMS) /* items: a shorter list is read by one thread */
#define READER_STARTS 64                  /* at most, per call */

enum { UNREAD = 0, ITSELF = 1, MADE = 2 };

/* A chunk's reading, shared: either thread claims its blocks, one at a time, in order
 * (this one does while it would otherwise wait for the block it needs next), and this one
 * takes each block's answers as soon as the block is read. A block's MADE answers are
 * written one after another from the start of the block's part of *bytes*. */
typedef struct {
    Py_ssize_t tag;      /* the chunk being read here (atomic; -1: none yet) */
    int claimed;         /* blocks claimed (atomic) */
    int ready[BLOCKS];   /* whether each block is read (atomic; valid once tag is seen) */
    PyObject *seen[CHUNK_ITEMS]; /* the object read at each place (NULL: none) */
    uint32_t end[CHUNK_ITEMS];   /* where each MADE answer ends in its block's bytes */
    unsigned char how[CHUNK_ITEMS];
    Py_UCS1 bytes[BLOCKS * BLOCK_BYTES];
} Slot;

typedef struct {
    PyObject *texts;    /* the list or tuple */
    Py_ssize_t size;    /* its size when the helper started: its chunks are [0, size) */
    Py_ssize_t first;   /* the helper's first chunk */
    Py_ssize_t allowed; /* it may start the chunks before this one */
    int key, stop, running;
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    Slot slots[2]; /* chunk k in slots[k % 2] */
} Reader;

/* Whether this process may run on two CPUs or more. */
static int
two_cpus(void)
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        return CPU_COUNT(&set) >= 2;
    }
#endif
    return sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

/* Read block *block* of chunk *chunk*: what the C reader decides of each text. */
static void
read_block(Reader *r, Slot *slot, Py_ssize_t chunk, int block)
{
    Py_ssize_t begin = chunk * CHUNK_ITEMS + block * BLOCK_ITEMS;
    Py_ssize_t end = Py_MIN(Py_MIN(begin + BLOCK_ITEMS, r->size), Py_SIZE(r->texts));
    PyObject **items = PySequence_Fast_ITEMS(r->texts);
    Py_UCS1 *bytes = slot->bytes + (size_t)block * BLOCK_BYTES;
    Py_ssize_t used = 0, j = (Py_ssize_t)block * BLOCK_ITEMS;
    for (Py_ssize_t i = begin; i < end; i++, j++) {
        prefetch_item(items, i, end);
        PyObject *item = items[i];
        slot->seen[j] = item;
        slot->how[j] = UNREAD;
        if (!PyUnicode_CheckExact(item) || !PyUnicode_IS_ASCII(item)) {
            continue;
        }
        const Py_UCS1 *s = PyUnicode_1BYTE_DATA(item);
        Py_ssize_t n = PyUnicode_GET_LENGTH(item);
        Shape shape;
        if (!quick_shape(s, n, &shape)) {
            continue;
        }
        if (shape.bare && !(r->key && shape.upper)) {
            slot->how[j] = ITSELF;
        }
        else if (shape.length <= BLOCK_BYTES - used &&
                 quick_copy(s, n, &shape, r->key, bytes + used) == 0) {
            used += shape.length;
            slot->end[j] = (uint32_t)used;
            slot->how[j] = MADE;
        }
    }
    for (; j < (Py_ssize_t)(block + 1) * BLOCK_ITEMS; j++) {
        slot->seen[j] = NULL;
        slot->how[j] = UNREAD;
    }
}

/* Claim and read one block of *chunk* in *slot*: 0 when none was left to claim. */
static int
read_one(Reader *r, Slot *slot, Py_ssize_t chunk)
{
    int block = __atomic_fetch_add(&slot->claimed, 1, __ATOMIC_ACQ_REL);
    if (block >= BLOCKS) {
        return 0;
    }
    read_block(r, slot, chunk, block);
    __atomic_store_n(&slot->ready[block], 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&r->mutex); /* (for a thread waiting for it) */
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->mutex);
    return 1;
}

static void *
reader_main(void *arg)
{
    Reader *r = arg;
    Py_ssize_t chunks = (r->size + CHUNK_ITEMS - 1) / CHUNK_ITEMS;
    for (Py_ssize_t chunk = r->first; chunk < chunks; chunk++) {
        Slot *slot = &r->slots[chunk % 2];
        pthread_mutex_lock(&r->mutex);
        while (chunk >= r->allowed && !r->stop) {
            pthread_cond_wait(&r->cond, &r->mutex);
        }
        int stop = r->stop;
        if (!stop) { /* open the chunk: from now on either thread may read its blocks */
            slot->claimed = 0;
            for (int block = 0; block < BLOCKS; block++) {
                slot->ready[block] = 0;
            }
            __atomic_store_n(&slot->tag, chunk, __ATOMIC_RELEASE);
            pthread_cond_broadcast(&r->cond);
        }
        pthread_mutex_unlock(&r->mutex);
        if (stop) {
            break;
        }
        while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED) && read_one(r, slot, chunk)) {
        }
    }
    return NULL;
}

/* Start a helper at chunk *first* of *texts* (0 if none could start: one thread reads). */
static int
reader_start(Reader *r, PyObject *texts, int key, Py_ssize_t first)
{
    r->texts = texts;
    r->size = Py_SIZE(texts);
    r->first = first;
    r->allowed = first + 2;
    r->key = key;
    r->stop = 0;
    for (int k = 0; k < 2; k++) {
        r->slots[k].tag = -1;
    }
    r->running = pthread_create(&r->thread, NULL, reader_main, r) == 0;
    return r->running;
}

/* Stop the helper and wait for it to end. */
static void
reader_stop(Reader *r)
{
    if (!r->running) {
        return;
    }
    pthread_mutex_lock(&r->mutex);
    __atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->mutex);
    pthread_join(r->thread, NULL);
    r->running = 0;
}

/* The slot of chunk *chunk*, as this thread starts it: the helper may go on to the next
 * chunk. NULL when the helper does not read this one. */
static Slot *
reader_slot(Reader *r, Py_ssize_t chunk)
{
    if (!r->running || chunk < r->first) {
        return NULL;
    }
    pthread_mutex_lock(&r->mutex);
    if (r->allowed < chunk + 2) {
        r->allowed = chunk + 2;
        pthread_cond_broadcast(&r->cond);
    }
    pthread_mutex_unlock(&r->mutex);
    return &r->slots[chunk % 2];
}

/* Wait until block *block* of *chunk* is read, reading blocks of it not yet claimed
 * meanwhile. */
static void
reader_block(Reader *r, Slot *slot, Py_ssize_t chunk, int block)
{
    for (;;) {
        if (__atomic_load_n(&slot->tag, __ATOMIC_ACQUIRE) == chunk) {
            if (__atomic_load_n(&slot->ready[block], __ATOMIC_ACQUIRE)) {
                return;
            }
            if (read_one(r, slot, chunk)) {
                continue;
            }
        }
        pthread_mutex_lock(&r->mutex); /* nothing to claim: wait for the block */
        while (!(__atomic_load_n(&slot->tag, __ATOMIC_ACQUIRE) == chunk &&
                 (__atomic_load_n(&slot->ready[block], __ATOMIC_ACQUIRE) ||
                  __atomic_load_n(&slot->claimed, __ATOMIC_ACQUIRE) < BLOCKS))) {
            pthread_cond_wait(&r->cond, &r->mutex);
        }
        pthread_mutex_unlock(&r->mutex);
    }
}
#endif

/* The answers for a list or a tuple, read in place (with a helper where one can run; see
 * above), the items ahead fetched into the cache while one is read. The list is read as a
 * list iterator would, should it change size meanwhile (the Python parser runs Python
 * code). */
static PyObject *
bulk_items(PyObject *texts, int want_key, int report)
{
    Py_ssize_t size = Py_SIZE(texts);
    PyObject *out = PyList_New(size);
    if (out == NULL) {
        return NULL;
    }
    /* Its places are empty until they are filled, and the Python parser may let another
     * thread look through the collector's objects meanwhile (gc.get_objects()): out of
     * the collector's sight until it is whole, as a tuple being built would be. */
    PyObject_GC_UnTrack(out);
    int failed = 0;
#ifdef READER
    Reader *reader = NULL;
    Slot *slot = NULL;
    Py_ssize_t made = 0, resume = 0, starts = 0; /* resume: the chunk to start one at */
    if (size >= READER_AT_LEAST && two_cpus()) {
        reader = PyMem_RawMalloc(sizeof *reader);
        if (reader != NULL && (pthread_mutex_init(&reader->mutex, NULL) != 0 ||
                               pthread_cond_init(&reader->cond, NULL) != 0)) {
            PyMem_RawFree(reader);
            reader = NULL;
        }
        if (reader != NULL) {
            reader->running = 0;
        }
    }
#endif
    Py_ssize_t index = 0;
    for (; index < Py_SIZE(texts); index++) {
        PyObject **items = PySequence_Fast_ITEMS(texts);
        prefetch_item(items, index, Py_SIZE(texts));
        PyObject *item = items[index];
        PyObject *answer = NULL;
#ifdef READER
        Py_ssize_t j = index % CHUNK_ITEMS;
        if (reader != NULL && j == 0) {
            Py_ssize_t chunk = index / CHUNK_ITEMS;
            if (!reader->running && chunk >= resume && starts < READER_STARTS &&
                (chunk + 2) * CHUNK_ITEMS <= size) {
                starts += reader_start(reader, texts, want_key, chunk + 1);
            }
            slot = index < reader->size ? reader_slot(reader, chunk) : NULL;
        }
        if (j % BLOCK_ITEMS == 0) {
            made = 0; /* (a block's MADE answers start its part of the bytes) */
            if (slot != NULL) {
                reader_block(reader, slot, index / CHUNK_ITEMS, (int)(j / BLOCK_ITEMS));
            }
        }
        if (slot != NULL && slot->how[j] == MADE) {
            Py_ssize_t from = made;
            made = slot->end[j];
            if (slot->seen[j] == item) {
                answer = PyUnicode_New(made - from, 127);
                if (answer == NULL) {
                    goto failed;
                }
                const Py_UCS1 *bytes = slot->bytes + (size_t)(j / BLOCK_ITEMS) * BLOCK_BYTES;
                memcpy(PyUnicode_1BYTE_DATA(answer), bytes + from, (size_t)(made - from));
            }
        }
        else if (slot != NULL && slot->how[j] == ITSELF && slot->seen[j] == item) {
            answer = Py_NewRef(item);
        }
        if (answer == NULL && item != Py_None && reader != NULL && reader->running) {
            answer = quick_name(item, want_key); /* C only: the helper may go on */
            if (answer == NULL && PyErr_Occurred()) {
                goto failed;
            }
            if (answer == NULL) {
                /* The Python parser may run, or an error be raised: no helper meanwhile. */
                reader_stop(reader);
                slot = NULL;
                resume = index / CHUNK_ITEMS + 2;
            }
        }
#endif
        if (answer == NULL) {
            Py_INCREF(item);
            answer = bulk_one(item, index, want_key, report);
            Py_DECREF(item);
            if (answer == NULL) {
                goto failed;
            }
        }
        if (index < size) {
            PyList_SET_ITEM(out, index, answer);
        }
        else {
            int appended = PyList_Append(out, answer);
            Py_DECREF(answer);
            if (appended < 0) {
                goto failed;
            }
        }
    }
    if (index < size && PyList_SetSlice(out, index, size, NULL) < 0) { /* it shrank */
        goto failed;
    }
    goto done;
failed:
    failed = 1;
done:
#ifdef READER
    if (reader != NULL) { /* (before the answers go: an InvalidDOI's release may run code) */
        reader_stop(reader);
        pthread_cond_destroy(&reader->cond);
        pthread_mutex_destroy(&reader->mutex);
        PyMem_RawFree(reader);
    }
#endif
    if (failed) {
        Py_CLEAR(out);
    }
    else {
        PyObject_GC_Track(out);
    }
    return out;
}

/* The answers for any other iterable. */
static PyObject *
bulk_iterated(PyObject *texts, int want_key, int report)
{
    PyObject *iterator = PyObject_GetIter(texts);
    if (iterator == NULL) {
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        Py_DECREF(iterator);
        return NULL;
    }
    Py_ssize_t index = 0;
    PyObject *item;
    while ((item = PyIter_Next(iterator)) != NULL) {
        PyObject *answer = bulk_one(item, index, want_key, report);
        Py_DECREF(item);
        if (answer == NULL || PyList_Append(out, answer) < 0) {
            Py_XDECREF(answer);
            Py_DECREF(out);
            Py_DECREF(iterator);
            return NULL;
        }
        Py_DECREF(answer);
        index++;
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred()) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* parse_many / normalize_many: one answer per item of *texts*, in one C loop. None stays
 * None; a str is parsed (and with *want_key* keyed); an InvalidDOI becomes None, or with
 * *report* the exception itself; anything else is a TypeError naming the item. */
static PyObject *
bulk(PyObject *args, int want_key)
{
    PyObject *texts;
    int report;
    if (!configured() || !PyArg_ParseTuple(args, "Op", &texts, &report)) {
        return NULL;
    }
#ifndef Py_GIL_DISABLED /* (there, only an iterator reads a list that others may change) */
    if (PyList_CheckExact(texts) || PyTuple_CheckExact(texts)) {
        return bulk_items(texts, want_key, report);
    }
#endif
    return bulk_iterated(texts, want_key, report);
}

/* Ask for huge pages under a large answer buffer about to be written (Linux, where
 * transparent huge pages are on "madvise"): one fault per 2 MiB instead of one per 4 KiB,
 * which was a quarter of the time for a column of a million names. Only a hint. */
static void
huge_pages(char *start, Py_ssize_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t from = ((uintptr_t)start + huge - 1) & ~(huge - 1);
    uintptr_t to = ((uintptr_t)start + (uintptr_t)size) & ~(huge - 1);
    if (size >= 4 * (Py_ssize_t)huge && to > from) {
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE);
    }
#else
    (void)start;
    (void)size;
#endif
}

/* Room for *more* bytes at *used* in the growing bytes object *data* (a new reference, of
 * *room* bytes, resized to what it holds at the end: the answer is written where it is
 * returned, never copied). */
static int
grow(PyObject **data, Py_ssize_t *room, Py_ssize_t used, Py_ssize_t more)
{
    if (used + more <= *room) {
        return 1;
    }
    Py_ssize_t wanted = (*room + more) * 2;
    if (_PyBytes_Resize(data, wanted) < 0) {
        return 0;
    }
    *room = wanted;
    return 1;
}

/* The name (or with *key* the key) of the UTF-8 text s[0:n] by the Python parser: appended
 * at *used*; 0 when it is no DOI (the error cleared), -1 on another error. */
static int
slow_into(const char *s, Py_ssize_t n, int key, PyObject **data, Py_ssize_t *room,
          Py_ssize_t *used)
{
    PyObject *text = PyUnicode_DecodeUTF8(s, n, "strict");
    if (text == NULL) {
        return -1;
    }
    /* (the C reader has had its say on these bytes: straight to the pattern) */
    PyObject *answer = key ? pattern_key(text) : pattern_name(text);
    Py_DECREF(text);
    if (answer == NULL) {
        if (PyErr_ExceptionMatches(invalid_doi)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(answer, &size);
    int done = utf8 != NULL && grow(data, room, *used, size);
    if (done) {
        memcpy(PyBytes_AS_STRING(*data) + *used, utf8, (size_t)size);
        *used += size;
    }
    Py_DECREF(answer);
    return done ? 1 : -1;
}

/* Entry *j* of an Arrow offsets buffer: 64-bit when *wide*, else 32-bit. */
static inline int64_t
offset_at(const char *offsets, Py_ssize_t j, int wide)
{
    if (wide) {
        int64_t value;
        memcpy(&value, offsets + 8 * j, 8);
        return value;
    }
    int32_t value;
    memcpy(&value, offsets + 4 * j, 4);
    return value;
}

/* Set entry *j* of an Arrow offsets buffer (the caller has checked that a 32-bit one holds
 * *value*). */
static inline void
set_offset(char *offsets, Py_ssize_t j, int wide, int64_t value)
{
    if (wide) {
        memcpy(offsets + 8 * j, &value, 8);
    }
    else {
        int32_t narrow = (int32_t)value;
        memcpy(offsets + 4 * j, &narrow, 4);
    }
}

/* The answers of the texts arrow_many() set aside (their indexes in *aside*, ascending), read
 * by the Python parser with the GIL, put in their places in *data* (a new bytes object of
 * *used* bytes, replaced) and *ends*, with their validity bits and the null count. 0, or -1
 * with an exception. */
static int
put_aside_back(const Py_ssize_t *aside, Py_ssize_t set_aside, const Py_buffer *offsets,
               const Py_buffer *data, Py_ssize_t offset, Py_ssize_t length, int wide, int key,
               PyObject **out_data, Py_ssize_t *used, char *ends, unsigned char *bits,
               Py_ssize_t *nulls)
{
    /* the answers, one after the other, in *extra*; each one's end in *extra_ends* */
    Py_ssize_t extra_room = 256, extra_used = 0;
    PyObject *extra = PyBytes_FromStringAndSize(NULL, extra_room);
    Py_ssize_t *extra_ends = PyMem_Malloc((size_t)set_aside * sizeof *extra_ends);
    int *found = PyMem_Malloc((size_t)set_aside * sizeof *found);
    PyObject *merged = NULL;
    int status = -1;
    if (extra == NULL || extra_ends == NULL || found == NULL) {
        if (extra != NULL) {
            PyErr_NoMemory();
        }
        goto out;
    }
    for (Py_ssize_t k = 0; k < set_aside; k++) {
        Py_ssize_t j = offset + aside[k];
        int64_t from = offset_at(offsets->buf, j, wide);
        int64_t to = offset_at(offsets->buf, j + 1, wide);
        found[k] = slow_into((const char *)data->buf + from, (Py_ssize_t)(to - from), key,
                             &extra, &extra_room, &extra_used);
        if (found[k] < 0) {
            goto out;
        }
        extra_ends[k] = extra_used;
    }
    /* merge: each item's old answer, then (when it was set aside) its new one */
    Py_ssize_t total = *used + extra_used;
    if (!wide && total > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "over 2 GiB of names in one chunk");
        goto out;
    }
    merged = PyBytes_FromStringAndSize(NULL, total);
    if (merged == NULL) {
        goto out;
    }
    char *to_bytes = PyBytes_AS_STRING(merged);
    const char *old = PyBytes_AS_STRING(*out_data), *new_bytes = PyBytes_AS_STRING(extra);
    Py_ssize_t at = 0, old_start = 0, k = 0, extra_start = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        int64_t old_end = offset_at(ends, i + 1, wide);
        memcpy(to_bytes + at, old + old_start, (size_t)(old_end - old_start));
        at += (Py_ssize_t)old_end - old_start;
        old_start = (Py_ssize_t)old_end;
        if (k < set_aside && aside[k] == i) {
            memcpy(to_bytes + at, new_bytes + extra_start, (size_t)(extra_ends[k] - extra_start));
            at += extra_ends[k] - extra_start;
            extra_start = extra_ends[k];
            if (found[k]) {
                bits[i / 8] |= (unsigned char)(1 << (i % 8));
            }
            else {
                (*nulls)++;
            }
            k++;
        }
        set_offset(ends, i + 1, wide, (int64_t)at);
    }
    Py_SETREF(*out_data, merged);
    merged = NULL;
    *used = total;
    status = 0;
out:
    Py_XDECREF(extra);
    Py_XDECREF(merged);
    PyMem_Free(extra_ends);
    PyMem_Free(found);
    return status;
}

/* arrow_many(validity, offsets, data, offset, length, wide, key): the names (or keys) of an
 * Arrow string array given as its buffers (validity may be None; 32-bit offsets, or 64-bit
 * when *wide*), as the buffers of a new one: (validity, offsets, data, null count). A null
 * text, or one that is no DOI, is null. ASCII texts of the common shapes are read here;
 * the others by the Python parser, one by one. */
static PyObject *
module_arrow_many(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *validity_object;
    Py_buffer offsets, data;
    Py_ssize_t offset, length;
    int wide, key;
    if (!configured() || !PyArg_ParseTuple(args, "Oy*y*nnpp", &validity_object, &offsets,
                                           &data, &offset, &length, &wide, &key)) {
        return NULL;
    }
    Py_buffer validity = {0};
    PyObject *result = NULL;
    PyObject *out_data = NULL, *out_validity = NULL, *out_offsets = NULL;
    Py_ssize_t width = wide ? 8 : 4;
    if (validity_object != Py_None &&
        PyObject_GetBuffer(validity_object, &validity, PyBUF_SIMPLE) < 0) {
        goto done;
    }
    /* (compared without overflow: offset and length come from the caller; once the offsets
     * hold offset + length + 1 entries, offset + length is a size that fits) */
    if (offset < 0 || length < 0 || offsets.len / width < 1 ||
        offset > offsets.len / width - 1 - length ||
        (validity.buf != NULL && (offset + length + 7) / 8 > validity.len)) {
        PyErr_SetString(PyExc_ValueError, "the buffers are too short for the array");
        goto done;
    }
    out_validity = PyBytes_FromStringAndSize(NULL, (length + 7) / 8);
    out_offsets = PyBytes_FromStringAndSize(NULL, (length + 1) * width);
    /* room for the slice's own text (an answer is never longer than its text) */
    int64_t first_end = offset_at(offsets.buf, offset, wide);
    int64_t last_end = offset_at(offsets.buf, offset + length, wide);
    Py_ssize_t span =
        last_end > first_end && last_end <= data.len ? (Py_ssize_t)(last_end - first_end) : 0;
    Py_ssize_t room = span + 64, used = 0, nulls = 0;
    out_data = PyBytes_FromStringAndSize(NULL, room);
    if (out_validity == NULL || out_offsets == NULL || out_data == NULL) {
        goto done;
    }
    huge_pages(PyBytes_AS_STRING(out_data), room);
    huge_pages(PyBytes_AS_STRING(out_offsets), (length + 1) * width);
    unsigned char *bits = (unsigned char *)PyBytes_AS_STRING(out_validity);
    memset(bits, 0, (size_t)((length + 7) / 8));
    char *ends = PyBytes_AS_STRING(out_offsets);
    const unsigned char *in_bits = validity.buf;
    const char *chars = data.buf;
    Py_UCS1 *out = (Py_UCS1 *)PyBytes_AS_STRING(out_data);
    memset(ends, 0, (size_t)width);
    /* The texts the C reader decides are read without the GIL, so that other threads (a
     * database's, calling this once per vector) run meanwhile; the others are set aside,
     * answered empty for now, and read by the Python parser afterwards (put_aside_back). */
    Py_ssize_t *aside = NULL, set_aside = 0, aside_room = 0;
    int failure = 0; /* 1: an offset outside the data, 2: over 2 GiB of names, 3: memory */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_ssize_t j = offset + i;
        if (in_bits != NULL && !(in_bits[j / 8] >> (j % 8) & 1)) {
            nulls++;
        }
        else {
            int64_t from = offset_at(offsets.buf, j, wide);
            int64_t to = offset_at(offsets.buf, j + 1, wide);
            if (from < 0 || to < from || to > data.len) {
                failure = 1;
                break;
            }
            const Py_UCS1 *text = (const Py_UCS1 *)chars + from;
            Py_ssize_t n = (Py_ssize_t)(to - from), written = -1;
            Shape shape;
            /* (the answer is never longer than its text; the room holds the slice's texts,
             * unless offsets overlap: then the text is set aside, where the buffer grows) */
            if (n <= room - used && quick_shape(text, n, &shape) &&
                quick_copy(text, n, &shape, key, out + used) == 0) {
                written = shape.length;
            }
            if (written >= 0) {
                used += written;
                bits[i / 8] |= (unsigned char)(1 << (i % 8));
            }
            else {
                if (set_aside == aside_room) {
                    Py_ssize_t wanted = aside_room ? 2 * aside_room : 64;
                    Py_ssize_t *grown = PyMem_RawRealloc(aside, (size_t)wanted * sizeof *aside);
                    if (grown == NULL) {
                        failure = 3;
                        break;
                    }
                    aside = grown;
                    aside_room = wanted;
                }
                aside[set_aside++] = i;
            }
        }
        if (!wide && used > INT32_MAX) {
            failure = 2;
            break;
        }
        set_offset(ends, i + 1, wide, (int64_t)used); /* the end of item i */
    }
    Py_END_ALLOW_THREADS
    if (failure == 1) {
        PyErr_SetString(PyExc_ValueError, "an offset is outside the data");
    }
    else if (failure == 2) {
        PyErr_SetString(PyExc_OverflowError, "over 2 GiB of names in one chunk");
    }
    else if (failure == 3) {
        PyErr_NoMemory();
    }
    else if (set_aside == 0 ||
             put_aside_back(aside, set_aside, &offsets, &data, offset, length, wide, key,
                            &out_data, &used, ends, bits, &nulls) == 0) {
        failure = -1; /* done */
    }
    PyMem_RawFree(aside);
    if (failure != -1) {
        goto done;
    }
    if (_PyBytes_Resize(&out_data, used) == 0) {
        result = Py_BuildValue("(OOOn)", out_validity, out_offsets, out_data, nulls);
    }
done:
    Py_XDECREF(out_data);
    Py_XDECREF(out_validity);
    Py_XDECREF(out_offsets);
    if (validity.buf != NULL) {
        PyBuffer_Release(&validity);
    }
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    return result;
}

static PyObject *
module_parse_many(PyObject *Py_UNUSED(module), PyObject *args)
{
    return bulk(args, 0);
}

static PyObject *
module_normalize_many(PyObject *Py_UNUSED(module), PyObject *args)
{
    return bulk(args, 1);
}

static PyObject *
module_parse(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (!configured()) {
        return NULL;
    }
    return parse_name(text);
}

static PyObject *
module_normalize(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (!configured()) {
        return NULL;
    }
    return normalized(text);
}

static PyMethodDef module_methods[] = {
    {"parse", module_parse, METH_O,
     PyDoc_STR("parse(text, /)\n--\n\n"
               "Read a DOI name from any presentation and return it, bare.\n\n"
               ":raises InvalidDOI: with the position in *text* of the fault.")},
    {"normalize", module_normalize, METH_O,
     PyDoc_STR("normalize(text, /)\n--\n\n"
               "The comparison key of the DOI name in *text*: bare, ASCII letters "
               "lower-cased.\n\n"
               "Two texts name the same DOI exactly when their keys are equal.\n\n"
               ":raises InvalidDOI: when it is not a DOI name.")},
    {"parse_many", module_parse_many, METH_VARARGS,
     PyDoc_STR("parse_many(texts, report, /)\n--\n\n"
               "The bare name of each text (None stays None); an invalid one is None, or "
               "with *report* its InvalidDOI.")},
    {"normalize_many", module_normalize_many, METH_VARARGS,
     PyDoc_STR("normalize_many(texts, report, /)\n--\n\n"
               "The comparison key of each text (None stays None); an invalid one is None, "
               "or with *report* its InvalidDOI.")},
    {"arrow_many", module_arrow_many, METH_VARARGS,
     PyDoc_STR("arrow_many(validity, offsets, data, offset, length, wide, key, /)\n--\n\n"
               "The names (or keys) of an Arrow string array's buffers, as the buffers of a "
               "new one: (validity, offsets, data, null count).")},
    {"configure", configure, METH_VARARGS,
     PyDoc_STR("configure(quick, parse_rest, fold, as_text, invalid_doi, hosts): the Python "
               "parts (internal).")},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "doikit._speedups",
    .m_doc = PyDoc_STR("The optional C accelerator of doikit.DOI; see doikit._doi."),
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    if (PyType_Ready(&StateType) < 0 || PyType_Ready(&ScanType) < 0) {
        return NULL;
    }
    str_lastindex = PyUnicode_InternFromString("lastindex");
    str_span = PyUnicode_InternFromString("span");
    if (str_lastindex == NULL || str_span == NULL) {
        return NULL;
    }
    name_group = PyLong_FromLong(2);
    if (name_group == NULL) {
        return NULL;
    }
    PyObject *self = PyModule_Create(&module);
    if (self == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(self, "DOIState", (PyObject *)&StateType) < 0 ||
        PyModule_AddObjectRef(self, "Scan", (PyObject *)&ScanType) < 0) {
        Py_DECREF(self);
        return NULL;
    }
#ifdef Py_GIL_DISABLED
    /* Safe without the GIL: a value is built from locals, and the Python parts are set
     * once, by configure(), while doikit._doi is imported. */
    PyUnstable_Module_SetGIL(self, Py_MOD_GIL_NOT_USED);
#endif
    return self;
}
