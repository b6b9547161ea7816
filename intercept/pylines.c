//go:build ignore

/*
 * pylines.c: the line each Python function on a call's stack is at.
 *
 * CPython's perf trampolines (pytramp.c) let stacks name every Python
 * function, but a trampoline belongs to a function, not a line, so a report
 * could only say "py::train x.py". When a stack holds trampoline frames we
 * therefore read the calling thread's own Python frames, innermost first,
 * and pair them with the trampoline frames by the entry frames that each
 * evaluation through a trampoline links into the chain (see
 * sc_python_lines): pairing them one to one would be wrong where CPython
 * runs a call inline (3.13's __init__) or a returning frame is being torn
 * down.
 *
 * The caller usually does not hold the GIL (PyTorch releases it around every
 * operator), so nothing here calls into the interpreter except functions
 * that only read: Py_IsInitialized, PyGILState_GetThisThreadState, the
 * attached thread state's getter and
 * PyUnstable_InterpreterFrame_GetLine/GetLasti. The frames read are the
 * calling thread's, which cannot change while it is inside our callback.
 * Where the thread state keeps its innermost frame is not public API, so it
 * is read at that version's offset (3.12: tstate->cframe->current_frame,
 * 3.13: tstate->current_frame), and each frame's code object is checked to
 * be a code object before use. Other versions and free-threaded builds get
 * no lines. STREAMCHECK_PYTHON_LINES=0 turns it off.
 *
 * Computing a line scans the code's line table, so lines are cached per
 * thread by (trampoline, code object, instruction offset); the trampoline,
 * which CPython never frees, keeps a code object at a reused address from
 * matching a stale entry.
 *
 * A program that turns the trampolines off while running
 * (sys.deactivate_stack_trampoline) gets wrong lines for the frames that
 * still run through one: frames started after that have no trampoline but
 * their own entry frames. PYTHONPERFSUPPORT=1 never turns them off.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

int sc_python_lines_on = 1;

/* Layouts of CPython 3.12 and 3.13 (x86-64 and other 64-bit targets), from
 * their headers: PyThreadState, struct _PyInterpreterFrame, PyObject. */
#define TSTATE_CFRAME_312 56        /* _PyCFrame *cframe; its current_frame is at 0 */
#define TSTATE_CURRENT_FRAME_313 72 /* struct _PyInterpreterFrame *current_frame */
#define FRAME_CODE 0                /* f_code (3.12), f_executable (3.13) */
#define FRAME_PREVIOUS 8
#define FRAME_OWNER 70
#define FRAME_OWNED_BY_CSTACK 3 /* an entry frame of the C stack, no Python code */
#define OBJECT_TYPE 8           /* ob_type, after ob_refcnt */

static struct {
    int minor; /* 12 or 13; 0: no lines in this process */
    int (*initialized)(void);
    void *(*this_thread_state)(void);
    void *(*current_state)(void); /* the attached thread state, NULL while detached */
    int (*get_line)(const void *frame);
    int (*get_lasti)(const void *frame);
    const void *code_type;
} py;
static pthread_once_t py_once = PTHREAD_ONCE_INIT;

static void py_resolve(void) {
    if (!sc_python_lines_on || sizeof(void *) != 8) return;
    const unsigned long *version = dlsym(RTLD_DEFAULT, "Py_Version");
    if (!version || (*version >> 24) != 3) return;
    int minor = (int)((*version >> 16) & 0xff);
    if (minor != 12 && minor != 13) return;
    py.initialized = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    py.this_thread_state = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    py.current_state = (void *(*)(void))dlsym(RTLD_DEFAULT, minor == 12 ? "_PyThreadState_UncheckedGet"
                                                                       : "PyThreadState_GetUnchecked");
    py.get_line = (int (*)(const void *))dlsym(RTLD_DEFAULT, "PyUnstable_InterpreterFrame_GetLine");
    py.get_lasti = (int (*)(const void *))dlsym(RTLD_DEFAULT, "PyUnstable_InterpreterFrame_GetLasti");
    py.code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
    const void *type_type = dlsym(RTLD_DEFAULT, "PyType_Type");
    if (!py.initialized || !py.this_thread_state || !py.current_state || !py.get_line || !py.get_lasti ||
        !py.code_type || !type_type)
        return;
    /* A free-threaded build's objects start differently: there ob_type is
     * not at OBJECT_TYPE, and PyCode_Type's own type does not read back. */
    if (*(const void *const *)((const char *)py.code_type + OBJECT_TYPE) != type_type) return;
    py.minor = minor;
}

typedef struct {
    uint64_t tramp, code;
    int32_t lasti;
    uint32_t line;
} line_entry;

#define LINE_SLOTS 1024 /* a power of two */
struct sc_pylines {
    line_entry e[LINE_SLOTS];
};

static uint32_t line_of(sc_tstate *ts, uint64_t tramp, const void *code, const void *frame) {
    int lasti = py.get_lasti(frame);
    struct sc_pylines *c = ts->pylines;
    if (!c) c = ts->pylines = calloc(1, sizeof *c);
    line_entry *e = NULL;
    if (c) {
        uint64_t h = (tramp ^ (uint64_t)(uintptr_t)code * 0x9e3779b97f4a7c15ull) + (uint64_t)(uint32_t)lasti;
        h ^= h >> 29;
        e = &c->e[(h * 0xbf58476d1ce4e5b9ull) >> 54 & (LINE_SLOTS - 1)];
        if (e->tramp == tramp && e->code == (uint64_t)(uintptr_t)code && e->lasti == lasti && e->line) return e->line;
    }
    int line = py.get_line(frame);
    if (line <= 0) return 0;
    if (e) *e = (line_entry){tramp, (uint64_t)(uintptr_t)code, lasti, (uint32_t)line};
    return (uint32_t)line;
}

int sc_python_lines(sc_tstate *ts, const uint64_t *tramp_pc, int n, uint32_t *line) {
    pthread_once(&py_once, py_resolve);
    /* A thread state is only valid between the interpreter's start and
     * its finalization. */
    if (!py.minor || !py.initialized()) return 0;
    const char *tstate = py.this_thread_state();
    if (!tstate) return 0;
    const char *attached = py.current_state();
    if (attached && attached != tstate) return 0; /* another interpreter's state is running here */
    const char *frame;
    if (py.minor == 12) {
        const char *cframe = *(const char *const *)(tstate + TSTATE_CFRAME_312);
        frame = cframe ? *(const char *const *)cframe : NULL;
    } else {
        frame = *(const char *const *)(tstate + TSTATE_CURRENT_FRAME_313);
    }
    /* Each trampoline runs one _PyEval_EvalFrameDefault, which links one
     * entry frame owned by the C stack below the frame it was called for;
     * frames run inline by that evaluation (3.13 runs __init__ so) come
     * before it in the chain, without a trampoline. So the chain, innermost
     * first, is a stretch of Python frames per trampoline, each ending at an
     * entry frame, and the trampoline's frame is the stretch's outermost.
     * An empty stretch is a frame being torn down (a free from its locals'
     * deallocation): it has left the chain, and its trampoline no line. */
    int k = 0;
    const char *outermost = NULL; /* in the current stretch */
    for (int steps = 0; frame && k < n && steps < 4 * SC_MAX_STACK; steps++) {
        if (*(const uint8_t *)(frame + FRAME_OWNER) == FRAME_OWNED_BY_CSTACK) {
            line[k] = outermost ? line_of(ts, tramp_pc[k], *(const void *const *)(outermost + FRAME_CODE), outermost) : 0;
            k++;
            outermost = NULL;
        } else {
            const char *code = *(const char *const *)(frame + FRAME_CODE);
            if (!code || *(const void *const *)(code + OBJECT_TYPE) != py.code_type) break;
            outermost = frame;
        }
        frame = *(const char *const *)(frame + FRAME_PREVIOUS);
    }
    while (k > 0 && line[k - 1] == 0) k--; /* trailing unknowns say nothing */
    return k;
}

void sc_python_lines_free(sc_tstate *ts) {
    free(ts->pylines);
    ts->pylines = NULL;
}
