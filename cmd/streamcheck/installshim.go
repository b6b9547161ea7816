package main

import (
	"fmt"

	"github.com/streamcheck/streamcheck/intercept/launch"
)

const installShimUsage = `
usage: streamcheck install-shim

Install-shim builds the recording shim (libstreamcheck.so) from the C
sources embedded in streamcheck with the system's C compiler ($CC, or cc)
into the user's cache directory, and prints its path. run, record and
doctor do the same on first use when they find no shim next to the
streamcheck binary, in ../lib, or at $STREAMCHECK_SHIM (those come first);
install-shim does it ahead, for example while building a CI image. A shim
already built from the same sources with the same compiler is kept.

Exit codes: 0 built (or already there), 2 no C compiler, or the build
failed (the compiler's output is printed).
`

// cmdInstallShim builds the shim from the embedded sources into the cache.
func (c *cli) cmdInstallShim(args []string) int {
	pos, code, done := c.parseFlags(newFlags("install-shim"), installShimUsage, args, false)
	if done {
		return code
	}
	if len(pos) > 0 {
		return c.usageErrorf("install-shim takes no arguments")
	}
	p, err := launch.BuildCached(c.stderr)
	if err != nil {
		return c.usageErrorf("%v", err)
	}
	fmt.Fprintln(c.stdout, p)
	return exitOK
}
