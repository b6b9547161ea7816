// Package launch finds the recording shim (libstreamcheck.so, built from
// the C sources in intercept/) and builds the environment that loads it into a
// program, for `streamcheck run` and `record`, and watches for the perf
// maps that the program's Python processes write, so the launcher can
// remove them afterwards (PerfMaps).
package launch
