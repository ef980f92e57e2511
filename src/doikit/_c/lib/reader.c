/* The C reader of DOI presentations (see reader.h): pure C, no Python.h.
 *
 * One thing is written here a second time, for speed (issue 15): the reader decides _QUICK's
 * shapes of ASCII text in one pass, escapes included, where calling the pattern and
 * decoding escapes in Python cost ten times more. Hypothesis properties hold it to the
 * Python parser on any text (tests/test_speedups.py); fuzz/ holds it to a small oracle.
 */
#include "reader.h"

#include <string.h> /* memcpy */
#if defined(_MSC_VER)
#include <intrin.h> /* _BitScanForward64 */
#endif

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define DK_BIG_ENDIAN 1
#else
#define DK_BIG_ENDIAN 0 /* (MSVC targets little-endian machines only) */
#endif

typedef unsigned char byte;

static inline int
is_digit(byte c)
{
    return c >= '0' && c <= '9';
}

/* The value of each hex digit, 16 for any other byte: a table, not branches, since the
 * digits of escapes mix digits and letters as no branch predictor can guess. */
static const unsigned char HEX[256] = {
#define H16 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16
    H16, H16, H16,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 16, 16, 16, 16, 16,            /* '0'-'9' */
    16, 10, 11, 12, 13, 14, 15, 16, 16, 16, 16, 16, 16, 16, 16, 16,  /* 'A'-'F' */
    H16,
    16, 10, 11, 12, 13, 14, 15, 16, 16, 16, 16, 16, 16, 16, 16, 16,  /* 'a'-'f' */
    H16, H16, H16, H16, H16, H16, H16, H16, H16, /* 0x70-0xff */
#undef H16
};

static inline byte
lower_ascii(byte c)
{
    return (c >= 'A' && c <= 'Z') ? (byte)(c + ('a' - 'A')) : c;
}

/* See reader.h. */
int
dk_hosts_set(DkHosts *hosts, const char *const *names, const dk_size *sizes, dk_size count)
{
    if (count < 0 || count > DK_MAX_HOSTS) {
        return -1;
    }
    for (dk_size i = 0; i < count; i++) { /* all checked before any is written */
        if (sizes[i] < 0 || sizes[i] + 2 > DK_MAX_HOST) {
            return -1;
        }
    }
    for (dk_size i = 0; i < count; i++) {
        for (dk_size k = 0; k < sizes[i]; k++) { /* lower-case, as starts() compares */
            hosts->host[i][k] = (char)lower_ascii((byte)names[i][k]);
        }
        hosts->host[i][sizes[i]] = '/';
        hosts->host[i][sizes[i] + 1] = '\0';
        hosts->length[i] = sizes[i] + 1;
    }
    hosts->count = count;
    return 0;
}

/* Eight bytes at a time (SWAR): each test gives the high bit of every byte it holds for
 * (exact as "any byte", which is all that is asked here). */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

static inline uint64_t
load8(const byte *p)
{
    uint64_t word;
    memcpy(&word, p, 8);
    return word;
}

static inline uint64_t
any_below(uint64_t word, unsigned limit) /* a byte < limit (limit <= 128) */
{
    return (word - ONES * limit) & ~word & HIGHS;
}

static inline uint64_t
any_above(uint64_t word, unsigned limit) /* a byte > limit (limit < 128) */
{
    return ((word + ONES * (127 - limit)) | word) & HIGHS;
}

static inline uint64_t
any_equal(uint64_t word, unsigned c)
{
    uint64_t x = word ^ (ONES * c);
    return (x - ONES) & ~x & HIGHS;
}

/* The high bit of each byte of *word* that is 'A'-'Z' (exact for ASCII bytes). */
static inline uint64_t
upper8(uint64_t word)
{
    return (word + ONES * (128 - 'A')) & ~(word + ONES * (127 - 'Z')) & HIGHS;
}

/* The ASCII bytes of *word* with 'A'-'Z' lower-cased. */
static inline uint64_t
lower8(uint64_t word)
{
    return word | upper8(word) >> 2;
}

/* The high bit of exactly the bytes of *word* equal to *c* (any_equal may also mark the
 * byte after one: enough for "any", not to count or find them). */
static inline uint64_t
exact_equal(uint64_t word, unsigned c)
{
    const uint64_t lows = ONES * 0x7F;
    uint64_t x = word ^ (ONES * c);
    return ~(((x & lows) + lows) | x | lows);
}

/* How many bytes a mask of high bits marks. */
static inline dk_size
marked_bytes(uint64_t mask)
{
    return (dk_size)(((mask >> 7) * ONES) >> 56);
}

/* The first byte (lowest address) a non-zero mask of high bits of a word read by load8()
 * marks: the lowest-order one on a little-endian machine, the highest-order on a
 * big-endian one. */
static inline dk_size
first_marked(uint64_t mask)
{
#if DK_BIG_ENDIAN
    dk_size first = 0;
    while (!(mask & (HIGHS & ~(HIGHS >> 8)) >> (8 * first))) {
        first++;
    }
    return first;
#elif defined(_MSC_VER)
    unsigned long bit;
    _BitScanForward64(&bit, mask);
    return (dk_size)(bit / 8);
#else
    return (dk_size)(__builtin_ctzll(mask) / 8);
#endif
}

/* The bytes of a word read by load8() at the *seen* lowest addresses, cleared. */
static inline uint64_t
unseen_bytes(uint64_t word, dk_size seen)
{
    if (seen == 0) {
        return word;
    }
#if DK_BIG_ENDIAN
    return word & (~(uint64_t)0 >> (8 * seen));
#else
    return word & (~(uint64_t)0 << (8 * seen));
#endif
}

/* The first *len* (at most 8) bytes of a word read by load8() kept, the others cleared. */
static inline uint64_t
first_bytes(uint64_t word, dk_size len)
{
    if (len >= 8) {
        return word;
    }
#if DK_BIG_ENDIAN
    return word & ~(~(uint64_t)0 >> (8 * len));
#else
    return word & (((uint64_t)1 << (8 * len)) - 1);
#endif
}

/* Whether s[at:] starts with the *len* bytes of the lower-case ASCII *literal*, ASCII case
 * ignored: eight bytes at a time where the text has them (a byte outside ASCII keeps its
 * high bit through lower8, so it never matches; the bytes after the literal's are cleared
 * before, so none of them can carry into the compared ones). */
static inline int
starts_n(const byte *s, dk_size n, dk_size at, const char *literal, dk_size len)
{
    for (; len >= 8 && n - at >= 8; at += 8, literal += 8, len -= 8) {
        if (lower8(load8(s + at)) != load8((const byte *)literal)) {
            return 0;
        }
    }
    if (len > 0 && n - at >= 8) {
        uint64_t want = 0;
        memcpy(&want, literal, (size_t)len);
        return lower8(first_bytes(load8(s + at), len)) == want;
    }
    for (; len > 0; len--, literal++, at++) {
        if (at >= n || lower_ascii(s[at]) != (byte)*literal) {
            return 0;
        }
    }
    return 1;
}

/* Whether s[at:] starts with the lower-case ASCII *literal*, ASCII case ignored. */
static inline int
starts(const byte *s, dk_size n, dk_size at, const char *literal)
{
    return starts_n(s, n, at, literal, (dk_size)strlen(literal));
}

/* The end of the run of ASCII digits at s[at:]: eight bytes at a time on a little-endian
 * machine, where the first byte marked by any_below/any_above is exact (a borrow or carry
 * runs from a marked byte to those after it). */
static inline dk_size
digits_end(const byte *s, dk_size n, dk_size at)
{
#if !DK_BIG_ENDIAN
    for (; n - at >= 8; at += 8) {
        uint64_t w = load8(s + at);
        uint64_t other = any_below(w, '0') | any_above(w, '9');
        if (other) {
            return at + first_marked(other);
        }
    }
#endif
    while (at < n && is_digit(s[at])) {
        at++;
    }
    return at;
}

/* The length of a prefix at s[at:] ("10.", digits, with '.' subdivisions), or -1. */
static inline dk_size
prefix_length(const byte *s, dk_size n, dk_size from)
{
    dk_size at = from;
    if (!(n - at > 3 && s[at] == '1' && s[at + 1] == '0' && s[at + 2] == '.' &&
          is_digit(s[at + 3]))) {
        return -1;
    }
    at += 3;
    for (;;) {
        at = digits_end(s, n, at);
        if (at + 1 < n && s[at] == '.' && is_digit(s[at + 1])) {
            at++;
            continue;
        }
        return at - from;
    }
}

/* The length of a resolver host and its '/' at s[at:], or -1. */
static inline dk_size
host_length(const DkHosts *hosts, const byte *s, dk_size n, dk_size at)
{
    if (at >= n) {
        return -1;
    }
    char first = (char)lower_ascii(s[at]);
    for (dk_size i = 0; i < hosts->count; i++) {
        if (hosts->host[i][0] == first &&
            starts_n(s, n, at, hosts->host[i], hosts->length[i])) {
            return hosts->length[i];
        }
    }
    return -1;
}

/* The length of _QUICK's presentation head at the start of s, or -1 for none; *urn is set
 * for urn:doi:. (The heads, as _QUICK spells them: a resolver's URL with or without
 * http(s)://, 'doi:', 'doi: ', 'doi ', 'info:doi/', 'hdl:' and 'urn:doi:', ASCII case
 * ignored.) Chosen by the first letter. */
static dk_size
head_length(const DkHosts *hosts, const byte *s, dk_size n, int *urn)
{
    *urn = 0;
    if (n < 4) {
        return -1;
    }
    dk_size host;
    switch (lower_ascii(s[0])) {
    case 'h':
        if (starts(s, n, 0, "https://")) {
            host = host_length(hosts, s, n, 8);
            return host < 0 ? -1 : 8 + host;
        }
        if (starts(s, n, 0, "http://")) {
            host = host_length(hosts, s, n, 7);
            return host < 0 ? -1 : 7 + host;
        }
        if (starts(s, n, 0, "hdl:")) {
            return 4;
        }
        break;
    case 'd':
        if (starts(s, n, 0, "doi:")) {
            return (n > 4 && s[4] == ' ') ? 5 : 4;
        }
        if (starts(s, n, 0, "doi ")) {
            return 4;
        }
        break;
    case 'i':
        if (starts(s, n, 0, "info:doi/")) {
            return 9;
        }
        break;
    case 'u':
        if (starts(s, n, 0, "urn:doi:")) {
            *urn = 1;
            return 8;
        }
        break;
    default:
        break;
    }
    return host_length(hosts, s, n, 0);
}

/* Where quick_shape copies: the word *w*, or the byte *c*, to out[at] (ASCII letters
 * lower-cased with *key*); nothing without *out*. */
static inline void
store8(byte *out, dk_size at, uint64_t w, int key)
{
    if (out != NULL) {
        uint64_t v = key ? lower8(w) : w;
        memcpy(out + at, &v, 8);
    }
}

static inline void
store1(byte *out, dk_size at, byte c, int key)
{
    if (out != NULL) {
        out[at] = key ? lower_ascii(c) : c;
    }
}

/* dk_quick_shape, and with *out* (room for n bytes) the text from its name's start copied
 * there as it is checked (ASCII letters lower-cased with *key*, a URN's ':' made '/'): the
 * name itself unless it holds escapes. (Inlined twice: with and without *out*.) */
static inline int
quick_shape(const DkHosts *hosts, const byte *s, dk_size n, DkShape *shape, byte *out, int key)
{
    int urn = 0, bare = n >= 3 && s[0] == '1' && s[1] == '0' && s[2] == '.';
    dk_size start = bare ? 0 : head_length(hosts, s, n, &urn);
    if (start < 0) {
        return 0;
    }
    dk_size at = prefix_length(s, n, start);
    if (at < 0) {
        return 0;
    }
    at += start;
    dk_size prefix_end = at;
    dk_size percents = 0; /* escapes, each three bytes for one */
    if (at < n && s[at] == (urn ? ':' : '/')) {
        at++;
    }
    else if (!bare && !urn && at + 2 < n && s[at] == '%' && s[at + 1] == '2' &&
             (s[at + 2] == 'F' || s[at + 2] == 'f')) {
        at += 3;
        percents = 1;
    }
    else {
        return 0;
    }
    dk_size suffix = at;
    if (suffix >= n) {
        return 0;
    }
    if (out != NULL) {
        memcpy(out, s + start, (size_t)(suffix - start)); /* the prefix and its '/' */
        out[prefix_end - start] = '/';
    }
    /* The suffix's characters, eight at a time without branches, the last part as one
     * overlapping word (its bytes already seen masked off where they are counted). */
    uint64_t bad = 0, upper = 0;
    if (bare) { /* literal: printable ASCII and spaces, no '%', not ending in ' ' or '/' */
        for (; at + 8 <= n; at += 8) {
            uint64_t w = load8(s + at);
            bad |= any_below(w, ' ') | any_above(w, '~') | any_equal(w, '%');
            upper |= upper8(w);
            store8(out, at - start, w, key);
        }
        if (at < n && n - suffix >= 8) {
            uint64_t w = load8(s + n - 8);
            bad |= any_below(w, ' ') | any_above(w, '~') | any_equal(w, '%');
            upper |= upper8(w);
            store8(out, n - 8 - start, w, key);
            at = n;
        }
        for (; at < n; at++) {
            byte c = s[at];
            bad |= (uint64_t)((byte)(c - ' ') > '~' - ' ') | (uint64_t)(c == '%');
            upper |= (uint64_t)((byte)(c - 'A') < 26);
            store1(out, at - start, c, key);
        }
        if (bad || s[n - 1] == ' ' || s[n - 1] == '/') {
            return 0;
        }
    }
    else { /* after a head: printable ASCII but ' ', '#' and '?'; escapes decoded */
        for (; at + 8 <= n; at += 8) {
            uint64_t w = load8(s + at);
            bad |= any_below(w, '!') | any_above(w, '~') | any_equal(w, '#') | any_equal(w, '?');
            upper |= upper8(w);
            percents += marked_bytes(exact_equal(w, '%'));
            store8(out, at - start, w, key);
        }
        if (at < n && n - suffix >= 8) {
            uint64_t w = load8(s + n - 8);
            bad |= any_below(w, '!') | any_above(w, '~') | any_equal(w, '#') | any_equal(w, '?');
            upper |= upper8(w);
            percents += marked_bytes(unseen_bytes(exact_equal(w, '%'), at - (n - 8)));
            store8(out, n - 8 - start, w, key);
            at = n;
        }
        for (; at < n; at++) {
            byte c = s[at];
            bad |= (uint64_t)((byte)(c - '!') > '~' - '!') | (uint64_t)(c == '#') |
                   (uint64_t)(c == '?');
            upper |= (uint64_t)((byte)(c - 'A') < 26);
            percents += c == '%';
            store1(out, at - start, c, key);
        }
        if (bad) {
            return 0;
        }
    }
    if (3 * percents > n - prefix_end) { /* (malformed escapes: each takes three bytes) */
        return 0;
    }
    shape->start = start;
    shape->prefix_end = prefix_end;
    shape->suffix = suffix;
    shape->length = n - start - 2 * percents;
    shape->urn = urn;
    shape->bare = bare;
    shape->escapes = percents != 0;
    shape->upper = upper != 0;
    return 1;
}

/* See reader.h. */
int
dk_quick_shape(const DkHosts *hosts, const byte *s, dk_size n, DkShape *shape)
{
    return quick_shape(hosts, s, n, shape, NULL, 0);
}

/* See reader.h. Eight bytes at a time while the name has room for them; a word with a '%'
 * is written up to it, then the escape. */
int
dk_quick_copy(const byte *s, dk_size n, const DkShape *shape, int key, byte *out)
{
    dk_size length = 0, at = shape->start, room = shape->length;
    if (shape->urn) {
        if (room < shape->prefix_end - at + 1) { /* (only where an escape is malformed) */
            return -1;
        }
        memcpy(out, s + at, (size_t)(shape->prefix_end - at)); /* digits and dots */
        length = shape->prefix_end - at;
        out[length++] = '/';
        at = shape->suffix;
    }
    while (at < n) {
        if (n - at >= 8 && room - length >= 8) {
            uint64_t w = load8(s + at);
            uint64_t percent = shape->escapes ? exact_equal(w, '%') : 0;
            uint64_t v = key ? lower8(w) : w;
            memcpy(out + length, &v, 8);
            if (percent == 0) {
                at += 8;
                length += 8;
                continue;
            }
            dk_size before = first_marked(percent);
            at += before;
            length += before;
        }
        else if (length >= room) { /* (only where an escape is malformed) */
            return -1;
        }
        else if (s[at] != '%') {
            byte c = s[at++];
            out[length++] = key ? lower_ascii(c) : c;
            continue;
        }
        /* an escape */
        if (at + 2 >= n) {
            return -1;
        }
        unsigned high = HEX[s[at + 1]], low = HEX[s[at + 2]];
        byte c = (byte)(16 * high + low);
        if ((high | low) > 15 || c < ' ' || c > '~') {
            return -1;
        }
        out[length++] = key ? lower_ascii(c) : c;
        at += 3;
    }
    return length == room ? 0 : -1; /* (every byte of the name written, or undecided) */
}

/* See reader.h. */
int
dk_quick_read(const DkHosts *hosts, const byte *s, dk_size n, int key, byte *out,
              DkShape *shape)
{
    if (!quick_shape(hosts, s, n, shape, out, key)) {
        return 0;
    }
    return !shape->escapes || dk_quick_copy(s, n, shape, key, out) == 0;
}

/* See reader.h. (Junk in a column of names, "N/A" or "PMID: 31452104", is short: a plain
 * loop.) */
int
dk_surely_no_name(const byte *s, dk_size n)
{
    dk_size prefix = prefix_length(s, n, 0);
    if (prefix >= 0 && (prefix == n || (prefix == n - 1 && s[prefix] == '/'))) {
        return 1; /* a prefix alone: no suffix */
    }
    for (dk_size at = 0; at < n; at++) {
        byte c = s[at];
        if (c >= 0x80 || c == '%' ||
            (c == '.' && at >= 2 && s[at - 1] == '0' && s[at - 2] == '1')) {
            return 0;
        }
    }
    return 1;
}
