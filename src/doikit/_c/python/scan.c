/* The extractor's scan, in C (issue 14): doikit._speedups.Scan.
 *
 * doikit._extract._scan's loop without a Python frame per DOI: it runs the candidate
 * pattern's finditer and builds the Found of each candidate the pattern has decided (in
 * text, and in a URL when the candidate holds no escape, no second '/' and cannot end in a
 * glued file), trimmed of trailing punctuation as _scan does; every other candidate goes
 * to _extract._decide, the same Python code the pure-Python scan calls, which answers
 * (found or None, position, action). The pure-Python _scan is the reference; a property
 * test holds the two to each other on any text, whole and in chunks. */
#include "extract.h"

typedef struct {
    PyObject_HEAD
    PyObject *finditer; /* the candidate pattern's finditer(text, position) */
    PyObject *text;     /* an exact str */
    PyObject *matches;  /* the running finditer, or NULL before a (re)start */
    PyObject *doi;      /* the DOI class (a subtype of DOIState) */
    PyObject *found;    /* the Found class (a subtype of tuple) */
    PyObject *decide;   /* _decide(text, match, resume, base) -> (found | None, position, action) */
    PyObject *walked;   /* _walked(…): _decide for a candidate the quick path has refused */
    PyObject *resume;   /* a list (a stream's chunk), or None */
    PyObject *base_int; /* base as an int, for _decide */
    Py_ssize_t position; /* where the scan goes on: past what has been taken or refused */
    Py_ssize_t base;     /* the stream offset of text[0] */
    Py_ssize_t tail;     /* _extract._TAIL */
    /* After the walk in C: where the scan goes on, when the running finditer may go on too
     * (its next match starts there or after: a search from there finds the same), or -1 */
    Py_ssize_t keep_from;
    int done;
    int running;         /* inside scan_next (which calls Python code): as a generator is */
    char trail[128];    /* _extract._TRAIL_CHARS: cut from a decided candidate's end */
    char url_odd[128];  /* _extract._GLUED_FILE_LAST: a URL candidate so ending goes to _decide */
} ScanObject;

enum { GO_ON = 0, RESTART = 1, STOP = 2 }; /* _decide's actions (_extract) */

static PyObject *str_lastindex, *str_span, *str_start;

int
dk_mark(char *flags, PyObject *chars, int ascii_only)
{
    memset(flags, 0, 128);
    Py_ssize_t length = PyUnicode_GET_LENGTH(chars);
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(chars, i);
        if (c < 128) {
            flags[c] = 1;
        }
        else if (ascii_only) {
            PyErr_SetString(PyExc_ValueError, "a character set must be ASCII (internal)");
            return -1;
        }
    }
    return 0;
}

static PyObject *
scan_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *finditer, *text, *resume, *doi, *found, *decide, *walked, *trail, *url_odd;
    Py_ssize_t position, base, tail;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Scan() takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OUnOnOOOOnUU:Scan", &finditer, &text, &position, &resume,
                          &base, &doi, &found, &decide, &walked, &tail, &trail, &url_odd)) {
        return NULL;
    }
    if (!PyUnicode_CheckExact(text) || !PyType_Check(doi) ||
        !PyType_IsSubtype((PyTypeObject *)doi, &dk_StateType) || !PyType_Check(found) ||
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
    if (dk_mark(self->trail, trail, 1) < 0 || dk_mark(self->url_odd, url_odd, 1) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->finditer = Py_NewRef(finditer);
    self->text = Py_NewRef(text);
    self->doi = Py_NewRef(doi);
    self->found = Py_NewRef(found);
    self->decide = Py_NewRef(decide);
    self->walked = Py_NewRef(walked);
    self->resume = Py_NewRef(resume);
    self->base_int = PyLong_FromSsize_t(base);
    if (self->base_int == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    self->position = position;
    self->base = base;
    self->tail = tail;
    self->keep_from = -1;
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
    Py_VISIT(self->walked);
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
    Py_CLEAR(self->walked);
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

/* The Found of *written*, text[start:end] at the stream offset base + start, as the DOI
 * *name* (a reference the Found takes; a new reference, NULL on failure). *from* and *to*,
 * when not NULL, are those offsets as ints already (the match's own). */
static PyObject *scan_found_of(ScanObject *self, Py_ssize_t start, Py_ssize_t end,
                               PyObject *written, PyObject *doi, PyObject *from, PyObject *to);

static PyObject *
scan_found_as(ScanObject *self, Py_ssize_t start, Py_ssize_t end, PyObject *written,
              PyObject *name, PyObject *from, PyObject *to)
{
    PyObject *doi = dk_build((PyTypeObject *)self->doi, name, dk_key_of(name));
    if (doi == NULL) {
        return NULL;
    }
    return scan_found_of(self, start, end, written, doi, from, to);
}

/* scan_found_as for the DOI *doi* (a reference the Found takes). */
static PyObject *
scan_found_of(ScanObject *self, Py_ssize_t start, Py_ssize_t end, PyObject *written,
              PyObject *doi, PyObject *from, PyObject *to)
{
    PyTypeObject *type = (PyTypeObject *)self->found;
    PyObject *found = type->tp_alloc(type, 4); /* as tuple.__new__(Found, …) makes it */
    from = from != NULL ? Py_NewRef(from) : PyLong_FromSsize_t(self->base + start);
    to = to != NULL ? Py_NewRef(to) : PyLong_FromSsize_t(self->base + end);
    if (found == NULL || from == NULL || to == NULL) {
        Py_XDECREF(found);
        Py_XDECREF(from);
        Py_XDECREF(to);
        Py_DECREF(doi);
        return NULL;
    }
    PyTuple_SET_ITEM(found, 0, doi);
    PyTuple_SET_ITEM(found, 1, from);
    PyTuple_SET_ITEM(found, 2, to);
    PyTuple_SET_ITEM(found, 3, Py_NewRef(written));
    return found;
}

/* text[start:end] (a new reference), built in one pass where it is ASCII in a text that is
 * not: PyUnicode_Substring would first search the slice for its widest character, then
 * copy it (a tenth of the time of a DOI the pattern decides, in a text that holds one
 * character outside the BMP). */
PyObject *
dk_slice(PyObject *text, Py_ssize_t start, Py_ssize_t end)
{
    assert(0 <= start && start <= end && end <= PyUnicode_GET_LENGTH(text));
    if (PyUnicode_IS_ASCII(text)) {
        return PyUnicode_Substring(text, start, end); /* (a copy of the bytes) */
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *slice = PyUnicode_New(end - start, 127);
    if (slice == NULL) {
        return NULL;
    }
    Py_UCS1 *to = PyUnicode_1BYTE_DATA(slice);
    for (Py_ssize_t at = start; at < end; at++) {
        Py_UCS4 c = READ(at);
        if (c > 127) {
            Py_DECREF(slice);
            return PyUnicode_Substring(text, start, end);
        }
        to[at - start] = (Py_UCS1)c;
    }
    return slice;
}

/* Whether the str *other* is text[start:end]. */
int
dk_slice_is(PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *other)
{
    if (!PyUnicode_Check(other) || PyUnicode_GET_LENGTH(other) != end - start) {
        return 0;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    int other_kind = PyUnicode_KIND(other);
    const void *other_data = PyUnicode_DATA(other);
    for (Py_ssize_t at = start; at < end; at++) {
        if (READ(at) != PyUnicode_READ(other_kind, other_data, at - start)) {
            return 0;
        }
    }
    return 1;
}

/* The Found of text[start:end] at the stream offset base + start (a new reference).
 * *from* and *to*, when not NULL, are those offsets as ints already (the match's own). */
static PyObject *
scan_found(ScanObject *self, Py_ssize_t start, Py_ssize_t end, PyObject *from, PyObject *to)
{
    PyObject *name = dk_slice(self->text, start, end);
    if (name == NULL) {
        return NULL;
    }
    PyObject *found = scan_found_as(self, start, end, name, Py_NewRef(name), from, to);
    Py_DECREF(name);
    return found;
}

static PyObject *scan_decided_span(ScanObject *self, int in_url, PyObject *span,
                                   Py_ssize_t start, Py_ssize_t end);

/* Where the candidate text[start:end] ends once trimmed of trailing punctuation
 * (_TRAIL_CHARS), as _scan trims a candidate the pattern has decided. */
static Py_ssize_t
trimmed(ScanObject *self, Py_ssize_t start, Py_ssize_t end)
{
    int kind = PyUnicode_KIND(self->text);
    const void *data = PyUnicode_DATA(self->text);
    while (end > start && dk_marked(self->trail, READ(end - 1))) {
        end--;
    }
    return end;
}
static PyObject *scan_quick(ScanObject *self, PyObject *span, Py_ssize_t start, Py_ssize_t end,
                            int *refused, int *in_url_said);
static PyObject *scan_walk(ScanObject *self, int group, Py_ssize_t start, Py_ssize_t end,
                           int in_url_said, int *refused);
static PyObject *scan_url(ScanObject *self, Py_ssize_t start, Py_ssize_t end, int *refused);

/* What scan_decided leaves to Python (*refused*): the candidate to _decide, to _walked (the
 * quick path has refused it), or nothing (the walk in C has refused it). */
enum { TO_DECIDE = 0, TO_WALKED = 1, WALKED = 2 };

/* A match's *span* read into *start* and *end*: 0, or -1 with an exception. */
static int
span_read(ScanObject *self, PyObject *span, Py_ssize_t *start, Py_ssize_t *end)
{
    if (!PyTuple_CheckExact(span) || PyTuple_GET_SIZE(span) != 2) {
        PyErr_SetString(PyExc_TypeError, "Scan(): a match's span is no pair (internal)");
        return -1;
    }
    *start = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 0));
    *end = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 1));
    if (PyErr_Occurred()) {
        return -1;
    }
    if (*start < 0 || *start > *end || *end > PyUnicode_GET_LENGTH(self->text)) {
        PyErr_SetString(PyExc_ValueError, "Scan(): a match outside the text (internal)");
        return -1;
    }
    return 0;
}

/* The Found of a candidate the pattern has decided (_scan's first two branches), or of one
 * of the common shape the quick path decides; or NULL: with an exception set on failure,
 * without one when _decide must see the candidate (with *refused* set when the quick path
 * has refused it: _walked then decides). */
static PyObject *
scan_decided(ScanObject *self, PyObject *match, int *refused)
{
    PyObject *kind = PyObject_GetAttr(match, str_lastindex);
    if (kind == NULL) {
        return NULL;
    }
    int in_url = kind != Py_None;
    long group = in_url ? PyLong_AsLong(kind) : 0;
    Py_DECREF(kind);
    if (group < 0 || group > 3) {
        return NULL; /* (an error from PyLong_AsLong stays set) */
    }
    PyObject *span = PyObject_CallMethodNoArgs(match, str_span);
    if (span == NULL) {
        return NULL;
    }
    Py_ssize_t start, end;
    PyObject *found = NULL;
    if (span_read(self, span, &start, &end) == 0) {
        if (group == 2) {
            int in_url_said;
            found = scan_quick(self, span, start, end, refused, &in_url_said);
            /* (what the quick path leaves, the walk decides alike: the property test) */
            if (found == NULL && !PyErr_Occurred()) {
                found = scan_walk(self, 2, start, end, in_url_said, refused);
            }
        }
        else {
            found = group == 3 ? scan_walk(self, 3, start, end, -1, refused)
                               : scan_decided_span(self, in_url, span, start, end);
            if (group == 1 && found == NULL && !PyErr_Occurred()) {
                found = scan_url(self, start, end, refused);
            }
        }
    }
    Py_DECREF(span);
    return found;
}

/* scan_decided's answer for the match's *span* (read: *start*, *end*): whose ints the Found
 * takes when they are its offsets (saving two ints per DOI in a whole text). */
static PyObject *
scan_decided_span(ScanObject *self, int in_url, PyObject *span, Py_ssize_t start,
                  Py_ssize_t end)
{
    Py_ssize_t matched_end = end;
    Py_ssize_t length = PyUnicode_GET_LENGTH(self->text);
    if (self->resume != Py_None && end >= length - 1) {
        return NULL; /* in a stream, the next chunk may go on with it */
    }
    int unicode_kind = PyUnicode_KIND(self->text);
    const void *data = PyUnicode_DATA(self->text);
    end = trimmed(self, start, end);
    if (end == start) {
        return NULL; /* nothing left (the pattern's matches start with '10.': never) */
    }
    if (in_url) {
        /* as _extract._url_plain: else _url_name has something to say (an escape, a view
         * or file after a second '/', a file glued to the end) */
        if (dk_marked(self->url_odd, PyUnicode_READ(unicode_kind, data, end - 1))) {
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

/* The Found of a candidate of the common shape (group 2) that the quick path (quick.c)
 * decides, or NULL: with an exception set on failure, without one when _decide must see
 * the candidate (*refused* set when the quick path has refused it). */
static PyObject *
scan_quick(ScanObject *self, PyObject *span, Py_ssize_t start, Py_ssize_t end, int *refused,
           int *in_url_said)
{
    Py_ssize_t written_end;
    PyObject *name;
    int said = dk_quick(self->text, start, end, self->resume != Py_None, &written_end, &name,
                        in_url_said);
    if (said != DK_DECIDED) {
        *refused = said == DK_REFUSED ? TO_WALKED : TO_DECIDE;
        return NULL; /* (with the exception, if any) */
    }
    /* (the text as written is most often the name itself) */
    PyObject *written = dk_slice_is(self->text, start, written_end, name)
                            ? Py_NewRef(name)
                            : dk_slice(self->text, start, written_end);
    if (written == NULL) {
        Py_DECREF(name);
        return NULL;
    }
    PyObject *from = self->base == 0 ? PyTuple_GET_ITEM(span, 0) : NULL;
    PyObject *found = scan_found_as(self, start, written_end, written, name, from, NULL);
    Py_DECREF(written);
    if (found != NULL) {
        self->position = written_end;
    }
    return found;
}

/* The Found of a candidate of *group* (2, refused by the quick path, or 3, a bare start) of a
 * whole text that the walk in C (walk.c) decides, or NULL: with an exception set on
 * failure; else *refused* says WALKED when it has refused the candidate (the scan goes
 * on), and is left as it was when Python must read it. */
static PyObject *
scan_walk(ScanObject *self, int group, Py_ssize_t start, Py_ssize_t end, int in_url_said,
          int *refused)
{
    if (self->resume != Py_None) {
        return NULL; /* a stream's chunk: the Python walk waits where it must */
    }
    PyObject *doi;
    Py_ssize_t found_end, position;
    int said = dk_walk(self->text, group, start, end, in_url_said, self->doi, &doi, &found_end,
                       &position);
    if (said < 0 && !PyErr_Occurred()) {
        PyErr_SetString(PyExc_SystemError, "the walk in C failed without an error (internal)");
    }
    if (said < 0 || said == DK_LEFT) {
        return NULL;
    }
    /* As after _walked, the scan goes on from position: with the running finditer when
     * position is past this match and its next match starts there or after (scan_step
     * checks), else with a new one. */
    self->position = position;
    if (position >= end) {
        self->keep_from = position;
    }
    else {
        Py_CLEAR(self->matches);
    }
    if (said == DK_REFUSED) {
        *refused = WALKED;
        return NULL;
    }
    PyObject *written = dk_slice(self->text, start, found_end);
    if (written == NULL) {
        Py_DECREF(doi);
        return NULL;
    }
    PyObject *found = scan_found_of(self, start, found_end, written, doi, NULL, NULL);
    Py_DECREF(written);
    return found;
}

/* For a resolver URL's candidate text[start:end] of a whole text that the loop has not
 * decided, as _decide reads it: the name _url._url_name gives (its Found, the scan going
 * on with the same matches), but a Springer book's, whose chapter may follow a blank
 * (_completed: NULL, to _decide); else the walk's (scan_walk's answer). */
static PyObject *
scan_url(ScanObject *self, Py_ssize_t start, Py_ssize_t end, int *refused)
{
    if (self->resume != Py_None || !dk_rule_ready()) {
        return NULL; /* (a stream's chunk; or the rules not handed over: Python reads it) */
    }
    int kind = PyUnicode_KIND(self->text);
    const void *data = PyUnicode_DATA(self->text);
    Py_ssize_t written_end = trimmed(self, start, end);
    PyObject *written = dk_slice(self->text, start, written_end);
    PyObject *name = written == NULL ? NULL : dk_rule_url_name(written);
    if (name == NULL || name == Py_None) {
        Py_XDECREF(written);
        Py_XDECREF(name);
        return name == NULL ? NULL : scan_walk(self, 1, start, end, -1, refused);
    }
    int book = 1;
    if (written_end < PyUnicode_GET_LENGTH(self->text) && READ(written_end) == ' ') {
        book = PyUnicode_Check(name) && PyUnicode_IS_ASCII(name) ? dk_rule_book(name) : 1;
    }
    else {
        book = !PyUnicode_Check(name); /* (no blank after it: no chapter) */
    }
    if (book) {
        Py_DECREF(written);
        Py_DECREF(name);
        return NULL; /* _decide reads it */
    }
    PyObject *found = scan_found_as(self, start, written_end, written, name, NULL, NULL);
    Py_DECREF(written);
    if (found != NULL) {
        self->position = written_end;
    }
    return found;
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
            self->keep_from = -1;
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
        if (match != NULL && self->keep_from >= 0) {
            PyObject *at = PyObject_CallMethodNoArgs(match, str_start);
            Py_ssize_t start = at == NULL ? -1 : PyLong_AsSsize_t(at);
            Py_XDECREF(at);
            if (start == -1 && PyErr_Occurred()) {
                Py_DECREF(match);
                return NULL;
            }
            if (start < self->keep_from) { /* a search from there must start anew */
                Py_DECREF(match);
                Py_CLEAR(self->matches);
                self->keep_from = -1;
                continue;
            }
        }
        self->keep_from = -1;
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
        int refused = TO_DECIDE;
        PyObject *found = scan_decided(self, match, &refused);
        if (found != NULL || PyErr_Occurred() || refused == WALKED) {
            Py_DECREF(match);
            if (found == NULL && !PyErr_Occurred()) {
                continue; /* refused by the walk in C */
            }
            return found;
        }
        PyObject *call[] = {self->text, match, self->resume, self->base_int};
        PyObject *answer = PyObject_Vectorcall(refused == TO_WALKED ? self->walked : self->decide,
                                               call, 4, NULL);
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

PyTypeObject dk_ScanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "doikit._speedups.Scan",
    .tp_doc = PyDoc_STR("Scan(finditer, text, position, resume, base, doi, found, decide, "
                        "walked, tail, trail, url_odd)"
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

/* Ready the type and the names it looks up: 0, or -1 with an exception. */
int
dk_scan_ready(void)
{
    if (PyType_Ready(&dk_ScanType) < 0) {
        return -1;
    }
    str_lastindex = PyUnicode_InternFromString("lastindex");
    str_span = PyUnicode_InternFromString("span");
    str_start = PyUnicode_InternFromString("start");
    return str_lastindex == NULL || str_span == NULL || str_start == NULL ? -1 : 0;
}
