#!/usr/bin/env bash
# Measures recording overhead on the GPU machine: the launch-bound loop in
# bench/gpu/loop.cu natively, under `streamcheck run` (stacks on, the
# default), with stacks off, with runtime-API callbacks on
# (STREAMCHECK_RUNTIME_NAMES=1), without the trace prefault helper
# (STREAMCHECK_PREFAULT=0), with CUPTI callbacks only, and under
# compute-sanitizer's stream-ordered race check. The loop times itself (us per
# iteration, after a warm-up), so start-up costs are not counted. The
# configurations run interleaved, RUNS rounds (default 15; about 3 minutes).
#
# Usage, from the repository root, with bin/streamcheck and bin/libstreamcheck.so built:
#   OUT=dir bash bench/gpu-overhead.sh     -> $OUT/overhead.txt
set -u
OUT=${OUT:-.gpu/out}; mkdir -p "$OUT"
REPORT="$OUT/overhead.txt"
ITERS=${ITERS:-20000}
SAN_ITERS=${SAN_ITERS:-2000}
RUNS=${RUNS:-15}
PIN=${PIN-2,3}
work=$(mktemp -d)
# Native runs on the GPU machine came in two modes (about 12.5 and 16.5 us
# per iteration), likely from where the scheduler put the process; pinning
# this shell, and so every run, to the same cores (PIN="" to not pin) keeps
# the configurations comparable.
if [ -n "$PIN" ] && command -v taskset >/dev/null; then
	taskset -pc "$PIN" $$ >/dev/null || PIN=""
else
	PIN=""
fi
nvcc -O2 -arch=sm_90 -o "$work/loop" bench/gpu/loop.cu || exit 2

per_iter() { sed -n 's/^bench: \([0-9.]*\) us per iteration.*/\1/p'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
sc_run() { bin/streamcheck run --no-color -o "$work/report.txt" -- "$@"; }
nostacks() { STREAMCHECK_STACK_DEPTH=0 sc_run "$@"; }
rtnames() { STREAMCHECK_RUNTIME_NAMES=1 sc_run "$@"; }
cbonly() { STREAMCHECK_CALLBACK_ONLY=1 sc_run "$@"; }
nopf() { STREAMCHECK_PREFAULT=0 sc_run "$@"; }
san() { compute-sanitizer --tool memcheck --track-stream-ordered-races all --print-limit 10 "$@"; }

# Configurations, each "label|command". The GPU machine's speed drifts by
# +-15% from run to run, so the configurations are interleaved: every round
# runs each once, in a rotated order, and each ratio is the median over the
# rounds of (configuration / native of the same round).
configs=(
	"native|env"
	"streamcheck run (stacks on, the default)|sc_run"
	"streamcheck run (stacks off)|nostacks"
	"streamcheck run (prefault helper off)|nopf"
	"streamcheck run (runtime callbacks on)|rtnames"
	"CUPTI callbacks only (record nothing)|cbonly"
)
declare -A vals
{
	echo "# streamcheck recording overhead, $(date -u +%F)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	nvcc --version | tail -1
	echo "loop: 7 CUDA calls per iteration (cudaMallocAsync, 3 launches, event record, stream wait, cudaFreeAsync)"
	echo "$RUNS interleaved rounds of $ITERS iterations; ratios are medians of per-round ratios to native; pinned to CPUs ${PIN:-none}"
} >"$REPORT"
n=${#configs[@]}
for round in $(seq "$RUNS"); do
	for k in $(seq 0 $((n - 1))); do
		i=$(((k + round) % n))
		cmd=${configs[$i]#*|}
		vals[$i]+="$("$cmd" "$work/loop" "$ITERS" 2>>"$work/stderr" | per_iter) "
	done
done
for i in $(seq 0 $((n - 1))); do
	label=${configs[$i]%%|*}
	read -ra mine <<<"${vals[$i]}"
	read -ra base <<<"${vals[0]}"
	med=$(printf '%s\n' "${mine[@]}" | median)
	rat=$(for r in $(seq 0 $((${#mine[@]} - 1))); do awk -v a="${mine[$r]}" -v b="${base[$r]}" 'BEGIN { if (b > 0) print a / b }'; done | median)
	printf '%-42s %8s us/iter  ratio %5.2fx  runs: %s\n' "$label" "$med" "${rat:-0}" "${vals[$i]}" >>"$REPORT"
done

# compute-sanitizer is an order of magnitude slower: fewer iterations, with
# its own native runs interleaved.
sv="" nv=""
for _ in $(seq "$RUNS"); do
	nv+="$(env "$work/loop" "$SAN_ITERS" 2>>"$work/stderr" | per_iter) "
	sv+="$(san "$work/loop" "$SAN_ITERS" 2>>"$work/stderr" | per_iter) "
done
read -ra sva <<<"$sv"
read -ra nva <<<"$nv"
srat=$(for r in $(seq 0 $((${#sva[@]} - 1))); do awk -v a="${sva[$r]}" -v b="${nva[$r]}" 'BEGIN { if (b > 0) print a / b }'; done | median)
printf '%-42s %8s us/iter  ratio %5.2fx  runs: %s (native: %s)\n' "compute-sanitizer ($SAN_ITERS iterations)" \
	"$(printf '%s\n' "${sva[@]}" | median)" "${srat:-0}" "$sv" "$nv" >>"$REPORT"
{
	echo "the shim's own time (STREAMCHECK_STATS=1):"
	STREAMCHECK_STATS=1 bin/streamcheck run --no-color -o "$work/report.txt" -- "$work/loop" "$ITERS" 2>&1 >/dev/null | grep "stats:"
	echo "the same without the prefault helper (STREAMCHECK_PREFAULT=0):"
	STREAMCHECK_STATS=1 STREAMCHECK_PREFAULT=0 bin/streamcheck run --no-color -o /dev/null -- "$work/loop" "$ITERS" 2>&1 >/dev/null | grep "stats:"
	echo "streamcheck findings on the loop (expected none):"
	tail -1 "$work/report.txt" 2>/dev/null
} >>"$REPORT"
cat "$REPORT"
