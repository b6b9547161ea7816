#!/usr/bin/env bash
# Runs the analyzer benchmarks on one core (-cpu 1, so GOMAXPROCS=1) and
# writes bench/results/analyzer.txt, which bench/README.md quotes.
#
# The first run generates the synthetic traces (about 45 bytes an event: 450
# MB for 10 million events, 1.1 GB in all) into $TMPDIR/streamcheck-bench/,
# keyed by generator config and version; later runs reuse them (delete that
# directory after a change to model's binary writer). One
# benchmark op is one whole trace, so -benchtime 1x and -count 3 give three
# timed runs of each.
#
# Usage: bash bench/run.sh            (COUNT=n to change -count)
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
out=bench/results/analyzer.txt
mkdir -p bench/results
{
	echo "# streamcheck analyzer benchmarks, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "# $(go version); nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# go test ./bench -run '^\$' -bench 'Analyze|Read' -cpu 1 -count $COUNT -benchtime 1x"
	go test ./bench -run '^$' -bench 'Analyze|Read' -cpu 1 -count "$COUNT" -benchtime 1x -timeout 60m
	# The streamcheck command is built with profile-guided optimization
	# (cmd/streamcheck/default.pgo); the benchmark package is not a main
	# package, so it gets the profile only when asked.
	echo "# go test ./bench -run '^\$' -bench 'Analyze10M\$|Read10M' -cpu 1 -count $COUNT -benchtime 1x -pgo=cmd/streamcheck/default.pgo"
	go test ./bench -run '^$' -bench 'Analyze10M$|Read10M' -cpu 1 -count "$COUNT" -benchtime 1x -timeout 60m -pgo=cmd/streamcheck/default.pgo
} 2>&1 | tee "$out.tmp"
mv "$out.tmp" "$out"
