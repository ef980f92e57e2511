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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h> /* offsetof */

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

static inline int
hex_value(Py_UCS1 c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

/* Whether s[at:] starts with the lower-case ASCII *literal*, ASCII case ignored. */
static int
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

/* The length of _QUICK's presentation head at the start of s, or -1 for none; *urn is set
 * for urn:doi:. (The heads, as _QUICK spells them: doi.org, dx.doi.org, www.doi.org and
 * hdl.handle.net URLs with or without http(s)://, 'doi:', 'doi: ', 'doi ', 'info:doi/',
 * 'hdl:' and 'urn:doi:', ASCII case ignored.) */
static Py_ssize_t
head_length(const Py_UCS1 *s, Py_ssize_t n, int *urn)
{
    *urn = 0;
    if (starts(s, n, 0, "urn:doi:")) {
        *urn = 1;
        return 8;
    }
    if (starts(s, n, 0, "info:doi/")) {
        return 9;
    }
    if (starts(s, n, 0, "hdl:")) {
        return 4;
    }
    if (starts(s, n, 0, "doi:")) {
        return (n > 4 && s[4] == ' ') ? 5 : 4;
    }
    if (starts(s, n, 0, "doi ")) {
        return 4;
    }
    Py_ssize_t at = starts(s, n, 0, "https://") ? 8 : starts(s, n, 0, "http://") ? 7 : 0;
    if (starts(s, n, at, "doi.org/")) {
        return at + 8;
    }
    if (starts(s, n, at, "dx.doi.org/")) {
        return at + 11;
    }
    if (starts(s, n, at, "www.doi.org/")) {
        return at + 12;
    }
    if (starts(s, n, at, "hdl.handle.net/")) {
        return at + 15;
    }
    return -1;
}

static inline Py_UCS1
lower_ascii(Py_UCS1 c)
{
    return (c >= 'A' && c <= 'Z') ? (Py_UCS1)(c + ('a' - 'A')) : c;
}

/* The name in *text* when it has one of _QUICK's shapes and is ASCII, its escapes decoded
 * (a new reference), or with *key* its key (ASCII letters lower-cased as they are copied);
 * NULL without an exception when this cannot decide (the pattern and the Python parser then
 * do), NULL with one on a memory error. It decides only where the answer is sure: every
 * escape two hex digits for a printable ASCII character. */
static PyObject *
quick_name(PyObject *text, int key)
{
    if (!PyUnicode_Check(text) || !PyUnicode_IS_ASCII(text)) {
        return NULL; /* (parse() and normalize() take any object: the pattern refuses it) */
    }
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int urn = 0, bare = n >= 3 && s[0] == '1' && s[1] == '0' && s[2] == '.';
    Py_ssize_t start = bare ? 0 : head_length(s, n, &urn);
    if (start < 0) {
        return NULL;
    }
    /* the prefix: 10. and digits, with '.' subdivisions */
    Py_ssize_t at = start;
    if (!(n - at > 3 && s[at] == '1' && s[at + 1] == '0' && s[at + 2] == '.' &&
          is_digit(s[at + 3]))) {
        return NULL;
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
    int escapes = 0;
    if (at < n && s[at] == (urn ? ':' : '/')) {
        at++;
    }
    else if (!bare && !urn && at + 2 < n && s[at] == '%' && s[at + 1] == '2' &&
             (s[at + 2] == 'F' || s[at + 2] == 'f')) {
        at += 3;
        escapes = 1;
    }
    else {
        return NULL;
    }
    Py_ssize_t suffix = at;
    if (suffix >= n) {
        return NULL;
    }
    if (bare) { /* literal: printable ASCII and spaces, no '%', not ending in ' ' or '/' */
        for (; at < n; at++) {
            if (s[at] < ' ' || s[at] > '~' || s[at] == '%') {
                return NULL;
            }
        }
        if (s[n - 1] == ' ' || s[n - 1] == '/') {
            return NULL;
        }
        return key ? ascii_key(text) : Py_NewRef(text);
    }
    /* after a head: printable ASCII but ' ', '#' and '?'; escapes decoded */
    for (; at < n; at++) {
        Py_UCS1 c = s[at];
        if (c < '!' || c > '~' || c == '#' || c == '?') {
            return NULL;
        }
        escapes |= c == '%';
    }
    if (!escapes && !urn) {
        if (!key) {
            return PyUnicode_Substring(text, start, n);
        }
        PyObject *out = PyUnicode_New(n - start, 127);
        if (out != NULL) {
            Py_UCS1 *to = PyUnicode_1BYTE_DATA(out);
            for (at = start; at < n; at++) {
                *to++ = lower_ascii(s[at]);
            }
        }
        return out;
    }
    /* into a buffer as long as the text (escapes only shorten it): a URN's ':' becomes the
     * '/' it stands for, escapes are decoded */
    Py_ssize_t from = urn ? suffix : start;
    Py_UCS1 *buffer = PyMem_Malloc((size_t)n + 1);
    if (buffer == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_ssize_t length = 0;
    if (urn) {
        memcpy(buffer, s + start, (size_t)(prefix_end - start)); /* digits and dots */
        length = prefix_end - start;
        buffer[length++] = '/';
    }
    for (at = from; at < n; at++) {
        Py_UCS1 c = s[at];
        if (c == '%') {
            int high = at + 2 < n ? hex_value(s[at + 1]) : -1;
            int low = high < 0 ? -1 : hex_value(s[at + 2]);
            c = (Py_UCS1)(16 * high + low);
            if (low < 0 || c < ' ' || c > '~') {
                PyMem_Free(buffer);
                return NULL;
            }
            at += 2;
        }
        buffer[length++] = key ? lower_ascii(c) : c;
    }
    PyObject *name = PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, buffer, length);
    PyMem_Free(buffer);
    return name;
}

/* The bare name in *text* (a new reference), as doikit._present.parse reads it: a plain
 * name that the compiled pattern decides whole (group 2, no escapes) is the name; anything
 * else goes to the Python parser, which raises InvalidDOI where it is no DOI. */
static PyObject *
parse_name(PyObject *text)
{
    PyObject *decided = quick_name(text, 0);
    if (decided != NULL || PyErr_Occurred()) {
        return decided;
    }
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

static PyObject *
configure(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *quick_, *parse_rest_, *fold_, *as_text_, *invalid_doi_;
    if (!PyArg_ParseTuple(args, "OOOOO:configure", &quick_, &parse_rest_, &fold_, &as_text_,
                          &invalid_doi_)) {
        return NULL;
    }
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
    PyObject *name = parse_name(text);
    if (name == NULL) {
        return NULL;
    }
    Py_SETREF(name, key_of(name));
    return name;
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
        PyObject *answer = NULL;
        if (item == Py_None) {
            answer = Py_NewRef(Py_None);
        }
        else if (!PyUnicode_Check(item)) {
            PyErr_Format(PyExc_TypeError, "item %zd is a %.100s, not a str or None", index,
                         Py_TYPE(item)->tp_name);
        }
        else {
            answer = want_key ? normalized(item) : parse_name(item);
            if (answer == NULL && PyErr_ExceptionMatches(invalid_doi)) {
                if (report) {
                    answer = take_raised();
                }
                else {
                    PyErr_Clear();
                    answer = Py_NewRef(Py_None);
                }
            }
        }
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
    {"configure", configure, METH_VARARGS,
     PyDoc_STR("configure(quick, parse_rest, fold, as_text, invalid_doi): the Python parts "
               "(internal).")},
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
    if (PyType_Ready(&StateType) < 0) {
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
    if (PyModule_AddObjectRef(self, "DOIState", (PyObject *)&StateType) < 0) {
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
