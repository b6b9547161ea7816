//go:build !linux

package launch

import "errors"

// PerfMaps collects the perf maps of a process tree's Python processes
// (Linux only: CPython writes perf maps only there).
type PerfMaps struct{}

// WatchPerfMaps is unavailable off Linux.
func WatchPerfMaps(dir string, root int) (*PerfMaps, error) {
	return nil, errors.New("perf maps are watched on Linux only")
}

// Stop returns nothing off Linux.
func (w *PerfMaps) Stop() []string { return nil }
