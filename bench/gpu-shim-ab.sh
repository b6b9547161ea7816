#!/usr/bin/env bash
# Compares builds of the recording shim on the GPU machine: the launch-bound
# loop of bench/gpu/loop.cu natively, with CUPTI's callbacks only, and under
# `streamcheck run` with each shim named in SHIMS, interleaved over RUNS
# rounds (each ratio is the median of the per-round ratios to native, as in
# gpu-overhead.sh). Then each shim's STREAMCHECK_STATS on the loop. When
# bin/ab/fakeapp and bin/ab/libfakecupti.so exist (built from
# intercept/testdata, see bench/README.md), the same shims also run the fake
# app's copy of the loop on this machine's CPU, with and without
# FAKE_THRASH (memory read between the calls, as the driver's work does) and
# FAKE_THRASH_CODE (code run between them, as the driver's code does): the
# shim's cost per call without the GPU's noise.
#
# Usage, from the repository root, with bin/streamcheck built:
#   SHIMS="old=bin/ab/old.so new=bin/libstreamcheck.so" OUT=dir bash bench/gpu-shim-ab.sh
#   -> $OUT/shim-ab.txt
set -u
# The CUPTI backend, whose callbacks alone are one configuration here
# (bench/gpu-backends.sh compares the backends); STREAMCHECK_BACKEND=interpose
# runs the same rounds under the default backend.
export STREAMCHECK_BACKEND=${STREAMCHECK_BACKEND:-cupti}
OUT=${OUT:-.gpu/out}; mkdir -p "$OUT"
REPORT="$OUT/shim-ab.txt"
ITERS=${ITERS:-20000}
RUNS=${RUNS:-15}
FAKE_RUNS=${FAKE_RUNS:-7}
PIN=${PIN-2,3}
SHIMS=${SHIMS:?SHIMS="label=path ..." is required}
work=$(mktemp -d)
. bench/gpu-lib.sh
pin_shell
nvcc -O2 -arch=sm_90 -o "$work/loop" bench/gpu/loop.cu || exit 2

read -ra shims <<<"$SHIMS"
first=${shims[0]#*=}
configs=("native|")
configs+=("CUPTI callbacks only|$first|STREAMCHECK_CALLBACK_ONLY=1")
for s in "${shims[@]}"; do configs+=("${s%%=*}|${s#*=}"); done

{
	echo "# shim A/B on the GPU loop, $(date -u +%F)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
	for s in "${shims[@]}"; do echo "shim ${s%%=*}: ${s#*=} ($(sha256sum "${s#*=}" | cut -c1-12))"; done
	echo "$RUNS interleaved rounds of $ITERS iterations; ratios are medians of per-round ratios to native; pinned to CPUs ${PIN:-none}"
} >"$REPORT"
declare -A vals
n=${#configs[@]}
for round in $(seq "$RUNS"); do
	for k in $(seq 0 $((n - 1))); do
		i=$(((k + round) % n))
		IFS='|' read -r _ shim extra <<<"${configs[$i]}"
		if [ -z "$shim" ]; then
			v=$("$work/loop" "$ITERS" 2>>"$work/stderr" | per_iter)
		else
			v=$(env STREAMCHECK_SHIM="$PWD/$shim" $extra bin/streamcheck run --no-color -o /dev/null -- "$work/loop" "$ITERS" 2>>"$work/stderr" | per_iter)
		fi
		vals[$i]+="$v "
	done
done
for i in $(seq 0 $((n - 1))); do
	label=${configs[$i]%%|*}
	med=$(printf '%s\n' ${vals[$i]} | median)
	rat=$(median_ratio "${vals[$i]}" "${vals[0]}")
	printf '%-28s %8s us/iter  ratio %5.3fx  runs: %s\n' "$label" "$med" "${rat:-0}" "${vals[$i]}" >>"$REPORT"
done
# STATS_RUNS rounds of each shim's STREAMCHECK_STATS, interleaved (the
# phase times vary less between builds than the loop's rounds do).
for r in $(seq "${STATS_RUNS:-1}"); do
	for s in "${shims[@]}"; do
		echo "stats, shim ${s%%=*}, round $r:" >>"$REPORT"
		STREAMCHECK_SHIM="$PWD/${s#*=}" STREAMCHECK_STATS=1 bin/streamcheck run --no-color -o /dev/null -- "$work/loop" "$ITERS" 2>&1 >/dev/null | grep "stats:" >>"$REPORT"
	done
done

# TORCH_RUNS > 0: the PyTorch training loop of gpu-overhead.sh too,
# natively and under each shim, interleaved.
TORCH_RUNS=${TORCH_RUNS:-0}
if [ "$TORCH_RUNS" -gt 0 ]; then
	per_step() { sed -n 's/^bench: \([0-9.]*\) ms per step.*/\1/p'; }
	torch() { PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "$@" python3 bench/gpu/train_loop.py 200 2>>"$work/stderr" | per_step; }
	declare -A tv=()
	for _ in $(seq "$TORCH_RUNS"); do
		tv[native]+="$(torch env) "
		for s in "${shims[@]}"; do
			tv[${s%%=*}]+="$(torch env STREAMCHECK_SHIM="$PWD/${s#*=}" bin/streamcheck run --no-color -o /dev/null --) "
		done
	done
	for s in "${shims[@]}"; do
		l=${s%%=*}
		printf 'PyTorch training loop, shim %-10s %6s ms/step  ratio %5.3fx  runs: %s (native: %s)\n' "$l" \
			"$(printf '%s\n' ${tv[$l]} | median)" "$(median_ratio "${tv[$l]}" "${tv[native]}")" "${tv[$l]}" "${tv[native]}" >>"$REPORT"
	done
fi

# The fake app's loop on this CPU: ns per call with the shim, minus the
# same with CUPTI-only, medians over FAKE_RUNS interleaved rounds.
if [ -x bin/ab/fakeapp ] && [ -f bin/ab/libfakecupti.so ]; then
	fake="$PWD/bin/ab/libfakecupti.so"
	fake_ns() { # shim data-thrash code-thrash extra-env...
		local shim=$1 th=$2 tc=$3
		shift 3
		# The code thrash costs microseconds a call: fewer iterations there.
		env STREAMCHECK_DIR="$work/fk" STREAMCHECK_CUPTI="$fake" STREAMCHECK_LIBCUDA="$fake" \
			FAKE_ITERS=$([ "$tc" = 0 ] && echo 40000 || echo 4000) \
			FAKE_THRASH="$th" FAKE_THRASH_CODE="$tc" FAKE_INJECT="$PWD/$shim" "$@" bin/ab/fakeapp loop 2>&1 >/dev/null |
			sed -n 's/^bench: \([0-9.]*\) ns per call.*/\1/p'
		rm -rf "$work/fk"
		mkdir -p "$work/fk"
	}
	mkdir -p "$work/fk"
	# KiB of memory read and of code run between calls (FAKE_THRASH, FAKE_THRASH_CODE)
	for thrash in 0:0 1024:0 0:2048; do
		th=${thrash%:*} tc=${thrash#*:}
		declare -A fv=()
		for _ in $(seq "$FAKE_RUNS"); do
			for s in "${shims[@]}"; do
				b=$(fake_ns "${s#*=}" "$th" "$tc" STREAMCHECK_CALLBACK_ONLY=1)
				v=$(fake_ns "${s#*=}" "$th" "$tc")
				fv[${s%%=*}]+="$(awk -v a="$v" -v b="$b" 'BEGIN { print a - b }') "
			done
		done
		for s in "${shims[@]}"; do
			l=${s%%=*}
			printf 'fake loop, FAKE_THRASH=%-5s FAKE_THRASH_CODE=%-5s shim %-10s %6.0f ns per call  (%s)\n' "$th" "$tc" "$l" \
				"$(printf '%s\n' ${fv[$l]} | median)" "${fv[$l]}" >>"$REPORT"
		done
	done
fi
cat "$REPORT"
