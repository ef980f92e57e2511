/* The extractor's rules of URLs in C (issue 30), which its quick path (quick.c), its walk
 * (walk.c) and its last step (make.c) read alike: whether a candidate is in a URL (its
 * token, a resolver's head, a query parameter), the views after a DOI, and how much of a
 * URL candidate is the DOI (url_may_cut, url_length).
 *
 * Their characters, heads, views and file names come from doikit._extract._url, handed
 * over by configure_quick() and configure_walk(). Read here in full, each held to its
 * Python by a test on any text: the URL token (_URL_TOKEN; url_token()), and what of a URL
 * candidate without escapes is the DOI (_in_url_length, _url_name; url_length(),
 * url_name()). The rest is asked of _url's own patterns and functions: a doi parameter,
 * escapes. */
#include "extract.h"

static const DkRules *const config = &dk_rules;
static const DkWalkParts *const walk = &dk_walk_parts;

/* _quick._after_resolver: a common resolver URL, after a boundary, ends at *start*. */
int
dk_after_resolver(int kind, const void *data, Py_ssize_t length, Py_ssize_t start)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(config->heads); i++) {
        PyObject *head = PyTuple_GET_ITEM(config->heads, i);
        Py_ssize_t at = start - PyUnicode_GET_LENGTH(head);
        if (dk_ascii_at(kind, data, length, at, head, 0) &&
            (at == 0 || dk_marked(config->boundaries, READ(at - 1)))) {
            return 1;
        }
    }
    return 0;
}

/* _url._token_start: after the last boundary before *start*, at most lookback back. */
Py_ssize_t
dk_token_start(int kind, const void *data, Py_ssize_t start)
{
    Py_ssize_t low = start > config->lookback ? start - config->lookback : 0;
    for (Py_ssize_t at = start - 1; at >= low; at--) {
        if (dk_marked(config->boundaries, READ(at))) {
            return at + 1;
        }
    }
    return low;
}

/* Whether text[at] (before *end*) is an ASCII letter, or a character of a URL scheme. */
#define LETTER_AT(at) ((at) < end && READ(at) < 128 && Py_ISALPHA(READ(at)))
#define SCHEME_AT(at)                                                                        \
    ((at) < end && READ(at) < 128 &&                                                         \
     (Py_ISALNUM(READ(at)) || READ(at) == '+' || READ(at) == '.' || READ(at) == '-'))

/* Whether a host with a top-level domain and a '/' start at *at* of text[:end] (_URL_TOKEN's
 * third branch: labels of letters, digits and '-', each followed by '.', then two letters
 * or more, maybe a port of one to five digits, then '/'). */
static int
host_at(int kind, const void *data, Py_ssize_t at, Py_ssize_t end)
{
    Py_ssize_t host = at, last_dot = -1;
    for (; host < end && READ(host) < 128 &&
           (Py_ISALNUM(READ(host)) || READ(host) == '-' || READ(host) == '.');
         host++) {
        if (READ(host) == '.') {
            if (host == at || host == last_dot + 1) {
                return 0; /* an empty label */
            }
            last_dot = host;
        }
    }
    /* (the domain ends where the host's characters do: ':' or '/' must follow it) */
    if (last_dot < 0 || host - last_dot - 1 < 2) {
        return 0;
    }
    for (Py_ssize_t letter = last_dot + 1; letter < host; letter++) {
        if (!Py_ISALPHA(READ(letter))) {
            return 0;
        }
    }
    if (host < end && READ(host) == ':') {
        Py_ssize_t port = host + 1;
        while (port < end && READ(port) >= '0' && READ(port) <= '9') {
            port++;
        }
        if (port - host - 1 < 1 || port - host - 1 > 5) {
            return 0;
        }
        host = port;
    }
    return host < end && READ(host) == '/';
}

/* Whether _url._URL_TOKEN matches text[token:end], read as its branches read it: after a
 * query parameter's 'name=' or not, a scheme and '://', 'www.', a host with a top-level
 * domain (host_at), or '/' and a letter (a path). 1 or 0. */
int
dk_url_token(PyObject *text, int kind, const void *data, Py_ssize_t token, Py_ssize_t end)
{
    (void)text;
    Py_ssize_t name_end = token; /* a parameter's name ('[a-z][a-z0-9_-]*='), or none */
    if (LETTER_AT(name_end)) {
        do {
            name_end++;
        } while (name_end < end && READ(name_end) < 128 &&
                 (Py_ISALNUM(READ(name_end)) || READ(name_end) == '_' || READ(name_end) == '-'));
        name_end = name_end < end && READ(name_end) == '=' ? name_end + 1 : token;
    }
    Py_ssize_t heads[2] = {name_end, token};
    for (int i = 0; i < (name_end == token ? 1 : 2); i++) {
        Py_ssize_t at = heads[i];
        if (LETTER_AT(at)) {
            Py_ssize_t scheme_end = at + 1;
            while (SCHEME_AT(scheme_end)) {
                scheme_end++;
            }
            if (scheme_end + 2 < end && READ(scheme_end) == ':' && READ(scheme_end + 1) == '/' &&
                READ(scheme_end + 2) == '/') {
                return 1; /* a scheme and '://' */
            }
        }
        if (at + 4 <= end && (READ(at) | 0x20) == 'w' && (READ(at + 1) | 0x20) == 'w' &&
            (READ(at + 2) | 0x20) == 'w' && READ(at + 3) == '.') {
            return 1; /* 'www.' */
        }
        if (host_at(kind, data, at, end)) {
            return 1;
        }
        if (at + 1 < end && READ(at) == '/' && LETTER_AT(at + 1)) {
            return 1; /* a path */
        }
    }
    return 0;
}

/* _url._in_url for a candidate after '/' or '=': 1, 0, or -1 with an exception. */
int
dk_in_url_at(PyObject *text, int kind, const void *data, Py_ssize_t start, Py_ssize_t token)
{
    int said = dk_url_token(text, kind, data, token, start);
    if (said != 0 || READ(start - 1) != '=') {
        return said;
    }
    for (Py_ssize_t at = start - 1; at >= token; at--) { /* the last parameter start */
        if (dk_marked(config->parameter_starts, READ(at))) {
            return dk_answers(config->parameter, text, 2, at, start, 0);
        }
    }
    return 0;
}

/* _url._in_url: whether the DOI at *start* is part of a URL (*escaped*: an escaped ':' or
 * '/' is before it). 1, 0, or -1 with an exception. */
int
dk_rule_in_url(PyObject *text, Py_ssize_t start, int escaped)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (start == 0) {
        return 0;
    }
    Py_UCS4 before = READ(start - 1);
    if (before != '/' && before != '=' && !escaped &&
        !dk_ascii_at(kind, data, length, start - PyUnicode_GET_LENGTH(
                                                   PyTuple_GET_ITEM(config->colon_markers, 1)),
                  PyTuple_GET_ITEM(config->colon_markers, 1), 1)) {
        return 0; /* (a path, a query value, an escape, or a path's 'doi:' label) */
    }
    if (before == '/' && dk_after_resolver(kind, data, length, start)) {
        return 1;
    }
    return dk_in_url_at(text, kind, data, start, dk_token_start(kind, data, start));
}

/* Whether text[at:end] is one of _VIEWS, in either case. */
int
dk_is_view(int kind, const void *data, Py_ssize_t at, Py_ssize_t end)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(config->views); i++) {
        PyObject *view = PyTuple_GET_ITEM(config->views, i);
        if (PyUnicode_GET_LENGTH(view) == end - at && dk_ascii_at(kind, data, end, at, view, 1)) {
            return 1;
        }
    }
    return 0;
}

/* Where the word after the '/' at *at* of text[:end] ends when it is one of _VIEWS, in
 * either case, and no letter or digit follows it (_url._URL_VIEW_AFTER; a view is a word:
 * what follows it is no letter or digit exactly where the word it is ends), or -1. */
Py_ssize_t
dk_view_after(int kind, const void *data, Py_ssize_t at, Py_ssize_t end)
{
    Py_ssize_t word = at + 1;
    while (word < end && READ(word) < 128 && Py_ISALNUM(READ(word))) {
        word++;
    }
    return dk_is_view(kind, data, at + 1, word) ? word : -1;
}

/* Whether _url._in_url_length may cut the URL candidate text[start:end] (printable ASCII)
 * whose suffix starts at *suffix*: an escape but the escaped '/' before the suffix, a
 * segment that is one of _VIEWS (_URL_TAILS, which a line break only limits), a last
 * segment after a second '/' with a '.' (_URL_FILE), more '/' (an OUP page's article
 * number), a file's last letter (_GLUED_FILE_LAST), or a badge before it in its token
 * (_BADGE). Else the whole candidate is the DOI. */
int
dk_rule_url_may_cut(PyObject *text, Py_ssize_t start, Py_ssize_t suffix, Py_ssize_t end)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (end <= suffix || dk_marked(config->glued_last, READ(end - 1))) {
        return 1;
    }
    for (Py_ssize_t at = start; at < suffix; at++) {
        if (READ(at) == '%' && at != suffix - 3) {
            return 1;
        }
    }
    Py_ssize_t slashes = 0, segment = suffix, dot = 0;
    if (READ(suffix - 1) == '/' && dk_is_view(kind, data, suffix, end)) {
        return 1; /* (a view right after the separator: the suffix cut whole) */
    }
    for (Py_ssize_t at = suffix; at < end; at++) {
        Py_UCS4 c = READ(at);
        if (c == '%') {
            return 1;
        }
        dot |= c == '.';
        if (c == '/') {
            if (++slashes > 1 || dk_is_view(kind, data, segment, at)) {
                return 1;
            }
            segment = at + 1;
            dot = 0;
        }
    }
    if (slashes && (dot || dk_is_view(kind, data, segment, end))) {
        return 1;
    }
    /* (the badge must be in the token: _in_url_length asks both) */
    Py_ssize_t token = dk_token_start(kind, data, start);
    Py_ssize_t badge =
        PyUnicode_Find(text, PyTuple_GET_ITEM(config->cut_markers, 0), token, start, 1);
    return badge == -2 ? -1 : badge >= 0;
}

/* url_token(text, token, end): dk_url_token's answer, for the tests (internal). */
PyObject *
dk_url_token_one(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *text;
    Py_ssize_t token, end;
    if (!PyArg_ParseTuple(args, "Unn:url_token", &text, &token, &end)) {
        return NULL;
    }
    if (config->heads == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "url_token(): configure_quick() has not been called");
        return NULL;
    }
    if (token < 0 || end < token || end > PyUnicode_GET_LENGTH(text)) {
        PyErr_SetString(PyExc_ValueError, "url_token(): a token outside the text");
        return NULL;
    }
    int said = dk_url_token(text, PyUnicode_KIND(text), PyUnicode_DATA(text), token, end);
    return said < 0 ? NULL : PyBool_FromLong(said);
}

/* Where text[at:end] ends in '.' and one of the ASCII strs of *names* (a file's extension;
 * in either case with *fold*), or -1. */
static Py_ssize_t
extension_at(int kind, const void *data, Py_ssize_t at, Py_ssize_t end, PyObject *names,
             int fold)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        Py_ssize_t dot = end - PyUnicode_GET_LENGTH(name) - 1;
        if (dot >= at && READ(dot) == '.' && dk_ascii_at(kind, data, end, dot + 1, name, fold)) {
            return dot;
        }
    }
    return -1;
}

/* Whether '$' (no MULTILINE) matches at *at* of text[:end]: at the end, or before a line
 * break that is the last character. */
#define LINE_ENDS(at) ((at) == end || ((at) == end - 1 && READ(at) == '\n'))
#define ASCII_LETTER(c) ((c) < 128 && Py_ISALPHA(c))

/* _url._URL_TAILS.search(text[:end], line): where a view (one of _VIEWS after '/', in
 * either case, then the end or '/' and the rest of the line) or a file glued to the end
 * (_GLUED_FILE) starts, the leftmost; or -1. */
static Py_ssize_t
url_tail(int kind, const void *data, Py_ssize_t line, Py_ssize_t end)
{
    Py_ssize_t glued = extension_at(kind, data, line, end, walk->glued_files, 1);
    for (Py_ssize_t at = line; at < end; at++) {
        if (at == glued) {
            return at;
        }
        Py_ssize_t after = READ(at) == '/' ? dk_view_after(kind, data, at, end) : -1;
        if (after < 0) {
            continue;
        }
        if (LINE_ENDS(after)) {
            return at;
        }
        if (READ(after) == '/') {
            Py_ssize_t rest = after + 1; /* ('.*': to the line's end) */
            while (rest < end && READ(rest) != '\n') {
                rest++;
            }
            if (LINE_ENDS(rest)) {
                return at;
            }
        }
    }
    return -1;
}

/* _url._after_shields_badge: whether a shields.io badge's label and '-' end at *start*
 * (_SHIELDS_BADGE in the _SHIELDS_WINDOW characters before it: '/badge/' in either case,
 * at most _SHIELDS_LABEL of a character that is no '/', blank or '-', or '--'; '-'). */
static int
after_shields_badge(int kind, const void *data, Py_ssize_t length, Py_ssize_t start)
{
    Py_ssize_t low = start > walk->shields_window ? start - walk->shields_window : 0;
    if (start - 1 < low || READ(start - 1) != '-') {
        return 0;
    }
    Py_ssize_t slash = start - 2; /* the label holds no '/': '/badge/' ends at the last */
    while (slash >= low && READ(slash) != '/') {
        slash--;
    }
    PyObject *badge = PyTuple_GET_ITEM(config->cut_markers, 0);
    Py_ssize_t label = slash + 1;
    if (slash < low || label - PyUnicode_GET_LENGTH(badge) < low ||
        !dk_ascii_at(kind, data, length, label - PyUnicode_GET_LENGTH(badge), badge, 1)) {
        return 0;
    }
    Py_ssize_t units = 0;
    for (Py_ssize_t at = label; at < start - 1; units++) {
        Py_UCS4 c = READ(at);
        if (c < 128 && Py_ISSPACE(c)) {
            return 0;
        }
        if (c == '-' && !(at + 1 < start - 1 && READ(at + 1) == '-')) {
            return 0;
        }
        at += c == '-' ? 2 : 1;
    }
    return units <= walk->shields_label;
}

/* _url._BADGE_COLOUR.search(text[start:end]): where a '-' and a colour's letters start,
 * before the end or an image's extension (_BADGE_IMAGES, as written); or -1. */
static Py_ssize_t
badge_colour(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t image = extension_at(kind, data, start, end, walk->badge_images, 0);
    for (int with_image = 0; with_image < 2; with_image++) {
        Py_ssize_t stop = with_image ? image : end;
        if (stop < 0) {
            continue;
        }
        Py_ssize_t at = stop;
        while (at > start && ASCII_LETTER(READ(at - 1))) {
            at--;
        }
        if (at < stop && at - 1 >= start && READ(at - 1) == '-') {
            return at - 1;
        }
    }
    return -1;
}

/* Where the last '/' of text[start:end] is, or start - 1. */
static Py_ssize_t
last_segment(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t at = end - 1;
    while (at >= start && READ(at) != '/') {
        at--;
    }
    return at;
}

/* _url._URL_FILE.search(text[start:end]): where '/', a file's name ('[A-Za-z0-9_-]+') and
 * one of _FILES_AFTER, as written, end it; or -1. */
static Py_ssize_t
url_file(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t dot = extension_at(kind, data, start, end, walk->files_after, 0);
    Py_ssize_t at = dot;
    while (at > start && READ(at - 1) < 128 &&
           (Py_ISALNUM(READ(at - 1)) || READ(at - 1) == '_' || READ(at - 1) == '-')) {
        at--;
    }
    return dot >= 0 && at < dot && at - 1 >= start && READ(at - 1) == '/' ? at - 1 : -1;
}

/* _url._in_url_length(text, start, text[start:end]) for a URL candidate without escapes:
 * where its DOI ends (before a view or a file glued to it, a badge's image or colour, a
 * file after it, an OUP page's article number; else at *end*); -2 for a candidate with
 * escapes (_in_url_length is asked); -1 with an exception. */
Py_ssize_t
dk_url_length(PyObject *text, Py_ssize_t start, Py_ssize_t end)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    Py_ssize_t line = start, first_slash = -1, slashes = 0;
    for (Py_ssize_t at = start; at < end; at++) {
        Py_UCS4 c = READ(at);
        if (c == '%') {
            return -2;
        }
        if (c == '\n' && at < end - 1) {
            line = at + 1; /* (a tail sits in the last line) */
        }
        if (c == '/') {
            first_slash = first_slash < 0 ? at : first_slash;
            slashes++;
        }
    }
    Py_ssize_t tail = url_tail(kind, data, line, end);
    Py_ssize_t token = -1;
    if (tail < 0) {
        token = dk_token_start(kind, data, start);
        Py_ssize_t badge =
            PyUnicode_Find(text, PyTuple_GET_ITEM(config->cut_markers, 0), token, start, 1);
        if (badge == -2) {
            return -1;
        }
        if (badge >= 0) {
            tail = after_shields_badge(kind, data, length, start)
                       ? badge_colour(kind, data, start, end)
                       : extension_at(kind, data, start, end, walk->badge_images, 1);
        }
    }
    if (tail < 0) {
        tail = url_file(kind, data, start, end);
        if (tail >= 0 && tail < (first_slash < 0 ? start : first_slash + 1)) {
            tail = -1; /* the whole suffix: the name itself (https://doi.org/10.1000/x.png) */
        }
    }
    if (tail < 0 && slashes > 2 && dk_ascii_at(kind, data, end, start, walk->oup, 0)) {
        Py_ssize_t number = last_segment(kind, data, start, end);
        Py_ssize_t at = number + 1;
        while (at < end && READ(at) >= '0' && READ(at) <= '9') {
            at++;
        }
        if (number >= start && at == end && at > number + 1) {
            Py_ssize_t host = PyUnicode_Find(text, PyTuple_GET_ITEM(config->cut_markers, 1),
                                             token < 0 ? dk_token_start(kind, data, start) : token,
                                             start, 1);
            if (host == -2) {
                return -1;
            }
            tail = host >= 0 ? number : -1;
        }
    }
    return tail < 0 ? end : tail;
}

/* url_length(text, start, end): dk_url_length's answer as _in_url_length gives it (how
 * much of text[start:end] is the DOI), or None where it asks _in_url_length, for the
 * tests (internal). */
PyObject *
dk_url_length_one(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *text;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "Unn:url_length", &text, &start, &end)) {
        return NULL;
    }
    if (config->heads == NULL || walk->oup == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "url_length(): the C paths are not configured");
        return NULL;
    }
    if (start < 0 || end < start || end > PyUnicode_GET_LENGTH(text)) {
        PyErr_SetString(PyExc_ValueError, "url_length(): a candidate outside the text");
        return NULL;
    }
    Py_ssize_t kept = dk_url_length(text, start, end);
    if (kept == -1) {
        return NULL;
    }
    return kept == -2 ? Py_NewRef(Py_None) : PyLong_FromSsize_t(kept - start);
}

/* _url._url_name(written): the name in *written*, a resolver URL's candidate the loop has
 * not decided, or None when an escape that ends it, a view or a file needs the walk (a new
 * reference, NULL with an exception). Read here for an ASCII candidate without escapes
 * (after a second '/', a view (_VIEWS, then no letter or digit) or a file after the name
 * (_URL_FILE); a file glued to its end, _GLUED_FILE); _url_name is asked the rest. */
PyObject *
dk_rule_url_name(PyObject *written)
{
    Py_ssize_t size = PyUnicode_GET_LENGTH(written);
    if (!PyUnicode_IS_ASCII(written) || walk->glued_files == NULL || size == 0 ||
        memchr(PyUnicode_1BYTE_DATA(written), '%', (size_t)size) != NULL) {
        return PyObject_CallOneArg(config->url_name, written);
    }
    int kind = PyUnicode_1BYTE_KIND;
    const Py_UCS1 *data = PyUnicode_1BYTE_DATA(written);
    Py_ssize_t slashes = 0;
    for (Py_ssize_t at = 0; at < size; at++) {
        slashes += data[at] == '/';
    }
    for (Py_ssize_t at = 0; slashes > 1 && at < size; at++) {
        if (data[at] == '/' && dk_view_after(kind, data, at, size) >= 0) {
            Py_RETURN_NONE; /* a view */
        }
    }
    if ((slashes > 1 && url_file(kind, data, 0, size) >= 0) ||
        (dk_marked(config->glued_last, data[size - 1]) &&
         extension_at(kind, data, 0, size, walk->glued_files, 1) >= 0)) {
        Py_RETURN_NONE; /* a file after the name, or glued to it */
    }
    return Py_NewRef(written);
}

/* url_name(written): dk_rule_url_name's answer, for the tests (internal). */
PyObject *
dk_url_name_one(PyObject *Py_UNUSED(module), PyObject *written)
{
    if (!PyUnicode_Check(written)) {
        PyErr_SetString(PyExc_TypeError, "url_name(): a str");
        return NULL;
    }
    if (config->heads == NULL || walk->glued_files == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "url_name(): the C paths are not configured");
        return NULL;
    }
    return dk_rule_url_name(written);
}
