//go:build ignore

/*
 * tracefile.c: the per-process trace file (docs/trace-format.md, binary v1).
 *
 * The file is written through a MAP_SHARED mapping that grows in steps
 * (fallocate, so a full disk is an error here rather than a SIGBUS later, then
 * mremap). Records are appended under sc_lock, and each record's kind byte is
 * stored last, with release ordering, over the zeros the file was extended
 * with: if the process dies at any instant (SIGKILL, abort, a segfault) the
 * page cache holds every complete record and a zero where the next one would
 * start, so a reader stops cleanly and calls the trace truncated. At a normal
 * exit the library destructor appends the End record and cuts the file to
 * its used length.
 *
 * After fork the child must not write into the parent's mapping: the child
 * handler drops it, and the child's first event creates the child's own file,
 * whose top repeats every definition (strings, modules, stacks) with the
 * same ids so that every cached id stays valid.
 *
 * The writer is the lowest layer and calls no other file of the shim: the
 * layers above (the definition tables, the recorder) register hooks
 * (sc_writer_register) for what they do when a file is opened and at fork,
 * and the recorder decides what events to write (recorder.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <linux/futex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

/* sc_lock: 0 free, 1 taken, 2 taken and maybe waited for (the futex mutex
 * of Drepper's "Futexes Are Tricky"). Not a pthread mutex: every recorded
 * call takes it, and finds libc's lock and unlock code out of the
 * instruction cache (about six lines of it); this fast path is a few
 * instructions in the shim's own hot code. */
static _Atomic uint32_t sc_lock_word;
_Atomic uint32_t sc_fork_gen;

/* TF_PENDING: the file is created by the first record (a process that never
 * records leaves no file; a forked child writes its own). */
enum { TF_NONE, TF_PENDING, TF_OPEN, TF_FAILED, TF_CLOSED };

static int tf_state = TF_NONE;
static int tf_fd = -1;
static uint8_t *tf_map;
static size_t tf_mapsize, tf_used;
static uint64_t tf_seq, tf_events, tf_dropped;
static int64_t tf_t0;
static char tf_dir[PATH_MAX] = ".";
static int tf_warned;
/* Set when this process's trace cannot be written: callbacks then skip all
 * work (an unwind per call with nothing to cache the stack ids in cost 5 us). */
_Atomic int sc_trace_failed;

#define INITIAL_SIZE ((size_t)1 << 20)
#define MAX_STEP ((size_t)256 << 20)

static long futex(_Atomic uint32_t *w, int op, uint32_t val) {
    return syscall(SYS_futex, (uint32_t *)w, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

/* The program must never see our errno: the futex calls set it (EAGAIN,
 * EINTR), and the fork handlers take this lock outside any callback. */
SC_COLD static void lock_contended(uint32_t c) {
    int saved = errno;
    for (int i = 0; i < 100 && c == 1; i++) { /* a short hold: spin a little before sleeping */
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
        c = 0;
        if (atomic_compare_exchange_weak_explicit(&sc_lock_word, &c, 1, memory_order_acquire, memory_order_relaxed))
            return;
    }
    if (c != 2) c = atomic_exchange_explicit(&sc_lock_word, 2, memory_order_acquire);
    while (c != 0) {
        futex(&sc_lock_word, FUTEX_WAIT, 2);
        c = atomic_exchange_explicit(&sc_lock_word, 2, memory_order_acquire);
    }
    errno = saved;
}

SC_HOT void sc_lock_acquire(void) {
    uint32_t c = 0;
    if (!atomic_compare_exchange_strong_explicit(&sc_lock_word, &c, 1, memory_order_acquire, memory_order_relaxed))
        lock_contended(c);
}

SC_COLD static void lock_wake(void) {
    int saved = errno;
    futex(&sc_lock_word, FUTEX_WAKE, 1);
    errno = saved;
}

SC_HOT void sc_lock_release(void) {
    if (atomic_exchange_explicit(&sc_lock_word, 0, memory_order_release) == 2) lock_wake();
}

static int lock_try(void) {
    uint32_t c = 0;
    return atomic_compare_exchange_strong_explicit(&sc_lock_word, &c, 1, memory_order_acquire, memory_order_relaxed);
}

int64_t sc_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- the hooks of the layers above ----
 * A fixed array: registered at start, read under sc_lock and in the fork
 * handlers, which must not allocate. */
static const sc_writer_hooks *hooks[SC_MAX_WRITER_HOOKS];
static int nhooks; /* under sc_lock */

int sc_writer_register(const sc_writer_hooks *h) {
    sc_lock_acquire();
    int ok = nhooks < SC_MAX_WRITER_HOOKS;
    if (ok) hooks[nhooks++] = h;
    sc_lock_release();
    return ok;
}

/* ---- prefaulting ----
 *
 * The first write to each page of the mapping faults, and the fault is paid
 * by the program's CUDA call that happens to cross the page. On a virtual
 * machine whose memory the host backs lazily that costs microseconds, which
 * made writing an event the shim's largest cost on the GPU machine. So a
 * helper thread faults pages in ahead of the writer (MADV_POPULATE_WRITE,
 * Linux 5.14 and later; elsewhere it quits at once and pages fault in line).
 * Only the process that loaded the shim runs it; a forked child faults in
 * line. STREAMCHECK_PREFAULT=0 turns it off.
 *
 * The same thread drops the pages well behind the writer from the mapping
 * (MADV_DONTNEED, which for a shared file mapping keeps their data in the
 * file and the page cache): written pages would otherwise stay in the
 * process's resident memory, a trace's whole length of it. */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define PF_AHEAD ((size_t)4 << 20) /* keep this much populated past the end */
#define PF_CHUNK ((size_t)1 << 20) /* populate in steps, so grow() never waits long */
#define PF_DROP_STEP ((size_t)4 << 20) /* drop in whole steps, at least one step behind the writer */

/* Read side: one populate step. Write side: grow() and the final munmap,
 * which move or remove the mapping. */
static pthread_rwlock_t pf_maplock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t pf_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pf_cv = PTHREAD_COND_INITIALIZER;
enum { PF_NONE, PF_RUNNING, PF_OFF };
static int pf_state;   /* under pf_mu */
static size_t pf_want; /* under pf_mu: populate file offsets [0, pf_want) */
static size_t pf_drop; /* under pf_mu: drop file offsets [0, pf_drop) from the mapping */
static size_t pf_asked; /* under sc_lock: the last pf_want the writer set */
_Atomic uint64_t sc_stat_prefaulted; /* bytes the helper populated */
_Atomic int sc_stat_prefault_started;

static void *pf_main(void *arg) {
    (void)arg;
    size_t done = 0, dropped = 0;
    for (;;) {
        pthread_mutex_lock(&pf_mu);
        while (pf_state == PF_RUNNING && pf_want <= done && pf_drop <= dropped) pthread_cond_wait(&pf_cv, &pf_mu);
        int run = pf_state == PF_RUNNING;
        size_t want = pf_want, drop = pf_drop;
        pthread_mutex_unlock(&pf_mu);
        if (!run) return NULL;
        pthread_rwlock_rdlock(&pf_maplock);
        if (drop > dropped && tf_map) {
            madvise(tf_map + dropped, drop - dropped, MADV_DONTNEED); /* on failure the pages just stay */
            dropped = drop;
        }
        if (want <= done) {
            pthread_rwlock_unlock(&pf_maplock);
            continue;
        }
        size_t end = want - done > PF_CHUNK ? done + PF_CHUNK : want;
        if (end > tf_mapsize) end = tf_mapsize;
        int r = end > done && tf_map ? madvise(tf_map + done, end - done, MADV_POPULATE_WRITE) : -1;
        pthread_rwlock_unlock(&pf_maplock);
        if (r != 0) { /* not supported here, or the mapping is gone: stop */
            pthread_mutex_lock(&pf_mu);
            pf_state = PF_OFF;
            pthread_mutex_unlock(&pf_mu);
            return NULL;
        }
        atomic_fetch_add_explicit(&sc_stat_prefaulted, end - done, memory_order_relaxed);
        done = end;
    }
}

static void pf_start_locked(void) {
    const char *e = getenv("STREAMCHECK_PREFAULT");
    if ((e && strcmp(e, "0") == 0) || atomic_load(&sc_fork_gen) != 0) return;
    pthread_mutex_lock(&pf_mu);
    int start = pf_state == PF_NONE;
    if (start) pf_state = PF_RUNNING;
    pthread_mutex_unlock(&pf_mu);
    if (!start) return;
    /* The program's signals must never be delivered to our thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 64 << 10);
    pthread_t t;
    int r = pthread_create(&t, &a, pf_main, NULL);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) {
        pthread_mutex_lock(&pf_mu);
        pf_state = PF_OFF;
        pthread_mutex_unlock(&pf_mu);
        return;
    }
    pthread_setname_np(t, "streamcheck-pf");
    atomic_store(&sc_stat_prefault_started, 1);
}

/* Asks the helper to keep PF_AHEAD past tf_used populated; cheap when
 * nothing new is needed. */
static inline void pf_request_locked(void) {
    if (tf_used + PF_AHEAD / 2 <= pf_asked) return;
    size_t want = (tf_used + PF_AHEAD + PF_CHUNK - 1) / PF_CHUNK * PF_CHUNK;
    if (want > tf_mapsize) want = tf_mapsize;
    if (want <= pf_asked) return;
    pf_asked = want;
    size_t drop = tf_used > 2 * PF_DROP_STEP ? (tf_used - PF_DROP_STEP) / PF_DROP_STEP * PF_DROP_STEP : 0;
    pthread_mutex_lock(&pf_mu);
    if (pf_state == PF_RUNNING) {
        pf_want = want;
        if (drop > pf_drop) pf_drop = drop;
        pthread_cond_signal(&pf_cv);
    }
    pthread_mutex_unlock(&pf_mu);
}

static void pf_stop(void) {
    pthread_mutex_lock(&pf_mu);
    if (pf_state == PF_RUNNING) pf_state = PF_OFF;
    pthread_cond_broadcast(&pf_cv);
    pthread_mutex_unlock(&pf_mu);
}

/* Make the file at least want bytes long and map all of it. */
SC_COLD static int grow(size_t want) {
    if (want <= tf_mapsize) return 1;
    size_t size = tf_mapsize ? tf_mapsize : INITIAL_SIZE;
    while (size < want) size += size < MAX_STEP ? size : MAX_STEP;
    int r;
    do {
        r = fallocate(tf_fd, 0, (off_t)tf_mapsize, (off_t)(size - tf_mapsize));
    } while (r != 0 && errno == EINTR);
    if (r != 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) r = ftruncate(tf_fd, (off_t)size);
    if (r != 0) return 0;
    pthread_rwlock_wrlock(&pf_maplock);
    void *m = tf_map ? mremap(tf_map, tf_mapsize, size, MREMAP_MAYMOVE)
                     : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, tf_fd, 0);
    if (m != MAP_FAILED) {
        tf_map = m;
        tf_mapsize = size;
    }
    pthread_rwlock_unlock(&pf_maplock);
    return m != MAP_FAILED;
}

/* Writes the uvarints of v[0..n) at p; returns the bytes written. Every
 * field of an event goes through this one loop, not inlined: a call finds
 * the shim's code out of the instruction cache (the driver's own code ran
 * since the last call), so few bytes of code matter more than few
 * instructions. */
SC_HOT __attribute__((noinline)) static size_t put_uvarints(uint8_t *p, const uint64_t *v, size_t n) {
    /* sc_put_uvarint's loop, written out: calling it here compiles to
     * about 75 more instructions an event (bench/shim-lines.sh). */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = v[i];
        while (x >= 0x80) {
            p[k++] = (uint8_t)(x | 0x80);
            x >>= 7;
        }
        p[k++] = (uint8_t)x;
    }
    return k;
}

/* memcpy for the few bytes of a record: rep movsb is microcode, not a call
 * into libc's memcpy, whose code a call would find out of the cache. An
 * inline loop of 8-byte moves was a little faster with the cache warm (the
 * fake driver's loop), but ran 60 more instructions and 4 more code lines
 * a call under bench/shim-lines.sh, whose cold code is the GPU machine's case. */
static inline void copy_bytes(uint8_t *dst, const uint8_t *src, size_t n) {
#if defined(__x86_64__)
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
#else
    if (n) memcpy(dst, src, n); /* src may be NULL when n is 0 */
#endif
}

/* Appends one record whose payload is a followed by b. Returns 0 (and
 * writes nothing) when the file cannot take it. Inline in the Event
 * writer, whose every call runs it. */
static inline int append_locked(int kind, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    if (tf_state != TF_OPEN) return 0;
    uint64_t plen = alen + blen;
    if (plen > ((size_t)1 << 20)) return 0; /* the format's limit: its length takes at most 3 bytes */
    /* Room for the kind, the length, the payload and the byte after the
     * record, which must exist and be the zero end marker. */
    size_t room = 1 + 3 + plen + 1;
    if (tf_used + room > tf_mapsize && !grow(tf_used + room)) return 0;
    uint8_t *p = tf_map + tf_used;
    /* Own the line a kilobyte ahead before we write there: the page is
     * populated, but its lines are out of the cache, and a store that
     * misses holds up the next atomic operation (the lock's release) until
     * the line arrives. On the GPU machine that cut the write phase by a
     * sixth (bench/results/gpu-shim-ab.txt). A prefetch never faults, past
     * the mapping's end too. */
#if defined(__x86_64__)
    __asm__ volatile("prefetchw %0" : : "m"(p[1024]));
#else
    __builtin_prefetch(p + 1024, 1, 3);
#endif
    size_t n = 1 + put_uvarints(p + 1, &plen, 1);
    copy_bytes(p + n, a, alen);
    copy_bytes(p + n + alen, b, blen);
    __atomic_store_n(p, (uint8_t)kind, __ATOMIC_RELEASE); /* commit */
    tf_used += n + plen;
    pf_request_locked();
    return 1;
}

int sc_append_locked(int kind, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    return append_locked(kind, a, alen, b, blen);
}

static int create_file(char *path, size_t pathlen) {
    pid_t pid = getpid();
    for (int i = 0; i < 1000; i++) {
        if (i == 0)
            snprintf(path, pathlen, "%s/streamcheck-%d.sctrace", tf_dir, (int)pid);
        else
            snprintf(path, pathlen, "%s/streamcheck-%d-%d.sctrace", tf_dir, (int)pid, i);
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            /* Held while the file is open here (the kernel drops it when
             * the process ends, however it ends): streamcheck's symbolizing
             * rewrite leaves a locked trace alone, since a writer still
             * appending would go on writing into the replaced file. Taken
             * before the file has a byte, so no one reads it unlocked and
             * whole but unfinished. A fork's child closes its copy of the
             * descriptor, which leaves the parent's lock in place. */
            flock(fd, LOCK_EX | LOCK_NB);
            fchmod(fd, 0600); /* whatever the umask left */
            /* A program started with stdout or stderr closed would write
             * its output into the trace: stay clear of 0-2. */
            if (fd < 3) {
                int high = fcntl(fd, F_DUPFD_CLOEXEC, 3), e = errno;
                close(fd);
                if (high < 0) {
                    unlink(path);
                    errno = e;
                    return -1;
                }
                fd = high;
            }
            return fd;
        }
        if (errno != EEXIST) return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Creates and starts a trace file. The definitions already made (a forked
 * child inherits its parent's) are written again first, with the same ids. */
static int open_locked(void) {
    char path[PATH_MAX + 64];
    tf_fd = create_file(path, sizeof path);
    if (tf_fd < 0 || !grow(INITIAL_SIZE)) {
        int e = errno;
        if (tf_fd >= 0) {
            close(tf_fd);
            unlink(path);
            tf_fd = -1;
        }
        tf_state = TF_FAILED;
        atomic_store(&sc_trace_failed, 1);
        if (!tf_warned) {
            tf_warned = 1;
            dprintf(2, "streamcheck: cannot create trace file %s: %s; CUDA calls are not recorded\n", path,
                    strerror(e));
        }
        return 0;
    }
    static const uint8_t header[16] = {'s', 't', 'r', 'm', 'c', 'h', 'k', 0, 1, 0, 0, 0, 0, 0, 0, 0};
    memcpy(tf_map, header, sizeof header);
    tf_used = sizeof header;
    tf_seq = tf_events = tf_dropped = 0;
    tf_t0 = sc_now_ns();
    tf_state = TF_OPEN;
    for (int i = 0; i < nhooks; i++) {
        if (hooks[i]->replay_locked && !hooks[i]->replay_locked()) {
            tf_state = TF_FAILED;
            atomic_store(&sc_trace_failed, 1);
            break;
        }
    }
    for (int i = 0; i < nhooks && tf_state == TF_OPEN; i++)
        if (hooks[i]->opened_locked) hooks[i]->opened_locked();
    if (tf_state == TF_OPEN) pf_start_locked();
    return tf_state == TF_OPEN;
}

int sc_trace_pending(void) {
    sc_lock_acquire();
    int p = tf_state == TF_NONE || tf_state == TF_PENDING;
    sc_lock_release();
    return p;
}

int sc_trace_setup(int eager) {
    const char *d = getenv("STREAMCHECK_DIR");
    if (d && *d) snprintf(tf_dir, sizeof tf_dir, "%s", d);
    sc_lock_acquire();
    if (tf_state == TF_NONE) tf_state = TF_PENDING;
    int ok = tf_state == TF_OPEN || (eager && tf_state == TF_PENDING && open_locked());
    sc_lock_release();
    return ok;
}

int sc_trace_writable_locked(void) {
    if (tf_state == TF_OPEN) return 1;
    if (tf_state == TF_PENDING) return open_locked();
    return 0;
}

/* ---- events ---- */

/* The optional fields from 21 on, opt[0..nopt), then fields 30..37 of x
 * (sc_ext): each written only with those after it that are set. */
SC_COLD static size_t encode_ext(uint8_t *p, const uint64_t *opt, size_t nopt, const sc_ext *x) {
    uint64_t g[] = {x->dur, x->family, x->pitch, x->height, x->attr, x->src_size, x->nranks, x->live};
    size_t ng = sizeof g / sizeof g[0];
    while (ng > 0 && g[ng - 1] == 0) ng--;
    if (ng == 0)
        while (nopt > 0 && opt[nopt - 1] == 0) nopt--;
    size_t n = put_uvarints(p, opt, nopt);
    return n + put_uvarints(p + n, g, ng);
}

/* Fields 6..36 (api .. ptrs, then the optional ones). */
SC_HOT size_t sc_event_encode(uint8_t *p, const sc_event *e) {
    uint64_t f[] = {e->api, e->stack, sc_zigzag(e->result), e->stream, e->event, e->ptr, e->size, e->src, e->kind,
                    e->flags, e->pool, e->kernel, sc_zigzag(e->prio), e->nptrs,
                    /* optional: most events leave them out; each is written only with those after it that are set */
                    e->graph, e->exec, (uint32_t)e->peer_src, (uint32_t)e->peer_dst, e->node, e->memop, e->mem_flags,
                    e->value, e->nweak};
    size_t nf = sizeof f / sizeof f[0];
    size_t n = put_uvarints(p, f, 14);
    if (e->flags & FLAG_RAW_WORDS) { /* raw words: 8 bytes each, little-endian, copied as they are */
        _Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "raw words are written in the host's byte order");
        memcpy(p + n, e->ptrs, (size_t)e->nptrs * 8);
        n += (size_t)e->nptrs * 8;
    } else {
        n += put_uvarints(p + n, e->ptrs, e->nptrs);
    }
    if (__builtin_expect(e->ext != NULL, 0)) return n + encode_ext(p + n, f + 14, nf - 14, e->ext);
    while (nf > 14 && f[nf - 1] == 0) nf--;
    return n + put_uvarints(p + n, f + 14, nf - 14);
}

/* Event timestamps. clock_gettime cost about 80 ns on the GPU machine (a
 * virtual machine), once per event. With an invariant TSC (x86-64) we read
 * the TSC instead and convert it with a rate measured against
 * CLOCK_MONOTONIC, re-anchored every CAL_SPAN_NS: the error stays within a
 * small fraction of the time since the last anchor. Timestamps only place
 * events on a timeline (order comes from sequence numbers); they never go
 * backwards. */
static int64_t last_event_ns;
#if defined(__x86_64__) /* elsewhere (arm64) the clock alone */
#define CAL_SPAN_NS 10e6
#define CAL_MIN_NS 1000000      /* shortest interval a rate is measured over */
#define CAL_BRACKET_TICKS 20000 /* a few microseconds at any TSC rate in use */
static int tsc_usable = -1;     /* -1 unknown */
static uint64_t cal_tsc;        /* anchor: TSC and clock at the last calibration */
static int64_t cal_ns;
static double ns_per_tick; /* 0 until two anchors CAL_MIN_NS apart were seen */
static uint64_t cal_span;  /* ticks in CAL_SPAN_NS */
#endif

SC_HOT static int64_t event_time_locked(void) {
    int64_t t;
#if defined(__x86_64__)
    if (tsc_usable < 0) {
        unsigned a, b, c, d;
        tsc_usable = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)); /* invariant TSC */
    }
    if (tsc_usable) {
        uint64_t tick = __rdtsc();
        if (ns_per_tick > 0 && tick - cal_tsc < cal_span) {
            t = cal_ns + (int64_t)((double)(tick - cal_tsc) * ns_per_tick);
        } else {
            /* An anchor is the clock bracketed by two TSC reads; if the
             * thread was preempted in between, the pair is not used. */
            t = sc_now_ns();
            uint64_t after = __rdtsc();
            int tight = after - tick < CAL_BRACKET_TICKS;
            tick += (after - tick) / 2;
            if (tight && cal_tsc && tick > cal_tsc && t - cal_ns >= CAL_MIN_NS) {
                ns_per_tick = (double)(t - cal_ns) / (double)(tick - cal_tsc);
                cal_tsc = tick, cal_ns = t;
                cal_span = (uint64_t)(CAL_SPAN_NS / ns_per_tick);
            } else if (tight && !cal_tsc) {
                cal_tsc = tick, cal_ns = t;
            }
        }
    } else
#endif
        t = sc_now_ns();
    if (t < last_event_ns) t = last_event_ns;
    last_event_ns = t;
    return t;
}

/* Appends an Event record: the fields sequence numbers and time give it
 * (op, seq, tid, device, time), then the tail sc_event_encode made. */
SC_HOT void sc_event_append_locked(const sc_event *e, uint32_t tid, const uint8_t *tail, size_t tlen) {
    uint8_t head[64];
    uint64_t h[] = {e->op, tf_seq + 1, tid, sc_zigzag(e->device), sc_zigzag(event_time_locked() - tf_t0)};
    size_t hn = put_uvarints(head, h, sizeof h / sizeof h[0]);
    if (append_locked(REC_EVENT, head, hn, tail, tlen)) {
        tf_seq++;
        tf_events++;
    } else {
        tf_dropped++;
    }
}

/* The trace's length and events so far (STREAMCHECK_STATS: read after
 * sc_trace_finish, they are the file's). */
uint64_t sc_trace_bytes(void) { return tf_used; }
uint64_t sc_trace_events(void) { return tf_events; }

/* Events that could not be written, though no End record may ever say so. */
void sc_events_dropped_locked(uint64_t n) { tf_dropped += n; }

/* ---- end ---- */

void sc_trace_finish(void) {
    /* Never hang an exiting process: if the lock stays taken (a thread was
     * killed inside it, or exit() runs in a signal handler that interrupted
     * a write), leave the trace without its End record. */
    int locked = 0;
    for (int i = 0; i < 2000; i++) {
        if (lock_try()) {
            locked = 1;
            break;
        }
        struct timespec d = {0, 100000};
        nanosleep(&d, NULL);
    }
    if (!locked) return;
    if (tf_state == TF_OPEN) {
        uint8_t buf[24];
        size_t n = sc_put_uvarint(buf, tf_events);
        n += sc_put_uvarint(buf + n, tf_dropped);
        sc_append_locked(REC_END, buf, n, NULL, 0);
        pf_stop();
        pthread_rwlock_wrlock(&pf_maplock); /* waits for a populate step in progress */
        munmap(tf_map, tf_mapsize);
        tf_map = NULL;
        tf_mapsize = 0;
        pthread_rwlock_unlock(&pf_maplock);
        if (ftruncate(tf_fd, (off_t)tf_used) != 0) { /* the zero tail is harmless */
        }
        close(tf_fd);
        tf_fd = -1;
        tf_state = TF_CLOSED;
    } else if (tf_state != TF_NONE) {
        tf_state = TF_CLOSED;
    }
    sc_lock_release();
}

/* ---- fork ---- */

/* The hooks' prepare handlers run before the writer takes sc_lock, in the
 * reverse of their order, and their parent and child handlers after it
 * lets go of it, in order: as pthread_atfork runs handlers registered one
 * after another. */
void sc_atfork_prepare(void) {
    for (int i = nhooks - 1; i >= 0; i--)
        if (hooks[i]->fork_prepare) hooks[i]->fork_prepare();
    sc_lock_acquire();
}

void sc_atfork_parent(void) {
    sc_lock_release();
    for (int i = 0; i < nhooks; i++)
        if (hooks[i]->fork_parent) hooks[i]->fork_parent();
}

void sc_atfork_child(void) {
    atomic_store(&sc_lock_word, 0); /* the thread that held it did not come along */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    /* The helper thread did not come along; its locks may have been held. */
    pthread_rwlock_t fresh_rw = PTHREAD_RWLOCK_INITIALIZER;
    memcpy(&pf_maplock, &fresh_rw, sizeof fresh_rw);
    memcpy(&pf_mu, &fresh, sizeof fresh);
    pthread_cond_t fresh_cv = PTHREAD_COND_INITIALIZER;
    memcpy(&pf_cv, &fresh_cv, sizeof fresh_cv);
    pf_state = PF_OFF;
    pf_asked = 0;
    pf_want = pf_drop = 0;
    atomic_store(&sc_trace_failed, 0); /* the child tries its own file */
    atomic_fetch_add(&sc_fork_gen, 1);
    if (tf_state == TF_OPEN || tf_state == TF_FAILED || tf_state == TF_PENDING) {
        if (tf_map) munmap(tf_map, tf_mapsize); /* the parent's file: hands off */
        if (tf_fd >= 0) close(tf_fd);
        tf_map = NULL;
        tf_mapsize = 0;
        tf_fd = -1;
        tf_used = 0;
        tf_seq = tf_events = tf_dropped = 0;
        tf_warned = 0;
        tf_state = TF_PENDING;
    }
    for (int i = 0; i < nhooks; i++)
        if (hooks[i]->fork_child) hooks[i]->fork_child();
}
