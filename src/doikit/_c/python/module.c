/* doikit._speedups: the DOI value's state and identity, in C.
 *
 * Optional. doikit._doi.DOIState is the pure-Python definition and the reference; this
 * module behaves the same (property tests hold the two to each other) and exists for
 * speed: in CPython 3.11, calling a class whose __init__ is Python code costs about as
 * much as parsing the name, and so does a property. Here DOI(text) runs no Python frame
 * for the common presentations, and d.key is a read-only slot. Its parse() and
 * normalize() are doikit's functions of those names without their Python frame.
 *
 * The common presentations are read by the C reader (lib/reader.c, pure C), and
 * otherwise decided by the compiled pattern of doikit._present (_QUICK), which this module
 * calls; everything else goes to the Python parser (parse_rest), and non-ASCII keys to
 * fold(). doikit._doi hands these in once, through configure(), into dk_config.
 *
 * One extension, one translation unit per job (docs/design.md, "The accelerator's
 * sources"):
 *   module.c  this file: the module, configure(), parse() and normalize()
 *   state.c   the DOIState type, and the name in a str (C reader, else Python)
 *   scan.c    the extractor's scan (Scan)
 *   rules.c   the extractor's rules its quick path and walk read alike (configure_quick)
 *   url.c     those rules of URLs: in a URL, its token, how much of it is the DOI
 *   quick.c   the extractor's quick path, for the scan
 *   walk.c    the extractor's walk, for the scan (configure_walk, walk)
 *   make.c    the walk's last step: a candidate made a DOI
 *   bulk.c    the bulk loop (parse_many, normalize_many)
 *   helper.c  the bulk loop's helper thread and its atomics
 *   arrow.c   the Arrow reader (arrow_many)
 *   answer.c  the native client's common answer (read_answer)
 */
#include "speedups.h"

DkConfig dk_config;

/* The group of _QUICK that holds a plain name, as doikit._present reads it (match[2]),
 * when configure() is not handed one. */
#define DEFAULT_NAME_GROUP 2

int
dk_configured(void)
{
    if (dk_config.quick == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "doikit._speedups is used before doikit._doi configured it");
        return 0;
    }
    return 1;
}

static PyObject *
configure(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *quick, *parse_rest, *fold, *as_text, *invalid_doi, *hosts, *name_group = NULL;
    if (!PyArg_ParseTuple(args, "OOOOOO!|O!:configure", &quick, &parse_rest, &fold, &as_text,
                          &invalid_doi, &PyTuple_Type, &hosts, &PyLong_Type, &name_group)) {
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(hosts);
    if (count > DK_MAX_HOSTS) {
        PyErr_SetString(PyExc_ValueError, "too many resolver hosts");
        return NULL;
    }
    const char *names[DK_MAX_HOSTS];
    dk_size sizes[DK_MAX_HOSTS];
    for (Py_ssize_t i = 0; i < count; i++) { /* all checked before any is written */
        Py_ssize_t size;
        names[i] = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(hosts, i), &size);
        if (names[i] == NULL) {
            return NULL;
        }
        sizes[i] = size;
    }
    if (name_group == NULL) {
        name_group = PyLong_FromLong(DEFAULT_NAME_GROUP);
        if (name_group == NULL) {
            return NULL;
        }
    }
    else {
        Py_INCREF(name_group);
    }
    if (dk_hosts_set(&dk_config.hosts, names, sizes, count) < 0) {
        Py_DECREF(name_group);
        PyErr_SetString(PyExc_ValueError, "a resolver host is too long");
        return NULL;
    }
    Py_XSETREF(dk_config.quick, Py_NewRef(quick));
    Py_XSETREF(dk_config.parse_rest, Py_NewRef(parse_rest));
    Py_XSETREF(dk_config.fold, Py_NewRef(fold));
    Py_XSETREF(dk_config.as_text, Py_NewRef(as_text));
    Py_XSETREF(dk_config.invalid_doi, Py_NewRef(invalid_doi));
    Py_XSETREF(dk_config.name_group, name_group);
    Py_RETURN_NONE;
}

static PyObject *
module_parse(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (!dk_configured()) {
        return NULL;
    }
    return dk_parse_name(text);
}

static PyObject *
module_normalize(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (!dk_configured()) {
        return NULL;
    }
    return dk_normalized(text);
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
    {"parse_many", dk_parse_many, METH_VARARGS,
     PyDoc_STR("parse_many(texts, report, /)\n--\n\n"
               "The bare name of each text (None stays None); an invalid one is None, or "
               "with *report* its InvalidDOI.")},
    {"normalize_many", dk_normalize_many, METH_VARARGS,
     PyDoc_STR("normalize_many(texts, report, /)\n--\n\n"
               "The comparison key of each text (None stays None); an invalid one is None, "
               "or with *report* its InvalidDOI.")},
    {"arrow_many", dk_arrow_many, METH_VARARGS,
     PyDoc_STR("arrow_many(validity, offsets, data, offset, length, wide, key, /)\n--\n\n"
               "The names (or keys) of an Arrow string array's buffers, as the buffers of a "
               "new one: (validity, offsets, data, null count).")},
    {"read_answer", dk_read_answer, METH_O,
     PyDoc_STR("read_answer(unit, /)\n--\n\n"
               "The HandleRecord of a plain resolution answer, or None "
               "(doikit.handle._fast_codec).")},
    {"configure_answers", dk_configure_answers, METH_VARARGS,
     PyDoc_STR("configure_answers(value, names, record, names, reference, names, "
               "data_from_wire, permissions, request_digest): the classes (internal).")},
    {"configure_quick", (PyCFunction)(void (*)(void))dk_configure_quick,
     METH_VARARGS | METH_KEYWORDS,
     PyDoc_STR("configure_quick(**parts): doikit._extract's parts for the quick path "
               "(internal).")},
    {"configure_walk", (PyCFunction)(void (*)(void))dk_configure_walk,
     METH_VARARGS | METH_KEYWORDS,
     PyDoc_STR("configure_walk(**parts): doikit._extract's parts for the walk (internal).")},
    {"walk", dk_walk_one, METH_VARARGS,
     PyDoc_STR("walk(text, group, start, end, doi, /)\n--\n\n"
               "The C walk's answer for one candidate: None (left to Python), or (DOI or "
               "None, its end or -1, where the scan goes on) (internal).")},
    {"url_token", dk_url_token_one, METH_VARARGS,
     PyDoc_STR("url_token(text, token, end, /)\n--\n\n"
               "Whether _url._URL_TOKEN matches text[token:end], as the C paths read it "
               "(internal).")},
    {"rejoined", dk_rejoined_one, METH_VARARGS,
     PyDoc_STR("rejoined(text, at, /)\n--\n\n"
               "Where the C paths say the line after the break at *at* goes on with the DOI "
               "before it, or None (_run._rejoined) (internal).")},
    {"url_length", dk_url_length_one, METH_VARARGS,
     PyDoc_STR("url_length(text, start, end, /)\n--\n\n"
               "How much of the URL candidate text[start:end] the C paths keep "
               "(_url._in_url_length), or None where they ask it (internal).")},
    {"url_name", dk_url_name_one, METH_O,
     PyDoc_STR("url_name(written, /)\n--\n\n"
               "The name in a resolver URL's candidate as the C paths read it "
               "(_url._url_name) (internal).")},
    {"separated", dk_separated_one, METH_VARARGS,
     PyDoc_STR("separated(text, at, /)\n--\n\n"
               "Where the C walk says a DOI ends at the ';' at *at*, or -1 "
               "(_run._separated) (internal).")},
    {"configure", configure, METH_VARARGS,
     PyDoc_STR("configure(quick, parse_rest, fold, as_text, invalid_doi, hosts, "
               "name_group=2): the Python parts (internal).")},
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
    if (PyType_Ready(&dk_StateType) < 0 || dk_scan_ready() < 0) {
        return NULL;
    }
    PyObject *self = PyModule_Create(&module);
    if (self == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(self, "DOIState", (PyObject *)&dk_StateType) < 0 ||
        PyModule_AddObjectRef(self, "Scan", (PyObject *)&dk_ScanType) < 0) {
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
