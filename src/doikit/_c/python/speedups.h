/* doikit._speedups, inside: what its translation units share (see module.c for the whole). */
#ifndef DOIKIT_SPEEDUPS_H
#define DOIKIT_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "reader.h"

/* What Python hands over, once, through configure() (module.c), while doikit._doi is
 * imported: the one place each of these lives on this side. */
typedef struct {
    PyObject *quick;       /* _present._QUICK: the compiled pattern's match() */
    PyObject *parse_rest;  /* _present.parse_rest(text, match) -> name */
    PyObject *fold;        /* _syntax.fold(name) -> key */
    PyObject *as_text;     /* _doi._as_text(value) -> str, or TypeError */
    PyObject *invalid_doi; /* doikit.InvalidDOI: caught per item by the bulk functions */
    PyObject *name_group;  /* the group of _QUICK that holds a plain name (an int) */
    DkHosts hosts;         /* _syntax.RESOLVER_HOSTS, as the C reader reads them */
} DkConfig;

extern DkConfig dk_config;

/* 1, or 0 with a RuntimeError when configure() has not run yet. */
int dk_configured(void);

/* state.c: DOIState, and a name read from a str (by the C reader, else by Python) */
extern PyTypeObject dk_StateType;
PyObject *dk_key_of(PyObject *name);
PyObject *dk_build(PyTypeObject *type, PyObject *name, PyObject *key);
PyObject *dk_quick_name(PyObject *text, int key);
PyObject *dk_pattern_name(PyObject *text);
PyObject *dk_pattern_key(PyObject *text);
PyObject *dk_parse_name(PyObject *text);
PyObject *dk_normalized(PyObject *text);

/* scan.c: the extractor's scan */
extern PyTypeObject dk_ScanType;
int dk_scan_ready(void);

/* quick.c: the extractor's quick path (for scan.c), and what it is handed; dk_quick says
 * 1 (decided), 0 (left to _decide), 2 (refused as _quick refuses: _walked decides), -1 */
int dk_quick(PyObject *text, Py_ssize_t start, Py_ssize_t end, int stream,
             Py_ssize_t *written_end, PyObject **name);
PyObject *dk_configure_quick(PyObject *module, PyObject *args, PyObject *kwargs);

/* bulk.c: parse_many and normalize_many */
PyObject *dk_parse_many(PyObject *module, PyObject *args);
PyObject *dk_normalize_many(PyObject *module, PyObject *args);

/* arrow.c: arrow_many */
PyObject *dk_arrow_many(PyObject *module, PyObject *args);

/* answer.c: the native client's common answer (doikit.handle._fast_codec) */
PyObject *dk_configure_answers(PyObject *module, PyObject *args);
PyObject *dk_read_answer(PyObject *module, PyObject *unit);

#endif
