/* The extractor's walk in C, its last step (issue 30): _make._make for a candidate the
 * walk in C (walk.c) has read whole in ASCII, with the parts configure_walk() hands over
 * (dk_walk_parts): the candidate trimmed of what trails it, a URL's tail cut (as
 * _url._in_url_length says, asked only where one may be: rules.c's dk_rule_url_may_cut), a
 * preprint's version cut (_make._PREPRINT), its line breaks dropped, its backslash escapes,
 * character references and percent-escapes read, its lost hyphen mended, and DOI(). */
#include "extract.h"

static const DkWalkParts *const walk = &dk_walk_parts;

/* The name of the candidate text[start:end] (printable ASCII) as _make._make reads it:
 * its line breaks dropped, its backslash escapes and character references read (a new
 * ASCII str); NULL with *left* set when Python must read it (TeX's escaped '%', escapes
 * with line breaks, references to characters outside ASCII), or with an exception. */
static PyObject *
name_of(PyObject *text, Py_ssize_t start, Py_ssize_t end, int *left)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *name = PyUnicode_New(end - start, 127);
    if (name == NULL) {
        return NULL;
    }
    Py_UCS1 *out = PyUnicode_1BYTE_DATA(name);
    Py_ssize_t size = 0;
    int ampersand = 0, semicolons = 0, backslash = 0, newline = 0;
    for (Py_ssize_t at = start; at < end; at++) {
        Py_UCS4 c = READ(at);
        backslash |= c == '\\';
        newline |= c == '\n';
        if (c == '\\' && at + 3 < end && READ(at + 1) == '%' && dk_is_hex(READ(at + 2)) &&
            dk_is_hex(READ(at + 3))) {
            *left = 1; /* TeX's '\%': decoded as in a URL (_make._TEX_PERCENT_ESCAPE) */
        }
    }
    if (backslash && newline) {
        *left = 1; /* (escapes and line breaks: read in the Python order) */
    }
    if (*left) {
        Py_DECREF(name);
        return NULL;
    }
    for (Py_ssize_t at = start; at < end;) {
        Py_UCS4 c = READ(at);
        Py_ssize_t past = c == ' ' || c == '\t' || c == '\r' || c == '\n'
                              ? dk_line_break(kind, data, end, at)
                              : -1;
        if (past >= 0) { /* a line break, dropped (_run._LINE_BREAK) */
            at = past;
            continue;
        }
        if (c == '\\' && at + 1 < end) { /* _run._ESCAPED_PUNCTUATION */
            Py_UCS4 escaped = READ(at + 1);
            if (dk_marked(walk->unescaped, escaped)) {
                c = escaped;
                at++;
            }
        }
        ampersand |= c == '&';
        semicolons |= c == ';';
        out[size++] = (Py_UCS1)c;
        at++;
    }
    if (size < end - start) {
        Py_SETREF(name, PyUnicode_Substring(name, 0, size));
    }
    if (name != NULL && ampersand && semicolons) { /* character references */
        Py_SETREF(name, PyObject_CallOneArg(walk->unescape, name));
        if (name != NULL && (!PyUnicode_Check(name) || !PyUnicode_IS_ASCII(name))) {
            *left = 1; /* (what they stand for outside ASCII: ligatures) */
            Py_CLEAR(name);
        }
    }
    return name;
}

/* _syntax.percent_decode(name) for an ASCII *name* whose every '%' starts an escape of an
 * ASCII character (a new reference); NULL, without an exception, for any other (the Python
 * function decodes UTF-8 and says what is wrong), or with one (no memory). */
static PyObject *
ascii_decoded(PyObject *name)
{
    Py_ssize_t size = PyUnicode_GET_LENGTH(name);
    const Py_UCS1 *in = PyUnicode_1BYTE_DATA(name);
    char out[256];
    Py_ssize_t length = 0;
    if (size > (Py_ssize_t)sizeof(out)) {
        return NULL;
    }
    for (Py_ssize_t at = 0; at < size; at++) {
        if (in[at] != '%') {
            out[length++] = (char)in[at];
            continue;
        }
        if (at + 2 >= size || !dk_is_hex(in[at + 1]) || !dk_is_hex(in[at + 2]) ||
            in[at + 1] > '7') {
            return NULL; /* (no escape, or one of a byte outside ASCII) */
        }
        int high = in[at + 1] - '0';
        int low = Py_ISDIGIT(in[at + 2]) ? in[at + 2] - '0' : Py_TOLOWER(in[at + 2]) - 'a' + 10;
        out[length++] = (char)(high * 16 + low);
        at += 2;
    }
    return PyUnicode_DecodeASCII(out, length, NULL);
}

/* Cut *end* to *start* and the length a rule has answered (*kept*, an int; a reference
 * this takes, or NULL with an exception): 0, or -1 with an exception (also when the length
 * is not one of the candidate's, text[start:*end]; *rule* names the rule). */
static int
cut_to(PyObject *kept, Py_ssize_t start, Py_ssize_t *end, const char *rule)
{
    Py_ssize_t keep = kept == NULL ? -1 : PyLong_AsSsize_t(kept);
    Py_XDECREF(kept);
    if (keep < 0 || keep > *end - start) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_ValueError, "%s: out of range (internal)", rule);
        }
        return -1;
    }
    *end = start + keep;
    return 0;
}

/* _make._make for a whole text, for a candidate the walk has read whole in ASCII (not a
 * URN): the DOI (a new reference in *doi*, or NULL: no DOI) written text[start:*found_end].
 * DK_DECIDED, DK_LEFT, or -1 with an exception. */
int
dk_walk_make(PyObject *text, Py_ssize_t start, Py_ssize_t suffix, Py_ssize_t end, int in_url,
             PyObject *doi_type, PyObject **doi, Py_ssize_t *found_end)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    *doi = NULL;
    if (in_url && end == length && (READ(end - 1) == '%' || READ(end - 2) == '%')) {
        return DK_LEFT; /* a dangling escape at the text's end (_DANGLING_ESCAPE) */
    }
    while (end > start) { /* trailing punctuation and blanks */
        Py_UCS4 last = READ(end - 1);
        if (last == ';') {
            for (Py_ssize_t at = end - 40 > start ? end - 40 : start; at < end; at++) {
                if (READ(at) == '&') {
                    return DK_LEFT; /* a character reference may end there */
                }
            }
        }
        int trails = dk_rule_trails(last);
        if (trails < 0) {
            return -1;
        }
        if (!trails && !Py_UNICODE_ISSPACE(last)) {
            break;
        }
        end--;
    }
    for (Py_ssize_t at = start; at < end; at++) {
        if (READ(at) >= 128) {
            return DK_LEFT; /* (its line breaks and soft hyphens, ligatures) */
        }
    }
    if (in_url) {
        int may = dk_rule_url_may_cut(text, start, suffix, end);
        if (may != 0) {
            if (may < 0) {
                return -1;
            }
            Py_ssize_t kept = dk_url_length(text, start, end); /* (url.c) */
            if (kept == -1) {
                return -1;
            }
            if (kept >= 0) {
                end = kept;
            }
            else { /* escapes: _in_url_length reads them */
                PyObject *said = dk_call_on(walk->url_length, text, start, end);
                if (cut_to(said, start, &end, "_in_url_length") < 0) {
                    return -1;
                }
            }
        }
    }
    if (dk_rule_preprint(text, start, end)) { /* its version or file cut (_PREPRINT's group 1) */
        PyObject *written = dk_slice(text, start, end);
        PyObject *version = written ? PyObject_CallOneArg(walk->preprint, written) : NULL;
        Py_XDECREF(written);
        if (version != Py_None) { /* (None: no version, nothing cut) */
            PyObject *kept = version ? PyObject_CallMethod(version, "end", "i", 1) : NULL;
            Py_XDECREF(version);
            if (cut_to(kept, start, &end, "_PREPRINT") < 0) {
                return -1;
            }
        }
        else {
            Py_DECREF(version);
        }
    }
    int left = 0;
    PyObject *name = name_of(text, start, end, &left);
    if (name == NULL) {
        return left ? DK_LEFT : -1;
    }
    if (in_url && PyUnicode_FindChar(name, '%', 0, PyUnicode_GET_LENGTH(name), 1) >= 0) {
        PyObject *decoded = ascii_decoded(name);
        if (decoded == NULL && PyErr_Occurred()) {
            Py_DECREF(name);
            return -1;
        }
        Py_SETREF(name, decoded != NULL ? decoded : PyObject_CallOneArg(walk->decode, name));
        if (name == NULL) {
            if (!PyErr_ExceptionMatches(walk->decode_error)) {
                return -1;
            }
            PyErr_Clear();
            *found_end = end;
            return DK_DECIDED; /* escapes that decode to no name: no DOI */
        }
        if (!PyUnicode_Check(name) || !PyUnicode_IS_ASCII(name)) {
            Py_DECREF(name);
            return DK_LEFT; /* (ligatures) */
        }
    }
    Py_SETREF(name, dk_rule_mended(name));
    if (name == NULL) {
        return -1;
    }
    *doi = PyObject_CallOneArg(doi_type, name);
    Py_DECREF(name);
    if (*doi == NULL) {
        if (!PyErr_ExceptionMatches(dk_config.invalid_doi) &&
            !PyErr_ExceptionMatches(walk->decode_error)) {
            return -1;
        }
        PyErr_Clear();
    }
    *found_end = end;
    return DK_DECIDED;
}

