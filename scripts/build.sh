#!/usr/bin/env bash
# Builds the streamcheck CLI and the recording shim into bin/.
#
#   scripts/build.sh              bin/streamcheck and bin/libstreamcheck.so
#   scripts/build.sh shim [OUT]   the shim only, into OUT (default: bin/libstreamcheck.so
#                                 of the repository)
#
# The shim is plain C, compiled by $CC (default cc) from intercept/*.c: no Go
# runtime goes into the traced program. The tests build it with this script
# too (internal/shimbuild), so this is the one place its compile command is
# written. $SHIM_CFLAGS adds compiler flags (e.g. -fsanitize=address).
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."

# shim OUT: -fvisibility=hidden exports only what is marked SC_EXPORT
# (InitializeInjection); -z nodelete keeps the library mapped if it is ever
# dlclosed, since CUPTI's callbacks and the shim's threads point into it;
# -z defs fails the build on an undefined symbol rather than the traced
# program at load.
shim() {
	local out=$1
	mkdir -p "$(dirname "$out")"
	# shellcheck disable=SC2086 # SHIM_CFLAGS is a list of flags
	"${CC:-cc}" -shared -fPIC -O2 -g -std=gnu11 -pthread \
		-Wall -Wextra -Wno-unused-parameter -fvisibility=hidden ${SHIM_CFLAGS:-} \
		-o "$out" intercept/*.c \
		-Wl,-z,nodelete -Wl,-z,defs -ldl -lpthread
}

case "${1:-all}" in
shim)
	out=${2:-bin/libstreamcheck.so}
	if [ -n "${2:-}" ] && [ "${out#/}" = "$out" ]; then out=$here/$out; fi # OUT is relative to the caller's directory
	shim "$out"
	echo "built $out"
	;;
all)
	mkdir -p bin
	go build -o bin/streamcheck ./cmd/streamcheck
	shim bin/libstreamcheck.so
	rm -f bin/libstreamcheck.h # written by the earlier Go (c-shared) build of the shim
	echo "built bin/streamcheck and bin/libstreamcheck.so"
	;;
*)
	echo "usage: scripts/build.sh [shim [OUT]]" >&2
	exit 2
	;;
esac
