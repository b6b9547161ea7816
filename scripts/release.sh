#!/usr/bin/env bash
# Builds the release archives of streamcheck VERSION into DIR (default dist/):
#
#   scripts/release.sh VERSION [DIR]
#
# one streamcheck_VERSION_linux_ARCH.tar.gz for amd64 and arm64, each with
# bin/streamcheck (which finds the shim in ../lib), lib/libstreamcheck.so,
# LICENSE, README.md and CHANGELOG.md, and SHA256SUMS over the archives.
# The shim, and the CLI's cgo part (doctor's self-test), need a C compiler
# for the target: cc for the machine's own architecture, else
# $CC_amd64 / $CC_arm64, else x86_64-linux-gnu-gcc / aarch64-linux-gnu-gcc
# (Debian's gcc-x86-64-linux-gnu, gcc-aarch64-linux-gnu). An architecture
# with no compiler is skipped, and said so; the script fails if none was
# built. Run it on the commit the tag names: `version` then prints it.
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/.."

version=${1:?usage: scripts/release.sh VERSION [DIR]}
case $version in v[0-9]*) ;; *) echo "release.sh: VERSION must look like v1.2.3, not $version" >&2; exit 2 ;; esac
dist=${2:-dist}
if [ "${dist#/}" = "$dist" ]; then dist=$here/$dist; fi
mkdir -p "$dist"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# A reproducible archive: its files' times are the commit's.
mtime=@$(git log -1 --format=%ct 2>/dev/null || date +%s)

host=$(go env GOHOSTARCH)
declare -A cross=([amd64]=x86_64-linux-gnu-gcc [arm64]=aarch64-linux-gnu-gcc)
declare -A pkg=([amd64]=gcc-x86-64-linux-gnu [arm64]=gcc-aarch64-linux-gnu)
built=()
for arch in amd64 arm64; do
	var=CC_$arch
	cc=${!var:-}
	if [ -z "$cc" ]; then
		if [ "$arch" = "$host" ]; then cc=${CC:-cc}; else cc=${cross[$arch]}; fi
	fi
	if ! command -v "$cc" >/dev/null; then
		echo "release.sh: skipping linux/$arch: no C compiler for it ($cc; set $var, or install Debian's ${pkg[$arch]})" >&2
		continue
	fi
	name=streamcheck_${version#v}_linux_$arch
	root=$stage/$name
	mkdir -p "$root/bin" "$root/lib"
	# cgo, as go install gives where a C compiler is: doctor's self-test needs it.
	GOOS=linux GOARCH=$arch CGO_ENABLED=1 CC=$cc STAMP_VERSION=$version scripts/build.sh cli "$root/bin/streamcheck" >/dev/null
	CC=$cc scripts/build.sh shim "$root/lib/libstreamcheck.so" >/dev/null
	cp LICENSE README.md CHANGELOG.md "$root/"
	tar -C "$stage" --sort=name --mtime="$mtime" --owner=0 --group=0 --numeric-owner -cf - "$name" | gzip -n >"$dist/$name.tar.gz"
	built+=("$name.tar.gz")
	echo "built $dist/$name.tar.gz (shim compiled by $cc)"
done
if [ ${#built[@]} -eq 0 ]; then
	echo "release.sh: no archive built" >&2
	exit 1
fi
(cd "$dist" && sha256sum "${built[@]}" >SHA256SUMS)
echo "wrote $dist/SHA256SUMS"
