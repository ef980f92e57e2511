/* The reader's oracle: what lib/reader.c decides, written the obvious way. */
#ifndef DOIKIT_ORACLE_H
#define DOIKIT_ORACLE_H

#include <stddef.h>

/* Whether s[0:n] is decided (1) or not (0); when it is, its name (or with *key* its key)
 * is written to *out* (room for n bytes) and its length to *length*. *hosts* are the
 * resolvers' hosts, without their '/', in any ASCII case. */
int oracle_read(const char *const *hosts, size_t host_count, const unsigned char *s, size_t n,
                int key, unsigned char *out, size_t *length);

#endif
