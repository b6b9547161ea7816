#!/usr/bin/env bash
# gpu-accuracy.sh — the short GPU pass for the analyzer's accuracy on JAX,
# cuFFT and host memory, everything at once so it fits a few minutes:
#   - the JAX programs (testdata/python/jax_*.py) on XLA's cuda_async allocator,
#     recorded and checked;
#   - NVIDIA's convolutionFFT2D (from .corpus/src, docs/real-world.md) built,
#     recorded and checked FFT_RUNS times, with the CUPTI probe's list of the
#     allocation calls it makes (scripts/probe/cbcount.c);
#   - testdata/cuda programs matching CU_ONLY (default: the host-free,
#     host-function and public bug report programs), built static, recorded
#     and checked.
# Usage (repository root, bin/ built): OUT=dir scripts/gpu-accuracy.sh
# Writes $OUT/accuracy.txt and $OUT/accuracy.tar.gz (traces and reports).
set -u
repo=$(pwd)
OUT=${OUT:-.gpu/accuracy}
case "$OUT" in /*) ;; *) OUT="$repo/$OUT" ;; esac
W="$repo/.gpu/accuracy-work"
FFT_RUNS=${FFT_RUNS:-20}
CU_ONLY=${CU_ONLY:-'^(host_free|host_func_completion|kokkos_cudafree|rmm_sync_alloc|warp_captured_free)_'}
rm -rf "$W"; mkdir -p "$OUT" "$W/bin"
exec > >(tee "$OUT/accuracy.txt") 2>&1
SC="$repo/bin/streamcheck"
export STREAMCHECK_SHIM="$repo/bin/libstreamcheck.so"
t0=$SECONDS
summary() {  # summary NAME DIR: the check's exit code and its findings by rule
    "$SC" check --format json -o "$W/$1.json" "$2" >/dev/null 2>"$W/$1.check.err"
    local rc=$?
    echo "$1: check rc=$rc $(python3 -c 'import json,sys,collections; d=json.load(open(sys.argv[1])); print(dict(collections.Counter(f["rule"] for f in d.get("findings",[]))), "unknown_address_uses", d["summary"].get("unknown_address_uses"))' "$W/$1.json" 2>&1 | tail -1)"
}

# Builds, side by side.
bash scripts/probe/cbcount.sh "$W/cbcount.so" &
fft=.corpus/src/cuda-samples/Samples/5_Domain_Specific/convolutionFFT2D
nvcc -arch=sm_90 -I.corpus/src/cuda-samples/Common "$fft"/*.cu "$fft"/*.cpp -o "$W/bin/convolutionFFT2D" -lcufft &
for cu in testdata/cuda/*.cu; do
    n=$(basename "$cu" .cu)
    [[ $n =~ $CU_ONLY ]] || continue
    nvcc -O2 -g -lineinfo -arch=sm_90 -Itestdata/cuda "$cu" -o "$W/bin/$n" -lcuda &
done
# JAX while the builds run.
for py in testdata/python/jax_*.py; do
    n=$(basename "$py" .py)
    (XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async XLA_PYTHON_CLIENT_PREALLOCATE=false \
        PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync timeout -k 5 150 "$SC" record -o "$W/$n" -- python3 "$py" \
        >"$W/$n.out" 2>&1; echo "$n: record rc=$?"; summary "$n" "$W/$n") &
done
wait $(jobs -p)  # not a bare wait: it would wait for the tee above, which waits for us
echo "== builds and JAX done at $((SECONDS - t0)) s"
for b in "$W"/bin/*; do
    n=$(basename "$b")
    [ "$n" = convolutionFFT2D ] && continue
    (timeout 60 "$SC" record -o "$W/$n" -- "$b" >"$W/$n.out" 2>&1; echo "$n: record rc=$?"; summary "$n" "$W/$n") &
done
(cd "$W" && CBCOUNT_ALLOCS=1 CBCOUNT_OUT="$W/fft-cbcount.txt" LD_PRELOAD="$W/cbcount.so" bin/convolutionFFT2D >/dev/null 2>&1)
clean=0
for i in $(seq 1 "$FFT_RUNS"); do
    (cd "$W" && timeout 60 "$SC" record -o "$W/fft-$i" -- bin/convolutionFFT2D >/dev/null 2>&1)
    "$SC" check "$W/fft-$i" >"$W/fft-$i.txt" 2>&1 && clean=$((clean + 1))
    [ "$i" -le 2 ] || rm -rf "$W/fft-$i"
done
echo "convolutionFFT2D: $clean of $FFT_RUNS runs clean; $(grep -h 'unknown addresses' "$W"/fft-*.txt | sort | uniq -c | head -3)"
for t in "$W"/fft-1/*.sctrace; do
    "$SC" convert -o "$W/fft-1.jsonl" "$t" >/dev/null 2>&1
    echo "convolutionFFT2D, first recording: $(grep -c '"kind":"module"' "$W/fft-1.jsonl") module global lookups recorded, $(grep -c '"op":"malloc"' "$W/fft-1.jsonl") mallocs"
done
wait $(jobs -p)  # not a bare wait: it would wait for the tee above, which waits for us
grep -E "^call .*(Alloc|Free|Map|Create|Reserve)" "$W/fft-cbcount.txt" | awk '{print $2}' | sort | uniq -c
grep -E "^drv" "$W/fft-cbcount.txt" | sort -k2 -nr | head -40
echo "== done at $((SECONDS - t0)) s"
rm -rf "$W/bin"
(cd "$W" && tar czf "$OUT/accuracy.tar.gz" .)
ls -la "$OUT"
