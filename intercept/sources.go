package intercept

import "embed"

// Sources holds the shim's C sources and build.flags, its compile flags,
// so that a streamcheck installed without the shim (go install) can build
// it with the system's C compiler (package launch, `streamcheck
// install-shim`). Embedding reads the C files whatever their build
// constraint says.
//
//go:embed *.c *.h build.flags
var Sources embed.FS
