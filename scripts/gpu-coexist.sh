#!/usr/bin/env bash
# gpu-coexist.sh — how `streamcheck run` behaves next to another CUPTI user
# (Nsight Systems, compute-sanitizer), on the GPU machine.
#
# Usage, from the repository root, after scripts/gpu-run.sh build:
#   OUT=dir bash scripts/gpu-coexist.sh        -> $OUT/coexist.txt
#
# For each combination it prints the command, the exit code, the program's
# STREAMCHECK_DONE line (the program itself still ran correctly) and the last
# lines of streamcheck's output. Tools that are not installed are skipped.
# Every combination is tried under each backend of BACKENDS (default
# "cupti interpose"): CUPTI takes one subscriber per process, the interposed
# wrappers leave it to the profiler. NCU_ONLY=1 tries the program alone and
# the ncu combinations only.
set -u
OUT=${OUT:-.gpu/out}; mkdir -p "$OUT"
SC_WORK=${SC_WORK:-.gpu/run}
prog=${PROG:-$SC_WORK/build/use_before_alloc_racy-static}
report="$OUT/coexist.txt"
work=$(mktemp -d)
: >"$report"

try() {
	local label=$1; shift
	{
		echo "## $label"
		echo "\$ $*"
	} >>"$report"
	timeout 120 "$@" >"$work/out" 2>&1
	local rc=$?
	{
		echo "exit: $rc"
		grep -m1 'STREAMCHECK_DONE' "$work/out" || echo "(program did not finish: no STREAMCHECK_DONE)"
		grep -v '^STREAMCHECK_' "$work/out" | grep -i -E '^env: |^mapped: |streamcheck|cupti|error|finding|race|use-before|==PROF==|Duration|ERROR SUMMARY' | head -24
		echo
	} >>"$report"
}

[ -x "$prog" ] || { echo "no test program at $prog (run scripts/gpu-run.sh build first)" >>"$report"; exit 2; }
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for backend in ${BACKENDS:-cupti interpose}; do
	echo "# backend $backend" >>"$report"
	sc=(bin/streamcheck run --no-color --backend "$backend" --)
	try "alone ($backend)" "${sc[@]}" "$prog"
	if [ "${NCU_ONLY:-0}" != 1 ]; then
		if [ -n "$nsys" ]; then
			try "streamcheck run inside nsys profile ($backend)" "$nsys" profile --trace=cuda --force-overwrite=true -o "$work/nsys1" "${sc[@]}" "$prog"
			try "nsys profile inside streamcheck run ($backend)" "${sc[@]}" "$nsys" profile --trace=cuda --force-overwrite=true -o "$work/nsys2" "$prog"
		else
			echo "## nsys: not installed, skipped" >>"$report"
		fi
		if command -v compute-sanitizer >/dev/null; then
			try "compute-sanitizer inside streamcheck run ($backend)" "${sc[@]}" compute-sanitizer --tool memcheck "$prog"
			try "streamcheck run inside compute-sanitizer ($backend)" compute-sanitizer --tool memcheck --target-processes all "${sc[@]}" "$prog"
		fi
	fi
	if [ -n "$ncu" ]; then
		try "ncu inside streamcheck run ($backend)" "${sc[@]}" "$ncu" --launch-count 1 "$prog"
		try "streamcheck run inside ncu ($backend)" "$ncu" --target-processes all --launch-count 1 "${sc[@]}" "$prog"
		# What reaches the profiled program's process: ncu's launcher may
		# set its own preload and injection variables.
		try "the environment ncu gives the program ($backend)" "${sc[@]}" "$ncu" --launch-count 1 \
			sh -c 'env | grep -E "^(LD_[A-Z_]*|STREAMCHECK_[A-Z_]*|CUDA_[A-Z0-9_]*|NV_[A-Z0-9_]*|NVTX_[A-Z0-9_]*)=" | sed "s/^/env: /"
				grep -E "streamcheck|Injection|nvperf|cupti|libcuda" /proc/$$/maps | awk "{ print \"mapped: \" \$6 }" | sort -u
				exec "$0"' "$prog"
		# Whether the shim in the profiled program saw any call (its stats
		# at exit), and whether it started at all.
		try "the shim's own count under ncu ($backend)" env STREAMCHECK_STATS=1 "${sc[@]}" "$ncu" --launch-count 1 "$prog"
		# Which library the program's dlsym and cuGetProcAddress bind to
		# under ncu: the dynamic linker's own account, per process.
		rm -rf "$work/ld"; mkdir -p "$work/ld"
		LD_DEBUG=bindings LD_DEBUG_OUTPUT="$work/ld/b" timeout 120 "${sc[@]}" "$ncu" --launch-count 1 "$prog" >/dev/null 2>&1
		{
			echo "## symbol bindings under ncu ($backend): dlsym, dlvsym, cuGetProcAddress, per process"
			for f in "$work"/ld/b.*; do
				[ -f "$f" ] || continue
				echo "process ${f##*.}: $(grep -m1 -o "file=[^ ]*" "$f" | head -1)"
				# The program's own bindings first: which dlsym its cudart calls.
				grep -E "symbol .(dlsym|dlvsym|cuGetProcAddress(_v2)?|cuInit). " "$f" | sed 's/^ *[0-9]*: *//' |
					awk -v p="$(basename "$prog")" 'index($0, p) { print "0 " $0; next } { print "1 " $0 }' | sort | uniq -c |
					sed 's/ [01] / /' | head -16
			done
			echo
		} >>"$report"
	fi
done
cat "$report"
