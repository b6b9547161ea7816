#!/usr/bin/env bash
# gpu-verify.sh — one pass on the GPU machine over programs nobody here wrote
# and the project's own GPU programs, with both recording backends, inside a
# fixed time budget. Phases (each packed into $OUT/results.tar.gz as it ends,
# so a run cut short still returns what it did):
#   0. in the background: CuPy's test_raw.py natively and under `run`
#      (scripts/gpu-cupy-raw.sh);
#   1. build: the real-world corpus's cuda-samples, variants and extra samples
#      (scripts/corpus-build.sh) and the testdata programs ONLY selects
#      (scripts/gpu-run.sh build);
#   2. record and check with the CUPTI backend: the corpus's CUDA rows
#      (scripts/gpu-corpus.sh), the selected testdata programs and Python
#      programs (gpu-run.sh), and convolutionFFT2D FFT_RUNS times, with the
#      CUPTI probe's list of its allocation calls (scripts/probe/cbcount.c);
#   3. the same corpus rows and programs with the interpose backend;
#   4. bench/gpu-backends.sh with what is left of BUDGET_S.
# Usage (repository root; bin/ built by scripts/build.sh; .corpus/src fetched
# as docs/real-world.md says; the corpus is built into .corpus/build, so a
# fresh copy of .corpus put in place of the old one removes the build):
#   OUT=dir ONLY='^(jax_|host_free)' scripts/gpu-verify.sh
# Environment: ONLY (gpu-run.sh's case regex, default: every case),
# ONLY_INTERPOSE (the cases phase 3 records again, default ONLY),
# FFT_RUNS (default 20), BUDGET_S (default 520: phase 4 stops by then),
# CORPUS_ONLY (a regex on corpus program names, default all), RAW=0 (no test_raw.py).
set -u
repo=$(pwd)
OUT=${OUT:-.gpu/verify}
case "$OUT" in /*) ;; *) OUT="$repo/$OUT" ;; esac
W="$repo/.gpu/verify-work"
FFT_RUNS=${FFT_RUNS:-20}
BUDGET_S=${BUDGET_S:-520}
rm -rf "$W"; mkdir -p "$OUT" "$W"
exec > >(tee -a "$W/verify.txt") 2>&1
SC="$repo/bin/streamcheck"
export STREAMCHECK_SHIM="$repo/bin/libstreamcheck.so"
t0=$SECONDS
pack() {  # traces over 4 MB stay out; the archive must stay under 16 MB
    echo "== packed after $1 at $((SECONDS - t0)) s"
    (cd "$W" && tar czf "$OUT/results.tar.gz.tmp" --exclude='*.d' --exclude='build' \
        $(find . -maxdepth 1 -mindepth 1 -printf '%P\n') 2>/dev/null
     mv "$OUT/results.tar.gz.tmp" "$OUT/results.tar.gz")
    ls -la "$OUT/results.tar.gz"
}
phase() { echo "== $1 at $((SECONDS - t0)) s"; }

raw_pid=0
if [ "${RAW:-1}" != 0 ]; then
    phase "0: test_raw.py in the background"
    (OUT="$W/raw" EVERY=3 TIMEOUT_S=${RAW_TIMEOUT_S:-160} WATCH_S=100 bash scripts/gpu-cupy-raw.sh >"$W/raw.log" 2>&1) &
    raw_pid=$!
fi

phase "1: build"
bash scripts/probe/cbcount.sh "$W/cbcount.so" || echo "probe build failed"
(ONLY="${CORPUS_ONLY:-}" scripts/corpus-build.sh >"$W/corpus-build.log" 2>&1; tail -3 "$W/corpus-build.log") &
(OUT="$W/gpurun-cupti" SC_WORK="$W/gpurun-cupti-work" BUILD_JOBS=8 bash scripts/gpu-run.sh build >/dev/null 2>&1
 echo "gpu-run build done") &
wait $(jobs -p | grep -v "^$raw_pid$") 2>/dev/null
awk -F'\t' -v only="${CORPUS_ONLY:-}" '$2 == "cuda" && (only == "" || $1 ~ only)' .corpus/manifest.tsv >"$W/manifest-cuda.tsv"
echo "corpus CUDA rows: $(wc -l <"$W/manifest-cuda.tsv")"
pack build

phase "2: CUPTI backend"
(ONLY="${CORPUS_ONLY:-}" OUT="$W/corpus-cupti" SC_WORK="$W/corpus-cupti-work" SANITIZER=0 JOBS=4 DEADLINE_S=150 \
    RECORD_ARGS="--backend cupti" bash scripts/gpu-corpus.sh "$W/manifest-cuda.tsv" >/dev/null 2>&1; echo "corpus (cupti) done") &
(OUT="$W/gpurun-cupti" SC_WORK="$W/gpurun-cupti-work" RECORD_ARGS="--backend cupti" RECORD_JOBS=3 bash scripts/gpu-run.sh record >/dev/null 2>&1
 OUT="$W/gpurun-cupti" SC_WORK="$W/gpurun-cupti-work" bash scripts/gpu-run.sh check >/dev/null 2>&1
 echo "gpu-run (cupti) done"; grep -E "PASS|FAIL" "$W/gpurun-cupti/summary.txt" | head -60) &
(
    d=.corpus/build/convolutionFFT2D.d
    [ -x "$d/convolutionFFT2D" ] || { echo "convolutionFFT2D not built"; exit 0; }
    (cd "$d" && CBCOUNT_ALLOCS=1 CBCOUNT_OUT="$W/fft-cbcount.txt" LD_PRELOAD="$W/cbcount.so" ./convolutionFFT2D >/dev/null 2>&1)
    clean=0
    for i in $(seq 1 "$FFT_RUNS"); do
        (cd "$d" && timeout 60 "$SC" record --backend cupti -o "$W/fft/run-$i" -- ./convolutionFFT2D >/dev/null 2>&1)
        "$SC" check --format json -o "$W/fft/run-$i.json" "$W/fft/run-$i" >/dev/null 2>&1
        rc=$?
        [ $rc -eq 0 ] && clean=$((clean + 1))
        echo "fft run $i: check rc=$rc $(grep -o '"unknown_address_uses": *[0-9]*' "$W/fft/run-$i.json" | tail -1)"
    done
    echo "convolutionFFT2D: $clean of $FFT_RUNS runs clean"
    # keep two runs' traces
    for i in $(seq 3 "$FFT_RUNS"); do rm -rf "$W/fft/run-$i"; done
) >"$W/fft.txt" 2>&1 &
wait $(jobs -p | grep -v "^$raw_pid$") 2>/dev/null
cat "$W/fft.txt" | tail -4
grep -c . "$W/corpus-cupti/corpus-summary.tsv" 2>/dev/null
pack cupti

phase "3: interpose backend"
(ONLY="${CORPUS_ONLY:-}" OUT="$W/corpus-interpose" SC_WORK="$W/corpus-interpose-work" SANITIZER=0 JOBS=4 DEADLINE_S=120 \
    RECORD_ARGS="--backend interpose" bash scripts/gpu-corpus.sh "$W/manifest-cuda.tsv" >/dev/null 2>&1
 echo "corpus (interpose) done") &
(ONLY="${ONLY_INTERPOSE:-${ONLY:-}}" OUT="$W/gpurun-interpose" SC_WORK="$W/gpurun-cupti-work" TRACE_DIR="$W/gpurun-interpose-traces" RECORD_ARGS="--backend interpose" \
    RECORD_JOBS=3 bash scripts/gpu-run.sh record >/dev/null 2>&1
 ONLY="${ONLY_INTERPOSE:-${ONLY:-}}" OUT="$W/gpurun-interpose" SC_WORK="$W/gpurun-cupti-work" TRACE_DIR="$W/gpurun-interpose-traces" bash scripts/gpu-run.sh check >/dev/null 2>&1
 echo "gpu-run (interpose) done"; grep -E "PASS|FAIL" "$W/gpurun-interpose/summary.txt" | head -60) &
wait $(jobs -p | grep -v "^$raw_pid$") 2>/dev/null
pack interpose

phase "4: overhead"
left=$((BUDGET_S - (SECONDS - t0)))
if [ "$left" -gt 90 ]; then
    OUT="$W/bench" RUNS=${RUNS:-5} TORCH_RUNS=${TORCH_RUNS:-3} MODEL_RUNS=${MODEL_RUNS:-3} \
        timeout "$left" bash bench/gpu-backends.sh >"$W/bench.log" 2>&1
    echo "bench rc=$?"; tail -30 "$W/bench/backends.txt" 2>/dev/null
else
    echo "no time left for the overhead bench ($left s)"
fi
[ "$raw_pid" = 0 ] || { kill "$raw_pid" 2>/dev/null; wait "$raw_pid" 2>/dev/null; }
cat "$W/raw/cupy-raw-summary.txt" 2>/dev/null
pack all
cp "$W/verify.txt" "$OUT/verify.txt"
