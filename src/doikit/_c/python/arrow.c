/* The Arrow reader: arrow_many reads the buffers of an Arrow string array and writes those
 * of the answer column, with no Python string per name; the texts the C reader decides are
 * read without the GIL. doikit.arrow calls it. */
#include "speedups.h"

#if defined(__linux__)
#include <sys/mman.h> /* madvise */
#endif

/* Ask for huge pages under a large answer buffer about to be written (Linux, where
 * transparent huge pages are on "madvise"): one fault per 2 MiB instead of one per 4 KiB,
 * which was a quarter of the time for a column of a million names. Only a hint. */
static void
huge_pages(char *start, Py_ssize_t size)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t from = ((uintptr_t)start + huge - 1) & ~(huge - 1);
    uintptr_t to = ((uintptr_t)start + (uintptr_t)size) & ~(huge - 1);
    if (size >= 4 * (Py_ssize_t)huge && to > from) {
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE);
    }
#else
    (void)start;
    (void)size;
#endif
}

/* Room for *more* bytes at *used* in the growing bytes object *data* (a new reference, of
 * *room* bytes, resized to what it holds at the end: the answer is written where it is
 * returned, never copied). */
static int
grow(PyObject **data, Py_ssize_t *room, Py_ssize_t used, Py_ssize_t more)
{
    if (used + more <= *room) {
        return 1;
    }
    Py_ssize_t wanted = (*room + more) * 2;
    if (_PyBytes_Resize(data, wanted) < 0) {
        return 0;
    }
    *room = wanted;
    return 1;
}

/* The name (or with *key* the key) of the UTF-8 text s[0:n] by the Python parser: appended
 * at *used*; 0 when it is no DOI (the error cleared), -1 on another error. */
static int
slow_into(const char *s, Py_ssize_t n, int key, PyObject **data, Py_ssize_t *room,
          Py_ssize_t *used)
{
    PyObject *text = PyUnicode_DecodeUTF8(s, n, "strict");
    if (text == NULL) {
        return -1;
    }
    /* (the C reader has had its say on these bytes: straight to the pattern) */
    PyObject *answer = key ? dk_pattern_key(text) : dk_pattern_name(text);
    Py_DECREF(text);
    if (answer == NULL) {
        if (PyErr_ExceptionMatches(dk_config.invalid_doi)) {
            PyErr_Clear();
            return 0;
        }
        return -1;
    }
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(answer, &size);
    int done = utf8 != NULL && grow(data, room, *used, size);
    if (done) {
        memcpy(PyBytes_AS_STRING(*data) + *used, utf8, (size_t)size);
        *used += size;
    }
    Py_DECREF(answer);
    return done ? 1 : -1;
}

/* Entry *j* of an Arrow offsets buffer: 64-bit when *wide*, else 32-bit. */
static inline int64_t
offset_at(const char *offsets, Py_ssize_t j, int wide)
{
    if (wide) {
        int64_t value;
        memcpy(&value, offsets + 8 * j, 8);
        return value;
    }
    int32_t value;
    memcpy(&value, offsets + 4 * j, 4);
    return value;
}

/* Set entry *j* of an Arrow offsets buffer (the caller has checked that a 32-bit one holds
 * *value*). */
static inline void
set_offset(char *offsets, Py_ssize_t j, int wide, int64_t value)
{
    if (wide) {
        memcpy(offsets + 8 * j, &value, 8);
    }
    else {
        int32_t narrow = (int32_t)value;
        memcpy(offsets + 4 * j, &narrow, 4);
    }
}

/* The answers of the texts arrow_many() set aside (their indexes in *aside*, ascending), read
 * by the Python parser with the GIL, put in their places in *data* (a bytes object of *used*
 * bytes, grown where it must be) and *ends*, with their validity bits and the null count.
 * The answers before the first text set aside stay where they are; those after it move
 * right in place, one stretch between two texts set aside at a time, from the last. 0, or -1
 * with an exception. */
static int
put_aside_back(const Py_ssize_t *aside, Py_ssize_t set_aside, const Py_buffer *offsets,
               const Py_buffer *data, Py_ssize_t offset, Py_ssize_t length, int wide, int key,
               PyObject **out_data, Py_ssize_t *used, char *ends, unsigned char *bits,
               Py_ssize_t *nulls)
{
    /* the answers, one after the other, in *extra*; each one's end in *extra_ends* */
    Py_ssize_t extra_room = 256, extra_used = 0;
    PyObject *extra = PyBytes_FromStringAndSize(NULL, extra_room);
    Py_ssize_t *extra_ends = PyMem_Malloc((size_t)set_aside * sizeof *extra_ends);
    int *found = PyMem_Malloc((size_t)set_aside * sizeof *found);
    int status = -1;
    if (extra == NULL || extra_ends == NULL || found == NULL) {
        if (extra != NULL) {
            PyErr_NoMemory();
        }
        goto out;
    }
    for (Py_ssize_t k = 0; k < set_aside; k++) {
        Py_ssize_t j = offset + aside[k];
        int64_t from = offset_at(offsets->buf, j, wide);
        int64_t to = offset_at(offsets->buf, j + 1, wide);
        found[k] = slow_into((const char *)data->buf + from, (Py_ssize_t)(to - from), key,
                             &extra, &extra_room, &extra_used);
        if (found[k] < 0) {
            goto out;
        }
        extra_ends[k] = extra_used;
    }
    Py_ssize_t total = *used + extra_used;
    if (!wide && total > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "over 2 GiB of names in one chunk");
        goto out;
    }
    if (total > PyBytes_GET_SIZE(*out_data) && _PyBytes_Resize(out_data, total) < 0) {
        goto out;
    }
    char *bytes = PyBytes_AS_STRING(*out_data);
    const char *new_bytes = PyBytes_AS_STRING(extra);
    /* Stretch k: item aside[k] (empty until now) and the items after it up to the next set
     * aside; its answers move right by the lengths of answers 0..k. */
    Py_ssize_t stretch_end = *used; /* (old positions) */
    for (Py_ssize_t k = set_aside - 1; k >= 0; k--) {
        Py_ssize_t i = aside[k], last = k + 1 < set_aside ? aside[k + 1] : length;
        Py_ssize_t before = k ? extra_ends[k - 1] : 0, shift = extra_ends[k];
        Py_ssize_t at = (Py_ssize_t)offset_at(ends, i, wide); /* where item i's answer goes */
        memmove(bytes + at + shift, bytes + at, (size_t)(stretch_end - at));
        memcpy(bytes + at + before, new_bytes + before, (size_t)(shift - before));
        for (Py_ssize_t e = i + 1; e <= last; e++) {
            set_offset(ends, e, wide, offset_at(ends, e, wide) + shift);
        }
        if (found[k]) {
            bits[i / 8] |= (unsigned char)(1 << (i % 8));
        }
        else {
            (*nulls)++;
        }
        stretch_end = at;
    }
    *used = total;
    status = 0;
out:
    Py_XDECREF(extra);
    PyMem_Free(extra_ends);
    PyMem_Free(found);
    return status;
}

/* arrow_many(validity, offsets, data, offset, length, wide, key): the names (or keys) of an
 * Arrow string array given as its buffers (validity may be None; 32-bit offsets, or 64-bit
 * when *wide*), as the buffers of a new one: (validity, offsets, data, null count). A null
 * text, or one that is no DOI, is null. ASCII texts of the common shapes are read here, and
 * ASCII texts that surely hold no name (dk_surely_no_name) are null at once; the others are
 * read by the Python parser, one by one. */
PyObject *
dk_arrow_many(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *validity_object;
    Py_buffer offsets, data;
    Py_ssize_t offset, length;
    int wide, key;
    if (!dk_configured() || !PyArg_ParseTuple(args, "Oy*y*nnpp", &validity_object, &offsets,
                                           &data, &offset, &length, &wide, &key)) {
        return NULL;
    }
    Py_buffer validity = {0};
    PyObject *result = NULL;
    PyObject *out_data = NULL, *out_validity = NULL, *out_offsets = NULL;
    Py_ssize_t width = wide ? 8 : 4;
    if (validity_object != Py_None &&
        PyObject_GetBuffer(validity_object, &validity, PyBUF_SIMPLE) < 0) {
        goto done;
    }
    /* (compared without overflow: offset and length come from the caller; once the offsets
     * hold offset + length + 1 entries, offset + length is a size that fits) */
    if (offset < 0 || length < 0 || offsets.len / width < 1 ||
        offset > offsets.len / width - 1 - length ||
        (validity.buf != NULL && (offset + length + 7) / 8 > validity.len)) {
        PyErr_SetString(PyExc_ValueError, "the buffers are too short for the array");
        goto done;
    }
    out_validity = PyBytes_FromStringAndSize(NULL, (length + 7) / 8);
    out_offsets = PyBytes_FromStringAndSize(NULL, (length + 1) * width);
    /* room for the slice's own text (an answer is never longer than its text) */
    int64_t first_end = offset_at(offsets.buf, offset, wide);
    int64_t last_end = offset_at(offsets.buf, offset + length, wide);
    Py_ssize_t span =
        last_end > first_end && last_end <= data.len ? (Py_ssize_t)(last_end - first_end) : 0;
    Py_ssize_t room = span + 64, used = 0, nulls = 0;
    out_data = PyBytes_FromStringAndSize(NULL, room);
    if (out_validity == NULL || out_offsets == NULL || out_data == NULL) {
        goto done;
    }
    huge_pages(PyBytes_AS_STRING(out_data), room);
    huge_pages(PyBytes_AS_STRING(out_offsets), (length + 1) * width);
    unsigned char *bits = (unsigned char *)PyBytes_AS_STRING(out_validity);
    memset(bits, 0, (size_t)((length + 7) / 8));
    char *ends = PyBytes_AS_STRING(out_offsets);
    const unsigned char *in_bits = validity.buf;
    const char *chars = data.buf;
    Py_UCS1 *out = (Py_UCS1 *)PyBytes_AS_STRING(out_data);
    memset(ends, 0, (size_t)width);
    /* The texts the C reader decides are read without the GIL, so that other threads (a
     * database's, calling this once per vector) run meanwhile; the others are set aside,
     * answered empty for now, and read by the Python parser afterwards (put_aside_back). */
    Py_ssize_t *aside = NULL, set_aside = 0, aside_room = 0;
    int failure = 0; /* 1: an offset outside the data, 2: over 2 GiB of names, 3: memory */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_ssize_t j = offset + i;
        if (in_bits != NULL && !(in_bits[j / 8] >> (j % 8) & 1)) {
            nulls++;
        }
        else {
            int64_t from = offset_at(offsets.buf, j, wide);
            int64_t to = offset_at(offsets.buf, j + 1, wide);
            if (from < 0 || to < from || to > data.len) {
                failure = 1;
                break;
            }
            const Py_UCS1 *text = (const Py_UCS1 *)chars + from;
            Py_ssize_t n = (Py_ssize_t)(to - from), written = -1;
            DkShape shape;
            /* (the reader writes at most the text's length; the room holds the slice's
             * texts, unless offsets overlap: then the text is set aside, where the buffer
             * grows) */
            if (n <= room - used &&
                dk_quick_read(&dk_config.hosts, text, n, key, out + used, &shape)) {
                written = shape.length;
            }
            if (written >= 0) {
                used += written;
                bits[i / 8] |= (unsigned char)(1 << (i % 8));
            }
            else if (dk_surely_no_name(text, n)) { /* junk: no DOI, without the parser */
                nulls++;
            }
            else {
                if (set_aside == aside_room) {
                    Py_ssize_t wanted = aside_room ? 2 * aside_room : 64;
                    Py_ssize_t *grown = PyMem_RawRealloc(aside, (size_t)wanted * sizeof *aside);
                    if (grown == NULL) {
                        failure = 3;
                        break;
                    }
                    aside = grown;
                    aside_room = wanted;
                }
                aside[set_aside++] = i;
            }
        }
        if (!wide && used > INT32_MAX) {
            failure = 2;
            break;
        }
        set_offset(ends, i + 1, wide, (int64_t)used); /* the end of item i */
    }
    Py_END_ALLOW_THREADS
    if (failure == 1) {
        PyErr_SetString(PyExc_ValueError, "an offset is outside the data");
    }
    else if (failure == 2) {
        PyErr_SetString(PyExc_OverflowError, "over 2 GiB of names in one chunk");
    }
    else if (failure == 3) {
        PyErr_NoMemory();
    }
    else if (set_aside == 0 ||
             put_aside_back(aside, set_aside, &offsets, &data, offset, length, wide, key,
                            &out_data, &used, ends, bits, &nulls) == 0) {
        failure = -1; /* done */
    }
    PyMem_RawFree(aside);
    if (failure != -1) {
        goto done;
    }
    if (_PyBytes_Resize(&out_data, used) == 0) {
        result = Py_BuildValue("(OOOn)", out_validity, out_offsets, out_data, nulls);
    }
done:
    Py_XDECREF(out_data);
    Py_XDECREF(out_validity);
    Py_XDECREF(out_offsets);
    if (validity.buf != NULL) {
        PyBuffer_Release(&validity);
    }
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    return result;
}
