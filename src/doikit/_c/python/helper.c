/* The bulk loop's helper thread and the atomics it shares with the calling thread: see
 * helper.h for why and when it runs. */
#include "helper.h"

#ifdef DK_HELPER
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#endif

int
dk_two_cpus(void)
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        return CPU_COUNT(&set) >= 2;
    }
#endif
    return sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

/* Read block *block* of chunk *chunk*: what the C reader decides of each text. */
static void
read_block(DkHelper *r, DkSlot *slot, Py_ssize_t chunk, int block)
{
    Py_ssize_t begin = chunk * CHUNK_ITEMS + block * BLOCK_ITEMS;
    Py_ssize_t end = Py_MIN(Py_MIN(begin + BLOCK_ITEMS, r->size), Py_SIZE(r->texts));
    PyObject **items = PySequence_Fast_ITEMS(r->texts);
    Py_UCS1 *bytes = slot->bytes + (size_t)block * BLOCK_BYTES;
    Py_ssize_t used = 0, j = (Py_ssize_t)block * BLOCK_ITEMS;
    for (Py_ssize_t i = begin; i < end; i++, j++) {
        prefetch_item(items, i, end);
        PyObject *item = items[i];
        slot->seen[j] = item;
        slot->how[j] = UNREAD;
        if (!PyUnicode_CheckExact(item) || !PyUnicode_IS_ASCII(item)) {
            continue;
        }
        const Py_UCS1 *s = PyUnicode_1BYTE_DATA(item);
        Py_ssize_t n = PyUnicode_GET_LENGTH(item);
        DkShape shape;
        if (!dk_quick_shape(&dk_config.hosts, s, n, &shape)) {
            continue;
        }
        if (shape.bare && !(r->key && shape.upper)) {
            slot->how[j] = ITSELF;
        }
        else if (shape.length <= BLOCK_BYTES - used &&
                 dk_quick_copy(s, n, &shape, r->key, bytes + used) == 0) {
            used += shape.length;
            slot->end[j] = (uint32_t)used;
            slot->how[j] = MADE;
        }
    }
    for (; j < (Py_ssize_t)(block + 1) * BLOCK_ITEMS; j++) {
        slot->seen[j] = NULL;
        slot->how[j] = UNREAD;
    }
}

/* Claim and read one block of *chunk* in *slot*: 0 when none was left to claim. */
static int
read_one(DkHelper *r, DkSlot *slot, Py_ssize_t chunk)
{
    int block = __atomic_fetch_add(&slot->claimed, 1, __ATOMIC_ACQ_REL);
    if (block >= BLOCKS) {
        return 0;
    }
    read_block(r, slot, chunk, block);
    __atomic_store_n(&slot->ready[block], 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&r->mutex); /* (for a thread waiting for it) */
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->mutex);
    return 1;
}

static void *
helper_main(void *arg)
{
    DkHelper *r = arg;
    Py_ssize_t chunks = (r->size + CHUNK_ITEMS - 1) / CHUNK_ITEMS;
    for (Py_ssize_t chunk = r->first; chunk < chunks; chunk++) {
        DkSlot *slot = &r->slots[chunk % 2];
        pthread_mutex_lock(&r->mutex);
        while (chunk >= r->allowed && !r->stop) {
            pthread_cond_wait(&r->cond, &r->mutex);
        }
        int stop = r->stop;
        if (!stop) { /* open the chunk: from now on either thread may read its blocks */
            slot->claimed = 0;
            for (int block = 0; block < BLOCKS; block++) {
                slot->ready[block] = 0;
            }
            __atomic_store_n(&slot->tag, chunk, __ATOMIC_RELEASE);
            pthread_cond_broadcast(&r->cond);
        }
        pthread_mutex_unlock(&r->mutex);
        if (stop) {
            break;
        }
        while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED) && read_one(r, slot, chunk)) {
        }
    }
    return NULL;
}

int
dk_helper_start(DkHelper *r, PyObject *texts, int key, Py_ssize_t first)
{
    r->texts = texts;
    r->size = Py_SIZE(texts);
    r->first = first;
    r->allowed = first + 2;
    r->key = key;
    r->stop = 0;
    for (int k = 0; k < 2; k++) {
        r->slots[k].tag = -1;
    }
    r->running = pthread_create(&r->thread, NULL, helper_main, r) == 0;
    return r->running;
}

void
dk_helper_stop(DkHelper *r)
{
    if (!r->running) {
        return;
    }
    pthread_mutex_lock(&r->mutex);
    __atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->mutex);
    pthread_join(r->thread, NULL);
    r->running = 0;
}

DkSlot *
dk_helper_slot(DkHelper *r, Py_ssize_t chunk)
{
    if (!r->running || chunk < r->first) {
        return NULL;
    }
    pthread_mutex_lock(&r->mutex);
    if (r->allowed < chunk + 2) {
        r->allowed = chunk + 2;
        pthread_cond_broadcast(&r->cond);
    }
    pthread_mutex_unlock(&r->mutex);
    return &r->slots[chunk % 2];
}

void
dk_helper_block(DkHelper *r, DkSlot *slot, Py_ssize_t chunk, int block)
{
    for (;;) {
        if (__atomic_load_n(&slot->tag, __ATOMIC_ACQUIRE) == chunk) {
            if (__atomic_load_n(&slot->ready[block], __ATOMIC_ACQUIRE)) {
                return;
            }
            if (read_one(r, slot, chunk)) {
                continue;
            }
        }
        pthread_mutex_lock(&r->mutex); /* nothing to claim: wait for the block */
        while (!(__atomic_load_n(&slot->tag, __ATOMIC_ACQUIRE) == chunk &&
                 (__atomic_load_n(&slot->ready[block], __ATOMIC_ACQUIRE) ||
                  __atomic_load_n(&slot->claimed, __ATOMIC_ACQUIRE) < BLOCKS))) {
            pthread_cond_wait(&r->cond, &r->mutex);
        }
        pthread_mutex_unlock(&r->mutex);
    }
}
#endif /* DK_HELPER */
