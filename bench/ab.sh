#!/usr/bin/env bash
# Interleaved A/B of the analyzer benchmarks (bench/run.sh's): the tree at
# BASE against the working tree, ROUNDS rounds (default 6) taking turns on
# the same machine minutes, both built with the command's profile
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
	echo "# old: $base, new: $(git rev-parse --short HEAD)$(git diff --quiet || echo +changes); -test.bench '$bench' -test.cpu 1 -test.benchtime 1x, $rounds rounds"
	for r in $(seq "$rounds"); do
		for v in old new; do
			(cd bench && "$tmp/bench.$v" -test.run '^$' -test.bench "$bench" -test.cpu 1 -test.benchtime 1x) |
				grep ^Benchmark | sed "s/^/$v /"
		done
	done | tee "$tmp/runs"
	echo "# median events/cpu-s, old -> new (new/old)"
	awk '{for (i = 1; i < NF; i++) if ($(i+1) == "events/cpu-s") v[$2 " " $1] = v[$2 " " $1] " " $i}
		END {for (k in v) print k, v[k]}' "$tmp/runs" | sort |
		awk 'function med(s,   a, n, i, j, t) {n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2}
			{name = $1; side = $2; $1 = $2 = ""; m[name, side] = med($0); names[name] = 1}
			END {for (n in names) printf "%s: %.2f M -> %.2f M (%.2fx)\n", n, m[n, "old"] / 1e6, m[n, "new"] / 1e6, m[n, "new"] / m[n, "old"]}' | sort
} | tee "$out"
