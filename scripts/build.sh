#!/usr/bin/env bash
# Builds the streamcheck CLI and the recording shim into bin/.
#
#   scripts/build.sh              bin/streamcheck and bin/libstreamcheck.so
#   scripts/build.sh shim [OUT]   the shim only, into OUT (default: bin/libstreamcheck.so
#                                 of the repository)
#   scripts/build.sh cli OUT      the CLI only, into OUT, for $GOOS/$GOARCH (scripts/release.sh)
#
# The shim is plain C, compiled by $CC (default cc) from intercept/*.c with
# the flags of intercept/build.flags: no Go runtime goes into the traced
# program. Warnings are errors here (CI builds with this script); the build
# streamcheck does of its embedded sources for a `go install`ed CLI does not
# add -Werror, since a newer compiler may warn where ours does not. The
# tests build the shim with this script too (internal/shimbuild). $SHIM_CFLAGS
# adds compiler flags (e.g. -fsanitize=address: see docs/testing.md).
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."

flags() { sed -n "s/^$1 //p" intercept/build.flags; }

shim() {
	local out=$1
	mkdir -p "$(dirname "$out")"
	# shellcheck disable=SC2046,SC2086 # the flags are lists of words
	"${CC:-cc}" $(flags cflags) -Werror ${SHIM_CFLAGS:-} \
		-o "$out" intercept/*.c $(flags libs)
}

# stamp: the -X flags that give `streamcheck version` the commit when the
# Go toolchain records none (-buildvcs=false, or no git on the build machine).
stamp() {
	local commit modified=false
	commit=$(git rev-parse HEAD 2>/dev/null) || return 0
	if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then modified=true; fi
	echo "-X main.buildCommit=$commit -X main.buildModified=$modified ${STAMP_VERSION:+-X main.buildVersion=$STAMP_VERSION}"
}

case "${1:-all}" in
shim)
	out=${2:-bin/libstreamcheck.so}
	if [ -n "${2:-}" ] && [ "${out#/}" = "$out" ]; then out=$here/$out; fi # OUT is relative to the caller's directory
	shim "$out"
	echo "built $out"
	;;
cli)
	[ -n "${2:-}" ] || { echo "usage: scripts/build.sh cli OUT" >&2; exit 2; }
	out=$2
	if [ "${out#/}" = "$out" ]; then out=$here/$out; fi
	go build -trimpath -ldflags "$(stamp)" -o "$out" ./cmd/streamcheck
	echo "built $out"
	;;
all)
	mkdir -p bin
	go build -ldflags "$(stamp)" -o bin/streamcheck ./cmd/streamcheck
	shim bin/libstreamcheck.so
	rm -f bin/libstreamcheck.h # written by the earlier Go (c-shared) build of the shim
	echo "built bin/streamcheck and bin/libstreamcheck.so"
	;;
*)
	echo "usage: scripts/build.sh [shim [OUT] | cli OUT]" >&2
	exit 2
	;;
esac
