/* The reader's oracle: what lib/reader.c decides, written the obvious way, one byte at a
 * time and one rule per line, from the shapes of doikit._present._QUICK it reads:
 *
 *   bare:  10.PREFIX/SUFFIX      SUFFIX printable ASCII (' ' included), no '%', not
 *                                ending in ' ' or '/'; the name is the text as it is
 *   head:  HEAD 10.PREFIX/SUFFIX or HEAD 10.PREFIX%2F SUFFIX (an escaped '/'); SUFFIX
 *                                printable ASCII but ' ', '#' and '?', each '%' two hex
 *                                digits for a printable ASCII character, decoded
 *   URN:   urn:doi:10.PREFIX:SUFFIX, SUFFIX as after a head; the ':' stands for '/'
 *
 * PREFIX is digits, with '.' subdivisions (10\.[0-9]+(\.[0-9]+)*). The heads, ASCII case
 * ignored: https://HOST/, http://HOST/, HOST/, 'doi:', 'doi: ', 'doi ', 'info:doi/' and
 * 'hdl:'. A key is the name with ASCII letters lower-cased. Anything else: undecided.
 */
#include "oracle.h"

#include <stdlib.h>
#include <string.h>

static int
lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int
digit(int c)
{
    return c >= '0' && c <= '9';
}

static int
hex(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Whether s[at:n] starts with *head* (its own length), ASCII case ignored. */
static int
starts(const unsigned char *s, size_t n, size_t at, const char *head, size_t length)
{
    if (n - at < length) {
        return 0;
    }
    for (size_t i = 0; i < length; i++) {
        if (lower(s[at + i]) != lower((unsigned char)head[i])) {
            return 0;
        }
    }
    return 1;
}

/* The name at s[start:n] after a head (none when *bare*): 1 and written to *out*, or 0. */
static int
name_at(const unsigned char *s, size_t n, size_t start, int bare, int urn, int key,
        unsigned char *out, size_t *length)
{
    size_t at = start;
    if (!(n - at >= 4 && s[at] == '1' && s[at + 1] == '0' && s[at + 2] == '.' &&
          digit(s[at + 3]))) {
        return 0;
    }
    at += 3;
    while (at < n && digit(s[at])) {
        at++;
    }
    while (at + 1 < n && s[at] == '.' && digit(s[at + 1])) {
        at++;
        while (at < n && digit(s[at])) {
            at++;
        }
    }
    size_t written = 0;
    for (size_t i = start; i < at; i++) {
        out[written++] = s[i];
    }
    if (urn && at < n && s[at] == ':') {
        at += 1;
    }
    else if (!urn && at < n && s[at] == '/') {
        at += 1;
    }
    else if (!urn && !bare && n - at >= 3 && s[at] == '%' && s[at + 1] == '2' &&
             lower(s[at + 2]) == 'f') {
        at += 3;
    }
    else {
        return 0;
    }
    out[written++] = '/';
    if (at == n) {
        return 0; /* no suffix */
    }
    if (bare) {
        for (size_t i = at; i < n; i++) {
            if (s[i] < ' ' || s[i] > '~' || s[i] == '%') {
                return 0;
            }
            out[written++] = s[i];
        }
        if (s[n - 1] == ' ' || s[n - 1] == '/') {
            return 0;
        }
    }
    else {
        for (size_t i = at; i < n; i++) {
            if (s[i] <= ' ' || s[i] > '~' || s[i] == '#' || s[i] == '?') {
                return 0;
            }
        }
        for (size_t i = at; i < n; i++) {
            int c = s[i];
            if (c == '%') {
                if (n - i < 3 || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0) {
                    return 0;
                }
                c = 16 * hex(s[i + 1]) + hex(s[i + 2]);
                if (c < ' ' || c > '~') {
                    return 0;
                }
                i += 2;
            }
            out[written++] = (unsigned char)c;
        }
    }
    if (key) {
        for (size_t i = 0; i < written; i++) {
            out[i] = (unsigned char)lower(out[i]);
        }
    }
    *length = written;
    return 1;
}

int
oracle_read(const char *const *hosts, size_t host_count, const unsigned char *s, size_t n,
            int key, unsigned char *out, size_t *length)
{
    if (starts(s, n, 0, "10.", 3)) {
        return name_at(s, n, 0, 1, 0, key, out, length);
    }
    if (host_count > 16) {
        abort();
    }
    /* every head as a string, tried one by one: at most one can lead to a name */
    char heads[64][128];
    int urns[64];
    size_t count = 0;
    const char *fixed[] = {"doi: ", "doi:", "doi ", "info:doi/", "hdl:", "urn:doi:"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        strcpy(heads[count], fixed[i]);
        urns[count++] = strcmp(fixed[i], "urn:doi:") == 0;
    }
    const char *schemes[] = {"https://", "http://", ""};
    for (size_t h = 0; h < host_count; h++) {
        for (size_t i = 0; i < 3; i++) {
            strcpy(heads[count], schemes[i]);
            strcat(heads[count], hosts[h]);
            strcat(heads[count], "/");
            urns[count++] = 0;
        }
    }
    unsigned char *reading = malloc(n + 1);
    if (reading == NULL) {
        abort();
    }
    int decided = 0;
    for (size_t i = 0; i < count; i++) {
        size_t head = strlen(heads[i]), got;
        if (starts(s, n, 0, heads[i], head) &&
            name_at(s, n, head, 0, urns[i], key, reading, &got)) {
            if (decided) {
                abort(); /* two heads, two readings: the oracle is wrong */
            }
            decided = 1;
            memcpy(out, reading, got);
            *length = got;
        }
    }
    free(reading);
    return decided;
}
