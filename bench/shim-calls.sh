#!/usr/bin/env bash
# shim-calls.sh: what the interposed wrappers cost the calling thread per
# driver call, measured on that thread's CPU clock. The program
# (intercept/testdata/drvbench.c, mode calls) runs bench/gpu/loop.cu's five
# calls (an allocation, a launch, an event record, a stream wait, a free)
# through the PLT into a driver whose entry points do nothing
# (thindrv.c): natively, and with each shim preloaded under the
# interposition backend, the wrapper alone (STREAMCHECK_CALLBACK_ONLY=1)
# and recording with stacks and without, the configurations taking turns
# over ROUNDS rounds. The allocations come from a pool that hands the same
# address out again, as cudaMallocAsync's does; "fresh" runs the loop with
# every address new (THINDRV_FRESH=1), as a driver allocating without reuse
# does. Printed: each configuration's median ns per call over the rounds,
# minus the native median; then one run of each shim with STREAMCHECK_STATS=1
# (ns per call by phase: decode, stack, write, allocation map; the stats'
# own clock reads add to each).
#
# Usage, from the repository root (needs cc):
#   bash bench/shim-calls.sh [SHIM.so ...]   (default: a fresh build, scripts/build.sh shim)
#   ROUNDS (default 5), CALLS (iterations a run, default 200000)
#   MODE=launches: drvbench's PyTorch-like launches instead of the loop
#   (512-byte descriptors and 4 KiB tables among 2,000 live allocations;
#   ns per launch), with one more configuration a shim: the words matched in
#   the shim (STREAMCHECK_RAW_WORDS=0) instead of by the reader
#   -> bench/results/shim-calls.txt when RESULTS=1
set -eu
. bench/drvbench-lib.sh # $work, the program, the shims in "$@", with_shim
. bench/lib.sh           # median, interleave
rounds=${ROUNDS:-5} calls=${CALLS:-200000} mode=${MODE:-calls}
matched=() # launches mode: the setting that matches words in the shim, for one more configuration
if [ "$mode" = launches ]; then matched=(STREAMCHECK_RAW_WORDS=0); fi

# ns SHIM [ENV...]: one run's ns per call
ns() {
	local shim=$1 d pre
	shift
	d=$(mktemp -d -p "$work")
	mapfile -t pre < <(with_shim "$shim")
	env STREAMCHECK_DIR="$d" "${pre[@]}" "$@" "$work/drvbench" "$mode" "$calls" | awk '$1 == "ns/call" { print $2 }'
	rm -rf "$d"
}

configs=("native|-|" "native fresh|-|THINDRV_FRESH=1")
for shim; do
	configs+=("$shim wrapper only|$shim|STREAMCHECK_CALLBACK_ONLY=1" "$shim recording|$shim|"
		"$shim recording, no stacks|$shim|STREAMCHECK_STACK_DEPTH=0" "$shim recording, fresh|$shim|THINDRV_FRESH=1")
	for e in "${matched[@]}"; do configs+=("$shim recording, words matched in the shim|$shim|$e"); done
done
interleave "$rounds" ns
out=$(
	echo "# bench/shim-calls.sh, $(date -u +%F), $(uname -m), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of $calls iterations of $mode"
	native=$(median <"$work/c0") fresh=$(median <"$work/c1")
	printf '%-60s %7.1f ns/call\n' "native" "$native" "native fresh" "$fresh"
	for i in "${!configs[@]}"; do
		[ "$i" -lt 2 ] && continue
		IFS='|' read -r name shim env <<<"${configs[$i]}"
		base=$native
		case $env in THINDRV_FRESH=1) base=$fresh ;; esac
		printf '%-60s %7.1f ns/call over native (runs: %s)\n' "$name" "$(echo "$(median <"$work/c$i") - $base" | bc -l)" "$(tr '\n' ' ' <"$work/c$i")"
	done
	for shim; do
		for env in "" THINDRV_FRESH=1 "${matched[@]}"; do
			d=$(mktemp -d -p "$work")
			mapfile -t pre < <(with_shim "$shim")
			# shellcheck disable=SC2086
			echo "$shim ${env:-pool}: $(env STREAMCHECK_DIR="$d" "${pre[@]}" STREAMCHECK_STATS=1 $env "$work/drvbench" "$mode" "$calls" 2>&1 >/dev/null | sed -n 's/^streamcheck: stats: ns per call: //p')"
		done
	done
)
echo "$out"
if [ "${RESULTS:-0}" = 1 ]; then echo "$out" >>bench/results/shim-calls.txt; fi
