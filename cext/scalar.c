/* harness.core.native.compiled._scalar: one ring lookup per Python call, at the cost of a
 * vectorcall.
 *
 * cffi calls a C function of several arguments through METH_VARARGS: it packs
 * the arguments into a tuple and parses it on every call, about 165 ns on
 * this machine, more than the binary search itself. A ScalarLookup is bound
 * to one ring (the address of the cffi-allocated entries, their count, and for
 * the bucketed layout its offset table) and is called with the key alone
 * through the vectorcall protocol (PEP 590), about 15 ns. It calls the very
 * same lookup functions as the cffi batch path (ring.c, bucketed.c).
 *
 * Jump and Maglev lookups are bound the same way (algorithms.c): for "jump" n
 * is the bucket count and there is no array; for "maglev" the entries are the
 * uint16 table and n its size. "jump-key" is jump called with the key itself
 * (bytes), hashed here with xxHash64 seed 0 (hashes.c): a whole route in one call. For
 * "rendezvous-weighted" the entries are the struct wrendezvous_node array, n its length.
 * "binomial", "fliphash" and "powerch" are range hashes like "jump" (range_hashes.c): n
 * buckets, no array; their "-key" kinds hash the key first, as "jump-key" does.
 * "search32"/"search64" are the timing gate's reference for these scalar lookups: a
 * plain lower bound over bare sorted positions, reached by the same call.
 *
 * It holds a reference to the cffi objects that own the arrays, so the memory
 * it points into lives as long as it does. harness/core/native/scalar.py binds
 * this module; only the binding modules of harness/core/native/ create these
 * objects (ring.py, bucketed.py, algorithms.py, and scalar.py's search reference).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>

#include "algorithms.h"
#include "bucketed.h"
#include "hashes.h"
#include "range_hashes.h"
#include "ring.h"

enum layout_kind {
    KIND_ALIGNED, KIND_PACKED, KIND_ALIGNED64, KIND_PACKED64, KIND_BUCKETED, KIND_JUMP, KIND_MAGLEV,
    KIND_JUMP_KEY, KIND_SEARCH32, KIND_SEARCH64, KIND_WRENDEZVOUS, KIND_BINOMIAL, KIND_FLIPHASH,
    KIND_POWERCH, KIND_BINOMIAL_KEY, KIND_FLIPHASH_KEY, KIND_POWERCH_KEY
};

static const char *const KIND_NAMES[] = {"aligned",  "packed", "aligned64", "packed64",
                                          "bucketed", "jump",   "maglev", "jump-key",
                                          "search32", "search64", "rendezvous-weighted",
                                          "binomial", "fliphash", "powerch",
                                          "binomial-key", "fliphash-key", "powerch-key"};

/* The reference a C scalar lookup is timed against (harness.apps.benchgate.references): a
 * plain lower bound over a sorted array of bare positions, called the same way. It is
 * deliberately its own copy, not ring.c's search: a change to a layout's code must not
 * change its reference. Returns the index of the first position >= key (n if none). */
#define REFERENCE_LOWER_BOUND(NAME, HASH)                                           \
    static size_t NAME(const HASH *positions, size_t n, HASH key)                   \
    {                                                                               \
        size_t lo = 0, hi = n;                                                      \
        while (lo < hi) {                                                           \
            size_t mid = lo + (hi - lo) / 2;                                        \
            if (positions[mid] < key)                                               \
                lo = mid + 1;                                                       \
            else                                                                    \
                hi = mid;                                                           \
        }                                                                           \
        return lo;                                                                  \
    }
REFERENCE_LOWER_BOUND(reference_lower_bound32, uint32_t)
REFERENCE_LOWER_BOUND(reference_lower_bound64, uint64_t)

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    enum layout_kind kind;
    const void *entries;
    const uint32_t *offsets; /* bucketed only */
    size_t n;
    PyObject *owner; /* keeps the arrays alive */
} ScalarLookup;

static PyObject *scalar_lookup_call(PyObject *self, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames)
{
    ScalarLookup *lookup = (ScalarLookup *)self;
    if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "a ring lookup takes exactly one key hash");
        return NULL;
    }
    if (lookup->kind == KIND_JUMP_KEY || lookup->kind == KIND_BINOMIAL_KEY ||
        lookup->kind == KIND_FLIPHASH_KEY || lookup->kind == KIND_POWERCH_KEY) {
        char *data;
        Py_ssize_t length;
        if (PyBytes_AsStringAndSize(args[0], &data, &length) < 0)
            return NULL;
        uint64_t hash = xxh64(data, (size_t)length, 0);
        uint32_t buckets = (uint32_t)lookup->n;
        uint16_t bucket = lookup->kind == KIND_JUMP_KEY       ? jump_bucket(hash, buckets)
                          : lookup->kind == KIND_BINOMIAL_KEY ? binomial_bucket(hash, buckets)
                          : lookup->kind == KIND_FLIPHASH_KEY ? fliphash_bucket(hash, buckets)
                                                              : powerch_bucket(hash, buckets);
        return PyLong_FromLong(bucket);
    }
    PyObject *number = PyNumber_Index(args[0]); /* ints, and numpy's integer scalars */
    if (number == NULL)
        return NULL;
    unsigned long long key = PyLong_AsUnsignedLongLong(number);
    Py_DECREF(number);
    if (key == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    int wide = lookup->kind == KIND_ALIGNED64 || lookup->kind == KIND_PACKED64 ||
               lookup->kind == KIND_JUMP || lookup->kind == KIND_MAGLEV ||
               lookup->kind == KIND_SEARCH64 || lookup->kind == KIND_WRENDEZVOUS ||
               lookup->kind == KIND_BINOMIAL || lookup->kind == KIND_FLIPHASH ||
               lookup->kind == KIND_POWERCH;
    if (!wide && key > UINT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "key hash %llu does not fit 32 bits", key);
        return NULL;
    }
    if (lookup->kind == KIND_SEARCH32)
        return PyLong_FromSize_t(reference_lower_bound32(lookup->entries, lookup->n, (uint32_t)key));
    if (lookup->kind == KIND_SEARCH64)
        return PyLong_FromSize_t(reference_lower_bound64(lookup->entries, lookup->n, (uint64_t)key));
    uint16_t owner = 0;
    switch (lookup->kind) {
    case KIND_ALIGNED:
        owner = ring_lookup_aligned(lookup->entries, lookup->n, (uint32_t)key);
        break;
    case KIND_PACKED:
        owner = ring_lookup_packed(lookup->entries, lookup->n, (uint32_t)key);
        break;
    case KIND_ALIGNED64:
        owner = ring_lookup_aligned64(lookup->entries, lookup->n, (uint64_t)key);
        break;
    case KIND_PACKED64:
        owner = ring_lookup_packed64(lookup->entries, lookup->n, (uint64_t)key);
        break;
    case KIND_BUCKETED:
        owner = ring_bucketed_lookup(lookup->offsets, lookup->entries, (uint32_t)key);
        break;
    case KIND_JUMP:
        owner = jump_bucket((uint64_t)key, (uint32_t)lookup->n);
        break;
    case KIND_MAGLEV:
        owner = maglev_lookup(lookup->entries, (uint64_t)lookup->n, (uint64_t)key);
        break;
    case KIND_WRENDEZVOUS:
        owner = wrendezvous_pick(lookup->entries, lookup->n, (uint64_t)key);
        break;
    case KIND_BINOMIAL:
        owner = binomial_bucket((uint64_t)key, (uint32_t)lookup->n);
        break;
    case KIND_FLIPHASH:
        owner = fliphash_bucket((uint64_t)key, (uint32_t)lookup->n);
        break;
    case KIND_POWERCH:
        owner = powerch_bucket((uint64_t)key, (uint32_t)lookup->n);
        break;
    }
    return PyLong_FromLong(owner);
}

/* ScalarLookup(kind, entries_address, entries, offsets_address, owner) */
static PyObject *scalar_lookup_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    const char *kind_name;
    unsigned long long entries_address, offsets_address;
    Py_ssize_t n;
    PyObject *owner;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "ScalarLookup takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "sKnKO", &kind_name, &entries_address, &n, &offsets_address,
                          &owner))
        return NULL;
    int kind = -1;
    for (int i = 0; i < (int)(sizeof KIND_NAMES / sizeof KIND_NAMES[0]); i++)
        if (strcmp(kind_name, KIND_NAMES[i]) == 0)
            kind = i;
    if (kind < 0) {
        PyErr_Format(PyExc_ValueError, "unknown layout kind %s", kind_name);
        return NULL;
    }
    int arrayless = kind == KIND_JUMP || kind == KIND_JUMP_KEY || kind == KIND_BINOMIAL ||
                    kind == KIND_FLIPHASH || kind == KIND_POWERCH || kind == KIND_BINOMIAL_KEY ||
                    kind == KIND_FLIPHASH_KEY || kind == KIND_POWERCH_KEY;
    if (n < 1 || (entries_address == 0 && !arrayless) ||
        (kind == KIND_BUCKETED && offsets_address == 0)) {
        PyErr_SetString(PyExc_ValueError, "a ring lookup needs at least one entry and its arrays");
        return NULL;
    }
    ScalarLookup *self = (ScalarLookup *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = scalar_lookup_call;
    self->kind = (enum layout_kind)kind;
    self->entries = (const void *)(uintptr_t)entries_address;
    self->offsets = (const uint32_t *)(uintptr_t)offsets_address;
    self->n = (size_t)n;
    Py_INCREF(owner);
    self->owner = owner;
    return (PyObject *)self;
}

static void scalar_lookup_dealloc(PyObject *self)
{
    Py_XDECREF(((ScalarLookup *)self)->owner);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject ScalarLookupType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "harness._scalar.ScalarLookup",
    .tp_doc = "One ring lookup per call: ScalarLookup(kind, address, n, offsets, owner)(key)",
    .tp_basicsize = sizeof(ScalarLookup),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(ScalarLookup, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = scalar_lookup_new,
    .tp_dealloc = scalar_lookup_dealloc,
};

static struct PyModuleDef scalar_module = {
    PyModuleDef_HEAD_INIT, "harness._scalar", "Ring lookups bound to one ring, called by vectorcall.",
    -1, NULL,
};

PyMODINIT_FUNC PyInit__scalar(void)
{
    if (PyType_Ready(&ScalarLookupType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&scalar_module);
    if (module == NULL)
        return NULL;
    Py_INCREF(&ScalarLookupType);
    if (PyModule_AddObject(module, "ScalarLookup", (PyObject *)&ScalarLookupType) < 0) {
        Py_DECREF(&ScalarLookupType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
