#!/usr/bin/env bash
# corpus-build.sh — build the cuda-samples of the real-world corpus and their
# racy variants, and write the manifest scripts/gpu-corpus.sh runs.
#
# Usage (from the repository root, on the GPU machine):
#   scripts/corpus-build.sh
#
# .corpus/ (git-ignored) is the corpus folder, CORPUS_DIR below.
# CORPUS_DIR/src/cuda-samples must hold NVIDIA/cuda-samples (at least Common/
# and the Samples/ folders testdata/realworld/VERDICTS.tsv names), and
# CORPUS_DIR/src/cupy CuPy's tests/ folder at the installed CuPy's tag; the
# corpus is never vendored into the repository (docs/real-world.md says how
# to fetch both). The script builds every sample VERDICTS.tsv names with nvcc
# into CORPUS_DIR/build, and the racy variants of scripts/corpus-variants.py,
# then writes CORPUS_DIR/manifest.tsv: the samples, the variants (each
# expecting the rules VERDICTS.tsv gives it), testdata/python/corpus-cupy.tsv
# and testdata/python/corpus-torch.tsv. Then
#   scripts/gpu-corpus.sh .corpus/manifest.tsv
#
# Environment: ONLY (an extended regex: build only the programs whose names match it),
# NVCC (default from PATH, else /usr/local/cuda/bin/nvcc),
# ARCH (default sm_90), BUILD_JOBS (default 16).
# Exit status: 0 when every program built, 1 when any failed (the others are
# still in the manifest), 2 when the sources or nvcc are missing.
set -u

repo=$(pwd)
corpus="$repo/.corpus"
src="$corpus/src/cuda-samples"
build="$corpus/build"
verdicts="$repo/testdata/realworld/VERDICTS.tsv"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
arch=${ARCH:-sm_90}
jobs=${BUILD_JOBS:-16}

[ -d "$src/Common" ] && [ -d "$src/Samples" ] || { echo "corpus-build.sh: $src: no cuda-samples checkout (Common/, Samples/)" >&2; exit 2; }
[ -d "$corpus/src/cupy/tests" ] || { echo "corpus-build.sh: $corpus/src/cupy/tests: no CuPy tests folder" >&2; exit 2; }
[ -x "$nvcc" ] || command -v "$nvcc" >/dev/null || { echo "corpus-build.sh: no nvcc ($nvcc)" >&2; exit 2; }
mkdir -p "$build/logs" "$corpus/variants"

# The samples build as their CMake files say: separable compilation,
# extended lambdas, line info, the Common/ headers, and the CUDA libraries
# some of them link (an unused one costs nothing).
flags=(-arch="$arch" -rdc=true --extended-lambda -lineinfo -I"$src/Common")
libs=(-lcublas -lcusparse -lcurand -lcufft -lnvrtc -lcuda)

selected() { [ -z "${ONLY:-}" ] || [[ $1 =~ $ONLY ]]; }

build_one() {  # build_one NAME DIR SOURCE...
    local name=$1 dir=$2; shift 2
    local extra=()
    case "$name" in
        UnifiedMemoryStreams | cudaOpenMP) extra=(-Xcompiler -fopenmp -lgomp) ;;
        simpleIPC | memMapIPCDrv) set -- "$@" "$src/Common/helper_multiprocess.cpp" ;;
        streamOrderedAllocationIPC) set -- "$@" "$src/Common/helper_multiprocess.cpp" ;;
    esac
    if "$nvcc" "${flags[@]}" "${extra[@]}" -I"$dir" "$@" -o "$build/$name" "${libs[@]}" >"$build/logs/$name.log" 2>&1; then
        echo "built  $name"
    else
        echo "FAILED $name (see $build/logs/$name.log)"
        rm -f "$build/$name"
    fi
}

# Samples built in a folder of their own (scripts/corpus-samples-extra.tsv:
# driver-API samples with their fatbin or PTX, NVRTC ones with their source).
extras=$(awk -F'\t' '!/^#/ && NF == 2' scripts/corpus-samples-extra.tsv)
# Samples: the other rows of VERDICTS.tsv whose program is "NVIDIA cuda-samples Samples/...".
samples=$(awk -F'\t' 'NR == FNR { if (!/^#/) own[$1] = 1; next }
    !/^#/ && $2 ~ /^NVIDIA cuda-samples Samples\// && !($1 in own) { split($2, w, " "); print $1 "\t" w[3] }' \
    scripts/corpus-samples-extra.tsv "$verdicts")
# Variants: name and the sample each changes.
variants=$(python3 scripts/corpus-variants.py --list) || exit 2
while IFS=$'\t' read -r name dir; do
    selected "$name" || continue
    d="$src/$dir"
    if [ ! -d "$d" ]; then echo "FAILED $name (no $d)"; continue; fi
    build_one "$name" "$d" $(ls "$d"/*.cu "$d"/*.cpp 2>/dev/null) &
    while [ "$(jobs -r | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
done <<<"$samples"
build_extra() {  # build_extra NAME DIR: driver-API kernels as their CMake file says, then the program
    local name=$1 d=$2 out="$build/$name.d" k srcs=()
    mkdir -p "$out"
    for k in "$d"/*_kernel.cu; do
        [ -f "$k" ] || continue
        if grep -q 'CUDA_FATBIN_FILE' "$d/CMakeLists.txt" 2>/dev/null; then
            "$nvcc" -arch="$arch" -I"$src/Common" -fatbin "$k" -o "$out/$(basename "$k" .cu)64.fatbin" >>"$build/logs/$name.log" 2>&1
        elif grep -q 'CUDA_PTX_FILE' "$d/CMakeLists.txt" 2>/dev/null; then
            "$nvcc" -arch="$arch" -I"$src/Common" -ptx "$k" -o "$out/$(basename "$k" .cu)64.ptx" >>"$build/logs/$name.log" 2>&1
        else
            cp "$k" "$out/"  # NVRTC samples compile it at run time
        fi
    done
    for k in "$d"/*.cu "$d"/*.cpp "$d"/src/*.cu "$d"/src/*.cpp; do
        [ -f "$k" ] && [ "${k%_kernel.cu}" = "$k" ] && srcs+=("$k")
    done
    build_one "$name" "$d" -I"$d/inc" "${srcs[@]}" && [ -f "$build/$name" ] && mv "$build/$name" "$out/$name"
}
while IFS=$'\t' read -r name dir; do
    [ -n "$name" ] && selected "$name" || continue
    if [ ! -d "$src/$dir" ]; then echo "FAILED $name (no $src/$dir)"; continue; fi
    build_extra "$name" "$src/$dir" &
    while [ "$(jobs -r | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
done <<<"$extras"
while IFS=$'\t' read -r variant sample; do
    selected "$variant" || continue
    dir=$(awk -F'\t' -v s="$sample" '$1 == s { print $2 }' <<<"$samples")
    if python3 scripts/corpus-variants.py "$src/$dir/$sample.cu" "$variant" "$corpus/variants/$variant.cu"; then
        build_one "$variant" "$src/$dir" "$corpus/variants/$variant.cu" &
    else
        echo "FAILED $variant (edit)"
    fi
done <<<"$variants"
wait

manifest="$corpus/manifest.tsv"
rel=${build#"$repo"/}
{
    echo "# written by scripts/corpus-build.sh: name, kind, expected, workdir, command"
    while IFS=$'\t' read -r name _; do
        printf '%s\tcuda\tclean\t%s\t./%s\n' "$name" "$rel" "$name"
    done <<<"$samples"
    while IFS=$'\t' read -r variant _; do
        rules=$(awk -F'\t' -v n="$variant" '$1 == n { print $4 }' "$verdicts" | sed -E 's/:[0-9]+//g')
        printf '%s\tcuda\t%s\t%s\t./%s\n' "$variant" "${rules:-review}" "$rel" "$variant"
    done <<<"$variants"
    while IFS=$'\t' read -r name _; do
        [ -n "$name" ] || continue
        expect=$(awk -F'\t' -v n="$name" '$1 == n { print ($3 == "correct" ? "clean" : "review") }' "$verdicts")
        printf '%s\tcuda\t%s\t%s\t./%s\n' "$name" "${expect:-review}" "$rel/$name.d" "$name"
    done <<<"$extras"
    grep -v '^#' testdata/python/corpus-cupy.tsv testdata/python/corpus-torch.tsv -h | grep .
} >"$manifest"
built=$(( $(ls "$build" | grep -v '^logs$' | grep -vc '\.d$') + $(ls "$build"/*.d/* 2>/dev/null | grep -c -v -E '\.(fatbin|ptx|cu)$') ))
want=$(( $(grep -c . <<<"$samples") + $(grep -c . <<<"$variants") + $(grep -c . <<<"$extras") ))
echo "corpus-build.sh: $built of $want programs built; manifest $manifest ($(grep -vc '^#' "$manifest") programs)"
[ "$built" -eq "$want" ]
