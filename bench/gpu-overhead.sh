#!/usr/bin/env bash
# Measures recording overhead on the GPU machine: the launch-bound loop in
# bench/gpu/loop.cu natively, under `streamcheck run` (stacks on, the
# default), with stacks off, with runtime-API callbacks on
# (STREAMCHECK_RUNTIME_NAMES=1), with CUPTI callbacks only, and under
# compute-sanitizer's stream-ordered race check. The loop times itself (us per
# iteration, after a warm-up), so start-up costs are not counted.
#
# Usage, from the repository root, with bin/streamcheck and bin/libstreamcheck.so built:
#   OUT=dir bash bench/gpu-overhead.sh     -> $OUT/overhead.txt
set -u
OUT=${OUT:-.gpu/out}; mkdir -p "$OUT"
REPORT="$OUT/overhead.txt"
ITERS=${ITERS:-20000}
SAN_ITERS=${SAN_ITERS:-2000}
RUNS=${RUNS:-5}
work=$(mktemp -d)
nvcc -O2 -arch=sm_90 -o "$work/loop" bench/gpu/loop.cu || exit 2

per_iter() { sed -n 's/^bench: \([0-9.]*\) us per iteration.*/\1/p'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
measure() { # label, iterations, command...
	local label=$1 iters=$2; shift 2
	local vals=()
	for _ in $(seq "$RUNS"); do
		vals+=("$("$@" "$work/loop" "$iters" 2>>"$work/stderr" | per_iter)")
	done
	local m; m=$(printf '%s\n' "${vals[@]}" | median)
	printf '%-34s %8s us/iter  runs: %s\n' "$label" "$m" "${vals[*]}" >>"$REPORT"
	echo "$m"
}
sc_run() { bin/streamcheck run --no-color -o "$work/report.txt" -- "$@"; }
nostacks() { STREAMCHECK_STACK_DEPTH=0 sc_run "$@"; }
rtnames() { STREAMCHECK_RUNTIME_NAMES=1 sc_run "$@"; }
cbonly() { STREAMCHECK_CALLBACK_ONLY=1 sc_run "$@"; }
stats() { STREAMCHECK_STATS=1 bin/streamcheck run --no-color -o "$work/report.txt" -- "$@" 2>>"$work/stats"; }
san() { compute-sanitizer --tool memcheck --track-stream-ordered-races all --print-limit 10 "$@"; }

{
	echo "# streamcheck recording overhead, $(date -u +%F)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	nvcc --version | tail -1
	echo "loop: 7 CUDA calls per iteration (cudaMallocAsync, 3 launches, event record, stream wait, cudaFreeAsync); median of $RUNS runs"
} >"$REPORT"
native=$(measure native "$ITERS" env)
shim=$(measure "streamcheck run (stacks on)" "$ITERS" sc_run)
nost=$(measure "streamcheck run (stacks off)" "$ITERS" nostacks)
rtnm=$(measure "streamcheck run (runtime callbacks on)" "$ITERS" rtnames)
cbo=$(measure "CUPTI callbacks only (record nothing)" "$ITERS" cbonly)
RUNS=1 measure "streamcheck run (STREAMCHECK_STATS=1)" "$ITERS" stats >/dev/null
sann=$(measure "native ($SAN_ITERS iterations)" "$SAN_ITERS" env)
sanv=$(measure "compute-sanitizer ($SAN_ITERS iters)" "$SAN_ITERS" san)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }
{
	echo
	echo "ratio streamcheck run (stacks on) / native:   $(ratio "$shim" "$native")"
	echo "ratio streamcheck run (stacks off) / native:  $(ratio "$nost" "$native")"
	echo "ratio streamcheck run (runtime callbacks) / native: $(ratio "$rtnm" "$native")"
	echo "ratio CUPTI callbacks only / native:          $(ratio "$cbo" "$native")"
	echo "ratio compute-sanitizer / native:             $(ratio "$sanv" "$sann")"
	echo "the shim's own time (STREAMCHECK_STATS=1):"
	grep -i "streamcheck" "$work/stats" 2>/dev/null | tail -5
	echo "streamcheck findings on the loop (expected none):"
	cat "$work/report.txt" 2>/dev/null | tail -3
} >>"$REPORT"
cat "$REPORT"
