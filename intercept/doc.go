// Package intercept holds the recording shim: a shared library, written in
// C (the *.c files here), that records the CUDA calls of a process into a
// binary trace (docs/trace-format.md). The package's Go code is its tests
// and Sources.
//
// scripts/build.sh builds it into bin/, next to bin/streamcheck, where
// streamcheck run looks for it; the shim alone:
//
//	scripts/build.sh shim [OUT.so]
//
// which runs the C compiler ($CC, default cc) on intercept/*.c, with
// -shared -fPIC -O2, linking libdl and libpthread. No CUDA headers or
// libraries are needed at build time, and no Go: the library holds no Go
// runtime, so the traced program gets no runtime threads or signal
// handlers from it, and a forked child has no runtime to hang. The tests
// build it with the same script (internal/shimbuild). The compile flags are
// in build.flags; Sources embeds the C files and those flags, from which a
// streamcheck installed with go install builds the shim itself.
//
// # Why the C files carry //go:build ignore
//
// The C files stay in this package's directory, beside the tests that load
// them and the paths that name them (docs, bench scripts), but no Go build
// compiles them: each begins with the build constraint //go:build ignore,
// which the C compiler reads as a comment. Without it the go command would
// refuse the package (C files are only allowed in a cgo package), and with
// cgo it would link the shim into every Go binary or test of the package.
// A new C file needs the same first line.
//
// # Loading
//
// The library is loaded into the traced program in one of two ways:
//
//   - CUDA_INJECTION64_PATH=/path/libstreamcheck.so (preferred): the CUDA
//     driver loads it at cuInit and calls its InitializeInjection.
//   - LD_PRELOAD=/path/libstreamcheck.so with STREAMCHECK_PRELOAD=1: the
//     library's constructor starts recording when the program is loaded.
//     Without STREAMCHECK_PRELOAD=1 a preloaded copy does nothing.
//
// Package launch (intercept/launch) finds the library and builds that
// environment for `streamcheck run`.
//
// # Backends
//
// Two backends feed one recorder (recorder.c's per-call path), chosen by
// STREAMCHECK_BACKEND:
//
//   - cupti: the shim subscribes to CUPTI's driver callbacks (libcupti is
//     loaded at run time). It records injected or preloaded, and holds
//     CUPTI's one subscriber slot.
//   - interpose (interpose.c; the default when preloaded): the preloaded shim exports the driver's names
//     of the functions it records (drvcalls.h), and hands its wrappers out
//     through cuGetProcAddress/cuGetProcAddress_v2 and dlsym on libcuda, with
//     the per-thread-default-stream (_ptsz, _ptds) and versioned (_v2, _v3)
//     variants each its own wrapper. A wrapper lays its arguments out as
//     CUPTI's "_params" struct, runs the per-call path's entry, calls the
//     real function, and records at its exit, returning the real result; the
//     query results of cuGetProcAddress stay the driver's. It needs the shim
//     preloaded: loaded by the driver (CUDA_INJECTION64_PATH) it warns and
//     records with CUPTI. It opens libcuda when the process first reaches
//     the driver through it (loader.c), not at load, unless libcuda is
//     already loaded then. CUPTI stays free for profilers. Events carry the
//     driver function's name (no runtime callbacks); dlvsym is not
//     interposed (the shim finds the real dlsym through it).
//
// The trace's Process record names the backend in the recorder string
// ("streamcheck-intercept 0.2.0 (trace format 1; backend interpose)").
//
// Either way the shim records, at the exit of each driver call, the stream-ordered operations
// the analyzer needs: stream and event lifetimes, records, waits and
// synchronizations, allocations and frees (stream-ordered, and each
// synchronous family: device, pitched, managed, pinned and registered host
// memory, with the family and the time spent inside the call), virtual
// memory mappings (cuMemMap, cuMemUnmap), pool attributes, the device's
// current pool and pool trims (a device's default pool as pool 0), kernel
// launches with the device addresses found in their parameters, copies,
// memsets (batched copies one event a copy), host functions, graph
// capture (with the graph each capture builds, from cuStreamGetCaptureInfo,
// or adds to), instantiation, update and launch (with the executable
// graph), the calls that create, destroy or change a graph or executable
// graph (graph_forget), nodes added to a graph by hand (kernel, copy, set
// and batch memory operation nodes as launches, copies, sets and stream
// memory operations marked as graph nodes; event record and wait nodes,
// and their new events, with the node's handle; clones and child graph
// nodes as graph_clone, and each body of a conditional node as a
// graph_clone marked conditional), event records and waits with the
// external flags, stream memory operations (cuStreamWaitValue32 and the
// like, with the value and flags, one event per operation of a batch), and
// pool creation. A runtime call and the driver call inside it are one
// event: the shim records
// the driver call, and the analyzer names it after the runtime function found
// in its stack. Every event carries a host stack (deduplicated) and the
// trace carries the module map needed to symbolize it offline. In Python
// 3.12+ programs run with PYTHONPERFSUPPORT=1, stacks go on through
// CPython's trampolines to the calling Python functions (pytramp.c), which
// the process's perf map names; in CPython 3.12 and 3.13 each Python frame
// also carries the line it is at (pylines.c), read from the calling thread's
// own frames, with or without the GIL.
//
// Frees and destroys are announced at their entry callback (releases.c): a
// thread that gets the same address or handle back from the driver before
// the release's exit callback has recorded it waits, so the trace never
// frees or destroys the new owner. Kernel parameter layouts, cached per
// function handle, are dropped when modules are unloaded or contexts
// destroyed, since a handle may then name another kernel.
//
// Host functions (cuLaunchHostFunc, cuStreamAddCallback) are wrapped at
// their entry callback (hostfn.c): the call's parameters get a trampoline
// of the shim's and a record of the program's function, argument and a
// token, so that the host function's run is recorded (host_fn_run, on the
// thread that runs it) before the program's function runs. Graph host
// nodes (cuGraphAddHostNode, cudaGraphAddHostNode) are not wrapped.
//
// The synchronous allocations and frees are timed: their entry callback
// leaves the clock in CUPTI's correlation data, which the exit callback
// reads (sc_call_dur). No other call's entry does more than before, and
// their fields past field 29 (sc_ext) are written only for the events that
// have them.
//
// # Environment
//
//	STREAMCHECK_DIR          directory for traces and error markers (default ".")
//	STREAMCHECK_BACKEND      interpose or cupti (see Backends; unset: interpose
//	                         when preloaded, cupti when the driver loads the
//	                         shim); anything else is an error (no recording)
//	STREAMCHECK_PRELOAD=1    start from the constructor (LD_PRELOAD use)
//	STREAMCHECK_LAUNCHER=1   set by `streamcheck run` and `record`, which report
//	                         the error markers: the shim then does not also print
//	                         why it cannot record (unless the marker cannot be written)
//	STREAMCHECK_HOSTFN       how host functions' runs are recorded: wrap (default:
//	                         a trampoline in the call's parameters), marker (a
//	                         marker host function enqueued before the program's;
//	                         none in a capture), off (runs not recorded)
//	STREAMCHECK_STACK_DEPTH  host frames kept per event (default 32, 64 in a Python process,
//	                         one with libpython loaded; 0 = no stacks, at most 128)
//	STREAMCHECK_STACK_CACHE_NODES  size of each thread's stack cache in trie nodes
//	                         (16 to 65536, the default); when full it starts over.
//	                         Tests lower it to exercise that path
//	STREAMCHECK_RUNTIME_NAMES=1  also subscribe to runtime-API callbacks, so events
//	                         carry the runtime name (cudaMallocAsync) directly. Off by
//	                         default, as it costs more time per call (a launch-bound
//	                         loop on an H200: 1.30x-1.47x native, against 1.27x-1.36x
//	                         without, bench/results/gpu-overhead.txt); the analyzer
//	                         recovers the runtime name from the recorded stack instead.
//	STREAMCHECK_PYTHON_CALLERS=0  stacks of Python 3.12+ programs end at the innermost
//	                         Python function instead of unwinding through CPython's
//	                         trampolines to its callers (see pytramp.c)
//	STREAMCHECK_PYTHON_LINES=0  Python frames without their lines (see pylines.c)
//	STREAMCHECK_RAW_WORDS=0  match a launch's parameter words against the allocation
//	                         map here instead of writing them for the reader to
//	                         match (see params.c, model/launchwords.go)
//	STREAMCHECK_PREFAULT=0   no helper thread faulting trace pages in ahead of the
//	                         writer (on by default; see tracefile.c)
//	STREAMCHECK_CALLBACK_ONLY=1  the backend runs (CUPTI subscribed, or the wrappers
//	                         in place) but records nothing: its own cost
//	STREAMCHECK_STATS=1      at exit, print on stderr how many calls were recorded,
//	                         the shim's own time per call (and per phase: decoding
//	                         and launch scans, stack, trace write, allocation map)
//	                         and the stack cache's hits, the unwinds (frames walked,
//	                         time each), the launch scans (words, those written
//	                         raw, time each), the search for CPython's trampolines
//	                         (maps reads) and the trace's bytes and events; under
//	                         interposition, also what the program asked of the
//	                         shim (cuGetProcAddress calls and the answers swapped,
//	                         dlsym lookups in libcuda, the first one's name, and
//	                         lookups of cuGetProcAddress in other libraries)
//	STREAMCHECK_CUPTI        libcupti to use, a file or the directory holding it,
//	                         tried first; then the search: a libcupti the
//	                         program loaded, libcupti.so, libcupti.so.13,
//	                         libcupti.so.12, $CUDA_HOME/lib64, $CUDA_PATH/lib64,
//	                         /usr/local/cuda/lib64,
//	                         /usr/local/cuda/extras/CUPTI/lib64, the directory of
//	                         a loaded libcudart and its ../../cuda_cupti/lib. A
//	                         setting that cannot be loaded is named in a warning
//	                         when the search finds another, else in the error)
//	STREAMCHECK_LIBCUDA      path of the driver library for the shim's own
//	                         queries (default libcuda.so.1); one that cannot
//	                         be loaded is an error (the shim does not record:
//	                         without it, findings would be lost)
//
// # Output
//
// Each process writes <dir>/streamcheck-<pid>.sctrace (a -N suffix is added
// if the name is taken), mode 0600. A forked child that makes CUDA calls
// writes its own file; a child that execs loads the shim again through the
// inherited environment. Under LD_PRELOAD a process that never makes a
// recorded CUDA call leaves no trace; with STREAMCHECK_LAUNCHER=1 it creates
// <dir>/streamcheck-<pid>.loaded (empty) as it loads, so the launcher can
// tell that the shim was loaded at all, and at a normal exit without a
// trace says why: <dir>/streamcheck-<pid>.nocuda when the process never
// initialized the driver, an error marker when it initialized it but never
// asked the interposing shim for an entry point, else an empty trace. The file is complete once the process
// exits normally (End record); a process killed or crashed leaves every event
// recorded before that point, and readers report the trace as truncated.
//
// If CUPTI cannot be loaded or subscribed (another profiler may hold it),
// the shim prints one line, "streamcheck: cannot record CUDA calls:
// <reason>", on stderr and writes the reason to <dir>/streamcheck-<pid>.error;
// the program runs on unchanged. (Preloaded on a machine without the CUDA
// driver, where a process can make no CUDA call, it does neither.) The shim never changes the program's
// results, exit status or errno.
//
// # Layers
//
// The C files form layers, each calling only those below it: the trace
// writer (tracefile.c: the file, sc_lock, encoding and appending records),
// the definition tables that write through it (strings in tables.c,
// modules.c, stacks.c), the per-process state (the allocation map, the
// releases, the CPython trampolines), the recorder (recorder.c: the
// per-call path, the per-thread state, what events imply about streams),
// and the backends that feed it (callbacks.c for CUPTI, interpose.c,
// nccl.c, hostfn.c). The writer reaches the layers above only through the
// hooks they register (sc_writer_register: replay at a new file, the
// Process record, fork handlers), in the order sc_recorder_init sets.
// TestLayersLinkAlone links the writer alone, and with the tables, so a
// call upward fails the build of the test.
//
// # The per-call path
//
// Every recorded call runs sc_callback (callbacks.c, or an interposed
// wrapper's ip_run) and handle_driver (recorder.c), the
// decoder that its row of the table of driver functions names (apitable.c;
// the decoders are in decode_*.c by API family: streams and events,
// allocations and interprocess handles, launches, copies and sets, stream
// memory operations, graphs; and decode_layouts.c's, chosen by a call's
// parameter layout alone, the op from the row), the stack lookup (stacks.c) and sc_emit
// (recorder.c: a stream first seen in use gets its implicit create; then
// the writer's encoding, and the append under sc_lock, tracefile.c). A call finds this code out of
// the CPU's caches, since the driver's own code ran since the last call, so
// it is kept small: the decoders of the calls a program makes rarely are
// SC_COLD, kept apart, and the functions every call runs are marked SC_HOT,
// which places them side by side.
// bench/shim-lines.sh counts the instructions and lines of code a call runs.
package intercept
