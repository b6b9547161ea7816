//go:build ignore

/*
 * callbacks.c: the CUPTI backend's callback, which feeds the recorder
 * (recorder.c) the driver calls CUPTI reports.
 *
 * Events are recorded at the exit site of DRIVER_API callbacks, where the
 * result and the returned handles and pointers are known; every runtime call
 * reaches the driver, so this sees runtime users, driver users, static cudart
 * and CuPy alike. Driver entries go to the recorder only for the calls whose
 * entry has work (frees, timed calls, host functions). RUNTIME_API callbacks
 * only remember, per thread, which runtime function is in progress, so the
 * driver call inside it is recorded once, under the name the program used
 * ("cudaMallocAsync").
 */
#define _GNU_SOURCE
#include <errno.h>

#include "decode.h"

int sc_stats;

SC_HOT void sc_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata) {
    (void)userdata;
    if (!atomic_load_explicit(&sc_active, memory_order_relaxed) || !cbdata || cbid >= MAXCB || sc_callback_only ||
        atomic_load_explicit(&sc_trace_failed, memory_order_relaxed))
        return;
    const sc_CUpti_CallbackData *cb = cbdata;
    int driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    int driver_exit = driver && cb->callbackSite == CUPTI_API_EXIT;
    /* Driver entries matter only for frees and destroys, the timed calls and host functions. */
    if (driver && (!sc_drv_calls[cbid].decode || (!driver_exit && !sc_drv_calls[cbid].entry))) return;
    if (!driver && domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
    int saved = errno; /* the program must never see ours */
    sc_tstate *ts = sc_tls();
    if (ts && !ts->busy) {
        if (driver && !driver_exit) {
            sc_call_enter(ts, cbid, cb);
        } else if (driver_exit) {
            sc_call_exit(ts, cbid, cb);
        } else if (cb->callbackSite == CUPTI_API_ENTER) {
            if (ts->rt_depth++ == 0) ts->rt_cbid = cbid;
        } else if (ts->rt_depth > 0) {
            ts->rt_depth--;
        }
    }
    errno = saved;
}
