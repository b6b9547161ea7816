package shimbuild

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// CFlags returns $SHIM_CFLAGS as words: the flags scripts/build.sh adds to
// the shim's compile command. CI sets a sanitizer's there
// (-fsanitize=address,undefined or -fsanitize=thread); tests that compile
// the shim's sources into a program of their own add them too.
func CFlags() []string { return strings.Fields(os.Getenv("SHIM_CFLAGS")) }

// sanitizerLib matches the sanitizer runtimes a library built with
// -fsanitize needs (GCC's shared runtimes, and clang's with -shared-libsan).
var sanitizerLib = regexp.MustCompile(`^(libasan|libtsan|libubsan|libclang_rt\.[a-z_]+(san|san_standalone)-[a-z0-9_]+)\.so`)

// Runtimes returns the paths of the sanitizer runtimes that the shim at
// path needs, none for a shim built without a sanitizer. A program that
// is not built with a sanitizer and loads such a shim (by LD_PRELOAD or
// dlopen) must preload these first: ASan and TSan refuse to start when
// their runtime is not the first library loaded.
func Runtimes(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, l := range libs {
		if !sanitizerLib.MatchString(l) {
			continue
		}
		// The compiler knows where its runtimes are.
		b, err := exec.Command(CC(), "-print-file-name="+l).Output()
		p := strings.TrimSpace(string(b))
		if err != nil || !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%s needs %s, which %s -print-file-name does not find (%v)", path, l, CC(), err)
		}
		out = append(out, p)
	}
	return out, nil
}

// SanitizerOptions is the environment for a program that runs a
// sanitizer-built shim: any report ends the program with exit code
// SanitizerExit and prints its stack, so a test sees it. ASan leaves the
// crash signals to the program (the shim's crash handler is under test)
// and does not check for leaks at exit: the shim keeps its tables until the
// process ends, by design.
func SanitizerOptions() []string {
	common := fmt.Sprintf("halt_on_error=1:exitcode=%d:print_stacktrace=1", SanitizerExit)
	return []string{
		"ASAN_OPTIONS=" + common + ":detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:allow_user_segv_handler=1",
		"TSAN_OPTIONS=" + common,
		"UBSAN_OPTIONS=" + common,
	}
}

// SanitizerExit is the exit code SanitizerOptions gives a program that a
// sanitizer stopped.
const SanitizerExit = 86

// reportLine matches the first line of a sanitizer's report.
var reportLine = regexp.MustCompile(`(?m)^.*(ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: |runtime error: ).*$`)

// Report returns the first line of a sanitizer report in a program's
// output, or "" when there is none.
func Report(output string) string {
	return reportLine.FindString(output)
}
