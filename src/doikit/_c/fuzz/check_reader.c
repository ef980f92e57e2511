/* The fuzz target's check without libFuzzer, for any C compiler (tests/test_speedups_reader.py
 * builds and runs it):
 *
 *   check_reader [-p] FILE...      each file one input (a libFuzzer corpus, crash files)
 *   check_reader [-p] -l FILE...   each line of each file one input (no '\n' in any)
 *
 * With -p, one line per input: its name and key, tab-separated, or '-' where the reader
 * leaves it undecided. Each input is held to the oracle, and dk_quick_read (the one pass) to
 * dk_quick_shape + dk_quick_copy: same decision, same bytes. Exits 0 when every input passed;
 * aborts at the first that does not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_reader.h"

static unsigned char *
read_all(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        perror(path);
        exit(2);
    }
    size_t room = 4096, used = 0;
    unsigned char *bytes = malloc(room);
    size_t got;
    while (bytes != NULL && (got = fread(bytes + used, 1, room - used, file)) > 0) {
        used += got;
        if (used == room) {
            room *= 2;
            bytes = realloc(bytes, room);
        }
    }
    fclose(file);
    if (bytes == NULL) {
        fputs("out of memory\n", stderr);
        exit(2);
    }
    *size = used;
    return bytes;
}

/* s[0:n] exactly, in a block of its own (so that AddressSanitizer sees an overread). */
static int
check_exactly(const unsigned char *s, size_t n, FILE *print)
{
    unsigned char *copy = malloc(n > 0 ? n : 1);
    memcpy(copy, s, n);
    int decided = check_reader(copy, n, print);
    free(copy);
    return decided;
}

int
main(int argc, char **argv)
{
    int lines = 0;
    FILE *print = NULL;
    size_t inputs = 0, decided = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-l") == 0) {
            lines = 1;
            continue;
        }
        if (strcmp(argv[i], "-p") == 0) {
            print = stdout;
            continue;
        }
        size_t size;
        unsigned char *bytes = read_all(argv[i], &size);
        if (!lines) {
            decided += (size_t)check_exactly(bytes, size, print);
            inputs++;
        }
        else {
            size_t start = 0;
            for (size_t at = 0; at <= size; at++) {
                if (at == size || bytes[at] == '\n') {
                    if (at > start || at < size) {
                        decided += (size_t)check_exactly(bytes + start, at - start, print);
                        inputs++;
                    }
                    start = at + 1;
                }
            }
        }
        free(bytes);
    }
    fprintf(stderr,
            "check_reader: %zu inputs, %zu decided, reader and oracle agree, "
            "dk_quick_read and dk_quick_shape + dk_quick_copy too\n",
            inputs, decided);
    return 0;
}
