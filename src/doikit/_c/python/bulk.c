/* The bulk loop: parse_many and normalize_many, one answer per item in one C loop (a long
 * list or tuple read with a helper thread: helper.h). */
#include "helper.h"

/* The InvalidDOI being raised, taken off the error indicator (a new reference). */
static PyObject *
take_raised(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    Py_XDECREF(type);
    Py_XDECREF(traceback);
    return value;
#endif
}

/* One answer of the bulk loop for *item*, the *index*th: see bulk(). */
static PyObject *
bulk_one(PyObject *item, Py_ssize_t index, int want_key, int report)
{
    if (item == Py_None) {
        return Py_NewRef(Py_None);
    }
    if (!PyUnicode_Check(item)) {
        PyErr_Format(PyExc_TypeError, "item %zd is a %.100s, not a str or None", index,
                     Py_TYPE(item)->tp_name);
        return NULL;
    }
    PyObject *answer = want_key ? dk_normalized(item) : dk_parse_name(item);
    if (answer == NULL && PyErr_ExceptionMatches(dk_config.invalid_doi)) {
        if (report) {
            return take_raised();
        }
        PyErr_Clear();
        return Py_NewRef(Py_None);
    }
    return answer;
}

/* Whether the quiet answer for *item* is None without the Python parser: an ASCII str that
 * surely holds no name (dk_surely_no_name: no '%' and no "10."), as junk in a column is. */
static inline int
surely_none(PyObject *item)
{
    return PyUnicode_CheckExact(item) && PyUnicode_IS_ASCII(item) &&
           dk_surely_no_name(PyUnicode_1BYTE_DATA(item), PyUnicode_GET_LENGTH(item));
}

/* The answers for a list or a tuple, read in place (with a helper where one can run; see
 * helper.h), the items ahead fetched into the cache while one is read. No Python code runs
 * in the loop: a text the C reader leaves undecided is set aside (its place holds it, its
 * index goes to *aside*) and read by the Python parser after the loop, once the helper has
 * stopped, as arrow_many does; so the list stays as it is while it is read, and one such
 * text does not stop the helper for the texts around it (issue 30). An item that is neither
 * a str nor None ends the loop; its TypeError is raised once the texts set aside before it
 * are read, so that an error among them comes first, as it did in order. */
static PyObject *
bulk_items(PyObject *texts, int want_key, int report)
{
    Py_ssize_t size = Py_SIZE(texts);
    PyObject *out = PyList_New(size);
    if (out == NULL) {
        return NULL;
    }
    /* Its places are empty until they are filled, and the Python parser may let another
     * thread look through the collector's objects meanwhile (gc.get_objects()): out of
     * the collector's sight until it is whole, as a tuple being built would be. */
    PyObject_GC_UnTrack(out);
    int failed = 0;
    Py_ssize_t *aside = NULL, set_aside = 0, aside_room = 0;
    PyObject *refused = NULL; /* the item that is neither a str nor None */
#ifdef DK_HELPER
    DkHelper *helper = NULL;
    DkSlot *slot = NULL;
    Py_ssize_t made = 0, starts = 0;
    if (size >= HELPER_AT_LEAST && dk_two_cpus()) {
        helper = PyMem_RawMalloc(sizeof *helper);
        if (helper != NULL && (pthread_mutex_init(&helper->mutex, NULL) != 0 ||
                               pthread_cond_init(&helper->cond, NULL) != 0)) {
            PyMem_RawFree(helper);
            helper = NULL;
        }
        if (helper != NULL) {
            helper->running = 0;
        }
    }
#endif
    Py_ssize_t index = 0;
    for (; index < size; index++) {
        PyObject **items = PySequence_Fast_ITEMS(texts);
        prefetch_item(items, index, size);
        PyObject *item = items[index];
        PyObject *answer = NULL;
#ifdef DK_HELPER
        Py_ssize_t j = index % CHUNK_ITEMS;
        if (helper != NULL && j == 0) {
            Py_ssize_t chunk = index / CHUNK_ITEMS;
            if (!helper->running && starts < HELPER_STARTS &&
                (chunk + 2) * CHUNK_ITEMS <= size) {
                starts += dk_helper_start(helper, texts, want_key, chunk + 1);
            }
            slot = index < helper->size ? dk_helper_slot(helper, chunk) : NULL;
        }
        if (j % BLOCK_ITEMS == 0) {
            made = 0; /* (a block's MADE answers start its part of the bytes) */
            if (slot != NULL) {
                dk_helper_block(helper, slot, index / CHUNK_ITEMS, (int)(j / BLOCK_ITEMS));
            }
        }
        if (slot != NULL && slot->how[j] == MADE) {
            Py_ssize_t from = made;
            made = slot->end[j];
            if (slot->seen[j] == item) {
                answer = PyUnicode_New(made - from, 127);
                if (answer == NULL) {
                    goto failed;
                }
                const Py_UCS1 *bytes = slot->bytes + (size_t)(j / BLOCK_ITEMS) * BLOCK_BYTES;
                memcpy(PyUnicode_1BYTE_DATA(answer), bytes + from, (size_t)(made - from));
            }
        }
        else if (slot != NULL && slot->how[j] == ITSELF && slot->seen[j] == item) {
            answer = Py_NewRef(item);
        }
#endif
        if (answer == NULL) {
            if (item == Py_None) {
                answer = Py_NewRef(Py_None);
            }
            else if (!PyUnicode_Check(item)) {
                refused = Py_NewRef(item);
                break;
            }
            else {
                answer = dk_quick_name(item, want_key); /* C only */
                if (answer == NULL && PyErr_Occurred()) {
                    goto failed;
                }
            }
        }
        if (answer == NULL && !report && surely_none(item)) {
            answer = Py_NewRef(Py_None);
        }
        if (answer == NULL) { /* for the Python parser, after the loop */
            if (set_aside == aside_room) {
                Py_ssize_t wanted = aside_room ? 2 * aside_room : 64;
                Py_ssize_t *grown = PyMem_Realloc(aside, (size_t)wanted * sizeof *aside);
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto failed;
                }
                aside = grown;
                aside_room = wanted;
            }
            aside[set_aside++] = index;
            answer = Py_NewRef(item);
        }
        PyList_SET_ITEM(out, index, answer);
    }
#ifdef DK_HELPER
    if (helper != NULL) { /* (before any Python code runs) */
        dk_helper_stop(helper);
    }
#endif
    for (Py_ssize_t k = 0; k < set_aside; k++) {
        PyObject *item = PyList_GET_ITEM(out, aside[k]); /* (the place's reference) */
        PyObject *answer = bulk_one(item, aside[k], want_key, report);
        if (answer == NULL) {
            goto failed;
        }
        PyList_SET_ITEM(out, aside[k], answer);
        Py_DECREF(item);
    }
    if (refused != NULL) {
        PyObject *answer = bulk_one(refused, index, want_key, report); /* the TypeError */
        assert(answer == NULL);
        Py_XDECREF(answer);
        goto failed;
    }
    goto done;
failed:
    failed = 1;
done:
#ifdef DK_HELPER
    if (helper != NULL) { /* (before the answers go: an InvalidDOI's release may run code) */
        dk_helper_stop(helper);
        pthread_cond_destroy(&helper->cond);
        pthread_mutex_destroy(&helper->mutex);
        PyMem_RawFree(helper);
    }
#endif
    PyMem_Free(aside);
    Py_XDECREF(refused);
    if (failed) {
        Py_CLEAR(out);
    }
    else {
        PyObject_GC_Track(out);
    }
    return out;
}

/* The answers for any other iterable. */
static PyObject *
bulk_iterated(PyObject *texts, int want_key, int report)
{
    PyObject *iterator = PyObject_GetIter(texts);
    if (iterator == NULL) {
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        Py_DECREF(iterator);
        return NULL;
    }
    Py_ssize_t index = 0;
    PyObject *item;
    while ((item = PyIter_Next(iterator)) != NULL) {
        PyObject *answer = bulk_one(item, index, want_key, report);
        Py_DECREF(item);
        if (answer == NULL || PyList_Append(out, answer) < 0) {
            Py_XDECREF(answer);
            Py_DECREF(out);
            Py_DECREF(iterator);
            return NULL;
        }
        Py_DECREF(answer);
        index++;
    }
    Py_DECREF(iterator);
    if (PyErr_Occurred()) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* parse_many / normalize_many: one answer per item of *texts*, in one C loop. None stays
 * None; a str is parsed (and with *want_key* keyed); an InvalidDOI becomes None, or with
 * *report* the exception itself; anything else is a TypeError naming the item. */
static PyObject *
bulk(PyObject *args, int want_key)
{
    PyObject *texts;
    int report;
    if (!dk_configured() || !PyArg_ParseTuple(args, "Op", &texts, &report)) {
        return NULL;
    }
#ifndef Py_GIL_DISABLED /* (there, only an iterator reads a list that others may change) */
    if (PyList_CheckExact(texts) || PyTuple_CheckExact(texts)) {
        return bulk_items(texts, want_key, report);
    }
#endif
    return bulk_iterated(texts, want_key, report);
}

PyObject *
dk_parse_many(PyObject *Py_UNUSED(module), PyObject *args)
{
    return bulk(args, 0);
}

PyObject *
dk_normalize_many(PyObject *Py_UNUSED(module), PyObject *args)
{
    return bulk(args, 1);
}
