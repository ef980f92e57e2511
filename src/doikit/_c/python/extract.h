/* doikit._speedups, inside: what the extractor's C paths share — the rules both read
 * (rules.c), the quick path (quick.c), the walk (walk.c) and its last step (make.c). */
#ifndef DOIKIT_EXTRACT_H
#define DOIKIT_EXTRACT_H

#include "speedups.h"

#define READ(at) PyUnicode_READ(kind, data, (at))

/* What configure_quick() hands over for the rules (rules.c), which the quick path and the
 * walk read (the names of doikit._extract's parts in brackets). */
typedef struct {
    PyObject *heads;             /* _quick._QUICK_HEADS: a tuple of ASCII str */
    char boundaries[128];        /* _url._BOUNDARIES (ASCII) */
    Py_ssize_t lookback;         /* _url._LOOKBACK */
    char parameter_starts[128];  /* _url._PARAMETER_STARTS (ASCII) */
    PyObject *parameter;         /* _url._DOI_PARAMETER */
    char url_stops[128];         /* _quick._QUICK_URL_STOPS (ASCII) */
    PyObject *views;             /* _url._VIEWS: a tuple of ASCII str, lower case */
    PyObject *cut_markers;       /* _url._BADGE and _OUP_HOST: a tuple of ASCII str */
    char ends[128];              /* _quick._QUICK_ENDS, its ASCII part */
    PyObject *ends_set;          /* _quick._QUICK_ENDS (for the rest) */
    PyObject *tag;               /* _run._TAG.match */
    PyObject *sici_check;        /* _run._SICI_CHECK_BREAK */
    PyObject *rejoined;          /* _run._rejoined(text, at): asked after a ';' */
    char not_continuing[128];    /* _run._NOT_CONTINUING (ASCII) */
    PyObject *not_continuing_heads; /* _run._NOT_CONTINUING_HEADS: a tuple of ASCII str */
    char joins[128];             /* _run._JOINS_AFTER, its ASCII part */
    PyObject *joins_set;         /* _run._JOINS_AFTER (for the rest) */
    char hyphens[128];           /* _run._HYPHENS, its ASCII part */
    PyObject *hyphens_set;       /* _run._HYPHENS (for the rest) */
    char trailing[128];          /* _pattern._TRAILING, its ASCII part */
    PyObject *trailing_set;      /* _pattern._TRAILING (for the rest) */
    PyObject *preprints;         /* _make._PREPRINTS: a tuple of ASCII str */
    PyObject *versioned;         /* _make._versioned(written) */
    char placeholder[128];       /* _pattern._PLACEHOLDER_STARTS (ASCII) */
    PyObject *is_placeholder;    /* _pattern._IS_PLACEHOLDER(written, at) */
    char glued_last[128];        /* _url._GLUED_FILE_LAST (ASCII) */
    PyObject *url_name;          /* _url._url_name(written) */
    char mended_first[128];      /* _hyphens._MENDED_FIRST (ASCII) */
    PyObject *mended;            /* _hyphens.mended(name) */
    char mended_any[128];        /* _hyphens._MENDED_ANY (ASCII) */
    PyObject *isbn_starts;       /* _hyphens._ISBN_STARTS: a tuple of ASCII str */
    PyObject *mended_prefixes;   /* _hyphens._MENDED_PREFIXES: a tuple of ASCII str */
    PyObject *not_isbn;          /* _hyphens._MENDED_NOT_ISBN: a tuple of ASCII str */
    Py_ssize_t article_hyphens;  /* _hyphens._ARTICLE_HYPHENS */
    Py_ssize_t isbn_hyphens[2][2]; /* _hyphens._ISBN_HYPHENS: (digits, hyphens) pairs */
    PyObject *springer;          /* _hyphens._SPRINGER + '/': _completed's books */
    PyObject *colon_markers;     /* _pattern._URN and _url._DOI_PATH_LABEL, lower case */
} DkRules;

extern DkRules dk_rules;

/* What configure_walk() hands over (the names of doikit._extract's parts in brackets). */
typedef struct {
    char glued[128];         /* _walk._GLUED (ASCII) */
    PyObject *urn;           /* _pattern._URN, lower case */
    PyObject *escapes;       /* _url._ESCAPES: a tuple of ASCII str */
    PyObject *slashes;       /* _url._ESCAPED_SLASHES: a tuple of ASCII str */
    char stops[128];         /* the ASCII characters _run._STOPS_IN_TEXT stops at */
    char url_stops[128];     /* and _run._STOPS_IN_URL, but '%' (see run_end) */
    PyObject *openers;       /* _pattern._OPENERS' keys, a str */
    PyObject *closers;       /* its values, in the same order */
    PyObject *field_tag;     /* _pattern._FIELD_TAG */
    PyObject *next_marker;   /* _run._NEXT_DOI_MARKER (ASCII, lower case) */
    PyObject *next_heads;    /* _run._NEXT_URL_HEADS: a tuple of ASCII str, lower case */
    PyObject *entity;        /* _run._ENTITY.match */
    char escape_word[128];   /* what _run._ESCAPE_WORD matches (ASCII) */
    char unescaped[128];     /* what _run._ESCAPED_PUNCTUATION unescapes after '\' */
    PyObject *url_length;    /* _url._in_url_length(text, start, raw) */
    PyObject *decode;        /* _syntax.percent_decode */
    PyObject *decode_error;  /* _syntax.PercentError */
    PyObject *preprint;      /* _make._PREPRINT.fullmatch */
    PyObject *page_range;    /* _walk._PAGE_RANGE_BEFORE.search */
    PyObject *shields;       /* _url._after_shields_badge(text, start) */
    PyObject *subfield;      /* _walk._SUBFIELD_BEFORE.search */
    PyObject *number;        /* _walk._looks_like_a_number(text, start, prefix) */
    PyObject *entity_char;   /* _run._entity_char(match) */
    PyObject *escaped_tag;   /* _run._ESCAPED_TAG.match */
    PyObject *unescape;      /* html.unescape */
    PyObject *glued_files;   /* _url._GLUED_FILES: a tuple of ASCII str, lower case */
    PyObject *files_after;   /* _url._FILES_AFTER: a tuple of ASCII str */
    PyObject *badge_images;  /* _url._BADGE_IMAGES: a tuple of ASCII str, lower case */
    PyObject *oup;           /* _url._OUP (ASCII) */
    Py_ssize_t shields_window; /* _url._SHIELDS_WINDOW */
    Py_ssize_t shields_label;  /* _url._SHIELDS_LABEL */
} DkWalkParts;

extern DkWalkParts dk_walk_parts;

static inline int
dk_is_hex(Py_UCS4 c)
{
    return c < 128 && Py_ISXDIGIT(c);
}

/* rules.c: the helpers of the rules. Whether *c* is in the set of *flags* (ASCII) and
 * *set* (for the rest); whether text[at:] is the ASCII str *ascii* (within *length*; its
 * letters in either case with *fold*); whether one of the strs of *tuple* is in
 * text[low:high]; a call of a rule's pattern or function with 0 to 2 int arguments after
 * *first* (dk_call: its answer, a new reference or NULL; dk_answers: 1 when it answers not
 * None, or true with *truth*); whether a common resolver URL ends at *start*; where the
 * token that reaches *start* begins (_url._token_start); whether the candidate at *start*
 * after '/' or '=' is in a URL (_url._in_url); where a line break (_run._LINE_BREAK) at *at*
 * ends, or -1; whether text[at:end] is one of _VIEWS; whether each of *count* tuples holds ASCII strs (for the
 * configure functions). 1, 0, or -1 with an exception, unless said otherwise. */
int dk_in_set(const char *flags, PyObject *set, Py_UCS4 c);
/* scan.c: text[start:end] without a search for its widest character where it is ASCII;
 * whether a str is text[start:end] */
PyObject *dk_slice(PyObject *text, Py_ssize_t start, Py_ssize_t end);
int dk_slice_is(PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *other);
int dk_ascii_at(int kind, const void *data, Py_ssize_t length, Py_ssize_t at, PyObject *ascii,
                int fold);
int dk_any_within(PyObject *text, Py_ssize_t low, Py_ssize_t high, PyObject *tuple);
PyObject *dk_call(PyObject *function, PyObject *first, int count, Py_ssize_t a, Py_ssize_t b);
PyObject *dk_call_on(PyObject *function, PyObject *text, Py_ssize_t start, Py_ssize_t end);
int dk_answers(PyObject *function, PyObject *first, int count, Py_ssize_t a, Py_ssize_t b,
               int truth);
int dk_after_resolver(int kind, const void *data, Py_ssize_t length, Py_ssize_t start);
Py_ssize_t dk_token_start(int kind, const void *data, Py_ssize_t start);
int dk_in_url_at(PyObject *text, int kind, const void *data, Py_ssize_t start, Py_ssize_t token);
int dk_url_token(PyObject *text, int kind, const void *data, Py_ssize_t token, Py_ssize_t end);
Py_ssize_t dk_url_length(PyObject *text, Py_ssize_t start, Py_ssize_t end);
Py_ssize_t dk_separated(int kind, const void *data, Py_ssize_t length, Py_ssize_t at);
Py_ssize_t dk_line_break(int kind, const void *data, Py_ssize_t length, Py_ssize_t at);
int dk_is_view(int kind, const void *data, Py_ssize_t at, Py_ssize_t end);
Py_ssize_t dk_view_after(int kind, const void *data, Py_ssize_t at, Py_ssize_t end);
int dk_ascii_tuples(PyObject *const *tuples, int count, const char *who);

/* rules.c: the rules the quick path and the walk read alike (their comments there): 1, 0
 * or -1 with an exception; dk_rule_mended and dk_rule_url_name a new reference or NULL. */
int dk_rule_ready(void);
int dk_rule_in_url(PyObject *text, Py_ssize_t start, int escaped);
int dk_rule_tag(PyObject *text, Py_ssize_t at);
PyObject *dk_rule_url_name(PyObject *written);
int dk_rule_rejoined(PyObject *text, Py_ssize_t at, Py_ssize_t *following);
int dk_rule_trails(Py_UCS4 c);
int dk_rule_placeholder(PyObject *text, Py_ssize_t at);
int dk_rule_preprint(PyObject *text, Py_ssize_t start, Py_ssize_t end);
PyObject *dk_rule_mended(PyObject *name);
int dk_rule_book(PyObject *name);
int dk_rule_url_may_cut(PyObject *text, Py_ssize_t start, Py_ssize_t suffix, Py_ssize_t end);

/* make.c: _make._make for the walk in C: DK_DECIDED with the DOI in *doi* (a new reference,
 * or NULL: no DOI) written text[start:*found_end]; DK_LEFT; or -1 with an exception. */
int dk_walk_make(PyObject *text, Py_ssize_t start, Py_ssize_t suffix, Py_ssize_t end, int in_url,
                 PyObject *doi_type, PyObject **doi, Py_ssize_t *found_end);

#endif
