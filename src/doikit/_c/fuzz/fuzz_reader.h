/* The check the fuzz target runs on each input (fuzz_reader.c). */
#ifndef DOIKIT_FUZZ_READER_H
#define DOIKIT_FUZZ_READER_H

#include <stddef.h>
#include <stdio.h>

/* Hold the reader to its oracle on s[0:n] (abort() where they differ): 1 when it decides,
 * else 0. With *print*, one line: the name and the key, tab-separated, or '-'. */
int check_reader(const unsigned char *s, size_t n, FILE *print);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#endif
