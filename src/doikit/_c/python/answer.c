/* doikit._speedups: the native client's common answer, read in C.
 *
 * doikit.handle._fast_codec._read is the pure-Python definition and the reference: a plain
 * resolution answer (op 1, rc 1, no request digest, no credential, no encryption, every
 * TTL relative) read into HandleRecord(handle, (HandleValue, ...)), or None for anything
 * else, which the full codec then judges. tests/test_fast_codec.py holds the two equal on
 * captured answers, generated ones and mutated bytes.
 *
 * The records are built as their dataclasses' __init__ would build them (frozen, slots,
 * no __post_init__: _fast_codec checks that before it configures this), by writing their
 * slots: in CPython 3.11 a frozen dataclass's __init__ is a Python frame that sets each
 * field through object.__setattr__, which costs more than reading the whole answer.
 */
#include "speedups.h"

#include <structmember.h>

#define VALUE_FIELDS 7  /* index type data ttl timestamp permissions references */
#define RECORD_FIELDS 2 /* handle values */
#define REFERENCE_FIELDS 2 /* handle index */

typedef struct {
    PyTypeObject *type;
    Py_ssize_t offsets[VALUE_FIELDS];
} Maker;

static struct {
    Maker value, record, reference;
    PyObject *data_from_wire; /* _native_values.data_from_wire(type, raw) */
    PyObject *permissions;    /* the 16 permission strings, by their 4 bits */
    /* the codec's numbers, as _fast_codec hands them over (the one place each lives) */
    unsigned long op_resolution, rc_success, request_digest, ttl_relative;
    unsigned long max_handle_length, max_handle_values, max_array_size;
    int ready;
} answers;

/* The slot offsets of *type*'s *names*, each a member of an object (a slots dataclass). */
static int
maker_set(Maker *maker, PyObject *type, PyObject *names, Py_ssize_t count)
{
    if (!PyType_Check(type) || !PyTuple_Check(names) || PyTuple_GET_SIZE(names) != count) {
        PyErr_SetString(PyExc_TypeError, "configure_answers: a class and its field names");
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *member = PyObject_GetAttr(type, PyTuple_GET_ITEM(names, i));
        if (member == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                return -1;
            }
            PyErr_Clear();
            member = Py_NewRef(Py_None);
        }
        int ok = Py_IS_TYPE(member, &PyMemberDescr_Type) &&
                 ((PyMemberDescrObject *)member)->d_member->type == T_OBJECT_EX;
        if (ok) {
            maker->offsets[i] = ((PyMemberDescrObject *)member)->d_member->offset;
        }
        Py_DECREF(member);
        if (!ok) {
            PyErr_SetString(PyExc_TypeError, "configure_answers: a field that is not a slot");
            return -1;
        }
    }
    Py_XSETREF(maker->type, (PyTypeObject *)Py_NewRef(type));
    return 0;
}

/* A new object of the maker's class holding *fields* (references stolen, even on failure). */
static PyObject *
make(Maker *maker, PyObject **fields, Py_ssize_t count)
{
    PyObject *object = maker->type->tp_alloc(maker->type, 0);
    for (Py_ssize_t i = 0; i < count; i++) {
        if (object == NULL) {
            Py_DECREF(fields[i]);
        }
        else {
            *(PyObject **)((char *)object + maker->offsets[i]) = fields[i];
        }
    }
    return object;
}

PyObject *
dk_configure_answers(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *value, *value_names, *record, *record_names, *reference, *reference_names;
    PyObject *data_from_wire, *permissions;
    unsigned long codes[7];
    if (!PyArg_ParseTuple(args, "OO!OO!OO!OO!(kkkkkkk):configure_answers", &value,
                          &PyTuple_Type, &value_names, &record, &PyTuple_Type, &record_names,
                          &reference, &PyTuple_Type, &reference_names, &data_from_wire,
                          &PyTuple_Type, &permissions, &codes[0], &codes[1], &codes[2],
                          &codes[3], &codes[4], &codes[5], &codes[6])) {
        return NULL;
    }
    if (PyTuple_GET_SIZE(permissions) != 16 || !PyCallable_Check(data_from_wire)) {
        PyErr_SetString(PyExc_ValueError, "configure_answers: not the codec this reads");
        return NULL;
    }
    answers.ready = 0;
    if (maker_set(&answers.value, value, value_names, VALUE_FIELDS) < 0 ||
        maker_set(&answers.record, record, record_names, RECORD_FIELDS) < 0 ||
        maker_set(&answers.reference, reference, reference_names, REFERENCE_FIELDS) < 0) {
        return NULL;
    }
    Py_XSETREF(answers.data_from_wire, Py_NewRef(data_from_wire));
    Py_XSETREF(answers.permissions, Py_NewRef(permissions));
    answers.op_resolution = codes[0];
    answers.rc_success = codes[1];
    answers.request_digest = codes[2];
    answers.ttl_relative = codes[3];
    answers.max_handle_length = codes[4];
    answers.max_handle_values = codes[5];
    answers.max_array_size = codes[6];
    answers.ready = 1;
    Py_RETURN_NONE;
}

static uint32_t
u32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int32_t
i32(const unsigned char *p)
{
    return (int32_t)u32(p);
}

/* The text of p[0:n], or NULL; NULL without an error set means "not UTF-8: not ours". */
static PyObject *
text(const unsigned char *p, Py_ssize_t n)
{
    PyObject *out = PyUnicode_DecodeUTF8((const char *)p, n, NULL);
    if (out == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear();
    }
    return out;
}

/* The references of one value from *at* (bytes left to *end*): a tuple, or NULL (an error
 * set, or none: not ours). *at* moves past them. */
static PyObject *
references(const unsigned char *u, Py_ssize_t *at, Py_ssize_t end, PyObject *empty)
{
    int32_t refs = i32(u + *at);
    *at += 4;
    if (refs == 0) {
        return Py_NewRef(empty);
    }
    if (!(0 < refs && (unsigned long)refs <= answers.max_array_size) || (Py_ssize_t)refs * 8 > end - *at) {
        return NULL;
    }
    PyObject *listed = PyTuple_New(refs);
    if (listed == NULL) {
        return NULL;
    }
    for (int32_t i = 0; i < refs; i++) {
        int32_t n = i32(u + *at);
        if (n < 0 || *at + 4 + (Py_ssize_t)n + 4 > end) {
            Py_DECREF(listed);
            return NULL;
        }
        PyObject *fields[REFERENCE_FIELDS];
        fields[0] = text(u + *at + 4, n);
        if (fields[0] == NULL) {
            Py_DECREF(listed);
            return NULL;
        }
        fields[1] = PyLong_FromLong(i32(u + *at + 4 + n));
        if (fields[1] == NULL) {
            Py_DECREF(fields[0]);
            Py_DECREF(listed);
            return NULL;
        }
        PyObject *reference = make(&answers.reference, fields, REFERENCE_FIELDS);
        if (reference == NULL) {
            Py_DECREF(listed);
            return NULL;
        }
        PyTuple_SET_ITEM(listed, i, reference);
        *at += (Py_ssize_t)n + 8;
    }
    return listed;
}

static int
structured(PyObject *kind)
{
    if (PyUnicode_GET_LENGTH(kind) < 3) {
        return 0;
    }
    Py_UCS4 h = PyUnicode_READ_CHAR(kind, 0), s = PyUnicode_READ_CHAR(kind, 1);
    return (h == 'H' || h == 'h') && (s == 'S' || s == 's') && PyUnicode_READ_CHAR(kind, 2) == '_';
}

/* One value from *at*: a new HandleValue, or NULL (an error set, or none: not ours). */
static PyObject *
value(const unsigned char *u, Py_ssize_t *at, Py_ssize_t end, PyObject *empty)
{
    if (*at + 18 > end) {
        return NULL;
    }
    const unsigned char *p = u + *at;
    int32_t index = i32(p), timestamp = i32(p + 4), ttl = i32(p + 9), n = i32(p + 14);
    unsigned ttl_type = p[8], permissions = p[13];
    *at += 18;
    if (ttl_type != answers.ttl_relative || permissions > 0x0F || n < 0 || *at + (Py_ssize_t)n + 4 > end) {
        return NULL; /* an absolute TTL is the codec's to convert */
    }
    PyObject *fields[VALUE_FIELDS] = {NULL};
    fields[1] = text(u + *at, n);
    if (fields[1] == NULL) {
        return NULL;
    }
    *at += n;
    n = i32(u + *at);
    *at += 4;
    if (n < 0 || *at + (Py_ssize_t)n + 4 > end) {
        goto fail;
    }
    fields[2] = PyBytes_FromStringAndSize((const char *)u + *at, n);
    if (fields[2] == NULL) {
        goto fail;
    }
    *at += n;
    if (structured(fields[1])) { /* every structured type is HS_... */
        Py_SETREF(fields[2], PyObject_CallFunctionObjArgs(answers.data_from_wire, fields[1],
                                                          fields[2], NULL));
        if (fields[2] == NULL) {
            goto fail;
        }
    }
    fields[6] = references(u, at, end, empty);
    if (fields[6] == NULL) {
        goto fail;
    }
    fields[0] = PyLong_FromLong(index);
    fields[3] = PyLong_FromLong(ttl);
    fields[4] = PyLong_FromLong(timestamp);
    if (fields[0] == NULL || fields[3] == NULL || fields[4] == NULL) {
        goto fail;
    }
    fields[5] = Py_NewRef(PyTuple_GET_ITEM(answers.permissions, permissions));
    return make(&answers.value, fields, VALUE_FIELDS);
fail:
    for (int i = 0; i < VALUE_FIELDS; i++) {
        Py_XDECREF(fields[i]);
    }
    return NULL;
}

static PyObject *
record(const unsigned char *u, Py_ssize_t size)
{
    if (size < 48) {
        return NULL;
    }
    uint32_t body = u32(u + 40);
    if ((u[2] & ~0x03) || u32(u + 12) != 0 || (Py_ssize_t)i32(u + 16) != size - 20 ||
        u32(u + 20) != answers.op_resolution || u32(u + 24) != answers.rc_success ||
        (u32(u + 28) & answers.request_digest) || u[35] != 0 || body > (uint64_t)(size - 44)) {
        return NULL;
    }
    Py_ssize_t end = 44 + (Py_ssize_t)body;
    int32_t n = i32(u + 44);
    Py_ssize_t at = 48 + (Py_ssize_t)n;
    if (!(0 <= n && (unsigned long)n <= answers.max_handle_length) || at + 4 > end) {
        return NULL;
    }
    PyObject *fields[RECORD_FIELDS];
    fields[0] = text(u + 48, n);
    if (fields[0] == NULL) {
        return NULL;
    }
    int32_t count = i32(u + at);
    at += 4;
    if (!(0 <= count && (unsigned long)count <= answers.max_handle_values) || (Py_ssize_t)count * 26 > end - at) {
        Py_DECREF(fields[0]);
        return NULL;
    }
    PyObject *empty = PyTuple_New(0);
    fields[1] = PyTuple_New(count);
    if (empty == NULL || fields[1] == NULL) {
        goto fail;
    }
    for (int32_t i = 0; i < count; i++) {
        PyObject *one = value(u, &at, end, empty);
        if (one == NULL) {
            goto fail;
        }
        PyTuple_SET_ITEM(fields[1], i, one);
    }
    if (at != end || (size != end && size != end + 4) ||
        (size == end + 4 && u32(u + end) != 0)) {
        goto fail; /* a credential, or bytes after the body: the codec's */
    }
    Py_DECREF(empty);
    return make(&answers.record, fields, RECORD_FIELDS);
fail:
    Py_XDECREF(empty);
    Py_DECREF(fields[0]);
    Py_XDECREF(fields[1]);
    return NULL;
}

PyObject *
dk_read_answer(PyObject *Py_UNUSED(module), PyObject *unit)
{
    if (!answers.ready) {
        PyErr_SetString(PyExc_RuntimeError, "read_answer is used before configure_answers");
        return NULL;
    }
    if (!PyBytes_Check(unit)) {
        PyErr_SetString(PyExc_TypeError, "read_answer: bytes");
        return NULL;
    }
    PyObject *out = record((const unsigned char *)PyBytes_AS_STRING(unit), PyBytes_GET_SIZE(unit));
    if (out == NULL && !PyErr_Occurred()) {
        Py_RETURN_NONE;
    }
    return out;
}
