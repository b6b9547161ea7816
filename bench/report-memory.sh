#!/usr/bin/env bash
# Measures what a report costs per finding, before and after reports were
# written a finding at a time, and writes bench/results/report-memory.txt,
# which bench/README.md quotes.
#
# BenchmarkReportMemory (cmd/streamcheck) analyzes a trace of N distinct
# use-after-free findings (synth.WriteUseAfterFree) and reports it through
# check's writeReport in each format. It runs on BASE (default 4db9309, the
# last commit that built the whole JSON and SARIF document before writing
# it; the benchmark and what it needs are copied into an export of it) and
# on the working tree, in interleaved rounds, with the garbage collector's
# default GOGC=100 and with GOGC=10 (which leaves little garbage, so that
# the peak is close to what the report holds).
#
# Usage: bash bench/report-memory.sh [BASE]   (ROUNDS=n, FINDINGS=n to change
# the 2 rounds of 50000 findings)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-4db9309}
rounds=${ROUNDS:-2}
findings=${FINDINGS:-50000}
out=bench/results/report-memory.txt
old=$(mktemp -d)
trap 'rm -rf "$old"' EXIT
git archive "$base" | tar -x -C "$old"
mkdir -p "$old/internal/heapmeter"
cp internal/heapmeter/heapmeter.go "$old/internal/heapmeter/"
cp internal/synth/findings.go "$old/internal/synth/"
cp cmd/streamcheck/reportmem_test.go "$old/cmd/streamcheck/"
(cd "$old" && go test -c -o "$old/before.test" ./cmd/streamcheck)
go test -c -o "$old/after.test" ./cmd/streamcheck
mkdir -p bench/results
{
	echo "# streamcheck report memory, $(date -u +%Y-%m-%dT%H:%MZ): before = $base, after = $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- report cmd internal || echo ' (with uncommitted changes)')"
	echo "# $(go version); nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# $findings findings; each line: STREAMCHECK_BENCH_FINDINGS=$findings GOGC=G ./{before,after}.test -test.run '^\$' -test.bench ReportMemory -test.benchtime 1x"
	for r in $(seq "$rounds"); do
		for gogc in 100 10; do
			for which in before after; do
				echo "## round $r, GOGC=$gogc, $which"
				(cd cmd/streamcheck && STREAMCHECK_BENCH_FINDINGS=$findings GOGC=$gogc "$old/$which.test" -test.run '^$' -test.bench ReportMemory -test.benchtime 1x | grep '^Benchmark')
			done
		done
	done
} 2>&1 | tee "$out.tmp"
mv "$out.tmp" "$out"
