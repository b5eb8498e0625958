/* harness.core.native.compiled._counted: the hooks callgrind counts by
 * (harness/metrics/callgrind.py, through harness/core/native/counted.py).
 *
 * A process measured by the counts metric runs under valgrind's callgrind
 * with instrumentation off (--instr-atstart=no): starting Python and numpy
 * under full simulation would take 20 s of CPU per process. Once its ring is
 * built it calls instrument(), which starts callgrind's instrumentation and
 * cache simulation, then warms up and runs each measured call as counted(f).
 *
 * counted(f) zeroes callgrind's counters, calls f(), and dumps the counters to
 * a file of their own: each measured call is counted alone, and the warm-up
 * done before it is dropped. These are client requests (valgrind/callgrind.h),
 * not --zero-before/--dump-after on a function name: callgrind sees a function
 * entered by a tail jump (as CPython calls C methods) as no call at all.
 * Outside valgrind all of them do nothing but call f().
 *
 * They need valgrind's header at build time; without it, CALLGRIND is 0 and the
 * metric refuses to run (install valgrind, then reinstall the package).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if defined(__has_include) && __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#else
#define HAVE_CALLGRIND 0
#endif

static PyObject *counted(PyObject *module, PyObject *callable)
{
    (void)module;
#if HAVE_CALLGRIND
    CALLGRIND_ZERO_STATS;
#endif
    PyObject *result = PyObject_CallNoArgs(callable);
#if HAVE_CALLGRIND
    CALLGRIND_DUMP_STATS;
#endif
    return result;
}

static PyObject *instrument(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
#if HAVE_CALLGRIND
    CALLGRIND_START_INSTRUMENTATION;
#endif
    Py_RETURN_NONE;
}

static PyMethodDef counted_methods[] = {
    {"counted", counted, METH_O,
     "counted(f) -> f(), with callgrind's counters zeroed before and dumped after"},
    {"instrument", instrument, METH_NOARGS,
     "start callgrind's instrumentation (a no-op outside valgrind)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef counted_module = {
    PyModuleDef_HEAD_INIT, "harness._counted",
    "Hooks for callgrind (see harness.metrics.counts).", -1, counted_methods,
};

PyMODINIT_FUNC PyInit__counted(void)
{
    PyObject *module = PyModule_Create(&counted_module);
    if (module != NULL && PyModule_AddIntConstant(module, "CALLGRIND", HAVE_CALLGRIND) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
