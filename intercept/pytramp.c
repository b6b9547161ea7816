//go:build ignore

/*
 * pytramp.c: unwinding through CPython's perf trampolines.
 *
 * CPython 3.12 and later, run with PYTHONPERFSUPPORT=1 (which `streamcheck
 * run` sets), call every Python function through its own copy of a small
 * trampoline,
 *
 *     sub $8, %rsp; call *%rcx; add $8, %rsp; ret
 *
 * in anonymous executable memory, and name each copy in /tmp/perf-PID.map.
 * That memory has no unwind tables, so _Unwind_Backtrace stops at the
 * innermost trampoline: a stack then names only the innermost Python
 * function. When a walk ends at a return address just after such a
 * `call *%rcx`, we register unwind information for the whole mapping with
 * libgcc's __register_frame, as JIT compilers do for their code: one FDE
 * saying that at that return address the caller's return address is 8
 * bytes above the stack pointer (the trampoline's padding) and its frame
 * starts 16 bytes above. Walks then go on through every trampoline of the
 * mapping, so stacks name the Python callers too.
 *
 * The rule is right only at the return address inside a trampoline, which
 * is where our walks meet trampoline code. Another unwinder in the process
 * starting from a signal taken on one of a trampoline's other three
 * instructions would be misled by 8 bytes; STREAMCHECK_PYTHON_CALLERS=0
 * turns all this off. x86-64 only; elsewhere stacks keep ending at the
 * innermost Python function.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

int sc_python_callers = 1;
_Atomic uint64_t sc_stat_maps_reads, sc_stat_maps_time, sc_stat_tramp_ranges;
/* Trampoline mappings registered so far: 0 in every program that is not
 * Python, whose calls then skip all Python work (pylines.c). */
_Atomic int sc_pytramp_count;

#if defined(__x86_64__)

extern void __register_frame(void *begin);

#define MAX_ARENAS 256
static pthread_mutex_t arenas_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t arena_lo[MAX_ARENAS], arena_hi[MAX_ARENAS];
static int narenas;

/* Where walks ended that are not trampolines: most walks end at the same
 * few places (_start, a thread's start), so each is checked against
 * /proc/self/maps once. */
#define MAX_REJECTED 64
static uint64_t rejected[MAX_REJECTED];
static int nrejected, next_rejected;

/* The trampoline's bytes around the return address of its call. */
static const uint8_t before_ret[6] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1}; /* sub $8,%rsp; call *%rcx */
static const uint8_t at_ret[5] = {0x48, 0x83, 0xc4, 0x08, 0xc3};           /* add $8,%rsp; ret */

/* The anonymous executable mapping holding pc, from /proc/self/maps. */
static int anon_exec_mapping(uint64_t pc, uint64_t *lo, uint64_t *hi) {
    int64_t t0 = sc_stats ? sc_stat_clock() : 0;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f) return 0;
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        uint64_t a, b, off;
        char perms[8];
        unsigned long inode;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %lu", &a, &b, perms, &off, &inode) != 5) continue;
        if (pc < a || pc >= b) continue;
        found = perms[0] == 'r' && perms[2] == 'x' && inode == 0;
        *lo = a;
        *hi = b;
        break;
    }
    fclose(f);
    if (sc_stats) {
        atomic_fetch_add_explicit(&sc_stat_maps_reads, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&sc_stat_maps_time, (uint64_t)(sc_stat_clock() - t0), memory_order_relaxed);
    }
    return found;
}

/* Builds .eh_frame data (a CIE, one FDE for [lo, hi), the terminator) and
 * registers it. The data must live as long as the process. */
static int register_arena(uint64_t lo, uint64_t hi) {
    uint8_t *eh = calloc(1, 128);
    if (!eh) return 0;
    size_t n = 4; /* CIE length, filled in below */
    memset(eh + n, 0, 4), n += 4; /* CIE id */
    eh[n++] = 1;                  /* version */
    memcpy(eh + n, "zR", 3), n += 3;
    eh[n++] = 1;    /* code alignment factor */
    eh[n++] = 0x78; /* data alignment factor: -8 (sleb128) */
    eh[n++] = 16;   /* return address register: rip */
    eh[n++] = 1;    /* augmentation data length */
    eh[n++] = 0x00; /* FDE pointers: DW_EH_PE_absptr */
    /* DW_CFA_def_cfa rsp, 16; DW_CFA_offset rip, 1 * -8 */
    eh[n++] = 0x0c, eh[n++] = 7, eh[n++] = 16;
    eh[n++] = 0x80 | 16, eh[n++] = 1;
    while (n % 8) eh[n++] = 0; /* DW_CFA_nop */
    uint32_t cie_len = (uint32_t)(n - 4);
    memcpy(eh, &cie_len, 4);

    size_t fde = n;
    n += 4;                                   /* FDE length, filled in below */
    uint32_t cie_ptr = (uint32_t)n;           /* from this field back to the CIE */
    memcpy(eh + n, &cie_ptr, 4), n += 4;
    memcpy(eh + n, &lo, 8), n += 8;           /* pc begin */
    uint64_t range = hi - lo;
    memcpy(eh + n, &range, 8), n += 8;        /* pc range */
    eh[n++] = 0;                              /* augmentation data length */
    while ((n - fde) % 8) eh[n++] = 0;        /* DW_CFA_nop */
    uint32_t fde_len = (uint32_t)(n - fde - 4);
    memcpy(eh + fde, &fde_len, 4);
    /* The 4 zero bytes after the FDE (calloc) end the section. */
    __register_frame(eh);
    return 1;
}

int sc_pytramp_register(uint64_t pc) {
    if (!sc_python_callers || pc < sizeof before_ret) return 0;
    int done = 0;
    pthread_mutex_lock(&arenas_mu);
    for (int i = 0; i < narenas; i++)
        if (pc >= arena_lo[i] && pc < arena_hi[i]) goto out; /* registered: the walk stopped for another reason */
    for (int i = 0; i < nrejected; i++)
        if (rejected[i] == pc) goto out;
    uint64_t lo, hi;
    /* Only in an anonymous executable mapping is it safe, and useful, to
     * read the code around pc. */
    if (narenas == MAX_ARENAS || !anon_exec_mapping(pc, &lo, &hi) || pc - sizeof before_ret < lo ||
        pc + sizeof at_ret > hi ||
        memcmp((const void *)(uintptr_t)(pc - sizeof before_ret), before_ret, sizeof before_ret) != 0 ||
        memcmp((const void *)(uintptr_t)pc, at_ret, sizeof at_ret) != 0) {
        rejected[next_rejected] = pc;
        next_rejected = (next_rejected + 1) % MAX_REJECTED;
        if (nrejected < MAX_REJECTED) nrejected++;
        goto out;
    }
    if (register_arena(lo, hi)) {
        atomic_fetch_add_explicit(&sc_stat_tramp_ranges, 1, memory_order_relaxed);
        arena_lo[narenas] = lo;
        arena_hi[narenas] = hi;
        narenas++;
        atomic_store(&sc_pytramp_count, narenas);
        done = 1;
    }
out:
    pthread_mutex_unlock(&arenas_mu);
    return done;
}

int sc_pytramp_contains(uint64_t pc) {
    int n = atomic_load(&sc_pytramp_count); /* entries below n are written */
    for (int i = 0; i < n; i++)
        if (pc >= arena_lo[i] && pc < arena_hi[i]) return 1;
    return 0;
}

static void atfork_child(void) {
    /* Another thread may have held the lock at fork; the child has one thread. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&arenas_mu, &fresh, sizeof fresh);
}

const sc_writer_hooks sc_pytramp_hooks = {.fork_child = atfork_child};

#else

int sc_pytramp_register(uint64_t pc) {
    (void)pc;
    return 0;
}

int sc_pytramp_contains(uint64_t pc) {
    (void)pc;
    return 0;
}

const sc_writer_hooks sc_pytramp_hooks = {0};

#endif
