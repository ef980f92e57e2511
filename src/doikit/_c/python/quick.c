/* The extractor's quick path, in C (issue 30): what doikit._extract._quick decides about a
 * candidate of the common shape (the candidate pattern's group 2), without its Python
 * frame, for the Scan of scan.c.
 *
 * It decides a candidate only where _quick would give the same DOI (DK_DECIDED); refuses
 * it only where _quick surely refuses it (DK_REFUSED: the Scan hands it to the walk, the
 * authority); and leaves everything else to _extract._decide (DK_LEFT: the Python quick
 * path, then the walk). The rules are not copied here: it reads them as rules.c holds them
 * (what configure_quick() hands over from the Python modules that define them, and those
 * modules' own compiled patterns and functions, called only for the candidates that reach
 * them). A property test holds the C build's answers to the walk's on any text
 * (tests/test_extract.py), and to the pure-Python scan's. */
#include "extract.h"

static const DkRules *const config = &dk_rules;

/* In dk_quick: a rule of _quick's that *said* something (1) refuses the candidate; an
 * exception (-1) is passed on. */
#define REFUSE_IF(said)                                                                      \
    do {                                                                                     \
        int said_ = (said);                                                                  \
        if (said_ != 0) {                                                                    \
            return said_ < 0 ? -1 : DK_REFUSED;                                                 \
        }                                                                                    \
    } while (0)

/* What _quick reads in a URL candidate text[start:end]: DK_REFUSED at one of
 * _QUICK_URL_STOPS (the run ends there); DK_LEFT at a view (_url._URL_VIEW_AFTER: '/', one of
 * _VIEWS in either case, then no letter or digit before *end*), which _quick cuts as the
 * walk does; DK_DECIDED (go on) else. */
static int
url_odd(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    int view = 0;
    for (Py_ssize_t at = start; at < end; at++) {
        Py_UCS4 c = READ(at);
        if (dk_marked(config->url_stops, c)) {
            return DK_REFUSED;
        }
        if (c == '/' && !view) {
            view = dk_view_after(kind, data, at, end) >= 0;
        }
    }
    return view ? DK_LEFT : DK_DECIDED;
}

/* Whether text[start:end] is printable ASCII without a backslash (the walk reads escapes;
 * the Python path reads the rest: isprintable(), ligatures). */
static int
plain_ascii(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    for (Py_ssize_t at = start; at < end; at++) {
        Py_UCS4 c = READ(at);
        if (c <= ' ' || c >= 0x7F || c == '\\') {
            return 0;
        }
    }
    return 1;
}

/* The DOI _quick gives for the candidate text[start:end] of the common shape (group 2):
 * DK_DECIDED, with the name in *name* and where it is written up to in *written_end*; DK_LEFT
 * when the Python path must see it; DK_REFUSED where _quick says None (each of these returns
 * is one of _quick's); -1 with an exception. *in_url_said* is set to what _url._in_url says
 * of the candidate when it has asked (after '/' or '='), else -1 (the walk asks again). */
int
dk_quick(PyObject *text, Py_ssize_t start, Py_ssize_t end, int stream, Py_ssize_t *written_end,
         PyObject **name, int *in_url_said)
{
    *in_url_said = -1;
    if (config->heads == NULL) {
        return DK_LEFT; /* not configured: the Python path decides everything */
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int url = 0;
    if (start < 0 || end > length || end - start < 5) {
        return DK_LEFT;
    }
    if (stream && end + 1 >= length) {
        return DK_REFUSED; /* the next chunk may go on with this DOI */
    }
    if (start > 0) {
        Py_UCS4 before = READ(start - 1);
        if (before == ':') {
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(config->colon_markers); i++) {
                PyObject *marker = PyTuple_GET_ITEM(config->colon_markers, i);
                if (dk_ascii_at(kind, data, length, start - PyUnicode_GET_LENGTH(marker), marker,
                             1)) {
                    return DK_REFUSED; /* a URN, or a URL path's '/doi:' (_in_url decides) */
                }
            }
        }
        else if (before == '%') {
            return DK_REFUSED;
        }
        else if (before == '/' || before == '=') {
            Py_ssize_t token = dk_token_start(kind, data, start);
            url = before == '/' && dk_after_resolver(kind, data, length, start);
            if (!url && (url = dk_in_url_at(text, kind, data, start, token)) < 0) {
                return -1;
            }
            *in_url_said = url;
            if (url) {
                /* '?', '#', "'" (refused) or a view; a badge's or an OUP page's URL, whose
                 * tail _quick reads as the walk does (_in_url_written) */
                int odd = url_odd(kind, data, start, end);
                if (odd != DK_DECIDED) {
                    return odd;
                }
                int near = dk_any_within(text, token, start, config->cut_markers);
                if (near != 0) {
                    return near < 0 ? -1 : DK_LEFT;
                }
            }
            else if (before == '/' && start >= 2 && Py_UNICODE_ISDIGIT(READ(start - 2))) {
                return DK_REFUSED; /* a number's path outside a URL: the walk refuses it */
            }
        }
    }
    if (end < length) {
        Py_UCS4 after = READ(end);
        int ends = dk_in_set(config->ends, config->ends_set, after);
        if (ends == 0 && after == ',') {
            ends = 1;
        }
        else if (ends == 0 && after == ';') {
            ends = end + 1 == length ? 1 : dk_in_set(config->ends, config->ends_set, READ(end + 1));
        }
        else if (ends == 0 && after == '<') {
            ends = dk_answers(config->tag, text, 1, end, 0, 0); /* an HTML or XML tag */
        }
        if (ends <= 0) {
            return ends < 0 ? -1 : DK_REFUSED;
        }
        if (after == ';') {
            /* a SICI name broken before its check character (in a stream, what the
             * chunk's end may cut so: not read here): the walk joins it */
            if (stream) {
                return DK_LEFT;
            }
            REFUSE_IF(dk_answers(config->sici_check, text, 1, end - 2, 0, 0));
        }
    }
    for (Py_ssize_t at = start; at < end; at++) {
        if (READ(at) == '\\') {
            return DK_REFUSED; /* escapes (\\/, \\_) are read by the walk */
        }
    }
    Py_ssize_t blank = end;
    while (blank < length && (READ(blank) == ' ' || READ(blank) == '\t')) {
        blank++;
    }
    if (blank < length && READ(blank) == '\r') {
        blank++;
    }
    if (blank == length || READ(blank) == '\n') {
        /* a line end ahead: a DOI broken across lines (or a stream's) goes on */
        if (stream) {
            return DK_REFUSED;
        }
        Py_ssize_t following; /* (none at the text's end) */
        REFUSE_IF(dk_rule_rejoined(text, end, &following));
    }
    Py_ssize_t cut = end;
    for (int trails; cut > start; cut--) {
        if ((trails = dk_in_set(config->trailing, config->trailing_set, READ(cut - 1))) <= 0) {
            if (trails < 0) {
                return -1;
            }
            break;
        }
    }
    Py_ssize_t suffix = start;
    while (suffix < cut && READ(suffix) != '/') { /* (the registrant: digits and dots) */
        suffix++;
    }
    if (++suffix >= cut) {
        return DK_REFUSED; /* nothing of the suffix is left */
    }
    if (!plain_ascii(kind, data, start, cut)) {
        return DK_LEFT; /* isprintable() and ligatures to read */
    }
    PyObject *written = dk_slice(text, start, cut);
    if (written == NULL) {
        return -1;
    }
    /* what the rules below say: DK_DECIDED while none has said otherwise */
    int verdict = DK_DECIDED;
    if (dk_rule_preprint(text, start, cut)) {
        /* a version or a file, which _quick cuts as the walk does (_unversioned) */
        int said = dk_answers(config->versioned, written, 0, 0, 0, 1);
        verdict = said < 0 ? -1 : said ? DK_LEFT : DK_DECIDED;
    }
    if (verdict == DK_DECIDED && dk_marked(config->placeholder, READ(suffix))) {
        int said = dk_answers(config->is_placeholder, written, 1, suffix - start, 0, 0);
        verdict = said < 0 ? -1 : said ? DK_REFUSED : DK_DECIDED;
    }
    PyObject *found = Py_NewRef(written);
    if (verdict == DK_DECIDED && url) {
        int slashes = 0, escaped = 0;
        for (Py_ssize_t at = start; at < cut; at++) {
            slashes += READ(at) == '/';
            escaped |= READ(at) == '%';
        }
        if (escaped || slashes > 1 || dk_marked(config->glued_last, READ(cut - 1))) {
            PyObject *call[] = {written};
            Py_SETREF(found, PyObject_Vectorcall(config->url_name, call, 1, NULL));
            if (found == NULL) {
                verdict = -1;
            }
            else if (found == Py_None || !PyUnicode_IS_ASCII(found) ||
                     !plain_ascii(PyUnicode_1BYTE_KIND, PyUnicode_1BYTE_DATA(found), 0,
                                  PyUnicode_GET_LENGTH(found))) {
                verdict = DK_LEFT; /* _quick reads its tail (_in_url_written), or characters */
            }
        }
    }
    Py_DECREF(written);
    if (verdict != DK_DECIDED) {
        Py_XDECREF(found);
        return verdict;
    }
    if (cut < length && READ(cut) == ' ' && dk_rule_book(found)) {
        Py_DECREF(found);
        return DK_LEFT; /* a Springer book's chapter may follow the blank (_completed) */
    }
    Py_SETREF(found, dk_rule_mended(found));
    if (found == NULL) {
        return -1;
    }
    *written_end = cut;
    *name = found;
    return DK_DECIDED;
}

