/* The C reader of DOI presentations: bytes in, a decision out. No Python.h.
 *
 * It reads the common shapes of doikit._present._QUICK in ASCII text, escapes included,
 * in one pass: a bare name, or a head and a name (see dk_quick_shape). It decides only a
 * strict subset of what _QUICK decides, and only when the answer is sure; anything else is
 * left undecided, for the compiled pattern and the Python parser (python/state.c).
 * Any byte outside ASCII leaves a text undecided, so UTF-8 can be read as it is.
 *
 * Its callers: DOI(), parse() and normalize() (python/state.c), the bulk loop and its
 * helper thread (bulk.c, helper.c) and the Arrow reader (arrow.c); on its own, the libFuzzer
 * target and the plain C check in fuzz/.
 */
#ifndef DOIKIT_READER_H
#define DOIKIT_READER_H

#include <stddef.h>
#include <stdint.h>

/* Sizes and positions: ptrdiff_t, which is Py_ssize_t's size wherever CPython runs. */
typedef ptrdiff_t dk_size;

/* The resolvers' hosts, lower-case, each with its '/' (doikit._syntax.RESOLVER_HOSTS). */
#define DK_MAX_HOSTS 16
#define DK_MAX_HOST 64
typedef struct {
    char host[DK_MAX_HOSTS][DK_MAX_HOST];
    dk_size length[DK_MAX_HOSTS]; /* each host's, with its '/' */
    dk_size count;
} DkHosts;

/* Set *hosts* to the *count* hosts of *names* (of *sizes* bytes each), lower-casing ASCII:
 * 0, or -1 (nothing changed) when there are more than DK_MAX_HOSTS or one is longer than
 * DK_MAX_HOST - 2 bytes. */
int dk_hosts_set(DkHosts *hosts, const char *const *names, const dk_size *sizes,
                 dk_size count);

/* A text of one of _QUICK's shapes, as dk_quick_shape() reads it: where the name starts
 * (after the head), where its prefix ends and its suffix starts, and what it is. */
typedef struct {
    dk_size start, prefix_end, suffix;
    dk_size length; /* the name's, escapes decoded */
    int urn, bare, escapes;
    int upper; /* whether the suffix as written has an ASCII capital */
} DkShape;

/* Whether the bytes s[0:n] have one of _QUICK's shapes this decides (then *shape* says
 * which): a bare name of printable ASCII without '%' (not ending in ' ' or '/'), or a head
 * and a name of printable ASCII without ' ', '#' or '?', escapes allowed. The heads, ASCII
 * case ignored: a resolver's URL with or without http(s)://, 'doi:', 'doi: ', 'doi ',
 * 'info:doi/', 'hdl:' and 'urn:doi:'. */
int dk_quick_shape(const DkHosts *hosts, const unsigned char *s, dk_size n, DkShape *shape);

/* Write the name of s[0:n], a text of *shape*, into *out* (room for shape->length bytes),
 * or with *key* its key (ASCII letters lower-cased): a URN's ':' becomes the '/' it stands
 * for, escapes are decoded. 0, or -1 when an escape is not two hex digits for a printable
 * ASCII character (the Python parser then decides). */
int dk_quick_copy(const unsigned char *s, dk_size n, const DkShape *shape, int key,
                  unsigned char *out);

/* dk_quick_shape and dk_quick_copy in one pass where the name holds no escape: whether
 * s[0:n] has one of the shapes decided (then *shape* says which) and its name (or with *key*
 * its key) is written at *out*, shape->length bytes. *out* needs room for n bytes: what it
 * holds after an answer of 0 is no name. */
int dk_quick_read(const DkHosts *hosts, const unsigned char *s, dk_size n, int key,
                  unsigned char *out, DkShape *shape);

/* Whether the bytes s[0:n] surely hold no DOI name in any presentation: a prefix alone
 * ("10.1038", "10.1000/": no suffix), or ASCII with neither a '%' nor "10.". Every name
 * starts with "10." (its directory indicator and the dot), which a presentation writes as it
 * is unless it escapes it; the Python parser would raise InvalidDOI for such a text, so a
 * caller that answers None for that can answer at once. */
int dk_surely_no_name(const unsigned char *s, dk_size n);

#endif
