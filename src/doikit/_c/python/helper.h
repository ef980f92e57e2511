/* The bulk loop's helper thread (issue 15), as bulk.c drives it (helper.c runs it).
 *
 * The answers' strings must be made holding the GIL, one after another; reading the texts
 * need not be. So for a long list or tuple a helper thread reads the texts of the chunk
 * ahead (the C reader, into a buffer of its own) while the calling thread makes the strings
 * of the chunk it read before: two cores share the work, the answers are the same. The
 * helper reads only while the calling thread runs C code that neither changes the list
 * nor frees anything in it: a text that needs the Python parser (whose Python code may let
 * another thread change the list) is set aside and read after the loop, once the helper
 * has stopped and been joined (bulk.c). An answer is taken from the
 * helper only for the very object it read at that place. POSIX threads only, and not in
 * free-threaded builds (where no GIL keeps the list still while the helper reads it);
 * elsewhere, or with one CPU to run on, one thread reads (DK_HELPER is not defined).
 */
#ifndef DOIKIT_HELPER_H
#define DOIKIT_HELPER_H

#include "speedups.h"

#if defined(_MSC_VER)
#define PREFETCH(address) ((void)(address))
#else
#define PREFETCH(address) __builtin_prefetch(address)
#endif

/* Fetch the item AHEAD places after item *i* of *items* (up to *end*) into the cache, its
 * header and the start of its text: each is an object of its own, wherever the allocator
 * put it. */
enum { AHEAD = 16 };
static inline void
prefetch_item(PyObject *const *items, Py_ssize_t i, Py_ssize_t end)
{
    if (i + AHEAD < end) {
        const char *ahead = (const char *)items[i + AHEAD];
        PREFETCH(ahead);
        PREFETCH(ahead + 64);
    }
}

#if (defined(__unix__) || defined(__APPLE__)) && !defined(Py_GIL_DISABLED)
#include <pthread.h>
#define DK_HELPER 1
#define BLOCK_ITEMS 256
#define BLOCKS 16 /* a chunk's */
#define CHUNK_ITEMS (BLOCKS * BLOCK_ITEMS)
#define BLOCK_BYTES (BLOCK_ITEMS * 64)
#define HELPER_AT_LEAST (4 * CHUNK_ITEMS) /* items: a shorter list is read by one thread */
#define HELPER_STARTS 64                  /* tries at most, per call */

enum { UNREAD = 0, ITSELF = 1, MADE = 2 };

/* A chunk's reading, shared: either thread claims its blocks, one at a time, in order
 * (this one does while it would otherwise wait for the block it needs next), and this one
 * takes each block's answers as soon as the block is read. A block's MADE answers are
 * written one after another from the start of the block's part of *bytes*. */
typedef struct {
    Py_ssize_t tag;      /* the chunk being read here (atomic; -1: none yet) */
    int claimed;         /* blocks claimed (atomic) */
    int ready[BLOCKS];   /* whether each block is read (atomic; valid once tag is seen) */
    PyObject *seen[CHUNK_ITEMS]; /* the object read at each place (NULL: none) */
    uint32_t end[CHUNK_ITEMS];   /* where each MADE answer ends in its block's bytes */
    unsigned char how[CHUNK_ITEMS];
    Py_UCS1 bytes[BLOCKS * BLOCK_BYTES];
} DkSlot;

typedef struct {
    PyObject *texts;    /* the list or tuple */
    Py_ssize_t size;    /* its size when the helper started: its chunks are [0, size) */
    Py_ssize_t first;   /* the helper's first chunk */
    Py_ssize_t allowed; /* it may start the chunks before this one */
    int key, stop, running;
    pthread_t thread;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    DkSlot slots[2]; /* chunk k in slots[k % 2] */
} DkHelper;

/* Whether this process may run on two CPUs or more. */
int dk_two_cpus(void);
/* Start a helper at chunk *first* of *texts* (0 if none could start: one thread reads). */
int dk_helper_start(DkHelper *r, PyObject *texts, int key, Py_ssize_t first);
/* Stop the helper and wait for it to end. */
void dk_helper_stop(DkHelper *r);
/* The slot of chunk *chunk*, as the calling thread starts it: the helper may go on to the
 * next chunk. NULL when the helper does not read this one. */
DkSlot *dk_helper_slot(DkHelper *r, Py_ssize_t chunk);
/* Wait until block *block* of *chunk* is read, reading blocks of it not yet claimed
 * meanwhile. */
void dk_helper_block(DkHelper *r, DkSlot *slot, Py_ssize_t chunk, int block);
#endif /* DK_HELPER */

#endif
