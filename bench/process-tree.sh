#!/usr/bin/env bash
# process-tree.sh: what recording costs a program that starts many short
# processes which make no CUDA call (a test runner, a build), now that the
# default backend preloads the shim into every process of the tree. A shell
# starts N processes of /bin/true, in interleaved rounds:
#   native            the shell alone
#   preloaded, inert  LD_PRELOAD of the shim without STREAMCHECK_PRELOAD=1
#                     (the dynamic loader's share: mapping and linking it)
#   shim started      the shim preloaded and started, as under run, with
#                     its marks (what each process's start and exit add)
#   streamcheck run   the whole run, the launcher included
#   base              with BASE_SHIM=path: "shim started" with that shim
#                     (an earlier build), for a side-by-side figure
# Printed: each configuration's median ms a process over native's.
#
# Usage, from the repository root, with bin/ built by scripts/build.sh:
#   bash bench/process-tree.sh         (ROUNDS=n, PROCS=n; default 5 and 300)
#   -> bench/results/process-tree.txt when RESULTS=1
set -eu
. bench/lib.sh # median
rounds=${ROUNDS:-5} procs=${PROCS:-300}
shim=$PWD/bin/libstreamcheck.so
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'i=0; while [ $i -lt %d ]; do /bin/true; i=$((i+1)); done\n' "$procs" >"$work/tree.sh"

# ms CMD...: one run's wall time in ms.
ms() {
	local a b
	a=$(date +%s%N)
	"$@" >/dev/null 2>&1 || true
	b=$(date +%s%N)
	echo $(((b - a) / 1000000))
}
native() { sh "$work/tree.sh"; }
inert() { LD_PRELOAD=$shim sh "$work/tree.sh"; }
started() {
	local d
	d=$(mktemp -d -p "$work")
	STREAMCHECK_DIR=$d STREAMCHECK_PRELOAD=1 STREAMCHECK_LAUNCHER=1 LD_PRELOAD=${1:-$shim} sh "$work/tree.sh"
}
base() { started "$BASE_SHIM"; }
run() { bin/streamcheck run -- sh "$work/tree.sh"; }

configs=(native inert started run)
if [ -n "${BASE_SHIM:-}" ]; then configs+=(base); fi
nc=${#configs[@]}
declare -A vals
for r in $(seq "$rounds"); do
	for k in $(seq 0 $((nc - 1))); do
		c=${configs[$(((k + r) % nc))]}
		vals[$c]+="$(ms "$c") "
	done
done
out=$(
	echo "# bench/process-tree.sh, $(date -u +%F), $rounds rounds of $procs processes, $(nproc) CPUs; libcuda $(ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1 ' && echo present || echo absent)"
	base=$(echo "${vals[native]}" | tr ' ' '\n' | grep . | median)
	for c in "${configs[@]}"; do
		m=$(echo "${vals[$c]}" | tr ' ' '\n' | grep . | median)
		awk -v c="$c" -v m="$m" -v b="$base" -v n="$procs" -v runs="${vals[$c]}" \
			'BEGIN { printf "%-8s %6.0f ms  %5.2f ms a process over native  runs: %s\n", c, m, (m - b) / n, runs }'
	done
)
echo "$out"
if [ "${RESULTS:-0}" = 1 ]; then echo "$out" >>bench/results/process-tree.txt; fi
