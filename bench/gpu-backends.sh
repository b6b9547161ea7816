#!/usr/bin/env bash
# Compares the shim's recording backends on the GPU machine, in interleaved
# rounds: natively, under `streamcheck run --backend cupti`, under
# `streamcheck run --backend interpose`, the interposed wrappers alone
# (STREAMCHECK_CALLBACK_ONLY=1: nothing recorded), the interpose backend
# with a launch's parameter words matched in the shim instead of by the
# reader (STREAMCHECK_RAW_WORDS=0: what raw words save), and under
# compute-sanitizer's stream-ordered race check, on
#   - the launch-bound loop (bench/gpu/loop.cu; RUNS rounds of ITERS),
#   - the PyTorch training loop (bench/gpu/train_loop.py; TORCH_RUNS rounds
#     of TORCH_STEPS steps),
#   - a real model's training step (bench/gpu/model_step.py: torchvision
#     ResNet-18, or MODEL=gpt2; MODEL_RUNS rounds of MODEL_STEPS steps).
# Ratios are medians of per-round ratios to the native run of the same
# round (the machine's speed drifts). compute-sanitizer runs fewer
# iterations (SAN_ITERS, SAN_STEPS) with its own native runs beside it.
# Each backend's findings on each program close the report (expected: none).
#
# Usage, from the repository root, with bin/streamcheck and bin/libstreamcheck.so built:
#   OUT=dir bash bench/gpu-backends.sh     -> $OUT/backends.txt
# WORKLOADS (default "loop torch model") picks the workloads, so that one
# that a machine call's time limit cut off can run alone. CONFIGS (default
# "native cupti interpose wrappers matched") picks the configurations;
# "noprefault" adds the interpose backend without the helper thread that
# faults trace pages in ahead of the writer (STREAMCHECK_PREFAULT=0).
set -u
OUT=${OUT:-.gpu/out}; mkdir -p "$OUT"
REPORT="$OUT/backends.txt"
ITERS=${ITERS:-20000}
SAN_ITERS=${SAN_ITERS:-2000}
RUNS=${RUNS:-11}
TORCH_RUNS=${TORCH_RUNS:-5}
TORCH_STEPS=${TORCH_STEPS:-200}
MODEL_RUNS=${MODEL_RUNS:-5}
MODEL_STEPS=${MODEL_STEPS:-30}
SAN_STEPS=${SAN_STEPS:-3}
PIN=${PIN-2,3}
work=$(mktemp -d)
. bench/gpu-lib.sh
pin_shell
nvcc -O2 -arch=sm_90 -o "$work/loop" bench/gpu/loop.cu || exit 2
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync

native() { env "$@"; }
cupti() { bin/streamcheck run --backend cupti --no-color -o "$work/report-cupti.txt" -- "$@"; }
interpose() { bin/streamcheck run --backend interpose --no-color -o "$work/report-interpose.txt" -- "$@"; }
wrappers() { STREAMCHECK_CALLBACK_ONLY=1 bin/streamcheck run --backend interpose --no-color -o /dev/null -- "$@"; }
matched() { STREAMCHECK_RAW_WORDS=0 bin/streamcheck run --backend interpose --no-color -o /dev/null -- "$@"; }
noprefault() { STREAMCHECK_PREFAULT=0 bin/streamcheck run --backend interpose --no-color -o /dev/null -- "$@"; }
san() { compute-sanitizer --tool memcheck --track-stream-ordered-races all --print-limit 10 "$@"; }
per_step() { sed -n 's/^bench: \([0-9.]*\) ms per step.*/\1/p'; }
have_torch() { python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; }
want() { case " ${WORKLOADS:-loop torch model} " in *" $1 "*) return 0 ;; esac; return 1; }

declare -A label_of=([native]="native" [cupti]="streamcheck run --backend cupti"
	[interpose]="streamcheck run --backend interpose" [wrappers]="interposed wrappers only (record nothing)"
	[matched]="interpose, launch words matched in the shim (STREAMCHECK_RAW_WORDS=0)"
	[noprefault]="interpose, no prefault helper (STREAMCHECK_PREFAULT=0)")
read -r -a configs <<<"${CONFIGS:-native cupti interpose wrappers matched}"
[ "${configs[0]}" = native ] || { echo "CONFIGS must start with native (ratios are to it)" >&2; exit 2; }
labels=()
for c in "${configs[@]}"; do
	[ -n "${label_of[$c]:-}" ] || { echo "CONFIGS: unknown configuration $c" >&2; exit 2; }
	labels+=("${label_of[$c]}")
done

# rounds NAME ROUNDS PARSER UNIT PROGRAM ARGS...: every configuration once a
# round, in a rotated order; one report line each.
rounds() {
	local name=$1 nr=$2 parse=$3 unit=$4
	shift 4
	local -A vals=()
	local n=${#configs[@]}
	for round in $(seq "$nr"); do
		for k in $(seq 0 $((n - 1))); do
			local i=$(((k + round) % n))
			vals[$i]+="$("${configs[$i]}" "$@" 2>>"$work/stderr" | "$parse") "
		done
	done
	echo "$name:"
	for i in $(seq 0 $((n - 1))); do
		printf '  %-44s %9s %s  ratio %5.2fx  runs: %s\n' "${labels[$i]}" "$(printf '%s\n' ${vals[$i]} | median)" "$unit" \
			"$(median_ratio "${vals[$i]}" "${vals[0]}")" "${vals[$i]}"
	done
	for b in cupti interpose; do
		echo "  findings, $b backend: $(tail -1 "$work/report-$b.txt" 2>/dev/null)"
	done
}

# sanitizer NAME ROUNDS PARSER UNIT PROGRAM ARGS...: compute-sanitizer with
# native runs of the same size interleaved.
sanitizer() {
	local name=$1 nr=$2 parse=$3 unit=$4
	shift 4
	local sv="" nv=""
	for _ in $(seq "$nr"); do
		nv+="$(native "$@" 2>>"$work/stderr" | "$parse") "
		sv+="$(san "$@" 2>>"$work/stderr" | "$parse") "
	done
	printf '  %-44s %9s %s  ratio %5.2fx  runs: %s (native: %s)\n' "compute-sanitizer ($name)" \
		"$(printf '%s\n' $sv | median)" "$unit" "$(median_ratio "$sv" "$nv")" "$sv" "$nv"
}

{
	echo "# streamcheck backends against native and compute-sanitizer, $(date -u +%F)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	nvcc --version | tail -1
	echo "pinned to CPUs ${PIN:-none}; ratios are medians of per-round ratios to native"
	if want loop; then
		rounds "launch-bound loop ($RUNS rounds of $ITERS iterations)" "$RUNS" per_iter us/iter "$work/loop" "$ITERS"
		sanitizer "loop, $SAN_ITERS iterations" "$RUNS" per_iter us/iter "$work/loop" "$SAN_ITERS"
	fi
	if have_torch; then
		if want torch; then
			rounds "PyTorch training loop ($TORCH_RUNS rounds of $TORCH_STEPS steps)" "$TORCH_RUNS" per_step ms/step \
				python3 bench/gpu/train_loop.py "$TORCH_STEPS"
		fi
		if want model; then
			rounds "model training step ($MODEL_RUNS rounds of $MODEL_STEPS steps)" "$MODEL_RUNS" per_step ms/step \
				python3 bench/gpu/model_step.py "$MODEL_STEPS"
			sanitizer "model step, $SAN_STEPS steps" 1 per_step ms/step python3 bench/gpu/model_step.py "$SAN_STEPS"
		fi
	else
		echo "PyTorch programs: skipped (torch with CUDA not importable)"
	fi
	if want loop; then
		echo "the shim's own time on the loop, interpose backend (STREAMCHECK_STATS=1):"
		STREAMCHECK_STATS=1 interpose "$work/loop" "$ITERS" 2>&1 >/dev/null | grep "stats:"
	fi
	if want model && have_torch; then
		echo "the shim's own time on the model step, interpose (STREAMCHECK_STATS=1):"
		STREAMCHECK_STATS=1 interpose python3 bench/gpu/model_step.py "$MODEL_STEPS" 2>&1 >/dev/null | grep "stats:"
	fi
	if want torch && have_torch; then
		for c in interpose matched; do
			echo "the shim's own time on the PyTorch training loop, $c (STREAMCHECK_STATS=1):"
			STREAMCHECK_STATS=1 "$c" python3 bench/gpu/train_loop.py "$TORCH_STEPS" 2>&1 >/dev/null | grep "stats:"
		done
	fi
	echo "stderr of the runs (last lines):"
	tail -5 "$work/stderr"
} >"$REPORT"
cat "$REPORT"
