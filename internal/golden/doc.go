// Package golden compares test output with golden files, which the test
// packages' -update flags rewrite instead.
package golden
