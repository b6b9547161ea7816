//go:build ignore

/*
 * stats.c: the counters STREAMCHECK_STATS=1 prints at exit (loader.c), and
 * the clock that times the shim's phases.
 */
#include "shim.h"
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

_Atomic uint64_t sc_stat_handler_time, sc_stat_handled, sc_stat_stack_hits, sc_stat_stack_unwinds;
_Atomic uint64_t sc_stat_unwound_frames, sc_stat_unwind_time;
_Atomic uint64_t sc_stat_launches, sc_stat_scan_words, sc_stat_scan_time, sc_stat_raw_words;
_Atomic uint64_t sc_stat_phase_time[SC_NPHASES];

/* Stats time with the TSC where there is one: clock_gettime cost about 80 ns
 * on the GPU machine, more than some of the phases it would time. The units
 * become nanoseconds at exit, with a rate measured from sc_stat_begin. */
static int64_t stat_clock0, stat_ns0;

int64_t sc_stat_clock(void) {
#if defined(__x86_64__)
    return (int64_t)__rdtsc();
#else
    return sc_now_ns();
#endif
}

void sc_stat_begin(void) {
    stat_clock0 = sc_stat_clock();
    stat_ns0 = sc_now_ns();
}

double sc_stat_ns_per_unit(void) {
    int64_t units = sc_stat_clock() - stat_clock0, ns = sc_now_ns() - stat_ns0;
    return units > 0 && ns > 0 ? (double)ns / (double)units : 1.0;
}
