# drvbench-lib.sh: sourced by shim-memory.sh and shim-calls.sh, with their
# arguments (the shims to measure). Builds, in a temporary $work, the driver
# whose entry points do nothing (intercept/testdata/thindrv.c, as
# libcuda.so.1) and the program that calls it (drvbench.c), and the shim
# from the tree when no shim was named; names the environment that
# preloads a shim under the interposition backend.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=intercept/testdata
${CC:-cc} -O2 -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$work/libcuda.so.1" $src/thindrv.c -lpthread
${CC:-cc} -O2 -o "$work/drvbench" $src/drvbench.c -L"$work" -l:libcuda.so.1 -Wl,-rpath,"$work" -lpthread
if [ $# -eq 0 ]; then
	bash scripts/build.sh shim "$work/libstreamcheck.so" >/dev/null
	set -- "$work/libstreamcheck.so"
fi

# with_shim SHIM: the settings that preload SHIM ("-": none) under the
# interposition backend, one a line, for mapfile.
with_shim() {
	[ "$1" = - ] && return 0
	printf '%s\n' "LD_PRELOAD=$1" STREAMCHECK_PRELOAD=1 STREAMCHECK_BACKEND=interpose "STREAMCHECK_LIBCUDA=$work/libcuda.so.1"
}
