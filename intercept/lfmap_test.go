package intercept

import "testing"

// TestLFMapChurn looks keys up while a writer adds and deletes others for
// ever (testdata/lfmaprace.c): the tables a rebuild or a clear replaces
// are refilled while readers may still probe them, and a reader must never
// return another key's value, a key deleted before it looked, or a key
// never added, and the writer must not stall on a refilled table. Under
// ThreadSanitizer (CI) it also checks the map's memory ordering.
func TestLFMapChurn(t *testing.T) {
	runUnitProgram(t, buildUnitProgram(t, "lfmaprace", "testdata/lfmaprace.c", "lfmap.c"))
}
