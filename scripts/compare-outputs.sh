#!/usr/bin/env bash
# Runs two streamcheck binaries over every committed trace and diffs what
# they print: check (text and JSON), explain (text, and the first finding's
# DOT), and timeline, each with its exit code. A trace is also fed to
# explain and timeline through standard input (a pipe). Use it to show that
# a change to the analyzer's structure leaves its output byte for byte as it
# was:
#
#   scripts/compare-outputs.sh OLD_BIN NEW_BIN
#
# The traces: testdata/real, testdata/realworld (each .sctrace and .jsonl),
# cmd/streamcheck/testdata/golden/racy.jsonl, and the trace of every
# checker golden (checker/testdata/**/*.txtar, its trace.jsonl section).
# Prints one line per difference and a summary; exits 1 if any differed.
set -euo pipefail
old=$(realpath "${1:?usage: scripts/compare-outputs.sh OLD_BIN NEW_BIN}")
new=$(realpath "${2:?usage: scripts/compare-outputs.sh OLD_BIN NEW_BIN}")
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The goldens' traces, extracted from their txtar files under a name that
# says where each came from.
mkdir "$tmp/goldens"
find checker/testdata -name '*.txtar' | sort | while read -r f; do
	out="$tmp/goldens/$(echo "${f#checker/testdata/}" | tr / _ | sed 's/\.txtar$/.jsonl/')"
	awk '/^-- /{on = ($0 == "-- trace.jsonl --"); next} on' "$f" >"$out"
	[ -s "$out" ] || rm "$out"
done

traces() {
	find testdata/real testdata/realworld -type f \( -name '*.sctrace' -o -name '*.jsonl' \) | sort
	echo cmd/streamcheck/testdata/golden/racy.jsonl
	find "$tmp/goldens" -type f | sort
}

# run BIN OUT ARGS...: BIN's stdout, stderr and exit code, into OUT.
run() {
	local bin=$1 out=$2
	shift 2
	set +e
	"$bin" "$@" >"$out.stdout" 2>"$out.stderr"
	echo "exit $?" >"$out.code"
	set -e
}

# runpipe BIN OUT TRACE ARGS...: as run, with TRACE on standard input.
runpipe() {
	local bin=$1 out=$2 trace=$3
	shift 3
	set +e
	"$bin" "$@" - <"$trace" >"$out.stdout" 2>"$out.stderr"
	echo "exit $?" >"$out.code"
	set -e
}

n=0
diffs=0
while read -r t; do
	n=$((n + 1))
	for side in old new; do
		bin=$old
		[ $side = new ] && bin=$new
		d="$tmp/$side"
		mkdir -p "$d"
		run "$bin" "$d/text" check "$t"
		run "$bin" "$d/json" check --format json "$t"
		run "$bin" "$d/explain" explain "$t"
		run "$bin" "$d/dot" explain --dot "$t"
		run "$bin" "$d/timeline" timeline "$t"
		runpipe "$bin" "$d/explain-pipe" "$t" explain
		runpipe "$bin" "$d/timeline-pipe" "$t" timeline
	done
	for f in "$tmp"/old/*; do
		if ! cmp -s "$f" "$tmp/new/${f##*/}"; then
			echo "differs: ${f##*/} of $t"
			diffs=$((diffs + 1))
		fi
	done
	rm -rf "$tmp/old" "$tmp/new"
done < <(traces)
echo "$n traces, 7 commands each (check text and json, explain, explain --dot, timeline; explain and timeline from a pipe): $diffs differences"
[ "$diffs" = 0 ]
