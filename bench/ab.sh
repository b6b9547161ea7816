#!/usr/bin/env bash
# Interleaved A/B of the analyzer benchmarks (bench/run.sh's): the tree at
# BASE against the working tree, ROUNDS rounds (default 6) taking turns on
# the same machine minutes (each round's pair in turn order), both built with the command's profile
# (cmd/streamcheck/default.pgo), -cpu 1. On a loaded machine only such
# turns compare: load moves a single run by tens of percent. Prints each
# run and the median events/cpu-s of each side per benchmark; OUT names a
# file to write as well. Run from the repository root:
#
#   bash bench/ab.sh BASE            (BENCH='regexp' to pick benchmarks)
set -euo pipefail
base=${1:?usage: bash bench/ab.sh BASE}
rounds=${ROUNDS:-6}
bench=${BENCH:-'AnalyzeScaling/events=(1M|3M)$|AnalyzeStreams/streams=97$'}
out=${OUT:-/dev/null}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/old"
git archive "$base" | tar -x -C "$tmp/old"
(cd "$tmp/old" && go test -c -pgo=cmd/streamcheck/default.pgo -o "$tmp/bench.old" ./bench)
go test -c -pgo=cmd/streamcheck/default.pgo -o "$tmp/bench.new" ./bench

{
	echo "# bash bench/ab.sh $base; $(date -u +%Y-%m-%dT%H:%MZ); nproc $(nproc); load average $(cut -d' ' -f1-3 /proc/loadavg); $(go version)"
	echo "# old: $base, new: $(git rev-parse --short HEAD)$(git diff --quiet -- . ":(exclude)$out" || echo +changes); -test.bench '$bench' -test.cpu 1 -test.benchtime 1x, $rounds rounds"
	for r in $(seq "$rounds"); do
		order="old new"
		[ $((r % 2)) = 0 ] && order="new old" # neither side always runs first
		for v in $order; do
			(cd bench && "$tmp/bench.$v" -test.run '^$' -test.bench "$bench" -test.cpu 1 -test.benchtime 1x) |
				grep ^Benchmark | sed "s/^/$v /"
		done
	done | tee "$tmp/runs"
	echo "# median events/cpu-s, old -> new; median of the rounds' new/old (each round's pair ran minutes apart at most)"
	awk '{for (i = 1; i < NF; i++) if ($(i+1) == "events/cpu-s") {k = $2 SUBSEP $1; n[k]++; v[k, n[k]] = $i; names[$2] = 1}}
		function med(a, n,   i, j, t) {for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2}
		END {for (b in names) {
			m = n[b, "old"] < n[b, "new"] ? n[b, "old"] : n[b, "new"]
			for (i = 1; i <= m; i++) {o[i] = v[b, "old", i]; w[i] = v[b, "new", i]; r[i] = w[i] / o[i]}
			printf "%s: %.2f M -> %.2f M, new/old %.3f over %d rounds\n", b, med(o, m) / 1e6, med(w, m) / 1e6, med(r, m), m}}' "$tmp/runs" | sort
} | tee "$out"
