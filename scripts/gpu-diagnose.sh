#!/usr/bin/env bash
# gpu-diagnose.sh — questions for the GPU machine that the recorder's design
# depends on, answered with the current shim and a CUPTI probe:
#   1. which driver calls cuFFT and cuBLAS-XT make (scripts/probe/cbcount.c),
#      so an allocation path the shim does not record shows up;
#   2. whether the driver honours a rewritten cuLaunchHostFunc params struct;
#   3. the findings on the extra cuda-samples (scripts/corpus-samples-extra.tsv)
#      and the JAX programs (testdata/python/jax_*.py), recorded as they are;
#   4. where CuPy's test_raw.py spends its time under `streamcheck record`
#      (thread states and stacks after a minute), beside a native run.
# Usage (repository root, bin/ built, .corpus/src fetched as docs/real-world.md says):
#   OUT=/some/dir scripts/gpu-diagnose.sh
set -u
repo=$(pwd)
OUT=${OUT:-.gpu/diag}
mkdir -p "$OUT" .gpu
exec > >(tee -a "$OUT/diag.txt") 2>&1
SC="$repo/bin/streamcheck"
export STREAMCHECK_SHIM="$repo/bin/libstreamcheck.so"
T="$repo/.gpu/diag-traces"
rm -rf "$T"; mkdir -p "$T"

echo "== probe build"
bash scripts/probe/cbcount.sh .gpu/cbcount.so || echo "probe build failed"

echo "== test_raw.py: native and recorded, side by side, 75 s each (started first: it runs while the rest builds)"
raw=tests/cupy_tests/core_tests/test_raw.py
(cd .corpus/src/cupy && PYTHONPATH=$repo/testdata/python timeout 75 python3 -m pytest -v -p no:cacheprovider \
    -p cupy_async_pool_plugin $raw >"$T/raw-native.txt" 2>&1) &
(cd .corpus/src/cupy && PYTHONPATH=$repo/testdata/python timeout -k 5 75 "$SC" record -o "$T/raw-recorded" -- \
    python3 -m pytest -v -p no:cacheprovider -p cupy_async_pool_plugin $raw >"$T/raw-recorded.txt" 2>&1) &
(
    sleep 60
    for pid in $(pgrep -f "pytest -v -p no:cacheprovider"); do
        echo "### pid $pid: $(tr '\0' ' ' </proc/$pid/cmdline | cut -c1-120)"
        grep -q libstreamcheck /proc/$pid/maps && echo "(shim loaded)"
        for t in /proc/$pid/task/*; do
            echo "task $(basename $t) $(awk '{print $3}' $t/stat) wchan=$(cat $t/wchan 2>/dev/null) comm=$(cat $t/comm)"
        done
        command -v gdb >/dev/null && timeout 40 gdb -p "$pid" -batch -ex "thread apply all bt 25" 2>/dev/null | grep -E '^#|^Thread' | head -300
    done >"$T/raw-stacks.txt" 2>&1
) &

echo "== extra samples build"
ONLY='^(convolutionFFT2D|simpleCUFFT|simpleIPC|simpleCUBLASXT|simpleCUBLAS|simpleCUBLAS_LU|vectorAddDrv|matrixMulDrv|simpleDrvRuntime|vectorAddMMAP|memMapIPCDrv|cdpSimpleQuicksort|cdpSimplePrint|cudaOpenMP|conjugateGradient|conjugateGradientPrecond|MC_EstimatePiInlineP|vectorAdd_nvrtc)$' \
    scripts/corpus-build.sh 2>&1 | tail -25

echo "== CUPTI calls of cuFFT and cuBLAS-XT"
for p in convolutionFFT2D simpleCUBLASXT; do
    (cd .corpus/build/$p.d && CBCOUNT_ALLOCS=1 CBCOUNT_OUT="$T/cb-$p.txt" LD_PRELOAD="$repo/.gpu/cbcount.so" \
        timeout 60 ./$p >/dev/null 2>&1; echo "$p rc=$?")
done

echo "== params rewrite of cuLaunchHostFunc"
nvcc -arch=sm_90 -Itestdata/cuda testdata/cuda/host_func_ok.cu -o .gpu/host_func_ok 2>&1 | tail -3
CBCOUNT_REWRITE=1 CBCOUNT_OUT="$T/rewrite.txt" LD_PRELOAD="$repo/.gpu/cbcount.so" .gpu/host_func_ok
grep -E "hostfn|LaunchHostFunc" "$T/rewrite.txt"

echo "== extra samples recorded"
for d in .corpus/build/*.d; do
    p=$(basename "$d" .d)
    [ -x "$d/$p" ] || { echo "$p: not built"; continue; }
    (cd "$d" && timeout -k 5 90 "$SC" record -o "$T/$p" -- ./$p >"$T/$p.out" 2>&1; echo "$p record rc=$?")
    "$SC" check --format json -o "$T/$p.json" "$T/$p" >/dev/null 2>"$T/$p.check.err"
    echo "$p check rc=$? $(python3 -c 'import json,sys,collections; d=json.load(open(sys.argv[1])); print(dict(collections.Counter(f["rule"] for f in d.get("findings",[]))))' "$T/$p.json" 2>&1 | tail -1)"
done
echo "== convolutionFFT2D 8 runs"
for i in 1 2 3 4 5 6 7 8; do
    (cd .corpus/build/convolutionFFT2D.d && "$SC" record -o "$T/fft-$i" -- ./convolutionFFT2D >/dev/null 2>&1)
    "$SC" check "$T/fft-$i" 2>&1 | grep -E "^(error|warning)|use-after-free" | head -3
    echo "run $i rc=$?"
done

echo "== JAX programs"
python3 -c 'import jax; print(jax.__version__, jax.default_backend(), jax.devices())' 2>&1 | tail -1
for py in testdata/python/jax_*.py; do
    n=$(basename "$py" .py)
    XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async XLA_PYTHON_CLIENT_PREALLOCATE=false \
        PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync timeout -k 5 120 "$SC" record -o "$T/$n" -- python3 "$py" \
        >"$T/$n.out" 2>&1
    echo "$n record rc=$?"
    "$SC" check "$T/$n" >"$T/$n.report.txt" 2>&1
    echo "$n check rc=$?"; grep -E "^(error|warning)" "$T/$n.report.txt" | sort | uniq -c | head
done
wait $(jobs -p)  # not a bare wait: it would wait for the tee above, which waits for us
echo "== test_raw results"
tail -3 "$T/raw-native.txt"; grep -c PASSED "$T/raw-native.txt"; grep -c PASSED "$T/raw-recorded.txt"; tail -5 "$T/raw-recorded.txt"
ls -la "$T/raw-recorded" 2>/dev/null | head
head -150 "$T/raw-stacks.txt"
# Traces over 3 MB stay out of the archive.
(cd "$T" && find . -type f -size +3M -delete; tar czf "$OUT/diag-traces.tar.gz" .)
ls -la "$OUT"
