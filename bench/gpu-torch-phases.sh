#!/usr/bin/env bash
# Where the recording time goes on a real program: the PyTorch training loop
# (bench/gpu/train_loop.py, cudaMallocAsync backend) natively, natively with
# CPython's perf trampolines on, and under `streamcheck run` with each costly
# part of the shim turned off in turn, every run with STREAMCHECK_STATS=1 so
# the shim prints its own time per call, its stack cache hits and unwinds.
# ROUNDS rounds (default 2), each running every configuration once. Then,
# where perf is installed (PERF=0 skips it), one more run of the default
# configuration under `perf record`, and the shim's hottest functions.
#
# Usage, from the repository root, with bin/streamcheck and bin/libstreamcheck.so built:
#   OUT=dir bash bench/gpu-torch-phases.sh     -> $OUT/torch-phases.txt
set -u
# The CUPTI backend, whose callbacks alone are one configuration here
# (bench/gpu-backends.sh compares the backends); STREAMCHECK_BACKEND=interpose
# runs the same rounds under the default backend.
export STREAMCHECK_BACKEND=${STREAMCHECK_BACKEND:-cupti}
OUT=${OUT:-.gpu/out}; mkdir -p "$OUT"
REPORT="$OUT/torch-phases.txt"
STEPS=${STEPS:-200}
ROUNDS=${ROUNDS:-2}
export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
work=$(mktemp -d)
sc_run() { STREAMCHECK_STATS=1 bin/streamcheck run --no-color -o "$work/report-$cfg.txt" -- "$@"; }
native() { "$@"; }
# Each configuration is "label|runner|VAR=value ...".
configs=(
	"native|native|"
	"native, PYTHONPERFSUPPORT=1|native|PYTHONPERFSUPPORT=1"
	"streamcheck run (default)|sc_run|"
	"streamcheck run, Python callers off|sc_run|STREAMCHECK_PYTHON_CALLERS=0"
	"streamcheck run, Python lines off|sc_run|STREAMCHECK_PYTHON_LINES=0"
	"streamcheck run, PYTHONPERFSUPPORT=0|sc_run|PYTHONPERFSUPPORT=0"
	"streamcheck run, stacks off|sc_run|STREAMCHECK_STACK_DEPTH=0"
	"streamcheck run, CUPTI callbacks only|sc_run|STREAMCHECK_CALLBACK_ONLY=1"
)
echo "# PyTorch training loop: where the recording time goes, $(date -u +%F); $STEPS steps per run" >"$REPORT"
for round in $(seq "$ROUNDS"); do
	for cfg in "${!configs[@]}"; do
		IFS='|' read -r label runner envs <<<"${configs[$cfg]}"
		out=$(
			for kv in $envs; do export "${kv?}"; done
			"$runner" python3 bench/gpu/train_loop.py "$STEPS" 2>&1
		)
		{
			echo "== round $round: $label"
			grep -E '^bench:|stats:' <<<"$out"
		} >>"$REPORT"
	done
done
if [ "${PERF:-1}" != 0 ] && command -v perf >/dev/null; then
	{
		echo "== perf: the default configuration, the shim's functions by share of all samples"
		perf record -q -F 4999 -o "$work/perf.data" -- bin/streamcheck run --no-color -o "$work/perf-report.txt" -- \
			python3 bench/gpu/train_loop.py "$STEPS" 2>&1 | grep -E '^bench:'
		perf report -i "$work/perf.data" --no-children --sort dso,sym --stdio 2>/dev/null |
			grep -E 'libstreamcheck|libc\.so|ld-linux' | head -40
	} >>"$REPORT"
else
	echo "== perf: not installed (or PERF=0); no profile" >>"$REPORT"
fi
echo "streamcheck findings under the default configuration (expected no errors): $(tail -1 "$work/report-2.txt" 2>/dev/null)" >>"$REPORT"
cat "$REPORT"
