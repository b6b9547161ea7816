//go:build ignore

/*
 * modules.c: the loaded objects of the process, as Module records, so the
 * analyzer can turn a stack pc into (file, ELF virtual address) offline.
 *
 * For each object dl_iterate_phdr reports we record
 *   base = dlpi_addr, the load bias: ELF virtual address = pc - base;
 *   size = end of the highest PT_LOAD segment (p_vaddr + p_memsz),
 * so pc belongs to the module when base <= pc < base + size (and, to pick
 * between objects, we also require pc >= base + lowest p_vaddr).
 * The main program (empty dlpi_name) is named by /proc/self/exe.
 *
 * The table is scanned at start and again when a new stack has a pc outside
 * every known module and the loader's add/remove counters have moved since
 * the last scan (dlopen after start). All of it runs under sc_lock, only when
 * a new stack is defined, never per call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

typedef struct {
    uint64_t base, size; /* as recorded */
    uint64_t lo, hi;     /* mapped address range, for lookups */
    uint32_t path;       /* string id */
} sc_module;

static sc_module *mods; /* id -> module; mods[0] unused */
static uint32_t nmods = 1;
static uint32_t capmods;
static unsigned long long seen_adds, seen_subs;
static int scanned;
static char exe_path[PATH_MAX];

static int write_module_record(uint32_t id) {
    uint8_t buf[40];
    size_t n = 0;
    n += sc_put_uvarint(buf + n, id);
    n += sc_put_uvarint(buf + n, mods[id].base);
    n += sc_put_uvarint(buf + n, mods[id].size);
    n += sc_put_uvarint(buf + n, mods[id].path);
    return sc_append_locked(REC_MODULE, buf, n, NULL, 0);
}

static void object_range(struct dl_phdr_info *info, uint64_t *minv, uint64_t *maxv) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        if (ph->p_vaddr < lo) lo = ph->p_vaddr;
        if (ph->p_vaddr + ph->p_memsz > hi) hi = ph->p_vaddr + ph->p_memsz;
    }
    if (lo == UINT64_MAX) lo = hi = 0;
    *minv = lo;
    *maxv = hi;
}

static int scan_cb(struct dl_phdr_info *info, size_t size, void *data) {
    (void)data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        seen_adds = info->dlpi_adds;
        seen_subs = info->dlpi_subs;
    }
    uint64_t minv, maxv;
    object_range(info, &minv, &maxv);
    if (maxv == 0) return 0;
    uint64_t base = info->dlpi_addr;
    uint64_t lo = base + minv, hi = base + maxv;
    const char *name = info->dlpi_name;
    if (!name || !*name) {
        if (!exe_path[0]) {
            ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
            exe_path[n > 0 ? n : 0] = 0;
        }
        name = exe_path;
    }
    for (uint32_t id = nmods - 1; id >= 1; id--)
        if (mods[id].lo == lo && mods[id].hi == hi) return 0; /* already known */
    if (nmods >= capmods) {
        uint32_t nc = capmods ? capmods * 2 : 128;
        sc_module *nm = realloc(mods, nc * sizeof *nm);
        if (!nm) return 1;
        mods = nm;
        capmods = nc;
    }
    uint32_t path = sc_intern_locked(name, strlen(name));
    uint32_t id = nmods;
    mods[id] = (sc_module){.base = base, .size = maxv, .lo = lo, .hi = hi, .path = path};
    if (!write_module_record(id)) return 1;
    nmods++;
    return 0;
}

static void rescan_locked(void) {
    if (!sc_trace_writable_locked()) return;
    dl_iterate_phdr(scan_cb, NULL);
    scanned = 1;
}

void sc_modules_init_locked(void) {
    if (!scanned) rescan_locked();
}

static int counters_cb(struct dl_phdr_info *info, size_t size, void *data) {
    unsigned long long *c = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1; /* the counters are the same in every entry: stop after one */
}

static uint32_t lookup(uint64_t pc) {
    /* Newest first: an address reused after dlclose belongs to the newer object. */
    for (uint32_t id = nmods - 1; id >= 1; id--)
        if (pc >= mods[id].lo && pc < mods[id].hi) return id;
    return 0;
}

uint32_t sc_module_of_locked(uint64_t pc) {
    uint32_t id = lookup(pc);
    if (id) return id;
    unsigned long long c[2] = {seen_adds, seen_subs};
    dl_iterate_phdr(counters_cb, c);
    if (!scanned || c[0] != seen_adds || c[1] != seen_subs) {
        rescan_locked();
        id = lookup(pc);
    }
    return id;
}

static int replay_modules_locked(void) {
    for (uint32_t id = 1; id < nmods; id++)
        if (!write_module_record(id)) return 0;
    return 1;
}

const sc_writer_hooks sc_modules_hooks = {.replay_locked = replay_modules_locked, .opened_locked = sc_modules_init_locked};

/* ---- the address range of the object holding addr (not recorded) ---- */

typedef struct {
    uint64_t addr, lo, hi;
    char *path;
    size_t pathlen;
} range_query;

static int range_cb(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    range_query *q = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uint64_t s = info->dlpi_addr + ph->p_vaddr;
        if (q->addr >= s && q->addr < s + ph->p_memsz) {
            uint64_t minv, maxv;
            object_range(info, &minv, &maxv);
            q->lo = info->dlpi_addr + minv;
            q->hi = info->dlpi_addr + maxv;
            if (q->path && q->pathlen) {
                const char *n = info->dlpi_name ? info->dlpi_name : "";
                strncpy(q->path, n, q->pathlen - 1);
                q->path[q->pathlen - 1] = 0;
            }
            return 1;
        }
    }
    return 0;
}

void sc_module_range_of(const void *addr, uint64_t *lo, uint64_t *hi, char *path, size_t pathlen) {
    range_query q = {.addr = (uint64_t)(uintptr_t)addr, .path = path, .pathlen = pathlen};
    if (path && pathlen) path[0] = 0;
    dl_iterate_phdr(range_cb, &q);
    *lo = q.lo;
    *hi = q.hi;
}
