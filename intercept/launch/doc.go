// Package launch finds the recording shim (libstreamcheck.so, built from
// the C sources in intercept/, or built by it from the sources streamcheck
// embeds into the user's cache: cache.go) and builds the environment that loads it into a
// program, for `streamcheck run` and `record`, and watches for the perf
// maps that the program's Python processes write, so the launcher can
// remove them afterwards (PerfMaps).
package launch
