// Package synth generates synthetic binary traces for benchmarks and
// scaling tests.
//
// A trace from Write looks like the one the recording shim writes for a
// training-style program: a few host threads drive Config.Streams streams
// (some blocking, most non-blocking) from a handful of call sites; a working
// set of about Config.LiveAllocs stream-ordered allocations churns through
// cudaMallocAsync and cudaFreeAsync, and a pool hands freed addresses back
// out (to the stream that freed them, or to another after an event
// hand-off, so the pool's footprint stays bounded); kernels take one to
// four device pointers, some of them interior, and mostly name what their
// stream allocated or was handed lately, as a kernel consumes what the
// kernels before it produced (Config.Uniform turns that locality off);
// memcpy and memset are issued asynchronously; streams hand buffers to each
// other with cudaEventRecord and cudaStreamWaitEvent; the legacy default
// stream is used now and then by synchronous calls; the host occasionally
// synchronizes a stream or an event.
//
// The program is almost correct: every buffer has an owning stream, and a
// buffer moves to another stream only through an event hand-off, so nearly
// every use is ordered after its allocation and every free after its uses.
// About one event in 500,000 deliberately uses a buffer on a stream it was
// not handed to and frees it on its owner right after, so the checker has a
// few races to report.
//
// Output is a function of the Config alone (the generator uses a seeded
// math/rand/v2 PCG source), so benchmarks can cache a trace by its config.
package synth
