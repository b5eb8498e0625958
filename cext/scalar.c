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
 * "anchor", "memento" and "dx" take the address of their struct (anchor.h, memento.h, dx.h)
 * as the entries, n unused; "jumpback" is like "jump", n the bucket count and no array.
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
#include "anchor.h"
#include "bucketed.h"
#include "dx.h"
#include "hashes.h"
#include "jumpback.h"
#include "memento.h"
#include "range_hashes.h"
#include "ring.h"

/* Every lookup kind, one entry each: a new kind is one entry here (and its header's
 * #include above). X(ID, name, key, arrays, result, lookup):
 *   key: KEY_HASH32 (a key hash below 2**32), KEY_HASH64 (below 2**64) or KEY_NAME (the key
 *     itself, bytes, hashed here with xxHash64 seed 0, hashes.c, into the `key` that
 *     `lookup` reads);
 *   arrays: ARRAYS_ENTRIES (`entries` must be given), ARRAYS_OFFSETS (entries and the
 *     bucketed layout's offsets) or ARRAYS_NONE (n alone);
 *   result: RESULT_OWNER (a uint16 owner) or RESULT_INDEX (a size_t index, the references);
 *   lookup: the answer, from `lookup` (the ScalarLookup) and `key`.
 * The order is the enum's, the order of the names ScalarLookup accepts. */
#define LOOKUP_KINDS(X)                                                                          \
    X(ALIGNED, "aligned", KEY_HASH32, ARRAYS_ENTRIES, RESULT_OWNER,                              \
      ring_lookup_aligned(lookup->entries, lookup->n, (uint32_t)key))                            \
    X(PACKED, "packed", KEY_HASH32, ARRAYS_ENTRIES, RESULT_OWNER,                                \
      ring_lookup_packed(lookup->entries, lookup->n, (uint32_t)key))                             \
    X(ALIGNED64, "aligned64", KEY_HASH64, ARRAYS_ENTRIES, RESULT_OWNER,                          \
      ring_lookup_aligned64(lookup->entries, lookup->n, (uint64_t)key))                          \
    X(PACKED64, "packed64", KEY_HASH64, ARRAYS_ENTRIES, RESULT_OWNER,                            \
      ring_lookup_packed64(lookup->entries, lookup->n, (uint64_t)key))                           \
    X(BUCKETED, "bucketed", KEY_HASH32, ARRAYS_OFFSETS, RESULT_OWNER,                            \
      ring_bucketed_lookup(lookup->offsets, lookup->entries, (uint32_t)key))                     \
    X(JUMP, "jump", KEY_HASH64, ARRAYS_NONE, RESULT_OWNER,                                       \
      jump_bucket((uint64_t)key, (uint32_t)lookup->n))                                           \
    X(MAGLEV, "maglev", KEY_HASH64, ARRAYS_ENTRIES, RESULT_OWNER,                                \
      maglev_lookup(lookup->entries, (uint64_t)lookup->n, (uint64_t)key))                        \
    X(JUMP_KEY, "jump-key", KEY_NAME, ARRAYS_NONE, RESULT_OWNER,                                 \
      jump_bucket((uint64_t)key, (uint32_t)lookup->n))                                           \
    X(SEARCH32, "search32", KEY_HASH32, ARRAYS_ENTRIES, RESULT_INDEX,                            \
      reference_lower_bound32(lookup->entries, lookup->n, (uint32_t)key))                        \
    X(SEARCH64, "search64", KEY_HASH64, ARRAYS_ENTRIES, RESULT_INDEX,                            \
      reference_lower_bound64(lookup->entries, lookup->n, (uint64_t)key))                        \
    X(WRENDEZVOUS, "rendezvous-weighted", KEY_HASH64, ARRAYS_ENTRIES, RESULT_OWNER,              \
      wrendezvous_pick(lookup->entries, lookup->n, (uint64_t)key))                               \
    X(BINOMIAL, "binomial", KEY_HASH64, ARRAYS_NONE, RESULT_OWNER,                               \
      binomial_bucket((uint64_t)key, (uint32_t)lookup->n))                                       \
    X(FLIPHASH, "fliphash", KEY_HASH64, ARRAYS_NONE, RESULT_OWNER,                               \
      fliphash_bucket((uint64_t)key, (uint32_t)lookup->n))                                       \
    X(POWERCH, "powerch", KEY_HASH64, ARRAYS_NONE, RESULT_OWNER,                                 \
      powerch_bucket((uint64_t)key, (uint32_t)lookup->n))                                        \
    X(BINOMIAL_KEY, "binomial-key", KEY_NAME, ARRAYS_NONE, RESULT_OWNER,                         \
      binomial_bucket((uint64_t)key, (uint32_t)lookup->n))                                       \
    X(FLIPHASH_KEY, "fliphash-key", KEY_NAME, ARRAYS_NONE, RESULT_OWNER,                         \
      fliphash_bucket((uint64_t)key, (uint32_t)lookup->n))                                       \
    X(POWERCH_KEY, "powerch-key", KEY_NAME, ARRAYS_NONE, RESULT_OWNER,                           \
      powerch_bucket((uint64_t)key, (uint32_t)lookup->n))                                        \
    X(ANCHOR, "anchor", KEY_HASH64, ARRAYS_ENTRIES, RESULT_OWNER,                                \
      anchor_lookup(lookup->entries, (uint64_t)key))                                             \
    X(MEMENTO, "memento", KEY_HASH64, ARRAYS_ENTRIES, RESULT_OWNER,                              \
      memento_lookup(lookup->entries, (uint64_t)key))                                            \
    X(DX, "dx", KEY_HASH64, ARRAYS_ENTRIES, RESULT_OWNER,                                        \
      dx_lookup(lookup->entries, (uint64_t)key))                                                 \
    X(JUMPBACK, "jumpback", KEY_HASH64, ARRAYS_NONE, RESULT_OWNER,                               \
      (uint16_t)jumpback_bucket((uint64_t)key, (uint32_t)lookup->n))

enum key_kind { KEY_HASH32, KEY_HASH64, KEY_NAME };
enum arrays_kind { ARRAYS_ENTRIES, ARRAYS_OFFSETS, ARRAYS_NONE };
enum result_kind { RESULT_OWNER, RESULT_INDEX };

#define KIND_ENUM(ID, NAME, KEY, ARRAYS, RESULT, LOOKUP) KIND_##ID,
enum layout_kind { LOOKUP_KINDS(KIND_ENUM) };
#undef KIND_ENUM

#define KIND_NAME(ID, NAME, KEY, ARRAYS, RESULT, LOOKUP) NAME,
static const char *const KIND_NAMES[] = {LOOKUP_KINDS(KIND_NAME)};
#undef KIND_NAME

/* Whether `kind`'s key (arrays) column is `key` (`arrays`): called with a constant, these
 * fold to the chain of comparisons a hand-written test would be (always_inline: without
 * it GCC kept kind_key_is out of line, a call where a mask test was). */
static inline __attribute__((always_inline)) int kind_key_is(int kind,
                                                            enum key_kind key)
{
#define KEY_IS(ID, NAME, KEY, ARRAYS, RESULT, LOOKUP) || (kind == KIND_##ID && KEY == key)
    return 0 LOOKUP_KINDS(KEY_IS);
#undef KEY_IS
}

static inline __attribute__((always_inline)) int kind_arrays_are(int kind,
                                                                enum arrays_kind arrays)
{
#define ARRAYS_ARE(ID, NAME, KEY, ARRAYS, RESULT, LOOKUP) || (kind == KIND_##ID && ARRAYS == arrays)
    return 0 LOOKUP_KINDS(ARRAYS_ARE);
#undef ARRAYS_ARE
}

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
    if (kind_key_is(lookup->kind, KEY_NAME)) {
        char *data;
        Py_ssize_t length;
        if (PyBytes_AsStringAndSize(args[0], &data, &length) < 0)
            return NULL;
        uint64_t key = xxh64(data, (size_t)length, 0);
#define NAME_LOOKUP(ID, NAME, KEY, ARRAYS, RESULT, LOOKUP) \
    KEY == KEY_NAME && lookup->kind == KIND_##ID ? (uint16_t)(LOOKUP) :
        uint16_t bucket = LOOKUP_KINDS(NAME_LOOKUP) 0;
#undef NAME_LOOKUP
        return PyLong_FromLong(bucket);
    }
    PyObject *number = PyNumber_Index(args[0]); /* ints, and numpy's integer scalars */
    if (number == NULL)
        return NULL;
    unsigned long long key = PyLong_AsUnsignedLongLong(number);
    Py_DECREF(number);
    if (key == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    int wide = kind_key_is(lookup->kind, KEY_HASH64);
    if (!wide && key > UINT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "key hash %llu does not fit 32 bits", key);
        return NULL;
    }
#define INDEX_LOOKUP(ID, NAME, KEY, ARRAYS, RESULT, LOOKUP) \
    if (RESULT == RESULT_INDEX && lookup->kind == KIND_##ID)   \
        return PyLong_FromSize_t(LOOKUP);
    LOOKUP_KINDS(INDEX_LOOKUP)
#undef INDEX_LOOKUP
    uint16_t owner = 0;
    switch (lookup->kind) {
#define OWNER_LOOKUP(ID, NAME, KEY, ARRAYS, RESULT, LOOKUP)     \
    case KIND_##ID:                                             \
        if (KEY != KEY_NAME && RESULT == RESULT_OWNER)          \
            owner = (uint16_t)(LOOKUP);                         \
        break;
        LOOKUP_KINDS(OWNER_LOOKUP)
#undef OWNER_LOOKUP
    default:
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
    int arrayless = kind_arrays_are(kind, ARRAYS_NONE);
    if (n < 1 || (entries_address == 0 && !arrayless) ||
        (kind_arrays_are(kind, ARRAYS_OFFSETS) && offsets_address == 0)) {
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
