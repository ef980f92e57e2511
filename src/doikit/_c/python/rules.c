/* The extractor's rules in C (issue 30) that its quick path (quick.c) and its walk (walk.c)
 * read alike, and what configure_quick() hands over for them (dk_rules); the rules of URLs
 * are url.c's.
 *
 * Each character set, resolver head and marker comes from the Python module that defines
 * it, handed over once by configure_quick() (doikit._extract). Read here in full, held to
 * its Python by a test on any text (rejoined()): whether a line broken after a DOI goes on
 * (_run._continues). Each other rule with more to it than a character test (a tag, a SICI's
 * check character, a placeholder, a mended hyphen) is that module's own compiled pattern
 * or function, called only for the candidates that reach it, behind exact prefilters
 * (may_mend) that say no only where the rule would. */
#include "extract.h"

DkRules dk_rules;
static DkRules *const config = &dk_rules;

/* Whether *c* is in a set of *flags* (ASCII) and *set* (the whole, for the rest): 1, 0 or
 * -1 with an exception. */
int
dk_in_set(const char *flags, PyObject *set, Py_UCS4 c)
{
    if (c < 128) {
        return flags[c];
    }
    PyObject *one = PyUnicode_FromOrdinal((int)c);
    if (one == NULL) {
        return -1;
    }
    int found = PySequence_Contains(set, one);
    Py_DECREF(one);
    return found;
}

/* Whether text[at:at + len(ascii)] is the ASCII *ascii*, its letters in either case when
 * *fold* (so no match where *at* is out of the text). */
int
dk_ascii_at(int kind, const void *data, Py_ssize_t length, Py_ssize_t at, PyObject *ascii, int fold)
{
    Py_ssize_t size = PyUnicode_GET_LENGTH(ascii);
    if (at < 0 || size > length - at) {
        return 0;
    }
    const Py_UCS1 *want = PyUnicode_1BYTE_DATA(ascii);
    for (Py_ssize_t i = 0; i < size; i++) {
        Py_UCS4 c = READ(at + i);
        if (fold && c < 128) {
            c = Py_TOLOWER(c);
        }
        if (c != want[i]) {
            return 0;
        }
    }
    return 1;
}

/* Whether one of the strs of *tuple* is in text[low:high] (str.find's search): 1, 0, or -1
 * with an exception. */
int
dk_any_within(PyObject *text, Py_ssize_t low, Py_ssize_t high, PyObject *tuple)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        Py_ssize_t at = PyUnicode_Find(text, PyTuple_GET_ITEM(tuple, i), low, high, 1);
        if (at != -1) {
            return at == -2 ? -1 : 1;
        }
    }
    return 0;
}

/* *function*(first, *ints*…) — a compiled pattern's match or search, or a rule — with
 * *count* (0 to 2) int arguments: its answer (a new reference), NULL with an exception. */
PyObject *
dk_call(PyObject *function, PyObject *first, int count, Py_ssize_t a, Py_ssize_t b)
{
    PyObject *call[3] = {first, NULL, NULL};
    Py_ssize_t ints[2] = {a, b};
    for (int i = 0; i < count; i++) {
        call[i + 1] = PyLong_FromSsize_t(ints[i]);
        if (call[i + 1] == NULL) {
            Py_XDECREF(call[1]);
            return NULL;
        }
    }
    PyObject *answer = PyObject_Vectorcall(function, call, 1 + (size_t)count, NULL);
    Py_XDECREF(call[1]);
    Py_XDECREF(call[2]);
    return answer;
}

/* *function*(text, start, text[start:end]) — a rule that reads a candidate where it is
 * (_url._in_url_length, _walk._looks_like_a_number): its answer (a new reference), NULL
 * with an exception. */
PyObject *
dk_call_on(PyObject *function, PyObject *text, Py_ssize_t start, Py_ssize_t end)
{
    PyObject *part = dk_slice(text, start, end);
    PyObject *from = PyLong_FromSsize_t(start);
    PyObject *call[] = {text, from, part};
    PyObject *answer = part && from ? PyObject_Vectorcall(function, call, 3, NULL) : NULL;
    Py_XDECREF(part);
    Py_XDECREF(from);
    return answer;
}

/* dk_call's answer as a verdict: 1 when it is not None (and true, with *truth*), 0 when
 * not, -1 with an exception. */
int
dk_answers(PyObject *function, PyObject *first, int count, Py_ssize_t a, Py_ssize_t b, int truth)
{
    PyObject *answer = dk_call(function, first, count, a, b);
    if (answer == NULL) {
        return -1;
    }
    int said = truth ? PyObject_IsTrue(answer) : answer != Py_None;
    Py_DECREF(answer);
    return said;
}

/* _run._LINE_BREAK ('[ \t]*\r?\n[ \t]*') at *at* in text[:length]: where it ends, or -1
 * where none starts there. */
Py_ssize_t
dk_line_break(int kind, const void *data, Py_ssize_t length, Py_ssize_t at)
{
    while (at < length && (READ(at) == ' ' || READ(at) == '\t')) {
        at++;
    }
    at += at < length && READ(at) == '\r';
    if (at >= length || READ(at) != '\n') {
        return -1;
    }
    for (at++; at < length && (READ(at) == ' ' || READ(at) == '\t');) {
        at++;
    }
    return at;
}

/* Whether the name text[0:slash] is one of the ASCII strs of *tuple*. */
static int
prefix_in(const void *data, Py_ssize_t size, Py_ssize_t slash, PyObject *tuple)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        PyObject *prefix = PyTuple_GET_ITEM(tuple, i);
        if (PyUnicode_GET_LENGTH(prefix) == slash &&
            dk_ascii_at(PyUnicode_1BYTE_KIND, data, size, 0, prefix, 0)) {
            return 1;
        }
    }
    return 0;
}

#define DIGIT(c) ((c) >= '0' && (c) <= '9')

/* Whether _hyphens._mend_issn may change the suffix name[from:size]: an ISSN without its
 * hyphen after '(SICI)' or 'S' and before '(' (_ISSN_UNHYPHENATED), a SICI's 'AID' or
 * check character without theirs (_AID_UNHYPHENATED, _CHECK_UNHYPHENATED). Most names it
 * is asked about (PIIs, SICIs, Wiley's names) hold their hyphens. */
static int
issn_may(const Py_UCS1 *name, Py_ssize_t size, Py_ssize_t from)
{
    Py_ssize_t issn = size - from >= 6 && memcmp(name + from, "(SICI)", 6) == 0 ? from + 6
                      : from < size && name[from] == 'S'                       ? from + 1
                                                                                : size;
    if (issn + 9 <= size && name[issn + 8] == '(' &&
        (DIGIT(name[issn + 7]) || name[issn + 7] == 'X')) {
        Py_ssize_t digits = 0;
        while (digits < 7 && DIGIT(name[issn + digits])) {
            digits++;
        }
        if (digits == 7) {
            return 1;
        }
    }
    for (Py_ssize_t at = from + 1; at + 6 <= size; at++) {
        if (name[at] == ':' && memcmp(name + at, "::AID", 5) == 0 && DIGIT(name[at - 1]) &&
            Py_ISUPPER(name[at + 5])) {
            return 1;
        }
    }
    if (size - from < 10) {
        return 0;
    }
    const Py_UCS1 *end = name + size - 10; /* '>' digit '.' digit '.CO;2' and its check */
    return end[0] == '>' && DIGIT(end[1]) && end[2] == '.' && DIGIT(end[3]) &&
           memcmp(end + 4, ".CO;2", 5) == 0 &&
           (DIGIT(end[9]) || Py_ISUPPER(end[9]) || end[9] == '#');
}

/* Whether the suffix name[from:size] may be an APA book's a hyphen short
 * (_APA_BOOK_LOST_HYPHEN: 8 digits, or 10 that start with '0000'). */
static int
book_may(const Py_UCS1 *name, Py_ssize_t size, Py_ssize_t from)
{
    for (Py_ssize_t at = from; at < size; at++) {
        if (!DIGIT(name[at])) {
            return 0;
        }
    }
    return size - from == 8 || (size - from == 10 && memcmp(name + from, "0000", 4) == 0);
}

/* Whether _hyphens.mended may change the name *found* (an ASCII str), read as its branches
 * read it: a suffix that starts with one of _MENDED_ANY, an ISSN's or a SICI's that lacks
 * a hyphen (issn_may); one that starts with 's', of a name of _MENDED_PREFIXES, with
 * _ARTICLE_HYPHENS hyphens (an article id); a digit first in a name of _MENDED_NOT_ISBN
 * (Wiley's, an ISSN's: issn_may; APA's, a book's: book_may); else an ISBN's start or a
 * name of _MENDED_PREFIXES whose suffix (up to a '_') is exactly one hyphen short of an
 * ISBN's (_ISBN_HYPHENS, as _mend_isbn asks first). */
static int
may_mend(PyObject *found)
{
    Py_ssize_t size = PyUnicode_GET_LENGTH(found);
    const Py_UCS1 *name = PyUnicode_1BYTE_DATA(found);
    const void *data = name;
    int kind = PyUnicode_1BYTE_KIND;
    Py_ssize_t slash = PyUnicode_FindChar(found, '/', 0, size, 1);
    if (slash < 0 || slash + 1 >= size || !dk_marked(config->mended_first, READ(slash + 1))) {
        return 0;
    }
    Py_UCS4 first = READ(slash + 1);
    if (dk_marked(config->mended_any, first)) {
        return issn_may(name, size, slash + 1);
    }
    int listed = prefix_in(data, size, slash, config->mended_prefixes);
    Py_ssize_t hyphens = 0, part = slash + 1;
    for (; part < size && READ(part) != '_'; part++) {
        hyphens += READ(part) == '-';
    }
    if (first == 's') {
        for (Py_ssize_t at = part; at < size; at++) {
            hyphens += READ(at) == '-';
        }
        return listed && hyphens == config->article_hyphens;
    }
    if (prefix_in(data, size, slash, config->not_isbn)) {
        return issn_may(name, size, slash + 1) || book_may(name, size, slash + 1);
    }
    int isbn = listed;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(config->isbn_starts) && !isbn; i++) {
        PyObject *start = PyTuple_GET_ITEM(config->isbn_starts, i);
        isbn = dk_ascii_at(kind, data, size, slash + 1, start, 0);
    }
    Py_ssize_t digits = part - slash - 1 - hyphens;
    for (int i = 0; i < 2 && isbn; i++) {
        if (digits == config->isbn_hyphens[i][0] && hyphens + 1 == config->isbn_hyphens[i][1]) {
            return 1;
        }
    }
    return 0;
}

/* Whether the name *found* (an ASCII str) may be a Springer book's (_hyphens.
 * is_springer_book), whose chapter a blank may have cut off (_make._completed asks): the
 * prefix _SPRINGER, and a suffix that starts with a digit (an ISBN: _hyphens._hyphenated).
 * Read on the name, not the text: a URL's escape may write the digit. */
int
dk_rule_book(PyObject *found)
{
    Py_ssize_t size = PyUnicode_GET_LENGTH(found);
    Py_ssize_t prefix = PyUnicode_GET_LENGTH(config->springer);
    return size > prefix &&
           dk_ascii_at(PyUnicode_1BYTE_KIND, PyUnicode_1BYTE_DATA(found), size, 0, config->springer,
                    0) &&
           Py_ISDIGIT(PyUnicode_1BYTE_DATA(found)[prefix]);
}

/* Whether each of the *count* *tuples* holds ASCII strs only: 0, or -1 with a TypeError
 * that names *who*. */
int
dk_ascii_tuples(PyObject *const *tuples, int count, const char *who)
{
    for (int t = 0; t < count; t++) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuples[t]); i++) {
            PyObject *item = PyTuple_GET_ITEM(tuples[t], i);
            if (!PyUnicode_Check(item) || !PyUnicode_IS_ASCII(item)) {
                PyErr_Format(PyExc_TypeError, "%s: a tuple of ASCII str", who);
                return -1;
            }
        }
    }
    return 0;
}

/* configure_quick(**parts): doikit._extract's parts, once (internal); until it has
 * succeeded, dk_quick leaves every candidate to the Python path. */
PyObject *
dk_configure_quick(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"heads", "boundaries", "lookback", "parameter_starts",
                            "parameter", "url_stops", "views", "cut_markers", "ends", "tag",
                            "sici_check", "rejoined", "joins", "hyphens", "trailing", "preprints",
                            "versioned", "placeholder", "is_placeholder", "glued_last",
                            "url_name", "mended_first", "mended", "mended_any", "isbn_starts",
                            "mended_prefixes", "springer", "colon_markers", "not_isbn",
                            "article_hyphens", "isbn_hyphens", "not_continuing",
                            "not_continuing_heads", NULL};
    PyObject *heads, *boundaries, *parameter_starts, *parameter, *url_stops, *views;
    PyObject *cut_markers, *ends, *tag, *sici_check, *rejoined, *joins, *hyphens, *trailing;
    PyObject *preprints;
    PyObject *versioned, *placeholder, *is_placeholder, *glued_last, *url_name;
    PyObject *mended_first, *mended, *mended_any, *isbn_starts, *mended_prefixes, *springer;
    PyObject *colon_markers, *not_isbn, *isbn_hyphens, *not_continuing, *not_continuing_heads;
    Py_ssize_t lookback, article_hyphens;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "$O!UnUOUO!O!UOOOUUUO!OUOUOUOUO!O!UO!O!nO!UO!:configure_quick", names,
            &PyTuple_Type, &heads, &boundaries, &lookback, &parameter_starts,
            &parameter, &url_stops, &PyTuple_Type, &views, &PyTuple_Type, &cut_markers, &ends,
            &tag, &sici_check, &rejoined, &joins, &hyphens, &trailing, &PyTuple_Type, &preprints,
            &versioned, &placeholder, &is_placeholder, &glued_last, &url_name, &mended_first,
            &mended, &mended_any, &PyTuple_Type, &isbn_starts, &PyTuple_Type, &mended_prefixes,
            &springer, &PyTuple_Type, &colon_markers, &PyTuple_Type, &not_isbn,
            &article_hyphens, &PyTuple_Type, &isbn_hyphens, &not_continuing, &PyTuple_Type,
            &not_continuing_heads)) {
        return NULL;
    }
    /* Off while its parts are written: a call that fails leaves it off (every candidate to
     * the Python path), not half configured. */
    Py_CLEAR(config->heads);
    PyObject *tuples[] = {heads,          views,    cut_markers,         preprints, isbn_starts,
                          mended_prefixes, colon_markers, not_isbn, not_continuing_heads};
    if (dk_ascii_tuples(tuples, 9, "configure_quick") < 0) {
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(springer) || lookback < 0 ||
        dk_mark(config->boundaries, boundaries, 1) < 0 ||
        dk_mark(config->parameter_starts, parameter_starts, 1) < 0 ||
        dk_mark(config->ends, ends, 0) < 0 || dk_mark(config->trailing, trailing, 0) < 0 ||
        dk_mark(config->placeholder, placeholder, 1) < 0 ||
        dk_mark(config->glued_last, glued_last, 1) < 0 ||
        dk_mark(config->mended_first, mended_first, 1) < 0 ||
        dk_mark(config->url_stops, url_stops, 1) < 0 || dk_mark(config->joins, joins, 0) < 0 ||
        dk_mark(config->hyphens, hyphens, 0) < 0 ||
        dk_mark(config->mended_any, mended_any, 1) < 0 ||
        dk_mark(config->not_continuing, not_continuing, 1) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "configure_quick: parts out of range");
        }
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(views); i++) { /* (dk_view_after reads words) */
        PyObject *view = PyTuple_GET_ITEM(views, i);
        for (Py_ssize_t at = 0; at < PyUnicode_GET_LENGTH(view); at++) {
            Py_UCS1 c = PyUnicode_1BYTE_DATA(view)[at];
            if (!Py_ISDIGIT(c) && !Py_ISLOWER(c)) {
                PyErr_SetString(PyExc_ValueError, "configure_quick: views are lower-case words");
                return NULL;
            }
        }
    }
    if (PyTuple_GET_SIZE(isbn_hyphens) != 2) {
        PyErr_SetString(PyExc_ValueError, "configure_quick: two ISBN lengths");
        return NULL;
    }
    for (int i = 0; i < 2; i++) {
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(isbn_hyphens, i), "nn", &config->isbn_hyphens[i][0],
                              &config->isbn_hyphens[i][1])) {
            return NULL;
        }
    }
    config->article_hyphens = article_hyphens;
    config->lookback = lookback;
    Py_XSETREF(config->parameter, Py_NewRef(parameter));
    Py_XSETREF(config->views, Py_NewRef(views));
    Py_XSETREF(config->joins_set, Py_NewRef(joins));
    Py_XSETREF(config->hyphens_set, Py_NewRef(hyphens));
    Py_XSETREF(config->isbn_starts, Py_NewRef(isbn_starts));
    Py_XSETREF(config->mended_prefixes, Py_NewRef(mended_prefixes));
    Py_XSETREF(config->not_isbn, Py_NewRef(not_isbn));
    Py_XSETREF(config->cut_markers, Py_NewRef(cut_markers));
    Py_XSETREF(config->ends_set, Py_NewRef(ends));
    Py_XSETREF(config->tag, Py_NewRef(tag));
    Py_XSETREF(config->sici_check, Py_NewRef(sici_check));
    Py_XSETREF(config->rejoined, Py_NewRef(rejoined));
    Py_XSETREF(config->not_continuing_heads, Py_NewRef(not_continuing_heads));
    Py_XSETREF(config->trailing_set, Py_NewRef(trailing));
    Py_XSETREF(config->preprints, Py_NewRef(preprints));
    Py_XSETREF(config->versioned, Py_NewRef(versioned));
    Py_XSETREF(config->is_placeholder, Py_NewRef(is_placeholder));
    Py_XSETREF(config->url_name, Py_NewRef(url_name));
    Py_XSETREF(config->mended, Py_NewRef(mended));
    Py_XSETREF(config->springer, Py_NewRef(springer));
    Py_XSETREF(config->colon_markers, Py_NewRef(colon_markers));
    Py_XSETREF(config->heads, Py_NewRef(heads)); /* last: it says configured */
    Py_RETURN_NONE;
}

/* The rules above that the walk (walk.c) reads too, each as the quick path reads it. */

/* Whether configure_quick() has handed them over. */
int
dk_rule_ready(void)
{
    return config->heads != NULL;
}

/* _run._TAG: whether an HTML or XML tag starts at *at*: 1, 0, or -1. */
int
dk_rule_tag(PyObject *text, Py_ssize_t at)
{
    return dk_answers(config->tag, text, 1, at, 0, 0);
}

/* _run._continues for the line that starts at *following* (< length), after a line that
 * ended in one of _HYPHENS (*hyphen*) or not: 1 or 0. No closer, quote, whitespace or start
 * of _NOT_A_CONTINUATION begins it (the heads in either case); and, but after a hyphen,
 * _CONTINUATION: its first word holds a digit, and it is no list number ('8. Name', '2)
 * Name': up to three digits, '.' or ')', a blank), no '[' and no page number alone (up to
 * four digits before a blank and a word that starts with no digit, or before the line's
 * end). */
static int
continues(int kind, const void *data, Py_ssize_t length, Py_ssize_t following, int hyphen)
{
    Py_UCS4 first = READ(following);
    if (dk_marked(config->not_continuing, first) || (first < 128 && Py_ISSPACE(first))) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(config->not_continuing_heads); i++) {
        PyObject *head = PyTuple_GET_ITEM(config->not_continuing_heads, i);
        if (dk_ascii_at(kind, data, length, following, head, 1)) {
            return 0;
        }
    }
    if (hyphen) {
        return 1;
    }
    if (first == '[') {
        return 0;
    }
    Py_ssize_t number = following; /* the digits the line starts with */
    while (number < length && READ(number) >= '0' && READ(number) <= '9') {
        number++;
    }
    Py_ssize_t digits = number - following;
    if (digits >= 1 && digits <= 3 && number + 1 < length &&
        (READ(number) == '.' || READ(number) == ')') &&
        (READ(number + 1) == ' ' || READ(number + 1) == '\t' || READ(number + 1) == '\r' ||
         READ(number + 1) == '\n')) {
        return 0; /* a list number */
    }
    if (digits >= 1 && digits <= 4) {
        Py_ssize_t word = number;
        while (word < length && (READ(word) == ' ' || READ(word) == '\t')) {
            word++;
        }
        if (word == length || READ(word) == '\n' ||
            (READ(word) == '\r' && word + 1 < length && READ(word + 1) == '\n')) {
            return 0; /* a page number alone at the line's end */
        }
        if (word > number && !Py_UNICODE_ISSPACE(READ(word)) &&
            !(READ(word) >= '0' && READ(word) <= '9')) {
            return 0; /* a page number before words */
        }
    }
    for (Py_ssize_t at = following; at < length; at++) { /* a digit in the first word */
        Py_UCS4 c = READ(at);
        if (c == '"' || Py_UNICODE_ISSPACE(c)) {
            break;
        }
        if (c >= '0' && c <= '9') {
            return 1;
        }
    }
    return 0;
}

/* _run._rejoined at the stop *at* of a whole text: 1 with where the next line goes on with
 * the DOI in *following*, 0 when the DOI ends at *at*, -1 with an exception. Read here
 * (continues) but after a ';', where _rejoined itself is asked (a SICI's check character). */
int
dk_rule_rejoined(PyObject *text, Py_ssize_t at, Py_ssize_t *following)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    Py_ssize_t next = at > 0 ? dk_line_break(kind, data, length, at) : -1;
    if (next < 0) {
        return 0;
    }
    Py_UCS4 last = READ(at - 1);
    if (last != ';') {
        /* after one of _JOINS_AFTER, or a letter or digit before a line that starts with
         * '.' (_BREAK_THEN_DOT); a line break at the end of the text joins nothing */
        int joins = dk_in_set(config->joins, config->joins_set, last);
        if (joins < 0) {
            return -1;
        }
        if (next == length || (!joins && !(Py_UNICODE_ISALNUM(last) && READ(next) == '.'))) {
            return 0;
        }
        int hyphen = dk_in_set(config->hyphens, config->hyphens_set, last);
        if (hyphen < 0) {
            return -1;
        }
        if (!continues(kind, data, length, next, hyphen)) {
            return 0;
        }
        *following = next;
        return 1;
    }
    PyObject *answer = dk_call(config->rejoined, text, 1, at, 0); /* (a SICI's check) */
    if (answer == NULL) {
        return -1;
    }
    if (answer == Py_None) {
        Py_DECREF(answer);
        return 0;
    }
    *following = PyLong_AsSsize_t(answer);
    Py_DECREF(answer);
    if (*following == -1 && PyErr_Occurred()) {
        return -1;
    }
    return *following > at && *following <= length ? 1 : 0;
}

/* _pattern._TRAILING: whether *c* trails a DOI. 1, 0, or -1. */
int
dk_rule_trails(Py_UCS4 c)
{
    return dk_in_set(config->trailing, config->trailing_set, c);
}

/* _pattern._IS_PLACEHOLDER(text, at): 1, 0, or -1. */
int
dk_rule_placeholder(PyObject *text, Py_ssize_t at)
{
    if (at >= PyUnicode_GET_LENGTH(text) ||
        !dk_marked(config->placeholder, PyUnicode_READ_CHAR(text, at))) {
        return 0;
    }
    return dk_answers(config->is_placeholder, text, 1, at, 0, 0);
}

/* Whether the name at text[start:end] starts as a preprint server's names do (_PREPRINTS):
 * _quick and _make then cut its version or file (_PREPRINT). */
int
dk_rule_preprint(PyObject *text, Py_ssize_t start, Py_ssize_t end)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(config->preprints); i++) {
        if (dk_ascii_at(kind, data, end, start, PyTuple_GET_ITEM(config->preprints, i), 0)) {
            return 1;
        }
    }
    return 0;
}

/* _hyphens.mended(name) for an ASCII str *name* (a new reference, NULL with an exception):
 * only called where it may change it. */
PyObject *
dk_rule_mended(PyObject *name)
{
    if (!may_mend(name)) {
        return Py_NewRef(name);
    }
    return PyObject_CallOneArg(config->mended, name);
}

/* rejoined(text, at): dk_rule_rejoined's answer (where the next line goes on, or None), for
 * the tests (internal). */
PyObject *
dk_rejoined_one(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *text;
    Py_ssize_t at, following = -1;
    if (!PyArg_ParseTuple(args, "Un:rejoined", &text, &at)) {
        return NULL;
    }
    if (config->heads == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "rejoined(): configure_quick() has not been called");
        return NULL;
    }
    if (at < 1 || at > PyUnicode_GET_LENGTH(text)) {
        PyErr_SetString(PyExc_ValueError, "rejoined(): a stop outside the text");
        return NULL;
    }
    int said = dk_rule_rejoined(text, at, &following);
    if (said < 0) {
        return NULL;
    }
    return said ? PyLong_FromSsize_t(following) : Py_NewRef(Py_None);
}
