#!/usr/bin/env bash
# shim-lines.sh: what each recorded call costs the shim in code, counted
# rather than timed. The fake app's copy of the GPU loop (intercept/testdata)
# runs under cachegrind with FAKE_THRASH_CODE=2048: 2 MiB of the app's own
# code between calls, as the CUDA driver's work runs between a program's
# calls, so every line of the shim's code a call runs is a miss. Printed:
# the shim's instructions, instruction-cache lines (64 bytes) and data reads
# per call, each minus the same run with CUPTI's callbacks only. These
# counts do not vary from run to run, unlike the loop's times.
#
# FAKE_TABLE=n counts a PyTorch-sized launch instead: the fake app's bench
# mode launches one kernel whose 8 KiB by-value table holds n device
# addresses (an optimizer's multi-tensor launch), no code thrash; the
# figures are then per launch.
#
# Usage, from the repository root (needs valgrind and gcc):
#   bash bench/shim-lines.sh [SHIM.so ...]   (default: a fresh build, scripts/build.sh shim)
#   -> bench/results/shim-lines.txt when RESULTS=1
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-gcc}
$cc -O1 -g -shared -fPIC -o "$work/libfakecupti.so" intercept/testdata/fakecupti.c intercept/testdata/fakeroute.c -lpthread -ldl
$cc -O1 -g -o "$work/fakeapp" intercept/testdata/fakeapp.c -L"$work" -lfakecupti -Wl,-rpath,"$work" -ldl -lpthread
if [ $# -eq 0 ]; then
	bash scripts/build.sh shim "$work/libstreamcheck.so" >/dev/null
	set -- "$work/libstreamcheck.so"
fi
iters=2000
mode=loop thrash=2048 calls=$(((iters + 1000) * 7)) # the app warms up with 1000 iterations
if [ -n "${FAKE_TABLE:-}" ]; then mode=bench thrash=0 calls=$((iters + 1000)); fi
# totals SHIM [ENV...]: "Ir I1mr Dr" of one run
totals() {
	local shim=$1 d
	shift
	d=$(mktemp -d -p "$work")
	env STREAMCHECK_DIR="$d" STREAMCHECK_CUPTI="$work/libfakecupti.so" STREAMCHECK_LIBCUDA="$work/libfakecupti.so" \
		FAKE_ITERS=$iters FAKE_THRASH_CODE=$thrash FAKE_INJECT="$shim" "$@" \
		valgrind --tool=cachegrind --cache-sim=yes --I1=65536,8,64 --D1=49152,12,64 --LL=1048576,16,64 \
		--cachegrind-out-file="$d/cg.out" "$work/fakeapp" $mode >/dev/null 2>&1
	cg_annotate "$d/cg.out" | awk '/PROGRAM TOTALS/ { gsub(",", ""); print $1, $3, $7; exit }'
}
out=$(
	echo "# bench/shim-lines.sh${FAKE_TABLE:+ FAKE_TABLE=$FAKE_TABLE (per launch)}, $(date -u +%F), $(valgrind --version), $($cc --version | head -1)"
	for shim in "$@"; do
		read -r a1 a2 a3 < <(totals "$shim")
		read -r b1 b2 b3 < <(totals "$shim" STREAMCHECK_CALLBACK_ONLY=1)
		awk -v a1="$a1" -v a2="$a2" -v a3="$a3" -v b1="$b1" -v b2="$b2" -v b3="$b3" -v c="$calls" -v s="$shim" \
			'BEGIN { printf "%-40s instructions %5.0f  code lines %5.1f  data reads %4.0f  per call\n", s, (a1-b1)/c, (a2-b2)/c, (a3-b3)/c }'
	done
)
echo "$out"
if [ "${RESULTS:-0}" = 1 ]; then echo "$out" >>bench/results/shim-lines.txt; fi
