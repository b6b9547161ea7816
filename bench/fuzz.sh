#!/usr/bin/env bash
# fuzz.sh runs every fuzz target of the module for a given time each and
# prints, per target, the executions Go's fuzzer made, the inputs it found
# interesting, and whether it failed.
#
#   bash bench/fuzz.sh [DURATION]      # default 60s; any go test -fuzztime value
#
# The fuzzer minimizes each new interesting input before it goes on, and
# counts no executions meanwhile; with a binary trace of a few KiB that took
# most of a minute, so minimization is limited to FUZZ_MINIMIZE (default 5s;
# go test's own default is 60s).
#
# Each target's seed corpus is its testdata/fuzz/FuzzX directory (inputs
# given to f.Add come on top); a failing input is written there by go test
# and should be committed with the fix. The inputs found interesting go to
# the Go build cache ($(go env GOCACHE)/fuzz), so later runs start from
# them. With FUZZ_KEEP=N, up to N of those found by this run are copied into
# testdata/fuzz/FuzzX as well, to keep them with the repository.
# FUZZ_PARALLEL=N runs N fuzzing workers (default: one a CPU).
#
# The exit status is 1 if any target failed.
set -u
cd "$(dirname "$0")/.."
time=${1:-60s}
keep=${FUZZ_KEEP:-0}
minimize=${FUZZ_MINIMIZE:-5s}
parallel=${FUZZ_PARALLEL:+-parallel $FUZZ_PARALLEL}
cache=$(go env GOCACHE)/fuzz/$(go list -m)
status=0
printf '%-28s %-16s %12s %12s  %s\n' package target execs interesting result
while read -r file target; do
	pkg=./$(dirname "$file")
	log=$(mktemp)
	start=$(mktemp)
	go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$time" -fuzzminimizetime "$minimize" $parallel >"$log" 2>&1
	rc=$?
	# The last progress line: "fuzz: elapsed: 1m0s, execs: 123 (2/sec), new interesting: 4 (total: 9)".
	line=$(grep -E '^fuzz: elapsed: .*execs: [0-9]+' "$log" | tail -1)
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$line")
	found=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$line")
	result=ok
	if [ $rc -ne 0 ]; then
		result="FAIL (see below)"
		status=1
	fi
	printf '%-28s %-16s %12s %12s  %s\n' "$pkg" "$target" "${execs:-?}" "${found:-?}" "$result"
	if [ $rc -ne 0 ]; then
		sed 's/^/    /' "$log" | tail -40
	fi
	if [ "$keep" -gt 0 ] && [ -d "$cache/${pkg#./}/$target" ]; then
		dst="$(dirname "$file")/testdata/fuzz/$target"
		mkdir -p "$dst"
		find "$cache/${pkg#./}/$target" -type f -newer "$start" | head -n "$keep" | xargs -r cp -t "$dst"
	fi
	rm -f "$log" "$start"
done < <(grep -rn --include='*_test.go' -E '^func (Fuzz[A-Za-z0-9_]*)\(f \*testing\.F\)' . |
	sed -nE 's#^\./([^:]*):[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*#\1 \2#p' | sort)
exit $status
