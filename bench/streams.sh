#!/usr/bin/env bash
# Interleaved A/B of the many-stream figures: the analyzer at BASE (default:
# the last commit with a dense vector clock per stream) against the working
# tree, ROUNDS rounds (default 3) on the same machine minutes. Writes
# bench/results/streams.txt. Run from the repository root:
#
#   bash bench/streams.sh [BASE]
set -euo pipefail
base=${1:-b8e1d58}
rounds=${ROUNDS:-3}
out=bench/results/streams.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/old"
git archive "$base" | tar -x -C "$tmp/old"
# The old tree gets the new engine-only tests (the memory test, the
# many-stream benchmark, CPU time in BenchmarkEngineApply), written against
# its dense Clock.
cp hb/streams_test.go "$tmp/old/hb/"
sed 's/max(a.Len(), b.Len())/max(len(a), len(b))/' hb/engine_test.go >"$tmp/old/hb/engine_test.go"
(cd "$tmp/old" && go test -c -o "$tmp/bench.old" ./bench && go test -c -o "$tmp/hb.old" ./hb &&
	go build -o "$tmp/sc.old" ./cmd/streamcheck)
go test -c -o "$tmp/bench.new" ./bench
go test -c -o "$tmp/hb.new" ./hb
go build -o "$tmp/sc.new" ./cmd/streamcheck

{
	echo "# bash bench/streams.sh $base; $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) CPUs; $(go version)"
	echo "# old: $base, new: $(git rev-parse --short HEAD)$(git diff --quiet -- . ":(exclude)$out" || echo +changes)"
	for r in $(seq "$rounds"); do
		for v in old new; do
			echo "## round $r $v: bench AnalyzeStreams"
			(cd "$tmp" && "./bench.$v" -test.run XXX -test.bench AnalyzeStreams -test.cpu 1 -test.benchtime 1x) | grep ^Benchmark
			echo "## round $r $v: bench AnalyzeScaling/events=1M (the usual 8 streams)"
			(cd "$tmp" && "./bench.$v" -test.run XXX -test.bench 'AnalyzeScaling/events=1M' -test.cpu 1 -test.benchtime 2x) | grep ^Benchmark
			echo "## round $r $v: hb EngineApply, ManyStreams"
			(cd "$tmp" && "./hb.$v" -test.run XXX -test.bench 'EngineApply|ManyStreams' -test.cpu 1 -test.count 2) | grep ^Benchmark
			echo "## round $r $v: streamcheck check, 10,000 streams"
			for f in "${TMPDIR:-/tmp}"/streamcheck-bench/synth-v*-s10000-*.trace; do
				/usr/bin/time -f "$(basename "$f"): %e s wall, %U s user, max RSS %M KB" "$tmp/sc.$v" check --format json "$f" 2>&1 >/dev/null | tail -1
			done
		done
	done
	echo "## TestManyStreamsMemory"
	for v in old new; do
		# The old tree fails it: that is the point.
		(cd "$tmp" && { "./hb.$v" -test.run TestManyStreamsMemory -test.v 2>&1 || true; } | grep -E 'streams hold|^--- ' | sed "s/^/$v: /")
	done
} | tee "$out"
