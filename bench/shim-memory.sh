#!/usr/bin/env bash
# shim-memory.sh: the recording shim's resident memory, per thread that
# makes CUDA calls and per live device allocation, and whether anything
# grows with the calls made rather than with what is live. The program
# (intercept/testdata/drvbench.c) calls a driver whose entry points do
# nothing (thindrv.c) through the PLT; the shim is preloaded with the
# interposition backend, whose state (the recorder's, the allocation map,
# the stacks, the trace) is the CUPTI backend's too. Each figure is the
# process's memory with the shim minus without it (RssAnon: the shim's heap
# and per-thread state; RssFile: the trace file's pages mapped, besides the
# libraries), from /proc/self/status, and per thread or allocation the
# slope between two counts.
#
# Usage, from the repository root (needs cc):
#   bash bench/shim-memory.sh [SHIM.so ...]   (default: a fresh build, scripts/build.sh shim)
#   -> bench/results/shim-memory.txt when RESULTS=1
set -eu
. bench/drvbench-lib.sh # $work, the program, the shims in "$@", with_shim

# kib SHIM MODE N TAG KEY [ENV...]: the KiB of KEY the run printed under TAG
# (SHIM "-": without the shim)
kib() {
	local shim=$1 mode=$2 n=$3 tag=$4 key=$5 d
	shift 5
	d=$(mktemp -d -p "$work")
	local pre
	mapfile -t pre < <(with_shim "$shim")
	env STREAMCHECK_DIR="$d" "${pre[@]}" "$@" "$work/drvbench" "$mode" "$n" |
		awk -v t="$tag" -v k="$key" '$1 == t && $2 == k { print $3 }'
	rm -rf "$d"
}
# shim_kib SHIM MODE N TAG KEY [ENV...]: with the shim minus without
shim_kib() {
	local shim=$1
	shift
	echo $(($(kib "$shim" "$@") - $(kib - "$@")))
}
# per SHIM MODE N1 N2 TAG KEY [ENV...]: bytes per unit between N1 and N2
per() {
	local shim=$1 mode=$2 n1=$3 n2=$4 tag=$5 key=$6
	shift 6
	local a b
	a=$(shim_kib "$shim" "$mode" "$n1" "$tag" "$key" "$@")
	b=$(shim_kib "$shim" "$mode" "$n2" "$tag" "$key" "$@")
	echo $(((b - a) * 1024 / (n2 - n1)))
}

out=$(
echo "# bench/shim-memory.sh, $(date -u +%F), $(uname -m), $(nproc) CPUs, $(ldd --version | head -1); the shim's memory minus the program's own"
for shim; do
	echo "== $shim"
	echo "per thread alive (RssAnon, 1 -> 64 threads, 100 loops each): $(per "$shim" threads 1 64 alive RssAnon) B; without stacks (STREAMCHECK_STACK_DEPTH=0): $(per "$shim" threads 1 64 alive RssAnon STREAMCHECK_STACK_DEPTH=0) B"
	echo "after 64 threads exited: $(shim_kib "$shim" threads 64 exited RssAnon) KiB; waves of 16 threads, after 1: $(shim_kib "$shim" waves 16 wave1 RssAnon) KiB, after 8: $(shim_kib "$shim" waves 16 wave8 RssAnon) KiB (RssAnon)"
	echo "per live allocation (RssAnon, 1000 -> 100000 cuMemAlloc): $(per "$shim" allocs 1000 100000 live RssAnon) B"
	for n in 10000 300000; do
		echo "churn $n (a stream, an event and an allocation created and destroyed, each time): RssAnon $(shim_kib "$shim" churn $n churned RssAnon) KiB, RssFile $(shim_kib "$shim" churn $n churned RssFile) KiB"
	done
done
)
echo "$out"
if [ "${RESULTS:-0}" = 1 ]; then echo "$out" >>bench/results/shim-memory.txt; fi
