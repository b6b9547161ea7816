#!/usr/bin/env bash
# shim-cold.sh: what a recorded call costs the shim when its code is out of
# the CPU's caches, as on the GPU machine, where the driver's own code runs
# between a program's calls. The fake app's copy of the GPU loop
# (intercept/testdata/fakeapp.c, mode loop: seven calls an iteration) runs
# FAKE_THRASH_CODE KiB of its own code before each call (default 2048: one
# jump a 64-byte line, which evicts the shim's code from L1 and L2) and times
# the calls alone with the TSC. Configurations, interleaved over ROUNDS
# rounds: CUPTI's callbacks only (the first shim, STREAMCHECK_CALLBACK_ONLY=1),
# then each shim recording, and each with STREAMCHECK_STACK_DEPTH=0.
# Printed: each configuration's median ns per call over the callbacks only.
#
# Usage, from the repository root (needs cc):
#   bash bench/shim-cold.sh [SHIM.so ...]   (default: a fresh build, scripts/build.sh shim)
#   ROUNDS (default 5), ITERS (default 10000), FAKE_THRASH_CODE (KiB, default 2048)
#   -> bench/results/shim-cold.txt when RESULTS=1
set -eu
. bench/lib.sh # median, interleave
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=intercept/testdata
${CC:-cc} -O1 -g -shared -fPIC -o "$work/libfakecupti.so" $src/fakecupti.c $src/fakeroute.c -lpthread -ldl
${CC:-cc} -O1 -g -o "$work/fakeapp" $src/fakeapp.c -L"$work" -lfakecupti -Wl,-rpath,"$work" -ldl -lpthread
if [ $# -eq 0 ]; then
	bash scripts/build.sh shim "$work/libstreamcheck.so" >/dev/null
	set -- "$work/libstreamcheck.so"
fi
rounds=${ROUNDS:-5} iters=${ITERS:-10000} code=${FAKE_THRASH_CODE:-2048}

# ns SHIM [ENV...]: one run's ns per call
ns() {
	local shim=$1 d
	shift
	d=$(mktemp -d -p "$work")
	env "$@" STREAMCHECK_DIR="$d" STREAMCHECK_CUPTI="$work/libfakecupti.so" STREAMCHECK_LIBCUDA="$work/libfakecupti.so" \
		FAKE_ITERS="$iters" FAKE_THRASH_CODE="$code" FAKE_INJECT="$shim" "$work/fakeapp" loop 2>&1 |
		sed -n 's/^bench: \([0-9.]*\) ns per call.*/\1/p'
	rm -rf "$d"
}

configs=("callbacks only|$1|STREAMCHECK_CALLBACK_ONLY=1")
for shim; do configs+=("$shim|$shim|" "$shim, no stacks|$shim|STREAMCHECK_STACK_DEPTH=0"); done
interleave "$rounds" ns
out=$(
	echo "# bench/shim-cold.sh, $(date -u +%F), $(uname -m), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of $iters iterations, $code KiB of code between calls"
	base=$(median <"$work/c0")
	printf '%-50s %7.1f ns/call\n' "callbacks only" "$base"
	for i in "${!configs[@]}"; do
		[ "$i" = 0 ] && continue
		IFS='|' read -r name _ _ <<<"${configs[$i]}"
		printf '%-50s %7.1f ns/call over callbacks only (runs: %s)\n' "$name" "$(echo "$(median <"$work/c$i") - $base" | bc)" "$(tr '\n' ' ' <"$work/c$i")"
	done
)
echo "$out"
if [ "${RESULTS:-0}" = 1 ]; then echo "$out" >>bench/results/shim-cold.txt; fi
