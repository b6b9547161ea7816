#!/bin/bash
# run.sh: check the shim on a machine with a GPU, CUDA (nvcc) and,
# optionally, CuPy and PyTorch. Not part of CI.
#
#   scripts/build.sh shim intercept/libstreamcheck.so
#   go build -o scdump ./intercept/testdata/gpu/scdump
#   intercept/testdata/gpu/run.sh intercept/libstreamcheck.so ./scdump OUTDIR
#
# Writes OUTDIR/*.txt: each program's output, native and under the shim,
# the decoded traces, and the overhead numbers.
set -u
SHIM=$(realpath "$1"); DUMP=$(realpath "$2"); OUT=$(realpath -m "$3")
HERE=$(dirname "$(realpath "$0")")
mkdir -p "$OUT"
W=$(mktemp -d)
cd "$W"
exec > >(tee "$OUT/run.txt") 2>&1

echo "== machine"
nvidia-smi -L; nvcc --version | tail -2
ls -l /usr/local/cuda/lib64/libcupti.so* 2>/dev/null

nvcc -O2 -arch=native -o smoke "$HERE/smoke.cu" || nvcc -O2 -o smoke "$HERE/smoke.cu"
nvcc -O2 -arch=native --default-stream per-thread -o smoke_pt "$HERE/smoke.cu" || nvcc -O2 --default-stream per-thread -o smoke_pt "$HERE/smoke.cu"
nvcc -O2 -arch=native -o bench "$HERE/../../../bench/gpu/loop.cu" || nvcc -O2 -o bench "$HERE/../../../bench/gpu/loop.cu"

traced() { # name, then the command: run under the shim, decode its traces
  local name=$1; shift
  local d="$W/t-$name"; rm -rf "$d"; mkdir -p "$d"
  echo "== $name (injection)"
  STREAMCHECK_DIR=$d CUDA_INJECTION64_PATH=$SHIM "$@"; echo "exit $?"
  ls -l "$d"; cat "$d"/*.error 2>/dev/null
  "$DUMP" "$d"/*.sctrace > "$OUT/$name.trace.txt" 2>&1
  echo "-- $(grep -c '' "$OUT/$name.trace.txt") lines decoded; ops:"
  awk '{print $2}' "$OUT/$name.trace.txt" | sort | uniq -c | sort -rn | head -30
  tail -2 "$OUT/$name.trace.txt"
}

echo "== smoke (native)"; ./smoke; echo "exit $?"
traced smoke ./smoke
traced smoke_pt ./smoke_pt
echo "== smoke (preload)"
d="$W/t-smoke-preload"; mkdir -p "$d"
STREAMCHECK_DIR=$d LD_PRELOAD=$SHIM STREAMCHECK_PRELOAD=1 ./smoke; echo "exit $?"
"$DUMP" "$d"/*.sctrace > "$OUT/smoke-preload.trace.txt" 2>&1; tail -2 "$OUT/smoke-preload.trace.txt"

echo "== smoke abort (the trace must read as truncated, with every event before the abort)"
d="$W/t-abort"; mkdir -p "$d"
STREAMCHECK_DIR=$d CUDA_INJECTION64_PATH=$SHIM ./smoke abort; echo "exit $?"
"$DUMP" "$d"/*.sctrace > "$OUT/smoke-abort.trace.txt" 2>&1; tail -3 "$OUT/smoke-abort.trace.txt" | cut -c1-200

echo "== bench: us per iteration, 5 runs each, interleaved"
declare -A R
for i in 1 2 3 4 5; do
  R[native]+=" $(./bench 20000 | awk '{print $2}')"
  R[shim]+=" $(STREAMCHECK_DIR=$W CUDA_INJECTION64_PATH=$SHIM ./bench 20000 | awk '{print $2}')"
  R[nostack]+=" $(STREAMCHECK_DIR=$W STREAMCHECK_STACK_DEPTH=0 CUDA_INJECTION64_PATH=$SHIM ./bench 20000 | awk '{print $2}')"
  R[noruntime]+=" $(STREAMCHECK_DIR=$W STREAMCHECK_RUNTIME_NAMES=0 CUDA_INJECTION64_PATH=$SHIM ./bench 20000 | awk '{print $2}')"
  R[bare]+=" $(STREAMCHECK_DIR=$W STREAMCHECK_STACK_DEPTH=0 STREAMCHECK_RUNTIME_NAMES=0 CUDA_INJECTION64_PATH=$SHIM ./bench 20000 | awk '{print $2}')"
  rm -f $W/*.sctrace
done
for k in native shim nostack noruntime bare; do
  echo "$k: ${R[$k]}  min $(echo ${R[$k]} | tr ' ' '\n' | sort -n | head -1)"
done
echo "== bench, 8 threads"
./bench 5000 8
STREAMCHECK_DIR=$W CUDA_INJECTION64_PATH=$SHIM ./bench 5000 8
"$DUMP" $W/*.sctrace | tail -1; rm -f $W/*.sctrace

if python3 -c 'import cupy' 2>/dev/null; then
  traced cupy python3 "$HERE/frameworks.py" cupy
  grep -m5 'launch' "$OUT/cupy.trace.txt"
fi
if python3 -c 'import torch' 2>/dev/null; then
  traced torch python3 "$HERE/frameworks.py" torch
  grep -m5 'launch' "$OUT/torch.trace.txt"
  echo "== torch bench"
  for i in 1 2 3; do
    echo -n "native: "; python3 "$HERE/frameworks.py" torchbench
    echo -n "shim:   "; STREAMCHECK_DIR=$W CUDA_INJECTION64_PATH=$SHIM python3 "$HERE/frameworks.py" torchbench
    rm -f $W/*.sctrace
  done
fi
rm -rf "$W"
