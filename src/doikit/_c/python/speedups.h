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

/* scan.c: sets of ASCII characters as flags, for the scan and its quick path. dk_mark marks
 * in *flags* (128, cleared first) the ASCII characters of *chars*; any other is a ValueError
 * with *ascii_only*, else left out (the caller reads it another way): 0 or -1. */
static inline int
dk_marked(const char *flags, Py_UCS4 c)
{
    return c < 128 && flags[c];
}
int dk_mark(char *flags, PyObject *chars, int ascii_only);

/* quick.c: the extractor's quick path (for scan.c). dk_quick says DK_DECIDED, DK_LEFT (to
 * _decide, whose quick path may decide it), DK_REFUSED (as _quick refuses it: _walked
 * decides), or -1 with an exception. rules.c: configure_quick(), what the quick path and
 * the walk are handed for the rules they share (extract.h has the rest). */
enum { DK_LEFT = 0, DK_DECIDED = 1, DK_REFUSED = 2 };
int dk_quick(PyObject *text, Py_ssize_t start, Py_ssize_t end, int stream,
             Py_ssize_t *written_end, PyObject **name, int *in_url_said);
PyObject *dk_configure_quick(PyObject *module, PyObject *args, PyObject *kwargs);
/* walk.c: the extractor's walk (for scan.c), and what it is handed. dk_walk reads a
 * candidate of group 1 (a resolver URL's, that the scan has not decided) as one of group
 * 2 (the common shape), and takes what dk_quick has found _url._in_url to say of it
 * (*in_url_said*, or -1); it says DK_DECIDED (the DOI in *doi*, written
 * text[start:*found_end]), DK_REFUSED (no DOI), both with where the scan goes on in
 * *position*; DK_LEFT (to _walked); or -1 with an exception. */
int dk_walk(PyObject *text, int group, Py_ssize_t start, Py_ssize_t match_end, int in_url_said,
            PyObject *doi_type, PyObject **doi, Py_ssize_t *found_end, Py_ssize_t *position);
PyObject *dk_configure_walk(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *dk_walk_one(PyObject *module, PyObject *args);
PyObject *dk_url_token_one(PyObject *module, PyObject *args);
PyObject *dk_rejoined_one(PyObject *module, PyObject *args);
PyObject *dk_url_length_one(PyObject *module, PyObject *args);
PyObject *dk_url_name_one(PyObject *module, PyObject *written);
PyObject *dk_separated_one(PyObject *module, PyObject *args);

/* bulk.c: parse_many and normalize_many */
PyObject *dk_parse_many(PyObject *module, PyObject *args);
PyObject *dk_normalize_many(PyObject *module, PyObject *args);

/* arrow.c: arrow_many */
PyObject *dk_arrow_many(PyObject *module, PyObject *args);

/* answer.c: the native client's common answer (doikit.handle._fast_codec) */
PyObject *dk_configure_answers(PyObject *module, PyObject *args);
PyObject *dk_read_answer(PyObject *module, PyObject *unit);

#endif
