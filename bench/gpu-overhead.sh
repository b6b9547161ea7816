#!/usr/bin/env bash
# Measures recording overhead on the GPU machine: the launch-bound loop in
# bench/gpu/loop.cu natively, under `streamcheck run` (stacks on, the
# default), with stacks off, with runtime-API callbacks on
# (STREAMCHECK_RUNTIME_NAMES=1), without the trace prefault helper
# (STREAMCHECK_PREFAULT=0), with CUPTI callbacks only, and under
# compute-sanitizer's stream-ordered race check; then, when PyTorch is there,
# a small training loop natively and under `streamcheck run` (TORCH_RUNS
# interleaved rounds of TORCH_STEPS steps). The loop times itself (us per
# iteration, after a warm-up), so start-up costs are not counted. The
# configurations run interleaved, RUNS rounds (default 15; about 3 minutes).
#
# Usage, from the repository root, with bin/streamcheck and bin/libstreamcheck.so built:
#   OUT=dir bash bench/gpu-overhead.sh     -> $OUT/overhead.txt
set -u
# The CUPTI backend, whose callbacks alone are one configuration here
# (bench/gpu-backends.sh compares the backends); STREAMCHECK_BACKEND=interpose
# runs the same rounds under the default backend.
export STREAMCHECK_BACKEND=${STREAMCHECK_BACKEND:-cupti}
OUT=${OUT:-.gpu/out}; mkdir -p "$OUT"
REPORT="$OUT/overhead.txt"
ITERS=${ITERS:-20000}
SAN_ITERS=${SAN_ITERS:-2000}
RUNS=${RUNS:-15}
TORCH_RUNS=${TORCH_RUNS:-5}
TORCH_STEPS=${TORCH_STEPS:-200}
PIN=${PIN-2,3}
work=$(mktemp -d)
. bench/gpu-lib.sh
pin_shell
nvcc -O2 -arch=sm_90 -o "$work/loop" bench/gpu/loop.cu || exit 2

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
	echo "fastest: each configuration's fastest round, and its ratio to native's fastest (the machine's speed is bimodal, so this is the steadier figure)"
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
	rat=$(median_ratio "${vals[$i]}" "${vals[0]}")
	best=$(printf '%s\n' "${mine[@]}" | sort -n | head -1)
	nbest=$(printf '%s\n' "${base[@]}" | sort -n | head -1)
	brat=$(awk -v a="$best" -v b="$nbest" 'BEGIN { if (b > 0) printf "%.2f", a / b }')
	printf '%-42s %8s us/iter  ratio %5.2fx  fastest %6s (%5sx)  runs: %s\n' "$label" "$med" "${rat:-0}" "$best" "${brat:-0}" "${vals[$i]}" >>"$REPORT"
done

# compute-sanitizer is an order of magnitude slower: fewer iterations, with
# its own native runs interleaved.
sv="" nv=""
for _ in $(seq "$RUNS"); do
	nv+="$(env "$work/loop" "$SAN_ITERS" 2>>"$work/stderr" | per_iter) "
	sv+="$(san "$work/loop" "$SAN_ITERS" 2>>"$work/stderr" | per_iter) "
done
printf '%-42s %8s us/iter  ratio %5.2fx  runs: %s (native: %s)\n' "compute-sanitizer ($SAN_ITERS iterations)" \
	"$(printf '%s\n' $sv | median)" "$(median_ratio "$sv" "$nv")" "$sv" "$nv" >>"$REPORT"

# A real program next to the micro-loop: a small PyTorch training loop
# (bench/gpu/train_loop.py, cudaMallocAsync backend), natively and under
# `streamcheck run`, interleaved, when torch with CUDA is importable.
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
	per_step() { sed -n 's/^bench: \([0-9.]*\) ms per step.*/\1/p'; }
	tn="" ts=""
	for _ in $(seq "$TORCH_RUNS"); do
		tn+="$(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 bench/gpu/train_loop.py "$TORCH_STEPS" 2>>"$work/stderr" | per_step) "
		ts+="$(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync sc_run python3 bench/gpu/train_loop.py "$TORCH_STEPS" 2>>"$work/stderr" | per_step) "
	done
	tbest=$(awk -v a="$(printf '%s\n' $ts | sort -n | head -1)" -v b="$(printf '%s\n' $tn | sort -n | head -1)" 'BEGIN { if (b > 0) printf "%.2f", a / b }')
	printf '%-42s %8s ms/step  ratio %5.2fx  fastest %5sx  runs: %s (native: %s)\n' "PyTorch training loop under streamcheck run" \
		"$(printf '%s\n' $ts | median)" "$(median_ratio "$ts" "$tn")" "${tbest:-0}" "$ts" "$tn" >>"$REPORT"
	echo "streamcheck findings on the training loop (expected no errors): $(tail -1 "$work/report.txt" 2>/dev/null)" >>"$REPORT"
else
	echo "PyTorch training loop: skipped (torch with CUDA not importable)" >>"$REPORT"
fi
{
	echo "the shim's own time (STREAMCHECK_STATS=1):"
	STREAMCHECK_STATS=1 bin/streamcheck run --no-color -o "$work/report.txt" -- "$work/loop" "$ITERS" 2>&1 >/dev/null | grep "stats:"
	echo "the same without the prefault helper (STREAMCHECK_PREFAULT=0):"
	STREAMCHECK_STATS=1 STREAMCHECK_PREFAULT=0 bin/streamcheck run --no-color -o /dev/null -- "$work/loop" "$ITERS" 2>&1 >/dev/null | grep "stats:"
	echo "streamcheck findings on the loop (expected none):"
	tail -1 "$work/report.txt" 2>/dev/null
} >>"$REPORT"
cat "$REPORT"
