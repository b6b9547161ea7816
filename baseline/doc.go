// Package baseline identifies findings across runs by a fingerprint, and
// reads and writes baseline files: the fingerprints of findings accepted
// when a project adopted streamcheck, so that CI fails on new findings
// only.
//
// A fingerprint hashes a finding's rule and, for its allocation and each
// of its operations, the role, the API, the kernel and the call site (the
// innermost frame that names a source file; the stream when no stack was
// recorded). It never hashes addresses, sequence numbers or the trace's
// name, which change from run to run. The same fingerprints are SARIF's
// partialFingerprints (key FingerprintKey). Moving a call to another line
// changes its fingerprint: the finding is then new.
//
// A finding stands for every occurrence of its root cause (checker.Finding):
// its allocation and operations, and so its fingerprint, are those of its
// first occurrence. Occurrences on other allocations, and a
// reuse-while-in-flight folded into a use-before-alloc at the same use, do
// not change it, so a baseline that listed them as separate findings still
// accepts the one finding that now stands for them.
//
// # File format
//
// A baseline is one JSON object:
//
//	{
//	  "version": 1,
//	  "fingerprint": "streamcheckSites/v3",
//	  "findings": [
//	    {
//	      "fingerprint": "3f1c0e…",
//	      "rule": "use-before-alloc",
//	      "where": "cudaLaunchKernel of scale on stream s2 at step app/main.cu:41"
//	    }
//	  ]
//	}
//
// "fingerprint" at the top names the fingerprint scheme; a baseline written
// with another scheme is rejected (write a new one). Only the fingerprints
// of "findings" are used; "rule" and "where" are for people reviewing the
// file. Entries are sorted by rule (in checker.Rules order), then where,
// and each fingerprint appears once.
package baseline
