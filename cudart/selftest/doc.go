// Package selftest holds streamcheck's built-in GPU self-test: small
// programs that make known stream-ordered allocation mistakes (and their
// corrected forms) on a real GPU, through the driver API bindings of
// package cudart, with a kernel loaded from embedded PTX.
//
// "streamcheck doctor" runs each Case in a child process recorded by the
// shim (Run, in the child) and then checks the child's trace (Analyze, in
// the parent): a case passes when the checker finds exactly the rules the
// case expects. That exercises the whole chain on the machine at hand: the
// driver loads the shim, CUPTI delivers the callbacks, the shim records
// allocations, launches with their pointer arguments, events and syncs,
// the trace reads back, and the checker reports what it should.
package selftest
