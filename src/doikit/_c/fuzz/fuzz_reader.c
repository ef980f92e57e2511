/* The libFuzzer target of the C reader (lib/reader.c), against its oracle (oracle.c).
 *
 * For any bytes, with keys and without: the reader decides exactly when the oracle does,
 * and then writes the oracle's name; it reads no byte outside the text and writes none
 * outside the name's room (AddressSanitizer's part); a bare name without an ASCII capital
 * is its own key (the Python side hands back the text itself then). And dk_quick_read, the
 * one pass, answers as dk_quick_shape + dk_quick_copy do: the same decision, the same shape,
 * the same bytes written (every one of them: its buffer starts as zeros, which no name holds),
 * none outside its n bytes of room. run.sh builds and runs it; check_reader.c runs the same
 * check on given inputs with any C compiler.
 */
#include "fuzz_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "reader.h"

/* doikit._syntax.RESOLVER_HOSTS, one in capitals: dk_hosts_set lower-cases them */
static const char *const HOSTS[] = {"doi.org", "DX.DOI.ORG", "www.doi.org", "hdl.handle.net"};
enum { HOST_COUNT = sizeof HOSTS / sizeof *HOSTS };

static void
fail(const char *what, const unsigned char *s, size_t n)
{
    fprintf(stderr, "check_reader failed (%s) on %zu bytes:", what, n);
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, " %02x", s[i]);
    }
    fprintf(stderr, "\n");
    abort();
}

/* dk_quick_read against dk_quick_shape + dk_quick_copy, which answered *copied* (with
 * *shape* and *name* where it decided) on s[0:n]. */
static void
check_one_pass(const DkHosts *hosts, const unsigned char *s, size_t n, int key, int copied,
               const DkShape *shape, const unsigned char *name)
{
    /* exactly the room dk_quick_read asks for, n bytes, so that AddressSanitizer sees any
     * overrun; zeros, so that a byte left unwritten shows */
    unsigned char *out = calloc(n > 0 ? n : 1, 1);
    DkShape read_shape;
    int read = dk_quick_read(hosts, s, (dk_size)n, key, out, &read_shape);
    if (read != copied) {
        fail(read ? "dk_quick_read decided, shape + copy not"
                  : "shape + copy decided, dk_quick_read not", s, n);
    }
    if (read) {
        if (read_shape.start != shape->start || read_shape.prefix_end != shape->prefix_end ||
            read_shape.suffix != shape->suffix || read_shape.length != shape->length ||
            read_shape.urn != shape->urn || read_shape.bare != shape->bare ||
            read_shape.escapes != shape->escapes || read_shape.upper != shape->upper) {
            fail("dk_quick_read's shape", s, n);
        }
        if (memcmp(out, name, (size_t)shape->length) != 0) {
            fail(key ? "dk_quick_read's key" : "dk_quick_read's name", s, n);
        }
    }
    free(out);
}

static void
print_bytes(FILE *out, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputc(s[i], out); /* (decided names are printable ASCII: no tab, no newline) */
    }
}

int
check_reader(const unsigned char *s, size_t n, FILE *print)
{
    static DkHosts hosts;
    static int ready;
    if (!ready) {
        dk_size sizes[HOST_COUNT];
        for (int i = 0; i < HOST_COUNT; i++) {
            sizes[i] = (dk_size)strlen(HOSTS[i]);
        }
        if (dk_hosts_set(&hosts, HOSTS, sizes, HOST_COUNT) != 0) {
            abort();
        }
        ready = 1;
    }
    int decided = -1;
    for (int key = 0; key <= 1; key++) {
        unsigned char *expected = malloc(n + 1);
        size_t expected_length = 0;
        int oracle = oracle_read((const char *const *)HOSTS, HOST_COUNT, s, n, key, expected,
                                 &expected_length);
        DkShape shape;
        int reader = dk_quick_shape(&hosts, s, (dk_size)n, &shape);
        unsigned char *name = NULL;
        if (reader) {
            /* exactly the room the name needs, so that AddressSanitizer sees any overrun */
            name = malloc(shape.length > 0 ? (size_t)shape.length : 1);
            reader = dk_quick_copy(s, (dk_size)n, &shape, key, name) == 0;
        }
        if (reader != oracle) {
            fail(reader ? "decided, oracle not" : "oracle decided, reader not", s, n);
        }
        check_one_pass(&hosts, s, n, key, reader, &shape, name);
        if (reader) {
            if ((size_t)shape.length != expected_length ||
                memcmp(name, expected, expected_length) != 0) {
                fail(key ? "key" : "name", s, n);
            }
            int capital = 0;
            for (size_t i = 0; i < n; i++) {
                capital |= s[i] >= 'A' && s[i] <= 'Z';
            }
            if (shape.bare && shape.upper != capital) {
                fail("a bare name's capitals", s, n);
            }
            if (shape.bare && !(key && capital) && (expected_length != n ||
                                                    memcmp(name, s, n) != 0)) {
                fail("a bare name is not itself", s, n);
            }
            if (print != NULL) {
                fputs(key ? "\t" : "", print);
                print_bytes(print, name, expected_length);
            }
        }
        decided = reader;
        free(name);
        free(expected);
    }
    if (print != NULL) {
        fputs(decided ? "\n" : "-\n", print);
    }
    return decided;
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    check_reader(data, size, NULL);
    return 0;
}
