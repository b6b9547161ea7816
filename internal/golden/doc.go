// Package golden compares test output with golden files, which the test
// packages' -update flags rewrite instead, and reads the trace sections of
// the checker's txtar golden files for other packages' tests.
package golden
