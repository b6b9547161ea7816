#!/usr/bin/env bash
# Builds the release archives of streamcheck VERSION into DIR (default dist/):
#
#   scripts/release.sh VERSION [DIR]
#
# one streamcheck_VERSION_linux_ARCH.tar.gz for each architecture of $ARCHS
# (default "amd64 arm64"), each with bin/streamcheck (which finds the shim
# in ../lib), lib/libstreamcheck.so, LICENSE, README.md and CHANGELOG.md,
# and SHA256SUMS over the archives. The shim, and the CLI's cgo part
# (doctor's self-test), need a C compiler for the target: $CC_amd64 /
# $CC_arm64, else cc for the machine's own architecture ($CC), else
# x86_64-linux-gnu-gcc / aarch64-linux-gnu-gcc (Debian's
# gcc-x86-64-linux-gnu, gcc-aarch64-linux-gnu). A missing compiler is an
# error, said in one line, before anything is built: a release has every
# architecture or none. Each binary is checked to be an ELF file of its
# architecture. Run it on the commit the tag names: `version` then prints it.
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
declare -A machine=([amd64]=62 [arm64]=183) # ELF e_machine: EM_X86_64, EM_AARCH64
declare -A ccs=()
archs=${ARCHS-amd64 arm64}
for arch in $archs; do
	if [ -z "${cross[$arch]:-}" ]; then
		echo "release.sh: ARCHS: unknown architecture $arch (amd64, arm64)" >&2
		exit 2
	fi
	var=CC_$arch
	cc=${!var:-}
	if [ -z "$cc" ]; then
		if [ "$arch" = "$host" ]; then cc=${CC:-cc}; else cc=${cross[$arch]}; fi
	fi
	if ! command -v "$cc" >/dev/null; then
		echo "release.sh: no C compiler for linux/$arch: $cc not found (install Debian's ${pkg[$arch]}, set $var, or leave $arch out of ARCHS)" >&2
		exit 1
	fi
	ccs[$arch]=$cc
done

# check FILE ARCH fails unless FILE is an ELF file for ARCH (its e_machine).
check() {
	local got
	got=$(od -An -tu2 -j18 -N2 "$1" | tr -d ' ')
	if [ "$(head -c4 "$1" | od -An -c | tr -d ' ')" != '177ELF' ] || [ "$got" != "${machine[$2]}" ]; then
		echo "release.sh: $1 is not an ELF file for linux/$2 (e_machine $got, want ${machine[$2]})" >&2
		exit 1
	fi
}

built=()
for arch in $archs; do
	cc=${ccs[$arch]}
	name=streamcheck_${version#v}_linux_$arch
	root=$stage/$name
	mkdir -p "$root/bin" "$root/lib"
	# cgo, as go install gives where a C compiler is: doctor's self-test needs it.
	GOOS=linux GOARCH=$arch CGO_ENABLED=1 CC=$cc STAMP_VERSION=$version scripts/build.sh cli "$root/bin/streamcheck" >/dev/null
	CC=$cc scripts/build.sh shim "$root/lib/libstreamcheck.so" >/dev/null
	check "$root/bin/streamcheck" "$arch"
	check "$root/lib/libstreamcheck.so" "$arch"
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
