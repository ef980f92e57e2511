/* The extractor's walk, in C (issue 30): what doikit._extract._walk decides about a
 * candidate of a whole text (not a stream's chunk) that the Scan of scan.c has not decided
 * itself: a resolver URL's with escapes, a view or a file (the candidate pattern's group 1),
 * one of the common shape the quick path has not decided (group 2), a bare start (group 3).
 *
 * It decides a candidate only where _walk (with _completed) gives the same answer: the DOI
 * and where the scan goes on (DK_DECIDED), or no DOI and where the scan goes on
 * (DK_REFUSED); everything it does not read leaves the candidate to the Python walk
 * (DK_LEFT: _extract._walked): a URN, any character outside ASCII in the run or the name, a
 * '%' in a URL that starts no escape, TeX's escaped '%', a Springer book's chapter, a run
 * that holds another start after what it takes. The rules are not copied here: the stops'
 * characters come from the patterns that define them (configure_walk(), from
 * doikit._extract._walk), the rules the quick path reads too are rules.c's (dk_rule_*), and
 * each rule with more to it is its module's own compiled pattern or function, called only
 * where a candidate reaches it. A test holds it to the Python walk candidate by candidate
 * (walk(), tests/test_extract.py), and the property tests the scans' answers on any text. */
#include "extract.h"

DkWalkParts dk_walk_parts;
static DkWalkParts *const walk = &dk_walk_parts;
static int configured;

#define OPENED 64 /* brackets held open: a run with more is left to the Python walk */

/* Whether text[at:] is one of the ASCII strs of *tuple*. */
static int
one_of_at(int kind, const void *data, Py_ssize_t length, Py_ssize_t at, PyObject *tuple)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        if (dk_ascii_at(kind, data, length, at, PyTuple_GET_ITEM(tuple, i), 0)) {
            return 1;
        }
    }
    return 0;
}

/* What a stop's rule says: the run ends (at *run*), or the reading goes on (at *next*);
 * or DK_LEFT, or -1 with an exception. */
enum { ENDS = 10, GOES_ON = 11 };

/* A run being read (_run._Run): the brackets it holds open (the closer each waits for, and
 * where it was opened), and the ';' that ends the character reference last read. */
typedef struct {
    Py_UCS4 waits[OPENED];
    Py_ssize_t at[OPENED];
    int depth;
    int in_url;
    Py_ssize_t reference_end;
} Run;

/* _run._line_end for a whole text, at the stop *at*: the run ends there, but for a line
 * break rejoined (rules.c's dk_rule_rejoined, _run._rejoined). */
static int
line_end(PyObject *text, Py_ssize_t at, Py_ssize_t *run, Py_ssize_t *next)
{
    int joined = dk_rule_rejoined(text, at, next);
    *run = at;
    return joined < 0 ? -1 : joined ? GOES_ON : ENDS;
}

#define DIGIT_AT(at) ((at) < length && READ(at) >= '0' && READ(at) <= '9')

/* Whether a DOI's prefix and '/' start at *at* (_syntax.PREFIX_PATTERN: '10.', digits, more
 * '.' and digits). */
static int
prefix_at(int kind, const void *data, Py_ssize_t length, Py_ssize_t at)
{
    if (at + 3 > length || READ(at) != '1' || READ(at + 1) != '0' || READ(at + 2) != '.') {
        return 0;
    }
    Py_ssize_t next = at + 3;
    for (;;) {
        Py_ssize_t digits = next;
        while (DIGIT_AT(next)) {
            next++;
        }
        if (next == digits) {
            return 0;
        }
        if (next < length && READ(next) == '.') {
            next++;
            continue;
        }
        return next < length && READ(next) == '/';
    }
}

/* Whether a number's field ends at *at* (_pattern._FIELD_END: ',', ';', '"', whitespace or
 * the end). */
static int
field_end(int kind, const void *data, Py_ssize_t length, Py_ssize_t at)
{
    if (at >= length) {
        return 1;
    }
    Py_UCS4 c = READ(at);
    return c == ',' || c == ';' || c == '"' || Py_UNICODE_ISSPACE(c);
}

/* _run._separated(text, at, at + 1) of a whole text, for the ';' at *at*: *at* (the DOI
 * ends there) when another DOI or a URL follows (_NEXT_DOI: blanks, then a prefix and '/'
 * maybe after _NEXT_DOI_MARKER and blanks, or one of _NEXT_URL_HEADS, in either case), or
 * a field (_FIELD_AFTER: a letter, or a number that fills a field, _NUMBER_FIELD, but a
 * SICI's 'CO;2'); else -1 (the DOI goes on). */
Py_ssize_t
dk_separated(int kind, const void *data, Py_ssize_t length, Py_ssize_t at)
{
    Py_ssize_t next = at + 1;
    while (next < length && READ(next) < 128 && Py_ISSPACE(READ(next))) {
        next++;
    }
    Py_ssize_t prefix = next;
    if (dk_ascii_at(kind, data, length, next, walk->next_marker, 1)) {
        prefix = next + PyUnicode_GET_LENGTH(walk->next_marker);
        while (prefix < length && READ(prefix) < 128 && Py_ISSPACE(READ(prefix))) {
            prefix++;
        }
    }
    if (prefix_at(kind, data, length, prefix)) {
        return at; /* another DOI */
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(walk->next_heads); i++) {
        if (dk_ascii_at(kind, data, length, next, PyTuple_GET_ITEM(walk->next_heads, i), 1)) {
            return at; /* a URL */
        }
    }
    Py_ssize_t field = at + 1;
    if (field < length && READ(field) < 128 && Py_ISALPHA(READ(field))) {
        return at; /* a letter */
    }
    if (DIGIT_AT(field) && READ(field) == '2' && field_end(kind, data, length, field + 1) &&
        at >= 2 && (READ(at - 2) | 0x20) == 'c' && (READ(at - 1) | 0x20) == 'o') {
        return -1; /* a SICI's 'CO;2' */
    }
    Py_ssize_t digits = field + (field < length && (READ(field) == '-' || READ(field) == '+'));
    Py_ssize_t end = digits;
    while (DIGIT_AT(end)) {
        end++;
    }
    if (end == digits) {
        return -1;
    }
    if (end < length && READ(end) == '.') { /* a fraction, or no field */
        Py_ssize_t fraction = end + 1;
        while (DIGIT_AT(fraction)) {
            fraction++;
        }
        return fraction > end + 1 && field_end(kind, data, length, fraction) ? at : -1;
    }
    return field_end(kind, data, length, end) ? at : -1;
}

/* _run._semicolon for a whole text, for a ';' at *at* (or a reference to one there), the
 * reading going on at *after* past it: the run ends where _run._separated says, else the
 * reading goes on past the row of ';' that starts at *at* (at its last, _last_semicolon). */
static int
semicolon(PyObject *text, Run *reading, Py_ssize_t at, Py_ssize_t after, Py_ssize_t *run,
          Py_ssize_t *next)
{
    if (at != reading->reference_end) {
        Py_ssize_t ends = dk_separated(PyUnicode_KIND(text), PyUnicode_DATA(text),
                                       PyUnicode_GET_LENGTH(text), at);
        if (ends >= 0) {
            *run = ends;
            return ENDS;
        }
    }
    Py_ssize_t last = at; /* (at a reference to a ';', its '&': no row) */
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_READ_CHAR(text, at) == ';') {
        while (last + 1 < length && PyUnicode_READ_CHAR(text, last + 1) == ';') {
            last++;
        }
    }
    *next = last > after ? last : after;
    return GOES_ON;
}

/* The rule of a stop that decides where a DOI ends (_run._DECIDING_RULES: brackets, ',' and
 * ';'), for the character *c* at *at* (or a reference to it there), the reading going on at
 * *after* past it; 0 when *c* has none. */
static int
deciding_rule(PyObject *text, Run *reading, Py_UCS4 c, Py_ssize_t at, Py_ssize_t after,
              Py_ssize_t *run, Py_ssize_t *next)
{
    Py_ssize_t opener = c < 128 ? PyUnicode_FindChar(walk->openers, c, 0, PY_SSIZE_T_MAX, 1) : -1;
    *run = at;
    *next = after;
    if (opener >= 0) { /* _run._opener: a tag, an escaped tag, a field tag end the run */
        int referenced = PyUnicode_READ_CHAR(text, at) != c;
        int tag = c == '<' && !referenced  ? dk_rule_tag(text, at)
                  : c == '<'               ? dk_answers(walk->escaped_tag, text, 1, at, 0, 0)
                  : c == '[' && !referenced ? dk_answers(walk->field_tag, text, 1, at, 0, 0)
                                            : 0;
        if (tag != 0) {
            return tag < 0 ? -1 : ENDS;
        }
        if (reading->depth == OPENED) {
            return DK_LEFT;
        }
        reading->waits[reading->depth] = PyUnicode_READ_CHAR(walk->closers, opener);
        reading->at[reading->depth++] = at;
        return GOES_ON;
    }
    if (c < 128 && PyUnicode_FindChar(walk->closers, c, 0, PY_SSIZE_T_MAX, 1) >= 0) {
        if (reading->depth > 0 && reading->waits[reading->depth - 1] == c) { /* _closer */
            reading->depth--;
            return GOES_ON;
        }
        return ENDS;
    }
    if (c == ',') { /* _run._comma */
        return ENDS;
    }
    if (c == ';') {
        return semicolon(text, reading, at, after, run, next);
    }
    return 0;
}

/* _run._reference for a whole text, at the '&' at *at*: a character reference decides as
 * the character it stands for (_entity_char), the reading going on at its ';'; a bare '&'
 * is the name's in text, and ends the run in a URL. */
static int
reference(PyObject *text, Run *reading, Py_ssize_t at, Py_ssize_t *run, Py_ssize_t *next)
{
    PyObject *entity = dk_call(walk->entity, text, 1, at, 0);
    if (entity == NULL) {
        return -1;
    }
    Py_UCS4 c = '&'; /* (no reference: a bare '&') */
    Py_ssize_t after = at + 1;
    if (entity != Py_None) {
        PyObject *stands = PyObject_CallOneArg(walk->entity_char, entity);
        PyObject *end = stands ? PyObject_CallMethod(entity, "end", NULL) : NULL;
        after = end == NULL ? -1 : PyLong_AsSsize_t(end) - 1;
        Py_XDECREF(end);
        if (stands == NULL || after <= at || !PyUnicode_Check(stands) ||
            PyUnicode_GET_LENGTH(stands) != 1) {
            Py_XDECREF(stands);
            Py_DECREF(entity);
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "_entity_char: no character (internal)");
            }
            return -1;
        }
        c = PyUnicode_READ_CHAR(stands, 0);
        Py_DECREF(stands);
    }
    Py_DECREF(entity);
    *run = at;
    *next = after;
    if (reading->in_url && c == '&') {
        return line_end(text, at, run, next); /* (parameters) */
    }
    if (Py_UNICODE_ISSPACE(c) || c == '"') {
        return ENDS; /* '&nbsp;', '&quot;' */
    }
    if (after > at + 1) {
        reading->reference_end = after; /* (a reference's ';') */
    }
    int said = deciding_rule(text, reading, c, at, after, run, next);
    return said != 0 ? said : GOES_ON;
}

/* The rule of the stop *c* at *at* (_run._STOP_RULES; _line_end for the rest). */
static int
stop_rule(PyObject *text, Run *reading, Py_UCS4 c, Py_ssize_t at, Py_ssize_t *run,
          Py_ssize_t *next)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    Py_UCS4 after = at + 1 < length ? PyUnicode_READ_CHAR(text, at + 1) : 0;
    int said = deciding_rule(text, reading, c, at, at + 1, run, next);
    if (said != 0) {
        return said;
    }
    switch (c) {
    case '&':
        return reference(text, reading, at, run, next);
    case '$': /* _run._dollar */
        return after == '$' ? ENDS : GOES_ON;
    case '\\': /* _run._backslash */
        return dk_marked(walk->escape_word, after) ? ENDS : GOES_ON;
    default:
        return line_end(text, at, run, next);
    }
}

/* _run._grow for a whole text: the end of the DOI whose suffix starts at *index* (*end*)
 * and of the run read for it (*run*). DK_DECIDED, DK_LEFT (a character outside ASCII, a
 * '%' that starts no escape, too many brackets), or -1. */
static int
grow(PyObject *text, Py_ssize_t index, int in_url, Py_ssize_t *end, Py_ssize_t *run)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    const char *stops = in_url ? walk->url_stops : walk->stops;
    Run reading = {.depth = 0, .in_url = in_url, .reference_end = -1};
    Py_ssize_t at = index;
    *run = length; /* the text's end ends the run (no line break to rejoin there) */
    while (at < length) {
        Py_UCS4 c = READ(at);
        if (c >= 128) {
            return DK_LEFT;
        }
        if (c == '%' && in_url) {
            if (at + 2 < length && dk_is_hex(READ(at + 1)) && dk_is_hex(READ(at + 2))) {
                at++;
                continue; /* an escape */
            }
            return DK_LEFT; /* (one that starts no escape, or one the text's end cuts) */
        }
        if (!stops[c]) {
            at++;
            continue;
        }
        Py_ssize_t next;
        int said = stop_rule(text, &reading, c, at, run, &next);
        if (said != GOES_ON) {
            if (said != ENDS) {
                return said; /* DK_LEFT, or -1 */
            }
            break;
        }
        at = next;
        *run = length;
    }
    *end = *run;
    if (reading.depth > 0) { /* cut before the first bracket nothing closes */
        Py_ssize_t cut = reading.at[0];
        if (cut > index && READ(cut - 1) == '\\') {
            cut--; /* an escaped opener, with its backslash */
        }
        *end = cut;
    }
    return DK_DECIDED;
}

/* The candidate of *group* (1 to 3) at text[start:match_end] of a whole text, as
 * _extract._walked reads it: see dk_walk in speedups.h. */
int
dk_walk(PyObject *text, int group, Py_ssize_t start, Py_ssize_t match_end, int in_url_said,
        PyObject *doi_type, PyObject **doi, Py_ssize_t *found_end, Py_ssize_t *position)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    *doi = NULL;
    if (!configured || !dk_rule_ready() || group < 1 || group > 3 || start < 0 ||
        match_end > length || match_end - start < 4) {
        return DK_LEFT;
    }
    Py_ssize_t suffix = match_end; /* where the suffix starts (after the prefix) */
    if (group != 3) {
        suffix = PyUnicode_FindChar(text, '/', start, match_end, 1);
        if (suffix < 0) {
            return suffix == -2 ? -1 : DK_LEFT;
        }
        suffix++;
    }
    if (dk_ascii_at(kind, data, length, start - PyUnicode_GET_LENGTH(walk->urn), walk->urn, 1)) {
        return DK_LEFT; /* a URN */
    }
    *position = suffix;
    if (READ(suffix - 1) == ':') {
        return DK_REFUSED; /* '10.123:456' names a DOI only as a URN */
    }
    int escaped = start >= 3 && READ(start - 3) == '%' &&
                  one_of_at(kind, data, start, start - 2, walk->escapes);
    int badge = 0; /* a shields.io badge's message (glued to its label's '-') */
    if (start > 0 && !escaped && dk_marked(walk->glued, READ(start - 1))) {
        /* glued to a word: no start, but after a page range, a badge's label or a
         * catalogue's subfield code */
        Py_ssize_t page_from = start > 8 ? start - 8 : 0, code_from = start > 3 ? start - 3 : 0;
        int page = dk_answers(walk->page_range, text, 2, page_from, start, 0);
        badge = page < 0 ? -1 : dk_answers(walk->shields, text, 1, start, 0, 1);
        int subfield =
            page != 0 || badge != 0 ? 0 : dk_answers(walk->subfield, text, 2, code_from, start, 0);
        if (page < 0 || badge < 0 || subfield < 0) {
            return -1;
        }
        if (!page && !badge && !subfield) {
            return DK_REFUSED;
        }
    }
    int in_url =
        in_url_said >= 0 && !escaped ? in_url_said : dk_rule_in_url(text, start, escaped);
    if (in_url < 0) {
        return -1;
    }
    in_url = in_url || badge;
    if (!in_url && one_of_at(kind, data, suffix, suffix - 3, walk->slashes)) {
        if (!escaped) {
            return DK_LEFT; /* '%2F' behind a DOI marker, or not */
        }
        in_url = 1;
    }
    if (!in_url) {
        if (start >= 2 && READ(start - 1) == '/' && Py_UNICODE_ISDIGIT(READ(start - 2))) {
            return DK_REFUSED; /* a number's path outside a URL */
        }
        int digits = 0; /* the registrant: 4 digits and no '.', else the rule reads it */
        Py_ssize_t at = start + 3;
        for (; at < length && READ(at) < 128 && Py_ISDIGIT(READ(at)); at++) {
            digits++;
        }
        if (digits < 4 || (at < length && READ(at) == '.')) {
            PyObject *answer = dk_call_on(walk->number, text, start, suffix);
            int number = answer == NULL ? -1 : PyObject_IsTrue(answer);
            Py_XDECREF(answer);
            if (number != 0) {
                return number < 0 ? -1 : DK_REFUSED; /* (_looks_like_a_number) */
            }
        }
    }
    Py_ssize_t end, run;
    int read = grow(text, suffix, in_url, &end, &run);
    if (read != DK_DECIDED) {
        return read;
    }
    Py_ssize_t placeholder = dk_line_break(kind, data, length, suffix); /* (after one) */
    int said = dk_rule_placeholder(text, placeholder < 0 ? suffix : placeholder);
    if (said != 0) {
        *position = run; /* past the whole token */
        return said < 0 ? -1 : DK_REFUSED;
    }
    if (end + 1 < length && READ(end) == '\\' && READ(end + 1) == '@') {
        return DK_LEFT; /* a TeX macro's template */
    }
    Py_ssize_t after = end < run ? end : suffix;
    if (end > suffix) {
        said = dk_walk_make(text, start, suffix, end, in_url, doi_type, doi, found_end);
        if (said != DK_DECIDED) {
            return said;
        }
        if (*doi != NULL && end >= run) {
            after = *found_end;
        }
    }
    for (Py_ssize_t at = after; at + 3 <= run; at++) {
        if (READ(at) == '1' && READ(at + 1) == '0' && READ(at + 2) == '.') {
            Py_CLEAR(*doi);
            return DK_LEFT; /* the rest of the run holds a start (_read_on counts them) */
        }
    }
    *position = after;
    if (*doi == NULL) {
        return DK_REFUSED;
    }
    if (*found_end < length && READ(*found_end) == ' ') {
        PyObject *name = PyObject_Str(*doi);
        int book = name == NULL ? -1 : PyUnicode_IS_ASCII(name) ? dk_rule_book(name) : 1;
        Py_XDECREF(name);
        if (book != 0) {
            Py_CLEAR(*doi);
            return book < 0 ? -1 : DK_LEFT; /* its chapter may follow (_completed) */
        }
    }
    if (*position < *found_end) {
        *position = *found_end;
    }
    return DK_DECIDED;
}

/* walk(text, group, start, end, doi): dk_walk's answer for one candidate, for the tests
 * that hold it to the Python walk (internal): None when it leaves the candidate to
 * Python, else (DOI or None, where the DOI's text ends or -1, where the scan goes on). */
PyObject *
dk_walk_one(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *text, *doi_type, *doi;
    Py_ssize_t start, end, found_end = -1, position = -1;
    int group;
    if (!PyArg_ParseTuple(args, "UinnO:walk", &text, &group, &start, &end, &doi_type)) {
        return NULL;
    }
    if (start < 0 || end < start || end > PyUnicode_GET_LENGTH(text)) {
        PyErr_SetString(PyExc_ValueError, "walk(): a candidate outside the text");
        return NULL;
    }
    int said = dk_walk(text, group, start, end, -1, doi_type, &doi, &found_end, &position);
    if (said < 0) {
        return NULL;
    }
    if (said == DK_LEFT) {
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(Nnn)", doi != NULL ? doi : Py_NewRef(Py_None),
                         doi != NULL ? found_end : -1, position);
}

/* Whether the ASCII str *name* holds no capital letter. */
static int
lower_case(PyObject *name)
{
    const Py_UCS1 *data = PyUnicode_1BYTE_DATA(name);
    for (Py_ssize_t i = 0; i < PyUnicode_GET_LENGTH(name); i++) {
        if (data[i] >= 'A' && data[i] <= 'Z') {
            return 0;
        }
    }
    return 1;
}

/* configure_walk(**parts): doikit._extract's parts, once (internal); until it has
 * succeeded, dk_walk leaves every candidate to the Python walk. */
PyObject *
dk_configure_walk(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"glued", "urn", "escapes", "slashes", "stops", "url_stops",
                            "openers", "closers", "field_tag", "next_marker", "next_heads", "entity",
                            "escape_word", "unescaped", "url_length", "decode", "decode_error",
                            "preprint", "page_range", "shields", "subfield", "number",
                            "entity_char", "escaped_tag", "unescape", "glued_files",
                            "files_after", "badge_images", "oup", "shields_window",
                            "shields_label", NULL};
    PyObject *glued, *urn, *escapes, *slashes, *stops, *url_stops, *openers, *closers;
    PyObject *field_tag, *next_marker, *next_heads, *entity, *escape_word, *unescaped;
    PyObject *url_length, *decode;
    PyObject *decode_error, *preprint, *page_range, *shields, *subfield, *number;
    PyObject *entity_char, *escaped_tag, *unescape, *glued_files, *files_after, *badge_images;
    PyObject *oup;
    Py_ssize_t shields_window, shields_label;
    const char *format = "$UUO!O!UUUUOUO!OUUOOOOOOOOOOOO!O!O!Unn:configure_walk";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, names, &glued, &urn, &PyTuple_Type,
                                     &escapes, &PyTuple_Type, &slashes, &stops, &url_stops,
                                     &openers, &closers,
                                     &field_tag, &next_marker, &PyTuple_Type, &next_heads, &entity, &escape_word, &unescaped,
                                     &url_length, &decode, &decode_error, &preprint,
                                     &page_range, &shields, &subfield, &number, &entity_char,
                                     &escaped_tag, &unescape, &PyTuple_Type, &glued_files,
                                     &PyTuple_Type, &files_after, &PyTuple_Type, &badge_images,
                                     &oup, &shields_window, &shields_label)) {
        return NULL;
    }
    configured = 0; /* off while its parts are written */
    PyObject *tuples[] = {escapes, slashes, glued_files, files_after, badge_images, next_heads};
    if (dk_ascii_tuples(tuples, 6, "configure_walk") < 0) {
        return NULL;
    }
    /* (read in either case: url.c and dk_separated compare them lower-cased) */
    PyObject *lower[] = {glued_files, badge_images, next_heads};
    for (int t = 0; t < 3; t++) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(lower[t]); i++) {
            if (!lower_case(PyTuple_GET_ITEM(lower[t], i))) {
                PyErr_SetString(PyExc_ValueError, "configure_walk: names in lower case");
                return NULL;
            }
        }
    }
    if (PyUnicode_IS_ASCII(next_marker) && !lower_case(next_marker)) {
        PyErr_SetString(PyExc_ValueError, "configure_walk: names in lower case");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(urn) || !PyUnicode_IS_ASCII(openers) || !PyUnicode_IS_ASCII(oup) ||
        !PyUnicode_IS_ASCII(next_marker) ||
        shields_window < 0 || shields_label < 0 ||
        PyUnicode_GET_LENGTH(openers) != PyUnicode_GET_LENGTH(closers) ||
        !PyExceptionClass_Check(decode_error) || dk_mark(walk->glued, glued, 1) < 0 ||
        dk_mark(walk->stops, stops, 1) < 0 || dk_mark(walk->url_stops, url_stops, 1) < 0 ||
        dk_mark(walk->escape_word, escape_word, 1) < 0 ||
        dk_mark(walk->unescaped, unescaped, 1) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "configure_walk: parts out of range");
        }
        return NULL;
    }
    walk->url_stops['%'] = 0; /* (read by grow: a stop only where it starts no escape) */
    Py_XSETREF(walk->urn, Py_NewRef(urn));
    Py_XSETREF(walk->escapes, Py_NewRef(escapes));
    Py_XSETREF(walk->slashes, Py_NewRef(slashes));
    Py_XSETREF(walk->openers, Py_NewRef(openers));
    Py_XSETREF(walk->closers, Py_NewRef(closers));
    Py_XSETREF(walk->field_tag, Py_NewRef(field_tag));
    Py_XSETREF(walk->next_marker, Py_NewRef(next_marker));
    Py_XSETREF(walk->next_heads, Py_NewRef(next_heads));
    Py_XSETREF(walk->entity, Py_NewRef(entity));
    Py_XSETREF(walk->url_length, Py_NewRef(url_length));
    Py_XSETREF(walk->decode, Py_NewRef(decode));
    Py_XSETREF(walk->decode_error, Py_NewRef(decode_error));
    Py_XSETREF(walk->preprint, Py_NewRef(preprint));
    Py_XSETREF(walk->page_range, Py_NewRef(page_range));
    Py_XSETREF(walk->shields, Py_NewRef(shields));
    Py_XSETREF(walk->subfield, Py_NewRef(subfield));
    Py_XSETREF(walk->number, Py_NewRef(number));
    Py_XSETREF(walk->entity_char, Py_NewRef(entity_char));
    Py_XSETREF(walk->escaped_tag, Py_NewRef(escaped_tag));
    Py_XSETREF(walk->unescape, Py_NewRef(unescape));
    Py_XSETREF(walk->glued_files, Py_NewRef(glued_files));
    Py_XSETREF(walk->files_after, Py_NewRef(files_after));
    Py_XSETREF(walk->badge_images, Py_NewRef(badge_images));
    Py_XSETREF(walk->oup, Py_NewRef(oup));
    walk->shields_window = shields_window;
    walk->shields_label = shields_label;
    configured = 1;
    Py_RETURN_NONE;
}

/* separated(text, at): dk_separated's answer for the ';' at *at*, for the tests
 * (internal). */
PyObject *
dk_separated_one(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *text;
    Py_ssize_t at;
    if (!PyArg_ParseTuple(args, "Un:separated", &text, &at)) {
        return NULL;
    }
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "separated(): configure_walk() has not been called");
        return NULL;
    }
    if (at < 0 || at >= PyUnicode_GET_LENGTH(text) || PyUnicode_READ_CHAR(text, at) != ';') {
        PyErr_SetString(PyExc_ValueError, "separated(): no ';' there");
        return NULL;
    }
    return PyLong_FromSsize_t(dk_separated(PyUnicode_KIND(text), PyUnicode_DATA(text),
                                           PyUnicode_GET_LENGTH(text), at));
}
