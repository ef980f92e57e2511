/* DOIState in C (doikit._doi.DOIState is the definition), and the name in a str.
 *
 * The state: the name as written, and the key (the name with ASCII letters lower-cased,
 * 004 ch. 3). Strings only, so no reference cycles: the type needs no GC support.
 *
 * A name is read from a str by the C reader (lib/reader.c) where it decides, else by
 * _QUICK, the compiled pattern of doikit._present, and the Python parser (parse_rest);
 * non-ASCII keys by fold(). All three come from dk_config.
 */
#include "speedups.h"

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
PyObject *
dk_key_of(PyObject *name)
{
    if (PyUnicode_IS_ASCII(name)) {
        return ascii_key(name);
    }
    return PyObject_CallOneArg(dk_config.fold, name);
}

/* A new instance of *type* holding *name* (a reference this steals) and its *key*
 * (stolen too); NULL with both released when anything fails. */
PyObject *
dk_build(PyTypeObject *type, PyObject *name, PyObject *key)
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

/* The name in *text* when it has one of _QUICK's shapes and is ASCII (a new reference), or
 * with *key* its key; NULL without an exception when this cannot decide (the pattern and
 * the Python parser then do), NULL with one on a memory error. */
PyObject *
dk_quick_name(PyObject *text, int key)
{
    if (!PyUnicode_CheckExact(text) || !PyUnicode_IS_ASCII(text)) {
        /* (parse() and normalize() take any object: the pattern refuses it; a str subclass
         * goes that way too, so that the answer is an exact str, as Python's is) */
        return NULL;
    }
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    DkShape shape;
    if (!dk_quick_shape(&dk_config.hosts, s, n, &shape)) {
        return NULL;
    }
    if (shape.bare && !(key && shape.upper)) {
        return Py_NewRef(text);
    }
    if (!key && !shape.urn && !shape.escapes) {
        return PyUnicode_Substring(text, shape.start, n);
    }
    PyObject *out = PyUnicode_New(shape.length, 127);
    if (out != NULL && dk_quick_copy(s, n, &shape, key, PyUnicode_1BYTE_DATA(out)) < 0) {
        Py_CLEAR(out); /* an escape it cannot decode: undecided */
    }
    return out;
}

/* The bare name in *text* (a new reference) as doikit._present.parse reads it, without the
 * C reader: a plain name that the compiled pattern decides whole (dk_config.name_group, no
 * escapes) is the name; anything else goes to the Python parser, which raises InvalidDOI
 * where it is no DOI. (For the texts dk_quick_name() has already left undecided.) */
PyObject *
dk_pattern_name(PyObject *text)
{
    PyObject *match = PyObject_CallOneArg(dk_config.quick, text);
    if (match == NULL) {
        return NULL;
    }
    if (match != Py_None) {
        PyObject *name = PyObject_GetItem(match, dk_config.name_group);
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
    PyObject *name = PyObject_CallFunctionObjArgs(dk_config.parse_rest, text, match, NULL);
    Py_DECREF(match);
    return name;
}

/* The bare name in *text* (a new reference): by the C reader where it decides, else by the
 * pattern and the Python parser. */
PyObject *
dk_parse_name(PyObject *text)
{
    PyObject *decided = dk_quick_name(text, 0);
    if (decided != NULL || PyErr_Occurred()) {
        return decided;
    }
    return dk_pattern_name(text);
}

/* The key of the name that dk_pattern_name() reads in *text* (a new reference). */
PyObject *
dk_pattern_key(PyObject *text)
{
    PyObject *name = dk_pattern_name(text);
    if (name != NULL) {
        Py_SETREF(name, dk_key_of(name));
    }
    return name;
}

/* The key of the name in *text* (a new reference): decided and lower-cased in one pass
 * where dk_quick_name can, else parsed, then keyed. */
PyObject *
dk_normalized(PyObject *text)
{
    PyObject *key = dk_quick_name(text, 1);
    if (key != NULL || PyErr_Occurred()) {
        return key;
    }
    return dk_pattern_key(text); /* (not parse_name: the C reader has had its say) */
}

static PyObject *
state_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (!dk_configured()) {
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
        text = PyObject_CallOneArg(dk_config.as_text, text);
        if (text == NULL) {
            return NULL;
        }
    }
    PyObject *name = dk_parse_name(text);
    Py_DECREF(text);
    if (name == NULL) {
        return NULL;
    }
    return dk_build(type, name, dk_key_of(name));
}

static PyObject *
state_known(PyObject *cls, PyObject *name)
{
    if (!dk_configured()) {
        return NULL;
    }
    if (!PyUnicode_CheckExact(name)) {
        PyErr_Format(PyExc_TypeError, "_known() takes a str, not %.100s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    return dk_build((PyTypeObject *)cls, Py_NewRef(name), dk_key_of(name));
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
    if (!PyObject_TypeCheck(self, &dk_StateType) || !PyObject_TypeCheck(other, &dk_StateType)) {
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

PyTypeObject dk_StateType = {
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
